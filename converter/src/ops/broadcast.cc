// The Broadcast family: Expand and Tile.
#include "converter/src/fold/eval.h"
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_expand(Graph& g, Node& node) {
  PlanInput x;
  if (std::string r = plan_input(g, node, &x); !r.empty()) return r;
  const Value& shape = input(g, node, 1);
  if (!shape.is_constant)
    return cat("its shape input '", shape.name,
               "' is computed at run time (jetplan needs it constant)");
  const Shape out = broadcast_or_fail(node, x.shape, read_ints(shape));
  if (out == x.shape) return resolve_as_copy(g, node, x.dtype, x.shape);
  node.op.tile = false;
  node.inputs.resize(1);
  return resolve_as(g, node, fb::OpFamily::Broadcast, x.dtype, out);
}

std::string check_tile(Graph& g, Node& node) {
  PlanInput x;
  if (std::string r = plan_input(g, node, &x); !r.empty()) return r;
  Shape out;
  std::string why;
  if (!fold::tile_shape(g, node, x.shape, &out, &why)) return why;
  if (out == x.shape) return resolve_as_copy(g, node, x.dtype, x.shape);
  node.op.tile = true;
  node.inputs.resize(1);
  return resolve_as(g, node, fb::OpFamily::Broadcast, x.dtype, out);
}

constexpr OpRow kRows[] = {
    {"Expand", check_expand, kAnyPlanDtype, "shape constant (after folding)"},
    {"Tile", check_tile, kAnyPlanDtype, "repeats constant (after folding)"},
};

StepParamsOffset serialize_broadcast(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateBroadcastParams(fbb, s.op.tile));
}

}  // namespace

const FamilyRules broadcast_rules = {serialize_broadcast, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
