// The activation function a kernel applies to its result: the Activation family's op, and the
// fused epilogue of Conv, Gemm, ConvTranspose and the normalizations. Plain data; the formulas
// are activation_value() in kernels/scalar_ops.h.
#pragma once

#include <cstdint>

namespace jetplan::kernels {

enum class ActivationKind : uint8_t {
  kNone = 0,
  kRelu = 1,
  kClip = 2,         // clamp(x, alpha, beta)
  kLeakyRelu = 3,    // x < 0 ? alpha * x : x
  kSigmoid = 4,
  kTanh = 5,
  kHardSigmoid = 6,  // max(0, min(1, alpha * x + beta))
  kHardSwish = 7,    // x * max(0, min(1, x / 6 + 1 / 2))
  kSilu = 8,         // x * sigmoid(x)
  kGelu = 9,         // 0.5 * x * (1 + erf(x / sqrt(2)))
  kElu = 10,         // x < 0 ? alpha * (exp(x) - 1) : x
  kSelu = 11,        // x > 0 ? beta * x : beta * alpha * (exp(x) - 1)
  kGeluTanh = 12,    // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
};
constexpr int kActivationKindCount = 13;

struct Activation {
  ActivationKind kind = ActivationKind::kNone;
  float alpha = 0.f;
  float beta = 0.f;
};

}  // namespace jetplan::kernels
