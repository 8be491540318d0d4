// Calibration end to end on a tiny conv model: minmax gives the exact max |x| of the samples for
// the input and of the plan's own results for the other tensors, by their ONNX names; the result
// does not depend on the thread count; the cache round-trips, is reused without the data and is
// refused for another model or method; bad samples are named, the first by name whatever the
// threads; images run through their preprocessing; the step observer of a converted plan sees
// what a plain run returns.
#include <gmock/gmock.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "converter/src/calibrate/calibrate.h"
#include "converter/src/ir/error.h"
#include "jetplan/jetplan.h"
#include "tests/converter/calibrate/calib_test_util.h"
#include "tests/converter/util/onnx_builder.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::HasSubstr;

// x [1,2,4,4] --Conv 3x3 pad 1--> c --Relu--> y
std::string conv_model(float weight_scale = 1.f) {
  ModelBuilder m;
  m.input("x", {1, 2, 4, 4}).output("y");
  m.random("w", {3, 2, 3, 3}, -weight_scale, weight_scale);
  attr(m.node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"c"}, {"y"}, "relu");
  return m.bytes();
}

std::vector<float> sample_values(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.5f);
  std::vector<float> v(32);
  for (float& x : v) x = dist(rng);
  return v;
}

// `count` samples x_i.npy; returns them.
std::vector<std::vector<float>> write_samples(const std::string& dir, int count) {
  std::vector<std::vector<float>> samples;
  for (int i = 0; i < count; ++i) {
    samples.push_back(sample_values(100 + i));
    write_npy(dir + "/x_" + std::to_string(10 + i) + ".npy", {1, 2, 4, 4}, samples.back());
  }
  return samples;
}

float max_abs(const std::vector<std::vector<float>>& samples) {
  float m = 0.f;
  for (const auto& s : samples)
    for (float v : s) m = std::max(m, std::fabs(v));
  return m;
}

// Runs the FP32 CPU plan of `model` on each sample: the largest |y|.
float max_abs_output(const std::string& model, const ConvertOptions& options,
                     const std::vector<std::vector<float>>& samples) {
  const ConvertResult r = convert_onnx(model, "m.onnx", options);
  jp_plan* plan = nullptr;
  EXPECT_EQ(jp_plan_load_buffer(r.plan.data(), r.plan.size(), JP_LOAD_COPY, &plan), JP_OK);
  jp_context* ctx = nullptr;
  EXPECT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK);
  float m = 0.f;
  for (const auto& s : samples) {
    EXPECT_EQ(jp_context_set_input(ctx, 0, s.data(), s.size() * 4), JP_OK);
    EXPECT_EQ(jp_context_run(ctx), JP_OK);
    const void* data = nullptr;
    size_t bytes = 0;
    EXPECT_EQ(jp_context_get_output(ctx, 0, &data, &bytes), JP_OK);
    for (size_t i = 0; i < bytes / 4; ++i)
      m = std::max(m, std::fabs(static_cast<const float*>(data)[i]));
  }
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
  return m;
}

// On the CPU backend whatever the machine has (test_gpu_calibration.cc compares the GPU's).
CalibrationOptions options_for(const std::string& dir, CalibrationMethod method) {
  CalibrationOptions o;
  o.dir = dir;
  o.method = method;
  o.device = CalibrationDevice::kCpu;
  return o;
}

TEST(Calibrate, MinMaxGivesTheExactMaxOfEachTensorByOnnxName) {
  const std::string dir = fresh_dir("data");
  const auto samples = write_samples(dir, 6);
  const std::string model = conv_model();
  for (bool fuse : {true, false}) {
    ConvertOptions convert;
    convert.fuse = fuse;
    const CalibrationResult r =
        calibrate(model, convert, options_for(dir, CalibrationMethod::kMinMax));
    EXPECT_EQ(r.samples, 6u);
    EXPECT_FALSE(r.from_cache);
    EXPECT_EQ(r.method, CalibrationMethod::kMinMax);
    ASSERT_EQ(r.amax.count("x"), 1u);
    EXPECT_EQ(r.amax.at("x"), max_abs(samples));
    ASSERT_EQ(r.amax.count("y"), 1u);
    EXPECT_EQ(r.amax.at("y"), max_abs_output(model, convert, samples));
    // Unfused, the conv's own output is a tensor of the plan too; fused, it is not.
    EXPECT_EQ(r.amax.count("c"), fuse ? 0u : 1u);
    EXPECT_EQ(r.amax.size(), fuse ? 2u : 3u);
    EXPECT_TRUE(r.no_range.empty());
  }
}

