#include "runtime/src/execute/context.h"

#include <cinttypes>

#include "runtime/src/cpu/run_steps.h"

namespace jetplan::rt {
namespace {

constexpr size_t kBindingAlignment = 64;

size_t round_up(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

Status setup_arena(const jp_plan& plan, const jp_context_options* options, jp_context* ctx) {
  if (options != nullptr && options->arena != nullptr) {
    if (options->arena_bytes < plan.arena_bytes) {
      return fail(JP_ERROR_INVALID_ARGUMENT,
                  "caller's arena is %zu bytes; the plan needs %" PRIu64, options->arena_bytes,
                  plan.arena_bytes);
    }
    if (reinterpret_cast<uintptr_t>(options->arena) % plan.arena_alignment != 0) {
      return fail(JP_ERROR_INVALID_ARGUMENT, "caller's arena is not %" PRIu64 "-byte aligned",
                  plan.arena_alignment);
    }
    ctx->arena = static_cast<uint8_t*>(options->arena);
    return JP_OK;
  }
  if (plan.arena_bytes == 0) return JP_OK;
  ctx->arena = static_cast<uint8_t*>(allocate(plan.arena_bytes, plan.arena_alignment));
  if (ctx->arena == nullptr) {
    return fail(JP_ERROR_OUT_OF_MEMORY, "cannot allocate the %" PRIu64 "-byte arena",
                plan.arena_bytes);
  }
  ctx->owns_arena = true;
  return JP_OK;
}

Status setup_bindings(const jp_plan& plan, jp_context* ctx) {
  size_t total = 0;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const TensorInfo& t = plan.tensors[i];
    if (t.storage == fb::Storage::Binding) total += round_up(t.bytes, kBindingAlignment);
  }
  if (!ctx->input_data.allocate(plan.inputs.size()) ||
      !ctx->output_data.allocate(plan.outputs.size())) {
    return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for the binding tables");
  }
  // Empty bindings (0 bytes) still get a pointer that is not null, so that callers may pass it
  // to memcpy with a size of 0: a plan whose bindings are all empty gets one aligned block.
  if (total == 0 && plan.inputs.size() + plan.outputs.size() > 0) total = kBindingAlignment;
  if (total > 0) {
    ctx->bindings = static_cast<uint8_t*>(allocate(total, kBindingAlignment));
    if (ctx->bindings == nullptr) {
      return fail(JP_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes of inputs and outputs",
                  total);
    }
  }
  size_t offset = 0;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const TensorInfo& t = plan.tensors[i];
    if (t.storage != fb::Storage::Binding) continue;
    uint8_t* data = ctx->bindings + offset;
    offset += round_up(t.bytes, kBindingAlignment);
    (t.is_output ? ctx->output_data : ctx->input_data)[static_cast<size_t>(t.binding)] = data;
  }
  return JP_OK;
}

}  // namespace

Status create_context(const jp_plan& plan, const jp_context_options* options, jp_context* ctx) {
  ctx->plan = &plan;
  JP_RETURN_IF_ERROR(setup_arena(plan, options, ctx));
  JP_RETURN_IF_ERROR(setup_bindings(plan, ctx));
  if (!ctx->tensors.allocate(plan.tensors.size())) {
    return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for %zu tensor pointers",
                plan.tensors.size());
  }
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const TensorInfo& t = plan.tensors[i];
    switch (t.storage) {
      case fb::Storage::Arena:
        ctx->tensors[i] = ctx->arena + t.offset;
        break;
      case fb::Storage::Weight:
        // Kernels take weights through const pointers; load verified no step writes one.
        ctx->tensors[i] = const_cast<uint8_t*>(plan.weights + t.offset);
        break;
      case fb::Storage::Binding:
        ctx->tensors[i] = (t.is_output ? ctx->output_data : ctx->input_data)[t.binding];
        break;
    }
  }
  return JP_OK;
}

Status run_context(jp_context* ctx) {
  run_cpu_steps(*ctx->plan, ctx->tensors.data(), ctx->arena, ctx->observer);
  return JP_OK;
}

}  // namespace jetplan::rt
