#include "runtime/src/cuda/backend_cuda.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/variants.h"
#include "runtime/src/cuda/cuda_driver.h"
#include "runtime/src/cuda/cuda_modules.h"
#include "runtime/src/cuda/cuda_step_checks.h"

namespace jetplan::rt {

using kernels::cuda::StepPointers;

static_assert(static_cast<int>(kernels::DType::kFloat16) == static_cast<int>(fb::DType::Float16),
              "kernels::DType mirrors fb::DType");

namespace {

// Retains the device's primary context for the lifetime of the owner.
struct PrimaryContext {
  const cu::Driver* d = nullptr;
  cu::CUdevice device = 0;
  cu::CUcontext ctx = nullptr;
  ~PrimaryContext() {
    if (ctx != nullptr) (void)d->DevicePrimaryCtxRelease(device);
  }
};

struct CudaStep {
  cu::CUfunction fn;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_bytes;
  // The bytes [clear_offset, clear_offset + clear_bytes) of the step's workspace cleared before
  // each launch (workspace_clear_range of its kernel row; 0 bytes: none).
  uint64_t clear_offset;
  uint64_t clear_bytes;
  bool cooperative;
  bool early;  // launched early (programmatic dependent launch): see KernelVariant::early_launch
};

constexpr uint32_t kMaxDynamicSharedDefault = 48 * 1024;

}  // namespace

struct CudaPlan {
  PrimaryContext primary;  // declared first: released after the modules are unloaded
  cu::DeviceInfo device;
  cu::Modules modules;
  cu::CUdeviceptr weights = 0;
  Array<CudaStep> steps;

  ~CudaPlan() {
    if (primary.ctx != nullptr) (void)primary.d->CtxSetCurrent(primary.ctx);
    if (weights != 0) (void)primary.d->MemFree(weights);
  }
};

struct CudaContext {
  const CudaPlan* plan = nullptr;
  const cu::Driver* d = nullptr;
  cu::CUstream stream = nullptr;
  bool owns_stream = false;
  cu::CUdeviceptr arena = 0;  // owned unless the caller handed one in
  bool owns_arena = false;
  cu::CUdeviceptr bindings = 0;  // every input and output, back to back (owned)
  void* host_io = nullptr;       // pinned staging of the inputs and outputs (owned)
  void* observed = nullptr;      // pinned staging of one observed tensor (owned; an observer's)
  size_t observed_bytes = 0;
  int64_t* counts = nullptr;     // in host_io: each output's run-time extent (count_tensor)
  Array<StepPointers> pointers;  // per step
  Array<cu::CUdeviceptr> input_dev, output_dev;
  Array<cu::CUevent> profile_events;  // created by the first profile call
  cu::CUgraphExec graph = nullptr;
  cu::CUevent start = nullptr, stop = nullptr;
  bool device_io = false;
  bool early = true;  // steps whose kernels allow it launch early (JP_CONTEXT_NO_EARLY_LAUNCH)
  uint64_t inputs_on_device = 0;  // bit i: a preprocessor writes input i on the GPU
  bool queued = false;
  float gpu_ms = -1.f;

