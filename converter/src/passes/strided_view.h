// Strided views through the data-movement steps that only pick or reorder elements: a value
// made from another by Reshape-like Copies, Transposes, Gathers of one constant index, Slices and
// Splits is, element for element, the other value read through an offset and strides, whatever
// the chain. Fusions that read such a value through strides (attention's Q, K and V cut out of
// one QKV projection) use this to drop the chain's steps.
//
// The layout is kept hierarchical: each dim of a value is a group of sub-dims (extent, stride),
// outermost first, so a Reshape that merges dims whose strides do not line up (the batch and
// head dims of a projection's output, [S, B, 3E] viewed as [S, B * H, D]) still describes the
// elements exactly; only the final read asks each dim to be one stride.
#pragma once

#include <cstdint>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

struct SubDim {
  int64_t extent = 1, stride = 0;
};

struct StridedLayout {
  std::vector<std::vector<SubDim>> dims;  // one group per dim; empty: extent 1
  int64_t offset = 0;
};

// A strided view of `value`: the value `source` it reads, the layout of `value`'s elements in
// `source` (offset and strides in elements), and the nodes whose steps the view replaces (from
// `value`'s producer back; Copies included).
struct StridedView {
  int source = -1;
  StridedLayout layout;
  std::vector<const Node*> chain;
};

// The view of `value` reaching furthest back through the element-picking nodes above (none dead,
// each with no fused activation and `value`'s element type). `value` itself (an empty chain)
// when no producer is such a node.
StridedView deepest_strided_view(const Graph& g, int value);

// Group `dim` of the layout as one (extent, stride); false where its sub-dims do not merge
// (a dim of extent 1 is {1, 0}).
bool single_stride(const StridedLayout& layout, size_t dim, SubDim* out);

}  // namespace jetplan::converter
