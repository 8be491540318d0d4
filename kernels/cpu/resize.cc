#include <cmath>

#include "kernels/cpu/nn_ops.h"

namespace jetplan::kernels::cpu {

namespace {

constexpr int kMaxTaps = 4;  // cubic

// The input elements one output coordinate of one dim reads, with their 1D weights.
struct Taps {
  int64_t index[kMaxTaps];
  double weight[kMaxTaps];
  int count;
};

// ONNX coordinate_transformation_mode, in double, in the operation order of the ONNX reference.
double source_coordinate(const ResizeParams& p, int d, int64_t o) {
  const double x = static_cast<double>(o);
  const double in = static_cast<double>(p.in_dims[d]);
  const double len = p.resized_length[d];
  const double s = p.scale[d];
  switch (p.coord) {
    case ResizeCoord::kHalfPixel:
      return (x + 0.5) / s - 0.5;
    case ResizeCoord::kPytorchHalfPixel:
      return len > 1 ? (x + 0.5) / s - 0.5 : 0.0;
    case ResizeCoord::kAlignCorners:
      return len > 1 ? x * (in - 1) / (len - 1) : 0.0;
    case ResizeCoord::kAsymmetric:
      return x / s;
    case ResizeCoord::kTfCropAndResize: {
      const double start = p.roi_start[d], end = p.roi_end[d];
      const double offset = start * (in - 1);
      if (len > 1) return x * (end - start) * (in - 1) / (len - 1) + offset;
      return (end - start) * (in - 1) / 2 + offset;
    }
    case ResizeCoord::kTfHalfPixelForNn:
      return (x + 0.5) / s;
  }
  return 0.0;
}

int64_t clamp_index(int64_t i, int64_t size) { return i < 0 ? 0 : (i >= size ? size - 1 : i); }

// Keys' cubic convolution kernel at distance t in [0, 2], written as ONNX's reference writes it.
double cubic_weight(double t, double a) {
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
}

// Appends tap (index, weight) unless the weight is 0; the index is clamped to the edge.
void add_tap(Taps* t, int64_t index, double weight, int64_t size) {
  if (weight == 0.0) return;
  t->index[t->count] = clamp_index(index, size);
  t->weight[t->count] = weight;
  ++t->count;
}

// The taps of output coordinate o of dim d. False when tf_crop_and_resize puts the coordinate
// outside the input: the output element is then the extrapolation value.
bool dim_taps(const ResizeParams& p, int d, int64_t o, Taps* t) {
  const int64_t size = p.in_dims[d];
  double c = source_coordinate(p, d, o);
  if (p.coord == ResizeCoord::kTfCropAndResize && (c < 0 || c > static_cast<double>(size - 1)))
    return false;
  // For valid parameters c lies in [-0.5, size]; the clamp only keeps the conversion to int64
  // defined for absurd ones (every tap then reads the same edge element).
  c = std::fmin(std::fmax(c, -4.0), static_cast<double>(size) + 4.0);
  const double base = std::floor(c);
  const double r = c - base;  // in [0, 1)
  const int64_t i = static_cast<int64_t>(base);
  t->count = 0;
  switch (p.mode) {
    case ResizeMode::kNearest: {
      bool up = false;
      switch (p.nearest) {
        case ResizeNearest::kRoundPreferFloor: up = r > 0.5; break;
        case ResizeNearest::kRoundPreferCeil: up = r >= 0.5; break;
        case ResizeNearest::kFloor: up = false; break;
        case ResizeNearest::kCeil: up = r > 0; break;
      }
      add_tap(t, up ? i + 1 : i, 1.0, size);
      return true;
    }
    case ResizeMode::kLinear:
      add_tap(t, i, 1.0 - r, size);
      add_tap(t, i + 1, r, size);
      return true;
    case ResizeMode::kCubic: {
      const double a = p.cubic_coeff_a;
      const double w[kMaxTaps] = {cubic_weight(r + 1, a), cubic_weight(r, a),
                                  cubic_weight(1 - r, a), cubic_weight(2 - r, a)};
      double kept = 0.0;
      for (int k = 0; k < kMaxTaps; ++k) {
        const int64_t idx = i - 1 + k;
        if (!p.exclude_outside || (idx >= 0 && idx < size)) kept += w[k];
      }
      for (int k = 0; k < kMaxTaps; ++k) {
        const int64_t idx = i - 1 + k;
        if (p.exclude_outside && (idx < 0 || idx >= size)) continue;
        add_tap(t, idx, p.exclude_outside ? w[k] / kept : w[k], size);
      }
      return true;
    }
  }
  return true;
}

}  // namespace

// Each output element: the taps of every dim, then the sum over their product in double, dim 0
// outermost and each dim's taps in increasing index order, rounded to float once. Dims that are
// not resized contribute one tap of weight 1, so the product stays small.
void resize(const ResizeParams& p, const float* x, float* y) {
  const int rank = p.rank;
  int64_t in_stride[kMaxRank];
  int64_t stride = 1;
  for (int d = rank; d-- > 0;) {
    in_stride[d] = stride;
    stride *= p.in_dims[d];
  }
  int64_t out_count = 1;
  for (int d = 0; d < rank; ++d) out_count *= p.out_dims[d];

  int64_t coord[kMaxRank] = {};  // output coordinate of element `o`, row-major odometer
  Taps taps[kMaxRank];
  for (int64_t o = 0; o < out_count; ++o) {
    bool inside = true;
    for (int d = 0; d < rank && inside; ++d) inside = dim_taps(p, d, coord[d], &taps[d]);
    if (!inside) {
      y[o] = p.extrapolation_value;
    } else {
      double acc = 0.0;
      int pick[kMaxRank] = {};  // tap chosen in each dim, odometer over the tap product
      for (;;) {
        double weight = 1.0;
        int64_t offset = 0;
        for (int d = 0; d < rank; ++d) {
          weight *= taps[d].weight[pick[d]];
          offset += taps[d].index[pick[d]] * in_stride[d];
        }
        acc += weight * x[offset];
        int d = rank - 1;
        while (d >= 0 && ++pick[d] == taps[d].count) pick[d--] = 0;
        if (d < 0) break;
      }
      y[o] = static_cast<float>(acc);
    }
    for (int d = rank - 1; d >= 0 && ++coord[d] == p.out_dims[d]; --d) coord[d] = 0;
  }
}

}  // namespace jetplan::kernels::cpu
