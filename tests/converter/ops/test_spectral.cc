// DFT and STFT (converter/src/ops/spectral.cc: MatMuls against constant cosine and sine
// matrices; STFT's frames a Gather) end to end in process, against the DFT summed here in
// double, term by term. DFT: real and complex inputs, the axis first or last of the signal dims,
// dft_length padding and truncating, inverse, onesided, opset 17's attribute and opset 20's
// input. STFT: no window, a constant one and a run-time one, a complex signal. GPU plans and
// the refusals.
#include <algorithm>
#include <cmath>

#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

constexpr int64_t kB = 2, kL = 37, kStep = 5, kN = 8;

// The STFT of signal [B, L, parts] (window w, or none when empty) as [B, frames, bins, 2].
std::vector<float> direct_stft(const std::vector<float>& x, int64_t parts, const std::vector<float>& w,
                               bool onesided) {
  const int64_t frames = (kL - kN) / kStep + 1, bins = onesided ? kN / 2 + 1 : kN;
  std::vector<float> y;
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t f = 0; f < frames; ++f)
      for (int64_t k = 0; k < bins; ++k) {
        double re = 0, im = 0;
        for (int64_t n = 0; n < kN; ++n) {
          const size_t at = size_t((b * kL + f * kStep + n) * parts);
          const double win = w.empty() ? 1.0 : w[size_t(n)];
          const double xr = x[at] * win, xi = parts == 2 ? x[at + 1] * win : 0.0;
          const double t = 2.0 * M_PI * double(k * n) / double(kN);
          re += xr * std::cos(t) + xi * std::sin(t);
          im += xi * std::cos(t) - xr * std::sin(t);
        }
        y.push_back(float(re));
        y.push_back(float(im));
      }
  return y;
}

std::vector<float> wave(int64_t count) {
  std::vector<float> x(static_cast<size_t>(count));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(0.37 * double(i)) + 0.25 * std::cos(1.9 * double(i)));
  return x;
}

// window: 0 none, 1 constant, 2 a graph input.
ModelBuilder stft_model(int64_t parts, int window, bool onesided) {
  ModelBuilder m(17);
  m.input("x", {kB, kL, parts});
  m.initializer_i64("step", {}, {kStep});
  m.initializer_i64("length", {}, {kN});
  std::vector<std::string> in = {"x", "step", "", "length"};
  if (window == 1) {
    m.initializer("w", {kN}, {0.f, 0.2f, 0.6f, 1.f, 1.f, 0.6f, 0.2f, 0.f});
    in[2] = "w";
  } else if (window == 2) {
    m.input("w", {kN});
    in[2] = "w";
  }
  m.output("y");
  attr(m.node("STFT", in, {"y"}, "stft"), "onesided", int64_t{onesided ? 1 : 0});
  return m;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::fabs(want[i])) << "element " << i;
}

TEST(Stft, RealSignalWithoutAConstantAndARunTimeWindow) {
  const std::vector<float> x = wave(kB * kL);
  const std::vector<float> w = {0.f, 0.2f, 0.6f, 1.f, 1.f, 0.6f, 0.2f, 0.f};
  for (const int window : {0, 1, 2}) {
    for (const bool onesided : {true, false}) {
      const std::vector<uint8_t> bytes = converted_plan(stft_model(1, window, onesided));
      const fb::Plan* plan = plan_of(bytes);
      ASSERT_NE(plan, nullptr);
      EXPECT_NE(first_step(plan, OpFamily::Gemm), nullptr);
      const std::vector<PlanOutput> out =
          window == 2 ? run_plan(bytes, {x, w}) : run_plan(bytes, {x});
      ASSERT_EQ(out.size(), 1u);
      SCOPED_TRACE(::testing::Message() << "window " << window << " onesided " << onesided);
      expect_close(out[0].as<float>(), direct_stft(x, 1, window == 0 ? std::vector<float>{} : w, onesided));
    }
  }
}

TEST(Stft, ComplexSignal) {
  const std::vector<float> x = wave(kB * kL * 2);
  const std::vector<uint8_t> bytes = converted_plan(stft_model(2, 1, false));
  const std::vector<PlanOutput> out = run_plan(bytes, {x});
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0].as<float>(),
               direct_stft(x, 2, {0.f, 0.2f, 0.6f, 1.f, 1.f, 0.6f, 0.2f, 0.f}, false));
}

TEST(Stft, GpuPlan) {
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  // The converter loads every GPU plan it writes through the runtime's device-independent checks.
  EXPECT_NO_THROW(convert_onnx(stft_model(1, 1, true).bytes(), "model.onnx", gpu));
  EXPECT_NO_THROW(convert_onnx(stft_model(2, 2, false).bytes(), "model.onnx", gpu));
}

