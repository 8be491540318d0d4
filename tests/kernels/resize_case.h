// The Resize case description shared by cpu/test_resize.cc and cpu/test_resize_onnx_nodes.cc: one
// ResizeCase holds what ONNX gives per dim (sizes, scales, roi) and turns into ResizeParams.
#pragma once

#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels::test_util {

constexpr auto kNearest = ResizeMode::kNearest;
constexpr auto kLinear = ResizeMode::kLinear;
constexpr auto kCubic = ResizeMode::kCubic;

struct ResizeCase {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
  Shape in, out;
  // Per dim: ONNX's scale, the resized length of the coordinate formulas (out for sizes, in *
  // scale for scales) and the roi (empty: 0..1 in every dim).
  std::vector<double> scale, length, roi_start, roi_end;
  float a = -0.75f;
  bool exclude_outside = false;
  float extrapolation = 0.f;
};

inline ResizeParams resize_params(const ResizeCase& c) {
  ResizeParams p;
  p.mode = c.mode;
  p.coord = c.coord;
  p.nearest = c.nearest;
  p.rank = static_cast<int32_t>(c.in.size());
  for (size_t d = 0; d < c.in.size(); ++d) {
    p.in_dims[d] = c.in[d];
    p.out_dims[d] = c.out[d];
    p.scale[d] = c.scale[d];
    p.resized_length[d] = c.length[d];
    if (!c.roi_start.empty()) {
      p.roi_start[d] = c.roi_start[d];
      p.roi_end[d] = c.roi_end[d];
    }
  }
  p.cubic_coeff_a = c.a;
  p.exclude_outside = c.exclude_outside;
  p.extrapolation_value = c.extrapolation;
  return p;
}

inline Output run_resize(const ResizeCase& c, const std::vector<float>& x) {
  Output y(volume(c.out));
  cpu::resize(resize_params(c), x.data(), y.data());
  return y;
}

}  // namespace jetplan::kernels::test_util
