// Load-time verification. A plan is untrusted input (it may come over the air): everything run
// will touch is checked here once, so run can trust it. Order matters for the messages: the
// identifier and the schema version are read (safely) before the full FlatBuffers verification,
// so a plan of another version is reported as such rather than as corrupt.
#include <cinttypes>
#include <cstring>

#include "runtime/src/cpu/run_steps.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/load/plan.h"

namespace jetplan::rt {

size_t dtype_size(fb::DType dtype) {
  switch (dtype) {
    case fb::DType::Float32: return 4;
    case fb::DType::Float16: return 2;
    case fb::DType::Int8: return 1;
    case fb::DType::UInt8: return 1;
    case fb::DType::Int32: return 4;
    case fb::DType::Int64: return 8;
    case fb::DType::Bool: return 1;
    case fb::DType::Float64: return 8;
    case fb::DType::Int16: return 2;
    case fb::DType::UInt16: return 2;
    case fb::DType::UInt32: return 4;
    case fb::DType::UInt64: return 8;
    case fb::DType::BFloat16: return 2;
  }
  return 0;
}

namespace {

constexpr uint64_t kMaxDim = uint64_t{1} << 40;

// Empty tensors at a step: a step whose outputs are all empty is skipped (*skip); one that
// reads an empty tensor must write only empty ones, so that no kernel ever sees an empty input
// with work to do (the converter drops empty Concat inputs).
Status check_empty_tensors(const jp_plan& plan, const char* name, const fb::Step& step,
                           bool* skip) {
  const TensorInfo* written = nullptr;
  for (uint32_t o = 0; o < step.outputs()->size(); ++o) {
    const TensorInfo& t = plan.tensors[step.outputs()->Get(o)];
    if (t.elements != 0) written = &t;
  }
  *skip = written == nullptr;
  if (*skip) return JP_OK;
  for (uint32_t i = 0; i < step.inputs()->size(); ++i) {
    const TensorInfo& t = plan.tensors[step.inputs()->Get(i)];
    if (t.elements == 0) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "step '%s' reads the empty tensor '%s' but writes '%s', which is not empty "
                  "(a step reading an empty tensor may write only empty ones)",
                  name, t.name, written->name);
    }
  }
  return JP_OK;
}

bool add_overflows(uint64_t a, uint64_t b, uint64_t* sum) {
  return __builtin_add_overflow(a, b, sum);
}

Status check_header(const uint8_t* data, size_t size) {
  if (size < 8) {
    return fail(JP_ERROR_INVALID_PLAN, "plan is %zu bytes: too short to be a jetplan plan", size);
  }
  if (!flatbuffers::BufferHasIdentifier(data, fb::PlanIdentifier())) {
    char id[5] = {0};
    for (int i = 0; i < 4; ++i) {
      const char c = static_cast<char>(data[4 + i]);
      id[i] = (c >= 32 && c < 127) ? c : '?';
    }
    return fail(JP_ERROR_INVALID_PLAN,
                "not a jetplan plan: file identifier is '%s', expected '%s'", id,
                fb::PlanIdentifier());
  }
  // Read schema_version through a verifier that checks only the root table and that field.
  flatbuffers::Verifier verifier(data, size);
  const flatbuffers::uoffset_t root = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(data);
  if (root > size - 4) {
    return fail(JP_ERROR_INVALID_PLAN, "plan root offset %u is outside the %zu-byte buffer",
                root, size);
  }
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(data + root);
  if (!table->VerifyTableStart(verifier) ||
      !table->VerifyField<uint32_t>(verifier, fb::Plan::VT_SCHEMA_VERSION, 4)) {
    return fail(JP_ERROR_INVALID_PLAN, "plan header is corrupt (root table does not verify)");
  }
  const uint32_t version = table->GetField<uint32_t>(fb::Plan::VT_SCHEMA_VERSION, 0);
  if (version != JP_SCHEMA_VERSION) {
    return fail(JP_ERROR_VERSION_MISMATCH,
                "plan schema version %u, but this runtime reads version %d: convert the model "
                "again with a matching jetplan-convert",
                version, JP_SCHEMA_VERSION);
  }
  return JP_OK;
}

