// The camera-frame preprocessing of the C API (jp_preprocessor_*, jp_preprocess_image): checks a
// jp_preprocess_desc, resolves it into kernels::ImagePreprocessParams (the fit as per-axis scale,
// offset and content range) and runs the CPU twin, or hands the frame to the CUDA side
// (runtime/src/cuda/preprocess_cuda.cc) for CUDA plans.
#include <cinttypes>
#include <cmath>
#include <cstring>

#include "kernels/image_preprocess.h"
#include "runtime/src/cuda/preprocess_cuda.h"
#include "runtime/src/execute/context.h"
#include "runtime/src/load/plan.h"

using jetplan::kernels::ImagePreprocessParams;
using jetplan::kernels::ResizeAxis;
using jetplan::rt::fail;
using jetplan::rt::Status;

struct jp_preprocessor {
  jp_context* ctx = nullptr;  // borrowed
  int32_t input = 0;
  ImagePreprocessParams params;
  size_t frame_bytes = 0;
  uint8_t* host[2] = {nullptr, nullptr};  // CPU plans: owned frame slots
  jetplan::rt::CudaFrames* cuda = nullptr;  // CUDA plans: owns the (pinned) slots

  ~jp_preprocessor() {
    if (cuda != nullptr) jetplan::rt::destroy_cuda_frames(cuda);
    for (uint8_t* h : host) jetplan::rt::deallocate(h);
  }
};

namespace {

constexpr int32_t kMaxSide = 1 << 15;

Status check_desc(const jp_preprocess_desc& d, size_t* row_bytes) {
  if (d.format != JP_PIXEL_RGB8 && d.format != JP_PIXEL_BGR8 && d.format != JP_PIXEL_YUYV) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "preprocess: pixel format %d is not one of "
                "JP_PIXEL_RGB8, JP_PIXEL_BGR8, JP_PIXEL_YUYV", static_cast<int>(d.format));
  }
  if (d.width <= 0 || d.height <= 0 || d.width > kMaxSide || d.height > kMaxSide) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "preprocess: a frame of %d x %d pixels (each side "
                "must be 1..%d)", d.width, d.height, kMaxSide);
  }
  if (d.format == JP_PIXEL_YUYV && d.width % 2 != 0) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "preprocess: a YUYV frame needs an even width, got "
                "%d", d.width);
  }
  const size_t tight = static_cast<size_t>(d.width) * (d.format == JP_PIXEL_YUYV ? 2 : 3);
  *row_bytes = d.row_bytes == 0 ? tight : d.row_bytes;
  if (*row_bytes < tight) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "preprocess: row_bytes %zu is less than the %zu "
                "bytes of a row of %d pixels", d.row_bytes, tight, d.width);
  }
  if (d.fit != JP_FIT_STRETCH && d.fit != JP_FIT_LETTERBOX && d.fit != JP_FIT_CENTER_CROP) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "preprocess: fit %d is not one of JP_FIT_STRETCH, "
                "JP_FIT_LETTERBOX, JP_FIT_CENTER_CROP", static_cast<int>(d.fit));
  }
  for (int c = 0; c < 3; ++c) {
    if (!std::isfinite(d.mean[c]) || !std::isfinite(d.std[c]) || d.std[c] == 0.f) {
      return fail(JP_ERROR_INVALID_ARGUMENT, "preprocess: channel %d has mean %g and std %g "
                  "(both finite, std not 0)", c, double(d.mean[c]), double(d.std[c]));
    }
  }
  if (!std::isfinite(d.pad_value)) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "preprocess: pad_value is not finite");
  }
  return JP_OK;
}

// One axis of `fit`: `scale` source pixels per output pixel, chosen by the caller for the fit.
ResizeAxis resolve_axis(jp_fit fit, int32_t in, int32_t out, double scale) {
  ResizeAxis a;
  a.in = in;
  a.out = out;
  a.content_end = out;
  a.scale = static_cast<float>(scale);
  if (fit == JP_FIT_CENTER_CROP) {
    a.offset = static_cast<float>((in - out * scale) / 2);
  } else if (fit == JP_FIT_LETTERBOX) {
    int32_t content = static_cast<int32_t>(std::lround(in / scale));
    content = content < 1 ? 1 : (content > out ? out : content);
    a.content_begin = (out - content) / 2;
    a.content_end = a.content_begin + content;
    a.offset = static_cast<float>(-a.content_begin * scale);
  }
  return a;
}

