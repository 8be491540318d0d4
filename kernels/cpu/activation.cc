#include "kernels/activation.h"

#include "kernels/scalar_ops.h"

namespace jetplan::kernels::cpu {

float apply_activation(const Activation& act, float x) { return activation_value(act, x); }

void activation(const ActivationParams& p, const float* x, float* y) {
  // Element i is read before it is written, so y == x is safe.
  for (int64_t i = 0; i < p.count; ++i) y[i] = apply_activation(p.act, x[i]);
}

}  // namespace jetplan::kernels::cpu
