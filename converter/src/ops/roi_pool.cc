// The RoiPool family: ONNX RoiAlign (opsets 10, 16, 22) and MaxRoiPool (opsets 1, 22), X a 4-D
// float32 tensor and the boxes run-time tensors or constants; the number of boxes is the rois
// tensor's static dim.
#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "kernels/roi_pool.h"

namespace jetplan::converter::ops {

namespace {

// X [N, C, H, W] float32 and rois [R, cols] float32 of known shape; R into *r. "" or the reason;
// ConvertError for a model whose shapes do not fit.
std::string check_x_and_rois(const Graph& g, const Node& node, int64_t cols, int64_t* r) {
  const Value& x = input(g, node, 0);
  const Value& rois = input(g, node, 1);
  if (x.dtype != DataType::kFloat32) return not_float(x, "X");
  if (rois.dtype != DataType::kFloat32) return not_float(rois, "rois");
  if (!x.shape_known || !rois.shape_known)
    return cat("the shape of X or rois is not known at conversion (jetplan takes the number of "
               "boxes from the rois tensor's static shape)");
  if (x.shape.size() != 4)
    fail("node ", node_label(node), ": X ", shape_str(x.shape), " is not [N, C, H, W]");
  if (rois.shape.size() != 2 || rois.shape[1] != cols)
    fail("node ", node_label(node), ": rois ", shape_str(rois.shape), " is not [R, ", cols, "]",
         cols == 4 ? " (x1, y1, x2, y2)" : " (batch index, x1, y1, x2, y2)");
  *r = rois.shape[0];
  return "";
}

// Y [R, C, out_h, out_w]; an X of no pixels has none to pool where Y has elements.
std::string resolve_roi_pool(Graph& g, Node& node, int64_t r, int64_t out_h, int64_t out_w) {
  const Shape& x = input(g, node, 0).shape;
  const Shape y = {r, x[1], out_h, out_w};
  if ((x[2] == 0 || x[3] == 0) && shape_count(y) != 0)
    return cat(node.op_type, " of X ", shape_str(x), " is not supported (a spatial dim of 0 has "
               "no pixel to pool)");
  return resolve_as(g, node, fb::OpFamily::RoiPool, y);
}

int64_t positive_attr(const Node& node, const char* name, int64_t fallback) {
  const int64_t v = attr_int(node, name, fallback);
  if (v < 1 || v > kMaxWindow) fail("node ", node_label(node), ": ", name, " is ", v);
  return v;
}

std::string check_roi_align(Graph& g, Node& node) {
  if (node.inputs.size() != 3 || node.inputs[0] < 0 || node.inputs[1] < 0 || node.inputs[2] < 0)
    fail("node ", node_label(node), ": RoiAlign takes X, rois and batch_indices");
  int64_t r = 0;
  if (std::string why = check_x_and_rois(g, node, 4, &r); !why.empty()) return why;
  const Value& batch = input(g, node, 2);
  if (batch.dtype != DataType::kInt64)
    return cat("batch_indices '", batch.name, "' is ", dtype_name(batch.dtype),
               " (RoiAlign takes int64)");
  if (!batch.shape_known)
    return cat("the shape of batch_indices is not known at conversion");
  if (batch.shape != Shape{r})
    fail("node ", node_label(node), ": batch_indices ", shape_str(batch.shape),
         " does not fit rois ", shape_str(input(g, node, 1).shape), " (it must be [", r, "])");
  RoiPoolDesc& d = node.op.roi_pool;
  const std::string mode = attr_string(node, "mode", "avg");
  if (mode != "avg" && mode != "max")
    fail("node ", node_label(node), ": unknown mode '", mode, "' (avg or max)");
  d.mode = mode == "avg" ? fb::RoiPoolMode::AlignAvg : fb::RoiPoolMode::AlignMax;
  // Opset 10 has no coordinate_transformation_mode and behaves as output_half_pixel.
  const std::string ctm = g.opset >= 16
                              ? attr_string(node, "coordinate_transformation_mode", "half_pixel")
                              : std::string("output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    fail("node ", node_label(node), ": unknown coordinate_transformation_mode '", ctm,
         "' (half_pixel or output_half_pixel)");
  d.half_pixel = ctm == "half_pixel";
  d.sampling_ratio = attr_int(node, "sampling_ratio", 0);
  if (d.sampling_ratio < 0)
    fail("node ", node_label(node), ": sampling_ratio is ", d.sampling_ratio);
  if (d.sampling_ratio > kernels::kRoiAlignMaxGrid)
    return cat("sampling_ratio ", d.sampling_ratio, " is not supported (at most ",
               kernels::kRoiAlignMaxGrid, ")");
  d.spatial_scale = attr_float(node, "spatial_scale", 1.f);
  return resolve_roi_pool(g, node, r, positive_attr(node, "output_height", 1),
                          positive_attr(node, "output_width", 1));
}

std::string check_max_roi_pool(Graph& g, Node& node) {
  if (node.inputs.size() != 2 || node.inputs[0] < 0 || node.inputs[1] < 0)
    fail("node ", node_label(node), ": MaxRoiPool takes X and rois");
  int64_t r = 0;
  if (std::string why = check_x_and_rois(g, node, 5, &r); !why.empty()) return why;
  const std::vector<int64_t> pooled = attr_ints(node, "pooled_shape", {});
  if (pooled.size() != 2)
    fail("node ", node_label(node), ": pooled_shape must hold 2 values (height, width), not ",
         pooled.size());
  for (int64_t v : pooled)
    if (v < 1 || v > kMaxWindow) fail("node ", node_label(node), ": pooled_shape holds ", v);
  RoiPoolDesc& d = node.op.roi_pool;
  d.mode = fb::RoiPoolMode::Max;
  d.spatial_scale = attr_float(node, "spatial_scale", 1.f);
  return resolve_roi_pool(g, node, r, pooled[0], pooled[1]);
}

constexpr OpRow kRows[] = {
    {"MaxRoiPool", check_max_roi_pool, "float32",
     "X [N, C, H, W]; rois [R, 5] of static shape, read as float32 in GPU plans; a batch index "
     "outside [0, N) gives zeros"},
    {"RoiAlign", check_roi_align, "float32",
     "X [N, C, H, W]; rois [R, 4] and batch_indices [R] of static shape, rois read as float32 "
     "in GPU plans; both modes and coordinate_transformation_modes; sampling_ratio at most 1024 "
     "(an adaptive grid is cut to 1024 a dim); a batch index outside [0, N) gives zeros"},
};

StepParamsOffset serialize_roi_pool(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const RoiPoolDesc& d = s.op.roi_pool;
  return params(fb::CreateRoiPoolParams(fbb, d.mode, d.half_pixel, d.sampling_ratio,
                                        d.spatial_scale));
}

}  // namespace

const FamilyRules roi_pool_rules = {serialize_roi_pool, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