  ~CudaContext() {
    if (d == nullptr) return;
    (void)d->CtxSetCurrent(plan->primary.ctx);
    if (stream != nullptr) (void)d->StreamSynchronize(stream);
    if (graph != nullptr) (void)d->GraphExecDestroy(graph);
    for (size_t i = 0; i < profile_events.size(); ++i) {
      if (profile_events[i] != nullptr) (void)d->EventDestroy(profile_events[i]);
    }
    if (start != nullptr) (void)d->EventDestroy(start);
    if (stop != nullptr) (void)d->EventDestroy(stop);
    if (owns_stream && stream != nullptr) (void)d->StreamDestroy(stream);
    if (host_io != nullptr) (void)d->MemFreeHost(host_io);
    if (observed != nullptr) (void)d->MemFreeHost(observed);
    if (bindings != 0) (void)d->MemFree(bindings);
    if (owns_arena && arena != 0) (void)d->MemFree(arena);
  }
};

namespace {

// How many blocks of `step` GPU 0 holds at once (its SMs times the driver's occupancy for this
// launch): a kernel whose blocks wait for each other needs them all resident.
Status resident_blocks(const CudaPlan& cp, const CudaStep& step, uint64_t* resident) {
  const cu::Driver& d = *cp.primary.d;
  int per_sm = 0;
  const uint32_t threads = step.block[0] * step.block[1] * step.block[2];
  JP_RETURN_IF_ERROR(cu::check(d, d.OccupancyMaxActiveBlocksPerMultiprocessor(
                                      &per_sm, step.fn, static_cast<int>(threads),
                                      step.shared_bytes),
                               "cuOccupancyMaxActiveBlocksPerMultiprocessor"));
  *resident = static_cast<uint64_t>(per_sm) * static_cast<uint64_t>(cp.device.sm_count);
  return JP_OK;
}

uint64_t grid_blocks(const CudaStep& step) {
  return uint64_t{step.grid[0]} * step.grid[1] * step.grid[2];
}

Status check_cooperative(const CudaPlan& cp, const PreparedStep& s, const char* name,
                         const CudaStep& step) {
  uint64_t resident = 0;
  JP_RETURN_IF_ERROR(resident_blocks(cp, step, &resident));
  const uint64_t blocks = grid_blocks(step);
  if (blocks > resident) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': kernel '%s' runs %" PRIu64 " blocks that wait "
                "for each other, which must all run at once, but GPU 0 '%s' holds %" PRIu64 " (%d SMs): "
                "convert the model again with a --target for this GPU", s.name, name, blocks,
                cp.device.name, resident, cp.device.sm_count);
  }
  return JP_OK;
}

Status bind_step(const jp_plan& plan, size_t index, CudaStep* out) {
  const kernels::cuda::KernelVariant* v = nullptr;
  JP_RETURN_IF_ERROR(check_step_kernel(plan, index, &v));
  const PreparedStep& s = plan.steps[index];
  const fb::LaunchConfig& l =
      *plan.fb->steps()->Get(static_cast<flatbuffers::uoffset_t>(index))->launch();
  const CudaPlan& cp = *plan.cuda;
  if (l.shared_bytes() > static_cast<uint32_t>(cp.device.max_shared_per_block_optin)) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': kernel '%s' asks %u bytes of shared memory; "
                "this GPU allows %d per block", s.name, v->name, l.shared_bytes(),
                cp.device.max_shared_per_block_optin);
  }
  out->grid[0] = l.grid_x();
  out->grid[1] = l.grid_y();
  out->grid[2] = l.grid_z();
  out->block[0] = l.block_x();
  out->block[1] = l.block_y();
  out->block[2] = l.block_z();
  out->shared_bytes = l.shared_bytes();
  kernels::cuda::workspace_clear_range(*v, out->grid, s.workspace_bytes, &out->clear_offset,
                                       &out->clear_bytes);
  out->cooperative = v->cooperative;
  out->early = v->early_launch && cu::early_launch(*cp.primary.d, cp.device.sm_arch);
  JP_RETURN_IF_ERROR(cp.modules.function(v->name, &out->fn));
  if (out->shared_bytes > kMaxDynamicSharedDefault) {
    JP_RETURN_IF_ERROR(cu::check(*cp.primary.d,
                                 cp.primary.d->FuncSetAttribute(out->fn, cu::kFuncAttrMaxDynamicShared,
                                                                static_cast<int>(out->shared_bytes)),
                                 "raising a kernel's shared memory limit"));
  }
  if (out->cooperative) JP_RETURN_IF_ERROR(check_cooperative(cp, s, v->name, *out));
  if (out->early) {
    // Only a grid the GPU holds at once launches early. A larger one's blocks would start on
    // whichever SMs the previous kernel's last blocks leave first, unevenly, where a plain
    // launch spreads its first wave over an idle GPU. H200, 12 plans (tests/perf/RESULTS.md,
    // session 12): every kernel early, EfficientNet-B0 at batch 8 ran 3% slower than with no
    // early launch; with this rule 3% faster; batch 1 5-12% faster either way; ResNet-50's FP16
    // plan at batch 8 stays 2-3% slower either way.
    uint64_t resident = 0;
    JP_RETURN_IF_ERROR(resident_blocks(cp, *out, &resident));
    out->early = grid_blocks(*out) <= resident;
  }
  return JP_OK;
}

