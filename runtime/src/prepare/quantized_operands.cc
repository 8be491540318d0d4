#include "runtime/src/prepare/quantized_operands.h"

#include <cinttypes>

#include "runtime/src/cpu/step_tensors.h"

namespace jetplan::rt {

Status check_quantized(const PreparedStep& s, const TensorInfo& t, const char* role) {
  if (t.dtype != fb::DType::Int8 && t.dtype != fb::DType::UInt8) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s '%s' is %s, expected Int8 or UInt8", s.name,
                role, t.name, fb::EnumNameDType(t.dtype));
  }
  return JP_OK;
}

Status check_qlinear_operands(const jp_plan& plan, const PreparedStep& s, const char* family,
                              uint32_t inputs, const char* a_role, const char* b_role) {
  JP_RETURN_IF_ERROR(check_arity_of_params(s, family, inputs, 1));
  JP_RETURN_IF_ERROR(check_quantized(s, input_at(plan, s, 0), a_role));
  JP_RETURN_IF_ERROR(check_quantized(s, input_at(plan, s, 3), b_role));
  return check_quantized(s, output_at(plan, s, 0), "output");
}

Status check_scale_pair(const PreparedStep& s, const TensorInfo& scale, const TensorInfo& zp,
                        fb::DType type, uint64_t count, const char* role, bool* per_entry) {
  if (scale.dtype != fb::DType::Float32 || zp.dtype != type) {
    const bool bad_scale = scale.dtype != fb::DType::Float32;
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s %s '%s' is %s, expected %s", s.name, role,
                bad_scale ? "scale" : "zero point", bad_scale ? scale.name : zp.name,
                fb::EnumNameDType(bad_scale ? scale.dtype : zp.dtype),
                fb::EnumNameDType(bad_scale ? fb::DType::Float32 : type));
  }
  if ((scale.elements != 1 && scale.elements != count) || zp.elements != scale.elements) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': %s scale '%s' and zero point '%s' need 1 or %" PRIu64
                " elements each, the same for both",
                s.name, role, scale.name, zp.name, count);
  }
  *per_entry = scale.elements != 1;
  return JP_OK;
}

namespace {

// QuantizeLinear's image form (kernels/quantize.h): per tensor, rank 4, y [N, H, W, C'] with
// C' >= C of x [N, H, W, C] or [N, C, H, W]. The dtypes are checked by the caller.
Status prepare_quantize_image(const jp_plan& plan, const fb::QuantizeParams& p, PreparedStep* s) {
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  const bool nchw = p.layout() == fb::QuantizeLayout::NchwToNhwcPadded;
  if (p.layout() != fb::QuantizeLayout::NhwcPadded && !nchw)
    return invalid(*s, "the quantization layout is not one this runtime knows");
  if (p.per_axis()) return invalid(*s, "the padded (image) quantization is per tensor only");
  if (x.rank != 4 || y.rank != 4)
    return invalid(*s, "the padded (image) quantization needs 4-D input and output");
  const int64_t c = x.dims[nchw ? 1 : 3];
  const int64_t h = x.dims[nchw ? 2 : 1], w = x.dims[nchw ? 3 : 2];
  if (y.dims[0] != x.dims[0] || y.dims[1] != h || y.dims[2] != w || y.dims[3] < c) {
    return invalid(*s, nchw ? "output is not the NCHW input's NHWC form with at least its channels"
                            : "output is not the input's NHWC form with at least its channels");
  }
  JP_RETURN_IF_ERROR(check_role_elements(*s, input_at(plan, *s, 1), 1, "scale"));
  if (p.has_zero_point()) {
    const TensorInfo& zp = input_at(plan, *s, 2);
    JP_RETURN_IF_ERROR(check_role_dtype(*s, zp, y.dtype, "zero point"));
    JP_RETURN_IF_ERROR(check_role_elements(*s, zp, 1, "zero point"));
  }
  kernels::QuantizeLinearParams& k = fresh_params(&s->params.quantize);
  k.qtype = kernel_dtype(y.dtype);
  k.has_zero_point = p.has_zero_point();
  k.layout = nchw ? kernels::QuantizeLayout::kNchwToNhwcPadded
                  : kernels::QuantizeLayout::kNhwcPadded;
  k.outer = x.dims[0];
  k.channels = c;
  k.inner = h * w;
  k.padded_channels = y.dims[3];
  return JP_OK;
}

}  // namespace

