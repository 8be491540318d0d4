#include <algorithm>

#include "kernels/cuda/select.h"
#include "kernels/pool.h"

namespace jetplan::kernels::cuda {

namespace {

// Max of Int8 (jp_pool_max_i8): 16 channels a thread where NHWC channels allow.
bool select_max_pool_i8(const PoolParams& p, const TargetInfo& target, LaunchChoice* out,
                        std::string* why) {
  if (p.kind != PoolKind::kMax || p.spatial_rank < 1 || p.spatial_rank > kMaxSpatial) {
    *why = "the CUDA Int8 Pool kernel takes Max pools of 1 to 3 spatial dims";
    return false;
  }
  uint64_t in_plane = 1, out_plane = 1;
  for (int d = 0; d < p.spatial_rank; ++d) {
    in_plane *= static_cast<uint64_t>(p.in_size[d]);
    out_plane *= static_cast<uint64_t>(p.out_size[d]);
  }
  const uint64_t plane = static_cast<uint64_t>(p.batch) * static_cast<uint64_t>(p.channels);
  if (plane * std::max(in_plane, out_plane) >= (uint64_t{1} << 30)) {
    *why = "an Int8 Pool of 2^30 elements or more (the CUDA kernel indexes in 32 bits)";
    return false;
  }
  out->variant = &kernel_variant(VariantId::jp_pool_max_i8);
  const uint64_t per_thread = p.channels_last && p.channels % 16 == 0 ? 16 : 1;
  launch_1d(plane * out_plane / per_thread, 256, target.sm_count * 8, out);
  return true;
}

}  // namespace

bool select_pool(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                 std::string* why) {
  if (step.dtype == DType::kInt8)
    return select_max_pool_i8(*static_cast<const PoolParams*>(step.params), target, out, why);
  bool f16 = false;
  if (!float_storage(step, "Pool", &f16, why)) return false;
  const auto* p = static_cast<const PoolParams*>(step.params);
  if (p->spatial_rank < 1 || p->spatial_rank > kMaxSpatial) {
    *why = "the CUDA Pool kernels take 1 to 3 spatial dims";
    return false;
  }
  bool global = p->kind == PoolKind::kAverage && p->channels_last;
  uint64_t out_plane = 1;
  for (int d = 0; d < p->spatial_rank; ++d) {
    global = global && p->out_size[d] == 1 && p->kernel[d] == p->in_size[d] &&
             p->pad_begin[d] == 0 && p->pad_end[d] == 0 && p->dilation[d] == 1;
    out_plane *= static_cast<uint64_t>(p->out_size[d]);
  }
  if (global) {
    const uint64_t tiles = static_cast<uint64_t>(p->batch) * ceil_div_u32(p->channels, 32);
    launch_float_pair(f16, VariantId::jp_pool_global_avg_f16, VariantId::jp_pool_global_avg_f32,
                      tiles * 256, 256, target.sm_count * 16, out);
    out->block[0] = 32;
    out->block[1] = 8;
    // Few channel tiles (small batches): the spatial positions in slices of at least 256, so
    // that about two blocks an SM run (at most 64 slices); the last block of a tile adds them.
    uint64_t spatial = 1;
    for (int d = 0; d < p->spatial_rank; ++d) spatial *= static_cast<uint64_t>(p->in_size[d]);
    const uint64_t want = 2 * std::max<uint64_t>(1, target.sm_count);
    uint64_t slices = tiles >= want ? 1 : (want + tiles - 1) / tiles;
    slices = std::max<uint64_t>(1, std::min<uint64_t>({slices, spatial / 256, 64}));
    if (slices > 1) {
      out->grid[0] = static_cast<uint32_t>(tiles);
      out->grid[1] = static_cast<uint32_t>(slices);
      out->workspace_bytes = tiles * (slices * 32 * 4 + 4);
    }
    return true;
  }
  const uint64_t outputs = static_cast<uint64_t>(p->batch) * p->channels * out_plane;
  if (f16 && p->channels_last && p->channels % 8 == 0) {  // 8 channels per thread
    out->variant = &kernel_variant(VariantId::jp_pool_nhwc8_f16);
    launch_1d(outputs / 8, 256, target.sm_count * 8, out);
    return true;
  }
  return launch_float_pair(f16, VariantId::jp_pool_f16, VariantId::jp_pool_f32, outputs, 256,
                           target.sm_count * 8, out);
}

}  // namespace jetplan::kernels::cuda