TEST(Calibrate, ResultsDoNotDependOnTheThreadCount) {
  const std::string dir = fresh_dir("data");
  write_samples(dir, 9);
  const std::string model = conv_model();
  ConvertOptions convert;
  convert.fuse = false;
  for (CalibrationMethod method :
       {CalibrationMethod::kEntropy, CalibrationMethod::kMse, CalibrationMethod::kPercentile}) {
    CalibrationOptions o = options_for(dir, method);
    o.threads = 1;
    const CalibrationResult one = calibrate(model, convert, o);
    for (int threads : {2, 3, 4, 16}) {
      o.threads = threads;
      const CalibrationResult many = calibrate(model, convert, o);
      EXPECT_EQ(many.amax, one.amax) << threads << " threads";
    }
    o.threads = 0;
    o.max_samples = 4;
    const CalibrationResult four = calibrate(model, convert, o);
    EXPECT_EQ(four.samples, 4u);
  }
}

TEST(Calibrate, CacheRoundTripsAndIsReusedWithoutTheData) {
  const std::string dir = fresh_dir("data"), cache_dir = fresh_dir("cache");
  write_samples(dir, 5);
  const std::string model = conv_model();
  CalibrationOptions o = options_for(dir, CalibrationMethod::kEntropy);
  o.cache_path = cache_dir + "/model.cache";
  const CalibrationResult first = calibrate(model, ConvertOptions{}, o);
  EXPECT_FALSE(first.from_cache);
  EXPECT_THAT(read_text(o.cache_path), ::testing::StartsWith("jetplan-calibration 1 "));
  o.dir = cache_dir + "/no_such_folder";
  const CalibrationResult again = calibrate(model, ConvertOptions{}, o);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.amax, first.amax);
  EXPECT_EQ(again.samples, 5u);
  o.dir.clear();
  EXPECT_EQ(calibrate(model, ConvertOptions{}, o).amax, first.amax);

  // Another model (other weights), other pinned shapes: refused, naming the cache.
  const std::string other = thrown_error([&] { calibrate(conv_model(2.f), ConvertOptions{}, o); });
  EXPECT_THAT(other, HasSubstr("calibration cache '" + o.cache_path + "' is for another model"));
  ConvertOptions pinned;
  pinned.input_shapes["x"] = {1, 2, 4, 4};
  EXPECT_THAT(thrown_error([&] { calibrate(model, pinned, o); }), HasSubstr("is for another model"));
  o.method = CalibrationMethod::kMse;
  EXPECT_THAT(thrown_error([&] { calibrate(model, ConvertOptions{}, o); }),
              HasSubstr("was made with method entropy, not mse"));
}

TEST(Calibrate, NoDataAndNoCacheIsAnError) {
  const std::string cache_dir = fresh_dir("cache");
  CalibrationOptions o;
  EXPECT_THAT(thrown_error([&] { calibrate(conv_model(), ConvertOptions{}, o); }),
              HasSubstr("calibration needs a folder of samples (--calib DIR)"));
  o.cache_path = cache_dir + "/missing.cache";
  EXPECT_THAT(thrown_error([&] { calibrate(conv_model(), ConvertOptions{}, o); }),
              HasSubstr("the cache '" + o.cache_path + "' does not exist yet"));
}

TEST(Calibrate, TheFirstBadSampleByNameIsReportedWhateverTheThreads) {
  const std::string dir = fresh_dir("data"), cache_dir = fresh_dir("cache");
  write_samples(dir, 12);
  write_npy(dir + "/x_15.npy", {1, 2, 4, 5}, std::vector<float>(40, 1.f));
  write_npy(dir + "/x_19.npy", {2, 4, 4}, std::vector<float>(32, 1.f));  // fine: no batch dim
  write_text(dir + "/x_20.npy", "garbage");
  for (int threads : {1, 4}) {
    CalibrationOptions o = options_for(dir, CalibrationMethod::kMinMax);
    o.threads = threads;
    o.cache_path = cache_dir + "/never.cache";
    EXPECT_THAT(thrown_error([&] { calibrate(conv_model(), ConvertOptions{}, o); }),
                HasSubstr("'" + dir + "/x_15.npy' is 1x2x4x5 '<f4'"));
    struct stat st {};
    EXPECT_NE(stat(o.cache_path.c_str(), &st), 0) << "a cache was written after a failure";
  }
}

TEST(Calibrate, ImagesRunThroughTheirPreprocessing) {
  const std::string dir = fresh_dir("images");
  ModelBuilder m;
  m.input("image", {1, 3, 4, 4}).output("y");
  m.node("Relu", {"image"}, {"y"}, "relu");
  uint8_t brightest = 0;
  for (int i = 0; i < 3; ++i) {
    std::vector<uint8_t> pixels(8 * 6 * 3);
    for (size_t k = 0; k < pixels.size(); ++k)
      pixels[k] = static_cast<uint8_t>((k * 7 + i * 50) % 200);
    for (uint8_t p : pixels) brightest = std::max(brightest, p);
    write_png(dir + "/img" + std::to_string(i) + ".png", 8, 6, 3, pixels);
  }
  CalibrationOptions o = options_for(dir, CalibrationMethod::kMinMax);
  o.preprocess = "resize=4x4,scale=1";
  const CalibrationResult r = calibrate(m.bytes(), ConvertOptions{}, o);
  EXPECT_EQ(r.samples, 3u);
  ASSERT_EQ(r.amax.count("image"), 1u);
  EXPECT_GT(r.amax.at("image"), 0.f);
  EXPECT_LE(r.amax.at("image"), static_cast<float>(brightest));
  o.preprocess = "crop=3";
  EXPECT_THAT(thrown_error([&] { calibrate(m.bytes(), ConvertOptions{}, o); }),
              HasSubstr("image '" + dir + "/img0.png' is 1x3x3x3 after preprocessing"));
}

