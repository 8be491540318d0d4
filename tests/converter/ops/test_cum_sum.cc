// CumSum and CumProd (converter/src/ops/cum_sum.cc) end to end in process: the axis input
// (negative too), exclusive and reverse, int64 data, the refusals, GPU plans (their kernels
// selected), and CumProd folded when its x is constant.
#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

ModelBuilder cum_sum_model(int elem, int64_t axis, int64_t exclusive, int64_t reverse,
                           bool product = false) {
  ModelBuilder m(product ? 26 : 14);
  m.input("x", {2, 3}, elem).output("y", elem);
  m.initializer_i64("axis", {}, {axis});
  auto& n = m.node(product ? "CumProd" : "CumSum", {"x", "axis"}, {"y"}, "cumsum");
  attr(n, "exclusive", exclusive);
  attr(n, "reverse", reverse);
  return m;
}

TEST(CumSum, AxisExclusiveReverse) {
  // x = [[1, 2, 3], [4, 5, 6]]
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const struct {
    int64_t axis, exclusive, reverse;
    std::vector<float> want;
  } cases[] = {
      {0, 0, 0, {1, 2, 3, 5, 7, 9}},
      {1, 0, 0, {1, 3, 6, 4, 9, 15}},
      {-1, 1, 0, {0, 1, 3, 0, 4, 9}},
      {-1, 0, 1, {6, 5, 3, 15, 11, 6}},
      {0, 1, 1, {4, 5, 6, 0, 0, 0}},
  };
  for (const auto& c : cases) {
    const std::vector<uint8_t> bytes =
        converted_plan(cum_sum_model(onnx::TensorProto::FLOAT, c.axis, c.exclusive, c.reverse));
    const fb::Plan* plan = plan_of(bytes);
    ASSERT_NE(plan, nullptr);
    const fb::Step* s = first_step(plan, OpFamily::CumSum);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->inputs()->size(), 1u);  // the axis lives in the params
    EXPECT_EQ(s->params_as_CumSumParams()->axis(), c.axis < 0 ? c.axis + 2 : c.axis);
    const std::vector<PlanOutput> out = run_plan(bytes, {x});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_THAT(out[0].as<float>(), ElementsAreArray(c.want)) << "axis " << c.axis;
  }
}

TEST(CumSum, Int64Data) {
  const std::vector<int64_t> x = {1, -2, 3, 40000000000, 5, 6};
  const std::vector<uint8_t> bytes = converted_plan(cum_sum_model(onnx::TensorProto::INT64, 1, 0, 0));
  const std::vector<PlanOutput> out = run_plan_inputs(bytes, {{x.data(), x.size() * 8}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].as<int64_t>(), ElementsAre(1, -1, 2, 40000000000, 40000000005, 40000000011));
}

TEST(CumSum, Refusals) {
  ModelBuilder runtime_axis(14);
  runtime_axis.input("x", {2, 3}).input("axis", {}, onnx::TensorProto::INT64).output("y");
  runtime_axis.node("CumSum", {"x", "axis"}, {"y"}, "cumsum");
  EXPECT_THAT(convert_error(runtime_axis),
              HasSubstr("'cumsum' (CumSum): its axis input is computed at run time"));
  EXPECT_THAT(convert_error(cum_sum_model(onnx::TensorProto::UINT32, 0, 0, 0)),
              HasSubstr("CumSum on uint32 is not supported"));
  EXPECT_THAT(convert_error(cum_sum_model(onnx::TensorProto::FLOAT, 2, 0, 0)),
              HasSubstr("'cumsum' (CumSum)"));
}

