// The fixed capacities of the parameter structs: they hold every shape inline (no pointers), so
// the largest rank, spatial rank and input count are compile-time constants.
#pragma once

namespace jetplan::kernels {

constexpr int kMaxRank = 8;           // dims of a tensor (per-dim arrays of the params)
constexpr int kMaxSpatial = 3;        // spatial dims of a Conv, Pool or ConvTranspose window
constexpr int kMaxConcatInputs = 64;  // inputs of one Concat, the most any step takes

}  // namespace jetplan::kernels

// The window fields that ConvParams, ConvTransposeParams and PoolParams share (conv_geometry_3d and
// pool_window read them), declared in place so that each struct keeps its own field order:
// per spatial dim (the first spatial_rank used), the input and output sizes, the kernel, stride
// and dilation, and the leading padding.
#define JP_SPATIAL_WINDOW_FIELDS                  \
  int64_t in_size[kMaxSpatial] = {1, 1, 1};       \
  int64_t out_size[kMaxSpatial] = {1, 1, 1};      \
  int64_t kernel[kMaxSpatial] = {1, 1, 1};        \
  int64_t stride[kMaxSpatial] = {1, 1, 1};        \
  int64_t dilation[kMaxSpatial] = {1, 1, 1};      \
  int64_t pad_begin[kMaxSpatial] = {0, 0, 0}
