// The CUDA side of jp_detector and jp_class_map: see postprocess_cuda.h.
#include "runtime/src/cuda/postprocess_cuda.h"

#include <cstring>

#include "runtime/src/api/memory.h"
#include "runtime/src/cuda/backend_cuda.h"

namespace jetplan::rt {

namespace k = ::jetplan::kernels;

struct CudaDetector {
  jp_context* ctx = nullptr;  // borrowed
  const cu::Driver* d = nullptr;
  cu::CUstream stream = nullptr;  // the context's
  cu::CUfunction decode = nullptr, compact = nullptr, rank = nullptr, nms = nullptr;
  k::DetectParams params;
  cu::CUdeviceptr head = 0;       // the context's device output
  cu::CUdeviceptr workspace = 0;  // owned
  cu::CUdeviceptr results = 0;    // owned: count (16 bytes), then max_detections Detections
  void* host = nullptr;           // owned, pinned: the same layout
  size_t result_bytes = 0;

  ~CudaDetector() {
    if (d == nullptr) return;
    if (ctx != nullptr) (void)cuda_context_current(ctx, nullptr, nullptr);
    if (stream != nullptr) (void)d->StreamSynchronize(stream);
    if (workspace != 0) (void)d->MemFree(workspace);
    if (results != 0) (void)d->MemFree(results);
    if (host != nullptr) (void)d->MemFreeHost(host);
  }
};

namespace {

constexpr size_t kCountBytes = 16;  // keeps the Detections after it 16-byte aligned

Status setup(jp_context* ctx, int32_t output, const k::DetectParams& params, CudaDetector* det) {
  JP_RETURN_IF_ERROR(cuda_context_current(ctx, &det->d, &det->stream));
  const cu::Driver& d = *det->d;
  det->ctx = ctx;
  det->params = params;
  det->head = reinterpret_cast<cu::CUdeviceptr>(cuda_device_binding(ctx, true, output));
  JP_RETURN_IF_ERROR(cuda_kernel(ctx, k::cuda::kDetectDecodeKernel, &det->decode));
  JP_RETURN_IF_ERROR(cuda_kernel(ctx, k::cuda::kDetectCompactKernel, &det->compact));
  JP_RETURN_IF_ERROR(cuda_kernel(ctx, k::cuda::kDetectRankKernel, &det->rank));
  JP_RETURN_IF_ERROR(cuda_kernel(ctx, k::cuda::kDetectNmsKernel, &det->nms));
  det->result_bytes = kCountBytes + size_t(params.max_detections) * sizeof(k::Detection);
  JP_RETURN_IF_ERROR(cu::check(d, d.MemAlloc(&det->workspace, k::detect_workspace(params).bytes),
                               "allocating the detector's workspace in GPU memory"));
  JP_RETURN_IF_ERROR(cu::check(d, d.MemAlloc(&det->results, det->result_bytes),
                               "allocating the detector's results in GPU memory"));
  return cu::check(d, d.MemAllocHost(&det->host, det->result_bytes),
                   "allocating the detector's pinned results");
}

uint32_t blocks_for(int64_t threads) {
  const int64_t blocks = (threads + k::cuda::kDetectBlock - 1) / k::cuda::kDetectBlock;
  return static_cast<uint32_t>(blocks < 1 ? 1 : (blocks > 4096 ? 4096 : blocks));
}

}  // namespace

Status create_cuda_detector(jp_context* ctx, int32_t output, const k::DetectParams& params,
                            CudaDetector** out) {
  *out = nullptr;
  CudaDetector* det = create<CudaDetector>();
  if (det == nullptr) return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for a detector");
  const Status status = setup(ctx, output, params, det);
  if (status != JP_OK) {
    destroy(det);
    return status;
  }
  *out = det;
  return JP_OK;
}

void destroy_cuda_detector(CudaDetector* det) { destroy(det); }

Status run_cuda_detector(CudaDetector* det, k::Detection* out, int32_t* count) {
  const cu::Driver& d = *det->d;
  JP_RETURN_IF_ERROR(cuda_context_current(det->ctx, nullptr, nullptr));
  k::cuda::DetectArgs args{reinterpret_cast<const float*>(det->head),
                           reinterpret_cast<void*>(det->workspace),
                           reinterpret_cast<k::Detection*>(det->results + kCountBytes),
                           reinterpret_cast<int32_t*>(det->results)};
  k::DetectParams p = det->params;
  void* argv[] = {&args, &p};
  struct Launch {
    cu::CUfunction fn;
    uint32_t grid, block;
    const char* name;
  };
  const Launch launches[] = {
      {det->decode, blocks_for(k::detect_cells(p)), k::cuda::kDetectBlock, "jp_detect_decode"},
      {det->compact, 1, k::cuda::kDetectCompactBlock, "jp_detect_compact"},
      {det->rank, blocks_for(k::detect_pairs(p)), k::cuda::kDetectBlock, "jp_detect_rank"},
      {det->nms, 1, k::cuda::kDetectBlock, "jp_detect_nms"}};
  for (const Launch& l : launches) {
    const uint32_t grid[3] = {l.grid, 1, 1}, block[3] = {l.block, 1, 1};
    JP_RETURN_IF_ERROR(cu::check(d, cu::launch(d, l.fn, false, grid, block, 0, det->stream, argv),
                                 l.name));
  }
  JP_RETURN_IF_ERROR(cu::check(d, d.MemcpyDtoHAsync(det->host, det->results, det->result_bytes,
                                                    det->stream),
                               "copying the detections back"));
  JP_RETURN_IF_ERROR(cu::check(d, d.StreamSynchronize(det->stream), "running the detector"));
  int32_t n = 0;
  std::memcpy(&n, det->host, sizeof n);
  if (n < 0 || n > p.max_detections) {
    return fail(JP_ERROR_INTERNAL, "the detector's kernels returned %d detections (at most %d)",
                n, p.max_detections);
  }
  std::memcpy(out, static_cast<const unsigned char*>(det->host) + kCountBytes,
              size_t(n) * sizeof(k::Detection));
  *count = n;
  return JP_OK;
}

struct CudaClassMap {
  jp_context* ctx = nullptr;  // borrowed
  const cu::Driver* d = nullptr;
  cu::CUstream stream = nullptr;  // the context's
  cu::CUfunction fn = nullptr;
  k::PixelArgmaxParams params;
  cu::CUdeviceptr logits = 0;   // the context's device output
  cu::CUdeviceptr classes = 0;  // owned
  void* host = nullptr;         // owned, pinned
  size_t bytes = 0;

