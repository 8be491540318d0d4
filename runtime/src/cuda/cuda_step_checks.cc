#include "runtime/src/cuda/cuda_step_checks.h"

#include <cinttypes>

#include "kernels/cuda/launch.h"
#include "runtime/src/cuda/backend_cuda.h"

namespace jetplan::rt {
namespace {

// The launch configuration against the CUDA limits and the kernel's needs (no device).
Status check_launch(const PreparedStep& s, const fb::Step& step,
                    const kernels::cuda::KernelVariant& v) {
  const fb::LaunchConfig* l = step.launch();
  if (l == nullptr) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': kernel '%s' has no launch configuration",
                s.name, v.name);
  }
  const uint64_t threads = uint64_t{l->block_x()} * l->block_y() * l->block_z();
  if (threads == 0 || threads > 1024 || l->block_z() > 64 || l->grid_x() == 0 ||
      l->grid_y() == 0 || l->grid_z() == 0 || l->grid_x() > 0x7fffffffu ||
      l->grid_y() > 65535 || l->grid_z() > 65535) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': launch grid %ux%ux%u block %ux%ux%u is outside the CUDA limits",
                s.name, l->grid_x(), l->grid_y(), l->grid_z(), l->block_x(), l->block_y(),
                l->block_z());
  }
  if (v.block_threads != 0 && threads != v.block_threads) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': kernel '%s' runs %u-thread blocks, the plan "
                "launches %" PRIu64, s.name, v.name, v.block_threads, threads);
  }
  if (l->shared_bytes() < v.shared_bytes) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': kernel '%s' needs %u bytes of shared memory, "
                "the plan gives %u", s.name, v.name, v.shared_bytes, l->shared_bytes());
  }
  return JP_OK;
}

}  // namespace

// What a step asks of its kernel that needs no device: the kernel exists in this libjetplan, is
// of the step's family, takes the step's input and output counts and reads and writes its
// dtypes, and the launch fits it. *variant: the kernel.
Status check_step_kernel(const jp_plan& plan, size_t index,
                         const kernels::cuda::KernelVariant** variant) {
  const PreparedStep& s = plan.steps[index];
  const fb::Step& step = *plan.fb->steps()->Get(static_cast<flatbuffers::uoffset_t>(index));
  const char* name = step.kernel() ? step.kernel()->c_str() : "";
  if (name[0] == '\0') {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s' (%s) names no CUDA kernel", s.name,
                fb::EnumNameOpFamily(s.op));
  }
  const kernels::cuda::KernelVariant* v = kernels::cuda::find_kernel_variant(name);
  if (v == nullptr) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s' names CUDA kernel '%s', which this libjetplan "
                "does not have (a plan from a newer converter?)", s.name, name);
  }
  if (v->family != static_cast<uint16_t>(s.op)) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s' (%s) names kernel '%s' of another op family",
                s.name, fb::EnumNameOpFamily(s.op), name);
  }
  if (s.inputs->size() > static_cast<uint32_t>(kernels::cuda::kMaxStepInputs) ||
      s.outputs->size() > static_cast<uint32_t>(kernels::cuda::kMaxStepOutputs) ||
      s.outputs->size() == 0) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': %u inputs and %u outputs are more than a CUDA "
                "step takes", s.name, s.inputs->size(), s.outputs->size());
  }
  if (v->dtype != kernels::cuda::kAnyDType) {
    const uint8_t out_dtype = v->out_dtype != kernels::cuda::kAnyDType ? v->out_dtype : v->dtype;
    const TensorInfo& y = plan.tensors[s.outputs->Get(0)];
    const TensorInfo* x = s.inputs->size() > 0 ? &plan.tensors[s.inputs->Get(0)] : nullptr;
    if ((x != nullptr && static_cast<uint8_t>(x->dtype) != v->dtype) ||
        static_cast<uint8_t>(y.dtype) != out_dtype) {
      return fail(JP_ERROR_INVALID_PLAN, "step '%s': kernel '%s' reads %s and writes %s, but the "
                  "step's tensors '%s' and '%s' are %s and %s", s.name, name,
                  fb::EnumNameDType(static_cast<fb::DType>(v->dtype)),
                  fb::EnumNameDType(static_cast<fb::DType>(out_dtype)), x ? x->name : "",
                  y.name, x ? fb::EnumNameDType(x->dtype) : "-", fb::EnumNameDType(y.dtype));
    }
  }
  // bind() holds the plan's target to the GPU's arch, so this holds the kernel to both.
  const uint32_t target_sm = plan.fb->target() ? plan.fb->target()->sm_arch() : 0;
  if (v->sm_only != 0 && v->sm_only != target_sm) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': kernel '%s' runs only on sm_%u GPUs, but the "
                "plan is for sm_%u", s.name, name, unsigned(v->sm_only), unsigned(target_sm));
  }
  JP_RETURN_IF_ERROR(check_launch(s, step, *v));
  *variant = v;
  return JP_OK;
}

Status check_cuda_steps(const jp_plan& plan, bool kernels_pending) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const fb::Step& step = *plan.fb->steps()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const bool named = step.kernel() != nullptr && step.kernel()->size() > 0;
    if ((!named && kernels_pending) || plan.steps[i].skipped) continue;
    const kernels::cuda::KernelVariant* v = nullptr;
    JP_RETURN_IF_ERROR(check_step_kernel(plan, i, &v));
  }
  return JP_OK;
}

}  // namespace jetplan::rt
