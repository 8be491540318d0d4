// StepWriter and the promotion to a compute dtype (see steps.h).
#include "converter/src/ops/steps.h"

#include <string>
#include <utility>
#include <vector>

#include "converter/src/fold/eval.h"
#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/arithmetic.h"

namespace jetplan::converter::ops {

Node StepWriter::step(const std::string& name, fb::OpFamily family, std::vector<int> inputs,
                      int output) {
  Node n;
  n.name = name;
  n.op_type = fb::EnumNameOpFamily(family);
  n.inputs = std::move(inputs);
  n.outputs = {output};
  n.op.resolved = true;
  n.op.family = family;
  return n;
}

int StepWriter::cast(int v, DataType to, const std::string& step_name) {
  if (value(v).dtype == to) return v;
  if (value(v).is_constant) {
    const TensorData converted =
        fold::cast_data(TensorData{value(v).dtype, value(v).shape, value(v).data}, to);
    return new_constant(g_, step_name, to, value(v).shape, converted.bytes);
  }
  const int id = new_value(g_, step_name, to, value(v).shape);
  out_.push_back(step(step_name, fb::OpFamily::Cast, {v}, id));
  return id;
}

int StepWriter::view(int v, const Shape& shape, const std::string& step_name) {
  if (value(v).shape == shape) return v;
  if (value(v).is_constant)
    return new_constant(g_, step_name, value(v).dtype, shape, value(v).data);
  const int id = new_value(g_, step_name, value(v).dtype, shape);
  out_.push_back(copy_node(step_name, v, id));
  return id;
}

int StepWriter::transpose(int v, const std::vector<int32_t>& perm, const std::string& step_name,
                          int to) {
  const Shape& xs = value(v).shape;
  Shape shape(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) shape[d] = xs[perm[d]];
  if (value(v).is_constant && to < 0) {
    const TensorData t =
        fold::transpose_data(TensorData{value(v).dtype, xs, value(v).data}, xs, perm);
    return new_constant(g_, step_name, value(v).dtype, shape, t.bytes);
  }
  if (to < 0) to = new_value(g_, step_name, value(v).dtype, shape);
  Node n = step(step_name, fb::OpFamily::Transpose, {v}, to);
  n.op.perm = perm;
  out_.push_back(std::move(n));
  return to;
}

int StepWriter::arith(const std::string& op, int a, int b, int out, const std::string& name) {
  const DataType dtype = value(a).dtype;
  Shape shape;
  broadcast_shapes(value(a).shape, value(b).shape, &shape);
  if (out < 0) out = new_value(g_, name, dtype, shape);
  DataType compute;
  const ArithWay way = arith_way(op, dtype, &compute);
  if (way == ArithWay::kBinary) {
    Node n = step(name, fb::OpFamily::Binary, {a, b}, out);
    n.op.binary = binary_op(op);
    out_.push_back(std::move(n));
  } else if (way == ArithWay::kElementwise) {
    Node n = step(name, fb::OpFamily::Elementwise, {a, b}, out);
    n.op.elementwise = elementwise_arith_op(op);
    out_.push_back(std::move(n));
  } else {
    fail("internal error: ", op, " on ", dtype_name(dtype), " has no arithmetic step");
  }
  return out;
}

void StepWriter::view_into(int v, int y, const std::string& step_name) {
  out_.push_back(copy_node(step_name, v, y));
}

bool append_with_output_view(Node& node, int step_out, const std::string& copy_name,
                             std::vector<Node>* out) {
  const int onnx_out = node.outputs[0];
  node.outputs[0] = step_out;
  out->push_back(std::move(node));
  out->push_back(copy_node(copy_name, step_out, onnx_out));
  return true;
}

int view_of(Graph& g, int v, const Shape& shape, const std::string& step_name,
            std::vector<Node>* out) {
  if (g.values[v].shape == shape) return v;
  const std::string name = g.values[v].name + ":" + shape_str(shape);
  const DataType dtype = g.values[v].dtype;
  if (g.values[v].is_constant) return new_constant(g, name, dtype, shape, g.values[v].data);
  const int to = new_value(g, name, dtype, shape);
  out->push_back(copy_node(step_name, v, to));
  return to;
}

bool expand_promoted(Graph& g, Node& node, std::vector<Node>* out) {
  if (node.op.expand != Expansion::kPromote) return false;
  node.op.expand = Expansion::kNone;
  StepWriter w(g, out);
  const auto compute = static_cast<DataType>(node.op.compute_dtype);
  for (size_t i = 0; i < node.inputs.size(); ++i)
    node.inputs[i] = w.cast(node.inputs[i], compute, node.name + ":in" + std::to_string(i));
  const int y = node.outputs[0];
  const Value& out_value = g.values[y];
  // Predicates and comparisons give bool directly; Pow of a float64 base gives float64.
  if (out_value.dtype == DataType::kBool || out_value.dtype == compute) {
    w.add(std::move(node));
    return true;
  }
  const std::string name = node.name + ":out";
  const Shape shape = out_value.shape;
  const int tmp = new_value(g, node.name + ":" + dtype_name(compute), compute, shape);
  node.outputs[0] = tmp;
  w.add(std::move(node));
  w.add(StepWriter::step(name, fb::OpFamily::Cast, {tmp}, y));
  return true;
}

}  // namespace jetplan::converter::ops
