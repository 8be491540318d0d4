// Calibration on the GPU (gpu_calibration.h): where there is a GPU, a calibration that runs the
// model as a Float32 plan on it sees every tensor the CPU calibration sees, by the same ONNX
// names, with the same largest |x| up to float32 rounding, and an INT8 conversion calibrated so
// says where it ran; where there is none, --calib-device gpu is an error that says so and auto
// runs on the CPU. Each test skips, visibly, on the machines it is not for.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "converter/src/calibrate/calibrate.h"
#include "converter/src/calibrate/gpu_calibration.h"
#include "jetplan/jetplan.h"
#include "tests/converter/calibrate/calib_test_util.h"
#include "tests/converter/lower/gpu_plan_models.h"
#include "tests/converter/util/onnx_builder.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

bool have_gpu() {
  jp_device_desc d{};
  return jp_cuda_device(&d) == JP_OK;
}

// x [1, 16, 12, 12] -> a 3x3 Conv and a 1x1 Conv of it -> Concat along channels (which a GPU
// plan of another precision writes in place) -> Relu -> 1x1 Conv -> y.
ModelBuilder concat_of_convs() {
  ModelBuilder m(13);
  m.input("x", {1, 16, 12, 12}).output("y");
  m.random("wa", {16, 16, 3, 3}).random("ba", {16}).random("wb", {8, 16, 1, 1});
  m.random("wc", {16, 24, 1, 1}).random("bc", {16});
  attr(m.node("Conv", {"x", "wa", "ba"}, {"a"}, "conv_a"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Conv", {"x", "wb"}, {"b"}, "conv_b");
  attr(m.node("Concat", {"a", "b"}, {"cat"}, "concat"), "axis", int64_t{1});
  m.node("Relu", {"cat"}, {"r"}, "relu");
  m.node("Conv", {"r", "wc", "bc"}, {"y"}, "conv_c");
  return m;
}

struct Case {
  std::string name;
  std::string model;
  std::vector<int64_t> shape;
};

std::vector<Case> cases() {
  return {{"concat_of_convs", concat_of_convs().bytes(), {1, 16, 12, 12}},
          {"gpu_conv_net", gpu_conv_net().bytes(), {1, 8, 8, 8}},
          {"gpu_encoder", gpu_encoder().bytes(), {1, 8, 32}}};
}

// `count` samples of `shape`, normal with a spread of 2.
void write_samples(const std::string& dir, const std::vector<int64_t>& shape, int count) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.f, 2.f);
  for (int i = 0; i < count; ++i) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    write_npy(dir + "/s" + std::to_string(10 + i) + ".npy", shape, v);
  }
}

CalibrationOptions options(const std::string& dir, CalibrationDevice device,
                           CalibrationMethod method) {
  CalibrationOptions o;
  o.dir = dir;
  o.device = device;
  o.method = method;
  return o;
}

TEST(GpuCalibration, WithoutAGpuGpuIsAnErrorAndAutoRunsOnTheCpu) {
  if (have_gpu()) GTEST_SKIP() << "this machine has a GPU: GpuCalibration.MatchesTheCpus runs";
  const CalibrationGpu found = find_calibration_gpu("h100");
  EXPECT_EQ(found.target, "");
  EXPECT_THAT(found.why, StartsWith("no GPU: "));
  const std::string dir = fresh_dir("data");
  write_samples(dir, {1, 16, 12, 12}, 2);
  const std::string model = concat_of_convs().bytes();
  ConvertOptions convert;
  convert.target = "h100";
  EXPECT_THAT(thrown_error([&] {
                calibrate(model, convert,
                          options(dir, CalibrationDevice::kGpu, CalibrationMethod::kMinMax));
              }),
              HasSubstr("--calib-device gpu: no GPU: "));
  const CalibrationResult automatic =
      calibrate(model, convert, options(dir, CalibrationDevice::kAuto, CalibrationMethod::kMinMax));
  EXPECT_THAT(automatic.device, StartsWith("the CPU ("));
  EXPECT_THAT(automatic.device, HasSubstr("not the GPU: no GPU: "));
  const CalibrationResult cpu =
      calibrate(model, convert, options(dir, CalibrationDevice::kCpu, CalibrationMethod::kMinMax));
  EXPECT_EQ(automatic.amax, cpu.amax);
  jp_device_desc d{};
  EXPECT_EQ(jp_cuda_device(&d), JP_ERROR_DEVICE);
  EXPECT_EQ(jp_cuda_device(nullptr), JP_ERROR_INVALID_ARGUMENT);
}

