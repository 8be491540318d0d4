// cpu::pool against pooling over an explicitly padded tensor, and hand-computed cases.
// Every output is poisoned before each call and has a guard zone after its end; every
// comparison fails on NaN; inputs come from a seeded std::mt19937 whose seed is printed with any
// failure (JETPLAN_TEST_SEED=<n> replays it). See tests/kernels/kernel_test_util.h.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// ------------------------------------------------------------------------------------- pool

struct PoolShape : WindowShape {
  int64_t batch = 1, channels = 1;
  Shape out;
};

PoolParams pool_params(const PoolShape& s, PoolKind kind, bool count_include_pad) {
  PoolParams p;
  p.kind = kind;
  set_window(p, s, s.out);
  p.batch = s.batch;
  p.channels = s.channels;
  for (size_t d = 0; d < s.in.size(); ++d) p.pad_end[d] = s.pad_end[d];
  p.count_include_pad = count_include_pad;
  return p;
}

// w is {in, kernel, stride, dilation, pad_begin, pad_end}, one entry per spatial dim.
PoolShape pool_shape(const WindowShape& w, const Shape& out) {
  PoolShape s;
  static_cast<WindowShape&>(s) = w;
  s.out = out;
  return s;
}

PoolShape pool_1d(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                  int64_t pad_begin, int64_t pad_end) {
  return pool_shape(window_1d(in, kernel, stride, dilation, pad_begin, pad_end), {out});
}

// Runs one pool on x; the output is poisoned first.
Output run_pool(const PoolShape& s, PoolKind kind, bool include_pad, const std::vector<float>& x) {
  Output y(s.batch * s.channels * volume(s.out));
  cpu::pool(pool_params(s, kind, include_pad), x.data(), y.data());
  return y;
}

TEST(Pool, HandMax2D) {
  const PoolShape s = pool_shape({{4, 4}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}}, {2, 2});
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[size_t(i)] = float(i + 1);
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kMax, false, x), {6, 8, 14, 16}, kExact));
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, false, x), {3.5, 5.5, 11.5, 13.5}, kExact));
}

TEST(Pool, HandMaxSkipsPaddingOfNegativeInput) {
  // Padding read as 0 would make every window touching it 0.
  const PoolShape s = pool_shape({{3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {0, 0}}, {3, 3});
  const std::vector<float> x = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kMax, false, x),
                        {-1, -1, -2, -1, -1, -2, -4, -4, -5}, kExact));
}

TEST(Pool, HandAverageCountIncludePadBothWays) {
  const PoolShape s = pool_1d(4, 4, 3, 1, 1, 1, 1);
  const std::vector<float> x = {1, 2, 3, 4};
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, true, x), {1, 2, 3, 7.0 / 3}, {1e-6, 0}));
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, false, x), {1.5, 2, 3, 3.5}, kExact));

  const PoolShape corner =
      pool_shape({{2, 2}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}}, {3, 3});
  const std::vector<float> c = {1, 2, 3, 4};
  EXPECT_TRUE(all_close(run_pool(corner, PoolKind::kAverage, true, c),
                        {0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1}, kExact));
  EXPECT_TRUE(all_close(run_pool(corner, PoolKind::kAverage, false, c),
                        {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}, kExact));
}

TEST(Pool, HandCeilModeWindowPastPadEndCountsNothing) {
  // Windows {0,1,2} {2,3,4} {4,5,6}; position 6 is past the input.
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const PoolShape no_pad = pool_1d(6, 3, 3, 2, 1, 0, 0);  // 6 lies beyond pad_end: never counts
  EXPECT_TRUE(all_close(run_pool(no_pad, PoolKind::kAverage, true, x), {2, 4, 5.5}, kExact));
  EXPECT_TRUE(all_close(run_pool(no_pad, PoolKind::kAverage, false, x), {2, 4, 5.5}, kExact));
  EXPECT_TRUE(all_close(run_pool(no_pad, PoolKind::kMax, false, x), {3, 5, 6}, kExact));
  const PoolShape pad_end = pool_1d(6, 3, 3, 2, 1, 0, 1);  // 6 is padding: counts when included
  EXPECT_TRUE(
      all_close(run_pool(pad_end, PoolKind::kAverage, true, x), {2, 4, 11.0 / 3}, {1e-6, 0}));
  EXPECT_TRUE(all_close(run_pool(pad_end, PoolKind::kAverage, false, x), {2, 4, 5.5}, kExact));
}

