// DynamicQuantize: ONNX DynamicQuantizeLinear, Float32 to UInt8 with the scale and zero point
// computed from the data (outputs y, scale, zero point); x Float16 too in CUDA plans (an
// activation of the plan).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_dynamic_quantize(const jp_plan& plan, const fb::DynamicQuantizeParams&,
                                PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity_of_params(*s, "DynamicQuantize", 1, 3));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (!(x.dtype == fb::DType::Float16 && plan.backend == JP_BACKEND_CUDA))
    JP_RETURN_IF_ERROR(check_role_dtype(*s, x, fb::DType::Float32, "input"));
  JP_RETURN_IF_ERROR(check_role_dtype(*s, y, fb::DType::UInt8, "output"));
  if (!same_shape(x, y)) return invalid(*s, "input and output shapes differ");
  const TensorInfo& scale = output_at(plan, *s, 1);
  const TensorInfo& zp = output_at(plan, *s, 2);
  JP_RETURN_IF_ERROR(check_role_dtype(*s, scale, fb::DType::Float32, "scale"));
  JP_RETURN_IF_ERROR(check_role_elements(*s, scale, 1, "scale"));
  JP_RETURN_IF_ERROR(check_role_dtype(*s, zp, fb::DType::UInt8, "zero point"));
  JP_RETURN_IF_ERROR(check_role_elements(*s, zp, 1, "zero point"));
  s->params.dynamic_quantize = kernels::DynamicQuantizeParams{};
  s->params.dynamic_quantize.count = static_cast<int64_t>(x.elements);
  return JP_OK;
}

void run_dynamic_quantize_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::dynamic_quantize_linear(s.params.dynamic_quantize, in_f32(s, tensors, 0),
                                        static_cast<uint8_t*>(out(s, tensors, 0)),
                                        out_f32(s, tensors, 1),
                                        static_cast<uint8_t*>(out(s, tensors, 2)));
}

}  // namespace jetplan::rt
