// Camera-frame preprocessing through the C API (jp_preprocess_image, jp_preprocessor_* on a CPU
// plan): the CPU twin (kernels/cpu/image_preprocess.cc) against a reference written here from the
// definitions in jetplan.h, in double: the frame decoded to RGB first (YUYV by BT.601 limited
// range), the fit's scale and bars computed from the sizes, bilinear at half-pixel centres with
// edge replicate, then (pixel / 255 - mean) / std. Random frames of odd sizes, down- and
// upscaled, every format and fit. Tolerance 2e-3 absolute on normalized values (float vs double
// sample coordinates: ~1e-4 pixel at 2000 pixels times a steepest slope of 255 per pixel, over
// 255 * std); FP16 adds its half ulp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "jetplan/jetplan.h"
#include "kernels/cpu/half.h"
#include "tests/runtime/plan_builder.h"

namespace jetplan::testing {
namespace {

struct Frame {
  jp_preprocess_desc desc{};
  std::vector<uint8_t> bytes;
};

Frame random_frame(std::mt19937& rng, jp_pixel_format format, int w, int h, int pad_bytes) {
  Frame f;
  f.desc.format = format;
  f.desc.width = w;
  f.desc.height = h;
  const size_t tight = size_t(w) * (format == JP_PIXEL_YUYV ? 2 : 3);
  f.desc.row_bytes = pad_bytes == 0 ? 0 : tight + size_t(pad_bytes);
  f.desc.fit = JP_FIT_STRETCH;
  const float mean[3] = {0.485f, 0.456f, 0.406f}, std_[3] = {0.229f, 0.224f, 0.225f};
  for (int c = 0; c < 3; ++c) {
    f.desc.mean[c] = mean[c];
    f.desc.std[c] = std_[c];
  }
  f.desc.pad_value = 114.f;
  f.bytes.resize((tight + size_t(pad_bytes)) * size_t(h));
  for (uint8_t& b : f.bytes) b = static_cast<uint8_t>(rng() & 0xff);
  return f;
}

// The frame as RGB doubles in [0, 255], row-major.
std::vector<double> reference_rgb(const Frame& f) {
  const jp_preprocess_desc& d = f.desc;
  const size_t stride = d.row_bytes != 0 ? d.row_bytes
                                         : size_t(d.width) * (d.format == JP_PIXEL_YUYV ? 2 : 3);
  std::vector<double> rgb(size_t(d.width) * d.height * 3);
  for (int y = 0; y < d.height; ++y) {
    const uint8_t* row = f.bytes.data() + stride * size_t(y);
    for (int x = 0; x < d.width; ++x) {
      double r, g, b;
      if (d.format == JP_PIXEL_YUYV) {
        const double luma = 255.0 / 219.0 * (row[2 * x] - 16.0);
        const double u = row[(x / 2) * 4 + 1] - 128.0, v = row[(x / 2) * 4 + 3] - 128.0;
        // BT.601: Kr 0.299, Kb 0.114, chroma range 224.
        r = luma + 255.0 / 224.0 * 1.402 * v;
        g = luma - 255.0 / 224.0 * (1.772 * 0.114 / 0.587 * u + 1.402 * 0.299 / 0.587 * v);
        b = luma + 255.0 / 224.0 * 1.772 * u;
      } else {
        const uint8_t* p = row + 3 * x;
        r = p[0], g = p[1], b = p[2];
        if (d.format == JP_PIXEL_BGR8) std::swap(r, b);
      }
      double* out = &rgb[(size_t(y) * d.width + x) * 3];
      out[0] = std::clamp(r, 0.0, 255.0);
      out[1] = std::clamp(g, 0.0, 255.0);
      out[2] = std::clamp(b, 0.0, 255.0);
    }
  }
  return rgb;
}

// Source coordinate (pixel centres at i) of output position o along an axis, or NAN in a bar.
double source_coord(jp_fit fit, int in, int out, double scale_other_axis_ratio, int o) {
  const double own = double(in) / out;
  double scale = own, start = 0.0;  // frame coordinate of output edge 0
  int bar = 0;
  if (fit == JP_FIT_CENTER_CROP) {
    scale = std::min(own, scale_other_axis_ratio);
    start = (in - out * scale) / 2;
  } else if (fit == JP_FIT_LETTERBOX) {
    scale = std::max(own, scale_other_axis_ratio);
    const int content = std::clamp(int(std::lround(in / scale)), 1, out);
    bar = (out - content) / 2;
    if (o < bar || o >= bar + content) return NAN;
  }
  return start + (o - bar + 0.5) * scale - 0.5;
}

double bilinear(const std::vector<double>& rgb, int w, int h, double sx, double sy, int c) {
  auto tap = [](double s, int n, int* i0, int* i1) {
    s = std::max(s, 0.0);
    *i0 = std::min(int(std::floor(s)), n - 1);
    *i1 = std::min(*i0 + 1, n - 1);
    return s - *i0;
  };
  int x0, x1, y0, y1;
  const double fx = tap(sx, w, &x0, &x1), fy = tap(sy, h, &y0, &y1);
  auto at = [&](int x, int y) { return rgb[(size_t(y) * w + x) * 3 + c]; };
  const double top = at(x0, y0) * (1 - fx) + at(x1, y0) * fx;
  const double bottom = at(x0, y1) * (1 - fx) + at(x1, y1) * fx;
  return top * (1 - fy) + bottom * fy;
}

// Reference output, NCHW or NHWC, in doubles.
std::vector<double> reference(const Frame& f, int out_h, int out_w, bool nchw) {
  const jp_preprocess_desc& d = f.desc;
  const std::vector<double> rgb = reference_rgb(f);
  std::vector<double> out(size_t(3) * out_h * out_w);
  const double rx = double(d.width) / out_w, ry = double(d.height) / out_h;
  for (int oy = 0; oy < out_h; ++oy) {
    const double sy = source_coord(d.fit, d.height, out_h, rx, oy);
    for (int ox = 0; ox < out_w; ++ox) {
      const double sx = source_coord(d.fit, d.width, out_w, ry, ox);
      for (int c = 0; c < 3; ++c) {
        const int from = d.bgr ? 2 - c : c;
        const double pixel = std::isnan(sx) || std::isnan(sy)
                                 ? d.pad_value : bilinear(rgb, d.width, d.height, sx, sy, from);
        const double v = (pixel / 255.0 - d.mean[c]) / d.std[c];
        out[nchw ? (size_t(c) * out_h + oy) * out_w + ox : (size_t(oy) * out_w + ox) * 3 + c] = v;
      }
    }
  }
  return out;
}

::testing::AssertionResult close_to(const std::vector<float>& got, const std::vector<double>& want,
                                    double tolerance) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tolerance))  // NaN fails
      return ::testing::AssertionFailure() << "element " << i << ": " << got[i] << ", want "
                                           << want[i];
  }
  return ::testing::AssertionSuccess();
}