// Every tensor the CPU calibration gives a range, the GPU's does too, with the same largest |x|
// (minmax) within float32 rounding of a sum in another order, 1e-4 * (1 + amax); with the
// histogram methods the same tensors get a range (their clip may move by a bin where a value
// sits on a bin's edge, so their values are not compared here).
TEST(GpuCalibration, MatchesTheCpus) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU here: GpuCalibration.WithoutAGpu... runs instead";
  const CalibrationGpu found = find_calibration_gpu("cpu");
  ASSERT_NE(found.target, "") << found.why;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const std::string dir = fresh_dir(c.name);
    write_samples(dir, c.shape, 5);
    ConvertOptions convert;
    for (CalibrationMethod method : {CalibrationMethod::kMinMax, CalibrationMethod::kMse}) {
      const CalibrationResult cpu =
          calibrate(c.model, convert, options(dir, CalibrationDevice::kCpu, method));
      const CalibrationResult gpu =
          calibrate(c.model, convert, options(dir, CalibrationDevice::kGpu, method));
      EXPECT_THAT(gpu.device, StartsWith("GPU 0 '"));
      EXPECT_THAT(cpu.device, StartsWith("the CPU ("));
      EXPECT_EQ(gpu.samples, 5u);
      ASSERT_FALSE(cpu.amax.empty());
      for (const auto& [name, amax] : cpu.amax) {
        const auto it = gpu.amax.find(name);
        if (it == gpu.amax.end()) {
          ADD_FAILURE() << "tensor '" << name << "' has no range on the GPU";
          continue;
        }
        if (method == CalibrationMethod::kMinMax) {
          EXPECT_LE(std::fabs(it->second - amax), 1e-4 * (1 + amax)) << name;
        }
      }
      for (const auto& [name, amax] : gpu.amax) {
        const size_t in_cpu =
            cpu.amax.count(name) + std::count(cpu.no_range.begin(), cpu.no_range.end(), name);
        EXPECT_EQ(in_cpu, 1u)
            << "tensor '" << name << "' of the GPU calibration is no ONNX tensor of the CPU's";
      }
    }
  }
}

// --precision int8 with calibration on the GPU: the conversion says where it calibrated, the
// same convs run in INT8 as with the CPU's calibration, and the plan runs on this GPU.
TEST(GpuCalibration, AnInt8ConversionCalibratesOnTheGpu) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU here";
  const CalibrationGpu found = find_calibration_gpu("cpu");
  ASSERT_NE(found.target, "") << found.why;
  const std::string dir = fresh_dir("data");
  write_samples(dir, {1, 16, 12, 12}, 4);
  ConvertOptions convert;
  convert.target = found.target;
  convert.precision = ConvertOptions::Precision::kInt8;
  convert.calibration = options(dir, CalibrationDevice::kAuto, CalibrationMethod::kMse);
  const ConvertResult r = convert_onnx(concat_of_convs().bytes(), "m.onnx", convert);
  EXPECT_THAT(r.summary.calibration_device, StartsWith("GPU 0 '"));
  EXPECT_EQ(r.summary.calibration_samples, 4u);
  ConvertOptions on_cpu = convert;
  on_cpu.calibration.device = CalibrationDevice::kCpu;
  const ConvertResult c = convert_onnx(concat_of_convs().bytes(), "m.onnx", on_cpu);
  EXPECT_THAT(c.summary.calibration_device, StartsWith("the CPU ("));
  EXPECT_GE(r.summary.int8_steps, 3u);
  EXPECT_EQ(r.summary.int8_steps, c.summary.int8_steps);
  EXPECT_EQ(r.summary.int8_tensors, c.summary.int8_tensors);
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(r.plan.data(), r.plan.size(), JP_LOAD_COPY, &plan), JP_OK)
      << jp_last_error();
  jp_context* ctx = nullptr;
  EXPECT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  std::vector<float> x(16 * 12 * 12, 0.5f);
  EXPECT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * sizeof(float)), JP_OK);
  EXPECT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

}  // namespace
}  // namespace jetplan::converter::testing
