// The CUDA side of jp_preprocessor: see preprocess_cuda.h. The upload of a frame runs on the
// preprocessor's own stream so that it overlaps the run the context's stream is busy with; an
// event orders the kernel after it.
#include "runtime/src/cuda/preprocess_cuda.h"

#include "runtime/src/api/memory.h"
#include "runtime/src/cuda/backend_cuda.h"

namespace jetplan::rt {

struct CudaFrames {
  jp_context* ctx = nullptr;  // borrowed
  int32_t input = -1;         // the input it writes, once set up
  const cu::Driver* d = nullptr;
  cu::CUstream context_stream = nullptr;  // the context's
  cu::CUstream upload = nullptr;          // owned
  cu::CUfunction fn = nullptr;
  cu::CUdeviceptr out = 0;  // the context's device input
  size_t frame_bytes = 0;
  void* host[2] = {nullptr, nullptr};      // pinned, owned
  cu::CUdeviceptr dev[2] = {0, 0};         // owned
  cu::CUevent uploaded[2] = {nullptr, nullptr};

  ~CudaFrames() {
    if (d == nullptr) return;
    if (ctx != nullptr) (void)cuda_context_current(ctx, nullptr, nullptr);  // ctx outlives us
    // The context's enqueues copy the input from the host again.
    if (ctx != nullptr && input >= 0) cuda_input_written_on_device(ctx, input, false);
    if (upload != nullptr) (void)d->StreamSynchronize(upload);
    if (context_stream != nullptr) (void)d->StreamSynchronize(context_stream);
    for (int s = 0; s < 2; ++s) {
      if (uploaded[s] != nullptr) (void)d->EventDestroy(uploaded[s]);
      if (dev[s] != 0) (void)d->MemFree(dev[s]);
      if (host[s] != nullptr) (void)d->MemFreeHost(host[s]);
    }
    if (upload != nullptr) (void)d->StreamDestroy(upload);
  }
};

namespace {

Status setup(jp_context* ctx, int32_t input, size_t frame_bytes, CudaFrames* f) {
  JP_RETURN_IF_ERROR(cuda_context_current(ctx, &f->d, &f->context_stream));
  const cu::Driver& d = *f->d;
  f->ctx = ctx;
  f->frame_bytes = frame_bytes;
  f->out = reinterpret_cast<cu::CUdeviceptr>(cuda_device_binding(ctx, false, input));
  JP_RETURN_IF_ERROR(cuda_kernel(ctx, kernels::cuda::kImagePreprocessKernel, &f->fn));
  JP_RETURN_IF_ERROR(cu::check(d, d.StreamCreate(&f->upload, cu::kStreamNonBlocking),
                               "creating the preprocessor's upload stream"));
  for (int s = 0; s < 2; ++s) {
    JP_RETURN_IF_ERROR(cu::check(d, d.MemAllocHost(&f->host[s], frame_bytes),
                                 "allocating a pinned frame slot"));
    JP_RETURN_IF_ERROR(cu::check(d, d.MemAlloc(&f->dev[s], frame_bytes),
                                 "allocating a frame buffer in GPU memory"));
    JP_RETURN_IF_ERROR(cu::check(d, d.EventCreate(&f->uploaded[s], cu::kEventDisableTiming),
                                 "cuEventCreate"));
  }
  return JP_OK;
}

}  // namespace

Status create_cuda_frames(jp_context* ctx, int32_t input, size_t frame_bytes, CudaFrames** out) {
  *out = nullptr;
  if (cuda_device_io(ctx)) {
    return fail(JP_ERROR_UNSUPPORTED, "jp_preprocessor_create: the context keeps its inputs in "
                "GPU memory (JP_CONTEXT_DEVICE_IO); preprocess into jp_context_device_input "
                "yourself or create the context without the flag");
  }
  if (input >= 64) {
    return fail(JP_ERROR_UNSUPPORTED, "jp_preprocessor_create: input %d: a CUDA context takes "
                "preprocessors for its first 64 inputs only", input);
  }
  CudaFrames* f = create<CudaFrames>();
  if (f == nullptr) return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for a preprocessor");
  const Status status = setup(ctx, input, frame_bytes, f);
  if (status != JP_OK) {
    destroy(f);
    return status;
  }
  f->input = input;
  cuda_input_written_on_device(ctx, input, true);
  *out = f;
  return JP_OK;
}

void destroy_cuda_frames(CudaFrames* frames) { destroy(frames); }

void* cuda_frame_host(CudaFrames* frames, int32_t slot) { return frames->host[slot]; }

Status run_cuda_frames(CudaFrames* f, int32_t slot, const kernels::ImagePreprocessParams& params) {
  const cu::Driver& d = *f->d;
  JP_RETURN_IF_ERROR(cuda_context_current(f->ctx, nullptr, nullptr));
  JP_RETURN_IF_ERROR(cu::check(d, d.MemcpyHtoDAsync(f->dev[slot], f->host[slot], f->frame_bytes,
                                                    f->upload),
                               "uploading a frame to the GPU"));
  JP_RETURN_IF_ERROR(cu::check(d, d.EventRecord(f->uploaded[slot], f->upload), "cuEventRecord"));
  JP_RETURN_IF_ERROR(cu::check(d, d.StreamWaitEvent(f->context_stream, f->uploaded[slot], 0),
                               "cuStreamWaitEvent"));
  kernels::cuda::ImagePreprocessArgs args{reinterpret_cast<const uint8_t*>(f->dev[slot]),
                                          reinterpret_cast<void*>(f->out)};
  kernels::ImagePreprocessParams p = params;
  void* argv[] = {&args, &p};
  const uint64_t pixels = uint64_t(params.x.out) * uint64_t(params.y.out);
  const uint64_t blocks = (pixels + kernels::cuda::kImagePreprocessBlock - 1) /
                          kernels::cuda::kImagePreprocessBlock;
  const uint32_t grid[3] = {static_cast<uint32_t>(blocks < 65535 ? blocks : 65535), 1, 1};
  const uint32_t block[3] = {kernels::cuda::kImagePreprocessBlock, 1, 1};
  return cu::check(d, cu::launch(d, f->fn, false, grid, block, 0, f->context_stream, argv),
                   "launching jp_image_preprocess");
}

}  // namespace jetplan::rt
