#include "kernels/cuda/select.h"

#include <algorithm>
#include <limits>

namespace jetplan::kernels::cuda {
namespace {

// One row per kernels/op_families.def row (fb::OpFamily order): CUDA families have their
// selector, CPU_ONLY ones none yet.
#define JP_SELECTOR_CUDA(file) select_##file,
#define JP_SELECTOR_CPU_ONLY(file) nullptr,
constexpr SelectFn kSelectors[] = {
#define JP_OP_FAMILY(Name, file, Params, Backends) JP_SELECTOR_##Backends(file)
#include "kernels/op_families.def"
#undef JP_OP_FAMILY
};
#undef JP_SELECTOR_CUDA
#undef JP_SELECTOR_CPU_ONLY
constexpr int kFamilies = sizeof(kSelectors) / sizeof(kSelectors[0]);
static_assert(kFamilies == kOpFamilyCount, "one selector row per op_families.def row");

}  // namespace

uint32_t ceil_div_u32(uint64_t a, uint64_t b) {
  const uint64_t q = (a + b - 1) / b;
  return q > std::numeric_limits<uint32_t>::max() ? std::numeric_limits<uint32_t>::max()
                                                  : static_cast<uint32_t>(q);
}

void launch_1d(uint64_t work, uint32_t threads, uint32_t max_blocks, LaunchChoice* out) {
  out->block[0] = threads;
  out->block[1] = out->block[2] = 1;
  out->grid[0] = std::max<uint32_t>(1, std::min(ceil_div_u32(work, threads), max_blocks));
  out->grid[1] = out->grid[2] = 1;
}

bool select_byte_mover(KernelVariantId id, int64_t elem_bytes, uint64_t work,
                       const TargetInfo& target, LaunchChoice* out, std::string* why) {
  if (elem_bytes < 1 || elem_bytes > 8) {
    *why = "the CUDA byte-moving kernels take elements of 1 to 8 bytes";
    return false;
  }
  out->variant = &kernel_variant(id);
  launch_1d(work, 256, target.sm_count * 8, out);
  return true;
}

bool float_storage(const StepDesc& step, const char* kernels, bool* f16, std::string* why) {
  *f16 = step.dtype == DType::kFloat16;
  if (!*f16 && step.dtype != DType::kFloat32) {
    *why = std::string("the CUDA ") + kernels + " kernels take Float16 or Float32";
    return false;
  }
  return true;
}

bool launch_float_pair(bool f16, KernelVariantId f16_id, KernelVariantId f32_id, uint64_t work,
                       uint32_t threads, uint32_t max_blocks, LaunchChoice* out) {
  out->variant = &kernel_variant(f16 ? f16_id : f32_id);
  launch_1d(work, threads, max_blocks, out);
  return true;
}

bool select_float_pair(const StepDesc& step, const char* kernels, KernelVariantId f16_id,
                       KernelVariantId f32_id, uint64_t work, uint32_t threads, uint32_t max_blocks,
                       LaunchChoice* out, std::string* why) {
  bool f16 = false;
  if (!float_storage(step, kernels, &f16, why)) return false;
  return launch_float_pair(f16, f16_id, f32_id, work, threads, max_blocks, out);
}

uint64_t count_elements(int32_t rank, const int64_t* dims) {
  uint64_t n = 1;
  for (int32_t d = 0; d < rank; ++d) n *= static_cast<uint64_t>(dims[d]);
  return n;
}

bool has_selector(uint16_t family) { return family < kFamilies && kSelectors[family] != nullptr; }

bool has_kernel_for(uint16_t family, DType dtype) {
  if (!has_selector(family)) return false;
  size_t count = 0;
  const KernelVariant* variants = kernel_variants(&count);
  for (size_t i = 0; i < count; ++i)
    if (variants[i].family == family &&
        (variants[i].dtype == kAnyDType || variants[i].dtype == static_cast<uint8_t>(dtype)))
      return true;
  return false;
}

bool select_kernel(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string* why) {
  *out = LaunchChoice{};
  if (!has_selector(step.family)) {
    *why = "no CUDA kernel for this op family yet";
    return false;
  }
  if (!kSelectors[step.family](step, target, out, why)) return false;
  if (out->variant == nullptr || out->variant->family != step.family) {
    *why = "internal: the selector returned no variant of the step's family";
    return false;
  }
  return true;
}

}  // namespace jetplan::kernels::cuda
