// The post-processing of the C API: jp_detect_boxes (a detector's grid head to boxes, the CPU
// twin of kernels/detect_postprocess.h), jp_pixel_classes (a segmenter's logits to a class per
// pixel, kernels/pixel_argmax.h), and jp_detector_* and jp_class_map_*, the same on a context's
// output (the twins on CPU plans, the CUDA kernels through runtime/src/cuda/postprocess_cuda.cc
// on CUDA plans). Checks
// every size and parameter here; the kernels trust them. jp_detect_boxes and jp_pixel_classes
// allocate nothing; a detector allocates at creation only.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/detect_postprocess.h"
#include "kernels/pixel_argmax.h"
#include "runtime/src/api/memory.h"
#include "runtime/src/api/status.h"
#include "runtime/src/cuda/postprocess_cuda.h"
#include "runtime/src/execute/context.h"
#include "runtime/src/load/plan.h"

using jetplan::kernels::Detection;
using jetplan::kernels::DetectParams;
using jetplan::rt::fail;
using jetplan::rt::Status;

static_assert(sizeof(jp_detection) == sizeof(Detection) &&
                  offsetof(jp_detection, score) == offsetof(Detection, score) &&
                  offsetof(jp_detection, class_index) == offsetof(Detection, cls) &&
                  offsetof(jp_detection, candidate) == offsetof(Detection, index),
              "jp_detection mirrors kernels::Detection");

namespace {

// Pairs (cells * classes) must index with int32, as the kernels do.
constexpr int64_t kMaxPairs = int64_t(1) << 30;

bool in_unit(float v) { return v >= 0.f && v <= 1.f; }  // false for NaN

Status check_detect_desc(const jp_detect_desc& d) {
  if (d.grid_width < 1 || d.grid_height < 1 || d.classes < 1 ||
      int64_t(d.grid_width) * d.grid_height * (int64_t(d.classes) + 5) > kMaxPairs) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_detect_desc: a grid of %d x %d cells of %d "
                "classes (each >= 1, cells * (classes + 5) at most %lld)", d.grid_width,
                d.grid_height, d.classes, static_cast<long long>(kMaxPairs));
  }
  if (!(d.stride > 0.f) || !std::isfinite(d.stride) || !(d.image_width > 0.f) ||
      !std::isfinite(d.image_width) || !(d.image_height > 0.f) || !std::isfinite(d.image_height)) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_detect_desc: stride %g, image %g x %g (each "
                "finite and > 0)", double(d.stride), double(d.image_width),
                double(d.image_height));
  }
  if (!in_unit(d.score_threshold) || !in_unit(d.iou_threshold)) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_detect_desc: score_threshold %g, iou_threshold "
                "%g (each in [0, 1])", double(d.score_threshold), double(d.iou_threshold));
  }
  if (d.max_candidates < 1 || d.max_detections < 1 || d.max_candidates > kMaxPairs) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_detect_desc: max_candidates %d, max_detections "
                "%d (each >= 1)", d.max_candidates, d.max_detections);
  }
  return JP_OK;
}

DetectParams detect_params(const jp_detect_desc& d) {
  DetectParams p;
  p.grid_w = d.grid_width;
  p.grid_h = d.grid_height;
  p.classes = d.classes;
  p.channels_last = d.channels_last != 0;
  p.stride = d.stride;
  p.image_w = d.image_width;
  p.image_h = d.image_height;
  p.score_threshold = d.score_threshold;
  p.iou_threshold = d.iou_threshold;
  p.max_candidates = d.max_candidates;
  p.max_detections = d.max_detections;
  return p;
}

}  // namespace

size_t jp_detect_workspace_bytes(const jp_detect_desc* desc) {
  if (desc == nullptr || check_detect_desc(*desc) != JP_OK) return 0;
  return jetplan::kernels::detect_workspace(detect_params(*desc)).bytes;
}

jp_status jp_detect_boxes(const jp_detect_desc* desc, const float* head, size_t head_bytes,
                          void* workspace, size_t workspace_bytes, jp_detection* out,
                          int32_t out_capacity, int32_t* count) {
  if (desc == nullptr || head == nullptr || workspace == nullptr || out == nullptr ||
      count == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_detect_boxes: null desc, head, workspace, out or "
                "count");
  }
  *count = 0;
  JP_RETURN_IF_ERROR(check_detect_desc(*desc));
  const DetectParams p = detect_params(*desc);
  const size_t want_head = size_t(jetplan::kernels::detect_cells(p)) * size_t(5 + p.classes) * 4;
  if (head_bytes != want_head) {
    return fail(JP_ERROR_SHAPE_MISMATCH, "jp_detect_boxes: a head of %d x %d cells with %d "
                "channels takes %zu bytes, got %zu", p.grid_w, p.grid_h, 5 + p.classes,
                want_head, head_bytes);
  }
  const size_t want_ws = jetplan::kernels::detect_workspace(p).bytes;
  if (workspace_bytes < want_ws || reinterpret_cast<uintptr_t>(workspace) % 16 != 0) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_detect_boxes: the workspace needs %zu bytes "
                "16-byte aligned, got %zu at %p", want_ws, workspace_bytes, workspace);
  }
  if (out_capacity < p.max_detections) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_detect_boxes: out holds %d detections, "
                "max_detections is %d", out_capacity, p.max_detections);
  }
  *count = jetplan::kernels::cpu::detect_postprocess(p, head, workspace,
                                                      reinterpret_cast<Detection*>(out));
  return JP_OK;
}

