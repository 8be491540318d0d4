// The per-pixel class twin (kernels/cpu/pixel_argmax.cc) against a loop written here, on random
// logits in both layouts, and on hand-set ties and NaNs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/pixel_argmax.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

TEST(PixelArgmax, MatchesAPlainLoopInBothLayouts) {
  SEEDED_RNG(rng);
  for (bool last : {false, true}) {
    PixelArgmaxParams p;
    p.classes = 5;
    p.height = 7;
    p.width = 9;
    p.channels_last = last;
    std::vector<float> logits(size_t(5 * 63));
    for (float& v : logits) v = float(rng.integer(-3, 3));  // small integers: many ties
    std::vector<int32_t> out(63, -1);
    cpu::pixel_argmax(p, logits.data(), out.data());
    for (int px = 0; px < 63; ++px) {
      int best = 0;
      for (int c = 1; c < 5; ++c) {
        const float v = logits[size_t(last ? px * 5 + c : c * 63 + px)];
        const float b = logits[size_t(last ? px * 5 + best : best * 63 + px)];
        if (v > b) best = c;  // strictly greater: ties stay with the lower class
      }
      EXPECT_EQ(out[size_t(px)], best) << "pixel " << px << " channels_last " << last;
    }
  }
}

TEST(PixelArgmax, NaNIsNeverChosenOverANumber) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  PixelArgmaxParams p;
  p.classes = 3;
  p.height = 1;
  p.width = 4;
  p.channels_last = true;
  const std::vector<float> logits = {nan, -5.f, -6.f,  1.f, nan, 0.f,
                                     nan, nan,  nan,   2.f, 2.f, nan};
  std::vector<int32_t> out(4, -1);
  cpu::pixel_argmax(p, logits.data(), out.data());
  EXPECT_EQ(out, (std::vector<int32_t>{1, 0, 0, 0}));
}

}  // namespace
}  // namespace jetplan::kernels
