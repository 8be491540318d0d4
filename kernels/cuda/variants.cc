#include "kernels/cuda/variants.h"

#include <cstring>

namespace jetplan::kernels::cuda {
namespace {

// Family numbers as fb::OpFamily (schemas/plan.fbs); the runtime static_asserts a few of them.
enum Family : uint16_t {
  kConv = 0, kPool = 1, kGemm = 2, kBinary = 3, kActivation = 4, kSoftmax = 5, kBatchNorm = 6,
  kConcat = 7, kCopy = 8, kConvTranspose = 9, kResize = 10, kReduce = 11, kArgReduce = 12,
  kTopK = 13, kInstanceNorm = 14, kLayerNorm = 15, kGroupNorm = 16, kLrn = 17, kNms = 18,
  kTranspose = 19, kSlice = 20, kGather = 21, kGatherElements = 22, kPad = 23, kBroadcast = 24,
  kUnary = 25, kElementwise = 26, kWhere = 27, kCast = 28, kRnn = 29, kQuantize = 30,
  kDequantize = 31, kQLinearMatMul = 32, kQLinearConv = 33, kDynamicQuantize = 34,
  kPointwise = 35,
};
constexpr uint8_t kF32 = static_cast<uint8_t>(DType::kFloat32);
constexpr uint8_t kF16 = static_cast<uint8_t>(DType::kFloat16);
constexpr uint8_t kAny = kAnyDType;
constexpr uint8_t kBool = static_cast<uint8_t>(DType::kBool);
constexpr uint8_t kI32 = static_cast<uint8_t>(DType::kInt32);
constexpr uint8_t kI64 = static_cast<uint8_t>(DType::kInt64);
constexpr uint8_t kI8 = static_cast<uint8_t>(DType::kInt8);
constexpr uint8_t kU8 = static_cast<uint8_t>(DType::kUInt8);

constexpr KernelVariant kVariants[] = {
#include "kernels/cuda/pointwise_variants.inc"
#include "kernels/cuda/conv_variants.inc"
#include "kernels/cuda/gemm_variants.inc"
#include "kernels/cuda/cast_variants.inc"
#include "kernels/cuda/tensor_variants.inc"
#include "kernels/cuda/pool_variants.inc"
#include "kernels/cuda/softmax_variants.inc"
#include "kernels/cuda/norm_variants.inc"
#include "kernels/cuda/resize_variants.inc"
#include "kernels/cuda/unary_variants.inc"
#include "kernels/cuda/elementwise_variants.inc"
#include "kernels/cuda/conv_transpose_variants.inc"
#include "kernels/cuda/rnn_variants.inc"
#include "kernels/cuda/pointwise_chain_variants.inc"
};

}  // namespace

const KernelVariant* kernel_variants(size_t* count) {
  *count = sizeof(kVariants) / sizeof(kVariants[0]);
  return kVariants;
}

const KernelVariant* find_kernel_variant(const char* name) {
  if (name == nullptr) return nullptr;
  for (const KernelVariant& v : kVariants) {
    if (std::strcmp(v.name, name) == 0) return &v;
  }
  return nullptr;
}

}  // namespace jetplan::kernels::cuda
