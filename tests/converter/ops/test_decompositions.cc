// The ops that run as small graphs of other ops (Celu: activation.cc; ThresholdedRelu and
// Shrink: where.cc; Hardmax: arg_reduce.cc; CenterCropPad: slice.cc; Compress: gather.cc;
// LpNormalization: reduce.cc) end to end in process, against their formulas evaluated here
// (NaN, the thresholds themselves, ties, odd crops, a short condition and a zero norm included),
// and their GPU plans. ONNX's node tests check them too (tests/conformance).
#include <cmath>
#include <limits>

#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

const std::vector<float> kX = {-3.f, -0.5f, -0.25f, 0.f, 0.25f, 0.5f, 1.f, 2.5f,
                               std::numeric_limits<float>::quiet_NaN()};

ModelBuilder one_node(const std::string& op, int opset, const std::vector<std::pair<std::string, float>>& attrs) {
  ModelBuilder m(opset);
  m.input("x", {int64_t(kX.size())}).output("y");
  auto& n = m.node(op, {"x"}, {"y"}, "op");
  for (const auto& [name, v] : attrs) attr(n, name, v);
  return m;
}

void expect_formula(const ModelBuilder& m, float (*f)(float)) {
  const std::vector<PlanOutput> out = run_plan(converted_plan(m), {kX});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<float> y = out[0].as<float>();
  ASSERT_EQ(y.size(), kX.size());
  for (size_t i = 0; i < kX.size(); ++i) {
    const float want = f(kX[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(y[i])) << "x " << kX[i];
    } else {
      EXPECT_NEAR(y[i], want, 1e-6f + 1e-6f * std::fabs(want)) << "x " << kX[i];
    }
  }
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  EXPECT_NO_THROW(convert_onnx(m.bytes(), "model.onnx", gpu));
}

TEST(Decompositions, CeluIsAlphaTimesEluOfXOverAlpha) {
  expect_formula(one_node("Celu", 12, {{"alpha", 2.f}}), [](float x) {
    return x > 0.f ? x : x <= 0.f ? 2.f * std::expm1(x / 2.f) : x;  // NaN stays NaN
  });
  EXPECT_THAT(convert_error(one_node("Celu", 12, {{"alpha", 0.f}})),
              HasSubstr("'op' (Celu): alpha 0 must be finite and not 0"));
}

TEST(Decompositions, ThresholdedReluKeepsOnlyWhatIsAboveAlpha) {
  // NaN > alpha is false: 0, as ONNX's reference (np.where) gives.
  expect_formula(one_node("ThresholdedRelu", 10, {{"alpha", 0.5f}}),
                 [](float x) { return x > 0.5f ? x : 0.f; });
}

TEST(Decompositions, ShrinkMovesTheTailsByBias) {
  // NaN is neither below -lambd nor above lambd: 0.
  expect_formula(one_node("Shrink", 9, {{"lambd", 0.5f}, {"bias", 0.25f}}), [](float x) {
    return x < -0.5f ? x + 0.25f : x > 0.5f ? x - 0.25f : 0.f;
  });
}

TEST(Decompositions, HardmaxMarksTheFirstMaximum) {
  // x [3, 2] along axis 0: column 0 has a tie (the first of the two 5s wins), column 1 one max.
  ModelBuilder m(13);
  m.input("x", {3, 2}).output("y");
  attr(m.node("Hardmax", {"x"}, {"y"}, "op"), "axis", int64_t{0});
  const std::vector<PlanOutput> out = run_plan(converted_plan(m), {std::vector<float>{5, 1, 2, 7, 5, -1}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].as<float>(), ElementsAre(1, 0, 0, 1, 0, 0));
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  EXPECT_NO_THROW(convert_onnx(m.bytes(), "model.onnx", gpu));
  ModelBuilder old(11);
  old.input("x", {3, 2}).output("y");
  attr(old.node("Hardmax", {"x"}, {"y"}, "op"), "axis", int64_t{0});
  EXPECT_THAT(convert_error(old), HasSubstr("jetplan takes the last axis before opset 13"));
}

TEST(Decompositions, CenterCropPadCropsAndPadsOddDifferences) {
  // x [3, 5] to [4, 2]: rows padded by 0 before and 1 after; columns 1 and 2 kept.
  ModelBuilder m(18);
  m.input("x", {3, 5}).output("y");
  m.initializer_i64("shape", {2}, {4, 2});
  m.node("CenterCropPad", {"x", "shape"}, {"y"}, "op");
  std::vector<float> x(15);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i + 1);
  const std::vector<PlanOutput> out = run_plan(converted_plan(m), {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].as<float>(), ElementsAre(2, 3, 7, 8, 12, 13, 0, 0));
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  EXPECT_NO_THROW(convert_onnx(m.bytes(), "model.onnx", gpu));
}

