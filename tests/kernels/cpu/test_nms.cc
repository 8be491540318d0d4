// cpu::non_max_suppression against the nine ONNX backend tests test_nonmaxsuppression_* (inputs
// and expected rows copied from their .pb files), hand cases for the score threshold, the
// dynamic-count contract (returned count, *count, rows past it -1, nothing past the capacity) and
// NaN scores, and random problems against the textbook formulation: repeatedly take the best
// remaining box and delete every remaining box that overlaps it too much.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

NmsParams nms_params(int64_t batch, int64_t classes, int64_t boxes, int64_t max_out, float iou,
                     bool has_score, float score, bool center) {
  return NmsParams{batch, classes, boxes, max_out, iou, score, has_score, center};
}

// Runs the kernel; checks the count contract and the -1 padding, returns the selected rows.
std::vector<int64_t> run_nms(const NmsParams& p, const std::vector<float>& boxes,
                             const std::vector<float>& scores) {
  const int64_t capacity = nms_capacity(p);
  IndexOutput selected(capacity * 3), count(1);
  Workspace ws(cpu::nms_workspace_bytes(p));
  const int64_t n = cpu::non_max_suppression(p, boxes.data(), scores.data(), ws.data(),
                                             selected.data(), count.data());
  EXPECT_TRUE(ws.guard_intact()) << "nms wrote past its workspace";
  EXPECT_TRUE(selected.guard_intact()) << "nms wrote past the capacity";
  EXPECT_EQ(count[0], n);
  EXPECT_TRUE(count.guard_intact());
  EXPECT_GE(n, 0);
  EXPECT_LE(n, capacity);
  for (int64_t i = n * 3; i < capacity * 3; ++i) EXPECT_EQ(selected[i], -1) << "row " << i / 3;
  // The count pointer is optional: the same call without it returns the same count.
  IndexOutput again(capacity * 3);
  EXPECT_EQ(cpu::non_max_suppression(p, boxes.data(), scores.data(), ws.data(), again.data(),
                                     nullptr),
            n);
  return std::vector<int64_t>(selected.data(), selected.data() + std::max<int64_t>(n, 0) * 3);
}

// ------------------------------------------------------------------------- ONNX backend data

const std::vector<float> kBoxes = {0, 0,   1, 1,   0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f,
                                   0, 10,  1, 11,  0, 10.1f, 1, 11.1f, 0, 100, 1, 101};
const std::vector<float> kScores = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

