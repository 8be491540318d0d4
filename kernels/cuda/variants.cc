#include "kernels/cuda/variants.h"

#include <cstring>

namespace jetplan::kernels::cuda {
namespace {

// The dtype shorthands of the rows (JP_CUDA_VARIANTS_<file> in kernels/<file>.h).
constexpr uint8_t kF32 = static_cast<uint8_t>(DType::kFloat32);
constexpr uint8_t kF16 = static_cast<uint8_t>(DType::kFloat16);
constexpr uint8_t kF64 = static_cast<uint8_t>(DType::kFloat64);
constexpr uint8_t kAny = kAnyDType;
constexpr uint8_t kBool = static_cast<uint8_t>(DType::kBool);
constexpr uint8_t kI32 = static_cast<uint8_t>(DType::kInt32);
constexpr uint8_t kI64 = static_cast<uint8_t>(DType::kInt64);
constexpr uint8_t kI8 = static_cast<uint8_t>(DType::kInt8);
constexpr uint8_t kU8 = static_cast<uint8_t>(DType::kUInt8);
constexpr uint8_t kI16 = static_cast<uint8_t>(DType::kInt16);
constexpr uint8_t kU16 = static_cast<uint8_t>(DType::kUInt16);
constexpr uint8_t kU32 = static_cast<uint8_t>(DType::kUInt32);
constexpr uint8_t kU64 = static_cast<uint8_t>(DType::kUInt64);

// One row: the trailing columns a row leaves out take these defaults (variants.h).
constexpr KernelVariant variant_row(const char* symbol, OpFamilyId family, uint8_t dtype,
                                    uint32_t threads, uint8_t out = kAny, uint32_t shared = 0,
                                    uint8_t zero_ws = kZeroNone, bool coop = false,
                                    bool early = true, uint8_t sm_only = 0) {
  return {symbol, static_cast<uint16_t>(family), dtype, threads, shared, zero_ws, out, coop,
          early && !coop, sm_only};
}

// In KernelVariantId order (both come from the same rows).
constexpr KernelVariant kVariants[] = {
#define JP_CUDA_VARIANT_ROW(F, symbol, ...) variant_row(#symbol, OpFamilyId::k##F, __VA_ARGS__),
#define JP_OP_FAMILY(Name, file, Params, Backends) \
  JP_CUDA_VARIANT_ROWS_##Backends(Name, file, JP_CUDA_VARIANT_ROW)
#include "kernels/op_families.def"
#undef JP_OP_FAMILY
#undef JP_CUDA_VARIANT_ROW
};

constexpr size_t kVariantCount = sizeof(kVariants) / sizeof(kVariants[0]);
static_assert(kVariantCount > 0 && kVariantCount < 0xffff, "variant ids are uint16_t");

}  // namespace

const KernelVariant* kernel_variants(size_t* count) {
  *count = kVariantCount;
  return kVariants;
}

const KernelVariant& kernel_variant(KernelVariantId id) {
  return kVariants[static_cast<size_t>(id)];
}

const KernelVariant* find_kernel_variant(const char* name) {
  if (name == nullptr) return nullptr;
  for (const KernelVariant& v : kVariants) {
    if (std::strcmp(v.name, name) == 0) return &v;
  }
  return nullptr;
}

}  // namespace jetplan::kernels::cuda