TEST(Pool, HandDilation) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7};
  const PoolShape s = pool_1d(7, 4, 2, 1, 3, 0, 0);  // taps o and o + 3
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kMax, false, x), {4, 5, 6, 7}, kExact));
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, false, x), {2.5, 3.5, 4.5, 5.5}, kExact));

  // Taps {-2, 0, 2}, {0, 2, 4}, {2, 4, 6}: -2 and 6 are padding.
  const std::vector<float> y = {1, 2, 3, 4, 5};
  const PoolShape p = pool_1d(5, 3, 3, 2, 2, 2, 2);
  EXPECT_TRUE(all_close(run_pool(p, PoolKind::kMax, false, y), {3, 5, 5}, kExact));
  EXPECT_TRUE(
      all_close(run_pool(p, PoolKind::kAverage, true, y), {4.0 / 3, 3, 8.0 / 3}, {1e-6, 0}));
  EXPECT_TRUE(all_close(run_pool(p, PoolKind::kAverage, false, y), {2, 3, 4}, kExact));
}

TEST(Pool, HandWindowWhollyInPaddingGivesZero) {
  // The documented choice of pool.cc: no input under the window gives 0 for max and average.
  const std::vector<float> x = {-1, -2};
  const PoolShape s = pool_1d(2, 4, 1, 1, 1, 1, 1);
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kMax, false, x), {0, -1, -2, 0}, kExact));
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, true, x), {0, -1, -2, 0}, kExact));
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, false, x), {0, -1, -2, 0}, kExact));
}

TEST(Pool, Hand3DAndChannels) {
  PoolShape s =
      pool_shape({{2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}}, {1, 1, 1});
  s.channels = 2;
  std::vector<float> x(16);
  for (int i = 0; i < 8; ++i) {
    x[size_t(i)] = float(i + 1);
    x[size_t(i + 8)] = -10.f * float(i + 1);
  }
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kMax, false, x), {8, -10}, kExact));
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, false, x), {4.5, -45}, kExact));
}

// Over an explicitly padded tensor: the input is laid into its middle, a mask marks real
// elements, and window taps past the padded extent do not exist.
std::vector<double> pool_reference(const PoolShape& s, PoolKind kind, bool include_pad,
                                   const std::vector<float>& x) {
  const size_t rank = s.in.size();
  Shape padded(rank);
  for (size_t d = 0; d < rank; ++d) padded[d] = s.pad_begin[d] + s.in[d] + s.pad_end[d];
  const int64_t in_vol = volume(s.in), out_vol = volume(s.out), k_vol = volume(s.kernel);
  std::vector<double> y;
  for (int64_t plane = 0; plane < s.batch * s.channels; ++plane) {
    std::vector<double> value(size_t(volume(padded)), 0.0);
    std::vector<bool> real(size_t(volume(padded)), false);
    for (int64_t i = 0; i < in_vol; ++i) {
      Shape c = unravel(i, s.in);
      for (size_t d = 0; d < rank; ++d) c[d] += s.pad_begin[d];
      value[size_t(ravel(c, padded))] = x[size_t(plane * in_vol + i)];
      real[size_t(ravel(c, padded))] = true;
    }
    for (int64_t op = 0; op < out_vol; ++op) {
      const Shape oc = unravel(op, s.out);
      double sum = 0, max = -INFINITY;
      int64_t taps = 0, inputs = 0;
      for (int64_t kk = 0; kk < k_vol; ++kk) {
        const Shape kc = unravel(kk, s.kernel);
        Shape pc(rank);
        bool exists = true;
        for (size_t d = 0; d < rank; ++d) {
          pc[d] = oc[d] * s.stride[d] + kc[d] * s.dilation[d];
          exists = exists && pc[d] < padded[d];
        }
        if (!exists) continue;
        ++taps;
        const size_t at = size_t(ravel(pc, padded));
        if (!real[at]) continue;
        ++inputs;
        sum += value[at];
        max = std::max(max, value[at]);
      }
      if (inputs == 0) ADD_FAILURE() << "the test built a window without input at " << op;
      y.push_back(kind == PoolKind::kMax ? max : sum / double(include_pad ? taps : inputs));
    }
  }
  return y;
}

