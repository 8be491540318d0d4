#include <cmath>

#include "kernels/cpu/cpu_kernels.h"

namespace jetplan::kernels::cpu {

namespace {

float clamp01(float v) { return v < 0.f ? 0.f : (v > 1.f ? 1.f : v); }

}  // namespace

float apply_activation(const Activation& act, float x) {
  switch (act.kind) {
    case ActivationKind::kNone:
      return x;
    case ActivationKind::kRelu:
      return x < 0.f ? 0.f : x;
    case ActivationKind::kClip:
      return x < act.alpha ? act.alpha : (x > act.beta ? act.beta : x);
    case ActivationKind::kLeakyRelu:
      return x < 0.f ? act.alpha * x : x;
    case ActivationKind::kSigmoid:
      // exp(-x) overflows to inf for very negative x, and 1 / inf is the right limit, 0.
      return 1.f / (1.f + std::exp(-x));
    case ActivationKind::kTanh:
      return std::tanh(x);
    case ActivationKind::kHardSigmoid:
      return clamp01(act.alpha * x + act.beta);
    case ActivationKind::kHardSwish:
      return x * clamp01(x / 6.f + 0.5f);
    case ActivationKind::kSilu:
      return x / (1.f + std::exp(-x));
    case ActivationKind::kGelu:
      // 1 + erf(z) == erfc(-z), which does not cancel for very negative x.
      return 0.5f * x * std::erfc(-x * 0.70710678118654752f);
    case ActivationKind::kElu:
      // expm1 keeps full relative precision near 0, where exp(x) - 1 cancels.
      return x < 0.f ? act.alpha * std::expm1(x) : x;
    case ActivationKind::kSelu:
      return x > 0.f ? act.beta * x : act.beta * act.alpha * std::expm1(x);
  }
  return x;  // unreachable for a validated plan; keeps -Wreturn-type quiet without a default
}

void activation(const ActivationParams& p, const float* x, float* y) {
  // Element i is read before it is written, so y == x is safe.
  for (int64_t i = 0; i < p.count; ++i) y[i] = apply_activation(p.act, x[i]);
}

}  // namespace jetplan::kernels::cpu