Status prepare_quantize_linear(const jp_plan& plan, const fb::QuantizeParams& p, PreparedStep* s,
                               bool quantize) {
  const char* family = quantize ? "Quantize" : "Dequantize";
  JP_RETURN_IF_ERROR(check_arity_of_params(*s, family, p.has_zero_point() ? 3u : 2u, 1u));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& scale = input_at(plan, *s, 1);
  const TensorInfo& y = output_at(plan, *s, 0);
  const TensorInfo& q = quantize ? y : x;
  // A CUDA plan quantizes its Float16 activations (the steps in front of INT8 convs) and
  // dequantizes into Float16.
  const bool half_float = plan.backend == JP_BACKEND_CUDA &&
                          (quantize ? x : y).dtype == fb::DType::Float16;
  if (!half_float) {
    JP_RETURN_IF_ERROR(
        check_role_dtype(*s, quantize ? x : y, fb::DType::Float32, quantize ? "input" : "output"));
  }
  JP_RETURN_IF_ERROR(check_quantized(*s, q, quantize ? "output" : "input"));
  JP_RETURN_IF_ERROR(check_role_dtype(*s, scale, fb::DType::Float32, "scale"));
  if (p.layout() != fb::QuantizeLayout::Same) {
    if (!quantize) return invalid(*s, "a padded (image) quantization layout on a Dequantize step");
    return prepare_quantize_image(plan, p, s);
  }
  if (!same_shape(x, y)) return invalid(*s, "input and output shapes differ");

  kernels::QuantizeLinearParams& k = fresh_params(&s->params.quantize);
  k.qtype = kernel_dtype(q.dtype);
  k.has_zero_point = p.has_zero_point();
  k.per_channel = p.per_axis();
  if (p.per_axis()) {
    const int32_t axis = normalize_axis(p.axis(), x.rank);
    if (axis < 0) return invalid(*s, "the quantization axis is out of range");
    for (int32_t d = 0; d < axis; ++d) k.outer *= x.dims[d];
    k.channels = x.dims[axis];
    for (int32_t d = axis + 1; d < x.rank; ++d) k.inner *= x.dims[d];
  } else {
    k.inner = static_cast<int64_t>(x.elements);
  }
  const uint64_t params = p.per_axis() ? static_cast<uint64_t>(k.channels) : 1;
  JP_RETURN_IF_ERROR(check_role_elements(*s, scale, params, "scale"));
  if (p.has_zero_point()) {
    const TensorInfo& zp = input_at(plan, *s, 2);
    JP_RETURN_IF_ERROR(check_role_dtype(*s, zp, q.dtype, "zero point"));
    JP_RETURN_IF_ERROR(check_role_elements(*s, zp, params, "zero point"));
  }
  return JP_OK;
}

void run_quantize_linear_cpu(const PreparedStep& s, void* const* tensors, bool quantize) {
  const kernels::QuantizeLinearParams& p = s.params.quantize;
  const void* zero_point = p.has_zero_point ? in(s, tensors, 2) : nullptr;
  if (quantize) {
    kernels::cpu::quantize_linear(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1), zero_point,
                                  out(s, tensors, 0));
  } else {
    kernels::cpu::dequantize_linear(p, in(s, tensors, 0), in_f32(s, tensors, 1), zero_point,
                                    out_f32(s, tensors, 0));
  }
}

}  // namespace jetplan::rt
