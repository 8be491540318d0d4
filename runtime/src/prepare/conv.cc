// Conv: a 1- to 3-D convolution (NCHW, or NHWC in GPU plans) with its fused epilogue: bias,
// residual add, activation, and in CUDA plans an FP32 output of FP16 inputs. INT8 steps (Int8 x
// and w) requantize in the epilogue (kernels/conv.h ConvInt8).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"
#include "runtime/src/prepare/sliding_window.h"

namespace jetplan::rt {
namespace {

// Weights: [Cout, Cin / groups, *kernel], or [Cout, *kernel, Cin / groups] channels-last. A
// channel slice of a wider NHWC y is a Concat along channels written in place.
Status check_conv_tensors(const jp_plan& plan, const PreparedStep& s, const fb::ConvParams& p,
                          const Window& win, bool int8) {
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
  if (slice && (!cl || y_offset < 0 || y_offset > channel_dim(y) ||
                out_channels > channel_dim(y) - y_offset)) {
    return invalid(s, "a channel slice of the output must be NHWC and lie within the "
                      "output's channels");
  }
  if (y.dims[0] != x.dims[0] || (!slice && channel_dim(y) != out_channels)) {
    return invalid(s, "output batch or channels do not match");
  }
  uint32_t next = 2;
  if (p.has_bias()) {
    const TensorInfo& bias = input_at(plan, s, next++);
    // An INT8 step's third input is its channel epilogue (two values a channel).
    if (bias.elements != static_cast<uint64_t>(out_channels) * (int8 ? 2u : 1u)) {
      return invalid(s, "bias must have one value per output channel");
    }
  }
  if (!slice)
    return check_residual(plan, s, p.has_residual(), next,
                          "residual must have the output's shape and layout");
  // Writing a channel slice, the conv reads a dense residual of its own channels.
  return check_slice_residual(plan, s, p.has_residual(), next, out_channels);
}

bool positive_finite(float v) { return v > 0.f && v <= 3.4028235e38f; }

// An INT8 step (x Int8): w Int8, the channel epilogue float32 [2, Cout] in the bias slot, an
// Int8 or Float16 residual and y, each Int8 one with a positive finite scale (schemas/plan.fbs).
Status prepare_conv_int8(const jp_plan& plan, const fb::ConvParams& p, PreparedStep* s,
                         kernels::ConvInt8* q) {
  const uint32_t inputs = 3u + (p.has_residual() ? 1u : 0u);
  JP_RETURN_IF_ERROR(check_arity(*s, "Conv", inputs, 1));
  const TensorInfo& w = input_at(plan, *s, 1);
  const TensorInfo& epi = input_at(plan, *s, 2);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (w.dtype != fb::DType::Int8 || epi.dtype != fb::DType::Float32 || !p.has_bias() ||
      epi.elements != 2 * static_cast<uint64_t>(w.dims[0])) {
    return invalid(*s, "an INT8 conv needs an Int8 weight and a Float32 channel epilogue of "
                       "two values per output channel");
  }
  // The CUDA kernels write Int8 or Float16; the CPU twin also Float32 (a CPU plan's floats).
  auto int8_or_float = [&](fb::DType t) {
    return t == fb::DType::Int8 || t == fb::DType::Float16 ||
           (t == fb::DType::Float32 && plan.backend == JP_BACKEND_CPU);
  };
  if (!int8_or_float(y.dtype))
    return invalid(*s, "an INT8 conv writes Int8 or Float16 (or Float32 on the CPU backend)");
  q->enabled = true;
  q->y_dtype = kernel_dtype(y.dtype);
  if (y.dtype == fb::DType::Int8) {
    q->y_inv_scale = 1.f / p.y_scale();
    if (!positive_finite(p.y_scale()) || !positive_finite(q->y_inv_scale))
      return invalid(*s, "an Int8 output needs a positive finite y_scale with a finite inverse");
  }
  if (p.has_residual()) {
    const TensorInfo& r = input_at(plan, *s, 3);
    if (!int8_or_float(r.dtype))
      return invalid(*s, "an INT8 conv's residual is Int8 or Float16 (or Float32 on the CPU "
                         "backend)");
    q->residual_dtype = kernel_dtype(r.dtype);
    q->residual_scale = p.residual_scale();
    if (r.dtype == fb::DType::Int8 && !positive_finite(q->residual_scale))
      return invalid(*s, "an Int8 residual needs a positive finite residual_scale");
  }
  return JP_OK;
}

}  // namespace

Status prepare_conv(const jp_plan& plan, const fb::ConvParams& p, PreparedStep* s) {
  kernels::ConvInt8 q;
  const bool int8 = s->inputs->size() > 0 && input_at(plan, *s, 0).dtype == fb::DType::Int8;
  if (int8)
    JP_RETURN_IF_ERROR(prepare_conv_int8(plan, p, s, &q));
  else
    JP_RETURN_IF_ERROR(check_epilogue_inputs(plan, *s, "Conv", p.has_bias(), p.has_residual()));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  Window win;
  JP_RETURN_IF_ERROR(read_window(*s, p, x, y, &win));
  JP_RETURN_IF_ERROR(check_conv_tensors(plan, *s, p, win, int8));
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
  k.residual_after_act = p.has_residual() && p.residual_after_activation();
  k.y_channels = channel_dim(y);
  k.y_channel_offset = p.y_channel_offset();
  k.int8 = q;
  k.w_constant = input_at(plan, *s, 1).storage == fb::Storage::Weight;
  return to_activation(*s, p.activation(), &k.act);
}

void run_conv_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::ConvParams& p = s.params.conv;
  if (p.int8.enabled) {
    kernels::cpu::conv_int8(p, static_cast<const int8_t*>(in(s, tensors, 0)),
                            static_cast<const int8_t*>(in(s, tensors, 1)), in_f32(s, tensors, 2),
                            p.has_residual ? in(s, tensors, 3) : nullptr, out(s, tensors));
    return;
  }
  const BiasResidual e = bias_residual(s, tensors, p.has_bias, p.has_residual);
  kernels::cpu::conv(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1), e.bias, e.residual,
                     out_f32(s, tensors));
}

}  // namespace jetplan::rt