struct Case {
  jp_pixel_format format;
  int w, h, pad_bytes, out_h, out_w;
  jp_fit fit;
  int bgr;
};

TEST(Preprocess, TwinMatchesReferenceOnRandomFrames) {
  std::mt19937 rng(20261126);
  const Case cases[] = {
      {JP_PIXEL_RGB8, 37, 29, 0, 16, 20, JP_FIT_STRETCH, 0},      // downscale
      {JP_PIXEL_BGR8, 13, 7, 5, 31, 23, JP_FIT_STRETCH, 1},       // upscale, padded rows
      {JP_PIXEL_YUYV, 38, 21, 0, 17, 19, JP_FIT_STRETCH, 0},
      {JP_PIXEL_YUYV, 10, 9, 6, 25, 24, JP_FIT_LETTERBOX, 1},
      {JP_PIXEL_RGB8, 641, 479, 3, 224, 224, JP_FIT_CENTER_CROP, 0},
      {JP_PIXEL_RGB8, 101, 33, 0, 64, 64, JP_FIT_LETTERBOX, 0},   // bars top and bottom
      {JP_PIXEL_BGR8, 31, 97, 0, 40, 41, JP_FIT_LETTERBOX, 0},    // bars left and right
      {JP_PIXEL_YUYV, 640, 480, 0, 224, 224, JP_FIT_CENTER_CROP, 0},
      {JP_PIXEL_RGB8, 1, 1, 0, 3, 5, JP_FIT_STRETCH, 0},
  };
  for (const Case& k : cases) {
    Frame f = random_frame(rng, k.format, k.w, k.h, k.pad_bytes);
    f.desc.fit = k.fit;
    f.desc.bgr = k.bgr;
    for (bool nchw : {false, true}) {
      for (jp_dtype dtype : {JP_FLOAT32, JP_FLOAT16}) {
        const size_t n = size_t(3) * k.out_h * k.out_w;
        std::vector<uint8_t> out(n * (dtype == JP_FLOAT16 ? 2 : 4), 0xff);  // NaN poison
        ASSERT_EQ(jp_preprocess_image(&f.desc, f.bytes.data(), dtype, nchw, k.out_h, k.out_w,
                                      out.data(), out.size()), JP_OK) << jp_last_error();
        std::vector<float> got(n);
        for (size_t i = 0; i < n; ++i) {
          if (dtype == JP_FLOAT32) std::memcpy(&got[i], &out[i * 4], 4);
          else got[i] = kernels::half_to_float(uint16_t(out[i * 2] | out[i * 2 + 1] << 8));
        }
        const double tolerance = dtype == JP_FLOAT16 ? 2e-3 + 6 * 0.0005 : 2e-3;
        EXPECT_TRUE(close_to(got, reference(f, k.out_h, k.out_w, nchw), tolerance))
            << "format " << k.format << " " << k.w << "x" << k.h << " -> " << k.out_w << "x"
            << k.out_h << " fit " << k.fit << " nchw " << nchw << " dtype " << dtype;
      }
    }
  }
}