struct jp_detector {
  jp_context* ctx = nullptr;  // borrowed
  int32_t output = 0;
  DetectParams params;
  void* workspace = nullptr;                   // CPU plans: owned
  Detection* results = nullptr;                // owned, max_detections
  jetplan::rt::CudaDetector* cuda = nullptr;   // CUDA plans: owned

  ~jp_detector() {
    if (cuda != nullptr) jetplan::rt::destroy_cuda_detector(cuda);
    jetplan::rt::deallocate(workspace);
    jetplan::rt::deallocate(results);
  }
};

namespace {

Status create_detector(jp_context* ctx, int32_t output, const jp_detect_desc& desc,
                       jp_detector* det) {
  JP_RETURN_IF_ERROR(check_detect_desc(desc));
  jp_tensor_desc out;
  JP_RETURN_IF_ERROR(jp_context_output_desc(ctx, output, &out));
  det->ctx = ctx;
  det->output = output;
  det->params = detect_params(desc);
  const size_t want = size_t(jetplan::kernels::detect_cells(det->params)) *
                      size_t(5 + det->params.classes) * 4;
  if (out.dtype != JP_FLOAT32 || out.bytes != want ||
      ctx->plan->outputs[static_cast<size_t>(output)].count_tensor >= 0) {
    return fail(JP_ERROR_SHAPE_MISMATCH, "jp_detector_create: output '%s' is not a Float32 head "
                "of %d x %d cells with %d channels (%zu bytes of a fixed size)", out.name,
                desc.grid_width, desc.grid_height, desc.classes + 5, want);
  }
  det->results = static_cast<Detection*>(
      jetplan::rt::allocate(size_t(desc.max_detections) * sizeof(Detection), 16));
  if (det->results == nullptr) return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for detections");
  if (ctx->cuda != nullptr) {
    return jetplan::rt::create_cuda_detector(ctx, output, det->params, &det->cuda);
  }
  const size_t bytes = jetplan::kernels::detect_workspace(det->params).bytes;
  det->workspace = jetplan::rt::allocate(bytes, 16);
  if (det->workspace == nullptr) {
    return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for a %zu-byte detector workspace", bytes);
  }
  return JP_OK;
}

}  // namespace

jp_status jp_detector_create(jp_context* ctx, int32_t output_index, const jp_detect_desc* desc,
                             jp_detector** out) {
  if (ctx == nullptr || desc == nullptr || out == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_detector_create: null context, desc or out");
  }
  *out = nullptr;
  jp_detector* det = jetplan::rt::create<jp_detector>();
  if (det == nullptr) return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for a detector");
  const Status status = create_detector(ctx, output_index, *desc, det);
  if (status != JP_OK) {
    jetplan::rt::destroy(det);
    return status;
  }
  *out = det;
  return JP_OK;
}

void jp_detector_destroy(jp_detector* det) { jetplan::rt::destroy(det); }

jp_status jp_detector_run(jp_detector* det, const jp_detection** detections, int32_t* count) {
  if (det == nullptr || detections == nullptr || count == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_detector_run: null detector, detections or count");
  }
  *count = 0;
  *detections = reinterpret_cast<const jp_detection*>(det->results);
  if (det->cuda != nullptr) return jetplan::rt::run_cuda_detector(det->cuda, det->results, count);
  const void* head = nullptr;
  size_t bytes = 0;
  JP_RETURN_IF_ERROR(jp_context_get_output(det->ctx, det->output, &head, &bytes));
  *count = jetplan::kernels::cpu::detect_postprocess(det->params, static_cast<const float*>(head),
                                                     det->workspace, det->results);
  return JP_OK;
}

