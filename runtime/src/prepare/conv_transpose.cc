// ConvTranspose: a 1- to 3-D transposed convolution (NCHW) with bias, residual add and a fused
// activation; also NHWC (GPU plans), in the upsampling form only (kernels/conv_transpose.h).
#include <cinttypes>

#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {
namespace {

// The output extent of every spatial dim is the transposed window's: weight [Cin, Cout / groups,
// *kernel], or [KH, KW, Cout, Cin] channels_last.
Status check_transposed_window(const PreparedStep& s, const TensorInfo& w, const TensorInfo& y,
                               const int64_t* pad_end, const int64_t* output_padding,
                               const kernels::ConvTransposeParams& k) {
  for (int32_t i = 0; i < k.spatial_rank; ++i) {
    if (w.dims[(k.channels_last ? 0 : 2) + i] != k.kernel[i])
      return invalid(s, "weight and kernel size differ");
    const __int128 expected =
        static_cast<__int128>(k.stride[i]) * (k.in_size[i] - 1) + output_padding[i] +
        static_cast<__int128>(k.dilation[i]) * (k.kernel[i] - 1) + 1 - k.pad_begin[i] - pad_end[i];
    if (expected != k.out_size[i]) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "step '%s': output '%s' spatial dim %d is %" PRId64
                  ", the transposed window gives another size",
                  s.name, y.name, i, k.out_size[i]);
    }
  }
  return JP_OK;
}

// NHWC (x channels_last): the upsampling form only (the CUDA GEMM's; the CPU twin takes it
// too), y NHWC too, no pad_end or output_padding.
Status check_channels_last(const PreparedStep& s, const TensorInfo& y, const int64_t* pad_end,
                           const int64_t* output_padding, const kernels::ConvTransposeParams& k) {
  if (!channels_last(y)) return invalid(s, "input and output layouts differ");
  bool no_pads = true;
  for (int32_t i = 0; i < k.spatial_rank; ++i)
    no_pads = no_pads && pad_end[i] == 0 && output_padding[i] == 0;
  if (!no_pads || !kernels::conv_transpose_upsamples(k)) {
    return invalid(s, "an NHWC ConvTranspose must be 2-D with kernel == stride, no pads or "
                      "output padding, dilation 1 and groups 1");
  }
  return JP_OK;
}

}  // namespace

Status prepare_conv_transpose(const jp_plan& plan, const fb::ConvTransposeParams& p, PreparedStep* s) {
  const uint32_t inputs = 2u + (p.has_bias() ? 1u : 0u) + (p.has_residual() ? 1u : 0u);
  JP_RETURN_IF_ERROR(check_all_float_arity(plan, *s, "ConvTranspose", inputs, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& w = input_at(plan, *s, 1);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (p.kernel() == nullptr || p.kernel()->size() < 1 ||
      p.kernel()->size() > static_cast<uint32_t>(kernels::kMaxSpatial)) {
    return invalid(*s, "kernel must have 1 to 3 spatial dims");
  }
  kernels::ConvTransposeParams& k = fresh_params(&s->params.conv_transpose);
  const int32_t rank = static_cast<int32_t>(p.kernel()->size());
  int64_t pad_end[kernels::kMaxSpatial], output_padding[kernels::kMaxSpatial];
  JP_RETURN_IF_ERROR(read_spatial(*s, "kernel", p.kernel(), rank, 1, 1, k.kernel));
  JP_RETURN_IF_ERROR(read_spatial(*s, "stride", p.stride(), rank, 1, 1, k.stride));
  JP_RETURN_IF_ERROR(read_spatial(*s, "dilation", p.dilation(), rank, 1, 1, k.dilation));
  // Pads may be negative: output_shape can ask for positions past the full convolution.
  JP_RETURN_IF_ERROR(
      read_spatial(*s, "pad_begin", p.pad_begin(), rank, 0, -kMaxWindow, k.pad_begin));
  JP_RETURN_IF_ERROR(read_spatial(*s, "pad_end", p.pad_end(), rank, 0, -kMaxWindow, pad_end));
  JP_RETURN_IF_ERROR(
      read_spatial(*s, "output_padding", p.output_padding(), rank, 0, 0, output_padding));
  if (x.rank != rank + 2 || y.rank != rank + 2 || w.rank != rank + 2) {
    return invalid(*s, "input, weight and output rank must be 2 + the kernel's spatial rank");
  }
  // NCHW: x [N, C, *in], w [C, Cout / groups, *kernel]; NHWC: x [N, *in, C], w [*kernel, Cout,
  // C] (groups 1, checked below).
  const bool cl = channels_last(x);
  const int64_t channels = channel_dim(x), groups = p.groups();
  if (groups < 1 || w.dims[cl ? w.rank - 1 : 0] != channels || channels % groups != 0 ||
      (cl && groups != 1)) {
    return invalid(*s, "weight channels do not match the input channels and groups");
  }
  // w.dims[1] * groups <= w.dims[1] * w.dims[0] <= w.elements: no overflow.
  const int64_t out_channels = cl ? w.dims[w.rank - 2] : w.dims[1] * groups;
  // NHWC: the step may write a channel slice of a Concat's output in place.
  const int64_t y_offset = p.y_channel_offset();
  const bool slice = y_offset != 0 || channel_dim(y) != out_channels;
  if (slice && (!cl || !channels_last(y) || y_offset < 0 || y_offset > channel_dim(y) ||
                out_channels > channel_dim(y) - y_offset)) {
    return invalid(*s, "a channel slice of the output must be NHWC and lie within the "
                       "output's channels");
  }
  if (y.dims[0] != x.dims[0]) return invalid(*s, "output batch or channels do not match");
  k.spatial_rank = rank;
  k.channels_last = cl;
  k.groups = groups;
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) {
    k.in_size[i] = i < rank ? x.dims[(cl ? 1 : 2) + i] : 1;
    k.out_size[i] = i < rank ? y.dims[(channels_last(y) ? 1 : 2) + i] : 1;
  }
  JP_RETURN_IF_ERROR(check_transposed_window(*s, w, y, pad_end, output_padding, k));
  if (cl) JP_RETURN_IF_ERROR(check_channels_last(*s, y, pad_end, output_padding, k));
  else if (channels_last(y)) return invalid(*s, "input and output layouts differ");
  uint32_t next = 2;
  if (p.has_bias()) {
    JP_RETURN_IF_ERROR(check_elements(*s, input_at(plan, *s, next++), out_channels,
                                      "bias must have one value per output channel"));
  }
  // Writing a channel slice, the step reads a dense residual of its own channels.
  JP_RETURN_IF_ERROR(slice ? check_slice_residual(plan, *s, p.has_residual(), next, out_channels)
                           : check_residual(plan, *s, p.has_residual(), next,
                                            "residual must have the output's shape and layout"));
  if (slice) {
    k.y_channels = channel_dim(y);
    k.y_channel_offset = y_offset;
  }
  k.batch = x.dims[0];
  k.in_channels = channels;
  k.out_channels = out_channels;
  k.has_bias = p.has_bias();
  k.has_residual = p.has_residual();
  return to_activation(*s, p.activation(), &k.act);
}

void run_conv_transpose_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::ConvTransposeParams& p = s.params.conv_transpose;
  const BiasResidual e = bias_residual(s, tensors, p.has_bias, p.has_residual);
  kernels::cpu::conv_transpose(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1), e.bias,
                               e.residual, out_f32(s, tensors));
}

}  // namespace jetplan::rt
