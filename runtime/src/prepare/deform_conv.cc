// DeformConv: a 2-D conv whose taps sample x at offset positions, masked (kernels/deform_conv.h).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_deform_conv(const jp_plan& plan, const fb::DeformConvParams& p, PreparedStep* s) {
  const uint32_t inputs = 3 + (p.has_bias() ? 1 : 0) + (p.has_mask() ? 1 : 0);
  JP_RETURN_IF_ERROR(check_arity(*s, "DeformConv", inputs, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& w = input_at(plan, *s, 1);
  const TensorInfo& offset = input_at(plan, *s, 2);
  const TensorInfo& y = output_at(plan, *s, 0);
  const bool cuda = plan.backend == JP_BACKEND_CUDA;
  if (x.dtype != fb::DType::Float32 && !(cuda && x.dtype == fb::DType::Float16)) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': DeformConv of %s is not supported (%s)", s->name,
                fb::EnumNameDType(x.dtype), cuda ? "Float32 or Float16" : "Float32");
  }
  for (uint32_t i = 1; i < inputs; ++i)
    JP_RETURN_IF_ERROR(check_same_dtype(*s, x, input_at(plan, *s, i)));
  JP_RETURN_IF_ERROR(check_same_dtype(*s, x, y));
  if (x.rank != 4 || w.rank != 4 || offset.rank != 4 || y.rank != 4 || channels_last(x) ||
      channels_last(y)) {
    return invalid(*s, "DeformConv takes NCHW x, w, offset and y of rank 4");
  }
  int64_t kernel[kernels::kMaxSpatial], stride[kernels::kMaxSpatial],
      dilation[kernels::kMaxSpatial], pad_begin[kernels::kMaxSpatial], pad_end[kernels::kMaxSpatial];
  JP_RETURN_IF_ERROR(read_spatial(*s, "kernel", p.kernel(), 2, 1, 1, kernel));
  JP_RETURN_IF_ERROR(read_spatial(*s, "stride", p.stride(), 2, 1, 1, stride));
  JP_RETURN_IF_ERROR(read_spatial(*s, "dilation", p.dilation(), 2, 1, 1, dilation));
  JP_RETURN_IF_ERROR(read_spatial(*s, "pad_begin", p.pad_begin(), 2, 0, 0, pad_begin));
  JP_RETURN_IF_ERROR(read_spatial(*s, "pad_end", p.pad_end(), 2, 0, 0, pad_end));
  kernels::DeformConvParams& k = fresh_params(&s->params.deform_conv);
  k.dtype = kernel_dtype(x.dtype);
  k.batch = x.dims[0];
  k.in_channels = x.dims[1];
  k.in_h = x.dims[2];
  k.in_w = x.dims[3];
  k.out_channels = w.dims[0];
  k.out_h = y.dims[2];
  k.out_w = y.dims[3];
  k.kernel_h = kernel[0];
  k.kernel_w = kernel[1];
  k.stride_h = stride[0];
  k.stride_w = stride[1];
  k.pad_top = pad_begin[0];
  k.pad_left = pad_begin[1];
  k.dilation_h = dilation[0];
  k.dilation_w = dilation[1];
  k.groups = p.group();
  k.offset_groups = p.offset_group();
  k.has_bias = p.has_bias();
  k.has_mask = p.has_mask();
  const int64_t G = k.groups, OG = k.offset_groups;
  if (G < 1 || OG < 1 || k.in_channels % G != 0 || k.out_channels % G != 0 ||
      k.in_channels % OG != 0 || w.dims[1] != k.in_channels / G) {
    return invalid(*s, "groups and offset groups must divide the channels, w [Cout, C / group, "
                   "KH, KW]");
  }
  for (int d = 0; d < 2; ++d) {
    const int64_t in = x.dims[2 + d], out = y.dims[2 + d];
    if (w.dims[2 + d] != kernel[d] ||
        out != (in + pad_begin[d] + pad_end[d] - dilation[d] * (kernel[d] - 1) - 1) / stride[d] + 1) {
      return invalid(*s, "kernel, strides, pads and dilations do not give y's extents");
    }
  }
  const int64_t taps = k.kernel_h * k.kernel_w;
  const int64_t want_offset[4] = {k.batch, OG * taps * 2, k.out_h, k.out_w};
  const int64_t want_y[4] = {k.batch, k.out_channels, k.out_h, k.out_w};
  JP_RETURN_IF_ERROR(check_dims(*s, offset, 4, want_offset, "offset"));
  JP_RETURN_IF_ERROR(check_dims(*s, y, 4, want_y, "output"));
  if (k.has_bias) {
    const int64_t want_b[1] = {k.out_channels};
    JP_RETURN_IF_ERROR(check_dims(*s, input_at(plan, *s, 3), 1, want_b, "bias"));
  }
  if (k.has_mask) {
    const int64_t want_mask[4] = {k.batch, OG * taps, k.out_h, k.out_w};
    JP_RETURN_IF_ERROR(
        check_dims(*s, input_at(plan, *s, k.has_bias ? 4 : 3), 4, want_mask, "mask"));
  }
  return JP_OK;
}

void run_deform_conv_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::DeformConvParams& p = s.params.deform_conv;
  const auto f = [&](uint32_t i) { return static_cast<const float*>(in(s, tensors, i)); };
  kernels::cpu::deform_conv(p, f(0), f(1), f(2), p.has_bias ? f(3) : nullptr,
                            p.has_mask ? f(p.has_bias ? 4 : 3) : nullptr,
                            static_cast<float*>(out(s, tensors)));
}

}  // namespace jetplan::rt
