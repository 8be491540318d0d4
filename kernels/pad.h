// The Pad family: parameters and CPU twin (kernels/cpu/pad.cc); CUDA kernel in kernels/cuda/pad.cu.
// Element counts, dims, strides and offsets are in elements; coordinates are row-major with the
// last dim fastest; only the first `rank` entries of a per-dim array are read (rank 0 is one
// element).
#pragma once

#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

enum class PadMode : uint8_t {
  kConstant = 0,  // the value
  kReflect = 1,   // mirror without repeating the edge: 3 2 | 1 2 3 4 | 3 2
  kEdge = 2,      // repeat the edge: 1 1 | 1 2 3 4 | 4 4
  kWrap = 3,      // periodic: 3 4 | 1 2 3 4 | 1 2
};
constexpr int kPadModeCount = 4;

// ONNX Pad. x dense [x_dims], y dense [out_dims]; along dim d, pads_begin[d] elements come before
// x and out_dims[d] - x_dims[d] - pads_begin[d] after (the end pad is implied, as in ConvParams).
// Either pad may be negative: a negative pad crops x first, and the non-constant modes then
// extend the cropped tensor (as onnxruntime does). Reflect and wrap are periodic, so pads longer
// than the dim repeat the pattern (as numpy.pad does); reflect of a single element repeats it.
// A dim cropped to nothing cannot be extended by edge, reflect or wrap: plan load refuses that
// (the kernel would write the constant value there).
// `value` holds one element of the tensor's dtype in its first elem_bytes bytes, little endian
// as the tensor stores it, so the kernel stays dtype-agnostic.
struct PadParams {
  PadMode mode = PadMode::kConstant;
  int32_t rank = 0;
  int64_t elem_bytes = 4;
  int64_t x_dims[kMaxRank] = {};
  int64_t out_dims[kMaxRank] = {};
  int64_t pads_begin[kMaxRank] = {};
  unsigned char value[8] = {};
};

// a mod m in [0, m) for m > 0.
JP_HD_INLINE int64_t pad_positive_mod(int64_t a, int64_t m) {
  const int64_t r = a % m;
  return r < 0 ? r + m : r;
}

// The coordinate in x that output coordinate `o` of dim d reads, or -1 for the constant value.
// Negative pads crop first: x is reduced to the `kept` elements starting at `first`, and
// `o - before` is the coordinate in that cropped range (before = the positive begin pad).
JP_HD_INLINE int64_t pad_source_coord(const PadParams& p, int32_t d, int64_t o) {
  const int64_t begin = p.pads_begin[d];
  const int64_t end = p.out_dims[d] - p.x_dims[d] - begin;
  const int64_t first = begin < 0 ? -begin : 0;
  const int64_t kept = p.x_dims[d] - first - (end < 0 ? -end : 0);
  const int64_t j = o - (begin > 0 ? begin : 0);
  if (j >= 0 && j < kept) return first + j;
  if (kept <= 0) return -1;  // nothing to extend from; plan load refuses this outside kConstant
  switch (p.mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return first + (j < 0 ? 0 : kept - 1);
    case PadMode::kWrap:
      return first + pad_positive_mod(j, kept);
    case PadMode::kReflect: {
      if (kept == 1) return first;
      // Mirroring at both ends without repeating the edge is periodic with period 2 (kept - 1):
      // 0 1 2 .. kept-1 kept-2 .. 1 | 0 1 ...
      const int64_t period = 2 * (kept - 1);
      const int64_t r = pad_positive_mod(j, period);
      return first + (r < kept ? r : period - r);
    }
  }
  return -1;  // unreachable for a validated plan
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void pad(const PadParams& p, const void* x, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/pad.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// A byte mover: any dtype.
#define JP_CUDA_VARIANTS_pad(X, F) \
  X(F, jp_pad, kAny, 0)
