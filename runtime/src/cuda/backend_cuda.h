// The CUDA backend: binds a verified GPU plan to the device (checks the device is the plan's
// target, loads the embedded kernels, resolves and checks every step's kernel and launch
// config, uploads the weights once) and runs contexts on a stream, replaying the step list as
// one CUDA graph. Everything is allocated at bind or context creation; a run only launches.
#pragma once

#include "runtime/src/cuda/cuda_driver.h"
#include "runtime/src/execute/context.h"
#include "runtime/src/load/plan.h"

namespace jetplan::rt {

struct CudaPlan;
struct CudaContext;

// After load_plan verified a CUDA plan: allocates plan->cuda. On failure nothing is left
// allocated on the device (plan->cuda stays null).
[[nodiscard]] Status bind_cuda_plan(jp_plan* plan);
// After load_plan verified a CUDA plan that is loaded without a device (JP_LOAD_NO_DEVICE): the
// checks bind_cuda_plan makes that need no device (each step names a kernel that exists, is of the step's family, reads and writes the step's dtypes, and
// takes its launch), so a plan such a load accepts fails on a device only for what the device
// lacks (its SM architecture, shared memory, how many cooperative blocks it holds at once).
// kernels_pending (JP_LOAD_KERNELS_PENDING, plan_steps.h): a step that names no kernel passes
// (the converter loads its plans so before it picks their kernels).
[[nodiscard]] Status check_cuda_steps(const jp_plan& plan, bool kernels_pending);
void destroy_cuda_plan(CudaPlan* cuda);

[[nodiscard]] Status create_cuda_context(const jp_plan& plan, const jp_context_options* options,
                                         jp_context* ctx);
void destroy_cuda_context(CudaContext* cuda);

// Queues one run on the context's stream (inputs in, the steps, outputs out) and returns.
[[nodiscard]] Status enqueue_cuda(jp_context* ctx);
// With a step observer set (ctx->observer), enqueue_cuda launches the steps one by one and
// hands each tensor a step writes to the observer from pinned host memory, waiting for each:
// the run returns when the observer has seen the last step. prepare_cuda_observer allocates
// that staging (the largest tensor a step writes) when the observer is set.
[[nodiscard]] Status prepare_cuda_observer(jp_context* ctx);
[[nodiscard]] Status observe_cuda_steps(jp_context* ctx);
// Waits for the queued run; records its GPU time (CUDA events around the steps).
[[nodiscard]] Status synchronize_cuda(jp_context* ctx);
float cuda_gpu_time_ms(const jp_context* ctx);  // -1 before the first synchronized run
// Each step launched on its own between two events; ms[i] for step i (count entries).
[[nodiscard]] Status profile_cuda_steps(jp_context* ctx, float* ms, int32_t count);
bool cuda_device_io(const jp_context* ctx);  // JP_CONTEXT_DEVICE_IO
// Output `index`'s run-time extent (it has a count_tensor) as the last synchronized run left it
// (0 before the first).
int64_t cuda_output_count(const jp_context* ctx, int32_t index);
void* cuda_device_binding(const jp_context* ctx, bool output, int32_t index);
const char* cuda_device_name(const jp_plan& plan);

// For the camera-frame preprocessing (preprocess_cuda.cc): makes the context's CUDA context
// current and gives its driver and stream (either may be null); looks a kernel up in the
// plan's modules; marks an input the context's enqueues no longer copy from the host (on), or
// copy again (off: its preprocessor is gone) (index < 64).
[[nodiscard]] Status cuda_context_current(const jp_context* ctx, const cu::Driver** d,
                                          cu::CUstream* stream);
[[nodiscard]] Status cuda_kernel(const jp_context* ctx, const char* name, cu::CUfunction* out);
void cuda_input_written_on_device(jp_context* ctx, int32_t index, bool on);

}  // namespace jetplan::rt
