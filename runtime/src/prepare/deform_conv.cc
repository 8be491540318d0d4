// DeformConv: a 2-D conv whose taps sample x at offset positions, masked (kernels/deform_conv.h).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {
namespace {

// The vector's n values, or false.
bool read_longs(const flatbuffers::Vector<int64_t>* v, uint32_t n, int64_t* out) {
  if (v == nullptr || v->size() != n) return false;
  for (uint32_t i = 0; i < n; ++i) out[i] = v->Get(i);
  return true;
}

}  // namespace

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
  int64_t kernel[2], stride[2], pads[4], dilation[2];
  if (!read_longs(p.kernel(), 2, kernel) || !read_longs(p.strides(), 2, stride) ||
      !read_longs(p.pads(), 4, pads) || !read_longs(p.dilations(), 2, dilation)) {
    return invalid(*s, "kernel, strides and dilations need 2 values, pads 4");
  }
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
  k.pad_top = pads[0];
  k.pad_left = pads[1];
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
    if (kernel[d] < 1 || stride[d] < 1 || dilation[d] < 1 || pads[d] < 0 || pads[d + 2] < 0 ||
        w.dims[2 + d] != kernel[d] ||
        out != (in + pads[d] + pads[d + 2] - dilation[d] * (kernel[d] - 1) - 1) / stride[d] + 1) {
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
