// The CUDA side of jp_detector and jp_class_map (runtime/src/api/postprocess.cc): the
// detect_postprocess and pixel_argmax kernels (kernels/cuda/) on a CUDA context's device output,
// on the context's stream, with the workspace and results in GPU memory allocated once and only
// the results (detections, one class a pixel) copied back through pinned memory.
#pragma once

#include <cstdint>

#include "kernels/detect_postprocess.h"
#include "kernels/pixel_argmax.h"
#include "runtime/src/api/status.h"

struct jp_context;

namespace jetplan::rt {

struct CudaDetector;

// Allocates everything for `params` on output `output` of the CUDA context ctx (which must
// outlive it). *out stays null on failure.
[[nodiscard]] Status create_cuda_detector(jp_context* ctx, int32_t output,
                                          const kernels::DetectParams& params, CudaDetector** out);
void destroy_cuda_detector(CudaDetector* det);
// Queues the kernels after whatever the context's stream holds (its last run), copies the
// detections back and waits for them: out gets *count of params.max_detections entries.
[[nodiscard]] Status run_cuda_detector(CudaDetector* det, kernels::Detection* out,
                                       int32_t* count);

struct CudaClassMap;

[[nodiscard]] Status create_cuda_class_map(jp_context* ctx, int32_t output,
                                           const kernels::PixelArgmaxParams& params,
                                           CudaClassMap** out);
void destroy_cuda_class_map(CudaClassMap* map);
// Queues the kernel after the context's last run, copies the classes back and waits: *classes
// (params.height * params.width, pinned, owned by the map) holds them until the next run.
[[nodiscard]] Status run_cuda_class_map(CudaClassMap* map, const int32_t** classes);

}  // namespace jetplan::rt