Status check_target(jp_plan* plan) {
  const fb::Target* target = plan->fb->target();
  if (target == nullptr) return fail(JP_ERROR_INVALID_PLAN, "plan has no target");
  const char* name = target->name() ? target->name()->c_str() : "";
  switch (target->backend()) {
    case fb::Backend::CPU:
      plan->backend = JP_BACKEND_CPU;
      return JP_OK;
    case fb::Backend::CUDA:
      // Verified like any plan here; jp_plan_load_* then binds it to the GPU (backend_cuda.h).
      if (target->sm_arch() == 0) {
        return fail(JP_ERROR_INVALID_PLAN, "CUDA plan for '%s' names no SM architecture", name);
      }
      plan->backend = JP_BACKEND_CUDA;
      return JP_OK;
  }
  return fail(JP_ERROR_UNSUPPORTED, "plan targets unknown backend %d ('%s')",
              static_cast<int>(target->backend()), name);
}

Status check_weights(jp_plan* plan) {
  const flatbuffers::Vector<uint8_t>* weights = plan->fb->weights();
  if (weights == nullptr || weights->size() == 0) return JP_OK;
  const uintptr_t address = reinterpret_cast<uintptr_t>(weights->data());
  if (address % kWeightAlignment != 0) {
    return fail(JP_ERROR_INVALID_PLAN,
                "plan weights start at buffer offset %zu, not a multiple of %" PRIu64,
                static_cast<size_t>(weights->data() - plan->data), kWeightAlignment);
  }
  plan->weights = weights->data();
  plan->weights_bytes = weights->size();
  return JP_OK;
}

// A tensor's bytes lie in its region (the arena, the weights) at an aligned offset.
Status check_range(const TensorInfo& info, uint64_t alignment, uint64_t region_bytes,
                   const char* range, const char* region) {
  uint64_t end = 0;
  if (info.offset % alignment != 0 || add_overflows(info.offset, info.bytes, &end) ||
      end > region_bytes) {
    return fail(JP_ERROR_INVALID_PLAN,
                "tensor '%s': %s range [%" PRIu64 ", +%" PRIu64
                ") is misaligned or outside the %" PRIu64 "-byte %s",
                info.name, range, info.offset, info.bytes, region_bytes, region);
  }
  return JP_OK;
}

