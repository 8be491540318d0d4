// Kernel selection for GPU plans (gpu_lower.h). The step parameters come from the runtime's own
// loader, so selection sees exactly the structs the kernels will be launched with.
#include <jetplan/jetplan.h>
#include <jetplan/plan_steps.h>

#include <algorithm>
#include <memory>

#include "converter/src/ir/error.h"
#include "converter/src/lower/gpu_lower.h"

namespace jetplan::converter {
namespace {

struct PlanDeleter {
  void operator()(jp_plan* p) const { jp_plan_destroy(p); }
};
using LoadedPlan = std::unique_ptr<jp_plan, PlanDeleter>;

// Loads plan bytes with the runtime's verifier and prepare functions (no device involved);
// `flags` adds JP_LOAD_KERNELS_PENDING where the steps' kernels are not chosen yet.
LoadedPlan load(const std::vector<uint8_t>& bytes, const std::string& target, uint32_t flags) {
  jp_plan* plan = nullptr;
  if (jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_NO_DEVICE | flags, &plan) != JP_OK)
    fail("target ", target, ": the runtime's loader refuses the GPU plan: ", jp_last_error());
  return LoadedPlan(plan);
}

// The dtype a step's kernel variant is chosen for: its first floating output (then input),
// else its first output's.
kernels::DType data_dtype(const kernels::cuda::StepDesc& d) {
  auto floating = [](kernels::DType t) {
    return t == kernels::DType::kFloat16 || t == kernels::DType::kFloat32;
  };
  for (int i = 0; i < d.num_outputs; ++i)
    if (floating(d.output_dtypes[i])) return d.output_dtypes[i];
  for (int i = 0; i < d.num_inputs; ++i)
    if (floating(d.input_dtypes[i])) return d.input_dtypes[i];
  return d.num_outputs > 0 ? d.output_dtypes[0] : kernels::DType::kFloat32;
}

[[noreturn]] void fail_missing(const Target& target, const std::vector<std::string>& missing) {
  std::string list;
  for (const std::string& m : missing) list += (list.empty() ? "" : "; ") + m;
  fail("target ", target.plan.name, ": no CUDA kernel for ", missing.size(),
       missing.size() == 1 ? " step: " : " steps: ", list);
}

std::string step_label(const DraftStep& step) {
  return cat("'", step.name, "' (", fb::EnumNameOpFamily(step.op.family), ")");
}

}  // namespace

void gpu_select(PlanDraft* draft, const Target& target, const PlanMetadata& metadata) {
  // Families without CUDA kernels first: the loader's prepare refuses their Float16 steps, one
  // at a time; this names them all.
  std::vector<std::string> missing;
  for (const DraftStep& step : draft->steps)
    if (!kernels::cuda::has_selector(static_cast<uint16_t>(step.op.family)))
      missing.push_back(step_label(step) + ": no CUDA kernel for this op family yet");
  if (!missing.empty()) fail_missing(target, missing);

  const LoadedPlan plan = load(serialize_plan(*draft, target.plan, metadata), target.plan.name,
                               JP_LOAD_KERNELS_PENDING);
  const auto loaded_steps = static_cast<size_t>(jp_plan_num_steps(plan.get()));
  if (loaded_steps != draft->steps.size())
    fail("internal error: the loaded GPU plan has ", loaded_steps, " steps, the draft ",
         draft->steps.size());
  bool workspace_changed = false;
  std::vector<size_t> cast_back;
  for (size_t i = 0; i < draft->steps.size(); ++i) {
    DraftStep& step = draft->steps[i];
    if (step_is_skipped(plan.get(), static_cast<int32_t>(i))) continue;  // writes only empties
    kernels::cuda::StepDesc desc;
    if (describe_step(plan.get(), static_cast<int32_t>(i), &desc) != JP_OK)
      fail("internal error: step ", i, " of the loaded GPU plan: ", jp_last_error());
    desc.dtype = data_dtype(desc);
    kernels::cuda::LaunchChoice choice;
    std::string why;
    if (!kernels::cuda::select_kernel(desc, target.device, &choice, &why)) {
      // A float32 output written by its FP16 producer (gpu_precision's output-cast epilogue)
      // that no variant writes: the producer writes FP16 and a Cast follows, as elsewhere.
      if (desc.num_outputs == 1 && desc.output_dtypes[0] == kernels::DType::kFloat32 &&
          desc.num_inputs > 0 && desc.input_dtypes[0] == kernels::DType::kFloat16 &&
          writes_output_cast(step.op.family)) {
        cast_back.push_back(i);
        continue;
      }
      missing.push_back(step_label(step) + ": " + why);
      continue;
    }
    step.kernel = choice.variant->name;
    step.launch = fb::LaunchConfig(choice.grid[0], choice.grid[1], choice.grid[2],
                                   choice.block[0], choice.block[1], choice.block[2],
                                   choice.shared_bytes, choice.split_k);
    // The CPU twin's need (verified at load) and the CUDA variant's, whichever is larger.
    const uint64_t workspace = std::max(step.op.workspace_bytes, choice.workspace_bytes);
    workspace_changed |= workspace != step.op.workspace_bytes;
    step.op.workspace_bytes = workspace;
  }
  if (!missing.empty()) fail_missing(target, missing);
  if (!cast_back.empty()) {  // new steps and tensors: place memory and select again
    for (size_t i : cast_back) gpu_output_cast_fallback(draft, i);
    assign_memory(draft);
    gpu_select(draft, target, metadata);
    return;
  }
  if (workspace_changed) assign_memory(draft);
}

void check_gpu_plan(const std::vector<uint8_t>& plan, const Target& target) {
  load(plan, target.plan.name, 0);
  // What binding checks against the device, checked against the target's description of it.
  const fb::Plan* p = fb::GetPlan(plan.data());
  if (p->target() == nullptr || p->target()->sm_arch() != target.plan.sm_arch)
    fail("internal error: the GPU plan names another SM architecture than target ",
         target.plan.name, "'s sm_", target.plan.sm_arch);
  const uint32_t max_shared = target.device.max_shared_per_block;
  for (const fb::Step* step : *p->steps())
    if (max_shared != 0 && step->launch() != nullptr && step->launch()->shared_bytes() > max_shared)
      fail("target ", target.plan.name, ": step '", step->name()->str(), "' asks ",
           step->launch()->shared_bytes(), " bytes of shared memory a block; the target allows ",
           max_shared);
}

std::vector<uint8_t> write_gpu_plan(const PlanDraft& draft, const Target& target,
                                    const PlanMetadata& metadata) {
  std::vector<uint8_t> plan = serialize_plan(draft, target.plan, metadata);
  check_gpu_plan(plan, target);
  return plan;
}

}  // namespace jetplan::converter
