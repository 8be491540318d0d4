// The Nms family: NonMaxSuppression, whose selection count is known at run time only.
#include <algorithm>

#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_nms(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1}); !r.empty()) return r;
  const Shape& boxes = input(g, node, 0).shape;
  const Shape& scores = input(g, node, 1).shape;
  if (boxes.size() != 3 || boxes[2] != 4 || scores.size() != 3 || scores[0] != boxes[0] ||
      scores[2] != boxes[1])
    fail("node ", node_label(node), ": shape mismatch: boxes ", shape_str(boxes), " and scores ",
         shape_str(scores), " are not [B, N, 4] and [B, C, N]");
  NmsDesc& nn = node.op.nms;
  const int64_t center = attr_int(node, "center_point_box", 0);
  if (center != 0 && center != 1)
    fail("node ", node_label(node), ": center_point_box is ", center, ", not 0 or 1");
  nn.center_point_box = center == 1;
  if (has_input(node, 2)) {
    const Value& m = input(g, node, 2);
    if (!m.is_constant) return run_time_reason("max_output_boxes_per_class");
    const std::vector<int64_t> v = read_ints(m);
    if (v.size() != 1)
      fail("node ", node_label(node), ": max_output_boxes_per_class has ", v.size(), " elements");
    nn.max_output_per_class = v[0];
  }
  if (nn.max_output_per_class < 1)
    return cat("max_output_boxes_per_class is ", nn.max_output_per_class,
               ": the output is always empty (jetplan refuses a NonMaxSuppression that selects "
               "nothing)");
  if (has_input(node, 3) && !constant_scalar(g, node, 3, &nn.iou_threshold))
    return run_time_reason("iou_threshold (a scalar)");
  nn.has_score_threshold = has_input(node, 4);
  if (nn.has_score_threshold && !constant_scalar(g, node, 4, &nn.score_threshold))
    return run_time_reason("score_threshold (a scalar)");
  // The row count is known only at run time; the C API reports it for a graph output, so the
  // selection must be one, read by no node (which would see the unused rows too).
  const int y = node.outputs.empty() ? -1 : node.outputs[0];
  if (y < 0) fail("node ", node_label(node), ": its output has no name");
  Value& out = g.values[y];
  if (!out.graph_output || std::count(g.outputs.begin(), g.outputs.end(), y) != 1)
    return cat("its output '", out.name,
               "' is not a graph output (or is one twice); jetplan "
               "gives the run-time number of selected boxes to a graph output only");
  for (const Node& n : g.nodes)
    if (!n.dead && std::find(n.inputs.begin(), n.inputs.end(), y) != n.inputs.end())
      return cat("its output '", out.name, "' is read by node ", node_label(n),
                 "; jetplan gives the run-time number of selected boxes to a graph output only");
  const int64_t per_class = std::min(nn.max_output_per_class, boxes[1]);
  node.op.count_output = true;
  node.op.workspace_bytes = static_cast<uint64_t>(boxes[1]) * sizeof(int64_t);
  node.inputs.resize(2);
  // The declared extent (if any) is the run-time count; the tensor holds the capacity.
  out.shape_known = false;
  return resolve_as(g, node, fb::OpFamily::Nms, DataType::kInt64,
                    {boxes[0] * scores[1] * per_class, 3});
}

constexpr OpRow kRows[] = {
    {"NonMaxSuppression", check_nms, "float32 -> int64",
     "max_output_boxes_per_class >= 1 and the thresholds constant; its output a graph output "
     "read by no node (the selected count is known at run time)"},
};

StepParamsOffset serialize_nms(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const NmsDesc& nn = s.op.nms;
  return params(fb::CreateNmsParams(fbb, nn.max_output_per_class, nn.iou_threshold,
                                    nn.score_threshold, nn.has_score_threshold,
                                    nn.center_point_box));
}

}  // namespace

const FamilyRules nms_rules = {serialize_nms, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