Status check_tensor(const jp_plan& plan, uint32_t index, const fb::Tensor* t, TensorInfo* info) {
  if (t == nullptr || t->name() == nullptr || t->shape() == nullptr) {
    return fail(JP_ERROR_INVALID_PLAN, "tensor %u lacks a name or a shape", index);
  }
  info->name = t->name()->c_str();
  const auto* shape = t->shape();
  // The verifier checks a vector's length prefix, not that 8-byte elements are 8-byte aligned.
  if (shape->size() != 0 && reinterpret_cast<uintptr_t>(shape->data()) % alignof(int64_t) != 0) {
    return fail(JP_ERROR_INVALID_PLAN, "tensor '%s': shape is misaligned", info->name);
  }
  if (shape->size() > static_cast<uint32_t>(kMaxRank)) {
    return fail(JP_ERROR_INVALID_PLAN, "tensor '%s' has rank %u; at most %d is supported",
                info->name, shape->size(), kMaxRank);
  }
  info->rank = static_cast<int32_t>(shape->size());
  uint64_t elements = 1;
  for (int32_t d = 0; d < info->rank; ++d) {
    const int64_t dim = shape->Get(d);
    // An extent of 0 is an empty tensor (0 bytes; the steps writing one never run).
    if (dim < 0 || static_cast<uint64_t>(dim) > kMaxDim) {
      return fail(JP_ERROR_INVALID_PLAN, "tensor '%s' has invalid dim %d = %" PRId64,
                  info->name, d, dim);
    }
    info->dims[d] = dim;
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(dim), &elements) ||
        elements > kMaxDim) {
      return fail(JP_ERROR_INVALID_PLAN, "tensor '%s' is too large", info->name);
    }
  }
  info->elements = elements;
  info->dtype = t->dtype();
  info->layout = t->layout();
  if (info->layout != fb::Layout::Any && info->layout != fb::Layout::NCHW &&
      info->layout != fb::Layout::NHWC) {
    return fail(JP_ERROR_INVALID_PLAN, "tensor '%s' has unknown layout %d", info->name,
                static_cast<int>(info->layout));
  }
  const size_t elem = dtype_size(info->dtype);
  if (elem == 0) {
    return fail(JP_ERROR_INVALID_PLAN, "tensor '%s' has unknown dtype %d", info->name,
                static_cast<int>(info->dtype));
  }
  info->bytes = elements * elem;
  if (t->size_bytes() != info->bytes) {
    return fail(JP_ERROR_INVALID_PLAN,
                "tensor '%s': size_bytes %" PRIu64 " does not match its shape (%" PRIu64 ")",
                info->name, t->size_bytes(), info->bytes);
  }
  info->storage = t->storage();
  info->offset = t->offset();
  info->binding = -1;
  info->view_of = t->view_of();
  if (info->view_of != -1 && info->storage != fb::Storage::Arena) {
    return fail(JP_ERROR_INVALID_PLAN, "tensor '%s' is a view but not an arena tensor",
                info->name);
  }
  switch (info->storage) {
    case fb::Storage::Arena:
      return check_range(*info, plan.arena_alignment, plan.arena_bytes, "arena", "arena");
    case fb::Storage::Weight:
      return check_range(*info, kWeightAlignment, plan.weights_bytes, "weight", "weights");
    case fb::Storage::Binding:
      return JP_OK;  // matched against Plan.inputs / Plan.outputs in check_bindings
  }
  return fail(JP_ERROR_INVALID_PLAN, "tensor '%s' has unknown storage %d", info->name,
              static_cast<int>(info->storage));
}

Status check_binding_list(jp_plan* plan, bool outputs) {
  const char* what = outputs ? "output" : "input";
  const auto* list = outputs ? plan->fb->outputs() : plan->fb->inputs();
  if (list == nullptr) return fail(JP_ERROR_INVALID_PLAN, "plan has no %s list", what);
  Array<BindingInfo>& infos = outputs ? plan->outputs : plan->inputs;
  if (list->size() > INT32_MAX / 2) return fail(JP_ERROR_INVALID_PLAN, "too many %ss", what);
  if (!infos.allocate(list->size())) {
    return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for %u %ss", list->size(), what);
  }
  for (uint32_t i = 0; i < list->size(); ++i) {
    const fb::BindingDesc* desc = list->Get(i);
    if (desc == nullptr || desc->name() == nullptr) {
      return fail(JP_ERROR_INVALID_PLAN, "%s %u has no name", what, i);
    }
    const char* name = desc->name()->c_str();
    if (desc->tensor() >= plan->tensors.size()) {
      return fail(JP_ERROR_INVALID_PLAN, "%s '%s' names tensor %u of %zu", what, name,
                  desc->tensor(), plan->tensors.size());
    }
    TensorInfo& t = plan->tensors[desc->tensor()];
    if (t.storage != fb::Storage::Binding) {
      return fail(JP_ERROR_INVALID_PLAN, "%s '%s': tensor '%s' is not a binding", what, name,
                  t.name);
    }
    if (t.binding != -1) return fail(JP_ERROR_INVALID_PLAN, "tensor '%s' is bound twice", t.name);
    const auto* fb_tensor = plan->fb->tensors()->Get(desc->tensor());
    if (fb_tensor->binding() != static_cast<int32_t>(i)) {
      return fail(JP_ERROR_INVALID_PLAN, "%s '%s': tensor '%s' has binding %d, expected %u",
                  what, name, t.name, fb_tensor->binding(), i);
    }
    for (uint32_t j = 0; j < i; ++j) {
      if (std::strcmp(infos[j].name, name) == 0) {
        return fail(JP_ERROR_INVALID_PLAN, "two %ss are named '%s'", what, name);
      }
    }
    t.binding = static_cast<int32_t>(i);
    t.is_output = outputs;
    const int32_t count = desc->count_tensor();
    if (count != -1) {
      // A run-time leading extent: only outputs have one, held in an Int64 [1] arena tensor.
      if (!outputs || count < 0 || static_cast<size_t>(count) >= plan->tensors.size() ||
          plan->tensors[count].storage != fb::Storage::Arena ||
          plan->tensors[count].dtype != fb::DType::Int64 || plan->tensors[count].elements != 1 ||
          t.rank < 1) {
        return fail(JP_ERROR_INVALID_PLAN, "%s '%s' has an invalid count tensor %d", what, name,
                    count);
      }
    }
    infos[i] = BindingInfo{name, desc->tensor(), count};
  }
  return JP_OK;
}

