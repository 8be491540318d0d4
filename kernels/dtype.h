// Element types of tensors, numbered as fb::DType in schemas/plan.fbs (the runtime
// static_asserts this), and their sizes.
#pragma once

#include <cstdint>

namespace jetplan::kernels {

enum class DType : uint8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kInt8 = 2,
  kUInt8 = 3,
  kInt32 = 4,
  kInt64 = 5,
  kBool = 6,  // one byte, 0 or 1
  kFloat64 = 7,
  kInt16 = 8,
  kUInt16 = 9,
  kUInt32 = 10,
  kUInt64 = 11,
  kBFloat16 = 12,  // the upper 16 bits of a float32 (data movement and Cast only)
};
constexpr int kDTypeCount = 13;

constexpr int64_t dtype_bytes(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kFloat16: return 2;
    case DType::kInt8: return 1;
    case DType::kUInt8: return 1;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
    case DType::kFloat64: return 8;
    case DType::kInt16: return 2;
    case DType::kUInt16: return 2;
    case DType::kUInt32: return 4;
    case DType::kUInt64: return 8;
    case DType::kBFloat16: return 2;
  }
  return 0;
}

}  // namespace jetplan::kernels
