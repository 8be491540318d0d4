// What the normalization families' checks share (InstanceNorm, LayerNorm, GroupNorm, Lrn).
#pragma once

#include <string>

#include "converter/src/ir/graph.h"

namespace jetplan::converter::ops {

// stash_type (LayerNormalization 17, GroupNormalization 21): the type of the statistics; "" or
// the reason.
std::string check_stash_type(const Node& node);
// The normalizations read x as [N, C, ...]: ConvertError for an input without a channel dim.
void require_channels(const Node& node, const Shape& x);
// Parameter input i must have exactly `shape`; ConvertError otherwise.
void expect_shape(const Graph& g, const Node& node, size_t i, const char* what, const Shape& shape);

}  // namespace jetplan::converter::ops
