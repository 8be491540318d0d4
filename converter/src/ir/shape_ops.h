// Output-shape rules of the ONNX ops that the converter both evaluates on constants
// (fold_constants) and lowers to steps (support). Each throws ConvertError naming `node` when
// the model is inconsistent.
#pragma once

#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

// axis in [-rank, rank) -> [0, rank); ConvertError otherwise.
int64_t normalize_axis(const Node& node, int64_t axis, int64_t rank);

// Numpy (multidirectional) broadcasting.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out);
Shape broadcast_or_fail(const Node& node, const Shape& a, const Shape& b);

// Reshape's target: 0 copies the input dim (unless allow_zero), one -1 takes the rest.
Shape reshape_shape(const Node& node, const Shape& in, const std::vector<int64_t>& spec,
                    bool allow_zero);
Shape flatten_shape(const Node& node, const Shape& in, int64_t axis);
// Empty axes removes every dim of size 1.
Shape squeeze_shape(const Node& node, const Shape& in, const std::vector<int64_t>& axes);
Shape unsqueeze_shape(const Node& node, const Shape& in, const std::vector<int64_t>& axes);

// Squeeze/Unsqueeze axes: the attribute before opset 13, the (constant) second input since.
// Returns false when the input exists but is not a constant.
bool squeeze_axes(const Graph& g, const Node& node, std::vector<int64_t>* axes);

}  // namespace jetplan::converter
