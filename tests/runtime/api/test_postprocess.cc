// The post-processing of the C API (jp_detect_boxes, jp_detect_workspace_bytes, jp_detector_*,
// jp_pixel_classes): a valid call returns what the kernels' twins compute (those are tested in
// tests/kernels/cpu), a detector or class map on a CPU context's output what jp_detect_boxes or
// jp_pixel_classes give on the same bytes, and every bad argument is refused with JP_ERROR_INVALID_ARGUMENT or
// JP_ERROR_SHAPE_MISMATCH, a message naming it, nothing written to the outputs but a zero count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "jetplan/jetplan.h"
#include "tests/runtime/plan_builder.h"

namespace {

jp_detect_desc small_desc() {
  jp_detect_desc d{};
  d.grid_width = 3;
  d.grid_height = 2;
  d.classes = 2;
  d.stride = 8.f;
  d.image_width = 24.f;
  d.image_height = 16.f;
  d.score_threshold = 0.25f;
  d.iou_threshold = 0.45f;
  d.max_candidates = 10;
  d.max_detections = 4;
  return d;
}

struct DetectCall {
  jp_detect_desc desc = small_desc();
  std::vector<float> head = std::vector<float>(7 * 6, -20.f);  // nothing scores
  alignas(16) unsigned char ws[4096];
  std::vector<jp_detection> out = std::vector<jp_detection>(4);
  int32_t count = -1;
  size_t ws_bytes = 0;
  DetectCall() { ws_bytes = jp_detect_workspace_bytes(&desc); }
  jp_status run() {
    return jp_detect_boxes(&desc, head.data(), head.size() * 4, ws, ws_bytes, out.data(),
                           int32_t(out.size()), &count);
  }
};

TEST(DetectBoxes, OneObject) {
  DetectCall c;
  ASSERT_GT(c.ws_bytes, 0u);
  ASSERT_LE(c.ws_bytes, sizeof c.ws);
  const int cell = 4;  // gx 1, gy 1
  c.head[size_t(0 * 6 + cell)] = 3.f;
  for (int k = 1; k < 5; ++k) c.head[size_t(k * 6 + cell)] = 0.f;
  c.head[size_t(5 * 6 + cell)] = -2.f;
  c.head[size_t(6 * 6 + cell)] = 2.f;
  ASSERT_EQ(c.run(), JP_OK) << jp_last_error();
  ASSERT_EQ(c.count, 1);
  const jp_detection& d = c.out[0];
  EXPECT_EQ(d.class_index, 1);
  EXPECT_EQ(d.candidate, cell * 2 + 1);
  EXPECT_NEAR(d.score, 1 / (1 + std::exp(-3.0)) / (1 + std::exp(-4.0)), 1e-6);
  EXPECT_EQ(d.x0, 8.f);
  EXPECT_EQ(d.y0, 8.f);
  EXPECT_EQ(d.x1, 16.f);
  EXPECT_EQ(d.y1, 16.f);
}

void expect_refused(DetectCall& c, jp_status want, const char* word) {
  c.count = 7;
  EXPECT_EQ(c.run(), want);
  EXPECT_EQ(c.count, 0);
  EXPECT_NE(std::string(jp_last_error()).find(word), std::string::npos) << jp_last_error();
}

TEST(DetectBoxes, RefusesBadDescriptions) {
  struct Case { void (*edit)(jp_detect_desc*); const char* word; };
  const Case cases[] = {
      {[](jp_detect_desc* d) { d->grid_width = 0; }, "grid"},
      {[](jp_detect_desc* d) { d->classes = 0; }, "classes"},
      {[](jp_detect_desc* d) { d->classes = std::numeric_limits<int32_t>::max(); }, "classes"},
      {[](jp_detect_desc* d) { d->grid_width = d->grid_height = 1 << 16; }, "grid"},
      {[](jp_detect_desc* d) { d->stride = -1.f; }, "stride"},
      {[](jp_detect_desc* d) { d->image_width = std::numeric_limits<float>::infinity(); }, "image"},
      {[](jp_detect_desc* d) { d->score_threshold = 1.5f; }, "score_threshold"},
      {[](jp_detect_desc* d) { d->iou_threshold = std::numeric_limits<float>::quiet_NaN(); }, "iou_threshold"},
      {[](jp_detect_desc* d) { d->max_detections = 0; }, "max_detections"},
      {[](jp_detect_desc* d) { d->max_candidates = -3; }, "max_candidates"},
  };
  for (const Case& k : cases) {
    DetectCall c;
    k.edit(&c.desc);
    EXPECT_EQ(jp_detect_workspace_bytes(&c.desc), 0u) << k.word;
    c.ws_bytes = sizeof c.ws;
    expect_refused(c, JP_ERROR_INVALID_ARGUMENT, k.word);
  }
  EXPECT_EQ(jp_detect_workspace_bytes(nullptr), 0u);
}

TEST(DetectBoxes, RefusesBadBuffers) {
  {
    DetectCall c;
    c.head.pop_back();
    expect_refused(c, JP_ERROR_SHAPE_MISMATCH, "head");
  }
  {
    DetectCall c;
    c.ws_bytes -= 1;
    expect_refused(c, JP_ERROR_INVALID_ARGUMENT, "workspace");
  }
  {
    DetectCall c;
    c.out.pop_back();  // 3 < max_detections 4
    expect_refused(c, JP_ERROR_INVALID_ARGUMENT, "max_detections");
  }
  DetectCall c;
  EXPECT_EQ(jp_detect_boxes(&c.desc, c.head.data(), c.head.size() * 4, c.ws + 4, c.ws_bytes,
                            c.out.data(), 4, &c.count), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(jp_last_error()).find("aligned"), std::string::npos);
  EXPECT_EQ(jp_detect_boxes(&c.desc, nullptr, 0, c.ws, c.ws_bytes, c.out.data(), 4, &c.count),
            JP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(jp_detect_boxes(&c.desc, c.head.data(), c.head.size() * 4, c.ws, c.ws_bytes,
                            c.out.data(), 4, nullptr), JP_ERROR_INVALID_ARGUMENT);
}

// A CPU plan y = Relu(x) of `shape`.
std::vector<uint8_t> relu_plan(std::vector<int64_t> shape) {
  using namespace jetplan::testing;
  namespace fb = jetplan::fb;
  PlanSpec spec;
  spec.tensors = {{"x", shape, fb::Storage::Binding, 0, 0}, {"y", shape, fb::Storage::Binding, 0, 0}};
  spec.inputs = {{"x", 0}};
  spec.outputs = {{"y", 1}};
  spec.steps = {relu_step(0, 1)};
  return build_plan(spec);
}

TEST(Detector, OnACpuContextsOutput) {
  const std::vector<uint8_t> bytes = relu_plan({1, 7, 2, 3});
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK)
      << jp_last_error();
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  DetectCall c;
  c.desc.iou_threshold = 0.2f;
  jp_detector* det = nullptr;
  ASSERT_EQ(jp_detector_create(ctx, 0, &c.desc, &det), JP_OK) << jp_last_error();
  for (int run = 0; run < 3; ++run) {
    std::vector<float> x(c.head.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int((i * 37 + size_t(run) * 11) % 13) - 4) / 2;
    ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
    ASSERT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
    for (size_t i = 0; i < x.size(); ++i) c.head[i] = x[i] > 0.f ? x[i] : 0.f;  // the Relu
    ASSERT_EQ(c.run(), JP_OK) << jp_last_error();
    const jp_detection* got = nullptr;
    int32_t n = -1;
    ASSERT_EQ(jp_detector_run(det, &got, &n), JP_OK) << jp_last_error();
    ASSERT_EQ(n, c.count) << "run " << run;
    EXPECT_GT(n, 1) << "a run that tests little";
    for (int32_t i = 0; i < n; ++i)
      EXPECT_EQ(std::memcmp(&got[i], &c.out[size_t(i)], sizeof(jp_detection)), 0) << i;
  }
  jp_detector_destroy(det);
  // Refusals: an output of another size, an index out of range, a bad desc, null arguments.
  DetectCall other;
  other.desc.classes = 3;
  EXPECT_EQ(jp_detector_create(ctx, 0, &other.desc, &det), JP_ERROR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(jp_last_error()).find("'y'"), std::string::npos) << jp_last_error();
  EXPECT_EQ(det, nullptr);
  EXPECT_NE(jp_detector_create(ctx, 1, &c.desc, &det), JP_OK);
  other = DetectCall();
  other.desc.max_detections = 0;
  EXPECT_EQ(jp_detector_create(ctx, 0, &other.desc, &det), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(jp_detector_create(nullptr, 0, &c.desc, &det), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(jp_detector_run(nullptr, nullptr, nullptr), JP_ERROR_INVALID_ARGUMENT);
  jp_detector_destroy(nullptr);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

TEST(ClassMap, OnACpuContextsOutput) {
  for (int last : {0, 1}) {
    const std::vector<int64_t> shape = last ? std::vector<int64_t>{1, 5, 7, 3}
                                            : std::vector<int64_t>{1, 3, 5, 7};
    const std::vector<uint8_t> bytes = relu_plan(shape);
    jp_plan* plan = nullptr;
    ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK)
        << jp_last_error();
    jp_context* ctx = nullptr;
    ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
    jp_class_map* map = nullptr;
    ASSERT_EQ(jp_class_map_create(ctx, 0, last, &map), JP_OK) << jp_last_error();
    std::vector<float> x(105), relu(105);
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = float(int((i * 29) % 11) - 3);
      relu[i] = x[i] > 0.f ? x[i] : 0.f;
    }
    ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
    ASSERT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
    const int32_t* got = nullptr;
    int32_t h = 0, w = 0;
    ASSERT_EQ(jp_class_map_run(map, &got, &h, &w), JP_OK) << jp_last_error();
    EXPECT_EQ(h, 5);
    EXPECT_EQ(w, 7);
    std::vector<int32_t> want(35, -1);
    ASSERT_EQ(jp_pixel_classes(relu.data(), relu.size() * 4, 3, 5, 7, last, want.data(), 35 * 4),
              JP_OK);
    EXPECT_EQ(std::vector<int32_t>(got, got + 35), want) << "channels_last " << last;
    jp_class_map_destroy(map);
    jp_context_destroy(ctx);
    jp_plan_destroy(plan);
  }
  // Refusals: logits that are not 4-D, null arguments.
  const std::vector<uint8_t> bytes = relu_plan({6, 5});
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK);
  jp_class_map* map = nullptr;
  EXPECT_EQ(jp_class_map_create(ctx, 0, 0, &map), JP_ERROR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(jp_last_error()).find("'y'"), std::string::npos) << jp_last_error();
  EXPECT_EQ(map, nullptr);
  EXPECT_EQ(jp_class_map_create(nullptr, 0, 0, &map), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(jp_class_map_run(nullptr, nullptr, nullptr, nullptr), JP_ERROR_INVALID_ARGUMENT);
  jp_class_map_destroy(nullptr);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

TEST(PixelClasses, ClassesAndRefusals) {
  const std::vector<float> logits = {0.f, 5.f, 1.f, 2.f,   // class 0, pixels 0-3 of 2 x 2
                                     1.f, 5.f, 0.f, 3.f};  // class 1
  std::vector<int32_t> out(4, -1);
  ASSERT_EQ(jp_pixel_classes(logits.data(), 32, 2, 2, 2, 0, out.data(), 16), JP_OK);
  EXPECT_EQ(out, (std::vector<int32_t>{1, 0, 0, 1}));  // 5 == 5: the lower class
  ASSERT_EQ(jp_pixel_classes(logits.data(), 32, 2, 2, 2, 1, out.data(), 16), JP_OK);
  EXPECT_EQ(out, (std::vector<int32_t>{1, 1, 1, 1}));  // pairs (0, 5) (1, 2) (1, 5) (0, 3)
  out.assign(4, -1);
  EXPECT_EQ(jp_pixel_classes(logits.data(), 28, 2, 2, 2, 0, out.data(), 16), JP_ERROR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(jp_last_error()).find("28"), std::string::npos) << jp_last_error();
  EXPECT_EQ(jp_pixel_classes(logits.data(), 32, 2, 2, 2, 0, out.data(), 12), JP_ERROR_SHAPE_MISMATCH);
  EXPECT_EQ(jp_pixel_classes(logits.data(), 32, 0, 2, 2, 0, out.data(), 16), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(jp_last_error()).find("classes"), std::string::npos);
  EXPECT_EQ(jp_pixel_classes(nullptr, 32, 2, 2, 2, 0, out.data(), 16), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(out, std::vector<int32_t>(4, -1));
}

}  // namespace
