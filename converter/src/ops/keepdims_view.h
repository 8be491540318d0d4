// Reduce and ArgReduce with keepdims=0: the step writes the reduced dims as 1s into a value of
// its own, and a Copy views it as the ONNX output.
#pragma once

#include <string>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter::ops {

// A Reduce or ArgReduce check's last line (resolve_as for `family`): output 0 as the step writes
// it (`step`, reduced dims of extent 1) and as ONNX declares it (`out`); they differ with
// keepdims=0, and expand_keepdims_view then adds the view. Returns "".
std::string resolve_reduced(Graph& g, Node& node, fb::OpFamily family, DataType dtype,
                            const Shape& step, const Shape& out);
// The expansion (registry.h, ExpandFn) of Reduce and ArgReduce.
bool expand_keepdims_view(Graph& g, Node& node, std::vector<Node>* out);

}  // namespace jetplan::converter::ops
