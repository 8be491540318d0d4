#include <algorithm>

#include "kernels/conv_transpose.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {
namespace {

// channels_last (GPU plans, the upsampling form only): the implicit GEMM [N*H*W, Cin] x [Cin,
// KH*KW*Cout] on the tensor cores, FP16. The largest tile whose CTAs still fill the SMs (128x128,
// 64x64, else 32x64), never split over K; any Cin takes the 64x64 tile that loads element-wise.
// Not yet tuned on a GPU: the rule is Conv's occupancy reasoning (conv_select.cc) without its
// split-K.
bool select_upsample_igemm(const StepDesc& step, const ConvTransposeParams& p,
                           const TargetInfo& target, LaunchChoice* out, std::string* why) {
  if (step.dtype != DType::kFloat16) {
    *why = "the CUDA channels_last ConvTranspose kernels take Float16 only";
    return false;
  }
  if (!conv_transpose_upsamples(p)) {
    *why = "the CUDA channels_last ConvTranspose kernels take the upsampling form only (2-D, "
           "kernel == stride, no pads, dilation 1, groups 1)";
    return false;
  }
  const uint64_t m = uint64_t(p.batch) * uint64_t(p.in_size[0]) * uint64_t(p.in_size[1]);
  const uint64_t n = uint64_t(p.kernel[0]) * uint64_t(p.kernel[1]) * uint64_t(p.out_channels);
  const uint64_t k = uint64_t(p.in_channels);
  if (m >= (1ull << 31) || n >= (1ull << 31) || k >= (1ull << 31) - 32) {
    *why = "the ConvTranspose is too large for the GEMM kernels' 32-bit sizes";
    return false;
  }
  struct Tile {
    VariantId id;
    uint64_t bm, bn;
  };
  constexpr Tile k128{VariantId::jp_conv_transpose_upsample_igemm_128x128_f16, 128, 128};
  constexpr Tile k64{VariantId::jp_conv_transpose_upsample_igemm_64x64_f16, 64, 64};
  constexpr Tile k32{VariantId::jp_conv_transpose_upsample_igemm_32x64_f16, 32, 64};
  constexpr Tile kAnyC{VariantId::jp_conv_transpose_upsample_igemm_64x64_anyc_f16, 64, 64};
  auto tiles = [m, n](const Tile& t) {
    return uint64_t(ceil_div_u32(m, t.bm)) * ceil_div_u32(n, t.bn);
  };
  const uint64_t sms = std::max<uint32_t>(1, target.sm_count);
  const bool big_fits = target.max_shared_per_block == 0 ||
                        kernel_variant(k128.id).shared_bytes <= target.max_shared_per_block;
  const Tile& t = k % 8 != 0                          ? kAnyC
                  : big_fits && tiles(k128) >= sms    ? k128
                  : tiles(k64) >= sms                 ? k64
                                                      : k32;
  out->variant = &kernel_variant(t.id);
  if (target.max_shared_per_block != 0 &&
      out->variant->shared_bytes > target.max_shared_per_block) {
    *why = "the target's shared memory per block is too small for the ConvTranspose tile";
    return false;
  }
  out->grid[0] = ceil_div_u32(m, t.bm);
  out->grid[1] = ceil_div_u32(n, t.bn);
  out->grid[2] = 1;
  out->block[0] = out->variant->block_threads;
  out->block[1] = out->block[2] = 1;
  out->shared_bytes = out->variant->shared_bytes;
  return true;
}

}  // namespace

// NCHW: 1-3 spatial dims, any groups, Float16 storage (FP32 accumulation) or Float32; the
// upsampling form (kernel == stride, no pads, groups 1: the U-Net's 2x2 stride 2) a thread per 8
// output channels x 4 input columns, the rest a thread per output element. channels_last (GPU
// plans' upsampling steps): select_upsample_igemm.
bool select_conv_transpose(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                           std::string* why) {
  const auto* p = static_cast<const ConvTransposeParams*>(step.params);
  if (p->channels_last) return select_upsample_igemm(step, *p, target, out, why);
  bool f16 = false;
  if (!float_storage(step, "ConvTranspose", &f16, why)) return false;
  if (p->spatial_rank < 1 || p->spatial_rank > 3 || p->groups < 1) {
    *why = "the CUDA ConvTranspose kernels take 1 to 3 spatial dims";
    return false;
  }
  if (conv_transpose_upsamples(*p)) {
    const uint64_t work =
        static_cast<uint64_t>(p->batch) * ((static_cast<uint64_t>(p->out_channels) + 7) / 8) *
        static_cast<uint64_t>(p->out_size[0]) * static_cast<uint64_t>(p->stride[1]) *
        ((static_cast<uint64_t>(p->in_size[1]) + 3) / 4);
    return launch_float_pair(f16, VariantId::jp_conv_transpose_upsample_f16,
                             VariantId::jp_conv_transpose_upsample_f32, work, 128,
                             target.sm_count * 32, out);
  }
  uint64_t work = static_cast<uint64_t>(p->batch) * static_cast<uint64_t>(p->out_channels);
  for (int32_t d = 0; d < p->spatial_rank; ++d) work *= static_cast<uint64_t>(p->out_size[d]);
  return launch_float_pair(f16, VariantId::jp_conv_transpose_f16, VariantId::jp_conv_transpose_f32,
                           work, 256, target.sm_count * 16, out);
}

}  // namespace jetplan::kernels::cuda
