// The INT8 precision pass (converter/src/precision/int8_precision.h) checked by numbers without a
// GPU: the converter's GPU pipeline up to the Float16 pass (NHWC layout, then INT8) serialized as
// a CPU plan, which the CPU twins run: Quantize from Float32, cpu::conv_int8 (channels_last,
// Int8 or Float32 outputs). The ranges are calibrated here the plain way: the model with every
// intermediate tensor as a graph output, run on the same inputs, max |value| per tensor.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tests/converter/calibrate/calib_test_util.h"
#include "tests/converter/precision/int8_test_util.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/gpu_pipeline.h"
#include "tests/converter/util/plan_runner.h"

namespace jetplan::converter::testing {
namespace {

const char* const kIntermediates[] = {"r1", "r2", "a3", "r3", "c4", "g", "f"};

// A ResNet-like block over 16 channels: conv+relu, conv+relu, 1x1 conv + residual + relu, a
// strided conv, global pooling and a classifier. `expose`: every intermediate is an output too.
ModelBuilder net(bool expose) {
  ModelBuilder m;
  m.input("x", {2, 16, 12, 12}).output("logits");
  if (expose)
    for (const char* name : kIntermediates) m.output(name);
  m.random("w1", {32, 16, 3, 3}, -0.15f, 0.15f).random("b1", {32}, -0.1f, 0.1f);
  m.random("w2", {32, 32, 3, 3}, -0.1f, 0.1f).random("b2", {32}, -0.1f, 0.1f);
  m.random("w3", {32, 32, 1, 1}, -0.3f, 0.3f);
  m.random("w4", {16, 32, 3, 3}, -0.1f, 0.1f).random("b4", {16}, -0.1f, 0.1f);
  m.random("fw", {10, 16}, -0.5f, 0.5f).random("fb", {10});
  const auto pads = std::vector<int64_t>{1, 1, 1, 1};
  attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", pads);
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  attr(m.node("Conv", {"r1", "w2", "b2"}, {"c2"}, "conv2"), "pads", pads);
  m.node("Relu", {"c2"}, {"r2"}, "relu2");
  m.node("Conv", {"r2", "w3"}, {"c3"}, "conv3");
  m.node("Add", {"c3", "r1"}, {"a3"}, "add3");
  m.node("Relu", {"a3"}, {"r3"}, "relu3");
  auto& c4 = m.node("Conv", {"r3", "w4", "b4"}, {"c4"}, "conv4");
  attr(c4, "pads", pads);
  attr(c4, "strides", std::vector<int64_t>{2, 2});
  m.node("GlobalAveragePool", {"c4"}, {"g"}, "gap");
  m.node("Flatten", {"g"}, {"f"}, "flatten");
  attr(m.node("Gemm", {"f", "fw", "fb"}, {"logits"}, "fc"), "transB", int64_t{1});
  return m;
}

// The GPU pipeline up to gpu_precision, with the INT8 pass, as a CPU plan.
std::vector<uint8_t> int8_cpu_plan(const std::string& bytes, const Int8Options& options,
                                   Int8Summary* summary) {
  return nhwc_cpu_plan(bytes, GpuPipeline{true, true, &options, summary});
}

std::vector<float> random_input(uint32_t seed) {
  std::vector<float> v(2 * 16 * 12 * 12);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (float& e : v) e = dist(rng);
  return v;
}

// Calibration the plain way: max |value| of every exposed tensor over `inputs`.
std::map<std::string, float> calibrate(const std::vector<std::vector<float>>& inputs) {
  const std::vector<uint8_t> plan = convert_ok(net(true)).plan;
  std::map<std::string, float> amax;
  for (const auto& input : inputs) {
    const auto outs = float_outputs(run_plan(plan, {input}));
    amax["x"] = 0.f;
    for (float v : input) amax["x"] = std::max(amax["x"], std::fabs(v));
    for (size_t i = 0; i < std::size(kIntermediates); ++i)
      for (float v : outs[i + 1]) amax[kIntermediates[i]] = std::max(amax[kIntermediates[i]], std::fabs(v));
  }
  // The fused conv3 + add + relu writes r3; its pre-activation range is a3's.
  return amax;
}

TEST(Int8Precision, ConvsRunInInt8AndTheOutputStaysCloseToFloat32) {
  std::vector<std::vector<float>> calib;
  for (uint32_t s = 0; s < 8; ++s) calib.push_back(random_input(100 + s));
  Int8Options options;
  options.amax = calibrate(calib);
  Int8Summary summary;
  const std::vector<uint8_t> plan = int8_cpu_plan(net(false).bytes(), options, &summary);
  EXPECT_EQ(summary.steps.size(), 4u);
  EXPECT_EQ(summary.quantize_steps, 1u);  // x; the convs hand Int8 tensors to each other
  EXPECT_EQ(summary.int8_tensors, 3u);    // r1, r2, r3 (conv4 writes Float32 for the pooling)
  EXPECT_THAT(summary.kept_fp16, ::testing::IsEmpty());
  const fb::Plan* p = fb::GetPlan(plan.data());
  size_t int8_convs = 0;
  for (const auto* s : *p->steps()) {
    if (s->op() != fb::OpFamily::Conv) continue;
    const auto* x = p->tensors()->Get(s->inputs()->Get(0));
    int8_convs += x->dtype() == fb::DType::Int8;
  }
  EXPECT_EQ(int8_convs, 4u);

  const std::vector<uint8_t> fp32 = convert_ok(net(false)).plan;
  for (uint32_t s = 0; s < 4; ++s) {
    const std::vector<float> input = random_input(200 + s);  // held out
    const auto want = float_outputs(run_plan(fp32, {input}));
    const auto got = float_outputs(run_plan(plan, {input}));
    ASSERT_EQ(got.size(), 1u);
    for (float v : got[0]) ASSERT_FALSE(std::isnan(v));
    EXPECT_GT(snr_db(got[0], want[0]), 25.0) << "input " << s;
  }
}

TEST(Int8Precision, ExcludedAndUncalibratedConvsStayFloat) {
  std::vector<std::vector<float>> calib = {random_input(1)};
  Int8Options options;
  options.amax = calibrate(calib);
  options.exclude = {"conv2"};
  options.amax.erase("c4");  // conv4's output has no range
  Int8Summary summary;
  (void)int8_cpu_plan(net(false).bytes(), options, &summary);
  EXPECT_EQ(summary.steps.size(), 2u);  // conv1 and the fused conv3
  ASSERT_EQ(summary.kept_fp16.size(), 2u);
  EXPECT_THAT(summary.kept_fp16[0], ::testing::HasSubstr("excluded"));
  EXPECT_THAT(summary.kept_fp16[1], ::testing::HasSubstr("not calibrated"));
}

// INT8 conversion options for an H100 over `count` .npy samples written to `dir` (min-max).
ConvertOptions int8_h100(const std::string& dir, uint32_t count, uint32_t seed) {
  for (uint32_t s = 0; s < count; ++s)
    write_npy(dir + "/sample" + std::to_string(s) + ".npy", {2, 16, 12, 12}, random_input(seed + s));
  ConvertOptions options;
  options.target = "h100";
  options.precision = Precision::kInt8;
  options.calibration.dir = dir;
  options.calibration.method = CalibrationMethod::kMinMax;
  options.calibration.threads = 2;
  return options;
}

// The whole conversion: calibration over .npy samples, the INT8 pass, kernel selection for an
// H100. The plan loads (without a device) and names INT8 conv and quantize kernels.
TEST(Int8Precision, GpuConversionCalibratesAndSelectsInt8Kernels) {
  const ConvertOptions options = int8_h100(fresh_dir("calib"), 4, 300);
  const ConvertResult r = convert_int8(net(false), options);
  ASSERT_FALSE(r.plan.empty());
  EXPECT_TRUE(r.summary.int8);
  EXPECT_EQ(r.summary.int8_steps, 4u);
  EXPECT_EQ(r.summary.quantize_steps, 1u);
  EXPECT_EQ(r.summary.calibration_samples, 4u);
  const fb::Plan* plan = plan_of(r);
  size_t int8_kernels = 0, quantize_kernels = 0;
  for (const auto* s : *plan->steps()) {
    const std::string kernel = s->kernel() != nullptr ? s->kernel()->str() : "";
    int8_kernels += kernel.find("_i8") != std::string::npos && s->op() == fb::OpFamily::Conv;
    // x, the graph input, is quantized from its Float32 values (its layout twin stays Float32).
    quantize_kernels += kernel.rfind("jp_quantize_f32_i8", 0) == 0;
  }
  EXPECT_EQ(int8_kernels, 4u);
  EXPECT_EQ(quantize_kernels, 1u);
  jp_plan* loaded = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(r.plan.data(), r.plan.size(), JP_LOAD_NO_DEVICE, &loaded), JP_OK)
      << jp_last_error();
  jp_plan_destroy(loaded);
  // The same inputs give the same bytes.
  EXPECT_EQ(convert_int8(net(false), options).plan, r.plan);
}

// The INT8 report: every INT8 step and the output, with SNRs that say the steps are close to
// FP32 and that the output's error is what the steps before it add up to, not noise.
TEST(Int8Precision, ReportGivesEveryInt8StepItsSnr) {
  ConvertOptions options = int8_h100(fresh_dir("calib"), 3, 400);
  options.int8_report = true;
  options.int8_error_samples = 2;
  const ConvertResult r = convert_int8(net(false), options);
  EXPECT_THAT(r.int8_report_table, ::testing::HasSubstr("over 2 calibration samples"));
  EXPECT_THAT(r.int8_report_table, ::testing::HasSubstr("conv1"));
  EXPECT_THAT(r.int8_report_table, ::testing::HasSubstr("output logits"));
  // One row per INT8 step (4) and per output (1), each with a finite SNR well above noise.
  size_t rows = 0;
  for (size_t at = 0; (at = r.int8_report_json.find("\"snr_db\": ", at)) != std::string::npos; ++rows) {
    at += 10;
    const double snr = std::strtod(r.int8_report_json.c_str() + at, nullptr);
    EXPECT_GT(snr, 20.0) << r.int8_report_table;
    EXPECT_LT(snr, 80.0) << r.int8_report_table;  // INT8 does change the numbers
  }
  EXPECT_EQ(rows, 5u) << r.int8_report_json;
}

// The worst output's relative RMS error of `plan` against the FP32 plan over the inputs.
double relative_rms_error(const std::vector<uint8_t>& plan, const std::vector<std::vector<float>>& inputs) {
  const std::vector<uint8_t> fp32 = convert_ok(net(false)).plan;
  double signal = 0, noise = 0;
  for (const auto& input : inputs) {
    const std::vector<float> want = float_outputs(run_plan(fp32, {input}))[0];
    const std::vector<float> got = float_outputs(run_plan(plan, {input}))[0];
    for (size_t i = 0; i < want.size(); ++i) {
      signal += double(want[i]) * want[i];
      noise += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    }
  }
  return std::sqrt(noise / signal);
}

// --target cpu --precision int8: the INT8 reference plan. It passes the CPU plan contract
// (convert_ok), runs its convs as Int8 with the CPU twins and stays close to FP32.
TEST(Int8Precision, CpuTargetWritesTheInt8ReferencePlan) {
  ConvertOptions options = int8_h100(fresh_dir("calib"), 4, 500);
  options.target = "cpu";
  const ConvertResult r = convert_int8(net(false), options);
  ASSERT_FALSE(r.plan.empty());
  EXPECT_EQ(r.summary.int8_steps, 4u);
  const fb::Plan* p = fb::GetPlan(r.plan.data());
  EXPECT_EQ(p->target()->backend(), fb::Backend::CPU);
  size_t int8_convs = 0;
  for (const auto* s : *p->steps())
    int8_convs += s->op() == fb::OpFamily::Conv &&
                  p->tensors()->Get(s->inputs()->Get(0))->dtype() == fb::DType::Int8;
  EXPECT_EQ(int8_convs, 4u);
  std::vector<std::vector<float>> held_out;
  for (uint32_t s = 0; s < 4; ++s) held_out.push_back(random_input(900 + s));
  const double error = relative_rms_error(r.plan, held_out);
  EXPECT_GT(error, 0.0);   // INT8 changes the numbers
  EXPECT_LT(error, 0.06);  // SNR above 24 dB
  EXPECT_EQ(convert_int8(net(false), options).plan, r.plan);  // byte-identical
}

// --int8-max-error: with a bound below the plan's error, the steps with the largest shares go
// back to float until the error, measured here independently on the same samples, is under it;
// with a bound above it nothing moves.
TEST(Int8Precision, MaxErrorMovesTheWorstStepsBackToFloat) {
  const std::string dir = fresh_dir("calib");
  ConvertOptions options = int8_h100(dir, 6, 700);
  options.target = "cpu";
  options.int8_error_samples = 6;
  std::vector<std::vector<float>> samples;
  for (uint32_t s = 0; s < 6; ++s) samples.push_back(random_input(700 + s));
  const double full = relative_rms_error(convert_int8(net(false), options).plan, samples);
  ASSERT_GT(full, 0.0);

  options.int8_max_error = full * 2;
  const ConvertResult loose = convert_int8(net(false), options);
  EXPECT_THAT(loose.summary.moved_fp16, ::testing::IsEmpty());
  EXPECT_EQ(loose.summary.int8_steps, 4u);
  EXPECT_NEAR(loose.summary.int8_error_before, full, full * 1e-3);

  options.int8_max_error = full * 0.6;
  const ConvertResult tight = convert_int8(net(false), options);
  ASSERT_FALSE(tight.summary.moved_fp16.empty());
  EXPECT_EQ(tight.summary.int8_steps + tight.summary.moved_fp16.size(), 4u);
  const double after = relative_rms_error(tight.plan, samples);
  EXPECT_LE(after, options.int8_max_error);
  EXPECT_NEAR(tight.summary.int8_error_after, after, after * 1e-3 + 1e-12);
  EXPECT_THAT(format_summary("p", tight.summary), ::testing::HasSubstr("steps moved back to float"));
  // Every step moved: the plan is the FP32 one, error 0 (a bound no INT8 step can meet).
  options.int8_max_error = 1e-9;
  const ConvertResult none = convert_int8(net(false), options);
  EXPECT_EQ(none.summary.int8_steps, 0u);
  EXPECT_LT(relative_rms_error(none.plan, samples), 1e-5);  // NCHW and NHWC sum in other orders
}

// The report's shares: one per INT8 step, each in [0, 1], summing to 1; the step the bound moves
// first is the one with the largest share.
TEST(Int8Precision, ReportSharesSumToOneAndLeadTheFallback) {
  ConvertOptions options = int8_h100(fresh_dir("calib"), 4, 800);
  options.target = "cpu";
  options.int8_report = true;
  options.int8_error_samples = 4;
  const ConvertResult r = convert_int8(net(false), options);
  std::vector<double> shares;
  std::vector<std::string> steps;
  for (size_t at = 0; (at = r.int8_report_json.find("\"share\": ", at)) != std::string::npos;) {
    at += 9;
    if (r.int8_report_json.compare(at, 4, "null") == 0) continue;
    shares.push_back(std::strtod(r.int8_report_json.c_str() + at, nullptr));
    const size_t name = r.int8_report_json.rfind("{\"step\": \"", at) + 10;
    steps.push_back(r.int8_report_json.substr(name, r.int8_report_json.find('"', name) - name));
  }
  ASSERT_EQ(shares.size(), 4u) << r.int8_report_json;
  double sum = 0;
  for (double v : shares) {
    EXPECT_GE(v, 0.0);
    EXPECT_LE(v, 1.0);
    sum += v;
  }
  EXPECT_NEAR(sum, 1.0, 2e-3) << r.int8_report_table;  // printed with 4 digits
  EXPECT_THAT(r.int8_report_table, ::testing::HasSubstr("Conv+Relu"));
  const size_t worst = static_cast<size_t>(std::max_element(shares.begin(), shares.end()) - shares.begin());
  options.int8_report = false;
  options.int8_max_error = 1e-9;
  const ConvertResult all = convert_int8(net(false), options);
  ASSERT_FALSE(all.summary.moved_fp16.empty());
  EXPECT_EQ(all.summary.moved_fp16[0], steps[worst]) << r.int8_report_table;
}

// An inverted-residual block (MobileNetV2's): 1x1 expand + ReLU6, depthwise 3x3 + ReLU6, 1x1
// project + the block's input. All three convs run in INT8, the depthwise one included, with
// Int8 tensors between them, and the output stays close to FP32.
ModelBuilder mobile_block(int64_t hw = 10) {
  ModelBuilder m;
  m.input("x", {1, 16, hw, hw}).output("y");
  m.random("we", {64, 16, 1, 1}, -0.3f, 0.3f).random("be", {64}, -0.1f, 0.1f);
  m.random("wd", {64, 1, 3, 3}, -0.4f, 0.4f).random("bd", {64}, -0.1f, 0.1f);
  m.random("wp", {16, 64, 1, 1}, -0.15f, 0.15f);
  m.initializer("lo", {}, {0.f}).initializer("hi", {}, {6.f});
  m.node("Conv", {"x", "we", "be"}, {"e"}, "expand");
  m.node("Clip", {"e", "lo", "hi"}, {"e6"}, "relu6_e");
  auto& dw = m.node("Conv", {"e6", "wd", "bd"}, {"d"}, "depthwise");
  attr(dw, "group", int64_t{64});
  attr(dw, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Clip", {"d", "lo", "hi"}, {"d6"}, "relu6_d");
  m.node("Conv", {"d6", "wp"}, {"p"}, "project");
  m.node("Add", {"p", "x"}, {"a"}, "add");
  m.node("GlobalAveragePool", {"a"}, {"y"}, "pool");
  return m;
}

// A conv on one pixel an image (a squeeze-excitation conv after global pooling) stays Float16
// where its scales are calibrated: INT8 would only add a quantize step in front of it. Where the
// model gives them (Q/DQ), it runs in INT8 as given.
TEST(Int8Precision, ConvsOnAPooledVectorStayFloatUnlessTheModelQuantizesThem) {
  ModelBuilder m;
  m.input("x", {2, 16, 8, 8}).output("y");
  m.random("w1", {16, 16, 3, 3}, -0.2f, 0.2f).random("b1", {16}, -0.1f, 0.1f);
  m.random("fw", {16, 16, 1, 1}, -0.3f, 0.3f).random("fb", {16}, -0.1f, 0.1f);
  attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  m.node("GlobalAveragePool", {"r1"}, {"g"}, "gap");
  m.node("Conv", {"g", "fw", "fb"}, {"y"}, "se_fc");
  m.node("Relu", {"y"}, {"out"}, "relu2");
  Int8Options options;
  options.amax = {{"x", 1.f}, {"r1", 2.f}, {"c1", 2.f}, {"g", 1.f}, {"y", 1.f}, {"out", 1.f}};
  Int8Summary calibrated;
  (void)int8_cpu_plan(m.bytes(), options, &calibrated);
  ASSERT_EQ(calibrated.steps.size(), 1u);
  EXPECT_EQ(calibrated.steps[0].step.find("conv1"), 0u);
  ASSERT_EQ(calibrated.kept_fp16.size(), 1u);
  EXPECT_THAT(calibrated.kept_fp16[0], ::testing::HasSubstr("one output pixel an image"));
  EXPECT_EQ(calibrated.quantize_steps, 1u);  // x only: nothing quantizes the pooled vector

  options.scales = {{"g", 1.f / 127.f}, {"y", 1.f / 127.f}};
  Int8Summary given;
  (void)int8_cpu_plan(m.bytes(), options, &given);
  EXPECT_EQ(given.steps.size(), 2u);
  EXPECT_THAT(given.kept_fp16, ::testing::IsEmpty());
}

TEST(Int8Precision, DepthwiseConvsRunInInt8) {
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({1, 16, 10, 10}, 40, &held_out);
  const ConvertResult r = convert_int8(mobile_block(), options);
  EXPECT_EQ(r.summary.int8_steps, 3u) << format_summary("p", r.summary);
  EXPECT_EQ(r.summary.int8_tensors, 2u);  // expand -> depthwise -> project
  const fb::Plan* p = fb::GetPlan(r.plan.data());
  bool depthwise_int8 = false;
  for (const auto* s : *p->steps())
    depthwise_int8 |= s->op() == fb::OpFamily::Conv && s->params_as_ConvParams()->groups() == 64 &&
                      p->tensors()->Get(s->inputs()->Get(0))->dtype() == fb::DType::Int8;
  EXPECT_TRUE(depthwise_int8);
  expect_int8_close(r.plan, mobile_block(), held_out);
  // For a GPU the depthwise step gets an INT8 depthwise kernel: at 10x10 (1,600 threads of 4
  // channels, fewer than 128 threads of 8 an SM) the one of 1 or 4 channels a thread ...
  options.target = "h100";
  const ConvertResult gpu = convert_int8(mobile_block(), options);
  const std::vector<std::string> kernels = conv_kernels(gpu.plan);
  EXPECT_THAT(kernels, ::testing::Contains("jp_conv_depthwise_i8"))
      << ::testing::PrintToString(kernels);
  // ... at 48x48 (18,432 threads of 8 channels, 140 an SM of an H100) the tiled 3x3 kernel.
  std::vector<std::vector<float>> held_out48;
  ConvertOptions options48 = int8_cpu_options({1, 16, 48, 48}, 41, &held_out48);
  options48.target = "h100";
  const std::vector<std::string> kernels48 =
      conv_kernels(convert_int8(mobile_block(48), options48).plan);
  EXPECT_THAT(kernels48, ::testing::Contains("jp_conv_dw3_i8"))
      << ::testing::PrintToString(kernels48);
}

// A RegNet-style bottleneck: 1x1 32 -> 48, a grouped 3x3 of 8 channels a group (`gw`), 1x1
// back to 32 plus the block's input. With 8 a group the grouped conv runs in INT8 (the GPU's
// grouped INT8 tile); with 4 (ResNeXt's first stage) it stays Float16, saying why.
ModelBuilder grouped_block(int64_t gw) {
  ModelBuilder m;
  m.input("x", {1, 32, 8, 8}).output("y");
  m.random("w1", {48, 32, 1, 1}, -0.3f, 0.3f).random("b1", {48}, -0.1f, 0.1f);
  m.random("wg", {48, gw, 3, 3}, -0.3f, 0.3f).random("bg", {48}, -0.1f, 0.1f);
  m.random("w3", {32, 48, 1, 1}, -0.15f, 0.15f);
  m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "reduce");
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto& g = m.node("Conv", {"r1", "wg", "bg"}, {"c2"}, "grouped");
  attr(g, "group", 48 / gw);
  attr(g, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"c2"}, {"r2"}, "relu2");
  m.node("Conv", {"r2", "w3"}, {"c3"}, "expand");
  m.node("Add", {"c3", "x"}, {"a"}, "add");
  m.node("GlobalAveragePool", {"a"}, {"y"}, "pool");
  return m;
}