// x [2, 5, 3, parts] along `axis` (1 or 2) to n points: the DFT summed term by term.
std::vector<float> direct_dft(const std::vector<float>& x, int64_t parts, int64_t axis, int64_t n,
                              bool inverse, bool onesided) {
  const int64_t d1 = 5, d2 = 3, len = axis == 1 ? d1 : d2, bins = onesided ? n / 2 + 1 : n;
  const int64_t o1 = axis == 1 ? bins : d1, o2 = axis == 2 ? bins : d2;
  std::vector<float> y(static_cast<size_t>(2 * o1 * o2 * 2));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < o1; ++i)
      for (int64_t j = 0; j < o2; ++j) {
        const int64_t k = axis == 1 ? i : j;
        double re = 0, im = 0;
        for (int64_t t = 0; t < std::min(len, n); ++t) {
          const int64_t i1 = axis == 1 ? t : i, i2 = axis == 2 ? t : j;
          const size_t at = size_t(((b * d1 + i1) * d2 + i2) * parts);
          const double xr = x[at], xi = parts == 2 ? x[at + 1] : 0.0;
          const double th = 2.0 * M_PI * double(k * t) / double(n) * (inverse ? 1 : -1);
          re += xr * std::cos(th) - xi * std::sin(th);
          im += xr * std::sin(th) + xi * std::cos(th);
        }
        const double scale = inverse ? 1.0 / double(n) : 1.0;
        const size_t o = size_t(((b * o1 + i) * o2 + j) * 2);
        y[o] = float(re * scale);
        y[o + 1] = float(im * scale);
      }
  return y;
}

TEST(Dft, AxesLengthsInverseAndOnesided) {
  const struct {
    int opset;
    int64_t parts, axis, n;
    bool inverse, onesided;
  } cases[] = {
      {17, 1, 1, 5, false, false}, {17, 1, 2, 3, false, true},  {17, 2, 1, 8, false, false},
      {17, 2, 2, 2, true, false},  {20, 1, 1, 7, false, true},  {20, 2, 2, 3, true, false},
      {20, 2, 1, 4, false, false},
  };
  for (const auto& c : cases) {
    ModelBuilder m(c.opset);
    m.input("x", {2, 5, 3, c.parts}).output("y");
    m.initializer_i64("n", {}, {c.n});
    std::vector<std::string> in = {"x", "n"};
    if (c.opset >= 20) {
      m.initializer_i64("axis", {}, {c.axis});
      in.push_back("axis");
    }
    auto& node = m.node("DFT", in, {"y"}, "dft");
    if (c.opset < 20) attr(node, "axis", c.axis);
    attr(node, "inverse", int64_t{c.inverse});
    attr(node, "onesided", int64_t{c.onesided});
    const std::vector<float> x = wave(2 * 5 * 3 * c.parts);
    const std::vector<uint8_t> bytes = converted_plan(m);
    const std::vector<PlanOutput> out = run_plan(bytes, {x});
    ASSERT_EQ(out.size(), 1u);
    SCOPED_TRACE(::testing::Message() << "opset " << c.opset << " parts " << c.parts << " axis "
                                      << c.axis << " n " << c.n << " inverse " << c.inverse);
    expect_close(out[0].as<float>(), direct_dft(x, c.parts, c.axis, c.n, c.inverse, c.onesided));
    ConvertOptions gpu;
    gpu.target = "orin-agx";
    EXPECT_NO_THROW(convert_onnx(m.bytes(), "model.onnx", gpu));
  }
}

TEST(Stft, Refusals) {
  EXPECT_THAT(convert_error(stft_model(2, 0, true)),
              HasSubstr("'stft' (STFT): onesided needs a real signal"));
  ModelBuilder run_time_step(17);
  run_time_step.input("x", {1, 16, 1}).input("step", {}, onnx::TensorProto::INT64).output("y");
  run_time_step.initializer_i64("length", {}, {4});
  run_time_step.node("STFT", {"x", "step", "", "length"}, {"y"}, "stft");
  EXPECT_THAT(convert_error(run_time_step), HasSubstr("its frame_step input is computed at run time"));
  ModelBuilder too_long(17);
  too_long.input("x", {1, 6, 1}).output("y");
  too_long.initializer_i64("step", {}, {1});
  too_long.initializer_i64("length", {}, {8});
  too_long.node("STFT", {"x", "step", "", "length"}, {"y"}, "stft");
  EXPECT_THAT(convert_error(too_long), HasSubstr("the frame length 8 must be 1 to the signal's length"));
  ModelBuilder irfft(20);  // libonnx refuses opset 17's form itself
  irfft.input("x", {1, 4, 2}).output("y");
  auto& n = irfft.node("DFT", {"x"}, {"y"}, "dft");
  attr(n, "inverse", int64_t{1});
  attr(n, "onesided", int64_t{1});
  EXPECT_THAT(convert_error(irfft), HasSubstr("onesided needs a real signal and a forward DFT"));
}

}  // namespace
}  // namespace jetplan::converter::testing
