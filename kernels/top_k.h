// The TopK family: parameters and CPU twin (kernels/cpu/top_k.cc); CUDA kernels in
// kernels/cuda/top_k.cu.
#pragma once

#include <cstdint>

namespace jetplan::kernels {

// x [outer, axis, inner] -> values float [outer, k, inner] and indices int64 [outer, k, inner]:
// the k largest (or smallest) elements along the axis, in order, ties by lower index first. NaN
// ranks above every number (first when largest, last when smallest), as numpy sorts it. The
// output is always sorted, which ONNX's sorted=0 (any order) also allows. 0 <= k <= axis.
struct TopKParams {
  int64_t outer = 1;
  int64_t axis = 1;
  int64_t inner = 1;
  int64_t k = 1;
  bool largest = true;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// workspace: topk_workspace_bytes(p) bytes, 8-byte aligned, caller-owned, garbage before and
// after the call. values float, indices int64, both [outer, k, inner].
int64_t topk_workspace_bytes(const TopKParams& p);
void topk(const TopKParams& p, const float* x, void* workspace, float* values, int64_t* indices);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/top_k.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h): values of x's dtype (Float16 or
// Float32) and Int64 indices; a block of 256 threads per row.
#define JP_CUDA_VARIANTS_top_k(X, F) \
  X(F, jp_top_k_f16, kF16, 256) \
  X(F, jp_top_k_f32, kF32, 256)