TEST(Decompositions, CompressKeepsWhereTheConditionHolds) {
  // x [2, 3]: along axis 1 with condition [1, 0, 1] columns 0 and 2; without an axis the
  // flattened elements 1 and 3 (condition [0, 1, 0, 1], shorter than the 6 elements).
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  for (const bool axis : {true, false}) {
    ModelBuilder m(11);
    m.input("x", {2, 3}).output("y");
    auto* c = m.model().mutable_graph()->add_initializer();
    c->set_name("cond");
    c->set_data_type(onnx::TensorProto::BOOL);
    const std::vector<int> bits = axis ? std::vector<int>{1, 0, 1} : std::vector<int>{0, 1, 0, 1};
    c->add_dims(int64_t(bits.size()));
    for (int v : bits) c->add_int32_data(v);
    auto& n = m.node("Compress", {"x", "cond"}, {"y"}, "op");
    if (axis) attr(n, "axis", int64_t{1});
    const std::vector<PlanOutput> out = run_plan(converted_plan(m), {x});
    ASSERT_EQ(out.size(), 1u);
    if (axis) {
      EXPECT_THAT(out[0].as<float>(), ElementsAre(1, 3, 4, 6));
    } else {
      EXPECT_THAT(out[0].as<float>(), ElementsAre(2, 4));
    }
    ConvertOptions gpu;
    gpu.target = "orin-agx";
    EXPECT_NO_THROW(convert_onnx(m.bytes(), "model.onnx", gpu));
  }
}

TEST(Decompositions, ReverseSequenceReversesEachBatchsPrefix) {
  // x [T 3, B 2, 2] (time_axis 0), lengths [3, 1]: batch 0 reversed over all three steps, batch
  // 1 keeps its order (a prefix of one). Then the same data as [B, T, 2] (batch_axis 0) with
  // lengths [2, 3].
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i);
  for (const bool time_first : {true, false}) {
    ModelBuilder m(10);
    m.input("x", time_first ? Shape{3, 2, 2} : Shape{2, 3, 2}).output("y");
    m.initializer_i64("lens", {2}, time_first ? std::vector<int64_t>{3, 1} : std::vector<int64_t>{2, 3});
    auto& n = m.node("ReverseSequence", {"x", "lens"}, {"y"}, "op");
    attr(n, "time_axis", int64_t{time_first ? 0 : 1});
    attr(n, "batch_axis", int64_t{time_first ? 1 : 0});
    const std::vector<PlanOutput> out = run_plan(converted_plan(m), {x});
    ASSERT_EQ(out.size(), 1u);
    if (time_first) {  // rows (t, b): b0 reads t 2, 1, 0; b1 reads t 0, 1, 2
      EXPECT_THAT(out[0].as<float>(), ElementsAre(8, 9, 2, 3, 4, 5, 6, 7, 0, 1, 10, 11));
    } else {  // b0: t 1, 0, 2; b1: t 2, 1, 0
      EXPECT_THAT(out[0].as<float>(), ElementsAre(2, 3, 0, 1, 4, 5, 10, 11, 8, 9, 6, 7));
    }
    ConvertOptions gpu;
    gpu.target = "orin-agx";
    EXPECT_NO_THROW(convert_onnx(m.bytes(), "model.onnx", gpu));
  }
  ModelBuilder too_long(10);
  too_long.input("x", {3, 2}).output("y");
  too_long.initializer_i64("lens", {2}, {4, 1});
  too_long.node("ReverseSequence", {"x", "lens"}, {"y"}, "op");
  EXPECT_THAT(convert_error(too_long), HasSubstr("a sequence length of 4 for a time axis of 3"));
  ModelBuilder run_time(10);
  run_time.input("x", {3, 2}).input("lens", {2}, onnx::TensorProto::INT64).output("y");
  run_time.node("ReverseSequence", {"x", "lens"}, {"y"}, "op");
  EXPECT_THAT(convert_error(run_time), HasSubstr("sequence_lens"));
}

TEST(Decompositions, LpNormalizationWithAZeroNorm) {
  // x [2, 3] along axis 1: row 0 (3, 0, 4) has L2 norm 5 and L1 norm 7; row 1 is all zeros: 0.
  const std::vector<float> x = {3, 0, 4, 0, 0, 0};
  for (const int64_t p : {1, 2}) {
    for (const int opset : {13, 18}) {
      ModelBuilder m(opset);
      m.input("x", {2, 3}).output("y");
      auto& n = m.node("LpNormalization", {"x"}, {"y"}, "op");
      attr(n, "axis", int64_t{1});
      attr(n, "p", p);
      const std::vector<PlanOutput> out = run_plan(converted_plan(m), {x});
      ASSERT_EQ(out.size(), 1u);
      const float norm = p == 1 ? 7.f : 5.f;
      EXPECT_THAT(out[0].as<float>(), ElementsAre(3 / norm, 0, 4 / norm, 0, 0, 0)) << "p " << p;
      ConvertOptions gpu;
      gpu.target = "orin-agx";
      EXPECT_NO_THROW(convert_onnx(m.bytes(), "model.onnx", gpu));
    }
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
