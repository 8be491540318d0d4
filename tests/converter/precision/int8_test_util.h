// Shared by the INT8 precision tests: calibration folders of random inputs, the SNR of an INT8
// plan's output against FP32, conversion with its failure reported, and a plan's conv kernels.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "converter/src/convert.h"
#include "converter/src/ir/error.h"
#include "tests/converter/util/onnx_builder.h"
#include "tests/converter/calibrate/calib_test_util.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/plan_runner.h"

namespace jetplan::converter::testing {

// Signal-to-noise ratio of `got` against `want`, in dB (NaN in `got` gives NaN, which fails
// every EXPECT_GT).
inline double snr_db(const std::vector<float>& got, const std::vector<float>& want) {
  double signal = 0, noise = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    signal += double(want[i]) * want[i];
    noise += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
  }
  return 10 * std::log10(signal / std::max(noise, 1e-30));
}

// CPU-target INT8 options (min-max) over 4 uniform [-1, 1) inputs of `shape` written to a
// fresh calibration folder (seeds seed..seed+3); the next 4 (seed+4..seed+7) go to *held_out.
inline ConvertOptions int8_cpu_options(const Shape& shape, uint32_t seed,
                                       std::vector<std::vector<float>>* held_out) {
  const std::string dir = fresh_dir("calib");
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  for (uint32_t s = 0; s < 8; ++s) {
    std::vector<float> v(count);
    std::mt19937 rng(seed + s);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (float& e : v) e = dist(rng);
    if (s < 4) write_npy(dir + "/s" + std::to_string(s) + ".npy", shape, v);
    else held_out->push_back(v);
  }
  ConvertOptions options;
  options.target = "cpu";
  options.precision = Precision::kInt8;
  options.calibration.dir = dir;
  options.calibration.method = CalibrationMethod::kMinMax;
  return options;
}

// A GPU plan, or an INT8 CPU plan (channels_last, Int8 convs): the runtime's loader is their
// contract (the test suite's reading of the CPU plan contract covers NCHW float plans only).
// An empty result, and a test failure, where the conversion fails.
inline ConvertResult convert_int8(const ModelBuilder& model, const ConvertOptions& options) {
  try {
    return convert_onnx(model.bytes(), "model.onnx", options);
  } catch (const ConvertError& e) {
    ADD_FAILURE() << e.what();
    return ConvertResult{};
  }
}

// The INT8 plan's outputs against the FP32 plan of `model` on each held-out input: SNR > 30 dB.
inline void expect_int8_close(const std::vector<uint8_t>& int8_plan, const ModelBuilder& model,
                              const std::vector<std::vector<float>>& held_out) {
  const std::vector<uint8_t> fp32 = convert_ok(model).plan;
  for (const auto& x : held_out) {
    const auto want = float_outputs(run_plan(fp32, {x}))[0];
    const auto got = float_outputs(run_plan(int8_plan, {x}))[0];
    EXPECT_GT(snr_db(got, want), 30.0);
  }
}

// The kernels of a GPU plan's steps (only its Conv steps with convs_only), in step order.
inline std::vector<std::string> step_kernels(const std::vector<uint8_t>& plan,
                                             bool convs_only = false) {
  std::vector<std::string> kernels;
  for (const auto* s : *fb::GetPlan(plan.data())->steps())
    if (!convs_only || s->op() == fb::OpFamily::Conv) kernels.push_back(s->kernel()->str());
  return kernels;
}
inline std::vector<std::string> conv_kernels(const std::vector<uint8_t>& plan) {
  return step_kernels(plan, true);
}

}  // namespace jetplan::converter::testing
