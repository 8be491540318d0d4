// The converter never writes a GPU plan its own runtime refuses: convert_onnx turns a GPU draft
// into bytes only through write_gpu_plan, which loads them with the runtime's loader without a
// device (JP_LOAD_NO_DEVICE: the verifier, every step's prepare, and every check binding makes
// that needs no device) and checks the target's limits. So every GPU plan the test suite
// converts has passed those checks; these tests show that they run and what they catch: a
// spread of models converts for every kind of GPU target and loads so, and drafts made
// inconsistent on purpose, each the way a converter bug would, give a ConvertError and no bytes.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <memory>
#include <string>
#include <vector>

#include "converter/src/import/onnx_import.h"
#include "converter/src/lower/gpu_lower.h"
#include "converter/src/ops/check.h"
#include "converter/src/passes/passes.h"
#include "converter/src/select/targets.h"
#include "kernels/cuda/variants.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/lower/gpu_plan_models.h"

namespace jetplan::converter::testing {
namespace {

// One of each kind of CUDA target (Orin, the smallest Orin, Thor, a datacenter GPU).
const char* const kGpuTargets[] = {"orin-agx", "orin-nano", "thor", "h100"};

// "" when the runtime loads `plan` without a device and every step names a kernel; else why not.
std::string strict_load_error(const std::vector<uint8_t>& plan) {
  jp_plan* loaded = nullptr;
  if (jp_plan_load_buffer(plan.data(), plan.size(), JP_LOAD_COPY | JP_LOAD_NO_DEVICE, &loaded) !=
      JP_OK)
    return jp_last_error();
  std::string why;
  for (int32_t i = 0; i < jp_plan_num_steps(loaded) && why.empty(); ++i) {
    jp_step_desc d{};
    if (jp_plan_step_desc(loaded, i, &d) != JP_OK || d.kernel == nullptr || d.kernel[0] == '\0')
      why = "step " + std::to_string(i) + " names no kernel";
  }
  jp_plan_destroy(loaded);
  return why;
}

TEST(GpuPlanInvariant, EveryModelOfTheSpreadConvertsAndLoadsWithoutADevice) {
  for (const GpuPlanModel& model : gpu_plan_models()) {
    for (const char* target : kGpuTargets) {
      SCOPED_TRACE(model.name + " for " + target);
      ConvertOptions options;
      options.target = target;
      ConvertResult r;
      try {
        r = convert_onnx(model.builder.bytes(), "model.onnx", options);
      } catch (const ConvertError& e) {
        ADD_FAILURE() << "conversion failed: " << e.what();
        continue;
      }
      EXPECT_EQ(strict_load_error(r.plan), "");
      EXPECT_GT(plan_of(r)->steps()->size(), 0u);
    }
  }
}

// Float32 GPU plans (--precision fp32) of the same spread: every one converts for every kind of
// target and loads without a device, and no step but a model's own Cast runs a Float16 kernel.
TEST(GpuPlanInvariant, EveryModelOfTheSpreadConvertsInFloat32) {
  for (const GpuPlanModel& model : gpu_plan_models()) {
    for (const char* target : kGpuTargets) {
      SCOPED_TRACE(model.name + " for " + target);
      ConvertOptions options;
      options.target = target;
      options.precision = ConvertOptions::Precision::kFp32;
      ConvertResult r;
      try {
        r = convert_onnx(model.builder.bytes(), "model.onnx", options);
      } catch (const ConvertError& e) {
        ADD_FAILURE() << "conversion failed: " << e.what();
        continue;
      }
      EXPECT_EQ(strict_load_error(r.plan), "");
      const fb::Plan* plan = plan_of(r);
      ASSERT_GT(plan->steps()->size(), 0u);
      for (const fb::Step* step : *plan->steps()) {
        const std::string kernel = step->kernel() != nullptr ? step->kernel()->str() : "";
        if (kernel.rfind("jp_cast_", 0) == 0) continue;
        EXPECT_EQ(kernel.find("_f16"), std::string::npos) << step->name()->str();
      }
    }
  }
}

// The detection head's FP16 GPU plan: the head Transposes write its Float32 output themselves,
// FP16 in and FP32 out (transposes_write_output_casts), each its rows of the Concat's output
// (concat_in_place); no Cast, Concat or Activation step is left (the Sigmoid is in the head
// convs), for every kind of target.
TEST(GpuPlanInvariant, DetectHeadTransposesWriteTheFloat32OutputInPlace) {
  for (const char* target : kGpuTargets) {
    SCOPED_TRACE(target);
    ConvertOptions options;
    options.target = target;
    const ConvertResult r = convert_onnx(gpu_detect_head().bytes(), "model.onnx", options);
    EXPECT_EQ(strict_load_error(r.plan), "");
    const fb::Plan* plan = plan_of(r);
    int into_output = 0;
    for (const fb::Step* step : *plan->steps()) {
      EXPECT_NE(step->op(), fb::OpFamily::Cast) << step->name()->str();
      EXPECT_NE(step->op(), fb::OpFamily::Concat) << step->name()->str();
      EXPECT_NE(step->op(), fb::OpFamily::Activation) << step->name()->str();
      if (step->op() != fb::OpFamily::Transpose) continue;
      const fb::Tensor* y = plan->tensors()->Get(step->outputs()->Get(0));
      if (y->storage() != fb::Storage::Binding) continue;
      ++into_output;
      EXPECT_EQ(y->dtype(), fb::DType::Float32);
      EXPECT_GT(step->params_as_TransposeParams()->y_block(), 0);
      EXPECT_NE(step->kernel()->str().find("h2f"), std::string::npos) << step->kernel()->str();
    }
    EXPECT_EQ(into_output, 2);
  }
}

// The draft convert_onnx builds for a GPU target, up to its kernel selection (convert.cc's
// order), for tests that change it before write_gpu_plan. The draft borrows its weights from
// the graph, which lives as long as it.
struct GpuDraft {
  std::unique_ptr<Graph> graph;
  PlanDraft draft;
};
GpuDraft selected_gpu_draft(const ModelBuilder& m, const Target& target) {
  GpuDraft out;
  out.graph = std::make_unique<Graph>(import_onnx(m.bytes(), ImportOptions{}));
  Graph& g = *out.graph;
  eliminate_dead_nodes(g);
  check_support(g);
  eliminate_dead_nodes(g);
  remove_identities(g);
  fold_batchnorm(g);
  fuse_patterns(g);
  fuse_attention(g, true);
  fuse(g);
  fuse_pointwise(g);
  legalize(g);
  PlanDraft draft = lower(g);
  gpu_layout(&draft);
  gpu_precision(&draft);
  place_gpu_moves(&draft);
  remove_unused_tensors(&draft);
  alias_views(&draft);
  assign_memory(&draft);
  gpu_select(&draft, target, PlanMetadata{});
  out.draft = std::move(draft);
  return out;
}

// write_gpu_plan's error for `draft` ("" when it wrote the plan, which fails the test).
std::string write_error(const PlanDraft& draft, const Target& target) {
  try {
    const std::vector<uint8_t> bytes = write_gpu_plan(draft, target, PlanMetadata{});
    ADD_FAILURE() << "a plan of " << bytes.size() << " bytes was written";
  } catch (const ConvertError& e) {
    return e.what();
  }
  return "";
}

// The index of the first step whose kernel name ends in `suffix` (the draft's size if none).
size_t step_with_kernel_suffix(const PlanDraft& d, const std::string& suffix) {
  for (size_t i = 0; i < d.steps.size(); ++i) {
    const std::string& k = d.steps[i].kernel;
    if (k.size() > suffix.size() && k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0)
      return i;
  }
  return d.steps.size();
}

TEST(GpuPlanInvariant, AnInconsistentDraftIsNeverWritten) {
  const Target target = find_target("orin-agx");
  const ModelBuilder m = gpu_plan_models().front().builder;  // the conv net
  const GpuDraft selected = selected_gpu_draft(m, target);
  const PlanDraft& good = selected.draft;
  ASSERT_FALSE(write_gpu_plan(good, target, PlanMetadata{}).empty());
  const size_t f16 = step_with_kernel_suffix(good, "_f16");
  ASSERT_LT(f16, good.steps.size());
  const std::string name = good.steps[f16].name;

  PlanDraft d = good;  // a step left without a kernel
  d.steps[f16].kernel.clear();
  EXPECT_THAT(write_error(d, target), HasSubstr("step '" + name + "' (" +
                                                fb::EnumNameOpFamily(d.steps[f16].op.family) +
                                                ") names no CUDA kernel"));

  d = good;  // the kernel of another op family (the first variant of the table that is)
  size_t count = 0;
  const kernels::cuda::KernelVariant* all = kernels::cuda::kernel_variants(&count);
  for (size_t i = 0; i < count; ++i)
    if (all[i].family != static_cast<uint16_t>(d.steps[f16].op.family)) {
      d.steps[f16].kernel = all[i].name;
      break;
    }
  EXPECT_THAT(write_error(d, target), HasSubstr("of another op family"));

  d = good;  // a kernel that reads other dtypes than the step's tensors (the IsNaN case)
  const std::string k = d.steps[f16].kernel;
  const std::string f32 = k.substr(0, k.size() - 4) + "_f32";
  if (kernels::cuda::find_kernel_variant(f32.c_str()) != nullptr) {
    d.steps[f16].kernel = f32;
    EXPECT_THAT(write_error(d, target), AllOf(HasSubstr("reads Float32"), HasSubstr("Float16")));
  }

  d = good;  // a kernel this libjetplan does not have
  d.steps[f16].kernel = "jp_no_such_kernel_f16";
  EXPECT_THAT(write_error(d, target), HasSubstr("which this libjetplan does not have"));

  d = good;  // more shared memory a block than the target has
  const fb::LaunchConfig& l = d.steps[f16].launch;
  d.steps[f16].launch =
      fb::LaunchConfig(l.grid_x(), l.grid_y(), l.grid_z(), l.block_x(), l.block_y(), l.block_z(),
                       target.device.max_shared_per_block + 16, l.split_k());
  EXPECT_THAT(write_error(d, target),
              AllOf(HasSubstr("step '" + name + "' asks"), HasSubstr("the target allows")));

}

// An output of run-time extent (a NonMaxSuppression's rows: the CUDA backend copies its count
// back after each run) is written when its count is an Int64 [1] arena tensor, and refused as
// load would refuse it when the draft names any other tensor.
TEST(GpuPlanInvariant, AnOutputOfRunTimeExtentNeedsAnInt64CountInTheArena) {
  ModelBuilder m(13);
  m.input("x", {4, 8}).input("ids", {4}, onnx::TensorProto::INT64).output("y");
  m.initializer_i64("at", {1}, {2});
  attr(m.node("Gather", {"ids", "at"}, {"pick"}, "pick"), "axis", int64_t{0});
  attr(m.node("Gather", {"x", "pick"}, {"y"}, "rows"), "axis", int64_t{0});
  const Target target = find_target("orin-agx");
  GpuDraft selected = selected_gpu_draft(m, target);
  PlanDraft& d = selected.draft;
  int32_t pick = -1, x = -1;
  for (size_t i = 0; i < d.tensors.size(); ++i) {
    if (d.tensors[i].name == "pick") pick = static_cast<int32_t>(i);
    if (d.tensors[i].name == "x") x = static_cast<int32_t>(i);
  }
  ASSERT_GE(pick, 0);
  ASSERT_GE(x, 0);
  d.outputs[0].count_tensor = pick;
  assign_memory(&d);
  const std::vector<uint8_t> plan = write_gpu_plan(d, target, PlanMetadata{});
  EXPECT_TRUE(loads_without_device(plan));
  d.outputs[0].count_tensor = x;  // a Float32 input binding
  EXPECT_THAT(write_error(d, target), HasSubstr("output 'y' has an invalid count tensor"));
}

}  // namespace
}  // namespace jetplan::converter::testing