TEST(NmsOnnxData, SuppressByIou) {
  EXPECT_EQ(run_nms(nms_params(1, 1, 6, 3, 0.5f, true, 0.f, false), kBoxes, kScores),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(NmsOnnxData, SuppressByIouAndScores) {
  EXPECT_EQ(run_nms(nms_params(1, 1, 6, 3, 0.5f, true, 0.4f, false), kBoxes, kScores),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
}

TEST(NmsOnnxData, LimitOutputSize) {
  EXPECT_EQ(run_nms(nms_params(1, 1, 6, 2, 0.5f, true, 0.f, false), kBoxes, kScores),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
}

TEST(NmsOnnxData, CenterPointBoxFormat) {
  const std::vector<float> boxes = {0.5f, 0.5f,  1, 1, 0.5f, 0.6f,  1, 1, 0.5f, 0.4f,   1, 1,
                                    0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1};
  EXPECT_EQ(run_nms(nms_params(1, 1, 6, 3, 0.5f, true, 0.f, true), boxes, kScores),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(NmsOnnxData, FlippedCoordinates) {
  const std::vector<float> boxes = {1, 1,  0, 0,  0, 0.1f,  1, 1.1f,  0, 0.9f, 1, -0.1f,
                                    0, 10, 1, 11, 1, 10.1f, 0, 11.1f, 1, 101,  0, 100};
  EXPECT_EQ(run_nms(nms_params(1, 1, 6, 3, 0.5f, true, 0.f, false), boxes, kScores),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(NmsOnnxData, IdenticalBoxesAndSingleBox) {
  std::vector<float> boxes;
  for (int i = 0; i < 10; ++i) boxes.insert(boxes.end(), {0, 0, 1, 1});
  EXPECT_EQ(run_nms(nms_params(1, 1, 10, 3, 0.5f, true, 0.f, false), boxes,
                    std::vector<float>(10, 0.9f)),
            (std::vector<int64_t>{0, 0, 0}));  // equal scores: the lowest index wins
  EXPECT_EQ(run_nms(nms_params(1, 1, 1, 3, 0.5f, true, 0.f, false), {0, 0, 1, 1}, {0.9f}),
            (std::vector<int64_t>{0, 0, 0}));
}

TEST(NmsOnnxData, TwoBatchesAndTwoClasses) {
  std::vector<float> two_boxes = kBoxes, two_scores = kScores;
  two_boxes.insert(two_boxes.end(), kBoxes.begin(), kBoxes.end());
  two_scores.insert(two_scores.end(), kScores.begin(), kScores.end());
  EXPECT_EQ(run_nms(nms_params(2, 1, 6, 2, 0.5f, true, 0.f, false), two_boxes, two_scores),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 1, 0, 3, 1, 0, 0}));
  EXPECT_EQ(run_nms(nms_params(1, 2, 6, 2, 0.5f, true, 0.f, false), kBoxes, two_scores),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0}));
}

// ---------------------------------------------------------------------------------- hand cases

TEST(Nms, ScoreThresholdIsStrictAndOptional) {
  // Disjoint boxes: nothing suppresses, only the threshold and the limit select.
  const std::vector<float> boxes = {0, 0, 1, 1, 0, 2, 1, 3, 0, 4, 1, 5, 0, 6, 1, 7};
  const std::vector<float> scores = {0.5f, -1.f, 0.2f, 0.5f};
  EXPECT_EQ(run_nms(nms_params(1, 1, 4, 4, 0.5f, true, 0.2f, false), boxes, scores),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 3}));  // 0.2 is not > 0.2
  EXPECT_EQ(run_nms(nms_params(1, 1, 4, 4, 0.5f, false, 0.2f, false), boxes, scores),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 3, 0, 0, 2, 0, 0, 1}));
}

