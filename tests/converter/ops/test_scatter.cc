// ScatterElements, Scatter and ScatterND (converter/src/ops/scatter.cc) end to end in process:
// plans run on the CPU backend against values worked out here, opset 18's max reduction,
// folding on constants, GPU plans (the CUDA kernel and its bound), and the refusals by message.
#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

// y = ScatterND(x [4, 2], indices [2, 1] (constant), updates [2, 2]) with `reduction`.
ModelBuilder scatter_nd_model(const std::string& reduction, const std::vector<int64_t>& idx,
                              int opset = 16) {
  ModelBuilder m(opset);
  m.input("x", {4, 2}).input("u", {2, 2}).output("y");
  m.initializer_i64("idx", {2, 1}, idx);
  attr(m.node("ScatterND", {"x", "idx", "u"}, {"y"}, "scatter"), "reduction", reduction);
  return m;
}

TEST(Scatter, NdWithEveryReduction) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8}, u = {10, 20, -1, 30};
  // Rows 3 and then 0 (given as -4): row 3 meets (10, 20), row 0 meets (-1, 30).
  const struct {
    const char* reduction;
    int opset;
    std::vector<float> want;
  } cases[] = {
      {"none", 16, {-1, 30, 3, 4, 5, 6, 10, 20}},
      {"add", 16, {0, 32, 3, 4, 5, 6, 17, 28}},
      {"mul", 16, {-1, 60, 3, 4, 5, 6, 70, 160}},
      {"max", 18, {1, 30, 3, 4, 5, 6, 10, 20}},
      {"min", 18, {-1, 2, 3, 4, 5, 6, 7, 8}},
  };
  for (const auto& c : cases) {
    const std::vector<uint8_t> bytes = converted_plan(scatter_nd_model(c.reduction, {3, -4}, c.opset));
    const fb::Plan* plan = plan_of(bytes);
    ASSERT_NE(plan, nullptr);
    const fb::Step* s = first_step(plan, OpFamily::Scatter);
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->params_as_ScatterParams()->nd());
    const std::vector<PlanOutput> out = run_plan(bytes, {x, u});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_THAT(out[0].as<float>(), ElementsAreArray(c.want)) << c.reduction;
  }
}