TEST(Preprocess, BadArgumentsAreRefusedByName) {
  std::mt19937 rng(1);
  Frame f = random_frame(rng, JP_PIXEL_YUYV, 9, 4, 0);  // odd width: refused for YUYV
  std::vector<float> out(3 * 4 * 4);
  EXPECT_EQ(jp_preprocess_image(&f.desc, f.bytes.data(), JP_FLOAT32, 1, 4, 4, out.data(),
                                out.size() * 4), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(jp_last_error()).find("even width"), std::string::npos) << jp_last_error();
  f = random_frame(rng, JP_PIXEL_RGB8, 8, 4, 0);
  f.desc.std[1] = 0.f;
  EXPECT_EQ(jp_preprocess_image(&f.desc, f.bytes.data(), JP_FLOAT32, 1, 4, 4, out.data(),
                                out.size() * 4), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(jp_last_error()).find("channel 1"), std::string::npos) << jp_last_error();
  f.desc.std[1] = 1.f;
  f.desc.row_bytes = 10;  // < 8 * 3
  EXPECT_EQ(jp_preprocess_image(&f.desc, f.bytes.data(), JP_FLOAT32, 1, 4, 4, out.data(),
                                out.size() * 4), JP_ERROR_INVALID_ARGUMENT);
  f.desc.row_bytes = 0;
  EXPECT_EQ(jp_preprocess_image(&f.desc, f.bytes.data(), JP_FLOAT32, 1, 4, 4, out.data(),
                                out.size() * 4 - 4), JP_ERROR_SHAPE_MISMATCH);
  EXPECT_EQ(jp_preprocess_image(&f.desc, f.bytes.data(), JP_INT8, 1, 4, 4, out.data(),
                                out.size()), JP_ERROR_INVALID_ARGUMENT);
}

// A CPU plan y = Relu(x), x [1, 3, H, W] or [1, H, W, 3].
std::vector<uint8_t> relu_plan(std::vector<int64_t> shape) {
  PlanSpec spec;
  spec.tensors = {{"x", shape, fb::Storage::Binding, 0, 0},
                  {"y", shape, fb::Storage::Binding, 0, 0}};
  spec.inputs = {{"x", 0}};
  spec.outputs = {{"y", 1}};
  spec.steps = {relu_step(0, 1)};
  return build_plan(spec);
}

