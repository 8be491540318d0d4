// The Resize family: Resize (opsets 10 to 18) and Upsample (7 to 9), every mode and coordinate
// transformation of kernels/kernels.h ResizeParams.
#include <cmath>

#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

struct Named {
  const char* name;
  uint8_t value;
};

constexpr Named kCoordModes[] = {
    {"half_pixel", uint8_t(fb::ResizeCoord::HalfPixel)},
    {"pytorch_half_pixel", uint8_t(fb::ResizeCoord::PytorchHalfPixel)},
    {"align_corners", uint8_t(fb::ResizeCoord::AlignCorners)},
    {"asymmetric", uint8_t(fb::ResizeCoord::Asymmetric)},
    {"tf_crop_and_resize", uint8_t(fb::ResizeCoord::TfCropAndResize)},
    {"tf_half_pixel_for_nn", uint8_t(fb::ResizeCoord::TfHalfPixelForNn)},
};
constexpr Named kNearestModes[] = {
    {"round_prefer_floor", uint8_t(fb::ResizeNearest::RoundPreferFloor)},
    {"round_prefer_ceil", uint8_t(fb::ResizeNearest::RoundPreferCeil)},
    {"floor", uint8_t(fb::ResizeNearest::Floor)},
    {"ceil", uint8_t(fb::ResizeNearest::Ceil)},
};
constexpr Named kModes[] = {
    {"nearest", uint8_t(fb::ResizeMode::Nearest)},
    {"linear", uint8_t(fb::ResizeMode::Linear)},
    {"cubic", uint8_t(fb::ResizeMode::Cubic)},
};

template <size_t N>
bool lookup(const Named (&table)[N], const std::string& name, uint8_t* out) {
  for (const Named& e : table)
    if (name == e.name) {
      *out = e.value;
      return true;
    }
  return false;
}

// Upsample (opset 7-9) and Resize of opset 10 have no coordinate modes: ONNX Runtime, against
// which such models were exported, maps output x to x / scale and takes the floor when a dim
// grows, the ceiling when it shrinks. The kernel has one rounding for all dims.
std::string set_legacy_nearest(ResizeDesc* nn) {
  bool up = false, down = false;
  for (double s : nn->scale) {
    up = up || s > 1;
    down = down || s < 1;
  }
  if (up && down)
    return "nearest mode that enlarges some dims and shrinks others (its rounding differs per "
           "dim in ONNX Runtime; jetplan rounds all dims alike)";
  nn->nearest = down ? fb::ResizeNearest::Ceil : fb::ResizeNearest::Floor;
  return "";
}

// Fills scale, resized_length and the output shape from `scales` (ONNX: out = floor(in *
// scale), computed in float as ONNX shape inference does; the resized length in * scale, in
// double) or from `sizes` (scale out / in, resized length out).
Shape resize_from_scales(const Node& node, const Shape& x, const std::vector<double>& scales,
                         ResizeDesc* nn) {
  if (scales.size() != x.size())
    fail("node ", node_label(node), ": scales has ", scales.size(), " entries for input ",
         shape_str(x));
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    const double s = scales[d];
    if (!(s > 0) || !std::isfinite(s))
      fail("node ", node_label(node), ": scale ", s, " of dim ", d, " is not a positive number");
    const float product = static_cast<float>(x[d]) * static_cast<float>(s);
    if (!(product < 1e15f)) fail("node ", node_label(node), ": scale ", s, " is too large");
    out.push_back(static_cast<int64_t>(std::floor(product)));
    if (out.back() < 1)
      fail("node ", node_label(node), ": scale ", s, " makes dim ", d, " of ", shape_str(x),
           " empty");
    nn->scale.push_back(s);
    nn->resized_length.push_back(static_cast<double>(x[d]) * s);
  }
  return out;
}

