// GPU plans whose steps read one dtype and write another (IsNaN, IsInf, comparisons: float in,
// bool out) load with the runtime's checks of each step's kernel, which a load without a
// device runs too (check_cuda_steps): the converter loads every GPU plan so, and a plan whose
// kernel disagrees with its tensors is refused there, not on the robot.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

// The attention-mask guard of Hugging Face encoders: scores -> Softmax -> IsNaN -> Where(nan, 0,
// probs); and a comparison (Greater) feeding Where.
ModelBuilder masked_softmax() {
  ModelBuilder m(17);
  m.input("x", {1, 2, 4, 8}).output("y").output("g");
  m.initializer("zero", {}, {0.f});
  attr(m.node("Softmax", {"x"}, {"p"}, "softmax"), "axis", int64_t{-1});
  m.node("IsNaN", {"p"}, {"nan"}, "isnan");
  m.node("Where", {"nan", "zero", "p"}, {"y"}, "where");
  m.node("Greater", {"x", "zero"}, {"pos"}, "greater");
  m.node("Where", {"pos", "x", "zero"}, {"g"}, "relu_where");
  return m;
}

// (The plan contract of convert_ok is the CPU plans'.)
ConvertResult convert_gpu(const ModelBuilder& m) {
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  try {
    return convert_onnx(m.bytes(), "model.onnx", gpu);
  } catch (const ConvertError& e) {
    ADD_FAILURE() << "conversion failed: " << e.what();
  }
  return {};
}

// The status and message of loading `plan` without a device.
std::string load_error(const std::vector<uint8_t>& plan) {
  jp_plan* loaded = nullptr;
  const jp_status status =
      jp_plan_load_buffer(plan.data(), plan.size(), JP_LOAD_COPY | JP_LOAD_NO_DEVICE, &loaded);
  jp_plan_destroy(loaded);
  return status == JP_OK ? "" : jp_last_error();
}

std::string kernel_of(const ConvertResult& r, const std::string& step) {
  const fb::Step* s = find_step(plan_of(r), step);
  return s != nullptr && s->kernel() != nullptr ? s->kernel()->str() : "";
}

TEST(GpuPredicates, IsNaNAndComparisonsOfFloat16LoadWithTheirKernels) {
  const ConvertResult r = convert_gpu(masked_softmax());
  ASSERT_FALSE(r.plan.empty());
  EXPECT_EQ(kernel_of(r, "isnan"), "jp_unary_pred_f16");
  EXPECT_EQ(kernel_of(r, "greater"), "jp_elementwise_cmp_f16");
  EXPECT_EQ(load_error(r.plan), "");
}

TEST(GpuPredicates, ALoadWithoutADeviceRefusesAKernelOfOtherDtypes) {
  ConvertResult r = convert_gpu(masked_softmax());
  ASSERT_FALSE(r.plan.empty());
  // The IsNaN step made to name the float32 kernel (a name of the same length) over its
  // float16 input.
  const std::string from = "jp_unary_pred_f16", to = "jp_unary_pred_f32";
  auto at = std::search(r.plan.begin(), r.plan.end(), from.begin(), from.end());
  ASSERT_NE(at, r.plan.end());
  std::copy(to.begin(), to.end(), at);
  EXPECT_THAT(load_error(r.plan),
              AllOf(HasSubstr("step 'isnan': kernel 'jp_unary_pred_f32' reads Float32 and writes "
                              "Bool"),
                    HasSubstr("are Float16 and Bool")));
}

}  // namespace
}  // namespace jetplan::converter::testing
