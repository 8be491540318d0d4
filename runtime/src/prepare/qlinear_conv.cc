// QLinearConv: a 1- to 3-D convolution (NCHW) of Int8/UInt8 tensors with their scales and zero
// points (the weight's per output channel or per tensor) and an Int32 bias, requantized.
#include <cinttypes>

#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/quantized_operands.h"
#include "runtime/src/prepare/sliding_window.h"

namespace jetplan::rt {
namespace {

// The window attributes, and the output extent the window gives in every spatial dim (the
// kernel reads inside x for every output position).
Status read_qlinear_window(const PreparedStep& s, const fb::QLinearConvParams& p,
                           const TensorInfo& x, const TensorInfo& w, const TensorInfo& y,
                           kernels::ConvParams* c, int64_t* pad_end) {
  if (p.kernel() == nullptr || p.kernel()->size() < 1 ||
      p.kernel()->size() > static_cast<uint32_t>(kernels::kMaxSpatial)) {
    return invalid(s, "kernel must have 1 to 3 spatial dims");
  }
  const int32_t rank = static_cast<int32_t>(p.kernel()->size());
  JP_RETURN_IF_ERROR(read_spatial(s, "kernel", p.kernel(), rank, 1, 1, c->kernel));
  JP_RETURN_IF_ERROR(read_spatial(s, "stride", p.stride(), rank, 1, 1, c->stride));
  JP_RETURN_IF_ERROR(read_spatial(s, "dilation", p.dilation(), rank, 1, 1, c->dilation));
  JP_RETURN_IF_ERROR(read_spatial(s, "pad_begin", p.pad_begin(), rank, 0, 0, c->pad_begin));
  JP_RETURN_IF_ERROR(read_spatial(s, "pad_end", p.pad_end(), rank, 0, 0, pad_end));
  if (x.rank != rank + 2 || y.rank != rank + 2 || w.rank != rank + 2) {
    return invalid(s, "input, weight and output rank must be 2 + the kernel's spatial rank");
  }
  c->spatial_rank = rank;
  return JP_OK;
}

Status check_qlinear_extents(const PreparedStep& s, const TensorInfo& x, const TensorInfo& w,
                             const TensorInfo& y, const int64_t* pad_end, kernels::ConvParams* c) {
  const int32_t rank = c->spatial_rank;
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) {
    c->in_size[i] = i < rank ? x.dims[2 + i] : 1;
    c->out_size[i] = i < rank ? y.dims[2 + i] : 1;
    if (i >= rank) continue;
    if (w.dims[2 + i] != c->kernel[i]) return invalid(s, "weight and kernel size differ");
    const int64_t expected = window_output(c->in_size[i], c->kernel[i], c->stride[i],
                                           c->dilation[i], c->pad_begin[i], pad_end[i]);
    if (expected != c->out_size[i]) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "step '%s': output '%s' spatial dim %d is %" PRId64 ", the window gives %" PRId64,
                  s.name, y.name, i, c->out_size[i], expected);
    }
  }
  return JP_OK;
}

// Scales and zero points of x, w and y, then the Int32 bias (one per output channel).
Status check_qlinear_conv_quantization(const jp_plan& plan, const PreparedStep& s,
                                       const fb::QLinearConvParams& p, int64_t out_channels,
                                       kernels::QLinearConvParams* k) {
  const TensorInfo& x = input_at(plan, s, 0);
  const TensorInfo& w = input_at(plan, s, 3);
  const TensorInfo& y = output_at(plan, s, 0);
  bool per_entry = false;
  JP_RETURN_IF_ERROR(check_scale_pair(s, input_at(plan, s, 1), input_at(plan, s, 2), x.dtype, 1,
                                      "input", &per_entry));
  JP_RETURN_IF_ERROR(check_scale_pair(s, input_at(plan, s, 4), input_at(plan, s, 5), w.dtype,
                                      static_cast<uint64_t>(out_channels), "weight",
                                      &k->w_per_channel));
  JP_RETURN_IF_ERROR(check_scale_pair(s, input_at(plan, s, 6), input_at(plan, s, 7), y.dtype, 1,
                                      "output", &per_entry));
  if (p.has_bias()) {
    const TensorInfo& bias = input_at(plan, s, 8);
    JP_RETURN_IF_ERROR(check_role_dtype(s, bias, fb::DType::Int32, "bias"));
    JP_RETURN_IF_ERROR(check_role_elements(s, bias, static_cast<uint64_t>(out_channels), "bias"));
  }
  return JP_OK;
}

}  // namespace

Status prepare_qlinear_conv(const jp_plan& plan, const fb::QLinearConvParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(
      check_qlinear_operands(plan, *s, "QLinearConv", p.has_bias() ? 9u : 8u, "input", "weight"));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& w = input_at(plan, *s, 3);
  const TensorInfo& y = output_at(plan, *s, 0);
  kernels::QLinearConvParams& k = fresh_params(&s->params.qlinear_conv);
  kernels::ConvParams& c = k.conv;
  int64_t pad_end[kernels::kMaxSpatial];
  JP_RETURN_IF_ERROR(read_qlinear_window(*s, p, x, w, y, &c, pad_end));
  const int64_t groups = p.groups();
  const int64_t channels = x.dims[1], out_channels = w.dims[0];
  if (groups < 1 || channels % groups != 0 || out_channels % groups != 0 ||
      w.dims[1] != channels / groups) {
    return invalid(*s, "weight channels do not match the input channels and groups");
  }
  if (y.dims[0] != x.dims[0] || y.dims[1] != out_channels) {
    return invalid(*s, "output batch or channels do not match");
  }
  c.batch = x.dims[0];
  c.in_channels = channels;
  c.out_channels = out_channels;
  c.groups = groups;
  JP_RETURN_IF_ERROR(check_qlinear_extents(*s, x, w, y, pad_end, &c));
  c.has_bias = p.has_bias();
  k.x_type = kernel_dtype(x.dtype);
  k.w_type = kernel_dtype(w.dtype);
  k.y_type = kernel_dtype(y.dtype);
  return check_qlinear_conv_quantization(plan, *s, p, out_channels, &k);
}

void run_qlinear_conv_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::QLinearConvParams& p = s.params.qlinear_conv;
  const int32_t* bias = p.conv.has_bias ? static_cast<const int32_t*>(in(s, tensors, 8)) : nullptr;
  kernels::cpu::qlinear_conv(p, in(s, tensors, 0), in_f32(s, tensors, 1), in(s, tensors, 2),
                             in(s, tensors, 3), in_f32(s, tensors, 4), in(s, tensors, 5),
                             in_f32(s, tensors, 6), in(s, tensors, 7), bias, out(s, tensors, 0));
}

}  // namespace jetplan::rt