TEST(CumSum, GpuPlansSelectItsKernels) {
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  for (int elem : {onnx::TensorProto::FLOAT, onnx::TensorProto::INT32, onnx::TensorProto::INT64,
                   onnx::TensorProto::DOUBLE}) {
    // The converter loads every GPU plan it writes through the runtime's device-independent
    // checks (check_gpu_plan); the CPU plan contract does not apply.
    ConvertResult r;
    try {
      r = convert_onnx(cum_sum_model(elem, 1, 1, 1).bytes(), "model.onnx", gpu);
    } catch (const ConvertError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    const fb::Plan* plan = plan_of(r.plan);
    ASSERT_NE(plan, nullptr);
    const fb::Step* s = first_step(plan, OpFamily::CumSum);
    ASSERT_NE(s, nullptr);
    ASSERT_NE(s->kernel(), nullptr);
    EXPECT_THAT(s->kernel()->str(), HasSubstr(elem == onnx::TensorProto::FLOAT    ? "cum_sum_f16"
                                              : elem == onnx::TensorProto::INT32  ? "cum_sum_i32"
                                              : elem == onnx::TensorProto::DOUBLE ? "cum_sum_f64"
                                                                                  : "cum_sum_i64"));
  }
}

TEST(CumProd, AxisExclusiveReverse) {
  // x = [[1, 2, 3], [4, 5, 6]]
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const struct {
    int64_t axis, exclusive, reverse;
    std::vector<float> want;
  } cases[] = {
      {0, 0, 0, {1, 2, 3, 4, 10, 18}},
      {1, 0, 0, {1, 2, 6, 4, 20, 120}},
      {-1, 1, 0, {1, 1, 2, 1, 4, 20}},
      {-1, 0, 1, {6, 6, 3, 120, 30, 6}},
      {0, 1, 1, {4, 5, 6, 1, 1, 1}},
  };
  for (const auto& c : cases) {
    const std::vector<uint8_t> bytes = converted_plan(
        cum_sum_model(onnx::TensorProto::FLOAT, c.axis, c.exclusive, c.reverse, true));
    const fb::Plan* plan = plan_of(bytes);
    ASSERT_NE(plan, nullptr);
    const fb::Step* s = first_step(plan, OpFamily::CumSum);
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->params_as_CumSumParams()->product());
    EXPECT_EQ(s->params_as_CumSumParams()->axis(), c.axis < 0 ? c.axis + 2 : c.axis);
    const std::vector<PlanOutput> out = run_plan(bytes, {x});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_THAT(out[0].as<float>(), ElementsAreArray(c.want)) << "axis " << c.axis;
  }
  // A CumSum step says nothing of products: old plans read as sums.
  const std::vector<uint8_t> sum = converted_plan(cum_sum_model(onnx::TensorProto::FLOAT, 0, 0, 0));
  EXPECT_FALSE(first_step(plan_of(sum), OpFamily::CumSum)->params_as_CumSumParams()->product());
}

TEST(CumProd, Int32WrapsAndRefusals) {
  const std::vector<int32_t> x = {65536, 3, -1, 65536, 5, 6};
  const std::vector<uint8_t> bytes =
      converted_plan(cum_sum_model(onnx::TensorProto::INT32, 0, 0, 0, true));
  const std::vector<PlanOutput> out = run_plan_inputs(bytes, {{x.data(), x.size() * 4}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].as<int32_t>(), ElementsAre(65536, 3, -1, 0, 15, -6));
  EXPECT_THAT(convert_error(cum_sum_model(onnx::TensorProto::UINT32, 0, 0, 0, true)),
              HasSubstr("CumProd on uint32 is not supported"));
  ModelBuilder runtime_axis(26);
  runtime_axis.input("x", {2, 3}).input("axis", {}, onnx::TensorProto::INT64).output("y");
  runtime_axis.node("CumProd", {"x", "axis"}, {"y"}, "cumprod");
  EXPECT_THAT(convert_error(runtime_axis),
              HasSubstr("'cumprod' (CumProd): its axis input is computed at run time"));
}

TEST(CumProd, GpuPlanSelectsTheCumSumKernel) {
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  const ConvertResult r = convert_onnx(
      cum_sum_model(onnx::TensorProto::INT64, 1, 1, 1, true).bytes(), "model.onnx", gpu);
  const fb::Plan* plan = plan_of(r.plan);
  ASSERT_NE(plan, nullptr);
  const fb::Step* s = first_step(plan, OpFamily::CumSum);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->params_as_CumSumParams()->product());
  EXPECT_THAT(s->kernel()->str(), HasSubstr("cum_sum_i64"));
}

TEST(CumProd, ConstantInputFolds) {
  ModelBuilder m(26);
  m.input("a", {2, 3}).output("y");
  m.initializer("c", {2, 3}, {1, 2, 3, 4, 5, 6});
  m.initializer_i64("axis", {}, {1});
  m.node("CumProd", {"c", "axis"}, {"p"}, "cumprod");
  m.node("Add", {"a", "p"}, {"y"}, "add");
  const std::vector<uint8_t> bytes = converted_plan(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  for (const auto* step : *plan->steps()) EXPECT_NE(step->op(), OpFamily::CumSum);  // folded
  const std::vector<PlanOutput> out = run_plan(bytes, {std::vector<float>(6, 0.5f)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].as<float>(), ElementsAre(1.5f, 2.5f, 6.5f, 4.5f, 20.5f, 120.5f));
}

}  // namespace
}  // namespace jetplan::converter::testing
