// jetplan/plan_steps.h: the prepared steps of a loaded plan, as the converter's kernel selection
// reads them (family, the kernel params prepare resolved, the tensors' dtypes).
#include <gtest/gtest.h>

#include <string>

#include "jetplan/plan_steps.h"
#include "kernels/cuda/select.h"
#include "tests/runtime/conv_relu_plan.h"
#include "tests/runtime/load_checks.h"

namespace jetplan::testing {
namespace {

TEST(PlanSteps, DescribesEachPreparedStep) {
  jp_plan* plan = load_plan_bytes(build_plan(conv_relu_plan()));
  ASSERT_NE(plan, nullptr);
  kernels::cuda::StepDesc conv;
  ASSERT_EQ(describe_step(plan, 0, &conv), JP_OK) << jp_last_error();
  EXPECT_EQ(conv.family, static_cast<uint16_t>(fb::OpFamily::Conv));
  EXPECT_EQ(conv.num_inputs, 3);
  EXPECT_EQ(conv.num_outputs, 1);
  for (int i = 0; i < conv.num_inputs; ++i) EXPECT_EQ(conv.input_dtypes[i], kernels::DType::kFloat32);
  EXPECT_EQ(conv.output_dtypes[0], kernels::DType::kFloat32);
  ASSERT_NE(conv.params, nullptr);
  const auto& p = *static_cast<const kernels::ConvParams*>(conv.params);
  EXPECT_EQ(p.batch, 1);
  EXPECT_EQ(p.in_channels, 2);
  EXPECT_EQ(p.out_channels, 2);
  EXPECT_EQ(p.spatial_rank, 2);
  EXPECT_EQ(p.kernel[0], 1);
  EXPECT_EQ(p.kernel[2], 1);  // past the step's rank: the neutral extent
  EXPECT_TRUE(p.has_bias);

  kernels::cuda::StepDesc relu;
  ASSERT_EQ(describe_step(plan, 1, &relu), JP_OK) << jp_last_error();
  EXPECT_EQ(relu.family, static_cast<uint16_t>(fb::OpFamily::Activation));
  EXPECT_EQ(static_cast<const kernels::ActivationParams*>(relu.params)->count, 18);
  jp_plan_destroy(plan);
}

TEST(PlanSteps, RefusesBadArguments) {
  jp_plan* plan = load_plan_bytes(build_plan(conv_relu_plan()));
  ASSERT_NE(plan, nullptr);
  kernels::cuda::StepDesc desc;
  EXPECT_EQ(describe_step(plan, 2, &desc), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(jp_last_error()).find("step index 2 is out of range"), std::string::npos)
      << jp_last_error();
  EXPECT_EQ(describe_step(plan, -1, &desc), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(describe_step(nullptr, 0, &desc), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(describe_step(plan, 0, nullptr), JP_ERROR_INVALID_ARGUMENT);
  jp_plan_destroy(plan);
}

}  // namespace
}  // namespace jetplan::testing