Status bind(jp_plan* plan) {
  CudaPlan& cp = *plan->cuda;
  const cu::Driver* d = nullptr;
  JP_RETURN_IF_ERROR(cu::driver(&d));
  JP_RETURN_IF_ERROR(cu::device_info(*d, 0, &cp.device));
  const fb::Target* target = plan->fb->target();
  const char* target_name = target->name() ? target->name()->c_str() : "";
  if (static_cast<int>(target->sm_arch()) != cp.device.sm_arch) {
    return fail(JP_ERROR_UNSUPPORTED, "the plan was built for sm_%u (target '%s'), but GPU 0 '%s' "
                "is sm_%d: convert the model again with a --target for this GPU",
                target->sm_arch(), target_name, cp.device.name, cp.device.sm_arch);
  }
  cp.primary.d = d;
  cp.primary.device = cp.device.device;
  JP_RETURN_IF_ERROR(cu::check(*d, d->DevicePrimaryCtxRetain(&cp.primary.ctx, cp.device.device),
                               "cuDevicePrimaryCtxRetain"));
  JP_RETURN_IF_ERROR(cu::check(*d, d->CtxSetCurrent(cp.primary.ctx), "cuCtxSetCurrent"));
  JP_RETURN_IF_ERROR(cp.modules.load(*d));
  if (!cp.steps.allocate(plan->steps.size())) {
    return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for %zu CUDA steps", plan->steps.size());
  }
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    if (plan->steps[i].skipped) continue;  // writes only empty tensors: never launched
    JP_RETURN_IF_ERROR(bind_step(*plan, i, &cp.steps[i]));
  }
  if (plan->weights_bytes > 0) {
    char what[96];
    std::snprintf(what, sizeof(what), "allocating %" PRIu64 " bytes of GPU memory for the weights",
                  plan->weights_bytes);
    JP_RETURN_IF_ERROR(cu::check(*d, d->MemAlloc(&cp.weights, plan->weights_bytes), what));
    JP_RETURN_IF_ERROR(cu::check(*d, d->MemcpyHtoD(cp.weights, plan->weights, plan->weights_bytes),
                                 "uploading the weights"));
  }
  return JP_OK;
}

size_t round_up(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// Enqueues one step: the part of its workspace the kernel asks to find cleared (CudaStep's
// clear range, from bind), then the launch (early where the kernel allows it and it follows a
// kernel: not after the memset).
Status launch_step(const cu::Driver& d, const PreparedStep& step, const CudaStep& s,
                   StepPointers* ptrs, cu::CUstream stream, bool early) {
  const bool memset = s.clear_bytes > 0;
  if (memset) {
    JP_RETURN_IF_ERROR(cu::check(
        d, d.MemsetD8Async(reinterpret_cast<cu::CUdeviceptr>(ptrs->workspace) + s.clear_offset, 0,
                           s.clear_bytes, stream),
        "clearing a step workspace"));
  }
  // The driver copies the arguments at launch (and into the graph at capture).
  void* args[] = {ptrs, const_cast<KernelParams*>(&step.params)};
  const cu::CUresult r =
      cu::launch(d, s.fn, s.cooperative, s.grid, s.block, s.shared_bytes, stream, args,
                 early && s.early && !memset);
  if (r != cu::kSuccess) {
    char text[160];
    return fail(JP_ERROR_DEVICE, "launching step '%s': %s", step.name,
                cu::error_text(d, r, text, sizeof text));
  }
  return JP_OK;
}

Status launch_steps(jp_context& ctx, cu::CUstream stream) {
  const jp_plan& plan = *ctx.plan;
  CudaContext& c = *ctx.cuda;
  const cu::Driver& d = *c.d;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].skipped) continue;
    const CudaStep& s = c.plan->steps[i];
    StepPointers& ptrs = c.pointers[i];
    JP_RETURN_IF_ERROR(launch_step(d, plan.steps[i], s, &ptrs, stream, c.early));
  }
  return JP_OK;
}