Shape resize_from_sizes(const Node& node, const Shape& x, const std::vector<int64_t>& sizes,
                        ResizeDesc* nn) {
  if (sizes.size() != x.size())
    fail("node ", node_label(node), ": sizes has ", sizes.size(), " entries for input ",
         shape_str(x));
  for (size_t d = 0; d < x.size(); ++d) {
    if (sizes[d] < 1 || sizes[d] > (int64_t{1} << 40))
      fail("node ", node_label(node), ": size ", sizes[d], " of dim ", d, " is out of range");
    nn->scale.push_back(static_cast<double>(sizes[d]) / static_cast<double>(x[d]));
    nn->resized_length.push_back(static_cast<double>(sizes[d]));
  }
  return sizes;
}

// An optional input that is present and not an empty constant (opset 11 Resize passes an empty
// scales tensor when it gives sizes).
bool given(const Graph& g, const Node& node, size_t i) {
  if (!has_input(node, i)) return false;
  const Value& v = g.values[node.inputs[i]];
  return !(v.is_constant && v.shape_known && shape_count(v.shape) == 0);
}

// Upsample: opset 7 takes the scales as an attribute, opset 9 as an input.
std::string check_upsample(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  if (x.empty()) fail("node ", node_label(node), ": Upsample of a scalar");
  std::vector<double> scales;
  if (g.opset < 9) {
    auto it = node.attrs.find("scales");
    if (it == node.attrs.end() || it->second.kind != Attribute::Kind::kFloats)
      fail("node ", node_label(node), ": the scales attribute (floats) is missing");
    scales.assign(it->second.floats.begin(), it->second.floats.end());
  } else {
    const Value& s = input(g, node, 1);
    if (!s.is_constant) return run_time_reason("scales");
    scales = read_doubles(s);
  }
  ResizeDesc& nn = node.op.resize;
  const std::string mode = attr_string(node, "mode", "nearest");
  if (mode == "nearest") {
    nn.mode = fb::ResizeMode::Nearest;
  } else if (mode == "linear" || mode == "bilinear") {
    nn.mode = fb::ResizeMode::Linear;
  } else {
    fail("node ", node_label(node), ": unknown mode '", mode, "'");
  }
  nn.coord = fb::ResizeCoord::Asymmetric;
  const Shape out = resize_from_scales(node, x, scales, &nn);
  if (nn.mode == fb::ResizeMode::Nearest)
    if (std::string r = set_legacy_nearest(&nn); !r.empty()) return r;
  nn.roi_start.assign(x.size(), 0.0);
  nn.roi_end.assign(x.size(), 1.0);
  node.inputs.resize(1);
  return resolve_as(g, node, fb::OpFamily::Resize, out);
}

