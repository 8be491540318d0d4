// The Pool family (MaxPool, AveragePool, global pools): parameters and CPU twin
// (kernels/cpu/pool.cc); CUDA kernels in kernels/cuda/pool.cu.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

enum class PoolKind : uint8_t { kMax = 0, kAverage = 1 };

// x [batch, channels, *in_size], y [batch, channels, *out_size]; channels_last: x [batch,
// *in_size, channels], y [batch, *out_size, channels]. Window positions in the padding
// are skipped by max; average divides by the whole window when count_include_pad (padding that
// lies past the end of the input beyond pad_end never counts), else by the positions inside x.
// A window wholly in the padding gives 0 (plan load refuses pads that allow one).
struct PoolParams {
  PoolKind kind = PoolKind::kMax;
  int32_t spatial_rank = 2;
  int64_t batch = 1;
  int64_t channels = 0;
  JP_SPATIAL_WINDOW_FIELDS;  // in_size, out_size, kernel, stride, dilation, pad_begin
  int64_t pad_end[kMaxSpatial] = {0, 0, 0};
  bool count_include_pad = false;
  bool channels_last = false;
  // Max pools' indices: the offset within the (n, c) plane is column-major (the last spatial dim
  // slowest, ONNX MaxPool storage_order 1) rather than row-major.
  bool indices_column_major = false;
  // The step has the indices output (Max, NCHW): the CUDA kernel writes it (output 1, Int64),
  // as the twin's pool() does given an indices pointer.
  bool write_indices = false;
};

// A pool's window as 3-D, for the CPU twin and the CUDA kernels: 1-D and 2-D pools get leading
// dims of size 1, kernel 1, stride 1, dilation 1 and no padding, which changes no row-major
// offset.
struct PoolGeometry {
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad_begin[3], pad_end[3];
};

JP_HD inline PoolGeometry pool_geometry_3d(const PoolParams& p) {
  PoolGeometry g;
  const int lead = 3 - p.spatial_rank;
  for (int d = 0; d < 3; ++d) {
    const int s = d - lead;  // index into the params, negative for an added dim
    const bool real = s >= 0 && s < kMaxSpatial;
    g.in[d] = real ? p.in_size[s] : 1;
    g.out[d] = real ? p.out_size[s] : 1;
    g.kernel[d] = real ? p.kernel[s] : 1;
    g.stride[d] = real ? p.stride[s] : 1;
    g.dilation[d] = real ? p.dilation[s] : 1;
    g.pad_begin[d] = real ? p.pad_begin[s] : 0;
    g.pad_end[d] = real ? p.pad_end[s] : 0;
  }
  return g;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// indices: see kernels/cpu/pool.cc (Max, NCHW only; may be null).
void pool(const PoolParams& p, const float* x, float* y, int64_t* indices = nullptr);
// Max pooling of Int8 (an INT8 plan's max pools between INT8 convs): max commutes with the
// monotonic quantization, so y keeps x's scale and equals quantize(max pool of the real values)
// exactly. The window rules are pool()'s (a window with no input gives 0).
void max_pool_int8(const PoolParams& p, const int8_t* x, int8_t* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/pool.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// jp_pool_nhwc8_f16: NHWC, channels % 8 == 0 (16-byte vectors). The global average rows:
// 32 channels x 8 partial sums per block, static shared memory, gridDim.y slices of the spatial
// positions whose sums meet in the workspace (counted arrivals: zero_workspace).
// jp_pool_max_i8: Max of Int8, 16 channels a thread where NHWC channels % 16 == 0, else one
// element.
#define JP_CUDA_VARIANTS_pool(X, F) \
  X(F, jp_pool_f16, kF16, 0) \
  X(F, jp_pool_f32, kF32, 0) \
  X(F, jp_pool_nhwc8_f16, kF16, 0) \
  X(F, jp_pool_global_avg_f16, kF16, 256, kAny, 0, true) \
  X(F, jp_pool_global_avg_f32, kF32, 256, kAny, 0, true) \
  X(F, jp_pool_max_i8, kI8, 0)