Status setup_memory(const jp_plan& plan, const jp_context_options* options, jp_context* ctx) {
  CudaContext& c = *ctx->cuda;
  const cu::Driver& d = *c.d;
  if (options != nullptr && options->arena != nullptr) {
    if (options->arena_bytes < plan.arena_bytes ||
        reinterpret_cast<uintptr_t>(options->arena) % plan.arena_alignment != 0) {
      return fail(JP_ERROR_INVALID_ARGUMENT, "caller's GPU arena must hold %" PRIu64 " bytes "
                  "aligned to %" PRIu64, plan.arena_bytes, plan.arena_alignment);
    }
    c.arena = reinterpret_cast<cu::CUdeviceptr>(options->arena);
  } else if (plan.arena_bytes > 0) {
    char what[96];
    std::snprintf(what, sizeof(what), "allocating the %" PRIu64 "-byte arena in GPU memory",
                  plan.arena_bytes);
    JP_RETURN_IF_ERROR(cu::check(d, d.MemAlloc(&c.arena, plan.arena_bytes), what));
    c.owns_arena = true;
  }
  constexpr size_t kAlign = 256;
  size_t total = 0;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    if (plan.tensors[i].storage == fb::Storage::Binding)  // an empty one too: its own pointer
      total += round_up(std::max<size_t>(plan.tensors[i].bytes, 1), kAlign);
  }
  if (!ctx->input_data.allocate(plan.inputs.size()) ||
      !ctx->output_data.allocate(plan.outputs.size()) || !c.input_dev.allocate(plan.inputs.size()) ||
      !c.output_dev.allocate(plan.outputs.size()) || !ctx->tensors.allocate(plan.tensors.size()) ||
      !c.pointers.allocate(plan.steps.size())) {
    return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for the context's tables");
  }
  // After the bindings: one word per output with a run-time extent, copied back after each run.
  const size_t counts_at = total;
  for (size_t i = 0; i < plan.outputs.size(); ++i)
    total += plan.outputs[i].count_tensor >= 0 ? sizeof(int64_t) : 0;
  if (total > 0) {
    char what[96];
    std::snprintf(what, sizeof(what), "allocating %zu bytes of GPU memory for inputs and outputs",
                  total);
    JP_RETURN_IF_ERROR(cu::check(d, d.MemAlloc(&c.bindings, total), what));
    JP_RETURN_IF_ERROR(cu::check(d, d.MemAllocHost(&c.host_io, total),
                                 "allocating pinned host memory for inputs and outputs"));
  }
  if (total > counts_at) {
    c.counts = reinterpret_cast<int64_t*>(static_cast<uint8_t*>(c.host_io) + counts_at);
    std::memset(c.counts, 0, total - counts_at);  // none selected before the first run
  }
  size_t offset = 0;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const TensorInfo& t = plan.tensors[i];
    switch (t.storage) {
      case fb::Storage::Arena:
        ctx->tensors[i] = reinterpret_cast<void*>(c.arena + t.offset);
        break;
      case fb::Storage::Weight:
        ctx->tensors[i] = reinterpret_cast<void*>(c.plan->weights + t.offset);
        break;
      case fb::Storage::Binding: {
        const cu::CUdeviceptr dev = c.bindings + offset;
        uint8_t* host = static_cast<uint8_t*>(c.host_io) + offset;
        offset += round_up(std::max<size_t>(t.bytes, 1), kAlign);
        ctx->tensors[i] = reinterpret_cast<void*>(dev);
        const auto b = static_cast<size_t>(t.binding);
        if (t.is_output) {
          ctx->output_data[b] = host;
          c.output_dev[b] = dev;
        } else {
          ctx->input_data[b] = host;
          c.input_dev[b] = dev;
        }
        break;
      }
    }
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PreparedStep& s = plan.steps[i];
    StepPointers& p = c.pointers[i];
    std::memset(&p, 0, sizeof(p));
    for (uint32_t k = 0; k < s.inputs->size(); ++k) p.in[k] = ctx->tensors[s.inputs->Get(k)];
    for (uint32_t k = 0; k < s.outputs->size(); ++k) p.out[k] = ctx->tensors[s.outputs->Get(k)];
    if (s.workspace_bytes > 0) {
      p.workspace = reinterpret_cast<void*>(c.arena + s.workspace_offset);
      p.workspace_bytes = s.workspace_bytes;
    }
  }
  return JP_OK;
}

}  // namespace