ImagePreprocessParams resolve(const jp_preprocess_desc& d, size_t row_bytes, int32_t out_h,
                              int32_t out_w, bool half, bool channels_first) {
  ImagePreprocessParams p;
  p.format = static_cast<jetplan::kernels::PixelFormat>(d.format);
  p.row_bytes = static_cast<int64_t>(row_bytes);
  const double sx = double(d.width) / out_w, sy = double(d.height) / out_h;
  const double uniform = d.fit == JP_FIT_LETTERBOX ? (sx > sy ? sx : sy) : (sx < sy ? sx : sy);
  const bool keep_aspect = d.fit != JP_FIT_STRETCH;
  p.x = resolve_axis(d.fit, d.width, out_w, keep_aspect ? uniform : sx);
  p.y = resolve_axis(d.fit, d.height, out_h, keep_aspect ? uniform : sy);
  for (int c = 0; c < 3; ++c) {
    p.channel_source[c] = d.bgr != 0 ? 2 - c : c;
    const double std = d.std[c];
    p.scale[c] = static_cast<float>(1.0 / (255.0 * std));
    p.bias[c] = static_cast<float>(-double(d.mean[c]) / std);
    p.pad[c] = static_cast<float>((d.pad_value / 255.0 - d.mean[c]) / std);
  }
  p.half = half;
  p.channels_first = channels_first;
  return p;
}

// The input's layout: [1, 3, H, W] or [1, H, W, 3] of Float32 or Float16.
Status input_layout(const jp_plan& plan, int32_t index, int32_t* h, int32_t* w, bool* half,
                    bool* channels_first) {
  if (index < 0 || static_cast<size_t>(index) >= plan.inputs.size()) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_preprocessor_create: input index %d is out of "
                "range (the plan has %zu)", index, plan.inputs.size());
  }
  const jetplan::rt::BindingInfo& input = plan.inputs[static_cast<size_t>(index)];
  const jetplan::rt::TensorInfo& t = plan.tensors[input.tensor];
  const bool f32 = t.dtype == jetplan::fb::DType::Float32;
  const bool f16 = t.dtype == jetplan::fb::DType::Float16;
  const bool nchw = t.rank == 4 && t.dims[0] == 1 && t.dims[1] == 3;
  const bool nhwc = t.rank == 4 && t.dims[0] == 1 && t.dims[3] == 3;
  if (!(f32 || f16) || !(nchw || nhwc)) {
    return fail(JP_ERROR_UNSUPPORTED, "input '%s' is not an image a preprocessor can write: it "
                "must be Float32 or Float16 of shape [1, 3, H, W] or [1, H, W, 3]", input.name);
  }
  *channels_first = nchw;
  *h = static_cast<int32_t>(nchw ? t.dims[2] : t.dims[1]);
  *w = static_cast<int32_t>(nchw ? t.dims[3] : t.dims[2]);
  *half = f16;
  if (*h <= 0 || *w <= 0 || *h > kMaxSide || *w > kMaxSide) {
    return fail(JP_ERROR_UNSUPPORTED, "input '%s' of %d x %d pixels is not an image a "
                "preprocessor can write", input.name, *h, *w);
  }
  return JP_OK;
}

Status create(jp_context* ctx, int32_t input, const jp_preprocess_desc& desc,
              jp_preprocessor* pre) {
  size_t row_bytes = 0;
  JP_RETURN_IF_ERROR(check_desc(desc, &row_bytes));
  int32_t h = 0, w = 0;
  bool half = false, channels_first = false;
  JP_RETURN_IF_ERROR(input_layout(*ctx->plan, input, &h, &w, &half, &channels_first));
  pre->ctx = ctx;
  pre->input = input;
  pre->params = resolve(desc, row_bytes, h, w, half, channels_first);
  pre->frame_bytes = row_bytes * static_cast<size_t>(desc.height);
  if (ctx->cuda != nullptr) {
    return jetplan::rt::create_cuda_frames(ctx, input, pre->frame_bytes, &pre->cuda);
  }
  if (ctx->input_data.size() == 0 || ctx->input_data[static_cast<size_t>(input)] == nullptr) {
    return fail(JP_ERROR_UNSUPPORTED, "jp_preprocessor_create: the context has no host input "
                "buffers");
  }
  for (uint8_t*& h_slot : pre->host) {
    h_slot = static_cast<uint8_t*>(jetplan::rt::allocate(pre->frame_bytes, 64));
    if (h_slot == nullptr) {
      return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for a %zu-byte frame slot",
                  pre->frame_bytes);
    }
  }
  return JP_OK;
}

}  // namespace