// The plan's list of `what`s (tensor, step) is there, and `table` gets one entry per element.
template <typename FbList, typename T>
Status allocate_table(const FbList* list, const char* what, Array<T>* table) {
  if (list == nullptr) return fail(JP_ERROR_INVALID_PLAN, "plan has no %s list", what);
  if (!table->allocate(list->size())) {
    return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for %u %ss", list->size(), what);
  }
  return JP_OK;
}

Status check_tensors_and_bindings(jp_plan* plan) {
  const auto* tensors = plan->fb->tensors();
  JP_RETURN_IF_ERROR(allocate_table(tensors, "tensor", &plan->tensors));
  for (uint32_t i = 0; i < tensors->size(); ++i) {
    JP_RETURN_IF_ERROR(check_tensor(*plan, i, tensors->Get(i), &plan->tensors[i]));
  }
  JP_RETURN_IF_ERROR(check_binding_list(plan, /*outputs=*/false));
  JP_RETURN_IF_ERROR(check_binding_list(plan, /*outputs=*/true));
  for (size_t i = 0; i < plan->tensors.size(); ++i) {
    const TensorInfo& t = plan->tensors[i];
    if (t.storage == fb::Storage::Binding && t.binding < 0) {
      return fail(JP_ERROR_INVALID_PLAN, "tensor '%s' is a binding but no input or output",
                  t.name);
    }
    if (t.view_of == -1) continue;
    // A view reads the bytes of a tensor with bytes of its own, from its first byte on.
    const TensorInfo* of = t.view_of >= 0 && static_cast<size_t>(t.view_of) < plan->tensors.size()
                               ? &plan->tensors[static_cast<size_t>(t.view_of)]
                               : nullptr;
    if (of == nullptr || of->storage != fb::Storage::Arena || of->view_of != -1 ||
        of->offset != t.offset || t.bytes > of->bytes) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "tensor '%s' is a view of tensor %d, which is no arena tensor of its own at "
                  "the same offset and at least as large",
                  t.name, t.view_of);
    }
  }
  return JP_OK;
}

Status check_index_list(const jp_plan& plan, const char* step, const char* what,
                        const flatbuffers::Vector<uint32_t>* list) {
  if (list == nullptr || list->size() == 0) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s' has no %s", step, what);
  }
  for (uint32_t i = 0; i < list->size(); ++i) {
    if (list->Get(i) >= plan.tensors.size()) {
      return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s %u is tensor %u of %zu", step, what, i,
                  list->Get(i), plan.tensors.size());
    }
  }
  return JP_OK;
}