Status bind_cuda_plan(jp_plan* plan) {
  plan->cuda = create<CudaPlan>();
  if (plan->cuda == nullptr) return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory binding a plan");
  const Status status = bind(plan);
  if (status != JP_OK) {
    destroy(plan->cuda);
    plan->cuda = nullptr;
  }
  return status;
}

void destroy_cuda_plan(CudaPlan* cuda) { destroy(cuda); }

Status create_cuda_context(const jp_plan& plan, const jp_context_options* options,
                           jp_context* ctx) {
  ctx->plan = &plan;
  if (plan.cuda == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "the CUDA plan was loaded without a device "
                "(JP_LOAD_NO_DEVICE); it cannot run");
  }
  ctx->cuda = create<CudaContext>();
  if (ctx->cuda == nullptr) return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for a context");
  CudaContext& c = *ctx->cuda;
  c.plan = plan.cuda;
  c.d = plan.cuda->primary.d;
  const cu::Driver& d = *c.d;
  JP_RETURN_IF_ERROR(cu::check(d, d.CtxSetCurrent(plan.cuda->primary.ctx), "cuCtxSetCurrent"));
  const uint32_t flags = options != nullptr ? options->flags : 0u;
  c.device_io = (flags & JP_CONTEXT_DEVICE_IO) != 0;
  c.early = (flags & JP_CONTEXT_NO_EARLY_LAUNCH) == 0;
  if (options != nullptr && options->cuda_stream != nullptr) {
    c.stream = static_cast<cu::CUstream>(options->cuda_stream);
  } else {
    JP_RETURN_IF_ERROR(cu::check(d, d.StreamCreate(&c.stream, cu::kStreamNonBlocking),
                                 "creating the context's stream"));
    c.owns_stream = true;
  }
  JP_RETURN_IF_ERROR(cu::check(d, d.EventCreate(&c.start, cu::kEventDefault), "cuEventCreate"));
  JP_RETURN_IF_ERROR(cu::check(d, d.EventCreate(&c.stop, cu::kEventDefault), "cuEventCreate"));
  JP_RETURN_IF_ERROR(setup_memory(plan, options, ctx));
  bool launches = false;  // no graph for a plan whose steps all write only empty tensors
  for (size_t i = 0; i < plan.steps.size(); ++i) launches = launches || !plan.steps[i].skipped;
  if ((flags & JP_CONTEXT_NO_CUDA_GRAPH) == 0 && launches) {
    JP_RETURN_IF_ERROR(cu::check(d, d.StreamBeginCapture(c.stream, cu::kCaptureModeThreadLocal),
                                 "starting the CUDA graph capture"));
    const Status launched = launch_steps(*ctx, c.stream);
    cu::CUgraph graph = nullptr;
    const cu::CUresult ended = d.StreamEndCapture(c.stream, &graph);
    JP_RETURN_IF_ERROR(launched);
    JP_RETURN_IF_ERROR(cu::check(d, ended, "ending the CUDA graph capture"));
    const cu::CUresult inst = d.GraphInstantiate(&c.graph, graph, 0);
    (void)d.GraphDestroy(graph);
    JP_RETURN_IF_ERROR(cu::check(d, inst, "instantiating the CUDA graph"));
  }
  return JP_OK;
}

void destroy_cuda_context(CudaContext* cuda) { destroy(cuda); }

Status prepare_cuda_observer(jp_context* ctx) {
  const jp_plan& plan = *ctx->plan;
  CudaContext& c = *ctx->cuda;
  const cu::Driver& d = *c.d;
  size_t most = 0;  // the largest tensor a step writes
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (uint32_t t : *plan.steps[i].outputs) most = std::max<size_t>(most, plan.tensors[t].bytes);
  if (most <= c.observed_bytes) return JP_OK;
  JP_RETURN_IF_ERROR(cu::check(d, d.CtxSetCurrent(c.plan->primary.ctx), "cuCtxSetCurrent"));
  if (c.observed != nullptr) (void)d.MemFreeHost(c.observed);
  c.observed = nullptr;
  c.observed_bytes = 0;
  JP_RETURN_IF_ERROR(cu::check(d, d.MemAllocHost(&c.observed, most),
                               "allocating pinned host memory for the step observer"));
  c.observed_bytes = most;
  return JP_OK;
}

