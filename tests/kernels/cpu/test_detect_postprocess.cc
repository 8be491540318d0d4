// The detector post-processing twin (kernels/cpu/detect_postprocess.cc) on hand-built heads whose
// boxes and scores are worked out by hand: one cell decoded exactly, overlapping boxes of one
// class (suppressed above the IoU threshold, kept at or below it), of two classes (kept), equal
// scores (the lower candidate index wins), max_detections and max_candidates, the score
// threshold and a NaN objectness, the channels-last layout, and detect_exp against std::exp. The
// numpy reference (tests/accuracy/int8_accuracy.py's decode and NMS) checks the same path
// through examples/detect in tests/examples/check_detect.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/detect_postprocess.h"

namespace jetplan::kernels {
namespace {

// A 4 x 4 grid of stride 8 (a 32 x 32 input) with two classes; every cell starts with
// objectness -30 (score ~1e-13: never a candidate), centre logits 0 (the middle of the cell),
// log sizes 0 (one stride), class logits 0.
struct Head {
  DetectParams p;
  std::vector<float> v;  // [5 + C, 4, 4]
  Head() {
    p.grid_w = p.grid_h = 4;
    p.classes = 2;
    p.stride = 8.f;
    p.image_w = p.image_h = 32.f;
    p.score_threshold = 0.01f;
    p.iou_threshold = 0.3f;
    p.max_candidates = 100;
    p.max_detections = 100;
    v.assign(size_t(7 * 16), 0.f);
    for (int cell = 0; cell < 16; ++cell) at(cell, 0) = -30.f;
  }
  float& at(int cell, int k) { return v[size_t(k * 16 + cell)]; }
  // An object in `cell` with objectness logit `obj`, size `cells` strides, `cls` certain.
  void object(int cell, float obj, float cells, int cls) {
    at(cell, 0) = obj;
    at(cell, 3) = at(cell, 4) = std::log(cells);
    at(cell, 5 + cls) = 30.f;  // softmax: 1 - 1e-26, 1 in float
    at(cell, 5 + (1 - cls)) = 0.f;
  }
  std::vector<Detection> run() const {
    std::vector<unsigned char> ws(detect_workspace(p).bytes + 16);
    void* aligned = ws.data() + (16 - reinterpret_cast<uintptr_t>(ws.data()) % 16) % 16;
    std::vector<Detection> out(size_t(p.max_detections) + 1);
    out.back().score = -7.f;  // a guard: never written
    const int32_t n = cpu::detect_postprocess(p, v.data(), aligned, out.data());
    EXPECT_EQ(out.back().score, -7.f);
    out.resize(size_t(n));
    return out;
  }
};

float sigmoid(double x) { return float(1.0 / (1.0 + std::exp(-x))); }

TEST(DetectPostprocess, DecodesOneCellExactly) {
  Head h;
  const int cell = 1 * 4 + 2;  // gx 2, gy 1
  h.at(cell, 0) = 0.f;         // sigmoid 0.5; class logits 0, 0: softmax 0.5 each
  const std::vector<Detection> d = h.run();
  ASSERT_EQ(d.size(), 2u);  // one box per class; the same score: class 0 (lower index) first
  for (int c = 0; c < 2; ++c) {
    EXPECT_EQ(d[size_t(c)].x0, 16.f);  // centre (20, 12), one stride wide and high
    EXPECT_EQ(d[size_t(c)].y0, 8.f);
    EXPECT_EQ(d[size_t(c)].x1, 24.f);
    EXPECT_EQ(d[size_t(c)].y1, 16.f);
    EXPECT_EQ(d[size_t(c)].score, 0.25f);
    EXPECT_EQ(d[size_t(c)].cls, c);
    EXPECT_EQ(d[size_t(c)].index, cell * 2 + c);
  }
}

TEST(DetectPostprocess, CentreOffsetsSizesAndClipping) {
  Head h;
  h.object(0, 3.f, 4.f, 1);  // 32 px wide around (4 + 8 sigmoid(dx), ...): clipped at 0
  h.at(0, 1) = 1.f;
  h.at(0, 2) = -1.f;
  const std::vector<Detection> d = h.run();
  ASSERT_EQ(d.size(), 1u);
  const float cx = 8.f * sigmoid(1.0), cy = 8.f * sigmoid(-1.0);
  EXPECT_NEAR(d[0].x0, 0.f, 0.f);
  EXPECT_NEAR(d[0].y0, 0.f, 0.f);
  EXPECT_NEAR(d[0].x1, cx + 16.f, 2e-5f);
  EXPECT_NEAR(d[0].y1, cy + 16.f, 2e-5f);
  EXPECT_NEAR(d[0].score, sigmoid(3.0), 2e-7f);
  EXPECT_EQ(d[0].cls, 1);
}

// Cells 5 (gx 1, gy 1) and 6 (gx 2, gy 1), two strides each: [4, 4, 20, 20] and [12, 4, 28, 20],
// overlap 8 x 16, IoU 128 / 384 = 1/3.
TEST(DetectPostprocess, OverlappingBoxesOfOneClass) {
  Head h;
  h.object(5, 2.f, 2.f, 0);
  h.object(6, 3.f, 2.f, 0);
  std::vector<Detection> d = h.run();  // IoU 1/3 > 0.3: the better (cell 6) suppresses cell 5
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].index, 12);
  EXPECT_NEAR(d[0].x0, 12.f, 1e-5f);
  EXPECT_NEAR(d[0].x1, 28.f, 1e-5f);
  h.p.iou_threshold = 0.34f;  // 1/3 <= 0.34: both kept, best first
  d = h.run();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].index, 12);
  EXPECT_EQ(d[1].index, 10);
  EXPECT_NEAR(d[1].score, sigmoid(2.0), 2e-7f);
}

