// The Pool family (MaxPool, AveragePool, global pools): parameters and CPU twin
// (kernels/cpu/pool.cc); CUDA kernels in kernels/cuda/pool.cu.
#pragma once

#include <cstdint>

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
  int64_t in_size[kMaxSpatial] = {1, 1, 1};
  int64_t out_size[kMaxSpatial] = {1, 1, 1};
  int64_t kernel[kMaxSpatial] = {1, 1, 1};
  int64_t stride[kMaxSpatial] = {1, 1, 1};
  int64_t dilation[kMaxSpatial] = {1, 1, 1};
  int64_t pad_begin[kMaxSpatial] = {0, 0, 0};
  int64_t pad_end[kMaxSpatial] = {0, 0, 0};
  bool count_include_pad = false;
  bool channels_last = false;
  // Max pools' indices (CPU): the offset within the (n, c) plane is column-major (the last
  // spatial dim slowest, ONNX MaxPool storage_order 1) rather than row-major.
  bool indices_column_major = false;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// indices: see kernels/cpu/pool.cc (Max, NCHW only; may be null).
void pool(const PoolParams& p, const float* x, float* y, int64_t* indices = nullptr);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/pool.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// jp_pool_nhwc8_f16: NHWC, channels % 8 == 0 (16-byte vectors). The global average rows:
// 32 channels x 8 partial sums per block, static shared memory.
#define JP_CUDA_VARIANTS_pool(X, F) \
  X(F, jp_pool_f16, kF16, 0, 0, false, kAny, false) \
  X(F, jp_pool_f32, kF32, 0, 0, false, kAny, false) \
  X(F, jp_pool_nhwc8_f16, kF16, 0, 0, false, kAny, false) \
  X(F, jp_pool_global_avg_f16, kF16, 256, 0, false, kAny, false) \
  X(F, jp_pool_global_avg_f32, kF32, 256, 0, false, kAny, false)
