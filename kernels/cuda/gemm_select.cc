// Selection for the Gemm family (kernels/cuda/gemm.cu): FP16 only.
//   M <= 8: the gemv variants (B [N, K]: one warp per column; B [K, N]: 64 columns per CTA);
//       a 64-row tensor-core tile would idle 7/8 of its rows and give ceil(N / 64) CTAs.
//   otherwise: the mma variant of the step's (trans_a, trans_b). It takes its 16-byte cp.async
//       path by itself when the contiguous dims and batch strides are multiples of 8 (and the
//       pointers aligned, which the arena guarantees), else it fills tiles element by element.
// Batches go to grid.z (capped at 65535; the kernels loop over the rest).
#include <algorithm>
#include <string>

#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {
namespace {

constexpr int64_t kTile = 64;      // gemm_mma.cuh kBM = kBN
constexpr int64_t kGemvMaxM = 8;   // gemm.cu
constexpr uint32_t kMaxGridYZ = 65535;

}  // namespace

bool select_gemm(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                 std::string* why) {
  (void)target;  // one tile shape for every target so far
  if (step.dtype != DType::kFloat16) {
    *why = "the CUDA Gemm kernels take Float16 storage (FP32 accumulation) only";
    return false;
  }
  const auto* p = static_cast<const GemmParams*>(step.params);
  if (p == nullptr || p->batch < 0 || p->M < 0 || p->N < 0 || p->K < 0) {
    *why = "Gemm with negative extents";
    return false;
  }
  const uint32_t batches = std::max<uint32_t>(1, std::min<uint32_t>(ceil_div_u32(p->batch, 1),
                                                                     kMaxGridYZ));
  out->grid[2] = batches;
  out->block[1] = out->block[2] = 1;
  if (p->M <= kGemvMaxM) {
    if (p->trans_b) {
      out->variant = find_kernel_variant("jp_gemm_f16_gemv_bt");
      out->grid[0] = std::max<uint32_t>(1, ceil_div_u32(p->N, 8));
    } else {
      out->variant = find_kernel_variant("jp_gemm_f16_gemv_bn");
      out->grid[0] = std::max<uint32_t>(1, ceil_div_u32(p->N, 64));
    }
    out->grid[1] = 1;
    out->block[0] = 256;
    return true;
  }
  const uint32_t row_tiles = ceil_div_u32(p->M, kTile);
  if (row_tiles > kMaxGridYZ) {
    *why = "Gemm with more than " + std::to_string(kMaxGridYZ * kTile) + " rows";
    return false;
  }
  static const char* const kMma[2][2] = {{"jp_gemm_f16_mma_nn", "jp_gemm_f16_mma_nt"},
                                         {"jp_gemm_f16_mma_tn", "jp_gemm_f16_mma_tt"}};
  out->variant = find_kernel_variant(kMma[p->trans_a ? 1 : 0][p->trans_b ? 1 : 0]);
  out->grid[0] = std::max<uint32_t>(1, ceil_div_u32(p->N, kTile));
  out->grid[1] = row_tiles;
  out->block[0] = 128;
  return true;
}

}  // namespace jetplan::kernels::cuda