Status check_steps(jp_plan* plan) {
  const auto* steps = plan->fb->steps();
  JP_RETURN_IF_ERROR(allocate_table(steps, "step", &plan->steps));
  for (uint32_t i = 0; i < steps->size(); ++i) {
    const fb::Step* step = steps->Get(i);
    if (step == nullptr) return fail(JP_ERROR_INVALID_PLAN, "step %u is missing", i);
    const char* name = step->name() ? step->name()->c_str() : "";
    const OpFamilyEntry* family = find_op_family(step->op());
    if (family == nullptr) {
      return fail(JP_ERROR_UNSUPPORTED, "step %u '%s' has op family %d, unknown to this runtime",
                  i, name, static_cast<int>(step->op()));
    }
    if (step->params_type() != family->params_type) {
      return fail(JP_ERROR_INVALID_PLAN, "step %u '%s' (%s) carries the wrong params table", i,
                  name, family->name);
    }
    // The verifier accepts a union type with no table; every prepare function reads the table.
    if (step->params() == nullptr) {
      return fail(JP_ERROR_INVALID_PLAN, "step %u '%s' (%s) has no params table", i, name,
                  family->name);
    }
    JP_RETURN_IF_ERROR(check_index_list(*plan, name, "inputs", step->inputs()));
    JP_RETURN_IF_ERROR(check_index_list(*plan, name, "outputs", step->outputs()));
    for (uint32_t o = 0; o < step->outputs()->size(); ++o) {
      const TensorInfo& t = plan->tensors[step->outputs()->Get(o)];
      const bool writable = (t.storage == fb::Storage::Arena && t.view_of == -1) ||
                            (t.storage == fb::Storage::Binding && t.is_output);
      if (!writable) {
        return fail(JP_ERROR_INVALID_PLAN,
                    "step '%s' writes tensor '%s', which is a weight, a graph input or a view",
                    name, t.name);
      }
    }
    uint64_t workspace_end = 0;
    if (step->workspace_bytes() != 0 &&
        (step->workspace_offset() % plan->arena_alignment != 0 ||
         add_overflows(step->workspace_offset(), step->workspace_bytes(), &workspace_end) ||
         workspace_end > plan->arena_bytes)) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "step '%s': workspace [%" PRIu64 ", +%" PRIu64
                  ") is misaligned or outside the %" PRIu64 "-byte arena",
                  name, step->workspace_offset(), step->workspace_bytes(), plan->arena_bytes);
    }
    PreparedStep& prepared = plan->steps[i];
    prepared.workspace_offset = step->workspace_offset();
    prepared.workspace_bytes = step->workspace_bytes();
    prepared.op = step->op();
    prepared.run_cpu = family->run_cpu;
    prepared.name = name;
    prepared.inputs = step->inputs();
    prepared.outputs = step->outputs();
    bool skip = false;
    JP_RETURN_IF_ERROR(check_empty_tensors(*plan, name, *step, &skip));
    prepared.skipped = skip;
    if (skip) {
      prepared.run_cpu = run_nothing_cpu;
      continue;
    }
    JP_RETURN_IF_ERROR(family->prepare(*plan, *step, &prepared));
  }
  return JP_OK;
}

}  // namespace

Status load_plan(jp_plan* plan) {
  JP_RETURN_IF_ERROR(check_header(plan->data, plan->size));
  flatbuffers::Verifier verifier(plan->data, plan->size);
  if (!fb::VerifyPlanBuffer(verifier)) {
    return fail(JP_ERROR_INVALID_PLAN,
                "plan is corrupt or truncated (%zu bytes): FlatBuffers verification failed",
                plan->size);
  }
  plan->fb = fb::GetPlan(plan->data);
  JP_RETURN_IF_ERROR(check_target(plan));
  const uint32_t alignment = plan->fb->arena_alignment();
  if (alignment < 16 || alignment > 4096 || (alignment & (alignment - 1)) != 0) {
    return fail(JP_ERROR_INVALID_PLAN, "arena alignment %u is not a power of two in [16, 4096]",
                alignment);
  }
  plan->arena_alignment = alignment;
  plan->arena_bytes = plan->fb->arena_bytes();
  JP_RETURN_IF_ERROR(check_weights(plan));
  JP_RETURN_IF_ERROR(check_tensors_and_bindings(plan));
  return check_steps(plan);
}

}  // namespace jetplan::rt
