// The C API: argument checks, ownership and the translation to the C++ core.
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <ctime>

#include "jetplan/plan_steps.h"
#include "runtime/src/cuda/backend_cuda.h"
#include "runtime/src/execute/context.h"
#include "runtime/src/load/plan.h"

using jetplan::rt::fail;
using jetplan::rt::Status;

namespace {

Status finish_load(jp_plan* plan, jp_plan** out, uint32_t flags) {
  Status status = jetplan::rt::load_plan(plan);
  if (status == JP_OK && plan->backend == JP_BACKEND_CUDA) {
    status = (flags & JP_LOAD_NO_DEVICE) != 0
                 ? jetplan::rt::check_cuda_steps(*plan, (flags & JP_LOAD_KERNELS_PENDING) != 0)
                 : jetplan::rt::bind_cuda_plan(plan);
  }
  if (status != JP_OK) {
    jetplan::rt::destroy(plan);
    return status;
  }
  *out = plan;
  return JP_OK;
}

Status describe(const jp_plan* plan, const jetplan::rt::Array<jetplan::rt::BindingInfo>& list,
                const char* what, int32_t index, jp_tensor_desc* out) {
  if (plan == nullptr || out == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "%s description: null plan or output", what);
  }
  if (index < 0 || static_cast<size_t>(index) >= list.size()) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "%s index %d is out of range (the plan has %zu)",
                what, index, list.size());
  }
  const jetplan::rt::TensorInfo& t = plan->tensors[list[static_cast<size_t>(index)].tensor];
  std::memset(out, 0, sizeof(*out));
  out->name = list[static_cast<size_t>(index)].name;
  out->dtype = static_cast<jp_dtype>(t.dtype);
  out->rank = t.rank;
  for (int32_t d = 0; d < t.rank; ++d) out->dims[d] = t.dims[d];
  out->bytes = t.bytes;
  return JP_OK;
}

Status find(const jetplan::rt::Array<jetplan::rt::BindingInfo>& list, const char* what,
            const char* name, int32_t* index) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (std::strcmp(list[i].name, name) == 0) {
      *index = static_cast<int32_t>(i);
      return JP_OK;
    }
  }
  return fail(JP_ERROR_NOT_FOUND, "the plan has no %s named '%s'", what, name);
}

bool device_io(const jp_context* ctx) {
  return ctx->cuda != nullptr && jetplan::rt::cuda_device_io(ctx);
}

// jp_context_device_input / _output: the device address of a CUDA context's binding.
Status device_binding(const jp_context* ctx, bool output, int32_t index, void** device_ptr) {
  const char* what = output ? "output" : "input";
  if (ctx == nullptr || device_ptr == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_context_device_%s: null argument", what);
  }
  if (ctx->cuda == nullptr) return fail(JP_ERROR_UNSUPPORTED, "device %s: a CPU plan", what);
  const size_t count = output ? ctx->plan->outputs.size() : ctx->plan->inputs.size();
  if (index < 0 || static_cast<size_t>(index) >= count) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "%s index %d is out of range", what, index);
  }
  *device_ptr = jetplan::rt::cuda_device_binding(ctx, output, index);
  return JP_OK;
}

}  // namespace

static_assert(static_cast<int>(jetplan::fb::DType::Float32) == JP_FLOAT32 &&
                  static_cast<int>(jetplan::fb::DType::Float16) == JP_FLOAT16 &&
                  static_cast<int>(jetplan::fb::DType::Int8) == JP_INT8 &&
                  static_cast<int>(jetplan::fb::DType::UInt8) == JP_UINT8 &&
                  static_cast<int>(jetplan::fb::DType::Int32) == JP_INT32 &&
                  static_cast<int>(jetplan::fb::DType::Int64) == JP_INT64 &&
                  static_cast<int>(jetplan::fb::DType::Bool) == JP_BOOL &&
                  static_cast<int>(jetplan::fb::DType::Float64) == JP_FLOAT64 &&
                  static_cast<int>(jetplan::fb::DType::Int16) == JP_INT16 &&
                  static_cast<int>(jetplan::fb::DType::UInt16) == JP_UINT16 &&
                  static_cast<int>(jetplan::fb::DType::UInt32) == JP_UINT32 &&
                  static_cast<int>(jetplan::fb::DType::UInt64) == JP_UINT64 &&
                  static_cast<int>(jetplan::fb::DType::BFloat16) == JP_BFLOAT16 &&
                  static_cast<int>(jetplan::fb::DType::MAX) == JP_BFLOAT16,
              "jp_dtype must mirror fb::DType");

