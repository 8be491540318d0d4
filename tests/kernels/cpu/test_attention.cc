// cpu::attention against a reference written here: every operand read by its layout's own index
// formula (not the params' strides), the whole score row kept in double, softmax as
// exp(s - max) / sum, the masks rebuilt from their description; plus a hand-computed case.
// Tolerance: |got - want| <= 1e-4 + 1e-4 |want| (FP32 dot products of up to 128 terms of a few
// units, then exp). Outputs poisoned, guards checked, NaN never passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/attention_case.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;
using attention_test::Case;
using attention_test::Data;
using attention_test::Layout;
using attention_test::Mask;

// Element (b, h, s, d) of operand `which` (0 Q, 1 K, 2 V) of the case's qkv buffer.
double operand(const Case& c, const Data& data, int which, int64_t b, int64_t h, int64_t s,
               int64_t d) {
  const int64_t H = c.heads, D = c.head_dim, S = which == 0 ? c.seq_q : c.seq_kv;
  int64_t at = 0;
  switch (c.layout) {
    case Layout::kBHSD: at = ((b * H + h) * S + s) * D + d; break;
    case Layout::kBSHD: at = ((b * S + s) * H + h) * D + d; break;
    case Layout::kPackedQKV: at = (((b * S + s) * 3 + which) * H + h) * D + d; break;
    case Layout::kPaddedRows: at = ((b * H + h) * S + s) * (D + 3) + d; break;
  }
  const int64_t base = c.layout == Layout::kPackedQKV ? 0 : data.qkv_offset[which];
  return data.qkv[static_cast<size_t>(base + at)];
}

double mask_value(const Case& c, const Data& data, int64_t b, int64_t h, int64_t i, int64_t j) {
  switch (c.mask) {
    case Mask::kNone: return 0;
    case Mask::kPadding: return data.mask[b * c.seq_kv + j];
    case Mask::kBias: return data.mask[(h * c.seq_q + i) * c.seq_kv + j];
    case Mask::kFull: return data.mask[((b * c.heads + h) * c.seq_q + i) * c.seq_kv + j];
  }
  return 0;
}

// O in the case's output layout: [B, S, H, D] for kBSHD and kPackedQKV, else [B, H, S, D].
std::vector<double> reference(const Case& c, const Data& data) {
  const int64_t B = c.batch, H = c.heads, Sq = c.seq_q, Sk = c.seq_kv, D = c.head_dim;
  const bool bshd = c.layout == Layout::kBSHD || c.layout == Layout::kPackedQKV;
  std::vector<double> out(static_cast<size_t>(B * H * Sq * D));
  const double scale = data.p.scale, neg_inf = -std::numeric_limits<double>::infinity();
  std::vector<double> s(static_cast<size_t>(Sk));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Sq; ++i) {
        double max = neg_inf;
        for (int64_t j = 0; j < Sk; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += operand(c, data, 0, b, h, i, d) * operand(c, data, 1, b, h, j, d);
          s[j] = (c.causal && j > i) ? neg_inf : scale * dot + mask_value(c, data, b, h, i, j);
          max = std::max(max, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < Sk; ++j) sum += max == neg_inf ? 0 : std::exp(s[j] - max);
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < Sk && sum > 0; ++j)
            acc += std::exp(s[j] - max) / sum * operand(c, data, 2, b, h, j, d);
          const int64_t at = bshd ? ((b * Sq + i) * H + h) * D + d : ((b * H + h) * Sq + i) * D + d;
          out[static_cast<size_t>(at)] = acc;
        }
      }
  return out;
}

