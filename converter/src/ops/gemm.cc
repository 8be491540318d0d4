// The Gemm family: ONNX Gemm and MatMul (its expansion views 1-D and broadcast operands), with the
// epilogue the fusions add. Einsum products become Gemm steps too (einsum.h).
#include <algorithm>
#include <utility>
#include <vector>

#include "converter/src/fold/eval.h"
#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/steps.h"

namespace jetplan::converter::ops {

namespace {

std::string check_gemm(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  const Shape& a = input(g, node, 0).shape;
  const Shape& b = input(g, node, 1).shape;
  if (a.size() != 2 || b.size() != 2)
    fail("node ", node_label(node), ": Gemm needs 2-D A and B, got ", shape_str(a), " and ",
         shape_str(b));
  OpDesc& op = node.op;
  op.trans_a = attr_int(node, "transA", 0) != 0;
  op.trans_b = attr_int(node, "transB", 0) != 0;
  op.alpha = attr_float(node, "alpha", 1.f);
  op.beta = attr_float(node, "beta", 1.f);
  const int64_t m = op.trans_a ? a[1] : a[0], k = op.trans_a ? a[0] : a[1];
  const int64_t kb = op.trans_b ? b[1] : b[0], n = op.trans_b ? b[0] : b[1];
  if (k != kb)
    fail("node ", node_label(node), ": shape mismatch: A ", shape_str(a), " and B ", shape_str(b),
         " (transA=", op.trans_a, ", transB=", op.trans_b, ") disagree on K");
  if (has_input(node, 2)) {
    const Shape& c = input(g, node, 2).shape;
    Shape out;
    if (c.size() > 2 || !broadcast_shapes(c, {m, n}, &out) || out != Shape{m, n})
      fail("node ", node_label(node), ": shape mismatch: C ", shape_str(c),
           " does not broadcast to ", shape_str({m, n}));
  }
  return resolve_as(g, node, fb::OpFamily::Gemm, {m, n});
}

std::string check_matmul(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1}); !r.empty()) return r;
  Shape a = input(g, node, 0).shape;
  Shape b = input(g, node, 1).shape;
  if (a.empty() || b.empty()) fail("node ", node_label(node), ": MatMul of a scalar");
  OpDesc& op = node.op;
  op.a_vector = a.size() == 1;
  op.b_vector = b.size() == 1;
  if (op.a_vector) a.insert(a.begin(), 1);
  if (op.b_vector) b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), kb = b[b.size() - 2], n = b.back();
  if (k != kb)
    fail("node ", node_label(node), ": shape mismatch: ", shape_str(input(g, node, 0).shape), " x ",
         shape_str(input(g, node, 1).shape), " disagree on K");
  const Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  Shape batch;
  if (!broadcast_shapes(batch_a, batch_b, &batch))
    fail("node ", node_label(node), ": shape mismatch: batch dims ", shape_str(batch_a), " and ",
         shape_str(batch_b), " do not broadcast");
  Shape out = batch;
  if (!op.a_vector) out.push_back(m);
  if (!op.b_vector) out.push_back(n);
  op.alpha = 1.f;
  op.beta = 1.f;
  return resolve_as(g, node, fb::OpFamily::Gemm, out);
}