extern "C" {

jp_status jp_plan_load_file(const char* path, jp_plan** out) {
  if (path == nullptr || out == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_plan_load_file: null path or output");
  }
  *out = nullptr;
  FILE* file = std::fopen(path, "rb");
  if (file == nullptr) return fail(JP_ERROR_IO, "cannot open plan file '%s'", path);
  long size = -1;
  if (std::fseek(file, 0, SEEK_END) == 0) size = std::ftell(file);
  if (size < 0 || std::fseek(file, 0, SEEK_SET) != 0) {
    std::fclose(file);
    return fail(JP_ERROR_IO, "cannot read plan file '%s'", path);
  }
  jp_plan* plan = jetplan::rt::create<jp_plan>();
  if (plan == nullptr) {
    std::fclose(file);
    return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory loading '%s'", path);
  }
  const size_t bytes = static_cast<size_t>(size);
  // One spare byte so that an empty file still gets a buffer.
  plan->owned = jetplan::rt::allocate(bytes + 1, jetplan::rt::kWeightAlignment);
  if (plan->owned == nullptr) {
    std::fclose(file);
    jetplan::rt::destroy(plan);
    return fail(JP_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes for plan '%s'", bytes, path);
  }
  const size_t read = std::fread(plan->owned, 1, bytes, file);
  std::fclose(file);
  if (read != bytes) {
    jetplan::rt::destroy(plan);
    return fail(JP_ERROR_IO, "short read of plan file '%s' (%zu of %zu bytes)", path, read,
                bytes);
  }
  plan->data = static_cast<const uint8_t*>(plan->owned);
  plan->size = bytes;
  return finish_load(plan, out, 0);
}

jp_status jp_plan_load_buffer(const void* data, size_t size, uint32_t flags, jp_plan** out) {
  if (out == nullptr || (data == nullptr && size != 0)) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_plan_load_buffer: null buffer or output");
  }
  *out = nullptr;
  if ((flags & ~(JP_LOAD_BORROW | JP_LOAD_NO_DEVICE | JP_LOAD_KERNELS_PENDING)) != 0) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_plan_load_buffer: unknown flags 0x%x", flags);
  }
  if ((flags & JP_LOAD_KERNELS_PENDING) != 0 && (flags & JP_LOAD_NO_DEVICE) == 0) {
    return fail(JP_ERROR_INVALID_ARGUMENT,
                "jp_plan_load_buffer: JP_LOAD_KERNELS_PENDING needs JP_LOAD_NO_DEVICE");
  }
  jp_plan* plan = jetplan::rt::create<jp_plan>();
  if (plan == nullptr) return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory loading a plan");
  if ((flags & JP_LOAD_BORROW) != 0) {
    if (reinterpret_cast<uintptr_t>(data) % jetplan::rt::kWeightAlignment != 0) {
      jetplan::rt::destroy(plan);
      return fail(JP_ERROR_INVALID_ARGUMENT,
                  "a borrowed plan buffer must be 256-byte aligned (weights are used in place)");
    }
    plan->data = static_cast<const uint8_t*>(data);
  } else {
    plan->owned = jetplan::rt::allocate(size + 1, jetplan::rt::kWeightAlignment);
    if (plan->owned == nullptr) {
      jetplan::rt::destroy(plan);
      return fail(JP_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes for a plan", size);
    }
    if (size != 0) std::memcpy(plan->owned, data, size);
    plan->data = static_cast<const uint8_t*>(plan->owned);
  }
  plan->size = size;
  return finish_load(plan, out, flags);
}

void jp_plan_destroy(jp_plan* plan) { jetplan::rt::destroy(plan); }

int32_t jp_plan_num_inputs(const jp_plan* plan) {
  return plan ? static_cast<int32_t>(plan->inputs.size()) : 0;
}

int32_t jp_plan_num_outputs(const jp_plan* plan) {
  return plan ? static_cast<int32_t>(plan->outputs.size()) : 0;
}

jp_status jp_plan_input_desc(const jp_plan* plan, int32_t index, jp_tensor_desc* out) {
  if (plan == nullptr) return fail(JP_ERROR_INVALID_ARGUMENT, "input description: null plan");
  return describe(plan, plan->inputs, "input", index, out);
}

jp_status jp_plan_output_desc(const jp_plan* plan, int32_t index, jp_tensor_desc* out) {
  if (plan == nullptr) return fail(JP_ERROR_INVALID_ARGUMENT, "output description: null plan");
  return describe(plan, plan->outputs, "output", index, out);
}

jp_status jp_plan_find_input(const jp_plan* plan, const char* name, int32_t* index) {
  if (plan == nullptr || name == nullptr || index == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_plan_find_input: null argument");
  }
  return find(plan->inputs, "input", name, index);
}

jp_status jp_plan_find_output(const jp_plan* plan, const char* name, int32_t* index) {
  if (plan == nullptr || name == nullptr || index == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_plan_find_output: null argument");
  }
  return find(plan->outputs, "output", name, index);
}

size_t jp_plan_arena_bytes(const jp_plan* plan) { return plan ? plan->arena_bytes : 0; }
size_t jp_plan_arena_alignment(const jp_plan* plan) { return plan ? plan->arena_alignment : 0; }
jp_backend jp_plan_backend(const jp_plan* plan) { return plan ? plan->backend : JP_BACKEND_CPU; }
int32_t jp_plan_num_steps(const jp_plan* plan) {
  return plan ? static_cast<int32_t>(plan->steps.size()) : 0;
}

jp_status jp_context_create(const jp_plan* plan, const jp_context_options* options,
                            jp_context** out) {
  if (plan == nullptr || out == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_context_create: null plan or output");
  }
  *out = nullptr;
  jp_context* ctx = jetplan::rt::create<jp_context>();
  if (ctx == nullptr) return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for a context");
  const Status status = plan->backend == JP_BACKEND_CUDA
                            ? jetplan::rt::create_cuda_context(*plan, options, ctx)
                            : jetplan::rt::create_context(*plan, options, ctx);
  if (status != JP_OK) {
    jetplan::rt::destroy(ctx);
    return status;
  }
  *out = ctx;
  return JP_OK;
}

void jp_context_destroy(jp_context* ctx) { jetplan::rt::destroy(ctx); }

jp_status jp_context_set_input(jp_context* ctx, int32_t index, const void* data, size_t bytes) {
  if (ctx == nullptr || (data == nullptr && bytes != 0)) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_context_set_input: null context or data");
  }
  const jp_plan& plan = *ctx->plan;
  if (index < 0 || static_cast<size_t>(index) >= plan.inputs.size()) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "input index %d is out of range (the plan has %zu)",
                index, plan.inputs.size());
  }
  const jetplan::rt::BindingInfo& input = plan.inputs[static_cast<size_t>(index)];
  const jetplan::rt::TensorInfo& t = plan.tensors[input.tensor];
  if (bytes != t.bytes) {
    return fail(JP_ERROR_SHAPE_MISMATCH, "input '%s' takes %" PRIu64 " bytes, got %zu",
                input.name, t.bytes, bytes);
  }
  if (device_io(ctx)) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "input '%s': the context keeps its inputs in GPU "
                "memory (JP_CONTEXT_DEVICE_IO); write them at jp_context_device_input", input.name);
  }
  // An empty input (bytes == 0) has nothing to copy; its data may be null.
  if (bytes != 0) std::memcpy(ctx->input_data[static_cast<size_t>(index)], data, bytes);
  return JP_OK;
}

