// DeformConv (converter/src/ops/deform_conv.cc) end to end in process: the step and its params,
// zero offsets and a mask of ones giving the plain Conv's plan result, the refusals, and GPU plans
// (their kernel chosen). ONNX's reference checks the arithmetic (tests/conformance's node tests).
#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

// x [1, 4, 6, 7] (graph input), w [6, 2, 3, 3], b [6], offset and mask graph inputs; group 2,
// offset_group 2, pads 1, stride 1.
ModelBuilder deform_model(bool with_mask = true) {
  ModelBuilder m(19);
  m.input("x", {1, 4, 6, 7}).input("offset", {1, 36, 6, 7});
  if (with_mask) m.input("mask", {1, 18, 6, 7});
  m.output("y");
  m.random("w", {6, 2, 3, 3}).random("b", {6});
  std::vector<std::string> in = {"x", "w", "offset", "b"};
  if (with_mask) in.push_back("mask");
  auto& n = m.node("DeformConv", in, {"y"}, "dcn");
  attr(n, "group", int64_t{2});
  attr(n, "offset_group", int64_t{2});
  attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  return m;
}

// The same weights as a plain Conv.
ModelBuilder conv_model() {
  ModelBuilder m(19);
  m.input("x", {1, 4, 6, 7}).output("y");
  m.random("w", {6, 2, 3, 3}).random("b", {6});
  auto& n = m.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  attr(n, "group", int64_t{2});
  attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  return m;
}

TEST(DeformConv, ZeroOffsetsAndUnitMaskAreThePlainConv) {
  std::vector<float> x(168);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 7) % 13) / 6.f - 1.f;
  const std::vector<float> offset(36 * 42, 0.f), mask(18 * 42, 1.f);
  const std::vector<uint8_t> bytes = converted_plan(deform_model());
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  const fb::Step* s = first_step(plan, OpFamily::DeformConv);
  ASSERT_NE(s, nullptr);
  const auto* p = s->params_as_DeformConvParams();
  EXPECT_EQ(p->group(), 2);
  EXPECT_EQ(p->offset_group(), 2);
  EXPECT_TRUE(p->has_bias() && p->has_mask());
  EXPECT_EQ(s->inputs()->size(), 5u);
  const std::vector<PlanOutput> got = run_plan(bytes, {x, offset, mask});
  const std::vector<PlanOutput> want = run_plan(converted_plan(conv_model()), {x});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(want.size(), 1u);
  const std::vector<float> g = got[0].as<float>(), w = want[0].as<float>();
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-5 * (1 + std::fabs(w[i]))) << i;
  // Without a mask the step reads four inputs.
  const std::vector<uint8_t> unmasked_bytes = converted_plan(deform_model(false));
  const fb::Step* unmasked = first_step(plan_of(unmasked_bytes), OpFamily::DeformConv);
  ASSERT_NE(unmasked, nullptr);
  EXPECT_EQ(unmasked->inputs()->size(), 4u);
  EXPECT_FALSE(unmasked->params_as_DeformConvParams()->has_mask());
}

TEST(DeformConv, Refusals) {
  ModelBuilder wrong_offset(19);
  wrong_offset.input("x", {1, 2, 5, 5}).input("offset", {1, 9, 3, 3}).output("y");
  wrong_offset.random("w", {2, 2, 3, 3});
  wrong_offset.node("DeformConv", {"x", "w", "offset"}, {"y"}, "dcn");
  EXPECT_THAT(convert_error(wrong_offset), HasSubstr("offset 'offset' is [1,9,3,3], not [1,18,3,3]"));
  ModelBuilder three_d(19);
  three_d.input("x", {1, 2, 4, 4, 4}).input("offset", {1, 24, 4, 4, 4}).output("y");
  three_d.random("w", {2, 2, 1, 1, 1});
  three_d.node("DeformConv", {"x", "w", "offset"}, {"y"}, "dcn");
  EXPECT_THAT(convert_error(three_d), HasSubstr("is not supported (2-D"));
  ModelBuilder kernel_mismatch(19);
  kernel_mismatch.input("x", {1, 2, 5, 5}).input("offset", {1, 18, 3, 3}).output("y");
  kernel_mismatch.random("w", {2, 2, 3, 3});
  attr(kernel_mismatch.node("DeformConv", {"x", "w", "offset"}, {"y"}, "dcn"), "kernel_shape",
       std::vector<int64_t>{2, 2});
  EXPECT_THAT(convert_error(kernel_mismatch), HasSubstr("kernel_shape [2,2] differs from the weight [2,2,3,3]"));
}

TEST(DeformConv, GpuPlansSelectItsKernel) {
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  for (auto precision : {ConvertOptions::Precision::kFp16, ConvertOptions::Precision::kFp32}) {
    gpu.precision = precision;
    ConvertResult r;
    try {
      r = convert_onnx(deform_model().bytes(), "model.onnx", gpu);
    } catch (const ConvertError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    const fb::Step* s = first_step(plan_of(r.plan), OpFamily::DeformConv);
    ASSERT_NE(s, nullptr);
    ASSERT_NE(s->kernel(), nullptr);
    EXPECT_EQ(s->kernel()->str(), precision == ConvertOptions::Precision::kFp16
                                      ? "jp_deform_conv_f16"
                                      : "jp_deform_conv_f32");
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