TEST(CpuAttention, MatchesDoubleReferenceOverLayoutsAndMasks) {
  SEEDED_RNG(rng);
  const Case cases[] = {
      {2, 3, 17, 17, 32, Layout::kBHSD, Mask::kNone, false},
      {2, 2, 9, 13, 64, Layout::kBSHD, Mask::kPadding, false},
      {1, 4, 11, 11, 16, Layout::kPackedQKV, Mask::kBias, false},
      {2, 2, 7, 12, 80, Layout::kPaddedRows, Mask::kFull, false},
      {1, 2, 12, 12, 24, Layout::kBHSD, Mask::kNone, true},
      {2, 1, 5, 9, 8, Layout::kBSHD, Mask::kPadding, true},  // causal with Sq < Sk: top-left
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.str());
    const Data data = attention_test::make_data(c, rng);
    Output o(data.out_elements);
    const float* qkv = data.qkv.data();
    cpu::attention(data.p, qkv, qkv, qkv, data.mask.empty() ? nullptr : data.mask.data(),
                   o.data());
    EXPECT_TRUE(all_close(o, reference(c, data), {1e-4, 1e-4}));
    EXPECT_TRUE(o.guard_intact());
  }
}

// The Int8 form (attention_to_int8, an INT8 plan's attention in front of an INT8 output
// projection): each output the double reference times the inverse scale, rounded half to even
// and saturated; within 1e-3 of a rounding boundary (the FP32 twin's error) either neighbour.
// Head dims past 128 are taken 128 at a time (a stack row, no allocation): 300 takes 3 passes.
TEST(CpuAttention, IntoInt8RoundsTheReferenceWithTheInverseScale) {
  SEEDED_RNG(rng);
  const Case cases[] = {
      {2, 3, 17, 17, 32, Layout::kBHSD, Mask::kNone, false},
      {1, 4, 11, 11, 16, Layout::kPackedQKV, Mask::kBias, false},
      {2, 2, 7, 12, 80, Layout::kPaddedRows, Mask::kFull, false},
      {2, 1, 5, 9, 8, Layout::kBSHD, Mask::kPadding, true},
      {1, 2, 9, 11, 300, Layout::kBHSD, Mask::kPadding, false},  // head dims in 3 passes
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.str());
    Data data = attention_test::make_data(c, rng);
    data.p.inv_scale_input = data.p.has_mask ? 4 : 3;
    const float inv_o = 127.f / 0.5f;  // some outputs saturate
    std::vector<int8_t> o(static_cast<size_t>(data.out_elements), 0x5a);
    const float* qkv = data.qkv.data();
    cpu::attention_to_int8(data.p, qkv, qkv, qkv, data.mask.empty() ? nullptr : data.mask.data(),
                           inv_o, o.data());
    const std::vector<double> want = reference(c, data);
    ASSERT_EQ(want.size(), o.size());
    for (size_t i = 0; i < o.size(); ++i) {
      const double r = want[i] * inv_o;
      const double q = std::min(127.0, std::max(-128.0, std::nearbyint(r)));
      const bool boundary = std::fabs(std::fabs(r - std::floor(r)) - 0.5) < 1e-3;
      if (boundary && std::fabs(r) < 127.5)
        EXPECT_LE(std::fabs(o[i] - q), 1.0) << i;
      else
        EXPECT_EQ(o[i], static_cast<int>(q)) << i << ": " << r;
    }
  }
}

// q = [1, 0], keys [1, 0] and [0, 0], scale ln 3: scores ln 3 and 0, weights 3/4 and 1/4; the
// second query row is masked out entirely (-inf) and yields zeros, not NaN.
TEST(CpuAttention, HandComputedWeightsAndMaskedRow) {
  AttentionParams p;
  p.seq_q = 2;
  p.seq_kv = 2;
  p.head_dim = 2;
  p.scale = std::log(3.f);
  p.has_mask = true;
  p.q = p.k = p.v = p.o = {4, 4, 2};
  p.mask_q = 2;
  p.mask_kv = 1;
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> q = {1, 0, 1, 0}, k = {1, 0, 0, 0}, v = {1, 2, 3, 4};
  const std::vector<float> mask = {0, 0, -inf, -inf};
  Output o(4);
  cpu::attention(p, q.data(), k.data(), v.data(), mask.data(), o.data());
  EXPECT_TRUE(all_close(o, {1.5, 2.5, 0, 0}, {1e-6, 1e-6}));
}

}  // namespace
}  // namespace jetplan::kernels