jp_status jp_preprocessor_create(jp_context* ctx, int32_t input_index,
                                 const jp_preprocess_desc* desc, jp_preprocessor** out) {
  if (ctx == nullptr || desc == nullptr || out == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_preprocessor_create: null context, desc or out");
  }
  *out = nullptr;
  jp_preprocessor* pre = jetplan::rt::create<jp_preprocessor>();
  if (pre == nullptr) return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for a preprocessor");
  const Status status = create(ctx, input_index, *desc, pre);
  if (status != JP_OK) {
    jetplan::rt::destroy(pre);
    return status;
  }
  *out = pre;
  return JP_OK;
}

void jp_preprocessor_destroy(jp_preprocessor* pre) { jetplan::rt::destroy(pre); }

size_t jp_preprocessor_frame_bytes(const jp_preprocessor* pre) {
  return pre != nullptr ? pre->frame_bytes : 0;
}

void* jp_preprocessor_frame(jp_preprocessor* pre, int32_t slot) {
  if (pre == nullptr || slot < 0 || slot > 1) return nullptr;
  return pre->cuda != nullptr ? jetplan::rt::cuda_frame_host(pre->cuda, slot) : pre->host[slot];
}

jp_status jp_preprocessor_run(jp_preprocessor* pre, int32_t slot) {
  if (pre == nullptr || slot < 0 || slot > 1) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_preprocessor_run: null preprocessor or slot %d "
                "(0 or 1)", slot);
  }
  if (pre->cuda != nullptr) return jetplan::rt::run_cuda_frames(pre->cuda, slot, pre->params);
  jetplan::kernels::cpu::image_preprocess(pre->params, pre->host[slot],
                                          pre->ctx->input_data[static_cast<size_t>(pre->input)]);
  return JP_OK;
}

jp_status jp_preprocessor_geometry(const jp_preprocessor* pre, float scale[2], float offset[2]) {
  if (pre == nullptr || scale == nullptr || offset == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_preprocessor_geometry: null argument");
  }
  scale[0] = pre->params.x.scale;
  scale[1] = pre->params.y.scale;
  offset[0] = pre->params.x.offset;
  offset[1] = pre->params.y.offset;
  return JP_OK;
}

jp_status jp_preprocess_image(const jp_preprocess_desc* desc, const void* frame, jp_dtype dtype,
                              int32_t channels_first, int32_t out_height, int32_t out_width,
                              void* out, size_t out_bytes) {
  if (desc == nullptr || frame == nullptr || out == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_preprocess_image: null desc, frame or out");
  }
  size_t row_bytes = 0;
  JP_RETURN_IF_ERROR(check_desc(*desc, &row_bytes));
  if (dtype != JP_FLOAT32 && dtype != JP_FLOAT16) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_preprocess_image: output dtype %d is not "
                "JP_FLOAT32 or JP_FLOAT16", static_cast<int>(dtype));
  }
  if (out_height <= 0 || out_width <= 0 || out_height > kMaxSide || out_width > kMaxSide) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_preprocess_image: an output of %d x %d pixels",
                out_height, out_width);
  }
  const size_t want = size_t(3) * size_t(out_height) * size_t(out_width) *
                      (dtype == JP_FLOAT16 ? 2 : 4);
  if (out_bytes != want) {
    return fail(JP_ERROR_SHAPE_MISMATCH, "jp_preprocess_image: an output of 3 x %d x %d takes "
                "%zu bytes, got %zu", out_height, out_width, want, out_bytes);
  }
  const ImagePreprocessParams p = resolve(*desc, row_bytes, out_height, out_width,
                                          dtype == JP_FLOAT16, channels_first != 0);
  jetplan::kernels::cpu::image_preprocess(p, static_cast<const uint8_t*>(frame), out);
  return JP_OK;
}