TEST(Scatter, ElementsAlongAnAxisWithRunTimeIndicesAndTheDeprecatedScatter) {
  // data [[1, 2, 3], [4, 5, 6]], indices [[2, 0]] along axis 1, updates [[7, 8]].
  for (const char* op : {"ScatterElements", "Scatter"}) {
    ModelBuilder m(std::string(op) == "Scatter" ? 10 : 13);
    m.input("x", {2, 3}).input("idx", {1, 2}, onnx::TensorProto::INT64).input("u", {1, 2}).output("y");
    attr(m.node(op, {"x", "idx", "u"}, {"y"}, "scatter"), "axis", int64_t{1});
    const std::vector<uint8_t> bytes = converted_plan(m);
    const std::vector<int64_t> idx = {2, 0};
    const std::vector<float> x = {1, 2, 3, 4, 5, 6}, u = {7, 8};
    const std::vector<PlanOutput> out =
        run_plan_inputs(bytes, {{x.data(), x.size() * 4}, {idx.data(), idx.size() * 8}, {u.data(), u.size() * 4}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_THAT(out[0].as<float>(), ElementsAre(8, 2, 7, 4, 5, 6)) << op;
  }
}

TEST(Scatter, ConstantsFoldSoGpuPlansTakeThem) {
  // A mask built by scattering ones into zeros, then multiplied into x.
  ModelBuilder m(13);
  m.input("x", {4}).output("y");
  m.initializer("zeros", {4}, {0, 0, 0, 0});
  m.initializer("ones", {2}, {1, 1});
  m.initializer_i64("idx", {2}, {1, 3});
  attr(m.node("ScatterElements", {"zeros", "idx", "ones"}, {"mask"}, "scatter"), "axis", int64_t{0});
  m.node("Mul", {"x", "mask"}, {"y"}, "mul");
  const std::vector<uint8_t> bytes = converted_plan(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  for (const fb::Step* s : *plan->steps()) EXPECT_NE(s->op(), OpFamily::Scatter);
  const std::vector<PlanOutput> out = run_plan(bytes, {std::vector<float>{5, 6, 7, 8}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].as<float>(), ElementsAre(0, 6, 0, 8));
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  EXPECT_NO_THROW(convert_onnx(m.bytes(), "model.onnx", gpu));
}

TEST(Scatter, RunTimeScattersTakeTheCudaKernelWithinItsBound) {
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  // Run-time data and updates (Float16 in the plan), every reduction: jp_scatter.
  for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
    // (The converter loads every GPU plan it writes through the runtime's device-independent
    // checks; the CPU plan contract does not apply.)
    const ConvertResult r = convert_onnx(scatter_nd_model(reduction, {3, -4}, 18).bytes(), "model.onnx", gpu);
    const fb::Plan* plan = plan_of(r);
    ASSERT_NE(plan, nullptr);
    const fb::Step* s = first_step(plan, OpFamily::Scatter);
    ASSERT_NE(s, nullptr) << reduction;
    ASSERT_NE(s->kernel(), nullptr);
    EXPECT_EQ(s->kernel()->str(), "jp_scatter") << reduction;
  }
  // Past the kernel's bound (65536 tuples walked for each of 4M output elements): refused by name.
  ModelBuilder big(16);
  big.input("x", {65536, 64}).input("idx", {65536, 1}, onnx::TensorProto::INT64)
      .input("u", {65536, 64}).output("y");
  big.node("ScatterND", {"x", "idx", "u"}, {"y"}, "big_scatter");
  EXPECT_THAT(convert_error(big, gpu),
              AllOf(HasSubstr("big_scatter"), HasSubstr("65536 index reads for each of 4194304")));
}

// Constant indices without a reduction, where the CUDA kernel would walk long lines: the last
// writer of each target is kept and the scatter becomes a ScatterND of sorted tuples (the kernel
// binary-searches them) after a Gather of the updates. The values are ONNX's (last one wins).
TEST(Scatter, LongConstantScattersRunAsSortedTuples) {
  // ScatterElements along axis 1 of x [2, 100], indices [2, 100] (reversed, with duplicates).
  ModelBuilder m(13);
  m.input("x", {2, 100}).input("u", {2, 100}).output("y");
  std::vector<int64_t> idx(200);
  for (int64_t i = 0; i < 200; ++i) idx[size_t(i)] = (i % 100) < 50 ? 99 - (i % 100) : (i % 100) / 2 - 50;
  m.initializer_i64("idx", {2, 100}, idx);
  attr(m.node("ScatterElements", {"x", "idx", "u"}, {"y"}, "scatter"), "axis", int64_t{1});
  std::vector<float> x(200), u(200), want(200);
  for (int64_t i = 0; i < 200; ++i) x[size_t(i)] = float(i), u[size_t(i)] = float(1000 + i);
  want = x;
  for (int64_t i = 0; i < 200; ++i) {
    const int64_t k = idx[size_t(i)];
    want[size_t((i / 100) * 100 + (k < 0 ? k + 100 : k))] = u[size_t(i)];
  }
  for (const char* target : {"cpu", "orin-agx"}) {
    ConvertOptions options;
    options.target = target;
    const ConvertResult r = convert_onnx(m.bytes(), "model.onnx", options);
    const fb::Plan* plan = plan_of(r);
    ASSERT_NE(plan, nullptr);
    const fb::Step* s = first_step(plan, OpFamily::Scatter);
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->params_as_ScatterParams()->nd()) << target;
    EXPECT_TRUE(s->params_as_ScatterParams()->sorted()) << target;
    EXPECT_NE(first_step(plan, OpFamily::Gather), nullptr) << target;
    if (std::string(target) == "cpu") {
      const std::vector<PlanOutput> out = run_plan(r.plan, {x, u});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_THAT(out[0].as<float>(), ElementsAreArray(want));
    }
  }
}

// Tuples an exporter writes in row-major order (a slice assignment) are already sorted: the
// scatter stays as it is and is marked so.
TEST(Scatter, IncreasingConstantTuplesAreMarkedSorted) {
  ModelBuilder m(16);
  m.input("x", {8, 2}).input("u", {4, 2}).output("y");
  m.initializer_i64("idx", {4, 1}, {1, 3, 4, 6});
  m.node("ScatterND", {"x", "idx", "u"}, {"y"}, "scatter");
  const ConvertResult r = convert_onnx(m.bytes(), "model.onnx", {});
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  const fb::Step* s = first_step(plan, OpFamily::Scatter);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->params_as_ScatterParams()->sorted());
  EXPECT_THAT(step_ops(plan), ::testing::Not(::testing::Contains(OpFamily::Gather)));
  std::vector<float> x(16, 0.f), u = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<PlanOutput> out = run_plan(r.plan, {x, u});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].as<float>(), ElementsAre(0, 0, 1, 2, 0, 0, 3, 4, 5, 6, 0, 0, 7, 8, 0, 0));
  // Unsorted or run-time tuples are not.
  ModelBuilder n(16);
  n.input("x", {8, 2}).input("u", {4, 2}).output("y");
  n.initializer_i64("idx", {4, 1}, {3, 1, 4, 6});
  n.node("ScatterND", {"x", "idx", "u"}, {"y"}, "scatter");
  const ConvertResult q = convert_onnx(n.bytes(), "model.onnx", {});
  ASSERT_NE(plan_of(q), nullptr);
  EXPECT_FALSE(first_step(plan_of(q), OpFamily::Scatter)->params_as_ScatterParams()->sorted());
}

TEST(Scatter, Refusals) {
  EXPECT_THAT(convert_error(scatter_nd_model("none", {4, 0})),
              HasSubstr("'scatter' (ScatterND): index 4 is out of range for dim 4"));
  EXPECT_THAT(convert_error(scatter_nd_model("sum", {0, 1})),
              HasSubstr("'scatter' (ScatterND): unknown reduction 'sum'"));
  ModelBuilder int8_add(16);
  int8_add.input("x", {4}, onnx::TensorProto::INT8).input("u", {2}, onnx::TensorProto::INT8)
      .output("y", onnx::TensorProto::INT8);
  int8_add.initializer_i64("idx", {2}, {0, 1});
  auto& n = int8_add.node("ScatterElements", {"x", "idx", "u"}, {"y"}, "scatter");
  attr(n, "reduction", std::string("add"));
  EXPECT_THAT(convert_error(int8_add), HasSubstr("reduction 'add' on int8"));
  ModelBuilder too_big(13);
  too_big.input("x", {2, 2}).input("u", {2, 3}).output("y");
  too_big.initializer_i64("idx", {2, 3}, {0, 1, 0, 1, 0, 1});
  attr(too_big.node("ScatterElements", {"x", "idx", "u"}, {"y"}, "scatter"), "axis", int64_t{0});
  EXPECT_THAT(convert_error(too_big), HasSubstr("indices are larger than data off the axis"));
}

}  // namespace
}  // namespace jetplan::converter::testing