TEST(Calibrate, AlwaysZeroTensorsGetNoRangeNotAZeroScale) {
  const std::string dir = fresh_dir("data"), cache_dir = fresh_dir("cache");
  ModelBuilder m;
  m.input("x", {1, 4}).output("y");
  m.node("Relu", {"x"}, {"y"}, "relu");
  write_npy(dir + "/a.npy", {1, 4}, {-1.f, -2.f, -3.f, -0.5f});
  CalibrationOptions o = options_for(dir, CalibrationMethod::kMinMax);
  o.cache_path = cache_dir + "/c.cache";
  const CalibrationResult r = calibrate(m.bytes(), ConvertOptions{}, o);
  EXPECT_EQ(r.amax.count("y"), 0u);
  EXPECT_EQ(r.no_range, std::vector<std::string>{"y"});
  EXPECT_EQ(r.amax.at("x"), 3.f);
  const CalibrationResult cached = calibrate(m.bytes(), ConvertOptions{}, o);
  EXPECT_TRUE(cached.from_cache);
  EXPECT_EQ(cached.no_range, r.no_range);
}

// The library prints nothing (jetplan-convert draws the progress line): a progress function is
// told "calibrate", then samples done of all, never going back, ending at all of them.
TEST(Calibrate, ProgressIsToldTheSamplesAndNothingIsPrinted) {
  const std::string dir = fresh_dir("data");
  write_samples(dir, 3);
  const CalibrationOptions o = options_for(dir, CalibrationMethod::kMinMax);
  ConvertOptions convert;
  std::vector<std::pair<size_t, size_t>> told;
  convert.progress = [&](const char* stage, size_t done, size_t total) {
    EXPECT_STREQ(stage, "calibrate");
    told.emplace_back(done, total);
  };
  ::testing::internal::CaptureStderr();
  calibrate(conv_model(), convert, o);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ASSERT_GE(told.size(), 3u);
  EXPECT_EQ(told[0], (std::pair<size_t, size_t>{0, 0}));  // the FP32 plan is being made
  EXPECT_EQ(told[1], (std::pair<size_t, size_t>{0, 3}));
  EXPECT_EQ(told.back(), (std::pair<size_t, size_t>{3, 3}));
  for (size_t i = 2; i < told.size(); ++i) {
    EXPECT_EQ(told[i].second, 3u);
    EXPECT_GE(told[i].first, told[i - 1].first);
  }
}

struct Observed {
  std::vector<std::string> names;
  std::vector<int32_t> steps;
  std::vector<float> last;  // the last float32 tensor seen
};

void observe(void* user, int32_t step, const char* name, jp_dtype dtype, const int64_t* dims,
             int32_t rank, const void* data) {
  auto* o = static_cast<Observed*>(user);
  o->names.push_back(name);
  o->steps.push_back(step);
  size_t n = 1;
  for (int32_t d = 0; d < rank; ++d) n *= static_cast<size_t>(dims[d]);
  if (dtype == JP_FLOAT32)
    o->last.assign(static_cast<const float*>(data), static_cast<const float*>(data) + n);
}

// The runtime's step observer on a converted plan: the ONNX value names in step order, and the
// output as the plain run returns it.
TEST(StepObserver, SeesAConvertedPlansTensorsByOnnxName) {
  ConvertOptions convert;
  convert.fuse = false;
  const ConvertResult r = convert_onnx(conv_model(), "m.onnx", convert);
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(r.plan.data(), r.plan.size(), JP_LOAD_COPY, &plan), JP_OK);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK);
  Observed seen;
  ASSERT_EQ(jp_context_set_step_observer(ctx, observe, &seen), JP_OK);
  const std::vector<float> x = sample_values(5);
  ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
  ASSERT_EQ(jp_context_run(ctx), JP_OK);
  EXPECT_EQ(seen.names, (std::vector<std::string>{"c", "y"}));
  EXPECT_EQ(seen.steps, (std::vector<int32_t>{0, 1}));
  const void* data = nullptr;
  size_t bytes = 0;
  ASSERT_EQ(jp_context_get_output(ctx, 0, &data, &bytes), JP_OK);
  ASSERT_EQ(seen.last.size() * 4, bytes);
  EXPECT_EQ(std::memcmp(seen.last.data(), data, bytes), 0);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

}  // namespace
}  // namespace jetplan::converter::testing