// MaxPool's indices (ONNX Indices, storage_order 0): the flat NCHW offset of the first input
// element in the window (in row-major window order) equal to the max, found by brute force over
// inputs with many ties (small integers), padding and dilation.
TEST(Pool, MaxIndicesAreTheFirstArgmaxInFlatNchwOffsets) {
  SEEDED_RNG(rng);
  PoolShape s = pool_shape({{5, 6}, {3, 2}, {2, 1}, {1, 2}, {1, 1}, {1, 0}}, {});
  s.batch = 2;
  s.channels = 3;
  for (size_t d = 0; d < 2; ++d)
    s.out.push_back((s.in[d] + s.pad_begin[d] + s.pad_end[d] - s.dilation[d] * (s.kernel[d] - 1) -
                     1) / s.stride[d] + 1);
  std::vector<float> x;
  for (int64_t i = 0; i < s.batch * s.channels * volume(s.in); ++i)
    x.push_back(float(rng.integer(-2, 2)));
  const int64_t n_out = s.batch * s.channels * volume(s.out);
  Output y(n_out);
  std::vector<int64_t> idx(size_t(n_out), -99);
  cpu::pool(pool_params(s, PoolKind::kMax, false), x.data(), y.data(), idx.data());
  const std::vector<double> want = pool_reference(s, PoolKind::kMax, false, x);
  EXPECT_TRUE(all_close(y, want, kExact));
  for (int64_t plane = 0; plane < s.batch * s.channels; ++plane)
    for (int64_t o = 0; o < volume(s.out); ++o) {
      const Shape oc = unravel(o, s.out);
      int64_t first = -1;
      for (int64_t k0 = 0; k0 < s.kernel[0] && first < 0; ++k0)
        for (int64_t k1 = 0; k1 < s.kernel[1] && first < 0; ++k1) {
          const int64_t i0 = oc[0] * s.stride[0] - s.pad_begin[0] + k0 * s.dilation[0];
          const int64_t i1 = oc[1] * s.stride[1] - s.pad_begin[1] + k1 * s.dilation[1];
          if (i0 < 0 || i0 >= s.in[0] || i1 < 0 || i1 >= s.in[1]) continue;
          const int64_t at = plane * volume(s.in) + i0 * s.in[1] + i1;
          if (double(x[size_t(at)]) == want[size_t(plane * volume(s.out) + o)]) first = at;
        }
      EXPECT_EQ(idx[size_t(plane * volume(s.out) + o)], first) << "plane " << plane << " out " << o;
    }
  // Column-major offsets within the plane (ONNX storage_order 1): (h, w) at w * H + h.
  PoolParams cm = pool_params(s, PoolKind::kMax, false);
  cm.indices_column_major = true;
  std::vector<int64_t> col(size_t(n_out), -99);
  cpu::pool(cm, x.data(), y.data(), col.data());
  for (int64_t i = 0; i < n_out; ++i) {
    const int64_t plane = idx[size_t(i)] / volume(s.in), in_plane = idx[size_t(i)] % volume(s.in);
    const int64_t h = in_plane / s.in[1], w = in_plane % s.in[1];
    EXPECT_EQ(col[size_t(i)], plane * volume(s.in) + w * s.in[0] + h) << "output " << i;
  }
}

enum class PoolMode { kMax, kAverageIncludePad, kAverageExcludePad };
using PoolCase = std::tuple<int /*rank*/, PoolMode, int /*stride*/, int /*dilation*/,
                            bool /*ceil*/>;

class PoolMatrix : public testing::TestWithParam<PoolCase> {};

