// Trilu (converter/src/ops/where.cc: a Where of a constant mask) end to end in process: upper and
// lower with k of either sign against a mask worked out here, a NaN in the zeroed part, int64
// data, folding on a constant input, the refusals, and a GPU plan (jp_where selected).
#include <cmath>
#include <limits>

#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

ModelBuilder trilu_model(int elem, const std::vector<int64_t>& shape, int64_t upper, const int64_t* k) {
  ModelBuilder m(14);
  m.input("x", shape, elem).output("y", elem);
  std::vector<std::string> in = {"x"};
  if (k != nullptr) {
    m.initializer_i64("k", {}, {*k});
    in.push_back("k");
  }
  attr(m.node("Trilu", in, {"y"}, "trilu"), "upper", upper);
  return m;
}

TEST(Trilu, UpperAndLowerWithEitherK) {
  // x [2, 3, 4]: element (b, i, j) = b * 12 + i * 4 + j + 1, one NaN in every zeroed place's
  // reach (row 2, column 0 of the first matrix).
  std::vector<float> x(24);
  for (size_t e = 0; e < x.size(); ++e) x[e] = float(e + 1);
  x[8] = std::numeric_limits<float>::quiet_NaN();
  for (const int64_t upper : {0, 1}) {
    for (const int64_t k : {-5, -1, 0, 2, 7}) {
      const std::vector<uint8_t> bytes =
          converted_plan(trilu_model(onnx::TensorProto::FLOAT, {2, 3, 4}, upper, &k));
      const fb::Plan* plan = plan_of(bytes);
      ASSERT_NE(plan, nullptr);
      EXPECT_NE(first_step(plan, OpFamily::Where), nullptr);
      const std::vector<PlanOutput> out = run_plan(bytes, {x});
      ASSERT_EQ(out.size(), 1u);
      const std::vector<float> y = out[0].as<float>();
      ASSERT_EQ(y.size(), x.size());
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 4; ++j) {
            const size_t e = size_t(b * 12 + i * 4 + j);
            const bool kept = upper ? j - i >= k : j - i <= k;
            if (!kept) {
              EXPECT_EQ(y[e], 0.f) << "upper " << upper << " k " << k << " at " << e;
            } else if (std::isnan(x[e])) {
              EXPECT_TRUE(std::isnan(y[e])) << "upper " << upper << " k " << k;
            } else {
              EXPECT_EQ(y[e], x[e]) << "upper " << upper << " k " << k << " at " << e;
            }
          }
    }
  }
}

TEST(Trilu, Int64DataAndDefaultK) {
  // Lower, k 0 (no k input): [[1, 0], [3, 4], [5, 6]] from [[1, 2], [3, 4], [5, 6]].
  const std::vector<int64_t> x = {1, 2, 3, int64_t{1} << 40, 5, 6};
  const std::vector<uint8_t> bytes =
      converted_plan(trilu_model(onnx::TensorProto::INT64, {3, 2}, 0, nullptr));
  const std::vector<PlanOutput> out = run_plan_inputs(bytes, {{x.data(), x.size() * 8}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].as<int64_t>(), ElementsAre(1, 0, 3, int64_t{1} << 40, 5, 6));
}

TEST(Trilu, ConstantInputFoldsAway) {
  // A causal mask as exporters write it: Trilu of a constant, then added to x.
  ModelBuilder m(14);
  m.input("x", {3, 3}).output("y");
  m.initializer("ones", {3, 3}, std::vector<float>(9, -1.f));
  const int64_t k = 1;
  m.initializer_i64("k", {}, {k});
  attr(m.node("Trilu", {"ones", "k"}, {"mask"}, "trilu"), "upper", int64_t{1});
  m.node("Add", {"x", "mask"}, {"y"}, "add");
  const std::vector<uint8_t> bytes = converted_plan(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  for (const fb::Step* s : *plan->steps()) EXPECT_NE(s->op(), OpFamily::Where);
  const std::vector<PlanOutput> out = run_plan(bytes, {std::vector<float>(9, 0.f)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].as<float>(), ElementsAre(0, -1, -1, 0, 0, -1, 0, 0, 0));
}

TEST(Trilu, Refusals) {
  ModelBuilder runtime_k(14);
  runtime_k.input("x", {2, 3}).input("k", {}, onnx::TensorProto::INT64).output("y");
  runtime_k.node("Trilu", {"x", "k"}, {"y"}, "trilu");
  EXPECT_THAT(convert_error(runtime_k),
              HasSubstr("'trilu' (Trilu): its k input is computed at run time"));
  const int64_t k = 0;
  EXPECT_THAT(convert_error(trilu_model(onnx::TensorProto::FLOAT, {5}, 1, &k)),
              HasSubstr("Input rank must be >= 2"));
  EXPECT_THAT(convert_error(trilu_model(onnx::TensorProto::FLOAT, {1, 9000, 9000}, 1, &k)),
              HasSubstr("its mask of the last two dims 9000x9000 would exceed"));
}

TEST(Trilu, GpuPlanRunsItAsWhere) {
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  const int64_t k = -1;
  ConvertResult r;
  // The converter loads every GPU plan it writes through the runtime's device-independent checks.
  ASSERT_NO_THROW(r = convert_onnx(trilu_model(onnx::TensorProto::FLOAT, {2, 8, 8}, 0, &k).bytes(),
                                   "model.onnx", gpu));
  const fb::Plan* plan = plan_of(r.plan);
  ASSERT_NE(plan, nullptr);
  const fb::Step* s = first_step(plan, OpFamily::Where);
  ASSERT_NE(s, nullptr);
  ASSERT_NE(s->kernel(), nullptr);
  EXPECT_THAT(s->kernel()->str(), HasSubstr("jp_where"));
}

}  // namespace
}  // namespace jetplan::converter::testing