jp_status jp_context_run(jp_context* ctx) {
  if (ctx == nullptr) return fail(JP_ERROR_INVALID_ARGUMENT, "jp_context_run: null context");
  if (ctx->cuda == nullptr) return jetplan::rt::run_context(ctx);
  JP_RETURN_IF_ERROR(jetplan::rt::enqueue_cuda(ctx));
  return jetplan::rt::synchronize_cuda(ctx);
}

jp_status jp_context_enqueue(jp_context* ctx) {
  if (ctx == nullptr) return fail(JP_ERROR_INVALID_ARGUMENT, "jp_context_enqueue: null context");
  if (ctx->cuda == nullptr) return jetplan::rt::run_context(ctx);
  return jetplan::rt::enqueue_cuda(ctx);
}

jp_status jp_context_synchronize(jp_context* ctx) {
  if (ctx == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_context_synchronize: null context");
  }
  return ctx->cuda == nullptr ? JP_OK : jetplan::rt::synchronize_cuda(ctx);
}

jp_status jp_context_set_step_observer(jp_context* ctx, jp_step_observer_fn fn, void* user) {
  if (ctx == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_context_set_step_observer: null context");
  }
  // A CUDA context observes with its steps launched one by one and each tensor copied to pinned
  // host memory, allocated here (backend_cuda.h observe_cuda_steps).
  if (ctx->cuda != nullptr && fn != nullptr) {
    JP_RETURN_IF_ERROR(jetplan::rt::prepare_cuda_observer(ctx));
  }
  ctx->observer.fn = fn;
  ctx->observer.user = fn != nullptr ? user : nullptr;
  return JP_OK;
}

jp_status jp_context_gpu_time_ms(const jp_context* ctx, float* ms) {
  if (ctx == nullptr || ms == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_context_gpu_time_ms: null argument");
  }
  if (ctx->cuda == nullptr) {
    return fail(JP_ERROR_UNSUPPORTED, "GPU time: the context runs a CPU plan");
  }
  const float t = jetplan::rt::cuda_gpu_time_ms(ctx);
  if (t < 0.f) return fail(JP_ERROR_NOT_FOUND, "GPU time: no run has completed yet");
  *ms = t;
  return JP_OK;
}

