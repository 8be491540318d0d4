// CausalConvWithState (opset 27; converter/src/ops/conv.cc runs it as its definition's graph):
// the CPU plan against a hand-worked streaming conv over two chunks (the state carried between
// them), the GPU plan's deviceless load, refusals by message. ONNX's 13 node tests (and their
// float16 forms) run in the conformance suite.
#include <gmock/gmock.h>

#include <cmath>
#include <vector>

#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

constexpr int64_t kC = 3, kL = 4, kK = 3;

ModelBuilder model(const std::string& activation) {
  ModelBuilder m(27);
  m.model().set_ir_version(11);
  m.input("x", {1, kC, kL}).input("past", {1, kC, kK - 1}).output("y").output("state");
  m.random("w", {kC, 1, kK});
  m.random("b", {kC});
  auto& n = m.node("CausalConvWithState", {"x", "w", "b", "past"}, {"y", "state"}, "stream");
  attr(n, "activation", activation);
  return m;
}

TEST(CausalConvWithState, TwoChunksAreOneLongCausalConv) {
  ModelBuilder m = model("silu");
  const ConvertResult r = convert_ok(m);
  ASSERT_FALSE(r.plan.empty());
  // The model's weights, from its initializers.
  std::vector<float> wv, bv;
  for (const auto& t : m.model().graph().initializer())
    (t.name() == "w" ? wv : bv).assign(t.float_data().begin(), t.float_data().end());
  const std::vector<float> signal = random_floats(kC * 2 * kL, 5);
  std::vector<float> state(kC * (kK - 1), 0.f), got;
  for (int chunk = 0; chunk < 2; ++chunk) {
    std::vector<float> x(kC * kL);
    for (int64_t c = 0; c < kC; ++c)
      for (int64_t t = 0; t < kL; ++t) x[size_t(c * kL + t)] = signal[size_t(c * 2 * kL + chunk * kL + t)];
    const auto out = run(r.plan, {bytes_of(x), bytes_of(state)});
    ASSERT_EQ(out.size(), 2u);
    const std::vector<float> y = values_of<float>(out[0]);
    ASSERT_EQ(y.size(), size_t(kC * kL));
    for (int64_t c = 0; c < kC; ++c)
      for (int64_t t = 0; t < kL; ++t) got.push_back(y[size_t(c * kL + t)]);
    state = values_of<float>(out[1]);
    ASSERT_EQ(state.size(), size_t(kC * (kK - 1)));
  }
  // The whole signal through one causal depthwise conv (zeros before it) and SiLU, in double.
  for (int64_t c = 0; c < kC; ++c)
    for (int64_t t = 0; t < 2 * kL; ++t) {
      double acc = bv[size_t(c)];
      for (int64_t j = 0; j < kK; ++j) {
        const int64_t s = t - (kK - 1) + j;
        if (s >= 0) acc += double(wv[size_t(c * kK + j)]) * signal[size_t(c * 2 * kL + s)];
      }
      const double want = acc / (1.0 + std::exp(-acc));
      const int64_t chunk = t / kL, at = t % kL;
      const float g = got[size_t(chunk * kC * kL + c * kL + at)];
      EXPECT_NEAR(g, want, 1e-5 + 1e-5 * std::fabs(want)) << "channel " << c << " time " << t;
    }
}

TEST(CausalConvWithState, ConvertsForTheGpu) {
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  const ConvertResult r = convert_onnx(model("none").bytes(), "model.onnx", gpu);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(count_steps(plan, fb::OpFamily::Conv), 1u);
  EXPECT_TRUE(loads_without_device(r.plan));
}

TEST(CausalConvWithState, RefusalsNameTheNode) {
  EXPECT_THAT(convert_error(model("gelu")),
              HasSubstr("'stream' (CausalConvWithState): activation 'gelu' (none, silu or swish)"));
  ModelBuilder m(27);
  m.model().set_ir_version(11);
  m.input("x", {1, kC, kL}).output("y").output("state");
  m.random("w", {kC, 2, kK});
  m.node("CausalConvWithState", {"x", "w"}, {"y", "state"}, "stream");
  EXPECT_THAT(convert_error(m), HasSubstr("are not [B, C, L] and [C, 1, K]"));
}

}  // namespace
}  // namespace jetplan::converter::testing