TEST(DetectPostprocess, OtherClassesAreNotSuppressed) {
  Head h;
  h.object(5, 2.f, 2.f, 0);
  h.object(6, 3.f, 2.f, 1);
  h.object(7, 1.f, 1.f, 1);   // [24, 8, 32, 16] against cell 6: IoU 32 / 288 = 0.111
  h.object(12, 0.f, 2.f, 1);  // gx 0, gy 3: [0, 20, 12, 32] (clipped), apart from cell 6
  const std::vector<Detection> d = h.run();
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].index, 13);  // cell 6 class 1
  EXPECT_EQ(d[1].index, 10);  // cell 5 class 0: 1/3 with cell 6, another class
  EXPECT_EQ(d[2].index, 15);
  EXPECT_EQ(d[3].index, 25);
  h.p.iou_threshold = 0.1f;  // cell 7 (IoU 0.111 with cell 6, class 1) goes; cell 12 stays
  const std::vector<Detection> e = h.run();
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[1].index, 10);
  EXPECT_EQ(e[2].index, 25);
}

TEST(DetectPostprocess, EqualScoresKeepTheLowerIndex) {
  Head h;
  h.object(5, 2.f, 2.f, 0);
  h.object(6, 2.f, 2.f, 0);  // the same score, IoU 1/3: cell 5 (index 10) ranks first
  std::vector<Detection> d = h.run();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].index, 10);
  h.p.iou_threshold = 0.5f;  // both kept: equal scores in index order
  d = h.run();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].score, d[1].score);
  EXPECT_EQ(d[0].index, 10);
  EXPECT_EQ(d[1].index, 12);
}

