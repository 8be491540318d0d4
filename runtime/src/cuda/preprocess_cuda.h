// The CUDA side of jp_preprocessor (runtime/src/api/preprocess.cc): two pinned host frame slots,
// two device frame buffers, an upload stream and the launch of jp_image_preprocess
// (kernels/cuda/image_preprocess.cu) into a context's device input.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/image_preprocess.h"
#include "runtime/src/api/status.h"

struct jp_context;

namespace jetplan::rt {

struct CudaFrames;

// Allocates everything for frames of `frame_bytes` and marks `input` of the CUDA context ctx as
// written on the GPU (its enqueues stop copying it from the host). *out stays null on failure.
[[nodiscard]] Status create_cuda_frames(jp_context* ctx, int32_t input, size_t frame_bytes,
                                        CudaFrames** out);
void destroy_cuda_frames(CudaFrames* frames);
void* cuda_frame_host(CudaFrames* frames, int32_t slot);  // pinned, frame_bytes
// Queues the upload of slot on the upload stream and, after it and after whatever the context's
// stream holds, the kernel on the context's stream. Returns at once.
[[nodiscard]] Status run_cuda_frames(CudaFrames* frames, int32_t slot,
                                     const kernels::ImagePreprocessParams& params);

}  // namespace jetplan::rt
