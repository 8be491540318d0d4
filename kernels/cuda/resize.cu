// Resize on the GPU, FP16 or FP32 storage, any rank (NHWC and NCHW alike: a dim that is not
// resized has scale 1): nearest (every rounding), linear and cubic, every ONNX coordinate
// transform. A port of the twin, kernels/cpu/resize.cc: source coordinates in double (nearest
// picks at exact halves depend on it), weights and the sum in FP32.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/params_nn.h"

namespace jetplan::kernels::cuda {
namespace {

constexpr int kMaxTaps = 4;

struct Taps {
  int64_t index[kMaxTaps];
  float weight[kMaxTaps];
  int count;
};

__device__ double source_coordinate(const ResizeParams& p, int d, int64_t o) {
  const double x = static_cast<double>(o);
  const double in = static_cast<double>(p.in_dims[d]);
  const double len = p.resized_length[d];
  const double s = p.scale[d];
  switch (p.coord) {
    case ResizeCoord::kHalfPixel: return (x + 0.5) / s - 0.5;
    case ResizeCoord::kPytorchHalfPixel: return len > 1 ? (x + 0.5) / s - 0.5 : 0.0;
    case ResizeCoord::kAlignCorners: return len > 1 ? x * (in - 1) / (len - 1) : 0.0;
    case ResizeCoord::kAsymmetric: return x / s;
    case ResizeCoord::kTfCropAndResize: {
      const double start = p.roi_start[d], end = p.roi_end[d];
      const double offset = start * (in - 1);
      if (len > 1) return x * (end - start) * (in - 1) / (len - 1) + offset;
      return (end - start) * (in - 1) / 2 + offset;
    }
    case ResizeCoord::kTfHalfPixelForNn: return (x + 0.5) / s;
  }
  return 0.0;
}

__device__ double cubic_weight(double t, double a) {
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
}

__device__ void add_tap(Taps* t, int64_t index, double weight, int64_t size) {
  if (weight == 0.0) return;
  t->index[t->count] = index < 0 ? 0 : (index >= size ? size - 1 : index);
  t->weight[t->count] = static_cast<float>(weight);
  ++t->count;
}

__device__ bool dim_taps(const ResizeParams& p, int d, int64_t o, Taps* t) {
  const int64_t size = p.in_dims[d];
  double c = source_coordinate(p, d, o);
  t->count = 0;
  if (p.coord == ResizeCoord::kTfCropAndResize && (c < 0 || c > static_cast<double>(size - 1)))
    return false;
  c = fmin(fmax(c, -4.0), static_cast<double>(size) + 4.0);
  const double base = floor(c);
  const double r = c - base;
  const int64_t i = static_cast<int64_t>(base);
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

// One output element per thread: the taps of every dim, then the sum over their product, dim 0
// outermost (the twin's order). Dims with a single weight-1 tap (not resized) cost nothing.
template <typename T>
__device__ void resize(const StepPointers& ptrs, const ResizeParams& p) {
  if (p.rank < 1 || p.rank > kMaxRank) return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  const int rank = p.rank;
  int64_t in_stride[kMaxRank];
  int64_t stride = 1, out_count = 1;
  for (int d = rank; d-- > 0;) {
    in_stride[d] = stride;
    stride *= p.in_dims[d];
    out_count *= p.out_dims[d];
  }
  for (int64_t o = global_thread(); o < out_count; o += global_threads()) {
    Taps taps[kMaxRank];
    bool inside = true;
    int64_t rest = o;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t c = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      inside = dim_taps(p, d, c, &taps[d]) && inside;
      if (taps[d].count == 0) inside = false;  // no tap: only from absurd weights
    }
    if (!inside) {
      store_float(y, o, p.extrapolation_value);
      continue;
    }
    float acc = 0.f;
    int pick[kMaxRank] = {};
    for (;;) {
      float weight = 1.f;
      int64_t offset = 0;
      for (int d = 0; d < rank; ++d) {
        weight *= taps[d].weight[pick[d]];
        offset += taps[d].index[pick[d]] * in_stride[d];
      }
      acc += weight * load_float(x, offset);
      int d = rank - 1;
      while (d >= 0 && ++pick[d] == taps[d].count) pick[d--] = 0;
      if (d < 0) break;
    }
    store_float(y, o, acc);
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::ResizeParams;
using jetplan::kernels::cuda::StepPointers;

extern "C" __global__ void jp_resize_f16(StepPointers ptrs, const ResizeParams p) {
  jetplan::kernels::cuda::resize<__half>(ptrs, p);
}
extern "C" __global__ void jp_resize_f32(StepPointers ptrs, const ResizeParams p) {
  jetplan::kernels::cuda::resize<float>(ptrs, p);
}