TEST(Int8Precision, GroupedConvsOf8ChannelsAGroupRunInInt8) {
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({1, 32, 8, 8}, 41, &held_out);
  const ConvertResult r = convert_int8(grouped_block(8), options);
  EXPECT_EQ(r.summary.int8_steps, 3u) << format_summary("p", r.summary);
  EXPECT_THAT(r.summary.kept_fp16, ::testing::IsEmpty());
  expect_int8_close(r.plan, grouped_block(8), held_out);
  options.target = "h100";
  const ConvertResult gpu = convert_int8(grouped_block(8), options);
  const std::vector<std::string> kernels = conv_kernels(gpu.plan);
  EXPECT_THAT(kernels, ::testing::Contains("jp_conv_igemm_32x64_grouped_i8"))
      << ::testing::PrintToString(kernels);

  ConvertOptions four = int8_cpu_options({1, 32, 8, 8}, 42, &held_out);
  const ConvertResult r4 = convert_int8(grouped_block(4), four);
  EXPECT_EQ(r4.summary.int8_steps, 2u) << format_summary("p", r4.summary);
  ASSERT_EQ(r4.summary.kept_fp16.size(), 1u);
  EXPECT_THAT(r4.summary.kept_fp16[0], ::testing::HasSubstr("8 input channels a group"));
}