TEST(Preprocess, PreprocessorWritesTheInputOfACpuContext) {
  std::mt19937 rng(7);
  for (bool nchw : {true, false}) {
    const int h = 12, w = 21;
    const std::vector<uint8_t> bytes =
        relu_plan(nchw ? std::vector<int64_t>{1, 3, h, w} : std::vector<int64_t>{1, h, w, 3});
    jp_plan* plan = nullptr;
    ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK)
        << jp_last_error();
    jp_context* ctx = nullptr;
    ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
    Frame f = random_frame(rng, JP_PIXEL_YUYV, 40, 30, 0);
    f.desc.fit = JP_FIT_LETTERBOX;
    jp_preprocessor* pre = nullptr;
    ASSERT_EQ(jp_preprocessor_create(ctx, 0, &f.desc, &pre), JP_OK) << jp_last_error();
    ASSERT_EQ(jp_preprocessor_frame_bytes(pre), f.bytes.size());
    EXPECT_EQ(jp_preprocessor_frame(pre, 2), nullptr);
    for (int slot : {1, 0}) {
      std::memcpy(jp_preprocessor_frame(pre, slot), f.bytes.data(), f.bytes.size());
      ASSERT_EQ(jp_preprocessor_run(pre, slot), JP_OK) << jp_last_error();
      ASSERT_EQ(jp_context_enqueue(ctx), JP_OK) << jp_last_error();
      ASSERT_EQ(jp_context_synchronize(ctx), JP_OK) << jp_last_error();
      const void* data = nullptr;
      size_t n = 0;
      ASSERT_EQ(jp_context_get_output(ctx, 0, &data, &n), JP_OK);
      ASSERT_EQ(n, size_t(3 * h * w * 4));
      std::vector<float> got(n / 4);
      std::memcpy(got.data(), data, n);
      std::vector<double> want = reference(f, h, w, nchw);
      for (double& v : want) v = std::max(v, 0.0);
      EXPECT_TRUE(close_to(got, want, 2e-3)) << "nchw " << nchw << " slot " << slot;
      f = random_frame(rng, JP_PIXEL_YUYV, 40, 30, 0);
      f.desc.fit = JP_FIT_LETTERBOX;
    }
    float scale[2], offset[2];
    ASSERT_EQ(jp_preprocessor_geometry(pre, scale, offset), JP_OK);
    // 40x30 into 21x12: the height fills the input (2.5 frame pixels an input pixel), 16 columns
    // of content between bars of 2 and 3 columns.
    EXPECT_FLOAT_EQ(scale[0], 2.5f);
    EXPECT_FLOAT_EQ(scale[1], 2.5f);
    EXPECT_FLOAT_EQ(offset[0], -2 * 2.5f);
    EXPECT_FLOAT_EQ(offset[1], 0.f);
    jp_preprocessor_destroy(pre);
    jp_context_destroy(ctx);
    jp_plan_destroy(plan);
  }
}

TEST(Preprocess, PreprocessorRefusesAnInputThatIsNotAnImage) {
  const std::vector<uint8_t> bytes = relu_plan({1, 4, 5, 6});
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK);
  std::mt19937 rng(3);
  Frame f = random_frame(rng, JP_PIXEL_RGB8, 8, 8, 0);
  jp_preprocessor* pre = reinterpret_cast<jp_preprocessor*>(&f);  // must be reset to null
  EXPECT_EQ(jp_preprocessor_create(ctx, 0, &f.desc, &pre), JP_ERROR_UNSUPPORTED);
  EXPECT_EQ(pre, nullptr);
  EXPECT_NE(std::string(jp_last_error()).find("input 'x'"), std::string::npos) << jp_last_error();
  EXPECT_EQ(jp_preprocessor_create(ctx, 1, &f.desc, &pre), JP_ERROR_INVALID_ARGUMENT);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

}  // namespace
}  // namespace jetplan::testing