// AffineGrid (opset 20) with a constant size: theta [N, 2, 3] (or [N, 3, 4]) times the constant
// homogeneous positions [3, H * W] (x, y, 1; or [4, D * H * W]) as ONNX's reference lays them
// out: -1 + (i + 1/2) * 2 / n, or with align_corners -1 + i * 2 / (n - 1) (-1 for n of 1); a
// MatMul against a constant, a Transpose and a Reshape to [N, H, W, 2] (or [N, D, H, W, 3]).
std::string decompose_affine_grid(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Value& size_value = input(g, node, 1);
  if (!size_value.is_constant) return run_time_reason("size");
  const std::vector<int64_t> size = read_ints(size_value);
  const Shape theta = input(g, node, 0).shape;
  const size_t spatial = size.size() >= 2 ? size.size() - 2 : 0;
  if ((spatial != 2 && spatial != 3) || theta.size() != 3 || theta[0] != size[0] ||
      theta[1] != int64_t(spatial) || theta[2] != int64_t(spatial) + 1)
    return cat("theta ", shape_str(theta), " and size [", size.size(),
               " values] are not [N, 2, 3] and [N, C, H, W] (or [N, 3, 4] and [N, C, D, H, W])");
  int64_t points = 1;
  for (size_t d = 2; d < size.size(); ++d) {
    if (size[d] < 1) fail("node ", node_label(node), ": size has an extent of ", size[d]);
    points *= size[d];
  }
  if (points > (int64_t{1} << 24)) return cat("a grid of ", points, " points (2^24 at most)");
  const bool align = attr_int(node, "align_corners", 0) != 0;
  const auto coordinate = [align](int64_t i, int64_t n) {
    if (align) return n == 1 ? -1.0 : -1.0 + double(i) * (2.0 / double(n - 1));
    return -1.0 + 1.0 / double(n) + double(i) * (2.0 / double(n));
  };
  // Row r of the positions holds coordinate r (x first, the last spatial dim) of every point,
  // the last row ones; points in row-major order of the spatial dims.
  const int64_t rows = int64_t(spatial) + 1;
  std::vector<float> positions(size_t(rows * points));
  for (int64_t p = 0; p < points; ++p) {
    int64_t rest = p;
    for (int64_t d = int64_t(spatial) - 1, r = 0; d >= 0; --d, ++r) {
      const int64_t n = size[size_t(2 + d)];
      positions[size_t(r * points + p)] = float(coordinate(rest % n, n));
      rest /= n;
    }
    positions[size_t((rows - 1) * points + p)] = 1.f;
  }
  Shape grid = {size[0]};
  grid.insert(grid.end(), size.begin() + 2, size.end());
  grid.push_back(int64_t(spatial));
  OnnxNodes b(g, node, out);
  const int moved = b.add("MatMul", "moved", {node.inputs[0], b.floats("positions", {rows, points}, positions)});
  const int per_point = b.add("Transpose", "per_point", {moved},
                              {{"perm", OnnxNodes::ints_attr({0, 2, 1})}});
  b.add("Reshape", "grid", {per_point, b.ints("grid_shape", grid)}, {}, node.outputs[0]);
  return "";
}

constexpr OpRow kRows[] = {
    {"AffineGrid", nullptr, "float32",
     "size constant; 2-D and 3-D; runs as a MatMul of theta and the constant positions, a "
     "Transpose and a Reshape", 20, decompose_affine_grid},
    {"Gemm", check_gemm, "float32", "2-D A and B; C broadcasts to [M, N]"},
    {"MatMul", check_matmul, "float32",
     "numpy semantics: 1-D operands, broadcast batch dims"},
    {"DFT", nullptr, "float32",
     "dft_length and axis constant; a real or complex input [.., 1 or 2]; runs as MatMuls against "
     "constant cosine and sine matrices over the axis (moved last by Transposes where it is not)",
     20, decompose_dft},
    {"STFT", nullptr, "float32",
     "frame_step and frame_length constant; a real or complex signal [B, L, 1 or 2]; runs as a "
     "Gather of the frames and MatMuls against constant cosine and sine matrices (the window "
     "folded in where constant)",
     0, decompose_stft},
};

StepParamsOffset serialize_gemm(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const OpDesc& op = s.op;
  const fb::Activation act = activation(op.act);
  const bool has_c = has_third_operand(s);
  auto p = fb::CreateGemmParams(fbb, op.trans_a, op.trans_b, op.alpha, op.beta, has_c, &act,
                                op.has_residual);
  return params(p);
}

