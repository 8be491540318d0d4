// LayerNorm: normalization over the dims from an axis on (by mean and variance, or by the root
// mean square), with its optional Mean and InvStdDev outputs and a fused activation; in an INT8
// plan, a LayerNorm writing Int8 for INT8 readers.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {
namespace {

// The kernel params do not say which statistic a step with one writes: its run function does.
// The registry's run_layer_norm_cpu runs steps with none or both; prepare picks one of these
// for a step with one.
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

void run_layer_norm_to_int8_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::LayerNormParams& p = s.params.layer_norm;
  kernels::cpu::layer_norm_to_int8(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                                   p.has_bias ? in_f32(s, tensors, 2) : nullptr,
                                   *in_f32(s, tensors, p.inv_scale_input),
                                   static_cast<int8_t*>(out(s, tensors)));
}

// An INT8 plan's LayerNorm into Int8 y: x, scale and bias of one float dtype (Float32, or Float16
// in CUDA plans), the last input the Float32 inverse of y's scale, no statistics outputs
// (kernels/layer_norm.h layer_norm_to_int8).
Status check_to_int8(const jp_plan& plan, const fb::LayerNormParams& p, const PreparedStep& s) {
  if (p.has_mean() || p.has_inv_std_dev())
    return invalid(s, "a LayerNorm into Int8 writes no mean or inv_std_dev");
  const uint32_t inputs = p.has_bias() ? 4 : 3;
  JP_RETURN_IF_ERROR(check_arity(s, "LayerNorm", inputs, 1));
  const fb::DType x = input_at(plan, s, 0).dtype;
  const TensorInfo& inv = input_at(plan, s, inputs - 1);
  bool ok = x == fb::DType::Float32 || (x == fb::DType::Float16 && plan.backend == JP_BACKEND_CUDA);
  for (uint32_t i = 1; i + 1 < inputs; ++i) ok = ok && input_at(plan, s, i).dtype == x;
  if (!ok || inv.dtype != fb::DType::Float32 || inv.elements != 1) {
    return fail(JP_ERROR_UNSUPPORTED,
                "step '%s': a LayerNorm into Int8 takes x, scale and bias of one float dtype (x "
                "is %s) and one Float32 inverse scale",
                s.name, fb::EnumNameDType(x));
  }
  return JP_OK;
}

}  // namespace

Status prepare_layer_norm(const jp_plan& plan, const fb::LayerNormParams& p, PreparedStep* s) {
  const uint32_t outputs = 1u + (p.has_mean() ? 1u : 0u) + (p.has_inv_std_dev() ? 1u : 0u);
  const bool to_int8 =
      s->outputs->size() > 0 && output_at(plan, *s, 0).dtype == fb::DType::Int8;
  if (to_int8)
    JP_RETURN_IF_ERROR(check_to_int8(plan, p, *s));
  else
    JP_RETURN_IF_ERROR(check_all_float_arity(plan, *s, "LayerNorm", p.has_bias() ? 3 : 2, outputs));
  const TensorInfo& x = input_at(plan, *s, 0);
  const int32_t axis = normalize_axis(p.axis(), x.rank);
  if (axis < 0) return invalid(*s, "axis is out of range");
  if (!same_shape(x, output_at(plan, *s, 0))) return invalid(*s, "output shape differs from input");
  kernels::LayerNormParams& k = fresh_params(&s->params.layer_norm);
  split_at(x, axis, &k.outer, &k.inner);
  k.inner *= x.dims[axis];
  const uint32_t affine = p.has_bias() ? 3 : 2;  // x, scale and bias
  for (uint32_t i = 1; i < affine; ++i) {
    JP_RETURN_IF_ERROR(check_elements(*s, input_at(plan, *s, i), k.inner,
                                      "scale and bias need one value per normalized element"));
  }
  // Mean and inv_std_dev: x's shape with the normalized dims of extent 1.
  for (uint32_t o = 1; o < outputs; ++o) {
    const TensorInfo& stat = output_at(plan, *s, o);
    bool ok = stat.rank == x.rank;
    for (int32_t d = 0; ok && d < x.rank; ++d) ok = stat.dims[d] == (d < axis ? x.dims[d] : 1);
    if (!ok)
      return invalid(*s, "mean and inv_std_dev must be x's shape with the normalized dims 1");
  }
  JP_RETURN_IF_ERROR(read_epsilon(*s, p.epsilon(), &k.epsilon));
  k.has_bias = p.has_bias();
  // RMSNormalization has no mean: a step that claims to write one is not a plan of this schema.
  if (p.rms() && p.has_mean()) return invalid(*s, "an RMS step writes no mean output");
  k.rms = p.rms();
  k.mean_output = p.has_mean() ? 1 : 0;
  k.inv_std_output = p.has_inv_std_dev() ? (p.has_mean() ? 2 : 1) : 0;
  if (outputs == 2) {
    s->run_cpu = p.has_mean() ? run_layer_norm_mean_cpu : run_layer_norm_inv_std_dev_cpu;
  }
  if (to_int8) {
    k.inv_scale_input = static_cast<int32_t>(affine);
    s->run_cpu = run_layer_norm_to_int8_cpu;
  }
  return to_activation(*s, p.activation(), &k.act);
}

// Outputs y, then mean and inv_std_dev where the step has both.
void run_layer_norm_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::LayerNormParams& p = s.params.layer_norm;
  const bool stats = s.outputs->size() == 3;
  kernels::cpu::layer_norm(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                           p.has_bias ? in_f32(s, tensors, 2) : nullptr, out_f32(s, tensors),
                           stats ? out_f32(s, tensors, 1) : nullptr,
                           stats ? out_f32(s, tensors, 2) : nullptr);
}

}  // namespace jetplan::rt
