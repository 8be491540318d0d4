// Sliding-window geometry of the families that slide a kernel over spatial dims (Conv, Pool,
// QLinearConv): the output extent a window gives, and the window attributes of a step read and
// checked against its input and output.
#pragma once

#include <cinttypes>

#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

// Output extent of a sliding window, or -1 when the window does not fit once. Ceil mode rounds
// the last partial stride up, but never starts a window inside the end padding (ONNX, PyTorch).
inline int64_t window_output(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                             int64_t pad_begin, int64_t pad_end, bool ceil_mode = false) {
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t padded = in + pad_begin + pad_end;
  if (padded < span) return -1;
  if (!ceil_mode) return (padded - span) / stride + 1;
  int64_t out = (padded - span + stride - 1) / stride + 1;
  if ((out - 1) * stride >= in + pad_begin) --out;
  return out;
}

// A step's window; dims past `rank` hold the neutral values (kernel, stride, dilation and
// sizes 1, pads 0).
struct Window {
  int32_t rank;
  int64_t kernel[kernels::kMaxSpatial];
  int64_t stride[kernels::kMaxSpatial];
  int64_t dilation[kernels::kMaxSpatial];
  int64_t pad_begin[kernels::kMaxSpatial];
  int64_t pad_end[kernels::kMaxSpatial];
  int64_t in_size[kernels::kMaxSpatial];
  int64_t out_size[kernels::kMaxSpatial];
};

// Reads the window attributes of `p` (fb::ConvParams or fb::PoolParams) and checks that x and y
// are [N, C, *spatial] (or channels-last [N, *spatial, C], both alike) with y's spatial extents
// the ones the window gives.
template <typename FbParams>
Status read_window(const PreparedStep& s, const FbParams& p, const TensorInfo& x,
                   const TensorInfo& y, Window* w, bool ceil_mode = false) {
  if (p.kernel() == nullptr || p.kernel()->size() < 1 ||
      p.kernel()->size() > static_cast<uint32_t>(kernels::kMaxSpatial)) {
    return invalid(s, "kernel must have 1 to 3 spatial dims");
  }
  w->rank = static_cast<int32_t>(p.kernel()->size());
  JP_RETURN_IF_ERROR(read_spatial(s, "kernel", p.kernel(), w->rank, 1, 1, w->kernel));
  JP_RETURN_IF_ERROR(read_spatial(s, "stride", p.stride(), w->rank, 1, 1, w->stride));
  JP_RETURN_IF_ERROR(read_spatial(s, "dilation", p.dilation(), w->rank, 1, 1, w->dilation));
  JP_RETURN_IF_ERROR(read_spatial(s, "pad_begin", p.pad_begin(), w->rank, 0, 0, w->pad_begin));
  JP_RETURN_IF_ERROR(read_spatial(s, "pad_end", p.pad_end(), w->rank, 0, 0, w->pad_end));
  if (x.rank != w->rank + 2 || y.rank != w->rank + 2) {
    return invalid(s, "input and output rank must be 2 + the kernel's spatial rank");
  }
  if (channels_last(x) != channels_last(y)) {
    return invalid(s, "input and output layouts differ (NHWC and NCHW)");
  }
  const int32_t first = channels_last(x) ? 1 : 2;  // the first spatial dim
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) {
    w->in_size[i] = i < w->rank ? x.dims[first + i] : 1;
    w->out_size[i] = i < w->rank ? y.dims[first + i] : 1;
    if (i >= w->rank) continue;
    const int64_t expected = window_output(w->in_size[i], w->kernel[i], w->stride[i],
                                           w->dilation[i], w->pad_begin[i], w->pad_end[i],
                                           ceil_mode);
    if (expected != w->out_size[i]) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "step '%s': output '%s' spatial dim %d is %" PRId64 ", the window gives %" PRId64,
                  s.name, y.name, i, w->out_size[i], expected);
    }
  }
  return JP_OK;
}

// The window into a kernel's params (kernels::ConvParams, kernels::PoolParams): every dim up to
// kernels::kMaxSpatial, the neutral values past the step's rank included.
template <typename KernelParams>
void copy_window(const Window& w, KernelParams* k) {
  for (int32_t i = 0; i < kernels::kMaxSpatial; ++i) {
    k->in_size[i] = w.in_size[i];
    k->out_size[i] = w.out_size[i];
    k->kernel[i] = w.kernel[i];
    k->stride[i] = w.stride[i];
    k->dilation[i] = w.dilation[i];
    k->pad_begin[i] = w.pad_begin[i];
  }
}

}  // namespace jetplan::rt
