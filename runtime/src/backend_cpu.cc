// CPU backend: each family's run function pulls its tensors from the pointer table resolved at
// context creation and calls the reference kernel. No checks here: load verified everything.
#include "kernels/kernels.h"
#include "runtime/src/op_families.h"

namespace jetplan::rt {
namespace {

const float* in_f32(const PreparedStep& s, void* const* tensors, uint32_t i) {
  return static_cast<const float*>(tensors[s.inputs->Get(i)]);
}

float* out_f32(const PreparedStep& s, void* const* tensors) {
  return static_cast<float*>(tensors[s.outputs->Get(0)]);
}

}  // namespace

void run_conv_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::ConvParams& p = s.params.conv;
  uint32_t next = 2;
  const float* bias = p.has_bias ? in_f32(s, tensors, next++) : nullptr;
  const float* residual = p.has_residual ? in_f32(s, tensors, next) : nullptr;
  kernels::cpu::conv(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1), bias, residual,
                     out_f32(s, tensors));
}

void run_pool_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::pool(s.params.pool, in_f32(s, tensors, 0), out_f32(s, tensors));
}

void run_pool_indices_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::pool(s.params.pool, in_f32(s, tensors, 0), out_f32(s, tensors),
                     static_cast<int64_t*>(tensors[s.outputs->Get(1)]));
}

void run_gemm_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::GemmParams& p = s.params.gemm;
  kernels::cpu::gemm(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                     p.has_c ? in_f32(s, tensors, 2) : nullptr,
                     p.has_residual ? in_f32(s, tensors, p.has_c ? 3 : 2) : nullptr,
                     out_f32(s, tensors));
}

void run_binary_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::binary(s.params.binary, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                       out_f32(s, tensors));
}

void run_activation_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::activation(s.params.activation, in_f32(s, tensors, 0), out_f32(s, tensors));
}

void run_softmax_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::softmax(s.params.softmax, in_f32(s, tensors, 0), out_f32(s, tensors));
}

void run_batch_norm_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::batch_norm(s.params.batch_norm, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                           in_f32(s, tensors, 2), in_f32(s, tensors, 3), in_f32(s, tensors, 4),
                           out_f32(s, tensors));
}

void run_concat_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const void* inputs[kernels::kMaxConcatInputs];
  for (int32_t i = 0; i < s.params.concat.num_inputs; ++i) {
    inputs[i] = tensors[s.inputs->Get(static_cast<uint32_t>(i))];
  }
  kernels::cpu::concat(s.params.concat, inputs, tensors[s.outputs->Get(0)]);
}

void run_copy_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::copy(s.params.copy, tensors[s.inputs->Get(0)], tensors[s.outputs->Get(0)]);
}

void run_pointwise_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const void* inputs[kernels::kMaxPointwiseInputs];
  for (int32_t i = 0; i < s.params.pointwise.num_inputs; ++i) {
    inputs[i] = tensors[s.inputs->Get(static_cast<uint32_t>(i))];
  }
  // CPU plans are Float32 (prepare's check_float32).
  kernels::cpu::pointwise_chain(s.params.pointwise, kernels::DType::kFloat32, inputs,
                                tensors[s.outputs->Get(0)]);
}

}  // namespace jetplan::rt