// Operand `v` (already a matrix of rank >= 2) with its batch dims made `batch`: leading 1s
// are added, and dims of 1 that the output broadcasts are materialized (a constant is
// expanded now, a run-time tensor by a Mul with ones). Operands whose batch dims are all 1
// stay as they are: the Gemm step reuses one matrix for every batch.
int fit_batch(Graph& g, int v, Shape shape, const Shape& batch, const std::string& step_name,
              std::vector<Node>* out) {
  const Shape own(shape.begin(), shape.end() - 2);
  if (shape_count(own) == 1) return view_of(g, v, shape, step_name, out);
  shape.insert(shape.begin(), batch.size() + 2 - shape.size(), 1);
  v = view_of(g, v, shape, step_name, out);
  Shape full = batch;
  full.push_back(shape[shape.size() - 2]);
  full.push_back(shape.back());
  if (shape == full) return v;
  const std::string name = g.values[v].name + ":" + shape_str(full);
  if (g.values[v].is_constant) {
    const std::vector<int64_t> index = fold::broadcast_index(shape, full);
    const std::vector<uint8_t>& src = g.values[v].data;
    std::vector<uint8_t> data(index.size() * sizeof(float));
    for (size_t k = 0; k < index.size(); ++k)
      std::copy_n(src.begin() + index[k] * sizeof(float), sizeof(float),
                  data.begin() + k * sizeof(float));
    return new_constant(g, name, DataType::kFloat32, full, std::move(data));
  }
  Shape ones_shape(full.size(), 1);
  for (size_t i = 0; i < batch.size(); ++i)
    if (shape[i] == 1) ones_shape[i] = batch[i];
  const int ones = new_constant(
      g, step_name + ":ones", DataType::kFloat32, ones_shape,
      write_doubles(DataType::kFloat32, std::vector<double>(shape_count(ones_shape), 1.0)));
  const int to = new_value(g, name, DataType::kFloat32, full);
  Node mul;
  mul.name = step_name + ":broadcast";
  mul.op_type = "Mul";
  mul.inputs = {v, ones};
  mul.outputs = {to};
  mul.op.resolved = true;
  mul.op.family = fb::OpFamily::Binary;
  mul.op.binary = fb::BinaryOp::Mul;
  out->push_back(std::move(mul));
  return to;
}

// At legalize: 1-D operands viewed as matrices, batch dims fitted to the output's (fit_batch),
// and the step's [batch, M, N] output viewed as ONNX's.
bool expand_gemm(Graph& g, Node& node, std::vector<Node>* out) {
  Shape a = g.values[node.inputs[0]].shape, b = g.values[node.inputs[1]].shape;
  if (node.op.a_vector) a.insert(a.begin(), 1);
  if (node.op.b_vector) b.push_back(1);
  const Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  Shape batch;
  if (!broadcast_shapes(batch_a, batch_b, &batch))
    fail("internal error: node ", node_label(node), ": batch dims do not broadcast");
  node.inputs[0] = fit_batch(g, node.inputs[0], a, batch, node.name + ":A", out);
  node.inputs[1] = fit_batch(g, node.inputs[1], b, batch, node.name + ":B", out);
  Shape y = batch;
  y.push_back(node.op.trans_a ? a.back() : a[a.size() - 2]);
  y.push_back(node.op.trans_b ? b[b.size() - 2] : b.back());
  const int onnx_out = node.outputs[0];
  node.op.a_vector = node.op.b_vector = false;
  if (g.values[onnx_out].shape == y) {
    out->push_back(std::move(node));
    return true;
  }
  const int tmp = new_value(g, g.values[onnx_out].name + ":" + shape_str(y), DataType::kFloat32, y);
  // The residual has the ONNX output's shape (fuse); the step adds it in the step's shape.
  if (node.op.has_residual)
    node.inputs.back() = view_of(g, node.inputs.back(), y, node.name + ":R", out);
  return append_with_output_view(node, tmp, node.name + ":Y", out);
}

}  // namespace

const FamilyRules gemm_rules = {serialize_gemm, expand_gemm, rows_of(kRows)};

}  // namespace jetplan::converter::ops
