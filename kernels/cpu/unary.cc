#include "kernels/unary.h"

#include <cstdint>

namespace jetplan::kernels::cpu {

namespace {

template <typename T>
void unary_integer_loop(const UnaryParams& p, const void* x, void* y) {
  const T* in = static_cast<const T*>(x);
  T* out = static_cast<T*>(y);
  for (int64_t i = 0; i < p.count; ++i) out[i] = unary_integer_value<T>(p.op, in[i]);
}

}  // namespace

float apply_unary(UnaryOp op, float x) { return unary_value(op, x); }

void unary(const UnaryParams& p, const void* x, void* y) {
  if (!unary_supported(p.op, p.dtype)) return;
  if (p.op == UnaryOp::kNot) {
    const auto* in = static_cast<const unsigned char*>(x);
    auto* out = static_cast<unsigned char*>(y);
    for (int64_t i = 0; i < p.count; ++i) out[i] = in[i] == 0 ? 1 : 0;
  } else if (p.dtype == DType::kInt32) {
    unary_integer_loop<int32_t>(p, x, y);
  } else if (p.dtype == DType::kInt64) {
    unary_integer_loop<int64_t>(p, x, y);
  } else if (unary_is_predicate(p.op)) {
    const float* in = static_cast<const float*>(x);
    auto* out = static_cast<unsigned char*>(y);
    for (int64_t i = 0; i < p.count; ++i) out[i] = unary_predicate_value(p.op, in[i]) ? 1 : 0;
  } else {
    const float* in = static_cast<const float*>(x);
    float* out = static_cast<float*>(y);
    for (int64_t i = 0; i < p.count; ++i) out[i] = apply_unary(p.op, in[i]);
  }
}

}  // namespace jetplan::kernels::cpu
