// Selection for the Attention family (kernels/cuda/attention.cu): FP16 storage, head dims 32, 64,
// 80, 96 and 128. Query tiles of 64 rows (4 warps), or 128 (8 warps) where those still give
// every SM four CTAs. On the H200 the 64-row tile was as fast or faster at every shape of
// GpuAttentionBench: its CTAs fit 3 to an SM where a 128-row CTA fits 1, so ViT-B at batch 8
// (192 CTAs of 128 rows, one wave and a half) took 29.1 us against 18.5 us. Launches of fewer
// 64-row CTAs than SMs (ViT-B and BERT at batch 1) take the key-split _k2 kernels. Grid (query
// tiles, heads, batches), heads and batches capped at 65535 (the kernel loops over the rest).
#include <algorithm>
#include <string>

#include "kernels/attention.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {
namespace {

constexpr uint32_t kMaxGridYZ = 65535;

// The variant of (head dim, form, Int8 output); form 0: 64-row tiles, 1: 128-row tiles,
// 2: 64-row tiles with the keys split over two warps (_k2). False for a head dim without one.
bool attention_variant(int64_t head_dim, int form, bool q8, VariantId* out) {
  using V = VariantId;
  static constexpr V kVariants[2][3][5] = {  // [q8][form][head dim]
      {{V::jp_attention_f16_d32_m64, V::jp_attention_f16_d64_m64, V::jp_attention_f16_d80_m64,
        V::jp_attention_f16_d96_m64, V::jp_attention_f16_d128_m64},
       {V::jp_attention_f16_d32_m128, V::jp_attention_f16_d64_m128, V::jp_attention_f16_d80_m128,
        V::jp_attention_f16_d96_m128, V::jp_attention_f16_d128_m128},
       {V::jp_attention_f16_d32_m64_k2, V::jp_attention_f16_d64_m64_k2,
        V::jp_attention_f16_d80_m64_k2, V::jp_attention_f16_d96_m64_k2,
        V::jp_attention_f16_d128_m64_k2}},
      {{V::jp_attention_q8_f16_d32_m64, V::jp_attention_q8_f16_d64_m64,
        V::jp_attention_q8_f16_d80_m64, V::jp_attention_q8_f16_d96_m64,
        V::jp_attention_q8_f16_d128_m64},
       {V::jp_attention_q8_f16_d32_m128, V::jp_attention_q8_f16_d64_m128,
        V::jp_attention_q8_f16_d80_m128, V::jp_attention_q8_f16_d96_m128,
        V::jp_attention_q8_f16_d128_m128},
       {V::jp_attention_q8_f16_d32_m64_k2, V::jp_attention_q8_f16_d64_m64_k2,
        V::jp_attention_q8_f16_d80_m64_k2, V::jp_attention_q8_f16_d96_m64_k2,
        V::jp_attention_q8_f16_d128_m64_k2}}};
  static_assert(sizeof kVariants[0][0] / sizeof kVariants[0][0][0] ==
                sizeof kAttentionHeadDims / sizeof kAttentionHeadDims[0], "a variant per head dim");
  for (size_t i = 0; i < sizeof kAttentionHeadDims / sizeof kAttentionHeadDims[0]; ++i)
    if (kAttentionHeadDims[i] == head_dim) {
      *out = kVariants[q8][form][i];
      return true;
    }
  return false;
}

}  // namespace

bool select_attention(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                      std::string* why) {
  if (step.dtype != DType::kFloat16) {
    *why = "the CUDA Attention kernels take Float16 storage (FP32 accumulation) only";
    return false;
  }
  const auto* p = static_cast<const AttentionParams*>(step.params);
  if (p == nullptr || p->batch < 0 || p->heads < 0 || p->seq_q < 0 || p->seq_kv < 0) {
    *why = "Attention with negative extents";
    return false;
  }
  const uint64_t tiles128 = ceil_div_u32(p->seq_q, 128) * static_cast<uint64_t>(p->heads) *
                            static_cast<uint64_t>(p->batch);
  const uint64_t tiles64 = ceil_div_u32(p->seq_q, 64) * static_cast<uint64_t>(p->heads) *
                           static_cast<uint64_t>(p->batch);
  // 128-row tiles where they still give every SM four CTAs; 64-row tiles with the keys split
  // over two warps where 64-row tiles would leave SMs idle (one CTA an SM walks its keys
  // latency-bound); else 64-row tiles.
  int form = target.sm_count > 0 && tiles128 >= 4ull * target.sm_count ? 1
             : target.sm_count > 0 && tiles64 < target.sm_count   ? 2
                                                                    : 0;
  // Int8 O (an INT8 plan's attention in front of an INT8 output projection): the _q8 forms.
  const bool q8 = p->inv_scale_input > 0;
  VariantId id;
  if (!attention_variant(p->head_dim, form, q8, &id)) {
    *why = "no CUDA Attention kernel for head dim " + std::to_string(p->head_dim) +
           " (32, 64, 80, 96 and 128 have one)";
    return false;
  }
  if (form != 0 && target.max_shared_per_block > 0 &&
      kernel_variant(id).shared_bytes > target.max_shared_per_block) {
    form = 0;
    attention_variant(p->head_dim, form, q8, &id);
  }
  out->variant = &kernel_variant(id);
  if (target.max_shared_per_block > 0 && out->variant->shared_bytes > target.max_shared_per_block) {
    *why = "the Attention kernel for head dim " + std::to_string(p->head_dim) + " needs " +
           std::to_string(out->variant->shared_bytes) + " bytes of shared memory, the target has " +
           std::to_string(target.max_shared_per_block);
    return false;
  }
  const int64_t tile = form == 1 ? 128 : 64;
  out->grid[0] = std::max<uint32_t>(1, ceil_div_u32(p->seq_q, tile));
  out->grid[1] = std::max<uint32_t>(1, std::min<uint32_t>(ceil_div_u32(p->heads, 1), kMaxGridYZ));
  out->grid[2] = std::max<uint32_t>(1, std::min<uint32_t>(ceil_div_u32(p->batch, 1), kMaxGridYZ));
  out->block[0] = form == 0 ? 128 : 256;
  out->block[1] = out->block[2] = 1;
  out->shared_bytes = out->variant->shared_bytes;
  return true;
}

}  // namespace jetplan::kernels::cuda
