// Conv: a 1- to 3-D convolution (NCHW, or NHWC in GPU plans) with its fused epilogue: bias,
// residual add, activation, and in CUDA plans an FP32 output of FP16 inputs.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"
#include "runtime/src/prepare/sliding_window.h"

namespace jetplan::rt {
namespace {

// Weights: [Cout, Cin / groups, *kernel], or [Cout, *kernel, Cin / groups] channels-last. A
// channel slice of a wider NHWC y is a Concat along channels written in place.
Status check_conv_tensors(const jp_plan& plan, const PreparedStep& s, const fb::ConvParams& p,
                          const Window& win) {
  const TensorInfo& x = input_at(plan, s, 0);
  const TensorInfo& w = input_at(plan, s, 1);
  const TensorInfo& y = output_at(plan, s, 0);
  if (w.rank != win.rank + 2) return invalid(s, "weight rank must match the input rank");
  const int64_t groups = p.groups();
  const bool cl = channels_last(x);
  const int64_t channels = channel_dim(x), out_channels = w.dims[0];
  const int64_t w_channels = cl ? w.dims[w.rank - 1] : w.dims[1];
  if (groups < 1 || channels % groups != 0 || out_channels % groups != 0 ||
      w_channels != channels / groups) {
    return invalid(s, "weight channels do not match the input channels and groups");
  }
  for (int32_t i = 0; i < win.rank; ++i) {
    if (w.dims[(cl ? 1 : 2) + i] != win.kernel[i]) {
      return invalid(s, "weight and kernel size differ");
    }
  }
  const int64_t y_offset = p.y_channel_offset();
  const bool slice = y_offset != 0 || channel_dim(y) != out_channels;
  if (slice && (!cl || p.has_residual() || y_offset < 0 || y_offset > channel_dim(y) ||
                out_channels > channel_dim(y) - y_offset)) {
    return invalid(s, "a channel slice of the output must be NHWC, without residual, and "
                      "lie within the output's channels");
  }
  if (y.dims[0] != x.dims[0] || (!slice && channel_dim(y) != out_channels)) {
    return invalid(s, "output batch or channels do not match");
  }
  uint32_t next = 2;
  if (p.has_bias()) {
    const TensorInfo& bias = input_at(plan, s, next++);
    if (bias.elements != static_cast<uint64_t>(out_channels)) {
      return invalid(s, "bias must have one value per output channel");
    }
  }
  return check_residual(plan, s, p.has_residual(), next,
                        "residual must have the output's shape and layout");
}

}  // namespace

Status prepare_conv(const jp_plan& plan, const fb::ConvParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_epilogue_inputs(plan, *s, "Conv", p.has_bias(), p.has_residual()));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  Window win;
  JP_RETURN_IF_ERROR(read_window(*s, p, x, y, &win));
  JP_RETURN_IF_ERROR(check_conv_tensors(plan, *s, p, win));
  kernels::ConvParams& k = fresh_params(&s->params.conv);
  k.channels_last = channels_last(x);
  k.spatial_rank = win.rank;
  k.batch = x.dims[0];
  k.in_channels = channel_dim(x);
  k.out_channels = input_at(plan, *s, 1).dims[0];
  k.groups = p.groups();
  copy_window(win, &k);
  k.has_bias = p.has_bias();
  k.has_residual = p.has_residual();
  k.y_channels = channel_dim(y);
  k.y_channel_offset = p.y_channel_offset();
  return to_activation(*s, p.activation(), &k.act);
}

void run_conv_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::ConvParams& p = s.params.conv;
  const BiasResidual e = bias_residual(s, tensors, p.has_bias, p.has_residual);
  kernels::cpu::conv(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1), e.bias, e.residual,
                     out_f32(s, tensors));
}

}  // namespace jetplan::rt
