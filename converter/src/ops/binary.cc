// The Binary family: float32 two-input arithmetic (its ONNX ops have their rows in elementwise.cc,
// which decides by dtype and hands float32 here: check_binary) and PRelu.
#include <functional>
#include <map>
#include <utility>

#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/family_checks.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/steps.h"

namespace jetplan::converter::ops {

std::string check_binary(Graph& g, Node& node) {
  if (node.inputs.size() != 2 || !has_input(node, 0) || !has_input(node, 1))
    return cat(node.inputs.size(), " inputs (jetplan's elementwise ops take 2)");
  if (std::string r = float_inputs(g, node, {0, 1}); !r.empty()) return r;
  const Shape out = broadcast_or_fail(node, input(g, node, 0).shape, input(g, node, 1).shape);
  using fb::BinaryOp;
  const std::string& op = node.op_type;
  node.op.binary = op == "Add"   ? BinaryOp::Add
                   : op == "Sub" ? BinaryOp::Sub
                   : op == "Mul" ? BinaryOp::Mul
                   : op == "Div" ? BinaryOp::Div
                   : op == "Max" ? BinaryOp::Max
                   : op == "Min" ? BinaryOp::Min
                                 : BinaryOp::Pow;
  return resolve_as(g, node, fb::OpFamily::Binary, out);
}

namespace {

// PRelu: a Binary step x < 0 ? x * slope : x. The slope broadcasts to X only (ONNX's
// unidirectional broadcasting): the output has X's shape.
std::string check_prelu(Graph& g, Node& node) {
  if (node.inputs.size() != 2 || !has_input(node, 0) || !has_input(node, 1))
    return cat(node.inputs.size(), " inputs (PRelu takes X and slope)");
  if (std::string r = float_inputs(g, node, {0, 1}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  const Shape& slope = input(g, node, 1).shape;
  if (broadcast_or_fail(node, x, slope) != x)
    fail("node ", node_label(node), ": slope ", shape_str(slope), " does not broadcast to X ",
         shape_str(x), " (PRelu broadcasts the slope to X only)");
  node.op.binary = fb::BinaryOp::PRelu;
  return resolve_as(g, node, fb::OpFamily::Binary, x);
}

// Det (opset 11) of float32 matrices of up to 4x4: each determinant written out by cofactor
// expansion along the first row over the matrix elements (a Gather each of the matrices
// flattened to [..., n * n]), the minors of the lower rows shared. Larger matrices are refused:
// they would want an LU factorization, which no step does.
std::string decompose_det(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape x = input(g, node, 0).shape;
  if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
    fail("node ", node_label(node), ": Det takes square matrices [..., n, n] (the input is ",
         shape_str(x), ")");
  const int64_t n = x.back();
  if (n < 1 || n > 4) return cat("matrices of ", n, "x", n, " (jetplan writes out determinants of up to 4x4)");
  Shape flat(x.begin(), x.end() - 2);
  flat.push_back(n * n);
  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  const int elements = b.add("Reshape", "elements", {node.inputs[0], b.ints("flat", flat)});
  const int64_t axis = int64_t(flat.size()) - 1;
  const auto element = [&](int64_t i, int64_t j, int to) {
    const int index = b.constant(cat("index_", i, j), DataType::kInt64, {},
                                 write_ints(DataType::kInt64, {i * n + j}));
    return b.add("Gather", cat("m", i, j), {elements, index}, {{"axis", A::int_attr(axis)}}, to);
  };
  std::map<std::pair<int64_t, unsigned>, int> minors;  // (first row, columns) -> determinant
  // The determinant of rows row.. n - 1 over the columns in `cols` (a bit set); `to` names the
  // value the last node writes (-1: a new one).
  std::function<int(int64_t, unsigned, int)> det = [&](int64_t row, unsigned cols, int to) {
    auto hit = minors.find({row, cols});
    if (hit != minors.end() && to < 0) return hit->second;
    std::vector<int64_t> c;
    for (int64_t j = 0; j < n; ++j)
      if (cols & (1u << j)) c.push_back(j);
    int result = -1;
    if (c.size() == 1) {
      result = element(row, c[0], to);
    } else {
      for (size_t k = 0; k < c.size(); ++k) {
        const int term = b.add("Mul", cat("term_", row, "_", c[k]),
                               {element(row, c[k], -1), det(row + 1, cols & ~(1u << c[k]), -1)});
        const bool last = k + 1 == c.size();
        result = k == 0 ? term
                        : b.add(k % 2 ? "Sub" : "Add", cat("sum_", row, "_", c[k]), {result, term},
                                {}, last ? to : -1);
      }
    }
    minors[{row, cols}] = result;
    return result;
  };
  det(0, (1u << n) - 1, node.outputs[0]);
  return "";
}

constexpr OpRow kRows[] = {
    {"Det", nullptr, "float32",
     "matrices of up to 4x4; runs as the cofactor expansion over Gathers of the elements, Mul, "
     "Add and Sub",
     0, decompose_det},
    {"RotaryEmbedding", nullptr, "float32 (position_ids: int64 or int32)",
     "runs as its Gather, Slice, Mul, Sub, Add and Concat graph; 3-D (num_heads) and 4-D "
     "input, rotary_embedding_dim, interleaved, with or without position_ids",
     23, decompose_rotary_embedding},
    {"PRelu", check_prelu, "float32",
     "the slope broadcasts to X (unidirectional); a Binary step, fused with a following "
     "activation"},
};

StepParamsOffset serialize_binary(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const fb::Activation act = activation(s.op.act);
  return params(fb::CreateBinaryParams(fbb, s.op.binary, &act));
}

}  // namespace

const FamilyRules binary_rules = {serialize_binary, expand_promoted, rows_of(kRows),
                                  fb::PointwiseInstrKind::Binary, NhwcRule::kBinary};

}  // namespace jetplan::converter::ops
