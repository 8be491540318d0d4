// TensorScatter (opset 24, the KV-cache update; converter/src/ops/scatter.cc): run-time and
// constant write_indices, linear and circular, against a cache updated here by hand; the GPU
// plan; the refusals by message.
#include <gmock/gmock.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

// cache [2, 2, 5, 3] (batch, heads, max sequence, head dim), update [2, 2, U, 3] along axis -2.
constexpr int64_t kB = 2, kH = 2, kS = 5, kD = 3;

ModelBuilder model(int64_t u, const std::string& mode, bool run_time_indices,
                   const std::vector<int64_t>& constant_indices = {}) {
  ModelBuilder m(24);
  m.model().set_ir_version(10);
  m.input("cache", {kB, kH, kS, kD}).input("update", {kB, kH, u, kD});
  std::vector<std::string> ins = {"cache", "update"};
  if (run_time_indices) {
    m.input("write_indices", {kB}, onnx::TensorProto::INT64);
    ins.push_back("write_indices");
  } else if (!constant_indices.empty()) {
    m.initializer_i64("write_indices", {kB}, constant_indices);
    ins.push_back("write_indices");
  }
  m.output("present");
  auto& n = m.node("TensorScatter", ins, {"present"}, "kv_update");
  if (!mode.empty()) attr(n, "mode", mode);
  return m;
}

// The cache with the update written at starts[b] + i (circular: modulo kS; linear positions past
// the cache are skipped).
std::vector<float> updated(std::vector<float> cache, const std::vector<float>& update, int64_t u,
                           const std::vector<int64_t>& starts, bool circular) {
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t h = 0; h < kH; ++h)
      for (int64_t i = 0; i < u; ++i) {
        int64_t s = starts[size_t(b)] + i;
        if (circular) s = ((s % kS) + kS) % kS;
        if (s < 0) s += kS;
        if (s < 0 || s >= kS) continue;
        for (int64_t d = 0; d < kD; ++d)
          cache[size_t(((b * kH + h) * kS + s) * kD + d)] =
              update[size_t(((b * kH + h) * u + i) * kD + d)];
      }
  return cache;
}

TEST(TensorScatter, RunTimeWriteIndicesLinearAndCircular) {
  const int64_t u = 3;
  const std::vector<float> cache = random_floats(kB * kH * kS * kD, 1);
  const std::vector<float> update = random_floats(kB * kH * u * kD, 2);
  for (const char* mode : {"", "linear", "circular"}) {
    const bool circular = std::string(mode) == "circular";
    const ConvertResult r = convert_ok(model(u, mode, true));
    ASSERT_FALSE(r.plan.empty()) << mode;
    // Linear: batch 0 at 1..3, batch 1 at 2..4. Circular: batch 1 from 4 wraps to 0, 1.
    for (const std::vector<int64_t>& starts :
         {std::vector<int64_t>{1, 2}, std::vector<int64_t>{0, circular ? 4 : 2}}) {
      const auto out = run(r.plan, {bytes_of(cache), bytes_of(update), bytes_of(starts)});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(values_of<float>(out[0]), updated(cache, update, u, starts, circular))
          << "mode '" << mode << "' starts " << starts[0] << ", " << starts[1];
    }
  }
}

TEST(TensorScatter, ConstantOrNoWriteIndices) {
  const int64_t u = 2;
  const std::vector<float> cache = random_floats(kB * kH * kS * kD, 3);
  const std::vector<float> update = random_floats(kB * kH * u * kD, 4);
  const struct {
    std::vector<int64_t> given, starts;
    const char* mode;
  } cases[] = {{{}, {0, 0}, "linear"}, {{3, 1}, {3, 1}, "linear"}, {{4, -1}, {4, -1}, "circular"}};
  for (const auto& c : cases) {
    const ConvertResult r = convert_ok(model(u, c.mode, false, c.given));
    ASSERT_FALSE(r.plan.empty());
    const auto out = run(r.plan, {bytes_of(cache), bytes_of(update)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(values_of<float>(out[0]),
              updated(cache, update, u, c.starts, std::string(c.mode) == "circular"))
        << c.mode << " " << c.starts[0];
  }
}

TEST(TensorScatter, ConvertsForTheGpu) {
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  for (const char* mode : {"linear", "circular"}) {
    const ConvertResult r = convert_onnx(model(1, mode, true).bytes(), "model.onnx", gpu);
    const fb::Plan* plan = plan_of(r);
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(count_steps(plan, fb::OpFamily::Scatter), 1u) << mode;
    EXPECT_TRUE(loads_without_device(r.plan));
  }
}

TEST(TensorScatter, RefusalsNameTheNode) {
  ModelBuilder wide = model(6, "linear", true);  // 6 positions into a cache of 5
  EXPECT_THAT(convert_error(wide), HasSubstr("'kv_update' (TensorScatter): update [2,2,6,3] does "
                                             "not fit past_cache [2,2,5,3] along axis 2"));
  ModelBuilder batch(24);
  batch.model().set_ir_version(10);
  batch.input("cache", {kB, kH}).input("update", {1, kH}).output("present");
  attr(batch.node("TensorScatter", {"cache", "update"}, {"present"}, "kv0"), "axis", int64_t{0});
  EXPECT_THAT(convert_error(batch), HasSubstr("'kv0' (TensorScatter): axis 0 is the batch axis"));
  ModelBuilder mode = model(1, "ring", true);
  EXPECT_THAT(convert_error(mode), HasSubstr("mode 'ring' (linear or circular)"));
}

}  // namespace
}  // namespace jetplan::converter::testing
