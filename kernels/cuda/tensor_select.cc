#include <cstdio>

#include "kernels/cuda/select.h"
#include "kernels/params_tensor.h"

namespace jetplan::kernels::cuda {
namespace {

// Tiles of the tiled transpose when the permutation coalesces to y [batch, rows, cols] with rows
// contiguous in x (NCHW <-> NHWC and every 2-D transpose); 0 when it does not. The kernel finds
// the same view on the device (tensor.cu, tile_view).
uint64_t transpose_tiles(const TransposeParams& p) {
  int64_t dims[kMaxRank], strides[kMaxRank];
  int n = 0;
  for (int32_t k = 0; k < p.rank; ++k) {
    if (p.out_dims[k] == 1) continue;
    if (n > 0 && strides[n - 1] == p.x_strides[k] * p.out_dims[k]) {
      dims[n - 1] *= p.out_dims[k];
      strides[n - 1] = p.x_strides[k];
    } else {
      dims[n] = p.out_dims[k];
      strides[n] = p.x_strides[k];
      ++n;
    }
  }
  const auto tiles = [](int64_t b, int64_t r, int64_t c) {
    return static_cast<uint64_t>(b) * ceil_div_u32(r, 32) * ceil_div_u32(c, 32);
  };
  if (n == 2 && strides[0] == 1 && strides[1] != 1) return tiles(1, dims[0], dims[1]);
  if (n == 3 && strides[1] == 1 && strides[2] != 1) return tiles(dims[0], dims[1], dims[2]);
  return 0;
}

}  // namespace

bool select_copy(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                 std::string*) {
  const auto* p = static_cast<const CopyParams*>(step.params);
  out->variant = find_kernel_variant("jp_copy");
  launch_1d((static_cast<uint64_t>(p->bytes > 0 ? p->bytes : 0) + 15) / 16, 256,
            target.sm_count * 8, out);
  return true;
}

bool select_concat(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string*) {
  const auto* p = static_cast<const ConcatParams*>(step.params);
  uint64_t total = 0;
  for (int32_t k = 0; k < p->num_inputs && k < kMaxConcatInputs; ++k)
    total += static_cast<uint64_t>(p->axis_len[k]);
  out->variant = find_kernel_variant("jp_concat");
  // The kernel moves units of up to 16 bytes; size the grid for 4-byte units.
  launch_1d(static_cast<uint64_t>(p->outer) * total * p->inner * p->elem_bytes / 4 + 1, 256,
            target.sm_count * 8, out);
  return true;
}

bool select_slice(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                  std::string* why) {
  const auto* p = static_cast<const SliceParams*>(step.params);
  const int64_t e = p->elem_bytes;
  if (e != 1 && e != 2 && e != 4 && e != 8) {
    *why = "the CUDA Slice kernel moves elements of 1, 2, 4 or 8 bytes";
    return false;
  }
  uint64_t count = 1;
  for (int32_t k = 0; k < p->rank; ++k) count *= static_cast<uint64_t>(p->out_dims[k]);
  out->variant = find_kernel_variant("jp_slice");
  launch_1d(count, 256, target.sm_count * 8, out);
  return true;
}

bool select_gather(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string* why) {
  const auto* p = static_cast<const GatherParams*>(step.params);
  if (p->index_dtype != DType::kInt32 && p->index_dtype != DType::kInt64) {
    *why = "the CUDA Gather kernel takes Int32 or Int64 indices";
    return false;
  }
  out->variant = find_kernel_variant("jp_gather");
  // Units of up to 16 bytes; size the grid for 4-byte units.
  launch_1d(static_cast<uint64_t>(p->outer) * p->num_indices * p->inner * p->elem_bytes / 4 + 1,
            256, target.sm_count * 8, out);
  return true;
}

bool select_transpose(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                      std::string* why) {
  const auto* p = static_cast<const TransposeParams*>(step.params);
  const int64_t e = p->elem_bytes;
  if (p->half_to_float ? e != 2 : (e != 1 && e != 2 && e != 4 && e != 8)) {
    *why = "the CUDA Transpose kernels move elements of 1, 2, 4 or 8 bytes, or convert Float16 "
           "to Float32";
    return false;
  }
  char name[32];
  const uint64_t tiles = transpose_tiles(*p);
  if (p->half_to_float) {
    std::snprintf(name, sizeof name, "jp_transpose_%sh2f", tiles > 0 ? "tiled_" : "");
  } else {
    std::snprintf(name, sizeof name, "jp_transpose_%sb%d", tiles > 0 ? "tiled_" : "",
                  static_cast<int>(e));
  }
  out->variant = find_kernel_variant(name);
  if (tiles > 0) {
    launch_1d(tiles * 256, 256, target.sm_count * 16, out);
    out->block[0] = 32;
    out->block[1] = 8;
    return true;
  }
  uint64_t count = 1;
  for (int32_t k = 0; k < p->rank; ++k) count *= static_cast<uint64_t>(p->out_dims[k]);
  launch_1d(count, 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