TEST_P(PoolMatrix, MatchesPaddedTensorPool) {
  SEEDED_RNG(rng);
  const auto [rank, mode, stride, dilation, ceil_mode] = GetParam();
  static const int64_t kIn[3] = {7, 6, 5}, kKernel[3] = {3, 2, 2};
  static const int64_t kPadBegin[3] = {1, 0, 1}, kPadEnd[3] = {0, 1, 1};
  PoolShape s;
  s.batch = 2;
  s.channels = 3;
  bool window_past_pad_end = false;
  for (int d = 0; d < rank; ++d) {
    const int64_t span = kIn[d] + kPadBegin[d] + kPadEnd[d] - dilation * (kKernel[d] - 1) - 1;
    int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    // As ONNX and PyTorch do: the last window starts inside the input or the leading padding.
    if ((out - 1) * stride - kPadBegin[d] >= kIn[d]) --out;
    window_past_pad_end = window_past_pad_end || (out - 1) * stride > span;
    add_window_dim(s, kIn[d], kKernel[d], stride, dilation, kPadBegin[d], kPadEnd[d]);
    s.out.push_back(out);
  }
  if (ceil_mode && stride == 2) {
    EXPECT_TRUE(window_past_pad_end) << "the case lost its purpose";
  }

  const PoolKind kind = mode == PoolMode::kMax ? PoolKind::kMax : PoolKind::kAverage;
  const bool include_pad = mode == PoolMode::kAverageIncludePad;
  const std::vector<float> x = rng.uniform(s.batch * s.channels * volume(s.in), -1.f, 1.f);
  const std::vector<double> want = pool_reference(s, kind, include_pad, x);
  const Tolerance tol = kind == PoolKind::kMax ? kExact : Tolerance{1e-6, 1e-7};
  EXPECT_TRUE(all_close(run_pool(s, kind, include_pad, x), want, tol));

  // channels_last: the same pool on the NHWC layout of x gives the NHWC layout of the result.
  PoolParams p = pool_params(s, kind, include_pad);
  p.channels_last = true;
  Output y(s.batch * s.channels * volume(s.out));
  cpu::pool(p, to_channels_last(x, s.batch, s.channels, volume(s.in)).data(), y.data());
  EXPECT_TRUE(all_close(y, to_channels_last(want, s.batch, s.channels, volume(s.out)), tol))
      << "channels_last";

  if (kind != PoolKind::kMax) return;
  // Max of Int8: the same windows over integers, exactly the reference's (both layouts).
  std::vector<int8_t> xq(x.size());
  std::vector<float> xf(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    xq[i] = static_cast<int8_t>(rng.integer(-128, 127));
    xf[i] = xq[i];
  }
  const std::vector<double> want_q = pool_reference(s, kind, false, xf);
  for (bool last : {false, true}) {
    p.channels_last = last;
    std::vector<int8_t> yq(want_q.size(), 0x5a), in = xq;
    if (last)
      for (int64_t n = 0; n < s.batch; ++n)
        for (int64_t c = 0; c < s.channels; ++c)
          for (int64_t i = 0; i < volume(s.in); ++i)
            in[static_cast<size_t>((n * volume(s.in) + i) * s.channels + c)] =
                xq[static_cast<size_t>((n * s.channels + c) * volume(s.in) + i)];
    cpu::max_pool_int8(p, in.data(), yq.data());
    const int64_t out = volume(s.out);
    for (int64_t n = 0; n < s.batch; ++n)
      for (int64_t c = 0; c < s.channels; ++c)
        for (int64_t i = 0; i < out; ++i) {
          const size_t at = static_cast<size_t>(last ? (n * out + i) * s.channels + c
                                                     : (n * s.channels + c) * out + i);
          ASSERT_EQ(yq[at], want_q[static_cast<size_t>((n * s.channels + c) * out + i)])
              << "channels_last " << last << " n " << n << " c " << c << " i " << i;
        }
  }
}

std::string pool_case_name(const testing::TestParamInfo<PoolCase>& info) {
  const auto [rank, mode, stride, dilation, ceil_mode] = info.param;
  static const char* kMode[] = {"max", "avg_incl_pad", "avg_excl_pad"};
  return std::to_string(rank) + "d_" + kMode[int(mode)] + "_s" + std::to_string(stride) + "_d" +
         std::to_string(dilation) + (ceil_mode ? "_ceil" : "_floor");
}

INSTANTIATE_TEST_SUITE_P(Cpu, PoolMatrix,
                         testing::Combine(testing::Values(1, 2, 3),
                                          testing::Values(PoolMode::kMax,
                                                          PoolMode::kAverageIncludePad,
                                                          PoolMode::kAverageExcludePad),
                                          testing::Values(1, 2), testing::Values(1, 2),
                                          testing::Bool()),
                         pool_case_name);

}  // namespace
}  // namespace jetplan::kernels