std::string check_resize(Graph& g, Node& node) {
  if (g.opset < 10) return cat("Resize needs opset 10 or later; the model imports opset ", g.opset);
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  if (x.empty()) fail("node ", node_label(node), ": Resize of a scalar");
  const int64_t rank = static_cast<int64_t>(x.size());
  // Opset 18 options: only their defaults.
  if (attr_int(node, "antialias", 0) != 0) return "antialias=1 is not supported";
  const std::string policy = attr_string(node, "keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch")
    return cat("keep_aspect_ratio_policy '", policy, "' is not supported (only 'stretch')");
  if (has_attr(node, "axes")) {
    const std::vector<int32_t> axes = resolve_axes(node, attr_ints(node, "axes", {}), rank);
    if (static_cast<int64_t>(axes.size()) != rank || axes.back() != rank - 1)
      return "an axes attribute that leaves dims out is not supported (give scales or sizes for "
             "every dim)";
  }
  ResizeDesc& nn = node.op.resize;
  uint8_t v = 0;
  const std::string mode = attr_string(node, "mode", "nearest");
  if (!lookup(kModes, mode, &v) || (g.opset < 11 && mode == "cubic"))
    fail("node ", node_label(node), ": unknown mode '", mode, "'");
  nn.mode = static_cast<fb::ResizeMode>(v);

  // Inputs: X, scales (opset 10); X, roi, scales, sizes (opset 11 on, roi and scales optional
  // since 13).
  const size_t scales_at = g.opset < 11 ? 1 : 2;
  const bool has_scales = given(g, node, scales_at);
  const bool has_sizes = g.opset >= 11 && given(g, node, 3);
  if (has_scales == has_sizes)
    fail("node ", node_label(node), ": Resize needs exactly one of scales and sizes");
  Shape out;
  if (has_scales) {
    const Value& s = input(g, node, scales_at);
    if (!s.is_constant) return run_time_reason("scales");
    out = resize_from_scales(node, x, read_doubles(s), &nn);
  } else {
    const Value& s = input(g, node, 3);
    if (!s.is_constant) return run_time_reason("sizes");
    out = resize_from_sizes(node, x, read_ints(s), &nn);
  }
  nn.roi_start.assign(x.size(), 0.0);
  nn.roi_end.assign(x.size(), 1.0);

  if (g.opset < 11) {
    nn.coord = fb::ResizeCoord::Asymmetric;
    if (nn.mode == fb::ResizeMode::Nearest)
      if (std::string r = set_legacy_nearest(&nn); !r.empty()) return r;
  } else {
    const std::string coord = attr_string(node, "coordinate_transformation_mode", "half_pixel");
    if (!lookup(kCoordModes, coord, &v) || (coord == "tf_half_pixel_for_nn" && g.opset >= 13))
      return cat("coordinate_transformation_mode '", coord, "' is not supported");
    nn.coord = static_cast<fb::ResizeCoord>(v);
    const std::string nearest = attr_string(node, "nearest_mode", "round_prefer_floor");
    if (!lookup(kNearestModes, nearest, &v))
      fail("node ", node_label(node), ": unknown nearest_mode '", nearest, "'");
    nn.nearest = static_cast<fb::ResizeNearest>(v);
    nn.cubic_coeff_a = attr_float(node, "cubic_coeff_a", -0.75f);
    nn.exclude_outside = attr_int(node, "exclude_outside", 0) != 0;
    nn.extrapolation_value = attr_float(node, "extrapolation_value", 0.f);
    if (!std::isfinite(nn.cubic_coeff_a) || !std::isfinite(nn.extrapolation_value))
      fail("node ", node_label(node), ": cubic_coeff_a and extrapolation_value must be finite");
    if (nn.coord == fb::ResizeCoord::TfCropAndResize && given(g, node, 1)) {
      const Value& roi = input(g, node, 1);
      if (!roi.is_constant) return run_time_reason("roi");
      const std::vector<double> r = read_doubles(roi);
      if (static_cast<int64_t>(r.size()) != 2 * rank)
        fail("node ", node_label(node), ": roi has ", r.size(), " entries, expected ", 2 * rank);
      for (double e : r)
        if (!std::isfinite(e)) fail("node ", node_label(node), ": roi holds ", e);
      nn.roi_start.assign(r.begin(), r.begin() + rank);
      nn.roi_end.assign(r.begin() + rank, r.end());
    }
  }
  node.inputs.resize(1);
  return resolve_as(g, node, fb::OpFamily::Resize, out);
}

constexpr const char* kResizeNotes =
    "scales or sizes (and roi) constant; nearest (every nearest_mode), linear and cubic "
    "(cubic_coeff_a, exclude_outside) with every coordinate_transformation_mode ONNX 1.12 has; "
    "no antialias, keep_aspect_ratio_policy stretch only";

constexpr OpRow kRows[] = {
    {"Resize", check_resize, "float32", kResizeNotes, 19},
    {"Upsample", check_upsample, "float32",
     "scales constant; nearest or linear (ONNX Runtime's legacy rounding); nearest may not "
     "enlarge some dims and shrink others"},
};

StepParamsOffset serialize_resize(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const ResizeDesc& nn = s.op.resize;
  auto p = fb::CreateResizeParamsDirect(
      fbb, nn.mode, nn.coord, nn.nearest, &nn.scale, &nn.resized_length, &nn.roi_start, &nn.roi_end,
      nn.cubic_coeff_a, nn.exclude_outside, nn.extrapolation_value, nn.y_axis, nn.y_axis_offset);
  return params(p);
}

}  // namespace

const FamilyRules resize_rules = {serialize_resize, nullptr, rows_of(kRows),
                                   fb::PointwiseInstrKind::Load, NhwcRule::kResize};

}  // namespace jetplan::converter::ops