  ~CudaClassMap() {
    if (d == nullptr) return;
    if (ctx != nullptr) (void)cuda_context_current(ctx, nullptr, nullptr);
    if (stream != nullptr) (void)d->StreamSynchronize(stream);
    if (classes != 0) (void)d->MemFree(classes);
    if (host != nullptr) (void)d->MemFreeHost(host);
  }
};

namespace {

Status setup_class_map(jp_context* ctx, int32_t output, const k::PixelArgmaxParams& params,
                       CudaClassMap* map) {
  JP_RETURN_IF_ERROR(cuda_context_current(ctx, &map->d, &map->stream));
  const cu::Driver& d = *map->d;
  map->ctx = ctx;
  map->params = params;
  map->logits = reinterpret_cast<cu::CUdeviceptr>(cuda_device_binding(ctx, true, output));
  map->bytes = size_t(k::pixel_argmax_pixels(params)) * sizeof(int32_t);
  JP_RETURN_IF_ERROR(cuda_kernel(ctx, k::cuda::kPixelArgmaxKernel, &map->fn));
  JP_RETURN_IF_ERROR(cu::check(d, d.MemAlloc(&map->classes, map->bytes),
                               "allocating the class map in GPU memory"));
  return cu::check(d, d.MemAllocHost(&map->host, map->bytes), "allocating the pinned class map");
}

}  // namespace

Status create_cuda_class_map(jp_context* ctx, int32_t output, const k::PixelArgmaxParams& params,
                             CudaClassMap** out) {
  *out = nullptr;
  CudaClassMap* map = create<CudaClassMap>();
  if (map == nullptr) return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for a class map");
  const Status status = setup_class_map(ctx, output, params, map);
  if (status != JP_OK) {
    destroy(map);
    return status;
  }
  *out = map;
  return JP_OK;
}

void destroy_cuda_class_map(CudaClassMap* map) { destroy(map); }

Status run_cuda_class_map(CudaClassMap* map, const int32_t** classes) {
  const cu::Driver& d = *map->d;
  JP_RETURN_IF_ERROR(cuda_context_current(map->ctx, nullptr, nullptr));
  k::cuda::PixelArgmaxArgs args{reinterpret_cast<const float*>(map->logits),
                                reinterpret_cast<int32_t*>(map->classes)};
  k::PixelArgmaxParams p = map->params;
  void* argv[] = {&args, &p};
  const int64_t blocks = (k::pixel_argmax_pixels(p) + k::cuda::kPixelArgmaxBlock - 1) /
                         k::cuda::kPixelArgmaxBlock;
  const uint32_t grid[3] = {static_cast<uint32_t>(blocks < 65535 ? blocks : 65535), 1, 1};
  const uint32_t block[3] = {k::cuda::kPixelArgmaxBlock, 1, 1};
  JP_RETURN_IF_ERROR(cu::check(d, cu::launch(d, map->fn, false, grid, block, 0, map->stream, argv),
                               "launching jp_pixel_argmax"));
  JP_RETURN_IF_ERROR(cu::check(d, d.MemcpyDtoHAsync(map->host, map->classes, map->bytes,
                                                    map->stream),
                               "copying the class map back"));
  JP_RETURN_IF_ERROR(cu::check(d, d.StreamSynchronize(map->stream), "running the class map"));
  *classes = static_cast<const int32_t*>(map->host);
  return JP_OK;
}

}  // namespace jetplan::rt