jp_status jp_context_profile_steps(jp_context* ctx, float* ms, int32_t count) {
  if (ctx == nullptr || (ms == nullptr && count > 0)) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_context_profile_steps: null argument");
  }
  if (ctx->cuda != nullptr) return jetplan::rt::profile_cuda_steps(ctx, ms, count);
  const jp_plan& plan = *ctx->plan;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const jetplan::rt::PreparedStep& step = plan.steps[i];
    timespec a{}, b{};
    clock_gettime(CLOCK_MONOTONIC, &a);
    step.run_cpu(step, ctx->tensors.data(),
                 step.workspace_bytes != 0 ? ctx->arena + step.workspace_offset : nullptr);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (static_cast<int32_t>(i) < count) {
      ms[i] = static_cast<float>((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) * 1e-6);
    }
  }
  return JP_OK;
}

jp_status jp_context_device_input(const jp_context* ctx, int32_t index, void** device_ptr) {
  return device_binding(ctx, /*output=*/false, index, device_ptr);
}

jp_status jp_context_device_output(const jp_context* ctx, int32_t index, void** device_ptr) {
  return device_binding(ctx, /*output=*/true, index, device_ptr);
}

jp_status jp_plan_step_desc(const jp_plan* plan, int32_t index, jp_step_desc* out) {
  if (plan == nullptr || out == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_plan_step_desc: null argument");
  }
  if (index < 0 || static_cast<size_t>(index) >= plan->steps.size()) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "step index %d is out of range (the plan has %zu)",
                index, plan->steps.size());
  }
  const jetplan::fb::Step* step = plan->fb->steps()->Get(static_cast<uint32_t>(index));
  out->name = plan->steps[static_cast<size_t>(index)].name;
  out->op = jetplan::fb::EnumNameOpFamily(plan->steps[static_cast<size_t>(index)].op);
  out->kernel = step->kernel() != nullptr ? step->kernel()->c_str() : "";
  return JP_OK;
}

jp_status jp_cuda_device(jp_device_desc* out) {
  if (out == nullptr) return fail(JP_ERROR_INVALID_ARGUMENT, "jp_cuda_device: null out");
  *out = jp_device_desc{};
  const jetplan::rt::cu::Driver* d = nullptr;
  JP_RETURN_IF_ERROR(jetplan::rt::cu::driver(&d));
  jetplan::rt::cu::DeviceInfo info;
  JP_RETURN_IF_ERROR(jetplan::rt::cu::device_info(*d, 0, &info));
  std::snprintf(out->name, sizeof(out->name), "%s", info.name);
  out->sm_arch = info.sm_arch;
  out->sm_count = info.sm_count;
  out->total_memory = info.total_memory;
  return JP_OK;
}

const char* jp_plan_device_name(const jp_plan* plan) {
  if (plan == nullptr) return "";
  return plan->backend == JP_BACKEND_CUDA ? jetplan::rt::cuda_device_name(*plan) : "cpu";
}

jp_status jp_context_get_output(const jp_context* ctx, int32_t index, const void** data,
                                size_t* bytes) {
  if (ctx == nullptr || data == nullptr) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "jp_context_get_output: null context or data");
  }
  jp_tensor_desc desc;
  JP_RETURN_IF_ERROR(jp_context_output_desc(ctx, index, &desc));
  if (device_io(ctx)) {
    return fail(JP_ERROR_INVALID_ARGUMENT, "output %d: the context keeps its outputs in GPU "
                "memory (JP_CONTEXT_DEVICE_IO); read them at jp_context_device_output", index);
  }
  *data = ctx->output_data[static_cast<size_t>(index)];
  if (bytes != nullptr) *bytes = desc.bytes;
  return JP_OK;
}

jp_status jp_context_output_desc(const jp_context* ctx, int32_t index, jp_tensor_desc* out) {
  if (ctx == nullptr) return fail(JP_ERROR_INVALID_ARGUMENT, "output description: null context");
  const jp_plan& plan = *ctx->plan;
  JP_RETURN_IF_ERROR(describe(&plan, plan.outputs, "output", index, out));
  const jetplan::rt::BindingInfo& binding = plan.outputs[static_cast<size_t>(index)];
  if (binding.count_tensor >= 0) {
    // The kernel wrote the extent into the arena; a value out of range is clamped, never trusted.
    int64_t count = 0;
    if (ctx->cuda != nullptr) count = jetplan::rt::cuda_output_count(ctx, index);
    else std::memcpy(&count, ctx->tensors[static_cast<size_t>(binding.count_tensor)], sizeof(count));
    const int64_t capacity = out->dims[0];
    if (count < 0) count = 0;
    if (count > capacity) count = capacity;
    out->bytes = out->bytes / static_cast<size_t>(capacity) * static_cast<size_t>(count);
    out->dims[0] = count;
  }
  return JP_OK;
}

}  // extern "C"