jp_status jp_pixel_classes(const float* logits, size_t logits_bytes, int32_t classes,
                           int32_t height, int32_t width, int32_t channels_last, int32_t* out,
                           size_t out_bytes) {
  if (logits == nullptr || out == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_pixel_classes: null logits or out");
  }
  if (classes < 1 || height < 1 || width < 1 ||
      int64_t(classes) * height * width > (int64_t(1) << 40)) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_pixel_classes: %d classes of %d x %d pixels "
                "(each >= 1)", classes, height, width);
  }
  const size_t pixels = size_t(height) * size_t(width);
  if (logits_bytes != pixels * size_t(classes) * 4 || out_bytes != pixels * 4) {
    return fail(JP_ERROR_SHAPE_MISMATCH, "jp_pixel_classes: %d classes of %d x %d pixels take "
                "%zu bytes of logits and %zu of classes, got %zu and %zu", classes, height,
                width, pixels * size_t(classes) * 4, pixels * 4, logits_bytes, out_bytes);
  }
  jetplan::kernels::PixelArgmaxParams p;
  p.classes = classes;
  p.height = height;
  p.width = width;
  p.channels_last = channels_last != 0;
  jetplan::kernels::cpu::pixel_argmax(p, logits, out);
  return JP_OK;
}

struct jp_class_map {
  jp_context* ctx = nullptr;  // borrowed
  int32_t output = 0;
  jetplan::kernels::PixelArgmaxParams params;
  int32_t* classes = nullptr;                // CPU plans: owned
  jetplan::rt::CudaClassMap* cuda = nullptr;  // CUDA plans: owned

  ~jp_class_map() {
    if (cuda != nullptr) jetplan::rt::destroy_cuda_class_map(cuda);
    jetplan::rt::deallocate(classes);
  }
};

namespace {

Status create_class_map(jp_context* ctx, int32_t output, bool channels_last, jp_class_map* map) {
  jp_tensor_desc out{};
  JP_RETURN_IF_ERROR(jp_context_output_desc(ctx, output, &out));
  const int64_t c = channels_last ? out.dims[3] : out.dims[1];
  const int64_t h = channels_last ? out.dims[1] : out.dims[2];
  const int64_t w = channels_last ? out.dims[2] : out.dims[3];
  if (out.dtype != JP_FLOAT32 || out.rank != 4 || out.dims[0] != 1 || c < 1 || h < 1 || w < 1 ||
      h > INT32_MAX || w > INT32_MAX || c > INT32_MAX ||
      ctx->plan->outputs[static_cast<size_t>(output)].count_tensor >= 0) {
    return fail(JP_ERROR_SHAPE_MISMATCH, "jp_class_map_create: output '%s' is not Float32 logits "
                "%s", out.name, channels_last ? "[1, H, W, C]" : "[1, C, H, W]");
  }
  map->ctx = ctx;
  map->output = output;
  map->params.classes = static_cast<int32_t>(c);
  map->params.height = static_cast<int32_t>(h);
  map->params.width = static_cast<int32_t>(w);
  map->params.channels_last = channels_last;
  if (ctx->cuda != nullptr) {
    return jetplan::rt::create_cuda_class_map(ctx, output, map->params, &map->cuda);
  }
  const size_t bytes = size_t(h) * size_t(w) * sizeof(int32_t);
  map->classes = static_cast<int32_t*>(jetplan::rt::allocate(bytes, 16));
  if (map->classes == nullptr) {
    return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for a %zu-byte class map", bytes);
  }
  return JP_OK;
}

}  // namespace

jp_status jp_class_map_create(jp_context* ctx, int32_t output_index, int32_t channels_last,
                              jp_class_map** out) {
  if (ctx == nullptr || out == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_class_map_create: null context or out");
  }
  *out = nullptr;
  jp_class_map* map = jetplan::rt::create<jp_class_map>();
  if (map == nullptr) return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for a class map");
  const Status status = create_class_map(ctx, output_index, channels_last != 0, map);
  if (status != JP_OK) {
    jetplan::rt::destroy(map);
    return status;
  }
  *out = map;
  return JP_OK;
}

void jp_class_map_destroy(jp_class_map* map) { jetplan::rt::destroy(map); }

jp_status jp_class_map_run(jp_class_map* map, const int32_t** classes, int32_t* height,
                           int32_t* width) {
  if (map == nullptr || classes == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_class_map_run: null map or classes");
  }
  if (height != nullptr) *height = map->params.height;
  if (width != nullptr) *width = map->params.width;
  if (map->cuda != nullptr) return jetplan::rt::run_cuda_class_map(map->cuda, classes);
  const void* logits = nullptr;
  size_t bytes = 0;
  JP_RETURN_IF_ERROR(jp_context_get_output(map->ctx, map->output, &logits, &bytes));
  jetplan::kernels::cpu::pixel_argmax(map->params, static_cast<const float*>(logits),
                                      map->classes);
  *classes = map->classes;
  return JP_OK;
}