// Convs of 24 input channels (EfficientNet's and MobileNetV2's 1x1 expansions, and a 3x3 one)
// run in INT8: the GPU takes them with the tile that loads 8-byte halves; 12 input channels
// (not a multiple of 8) as well, their input padded to 16.
ModelBuilder narrow_block(int64_t cin) {
  ModelBuilder m;
  m.input("x", {1, cin, 10, 10}).output("y");
  m.random("w1", {48, cin, 1, 1}, -0.3f, 0.3f).random("b1", {48}, -0.1f, 0.1f);
  m.random("w2", {24, 48, 3, 3}, -0.1f, 0.1f);
  m.random("w3", {16, 24, 3, 3}, -0.1f, 0.1f);
  const auto pads = std::vector<int64_t>{1, 1, 1, 1};
  m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "expand");
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  attr(m.node("Conv", {"r1", "w2"}, {"c2"}, "narrow"), "pads", pads);
  attr(m.node("Conv", {"c2", "w3"}, {"c3"}, "cin24"), "pads", pads);
  m.node("GlobalAveragePool", {"c3"}, {"y"}, "pool");
  return m;
}

TEST(Int8Precision, ConvsOfAMultipleOf8InputChannelsRunInInt8) {
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({1, 24, 10, 10}, 70, &held_out);
  const ConvertResult r = convert_int8(narrow_block(24), options);
  EXPECT_EQ(r.summary.int8_steps, 3u) << format_summary("p", r.summary);
  EXPECT_THAT(r.summary.kept_fp16, ::testing::IsEmpty());
  expect_int8_close(r.plan, narrow_block(24), held_out);
  options.target = "h100";
  const ConvertResult gpu = convert_int8(narrow_block(24), options);
  const std::vector<std::string> kernels = conv_kernels(gpu.plan);
  // expand (24 in, Int8 out) and cin24 (24 in, Float16 out for the pool) take the c8 tiles, as
  // Cin % 16 != 0 must; narrow (48 in) too, as a short-K conv (kernels/cuda/conv_select.cc).
  EXPECT_EQ(std::count_if(kernels.begin(), kernels.end(),
                          [](const std::string& k) { return k.find("_c8_i8") != std::string::npos; }),
            3)
      << ::testing::PrintToString(kernels);

  // 12 input channels: the input is quantized padded to 16 (test_int8_stem.cc).
  std::vector<std::vector<float>> held_out12;
  ConvertOptions twelve = int8_cpu_options({1, 12, 10, 10}, 71, &held_out12);
  const ConvertResult r12 = convert_int8(narrow_block(12), twelve);
  EXPECT_EQ(r12.summary.int8_steps, 3u) << format_summary("p", r12.summary);
  EXPECT_EQ(r12.summary.padded_inputs, 1u);
  EXPECT_THAT(r12.summary.kept_fp16, ::testing::IsEmpty());
  expect_int8_close(r12.plan, narrow_block(12), held_out12);
}

