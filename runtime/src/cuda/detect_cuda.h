// The CUDA side of jp_detector (runtime/src/api/postprocess.cc): the detect_postprocess kernels
// (kernels/cuda/detect_postprocess.cu) on a CUDA context's device output, on the context's
// stream, with the workspace and results in GPU memory allocated once and the detections copied
// back through pinned memory.
#pragma once

#include <cstdint>

#include "kernels/detect_postprocess.h"
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

}  // namespace jetplan::rt
