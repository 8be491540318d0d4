// The GridSample family: ONNX GridSample (opset 16: 4-D X, modes bilinear, nearest, bicubic;
// opsets 20 and 22: 1 to 3 spatial dims here, modes linear, nearest, cubic), X and the grid
// run-time tensors or constants.
#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

// ONNX's mode names: opset 16's, then those of 20 on.
fb::GridSampleMode mode_of(const Graph& g, const Node& node) {
  const bool new_names = g.opset >= 20;
  const std::string mode = attr_string(node, "mode", new_names ? "linear" : "bilinear");
  if (mode == (new_names ? "linear" : "bilinear")) return fb::GridSampleMode::Linear;
  if (mode == "nearest") return fb::GridSampleMode::Nearest;
  if (mode == (new_names ? "cubic" : "bicubic")) return fb::GridSampleMode::Cubic;
  fail("node ", node_label(node), ": unknown mode '", mode, "' (opset ", g.opset, " names ",
       new_names ? "linear, nearest and cubic" : "bilinear, nearest and bicubic", ")");
}

fb::GridSamplePadding padding_of(const Node& node) {
  const std::string padding = attr_string(node, "padding_mode", "zeros");
  if (padding == "zeros") return fb::GridSamplePadding::Zeros;
  if (padding == "border") return fb::GridSamplePadding::Border;
  if (padding == "reflection") return fb::GridSamplePadding::Reflection;
  fail("node ", node_label(node), ": unknown padding_mode '", padding, "'");
}

std::string check_grid_sample(Graph& g, Node& node) {
  if (node.inputs.size() != 2 || node.inputs[0] < 0 || node.inputs[1] < 0)
    fail("node ", node_label(node), ": GridSample takes X and grid");
  const Value& x = input(g, node, 0);
  const Value& grid = input(g, node, 1);
  if (x.dtype != DataType::kFloat32) return not_float(x, "X");
  if (grid.dtype != DataType::kFloat32) return not_float(grid, "grid");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank < 3 || rank > 5)
    return cat("GridSample of X ", shape_str(x.shape), " is not supported (1 to 3 spatial dims: "
               "[N, C, W], [N, C, H, W] or [N, C, D, H, W])");
  if (g.opset < 20 && rank != 4)
    fail("node ", node_label(node), ": opset ", g.opset, " GridSample takes a 4-D X, not ",
         shape_str(x.shape));
  const int64_t r = rank - 2;
  const Shape& gs = grid.shape;
  if (static_cast<int64_t>(gs.size()) != rank || gs[0] != x.shape[0] || gs.back() != r)
    fail("node ", node_label(node), ": grid ", shape_str(gs), " does not fit X ",
         shape_str(x.shape), " (it must be [N, *out, ", r, "])");
  GridSampleDesc& d = node.op.grid_sample;
  d.mode = mode_of(g, node);
  d.padding = padding_of(node);
  d.align_corners = attr_int(node, "align_corners", 0) != 0;
  Shape out = {x.shape[0], x.shape[1]};
  out.insert(out.end(), gs.begin() + 1, gs.end() - 1);
  for (int64_t k = 2; k < rank; ++k)
    if (x.shape[k] == 0 && shape_count(out) != 0)
      return cat("GridSample of X ", shape_str(x.shape), " is not supported (a spatial dim of 0 "
                 "has no sample to read)");
  return resolve_as(g, node, fb::OpFamily::GridSample, out);
}

constexpr OpRow kRows[] = {
    {"GridSample", check_grid_sample, "float32",
     "X [N, C, *spatial] of 1 to 3 spatial dims (opset 16: 2); every mode, padding_mode and "
     "align_corners; the grid read as float32 in GPU plans",
     20},
};

StepParamsOffset serialize_grid_sample(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const GridSampleDesc& d = s.op.grid_sample;
  return params(fb::CreateGridSampleParams(fbb, d.mode, d.padding, d.align_corners));
}

}  // namespace

const FamilyRules grid_sample_rules = {serialize_grid_sample, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
