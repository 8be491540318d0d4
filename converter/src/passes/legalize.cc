// Makes every node's shapes exactly those of its plan step, so that lower() maps node to step
// one to one. ONNX lets MatMul take 1-D operands and broadcast batch dims, and lets opset < 13
// softmax normalize over several flattened dims; the plan's Gemm and Softmax steps do neither,
// so those nodes get views (Copy steps, or re-described constants) around them.
#include <algorithm>

#include "converter/src/ir/error.h"
#include "converter/src/fold/eval.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/passes/passes.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter {
namespace {

class Legalizer {
 public:
  explicit Legalizer(Graph& g) : g_(g) {}

  void run() {
    for (Node& node : g_.nodes) {
      if (node.dead) continue;
      if (node.op.family == fb::OpFamily::Gemm) {
        legalize_gemm(std::move(node));
      } else if (node.op.family == fb::OpFamily::Softmax && !node.op.softmax_view.empty()) {
        legalize_softmax(std::move(node));
      } else if (ops::expand_node(g_, node, &out_)) {
        continue;
      } else {
        out_.push_back(std::move(node));
      }
    }
    g_.nodes = std::move(out_);
    g_.compact();
  }

 private:
  // New float32 values and Copy steps (graph_edit.h).
  int new_value(const std::string& name, const Shape& shape) {
    return converter::new_value(g_, name, DataType::kFloat32, shape);
  }

  int new_constant(const std::string& name, const Shape& shape, std::vector<uint8_t> data) {
    return converter::new_constant(g_, name, DataType::kFloat32, shape, std::move(data));
  }

  void copy(const std::string& name, int from, int to) {
    out_.push_back(copy_node(name, from, to));
  }

  // Value `v` with another shape of the same size.
  int view(int v, const Shape& shape, const std::string& step_name) {
    if (g_.values[v].shape == shape) return v;
    const std::string name = g_.values[v].name + ":" + shape_str(shape);
    if (g_.values[v].is_constant) return new_constant(name, shape, g_.values[v].data);
    const int to = new_value(name, shape);
    copy(step_name, v, to);
    return to;
  }

  // Operand `v` (already a matrix of rank >= 2) with its batch dims made `batch`: leading 1s
  // are added, and dims of 1 that the output broadcasts are materialized (a constant is
  // expanded now, a run-time tensor by a Mul with ones). Operands whose batch dims are all 1
  // stay as they are: the Gemm step reuses one matrix for every batch.
  int fit_batch(int v, Shape shape, const Shape& batch, const std::string& step_name) {
    const Shape own(shape.begin(), shape.end() - 2);
    if (shape_count(own) == 1) return view(v, shape, step_name);
    shape.insert(shape.begin(), batch.size() + 2 - shape.size(), 1);
    v = view(v, shape, step_name);
    Shape full = batch;
    full.push_back(shape[shape.size() - 2]);
    full.push_back(shape.back());
    if (shape == full) return v;
    const std::string name = g_.values[v].name + ":" + shape_str(full);
    if (g_.values[v].is_constant) {
      const std::vector<int64_t> index = fold::broadcast_index(shape, full);
      const std::vector<uint8_t>& src = g_.values[v].data;
      std::vector<uint8_t> data(index.size() * sizeof(float));
      for (size_t k = 0; k < index.size(); ++k)
        std::copy_n(src.begin() + index[k] * sizeof(float), sizeof(float),
                    data.begin() + k * sizeof(float));
      return new_constant(name, full, std::move(data));
    }
    Shape ones_shape(full.size(), 1);
    for (size_t i = 0; i < batch.size(); ++i)
      if (shape[i] == 1) ones_shape[i] = batch[i];
    const int ones = new_constant(
        step_name + ":ones", ones_shape,
        write_doubles(DataType::kFloat32, std::vector<double>(shape_count(ones_shape), 1.0)));
    const int to = new_value(name, full);
    Node mul;
    mul.name = step_name + ":broadcast";
    mul.op_type = "Mul";
    mul.inputs = {v, ones};
    mul.outputs = {to};
    mul.op.resolved = true;
    mul.op.family = fb::OpFamily::Binary;
    mul.op.binary = fb::BinaryOp::Mul;
    out_.push_back(std::move(mul));
    return to;
  }

  void legalize_gemm(Node node) {
    Shape a = g_.values[node.inputs[0]].shape, b = g_.values[node.inputs[1]].shape;
    if (node.op.a_vector) a.insert(a.begin(), 1);
    if (node.op.b_vector) b.push_back(1);
    const Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
    Shape batch;
    if (!broadcast_shapes(batch_a, batch_b, &batch))
      fail("internal error: node ", node_label(node), ": batch dims do not broadcast");
    node.inputs[0] = fit_batch(node.inputs[0], a, batch, node.name + ":A");
    node.inputs[1] = fit_batch(node.inputs[1], b, batch, node.name + ":B");
    Shape y = batch;
    y.push_back(node.op.trans_a ? a.back() : a[a.size() - 2]);
    y.push_back(node.op.trans_b ? b[b.size() - 2] : b.back());
    const int onnx_out = node.outputs[0];
    node.op.a_vector = node.op.b_vector = false;
    if (g_.values[onnx_out].shape == y) {
      out_.push_back(std::move(node));
      return;
    }
    const int tmp = new_value(g_.values[onnx_out].name + ":" + shape_str(y), y);
    node.outputs[0] = tmp;
    // The residual has the ONNX output's shape (fuse); the step adds it in the step's shape.
    if (node.op.has_residual) node.inputs.back() = view(node.inputs.back(), y, node.name + ":R");
    const std::string copy_name = node.name + ":Y";
    out_.push_back(std::move(node));
    copy(copy_name, tmp, onnx_out);
  }

  void legalize_softmax(Node node) {
    const Shape view_shape = node.op.softmax_view;
    node.op.softmax_view.clear();
    node.inputs[0] = view(node.inputs[0], view_shape, node.name + ":2d");
    const int y = node.outputs[0];
    const int y2 = new_value(g_.values[y].name + ":2d", view_shape);
    node.outputs[0] = y2;
    const std::string copy_name = node.name + ":nd";
    out_.push_back(std::move(node));
    copy(copy_name, y2, y);
  }

  Graph& g_;
  std::vector<Node> out_;
};

}  // namespace

void legalize(Graph& g) { Legalizer(g).run(); }

}  // namespace jetplan::converter