// A run with an observer: each step launched on its own, then every tensor it wrote copied to
// the observer's staging and handed to it (the run waits for each step; no graph).
Status observe_cuda_steps(jp_context* ctx) {
  const jp_plan& plan = *ctx->plan;
  CudaContext& c = *ctx->cuda;
  const cu::Driver& d = *c.d;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PreparedStep& step = plan.steps[i];
    if (!step.skipped)
      JP_RETURN_IF_ERROR(launch_step(d, step, c.plan->steps[i], &c.pointers[i], c.stream, false));
    for (uint32_t t : *step.outputs) {
      const TensorInfo& info = plan.tensors[t];
      if (info.bytes > c.observed_bytes) {
        return fail(JP_ERROR_INTERNAL, "step observer: tensor '%s' is larger than its staging",
                    info.name);
      }
      if (info.bytes > 0) {
        const auto src = reinterpret_cast<cu::CUdeviceptr>(ctx->tensors[t]);
        JP_RETURN_IF_ERROR(cu::check(d, d.MemcpyDtoHAsync(c.observed, src, info.bytes, c.stream),
                                     "copying an observed tensor from the GPU"));
      }
      JP_RETURN_IF_ERROR(cu::check(d, d.StreamSynchronize(c.stream), "running an observed step"));
      ctx->observer.fn(ctx->observer.user, static_cast<int32_t>(i), info.name,
                       static_cast<jp_dtype>(info.dtype), info.dims, info.rank, c.observed);
    }
  }
  return JP_OK;
}

Status enqueue_cuda(jp_context* ctx) {
  const jp_plan& plan = *ctx->plan;
  CudaContext& c = *ctx->cuda;
  const cu::Driver& d = *c.d;
  JP_RETURN_IF_ERROR(cu::check(d, d.CtxSetCurrent(c.plan->primary.ctx), "cuCtxSetCurrent"));
  if (!c.device_io) {
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      const bool empty = plan.tensors[plan.inputs[i].tensor].bytes == 0;
      if ((i < 64 && (c.inputs_on_device >> i) & 1u) || empty) continue;
      JP_RETURN_IF_ERROR(cu::check(d, d.MemcpyHtoDAsync(c.input_dev[i], ctx->input_data[i],
                                                        plan.tensors[plan.inputs[i].tensor].bytes,
                                                        c.stream),
                                   "copying an input to the GPU"));
    }
  }
  JP_RETURN_IF_ERROR(cu::check(d, d.EventRecord(c.start, c.stream), "cuEventRecord"));
  if (ctx->observer.fn != nullptr) {
    JP_RETURN_IF_ERROR(observe_cuda_steps(ctx));
  } else if (c.graph != nullptr) {
    JP_RETURN_IF_ERROR(cu::check(d, d.GraphLaunch(c.graph, c.stream), "launching the CUDA graph"));
  } else {
    JP_RETURN_IF_ERROR(launch_steps(*ctx, c.stream));
  }
  JP_RETURN_IF_ERROR(cu::check(d, d.EventRecord(c.stop, c.stream), "cuEventRecord"));
  if (!c.device_io) {
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
      if (plan.tensors[plan.outputs[i].tensor].bytes == 0) continue;  // an empty output
      JP_RETURN_IF_ERROR(cu::check(d, d.MemcpyDtoHAsync(ctx->output_data[i], c.output_dev[i],
                                                        plan.tensors[plan.outputs[i].tensor].bytes,
                                                        c.stream),
                                   "copying an output from the GPU"));
    }
  }
  // Run-time extents come back in either mode: jp_context_output_desc reports them.
  int64_t* count = c.counts;
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const BindingInfo& b = plan.outputs[i];
    if (b.count_tensor < 0) continue;
    const auto src = reinterpret_cast<cu::CUdeviceptr>(ctx->tensors[size_t(b.count_tensor)]);
    JP_RETURN_IF_ERROR(cu::check(d, d.MemcpyDtoHAsync(count++, src, sizeof(int64_t), c.stream),
                                 "copying an output's extent from the GPU"));
  }
  c.queued = true;
  return JP_OK;
}