// A U-Net-style down step: conv+relu -> 2x2 max pool -> conv+relu -> 3x3 max pool (stride 1,
// padded, SPPF-style) -> conv. Max commutes with quantization, so both pools move conv1's and
// conv2's Int8 integers with their scales: no quantize step between the convs.
ModelBuilder pooled_block() {
  ModelBuilder m;
  m.input("x", {1, 16, 12, 12}).output("y");
  m.random("w1", {32, 16, 3, 3}, -0.15f, 0.15f).random("b1", {32}, -0.1f, 0.1f);
  m.random("w2", {32, 32, 3, 3}, -0.1f, 0.1f).random("b2", {32}, -0.1f, 0.1f);
  m.random("w3", {16, 32, 1, 1}, -0.3f, 0.3f);
  const auto pads = std::vector<int64_t>{1, 1, 1, 1};
  attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", pads);
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto& p1 = m.node("MaxPool", {"r1"}, {"p1"}, "pool1");
  attr(p1, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(p1, "strides", std::vector<int64_t>{2, 2});
  attr(m.node("Conv", {"p1", "w2", "b2"}, {"c2"}, "conv2"), "pads", pads);
  m.node("Relu", {"c2"}, {"r2"}, "relu2");
  auto& p2 = m.node("MaxPool", {"r2"}, {"p2"}, "pool2");
  attr(p2, "kernel_shape", std::vector<int64_t>{3, 3});
  attr(p2, "pads", pads);
  m.node("Conv", {"p2", "w3"}, {"y"}, "conv3");
  return m;
}

TEST(Int8Precision, MaxPoolsBetweenInt8ConvsMoveInt8) {
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({1, 16, 12, 12}, 60, &held_out);
  const ConvertResult r = convert_int8(pooled_block(), options);
  EXPECT_EQ(r.summary.int8_steps, 3u) << format_summary("p", r.summary);
  EXPECT_EQ(r.summary.int8_pools, 2u);
  EXPECT_EQ(r.summary.quantize_steps, 1u);  // x only
  EXPECT_EQ(r.summary.int8_tensors, 4u);    // r1, p1, r2, p2
  EXPECT_THAT(format_summary("p", r.summary), ::testing::HasSubstr("2 max pools on Int8"));
  const fb::Plan* p = fb::GetPlan(r.plan.data());
  const fb::Step* pool1 = nullptr;
  const fb::Step* conv1 = nullptr;
  const fb::Step* conv2 = nullptr;
  for (const auto* s : *p->steps()) {
    if (s->op() == fb::OpFamily::Pool) {
      EXPECT_EQ(p->tensors()->Get(s->inputs()->Get(0))->dtype(), fb::DType::Int8);
      EXPECT_EQ(p->tensors()->Get(s->outputs()->Get(0))->dtype(), fb::DType::Int8);
      if (pool1 == nullptr) pool1 = s;
    }
    if (s->op() == fb::OpFamily::Conv && s->name()->str().rfind("conv1", 0) == 0) conv1 = s;
    if (s->op() == fb::OpFamily::Conv && s->name()->str().rfind("conv2", 0) == 0) conv2 = s;
  }
  ASSERT_NE(pool1, nullptr);
  ASSERT_NE(conv1, nullptr);
  ASSERT_NE(conv2, nullptr);
  // conv2 reads pool1's integers at conv1's output scale: its epilogue multiplier is that scale
  // times its weights' (max |w| / 127 per channel).
  const float r1_scale = conv1->params_as_ConvParams()->y_scale();
  ASSERT_GT(r1_scale, 0.f);
  const fb::Tensor* epi = p->tensors()->Get(conv2->inputs()->Get(2));
  const float mult0 = reinterpret_cast<const float*>(p->weights()->data() + epi->offset())[0];
  ModelBuilder model = pooled_block();
  float w_max = 0.f;
  for (const auto& init : model.model().graph().initializer())
    if (init.name() == "w2")
      for (int i = 0; i < 32 * 3 * 3; ++i) w_max = std::max(w_max, std::fabs(init.float_data(i)));
  ASSERT_GT(w_max, 0.f);
  EXPECT_EQ(mult0, r1_scale * (w_max / 127.f));
  const std::vector<uint8_t> fp32 = convert_ok(pooled_block()).plan;
  for (const auto& x : held_out) {
    const auto want = float_outputs(run_plan(fp32, {x}))[0];
    const auto got = float_outputs(run_plan(r.plan, {x}))[0];
    for (float v : got) ASSERT_FALSE(std::isnan(v));
    EXPECT_GT(snr_db(got, want), 30.0);
  }
  // Excluded, a pool stays float: its reader gets a quantize step again.
  options.int8_exclude = {"pool1"};
  EXPECT_EQ(convert_int8(pooled_block(), options).summary.int8_pools, 1u);
  EXPECT_EQ(convert_int8(pooled_block(), options).summary.quantize_steps, 2u);
  options.int8_exclude.clear();
  // For a GPU the pools get the Int8 max-pool kernel.
  options.target = "h100";
  const ConvertResult gpu = convert_int8(pooled_block(), options);
  size_t i8_pools = 0;
  for (const auto* s : *fb::GetPlan(gpu.plan.data())->steps())
    i8_pools += s->op() == fb::OpFamily::Pool && s->kernel()->str() == "jp_pool_max_i8";
  EXPECT_EQ(i8_pools, 2u);
}

TEST(Int8Precision, ErrorMeasurementsNeedCalibrationSamples) {
  ConvertOptions options = int8_h100(fresh_dir("calib"), 2, 900);
  options.calibration.cache_path = fresh_dir("cache") + "/scales.cache";
  (void)convert_int8(net(false), options);  // writes the cache
  options.calibration.dir.clear();
  options.int8_max_error = 0.01;
  EXPECT_THAT(convert_error(net(false), options), ::testing::HasSubstr("give --calib DIR"));
}

}  // namespace
}  // namespace jetplan::converter::testing
