// The Transpose family: Transpose, DepthToSpace and SpaceToDepth (a Transpose between two
// views) and Einsum, whose check and expansion are in einsum.h (its node is a Transpose
// placeholder until expanded).
#include <utility>
#include <vector>

#include "converter/src/fold/eval.h"
#include "converter/src/ir/error.h"
#include "converter/src/ops/einsum.h"
#include "converter/src/ops/family_checks.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/steps.h"

namespace jetplan::converter::ops {

std::string check_transpose(Graph& g, Node& node) {
  PlanInput x;
  if (std::string r = plan_input(g, node, &x); !r.empty()) return r;
  const size_t rank = x.shape.size();
  const std::vector<int32_t> perm = fold::transpose_perm(node, static_cast<int64_t>(rank));
  Shape out(rank);
  bool identity = true;
  for (size_t d = 0; d < rank; ++d) {
    out[d] = x.shape[perm[d]];
    identity = identity && perm[d] == static_cast<int32_t>(d);
  }
  if (identity) return resolve_as_copy(g, node, x.dtype, out);
  node.op.perm = perm;
  return resolve_as(g, node, fb::OpFamily::Transpose, x.dtype, out);
}

namespace {

std::string check_space_depth(Graph& g, Node& node) {
  PlanInput x;
  if (std::string r = plan_input(g, node, &x); !r.empty()) return r;
  const fold::SpaceDepthSpec spec = fold::space_depth_spec(node, x.shape);
  if (spec.out == x.shape) return resolve_as_copy(g, node, x.dtype, spec.out);  // blocksize 1
  node.op.expand = Expansion::kSpaceDepth;
  node.op.space_depth_view = spec.view;
  node.op.perm = spec.perm;
  return resolve_as(g, node, fb::OpFamily::Transpose, x.dtype, spec.out);
}

void expand_space_depth(StepWriter& w, Node node) {
  const int x = w.view(node.inputs[0], node.op.space_depth_view, node.name + ":6d");
  const int t = w.transpose(x, node.op.perm, node.name);
  w.view_into(t, node.outputs[0], node.name + ":4d");
}

// DepthToSpace/SpaceToDepth and Einsum (einsum.h) become several steps.
bool expand_transpose(Graph& g, Node& node, std::vector<Node>* out) {
  const Expansion kind = node.op.expand;
  if (kind != Expansion::kSpaceDepth && kind != Expansion::kEinsum) return false;
  node.op.expand = Expansion::kNone;
  StepWriter w(g, out);
  if (kind == Expansion::kSpaceDepth)
    expand_space_depth(w, std::move(node));
  else
    expand_einsum(w, std::move(node));
  return true;
}

constexpr OpRow kRows[] = {
    {"DepthToSpace", check_space_depth, kAnyPlanDtype,
     "DCR and CRD modes; a Transpose between two views"},
    {"Einsum", check_einsum, "float32, float64; a permutation or diagonal of 1 operand: any "
     "plan dtype",
     "1 or 2 operands; '...' dims equal in both operands (not broadcast); an index repeated in "
     "one operand takes its diagonal first (a strided Slice); float32 products run as a "
     "batched Gemm between views and Transposes, sums and float64 as a broadcast Mul and a "
     "Reduce Sum"},
    {"SpaceToDepth", check_space_depth, kAnyPlanDtype,
     "DCR and CRD modes (opset 28); a Transpose between two views", 28},
    {"Transpose", check_transpose, kAnyPlanDtype, "any perm"},
};

StepParamsOffset serialize_transpose(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateTransposeParams(fbb, fbb.CreateVector(s.op.perm), s.op.y_block,
                                          s.op.y_block_stride, s.op.y_offset));
}

}  // namespace

const FamilyRules transpose_rules = {serialize_transpose, expand_transpose, rows_of(kRows)};

}  // namespace jetplan::converter::ops