TEST(Nms, IouThresholdIsStrict) {
  // A 1x2 box and the 1x1 box in its left half: IoU exactly 1 / 2. At threshold 0.5 it does not
  // exceed, both stay; at 0.49 the lower-scored one goes.
  const std::vector<float> boxes = {0, 0, 1, 2, 0, 0, 1, 1};
  const std::vector<float> scores = {0.9f, 0.8f};
  EXPECT_EQ(run_nms(nms_params(1, 1, 2, 2, 0.5f, false, 0, false), boxes, scores),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(run_nms(nms_params(1, 1, 2, 2, 0.49f, false, 0, false), boxes, scores),
            (std::vector<int64_t>{0, 0, 0}));
  // Touching edges (intersection 0) never suppress, even at threshold 0.
  const std::vector<float> touching = {0, 0, 1, 1, 0, 1, 1, 2};
  EXPECT_EQ(run_nms(nms_params(1, 1, 2, 2, 0.f, false, 0, false), touching, scores).size(), 6u);
}

TEST(Nms, NaNScoresAreNeverSelectedAndZeroMaxSelectsNothing) {
  const std::vector<float> boxes = {0, 0, 1, 1, 0, 2, 1, 3, 0, 4, 1, 5};
  EXPECT_EQ(run_nms(nms_params(1, 1, 3, 3, 0.5f, false, 0, false), boxes, {NAN, 0.1f, NAN}),
            (std::vector<int64_t>{0, 0, 1}));
  EXPECT_TRUE(run_nms(nms_params(1, 1, 3, 0, 0.5f, false, 0, false), boxes, {1, 2, 3}).empty());
  NmsParams negative = nms_params(1, 1, 3, -5, 0.5f, false, 0, false);
  EXPECT_EQ(nms_capacity(negative), 0);
  EXPECT_TRUE(run_nms(negative, boxes, {1, 2, 3}).empty());
  // Capacity clamps a huge max_output_per_class to the number of boxes.
  EXPECT_EQ(nms_capacity(nms_params(2, 3, 3, INT64_MAX, 0.5f, false, 0, false)), 2 * 3 * 3);
}

// ------------------------------------------------------------------------------- random

struct Box {
  double x1, y1, x2, y2;  // x1 <= x2, y1 <= y2
};

double iou(const Box& a, const Box& b) {
  const double w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  const double h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  if (w <= 0 || h <= 0) return 0;
  return w * h / ((a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - w * h);
}

std::vector<int64_t> nms_reference(const NmsParams& p, const std::vector<Box>& boxes,
                                   const std::vector<float>& scores) {
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t c = 0; c < p.num_classes; ++c) {
      std::vector<int64_t> remaining;
      for (int64_t i = 0; i < p.num_boxes; ++i)
        if (!p.has_score_threshold ||
            scores[size_t((b * p.num_classes + c) * p.num_boxes + i)] > p.score_threshold)
          remaining.push_back(i);
      int64_t kept = 0;
      while (!remaining.empty() && kept < p.max_output_per_class) {
        const auto score = [&](int64_t i) {
          return scores[size_t((b * p.num_classes + c) * p.num_boxes + i)];
        };
        int64_t best = remaining[0];
        for (int64_t i : remaining)
          if (score(i) > score(best)) best = i;  // remaining is ascending: ties keep the lower
        rows.insert(rows.end(), {b, c, best});
        ++kept;
        std::vector<int64_t> next;
        for (int64_t i : remaining)
          if (i != best && iou(boxes[size_t(b * p.num_boxes + i)],
                               boxes[size_t(b * p.num_boxes + best)]) <= p.iou_threshold)
            next.push_back(i);
        remaining = next;
      }
    }
  return rows;
}

TEST(Nms, RandomBothEncodingsAgainstGreedyDeletion) {
  SEEDED_RNG(rng);
  for (int rep = 0; rep < 40; ++rep) {
    const int64_t batch = rng.integer(1, 3), classes = rng.integer(1, 3), n = rng.integer(1, 40);
    const NmsParams corner = nms_params(batch, classes, n, rng.integer(1, 12),
                                        rng.uniform(0.1f, 0.7f), rng.coin(), rng.uniform(0.f, 0.5f),
                                        false);
    SCOPED_TRACE("rep " + std::to_string(rep));
    std::vector<Box> boxes;
    std::vector<float> corners, centers;
    for (int64_t i = 0; i < batch * n; ++i) {
      // Multiples of 1/8 are exact in float, so both encodings describe the very same box.
      const float x = float(rng.integer(0, 80)) / 8, y = float(rng.integer(0, 80)) / 8;
      const float w = float(rng.integer(1, 32)) / 8, h = float(rng.integer(1, 32)) / 8;
      boxes.push_back({x, y, x + w, y + h});
      if (rng.coin()) corners.insert(corners.end(), {y, x, y + h, x + w});
      else corners.insert(corners.end(), {y + h, x + w, y, x});  // the other two corners
      centers.insert(centers.end(), {x + w / 2, y + h / 2, w, h});
    }
    std::vector<float> scores = rng.integers(batch * classes * n, 0, 20);  // many equal scores
    for (float& s : scores) s /= 20;
    const std::vector<int64_t> want = nms_reference(corner, boxes, scores);
    EXPECT_EQ(run_nms(corner, corners, scores), want);
    NmsParams center = corner;
    center.center_point_box = true;
    EXPECT_EQ(run_nms(center, centers, scores), want);
  }
}

}  // namespace
}  // namespace jetplan::kernels
