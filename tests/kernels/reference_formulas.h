// The formulas the kernel tests check against, in double: ActivationKind (through other
// identities than a kernel would naturally use where possible) and BinaryOp, and one Activation
// of every kind with parameters that matter. Shared by the CPU tests, the CUDA tests and
// pointwise_case.h.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"

namespace jetplan::kernels::test_util {

// The formulas of kernels/activation_function.h, in double, where possible through a different identity than
// a kernel would naturally use.
inline double sigmoid_ref(double x) { return 0.5 * (1.0 + std::tanh(0.5 * x)); }

inline double activation_ref(const Activation& a, double x) {
  switch (a.kind) {
    case ActivationKind::kNone:
      return x;
    case ActivationKind::kRelu:
      return std::max(x, 0.0);
    case ActivationKind::kClip:
      return std::min(std::max(x, double{a.alpha}), double{a.beta});
    case ActivationKind::kLeakyRelu:
      return x >= 0 ? x : a.alpha * x;
    case ActivationKind::kSigmoid:
      return sigmoid_ref(x);
    case ActivationKind::kTanh:
      return 1.0 - 2.0 / (std::exp(2.0 * x) + 1.0);
    case ActivationKind::kHardSigmoid: {
      const double v = double{a.alpha} * x + a.beta;
      return v <= 0 ? 0.0 : (v >= 1 ? 1.0 : v);
    }
    case ActivationKind::kHardSwish:
      return x <= -3 ? 0.0 : (x >= 3 ? x : x * (x + 3) / 6);
    case ActivationKind::kSilu:
      return x * sigmoid_ref(x);
    case ActivationKind::kGelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case ActivationKind::kElu:
      return x >= 0 ? x : a.alpha * (std::exp(x) - 1.0);
    case ActivationKind::kSelu:  // alpha, gamma in alpha, beta
      return a.beta * (x > 0 ? x : a.alpha * std::exp(x) - a.alpha);
    case ActivationKind::kGeluTanh: {
      // ONNX's formula; left of 0, 1 + tanh(z) as exp(z) / cosh(z), which does not cancel.
      const double z = std::sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x);
      return 0.5 * x * (z >= 0 ? 1.0 + std::tanh(z) : std::exp(z) / std::cosh(z));
    }
  }
  ADD_FAILURE() << "activation kind " << int(a.kind) << " has no reference";
  return NAN;
}

// The BinaryOp formulas of kernels/scalar_ops.h, in double.
inline double binary_ref(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
    case BinaryOp::kMax:
      return std::max(a, b);
    case BinaryOp::kMin:
      return std::min(a, b);
    case BinaryOp::kPow:
      return std::pow(a, b);
    case BinaryOp::kPRelu:  // b is the slope of the negative part
      return std::max(a, 0.0) + b * std::min(a, 0.0);
  }
  ADD_FAILURE() << "binary op " << int(op) << " has no reference";
  return NAN;
}

// One entry per ActivationKind, in enum order, with parameters that matter.
inline constexpr Activation kEveryActivation[] = {
    {ActivationKind::kNone, 0.f, 0.f},       {ActivationKind::kRelu, 0.f, 0.f},
    {ActivationKind::kClip, -0.5f, 2.f},     {ActivationKind::kLeakyRelu, 0.1f, 0.f},
    {ActivationKind::kSigmoid, 0.f, 0.f},    {ActivationKind::kTanh, 0.f, 0.f},
    {ActivationKind::kHardSigmoid, 0.2f, 0.5f}, {ActivationKind::kHardSwish, 0.f, 0.f},
    {ActivationKind::kSilu, 0.f, 0.f},       {ActivationKind::kGelu, 0.f, 0.f},
    {ActivationKind::kElu, 1.3f, 0.f},       {ActivationKind::kSelu, 1.6732632f, 1.0507010f},
    {ActivationKind::kGeluTanh, 0.f, 0.f},
};
static_assert(sizeof kEveryActivation / sizeof kEveryActivation[0] == kActivationKindCount,
              "a new ActivationKind needs an entry here and a formula in activation_ref");

}  // namespace jetplan::kernels::test_util
