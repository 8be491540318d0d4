// Conv selection: channels_last FP16 steps only (GPU plans are NHWC FP16). 2-D groups-1 convs
// go to an implicit-GEMM tile (the largest whose tiles still fill the SMs; serial split-K when
// even the smallest cannot), depthwise convs to the depthwise kernel, the rest to the direct one.
#include <algorithm>

#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {
namespace {

struct Tile {
  const char* name;
  uint32_t bm, bn;
};
constexpr Tile kTile128{"jp_conv_igemm_128x128_f16", 128, 128};
constexpr Tile kTile64{"jp_conv_igemm_64x64_f16", 64, 64};
constexpr Tile kTile32{"jp_conv_igemm_32x64_f16", 32, 64};
constexpr Tile kTileAnyC{"jp_conv_igemm_64x64_anyc_f16", 64, 64};
constexpr uint32_t kBK = 32;

uint64_t tiles_of(const Tile& t, uint64_t m, uint64_t n) {
  return uint64_t(ceil_div_u32(m, t.bm)) * ceil_div_u32(n, t.bn);
}

// The igemm launch for `t`; split-K when its tiles leave SMs idle, keeping >= 4 K tiles a slice.
bool launch_igemm(const Tile& t, uint64_t m, uint64_t n, uint64_t k, const TargetInfo& target,
                  LaunchChoice* out, std::string* why) {
  out->variant = find_kernel_variant(t.name);
  if (out->variant == nullptr) {
    *why = "internal: conv variant missing from the table";
    return false;
  }
  if (out->variant->shared_bytes > target.max_shared_per_block && target.max_shared_per_block) {
    *why = "the target's shared memory per block is too small for the conv tile";
    return false;
  }
  const uint64_t tiles = tiles_of(t, m, n);
  const uint32_t kt = ceil_div_u32(k, kBK);
  uint32_t split = 1;
  const uint32_t sms = std::max<uint32_t>(1, target.sm_count);
  if (tiles < sms) {
    split = std::min<uint32_t>(ceil_div_u32(sms, tiles), std::max<uint32_t>(1, kt / 4));
    split = std::min<uint32_t>(split, 32);
    const uint32_t per = ceil_div_u32(kt, split);
    split = ceil_div_u32(kt, per);  // no empty slices
  }
  out->grid[0] = ceil_div_u32(m, t.bm);
  out->grid[1] = ceil_div_u32(n, t.bn);
  out->grid[2] = split;
  out->block[0] = out->variant->block_threads;
  out->block[1] = out->block[2] = 1;
  out->shared_bytes = out->variant->shared_bytes;
  out->split_k = split;
  out->workspace_bytes = split > 1 ? tiles * (uint64_t(split) * t.bm * t.bn * 4 + 4) : 0;
  return true;
}

}  // namespace

bool select_conv(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                 std::string* why) {
  const auto& p = *static_cast<const ConvParams*>(step.params);
  if (step.dtype != DType::kFloat16) {
    *why = "the CUDA conv kernels take Float16 only";
    return false;
  }
  if (!p.channels_last) {
    *why = "the CUDA conv kernels take channels_last (NHWC) tensors only";
    return false;
  }
  uint64_t out_vol = 1;
  for (int d = 0; d < p.spatial_rank; ++d) out_vol *= uint64_t(p.out_size[d]);
  const uint64_t m = uint64_t(p.batch) * out_vol;
  const uint64_t n = uint64_t(p.out_channels);
  uint64_t kvol = 1;
  for (int d = 0; d < p.spatial_rank; ++d) kvol *= uint64_t(p.kernel[d]);
  const uint64_t k = kvol * uint64_t(p.in_channels / std::max<int64_t>(1, p.groups));
  // The igemm kernels index with 32-bit ints.
  const bool fits32 = m * n < (1ull << 31) && m * k < (1ull << 31) &&
                      uint64_t(p.batch) * uint64_t(p.in_channels) * p.in_size[0] *
                              (p.spatial_rank == 2 ? p.in_size[1] : 1) <
                          (1ull << 31);

  if (p.groups == 1 && p.spatial_rank == 2 && fits32) {
    if (p.in_channels % 8 != 0) return launch_igemm(kTileAnyC, m, n, k, target, out, why);
    const uint32_t sms = std::max<uint32_t>(1, target.sm_count);
    if (tiles_of(kTile128, m, n) >= sms) return launch_igemm(kTile128, m, n, k, target, out, why);
    if (tiles_of(kTile64, m, n) >= sms || m > 32)
      return launch_igemm(kTile64, m, n, k, target, out, why);
    return launch_igemm(kTile32, m, n, k, target, out, why);
  }
  const uint64_t total = m * n;
  if (p.spatial_rank == 2 && p.groups == p.in_channels && p.groups == p.out_channels) {
    out->variant = find_kernel_variant("jp_conv_depthwise_f16");
  } else {
    out->variant = find_kernel_variant("jp_conv_direct_f16");
  }
  launch_1d(total, 256, std::max<uint32_t>(1, target.sm_count) * 16, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
