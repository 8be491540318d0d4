// The Scatter family's reading of a node (ScatterElements, the deprecated Scatter, ScatterND),
// shared by its check (scatter.cc) and the constant folder (fold/moves.cc).
#pragma once

#include "converter/src/ir/graph.h"
#include "kernels/scatter.h"
#include "jetplan/plan_generated.h"

namespace jetplan::converter::ops {

// The step's kernel parameters for `node` (nd: ScatterND) over data, indices and updates: shapes
// and the axis checked, every constant index in range, the reduction one the kernel computes on
// data's dtype. ConvertError naming the node where they are not. The dtypes themselves (a plan
// dtype, int32 or int64 indices, updates of data's) are the caller's to check first.
kernels::ScatterParams scatter_params(const Node& node, bool nd, const Value& data,
                                      const Value& indices, const Value& updates);

}  // namespace jetplan::converter::ops
