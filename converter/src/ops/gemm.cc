// The Gemm family: ONNX Gemm and MatMul (legalize views 1-D and broadcast operands), with the
// epilogue the fusions add. Einsum products become Gemm steps too (einsum.h).
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

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
  op.family = fb::OpFamily::Gemm;
  set_output(g, node, {m, n});
  return "";
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
  op.family = fb::OpFamily::Gemm;
  op.alpha = 1.f;
  op.beta = 1.f;
  set_output(g, node, out);
  return "";
}

constexpr OpRow kRows[] = {
    {"Gemm", check_gemm, "core", "float32", "2-D A and B; C broadcasts to [M, N]"},
    {"MatMul", check_matmul, "core", "float32",
     "numpy semantics: 1-D operands, broadcast batch dims"},
};

StepParamsOffset serialize_gemm(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const OpDesc& op = s.op;
  const fb::Activation act = activation(op.act);
  // Inputs are A, B, then C and the residual when present.
  const bool has_c = s.inputs.size() - (op.has_residual ? 1 : 0) == 3;
  auto p = fb::CreateGemmParams(fbb, op.trans_a, op.trans_b, op.alpha, op.beta, has_c, &act,
                                op.has_residual);
  return {fb::StepParams::GemmParams, p.Union()};
}

}  // namespace

const FamilyRules gemm_rules = {serialize_gemm, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