TEST(DetectPostprocess, MaxDetectionsAndMaxCandidates) {
  Head h;
  const int cells[] = {0, 2, 8, 10, 15};  // one stride each: apart
  const float obj[] = {1.f, 5.f, 2.f, 4.f, 3.f};
  for (int i = 0; i < 5; ++i) h.object(cells[i], obj[i], 1.f, i % 2);
  h.p.max_detections = 3;
  std::vector<Detection> d = h.run();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].index, 2 * 2 + 1);  // obj 5, cell 2, class 1
  EXPECT_EQ(d[1].index, 10 * 2 + 1);
  EXPECT_EQ(d[2].index, 15 * 2 + 0);
  // Two candidates looked at, and of them the second suppressed: one detection.
  h.p.max_detections = 10;
  h.p.max_candidates = 2;
  h.object(3, 4.5f, 1.f, 1);  // cell 3 moved left to [20, 0, 28, 8]: IoU 1/3 with cell 2
  h.at(3, 1) = -30.f;
  d = h.run();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].index, 5);
}

TEST(DetectPostprocess, ThresholdAndNaN) {
  Head h;
  h.object(0, 0.f, 1.f, 0);  // 0.5
  h.object(15, std::numeric_limits<float>::quiet_NaN(), 1.f, 0);
  h.object(10, 1.f, 1.f, 1);
  h.at(10, 1) = std::numeric_limits<float>::quiet_NaN();  // a NaN centre: x clipped, kept
  h.p.score_threshold = 0.5f;  // equal to the score: a candidate
  std::vector<Detection> d = h.run();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].index, 21);
  EXPECT_EQ(d[1].index, 0);
  h.p.score_threshold = 0.6f;
  d = h.run();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].index, 21);
}

TEST(DetectPostprocess, ChannelsLastIsTheSameHead) {
  Head h;
  h.object(5, 2.f, 2.f, 0);
  h.object(6, 3.f, 1.5f, 1);
  h.object(11, 1.f, 3.f, 0);
  h.at(11, 1) = 0.7f;
  const std::vector<Detection> want = h.run();
  Head last = h;
  last.p.channels_last = true;
  for (int cell = 0; cell < 16; ++cell)
    for (int k = 0; k < 7; ++k) last.v[size_t(cell * 7 + k)] = h.v[size_t(k * 16 + cell)];
  const std::vector<Detection> got = last.run();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].index, want[i].index);
    EXPECT_EQ(got[i].x0, want[i].x0);
    EXPECT_EQ(got[i].y1, want[i].y1);
    EXPECT_EQ(got[i].score, want[i].score);
  }
}

TEST(DetectPostprocess, IouAtTheThresholdDoesNotSuppress) {
  const Detection a{0.f, 0.f, 16.f, 16.f, 0.9f, 0, 0};
  const Detection b{0.f, 0.f, 16.f, 8.f, 0.8f, 0, 2};  // IoU 128 / 256 = 0.5 exactly
  EXPECT_FALSE(detect_suppresses(a, b, 0.5f));
  EXPECT_TRUE(detect_suppresses(a, b, 0.49f));
  const Detection touching{16.f, 0.f, 20.f, 16.f, 0.8f, 0, 4};  // shares an edge only
  EXPECT_FALSE(detect_suppresses(a, touching, 0.f));
  const Detection empty{4.f, 4.f, 4.f, 9.f, 0.8f, 0, 6};  // no area
  EXPECT_FALSE(detect_suppresses(a, empty, 0.f));
}

TEST(DetectPostprocess, ExpWithinTwoUlps) {
  for (float x = -103.f; x <= 88.5f; x += 0.0137f) {
    const double want = std::exp(double(x));
    const float got = detect_exp(x);
    if (want < double(std::numeric_limits<float>::min())) {  // subnormal: absolute
      EXPECT_NEAR(double(got), want, 2e-45) << x;
      continue;
    }
    EXPECT_NEAR(double(got), want, want * 2.5e-7) << x;
  }
  EXPECT_EQ(detect_exp(0.f), 1.f);
  EXPECT_EQ(detect_exp(-200.f), 0.f);
  EXPECT_TRUE(std::isinf(detect_exp(100.f)));
  EXPECT_TRUE(std::isnan(detect_exp(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace jetplan::kernels