Status synchronize_cuda(jp_context* ctx) {
  CudaContext& c = *ctx->cuda;
  const cu::Driver& d = *c.d;
  JP_RETURN_IF_ERROR(cu::check(d, d.StreamSynchronize(c.stream), "running the plan on the GPU"));
  if (c.queued) {
    float ms = 0.f;
    if (d.EventElapsedTime(&ms, c.start, c.stop) == cu::kSuccess) c.gpu_ms = ms;
    c.queued = false;
  }
  return JP_OK;
}

float cuda_gpu_time_ms(const jp_context* ctx) { return ctx->cuda->gpu_ms; }

Status profile_cuda_steps(jp_context* ctx, float* ms, int32_t count) {
  const jp_plan& plan = *ctx->plan;
  CudaContext& c = *ctx->cuda;
  const cu::Driver& d = *c.d;
  JP_RETURN_IF_ERROR(cu::check(d, d.CtxSetCurrent(c.plan->primary.ctx), "cuCtxSetCurrent"));
  const size_t n = plan.steps.size();
  if (c.profile_events.size() == 0) {
    if (!c.profile_events.allocate(n + 1)) {
      return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for profiling events");
    }
    for (size_t i = 0; i <= n; ++i) {
      JP_RETURN_IF_ERROR(cu::check(d, d.EventCreate(&c.profile_events[i], cu::kEventDefault),
                                   "cuEventCreate"));
    }
  }
  JP_RETURN_IF_ERROR(cu::check(d, d.EventRecord(c.profile_events[0], c.stream), "cuEventRecord"));
  for (size_t i = 0; i < n; ++i) {
    const CudaStep& s = c.plan->steps[i];
    StepPointers& ptrs = c.pointers[i];
    if (!plan.steps[i].skipped)
      JP_RETURN_IF_ERROR(launch_step(d, plan.steps[i], s, &ptrs, c.stream, c.early));
    JP_RETURN_IF_ERROR(cu::check(d, d.EventRecord(c.profile_events[i + 1], c.stream),
                                 "cuEventRecord"));
  }
  JP_RETURN_IF_ERROR(cu::check(d, d.StreamSynchronize(c.stream), "profiling the steps"));
  for (size_t i = 0; i < n && static_cast<int32_t>(i) < count; ++i) {
    float t = 0.f;
    JP_RETURN_IF_ERROR(cu::check(d, d.EventElapsedTime(&t, c.profile_events[i],
                                                       c.profile_events[i + 1]),
                                 "cuEventElapsedTime"));
    ms[i] = t;
  }
  return JP_OK;
}

void* cuda_device_binding(const jp_context* ctx, bool output, int32_t index) {
  const CudaContext& c = *ctx->cuda;
  return reinterpret_cast<void*>(output ? c.output_dev[static_cast<size_t>(index)]
                                        : c.input_dev[static_cast<size_t>(index)]);
}

bool cuda_device_io(const jp_context* ctx) { return ctx->cuda->device_io; }

int64_t cuda_output_count(const jp_context* ctx, int32_t index) {
  const int64_t* count = ctx->cuda->counts;
  for (int32_t i = 0; i < index; ++i) count += ctx->plan->outputs[size_t(i)].count_tensor >= 0;
  return *count;
}

const char* cuda_device_name(const jp_plan& plan) {
  return plan.cuda != nullptr ? plan.cuda->device.name : "";
}

Status cuda_context_current(const jp_context* ctx, const cu::Driver** d, cu::CUstream* stream) {
  const CudaContext& c = *ctx->cuda;
  if (d != nullptr) *d = c.d;
  if (stream != nullptr) *stream = c.stream;
  return cu::check(*c.d, c.d->CtxSetCurrent(c.plan->primary.ctx), "cuCtxSetCurrent");
}

Status cuda_kernel(const jp_context* ctx, const char* name, cu::CUfunction* out) {
  return ctx->cuda->plan->modules.function(name, out);
}

void cuda_input_written_on_device(jp_context* ctx, int32_t index, bool on) {
  if (index < 0 || index >= 64) return;
  const uint64_t bit = uint64_t(1) << index;
  ctx->cuda->inputs_on_device = on ? ctx->cuda->inputs_on_device | bit
                                   : ctx->cuda->inputs_on_device & ~bit;
}

}  // namespace jetplan::rt
