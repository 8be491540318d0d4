// The keepdims=0 view of Reduce and ArgReduce (see keepdims_view.h).
#include "converter/src/ops/keepdims_view.h"

#include "converter/src/ir/graph_edit.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/steps.h"

namespace jetplan::converter::ops {

std::string resolve_reduced(Graph& g, Node& node, fb::OpFamily family, DataType dtype,
                            const Shape& step, const Shape& out) {
  node.op.reduce.keepdims_view = step != out;
  node.op.reduce.step_shape = step;
  return resolve_as(g, node, family, dtype, out);
}

bool expand_keepdims_view(Graph& g, Node& node, std::vector<Node>* out) {
  const fb::OpFamily family = node.op.family;
  if ((family != fb::OpFamily::Reduce && family != fb::OpFamily::ArgReduce) ||
      !node.op.reduce.keepdims_view)
    return false;
  const int y = node.outputs[0];
  const Shape step = node.op.reduce.step_shape;
  const int kept = new_value(g, g.values[y].name + ":" + shape_str(step), g.values[y].dtype, step);
  node.op.reduce.keepdims_view = false;
  return append_with_output_view(node, kept, node.name + ":squeeze", out);
}

}  // namespace jetplan::converter::ops
