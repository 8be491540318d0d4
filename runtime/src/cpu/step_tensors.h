// The CPU backend's view of a step's tensors: each family's run_<file>_cpu (prepare/<file>.cc)
// pulls its tensors from the pointer table resolved at context creation (one pointer per plan
// tensor, owned by the context) in the order its prepare verified, and calls the reference
// kernel. No checks here: load verified everything.
#pragma once

#include <cstdint>

#include "runtime/src/load/plan.h"

namespace jetplan::rt {

inline const void* in(const PreparedStep& s, void* const* tensors, uint32_t i) {
  return tensors[s.inputs->Get(i)];
}

inline const float* in_f32(const PreparedStep& s, void* const* tensors, uint32_t i) {
  return static_cast<const float*>(tensors[s.inputs->Get(i)]);
}

inline void* out(const PreparedStep& s, void* const* tensors, uint32_t i = 0) {
  return tensors[s.outputs->Get(i)];
}

inline float* out_f32(const PreparedStep& s, void* const* tensors, uint32_t i = 0) {
  return static_cast<float*>(tensors[s.outputs->Get(i)]);
}

inline int64_t* out_i64(const PreparedStep& s, void* const* tensors, uint32_t i) {
  return static_cast<int64_t*>(tensors[s.outputs->Get(i)]);
}

// The optional float inputs after inputs 0 and 1 (x and the weight of Conv, ConvTranspose):
// the bias, then the residual, each only where the step has it (null otherwise).
struct BiasResidual {
  const float* bias;
  const float* residual;
};
inline BiasResidual bias_residual(const PreparedStep& s, void* const* tensors, bool has_bias,
                                  bool has_residual) {
  const uint32_t residual = has_bias ? 3 : 2;
  return {has_bias ? in_f32(s, tensors, 2) : nullptr,
          has_residual ? in_f32(s, tensors, residual) : nullptr};
}

}  // namespace jetplan::rt
