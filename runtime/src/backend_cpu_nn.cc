// CPU run functions of the nn families: each pulls its tensors from the pointer table resolved
// at context creation and calls the reference kernel. No checks here: load verified everything.
#include "kernels/kernels.h"
#include "runtime/src/op_families.h"

namespace jetplan::rt {
namespace {

const float* in_f32(const PreparedStep& s, void* const* tensors, uint32_t i) {
  return static_cast<const float*>(tensors[s.inputs->Get(i)]);
}

float* out_f32(const PreparedStep& s, void* const* tensors, uint32_t i = 0) {
  return static_cast<float*>(tensors[s.outputs->Get(i)]);
}

int64_t* out_i64(const PreparedStep& s, void* const* tensors, uint32_t i) {
  return static_cast<int64_t*>(tensors[s.outputs->Get(i)]);
}

}  // namespace

void run_conv_transpose_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::ConvTransposeParams& p = s.params.conv_transpose;
  uint32_t next = 2;
  const float* bias = p.has_bias ? in_f32(s, tensors, next++) : nullptr;
  const float* residual = p.has_residual ? in_f32(s, tensors, next) : nullptr;
  kernels::cpu::conv_transpose(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1), bias, residual,
                               out_f32(s, tensors));
}

void run_resize_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::resize(s.params.resize, in_f32(s, tensors, 0), out_f32(s, tensors));
}

void run_reduce_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::reduce(s.params.reduce, in_f32(s, tensors, 0), out_f32(s, tensors));
}

void run_reduce_f64_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::reduce(s.params.reduce, static_cast<const double*>(tensors[s.inputs->Get(0)]),
                       static_cast<double*>(tensors[s.outputs->Get(0)]));
}

void run_arg_reduce_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::arg_reduce(s.params.arg_reduce, in_f32(s, tensors, 0), out_i64(s, tensors, 0));
}

void run_top_k_cpu(const PreparedStep& s, void* const* tensors, void* workspace) {
  kernels::cpu::topk(s.params.top_k, in_f32(s, tensors, 0), workspace, out_f32(s, tensors, 0),
                     out_i64(s, tensors, 1));
}

void run_instance_norm_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::instance_norm(s.params.instance_norm, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                              in_f32(s, tensors, 2), out_f32(s, tensors));
}

// Outputs y, then mean and inv_std_dev where the step has them: the registry's function runs
// steps with none or both, prepare picks one of the other two for a step with one.
void run_layer_norm_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::LayerNormParams& p = s.params.layer_norm;
  const bool stats = s.outputs->size() == 3;
  kernels::cpu::layer_norm(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                           p.has_bias ? in_f32(s, tensors, 2) : nullptr, out_f32(s, tensors),
                           stats ? out_f32(s, tensors, 1) : nullptr,
                           stats ? out_f32(s, tensors, 2) : nullptr);
}

void run_layer_norm_mean_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::LayerNormParams& p = s.params.layer_norm;
  kernels::cpu::layer_norm(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                           p.has_bias ? in_f32(s, tensors, 2) : nullptr, out_f32(s, tensors),
                           out_f32(s, tensors, 1), nullptr);
}

void run_layer_norm_inv_std_dev_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::LayerNormParams& p = s.params.layer_norm;
  kernels::cpu::layer_norm(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                           p.has_bias ? in_f32(s, tensors, 2) : nullptr, out_f32(s, tensors),
                           nullptr, out_f32(s, tensors, 1));
}

void run_group_norm_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::group_norm(s.params.group_norm, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                           in_f32(s, tensors, 2), out_f32(s, tensors));
}

void run_lrn_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::lrn(s.params.lrn, in_f32(s, tensors, 0), out_f32(s, tensors));
}

void run_nms_cpu(const PreparedStep& s, void* const* tensors, void* workspace) {
  kernels::cpu::non_max_suppression(s.params.nms, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                                    workspace, out_i64(s, tensors, 0), out_i64(s, tensors, 1));
}

}  // namespace jetplan::rt
