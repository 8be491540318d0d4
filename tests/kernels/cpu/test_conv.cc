// cpu::conv against im2col + matrix multiply in double, hand-computed cases, and a grouped
// convolution assembled from one convolution per group.
// Every output is poisoned before each call and has a guard zone after its end; every
// comparison fails on NaN; inputs come from a seeded std::mt19937 whose seed is printed with any
// failure (JETPLAN_TEST_SEED=<n> replays it). See tests/kernels/kernel_test_util.h.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/reference_formulas.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// ------------------------------------------------------------------------------------- conv

// A convolution in the terms of the contract; padding at the end is explicit here and out() is
// derived from it.
struct ConvShape : WindowShape {
  int64_t batch = 1, in_channels = 1, out_channels = 1, groups = 1;

  Shape out() const {
    Shape o(in.size());
    for (size_t d = 0; d < in.size(); ++d)
      o[d] = (in[d] + pad_begin[d] + pad_end[d] - dilation[d] * (kernel[d] - 1) - 1) / stride[d] +
             1;
    return o;
  }
  int64_t x_count() const { return batch * in_channels * volume(in); }
  int64_t w_count() const { return out_channels * (in_channels / groups) * volume(kernel); }
  int64_t y_count() const { return batch * out_channels * volume(out()); }
};

ConvParams conv_params(const ConvShape& s, bool bias, bool residual, Activation act) {
  return conv_like_params<ConvParams>(s, bias, residual, act);
}

// im2col + plain matrix multiply, in double. Weights [out_channels, in_channels / groups,
// *kernel] are already the [out_channels, rows] matrix that multiplies the column matrix.
std::vector<double> conv_reference(const ConvShape& s, const std::vector<float>& x,
                                   const std::vector<float>& w, const float* bias,
                                   const float* residual, Activation act) {
  const Shape out = s.out();
  const int64_t in_vol = volume(s.in), out_vol = volume(out), k_vol = volume(s.kernel);
  const int64_t in_per_group = s.in_channels / s.groups;
  const int64_t out_per_group = s.out_channels / s.groups;
  const int64_t rows = in_per_group * k_vol;
  std::vector<double> y(size_t(s.y_count()));
  std::vector<double> cols(size_t(rows * out_vol));
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t g = 0; g < s.groups; ++g) {
      for (int64_t ic = 0; ic < in_per_group; ++ic)
        for (int64_t kk = 0; kk < k_vol; ++kk)
          for (int64_t op = 0; op < out_vol; ++op) {
            const Shape kc = unravel(kk, s.kernel), oc = unravel(op, out);
            Shape ix(s.in.size());
            bool in_x = true;
            for (size_t d = 0; d < s.in.size(); ++d) {
              ix[d] = oc[d] * s.stride[d] - s.pad_begin[d] + kc[d] * s.dilation[d];
              in_x = in_x && ix[d] >= 0 && ix[d] < s.in[d];
            }
            const int64_t channel = g * in_per_group + ic;
            cols[size_t((ic * k_vol + kk) * out_vol + op)] =
                in_x ? x[size_t((n * s.in_channels + channel) * in_vol + ravel(ix, s.in))] : 0.0;
          }
      for (int64_t o = 0; o < out_per_group; ++o)
        for (int64_t op = 0; op < out_vol; ++op) {
          const int64_t oc = g * out_per_group + o;
          double v = 0;
          for (int64_t r = 0; r < rows; ++r)
            v += double{w[size_t(oc * rows + r)]} * cols[size_t(r * out_vol + op)];
          const int64_t yi = (n * s.out_channels + oc) * out_vol + op;
          if (bias) v += bias[oc];
          if (residual) v += residual[yi];
          y[size_t(yi)] = activation_ref(act, v);
        }
    }
  return y;
}

constexpr Tolerance kConvTol{1e-5, 1e-5};

ConvShape conv_1d(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                  int64_t pad_end) {
  ConvShape s;
  static_cast<WindowShape&>(s) = window_1d(in, kernel, stride, dilation, pad_begin, pad_end);
  return s;
}

TEST(Conv, Hand1DPaddingAndEpilogueOrder) {
  const ConvShape s = conv_1d(4, 3, 1, 1, 1, 1);
  const std::vector<float> x = {1, 2, 3, 4}, w = {1, 0, -1}, bias = {0.5f},
                           residual = {1, 2, 0, -4};
  Output plain(4);
  cpu::conv(conv_params(s, false, false, {}), x.data(), w.data(), nullptr, nullptr, plain.data());
  EXPECT_TRUE(all_close(plain, {-2, -2, -2, 3}, kExact));

  Output biased(4);
  cpu::conv(conv_params(s, true, false, {}), x.data(), w.data(), bias.data(), nullptr,
            biased.data());
  EXPECT_TRUE(all_close(biased, {-1.5, -1.5, -1.5, 3.5}, kExact));

  // relu(conv + bias + residual) = relu({-0.5, 0.5, -1.5, -0.5}); applying relu before the
  // residual would give {1, 2, 0, -0.5}.
  Output fused(4);
  cpu::conv(conv_params(s, true, true, {ActivationKind::kRelu, 0.f, 0.f}), x.data(), w.data(),
            bias.data(), residual.data(), fused.data());
  EXPECT_TRUE(all_close(fused, {0, 0.5, 0, 0}, kExact));
}

TEST(Conv, Hand1DDilation) {
  const ConvShape s = conv_1d(6, 2, 1, 2, 0, 0);  // y[o] = x[o] + 10 x[o + 2]
  const std::vector<float> x = {1, 2, 3, 4, 5, 6}, w = {1, 10};
  Output y(4);
  cpu::conv(conv_params(s, false, false, {}), x.data(), w.data(), nullptr, nullptr, y.data());
  EXPECT_TRUE(all_close(y, {31, 42, 53, 64}, kExact));
}

TEST(Conv, Hand2DStrideAndPadding) {
  ConvShape s;
  static_cast<WindowShape&>(s) = {{3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, {0, 0}};
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 1, 1, 1};
  Output y(4);
  cpu::conv(conv_params(s, false, false, {}), x.data(), w.data(), nullptr, nullptr, y.data());
  EXPECT_TRUE(all_close(y, {12, 16, 24, 28}, kExact));

  s.stride = {2, 2};
  s.pad_begin = {1, 1};
  s.pad_end = {1, 1};
  ASSERT_EQ(s.out(), (Shape{2, 2}));
  Output z(4);
  cpu::conv(conv_params(s, false, false, {}), x.data(), w.data(), nullptr, nullptr, z.data());
  EXPECT_TRUE(all_close(z, {1, 5, 11, 28}, kExact));
}

TEST(Conv, HandGroupsAndBatch) {
  // Two groups of one channel: out channel 0 sees only in channel 0, out channel 1 only 1.
  ConvShape s = conv_1d(2, 1, 1, 1, 0, 0);
  s.batch = 2;
  s.in_channels = 2;
  s.out_channels = 2;
  s.groups = 2;
  const std::vector<float> x = {1, 2, 3, 4, /*batch 1*/ 5, 6, 7, 8}, w = {2, -1}, bias = {0, 100};
  Output y(8);
  cpu::conv(conv_params(s, true, false, {}), x.data(), w.data(), bias.data(), nullptr, y.data());
  EXPECT_TRUE(all_close(y, {2, 4, 97, 96, 10, 12, 93, 92}, kExact));
}

enum class GroupKind { kDense, kTwoGroups, kDepthwise, kDepthwiseTimesTwo };
enum class Epilogue { kNone, kBias, kBiasResidualRelu, kResidualSilu };
using ConvCase = std::tuple<int /*rank*/, int /*stride*/, int /*dilation*/, GroupKind,
                            int /*batch*/, Epilogue>;

// Odd channel counts per group, asymmetric padding, a kernel that is not square.
ConvShape conv_case_shape(const ConvCase& c) {
  const auto [rank, stride, dilation, groups, batch, epilogue] = c;
  static const int64_t kIn[3] = {7, 6, 5}, kKernel[3] = {3, 2, 3};
  static const int64_t kPadBegin[3] = {1, 0, 2}, kPadEnd[3] = {0, 1, 1};
  ConvShape s;
  for (int d = 0; d < rank; ++d)
    add_window_dim(s, kIn[d], kKernel[d], stride, dilation, kPadBegin[d], kPadEnd[d]);
  // {in_channels, out_channels, groups} of each GroupKind, in enum order.
  static const int64_t kChannels[4][3] = {{3, 5, 1}, {6, 10, 2}, {5, 5, 5}, {5, 10, 5}};
  const int64_t* ch = kChannels[static_cast<int>(groups)];
  set_conv_channels(s, batch, ch[0], ch[1], ch[2]);
  return s;
}

class ConvMatrix : public testing::TestWithParam<ConvCase> {};

TEST_P(ConvMatrix, MatchesIm2colMatmul) {
  SEEDED_RNG(rng);
  const ConvShape s = conv_case_shape(GetParam());
  const Epilogue e = std::get<5>(GetParam());
  const bool has_bias = e == Epilogue::kBias || e == Epilogue::kBiasResidualRelu;
  const bool has_residual = e == Epilogue::kBiasResidualRelu || e == Epilogue::kResidualSilu;
  const Activation act = e == Epilogue::kBiasResidualRelu ? Activation{ActivationKind::kRelu, 0, 0}
                         : e == Epilogue::kResidualSilu   ? Activation{ActivationKind::kSilu, 0, 0}
                                                          : Activation{};
  const std::vector<float> x = rng.uniform(s.x_count(), -1.f, 1.f);
  const std::vector<float> w = rng.uniform(s.w_count(), -1.f, 1.f);
  const std::vector<float> bias = rng.uniform(s.out_channels, -1.f, 1.f);
  const std::vector<float> residual = rng.uniform(s.y_count(), -1.f, 1.f);
  const float* b = has_bias ? bias.data() : nullptr;
  const float* r = has_residual ? residual.data() : nullptr;

  Output y(s.y_count());
  cpu::conv(conv_params(s, has_bias, has_residual, act), x.data(), w.data(), b, r, y.data());
  EXPECT_TRUE(all_close(y, conv_reference(s, x, w, b, r, act), kConvTol));
}

std::string conv_case_name(const testing::TestParamInfo<ConvCase>& info) {
  const auto [rank, stride, dilation, groups, batch, epilogue] = info.param;
  static const char* kGroups[] = {"dense", "groups2", "depthwise", "depthwisex2"};
  static const char* kEpilogue[] = {"plain", "bias", "bias_res_relu", "res_silu"};
  return std::to_string(rank) + "d_s" + std::to_string(stride) + "_d" + std::to_string(dilation) +
         "_" + kGroups[int(groups)] + "_n" + std::to_string(batch) + "_" + kEpilogue[int(epilogue)];
}

INSTANTIATE_TEST_SUITE_P(
    Cpu, ConvMatrix,
    testing::Combine(testing::Values(1, 2, 3), testing::Values(1, 2), testing::Values(1, 2),
                     testing::Values(GroupKind::kDense, GroupKind::kTwoGroups,
                                     GroupKind::kDepthwise, GroupKind::kDepthwiseTimesTwo),
                     testing::Values(1, 3),
                     testing::Values(Epilogue::kNone, Epilogue::kBias,
                                     Epilogue::kBiasResidualRelu, Epilogue::kResidualSilu)),
    conv_case_name);

// Channels [first, first + count) of a [batch, channels, plane] tensor.
std::vector<float> channel_slice(const std::vector<float>& t, int64_t batch, int64_t channels,
                                 int64_t plane, int64_t first, int64_t count) {
  std::vector<float> out;
  for (int64_t n = 0; n < batch; ++n) {
    const auto begin = t.begin() + (n * channels + first) * plane;
    out.insert(out.end(), begin, begin + count * plane);
  }
  return out;
}

TEST(Conv, GroupedEqualsOneConvPerGroup) {
  SEEDED_RNG(rng);
  struct Case {
    int rank;
    int64_t in_channels, out_channels, groups, stride, dilation;
  };
  const Case cases[] = {{1, 9, 6, 3, 1, 1}, {2, 7, 7, 7, 2, 1}, {3, 4, 6, 2, 2, 2},
                        {2, 3, 9, 3, 1, 2}};
  for (const Case& c : cases) {
    SCOPED_TRACE("rank " + std::to_string(c.rank) + " groups " + std::to_string(c.groups));
    ConvShape s;
    s.batch = 2;
    s.in_channels = c.in_channels;
    s.out_channels = c.out_channels;
    s.groups = c.groups;
    for (int d = 0; d < c.rank; ++d) {
      add_window_dim(s, 6 - d, 3, c.stride, c.dilation, 1, 2);
    }
    const Activation act{ActivationKind::kTanh, 0.f, 0.f};
    const std::vector<float> x = rng.uniform(s.x_count(), -1.f, 1.f);
    const std::vector<float> w = rng.uniform(s.w_count(), -1.f, 1.f);
    const std::vector<float> bias = rng.uniform(s.out_channels, -1.f, 1.f);
    const std::vector<float> residual = rng.uniform(s.y_count(), -1.f, 1.f);
    Output grouped(s.y_count());
    cpu::conv(conv_params(s, true, true, act), x.data(), w.data(), bias.data(), residual.data(),
              grouped.data());

    ConvShape one = s;
    one.groups = 1;
    one.in_channels = s.in_channels / s.groups;
    one.out_channels = s.out_channels / s.groups;
    const int64_t in_vol = volume(s.in), out_vol = volume(s.out());
    const int64_t w_per_group = one.w_count();
    std::vector<double> assembled(size_t(s.y_count()));
    for (int64_t g = 0; g < s.groups; ++g) {
      const std::vector<float> xg =
          channel_slice(x, s.batch, s.in_channels, in_vol, g * one.in_channels, one.in_channels);
      const std::vector<float> wg(w.begin() + g * w_per_group, w.begin() + (g + 1) * w_per_group);
      const std::vector<float> rg = channel_slice(residual, s.batch, s.out_channels, out_vol,
                                                  g * one.out_channels, one.out_channels);
      Output yg(one.y_count());
      cpu::conv(conv_params(one, true, true, act), xg.data(), wg.data(),
                bias.data() + g * one.out_channels, rg.data(), yg.data());
      ASSERT_TRUE(yg.guard_intact());
      for (int64_t n = 0; n < s.batch; ++n)
        for (int64_t i = 0; i < one.out_channels * out_vol; ++i)
          assembled[size_t((n * s.out_channels + g * one.out_channels) * out_vol + i)] =
              yg[n * one.out_channels * out_vol + i];
    }
    EXPECT_TRUE(all_close(grouped, assembled, kConvTol));
    EXPECT_TRUE(all_close(grouped, conv_reference(s, x, w, bias.data(), residual.data(), act),
                          kConvTol));
  }
}

// channels_last (NHWC, [Cout, *kernel, Cin / groups] weights) against the NCHW path on the same
// data permuted: random ranks 1-3, groups, strides, dilations and asymmetric pads.
TEST(Conv, ChannelsLastMatchesChannelsFirstOnPermutedData) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 40; ++trial) {
    ConvShape s;
    const int rank = static_cast<int>(rng.integer(1, 3));
    s.groups = rng.integer(1, 3);
    s.batch = rng.integer(1, 2);
    s.in_channels = s.groups * rng.integer(1, 4);
    s.out_channels = s.groups * rng.integer(1, 4);
    for (int d = 0; d < rank; ++d) {
      s.kernel.push_back(rng.integer(1, 3));
      s.stride.push_back(rng.integer(1, 2));
      s.dilation.push_back(rng.integer(1, 2));
      s.pad_begin.push_back(rng.integer(0, 2));
      s.pad_end.push_back(rng.integer(0, 2));
      s.in.push_back(s.dilation[d] * (s.kernel[d] - 1) + 1 + rng.integer(0, 4 - rank));
    }
    SCOPED_TRACE("trial " + std::to_string(trial) + " rank " + std::to_string(rank) + " groups " +
                 std::to_string(s.groups));
    const Activation act{ActivationKind::kLeakyRelu, 0.1f, 0.f};
    const int64_t in_vol = volume(s.in), out_vol = volume(s.out()), k_vol = volume(s.kernel);
    const std::vector<float> x = rng.uniform(s.x_count(), -1.f, 1.f);
    const std::vector<float> w = rng.uniform(s.w_count(), -1.f, 1.f);
    const std::vector<float> bias = rng.uniform(s.out_channels, -1.f, 1.f);
    const std::vector<float> residual = rng.uniform(s.y_count(), -1.f, 1.f);
    const bool has_bias = trial % 2 == 0, has_residual = trial % 3 != 0;
    Output first(s.y_count());
    cpu::conv(conv_params(s, has_bias, has_residual, act), x.data(), w.data(), bias.data(),
              residual.data(), first.data());
    ASSERT_TRUE(first.guard_intact());

    ConvParams p = conv_params(s, has_bias, has_residual, act);
    p.channels_last = true;
    // Weights [Cout, Cin/g, *k] -> [Cout, *k, Cin/g]: the same permutation with Cout as batch.
    const std::vector<float> w_cl = to_channels_last(w, s.out_channels, s.in_channels / s.groups, k_vol);
    const std::vector<float> x_cl = to_channels_last(x, s.batch, s.in_channels, in_vol);
    const std::vector<float> r_cl = to_channels_last(residual, s.batch, s.out_channels, out_vol);
    Output last(s.y_count());
    cpu::conv(p, x_cl.data(), w_cl.data(), bias.data(), r_cl.data(), last.data());
    ASSERT_TRUE(last.guard_intact());
    std::vector<float> first_v(size_t(s.y_count()));
    for (int64_t i = 0; i < s.y_count(); ++i) first_v[size_t(i)] = first[i];
    const std::vector<float> want = to_channels_last(first_v, s.batch, s.out_channels, out_vol);
    EXPECT_TRUE(all_close(last, std::vector<double>(want.begin(), want.end()), kExact));
  }
}

// Concat in place: with y_channels > out_channels the channels_last conv writes its channels at
// y_channel_offset of each pixel of the wider y, the dense result exactly, and nothing else.
TEST(Conv, ChannelsLastWritesItsChannelSliceOnly) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 12; ++trial) {
    ConvShape s;
    s.groups = trial % 3 == 2 ? 2 : 1;
    s.batch = rng.integer(1, 2);
    s.in_channels = s.groups * rng.integer(1, 4);
    s.out_channels = s.groups * rng.integer(1, 4);
    for (int d = 0; d < 2; ++d) {
      s.kernel.push_back(rng.integer(1, 3));
      s.stride.push_back(1);
      s.dilation.push_back(1);
      s.pad_begin.push_back(rng.integer(0, 1));
      s.pad_end.push_back(rng.integer(0, 1));
      s.in.push_back(s.kernel[d] + rng.integer(0, 3));
    }
    const Activation act{ActivationKind::kRelu, 0.f, 0.f};
    const std::vector<float> x = rng.uniform(s.x_count(), -1.f, 1.f);
    const std::vector<float> w = rng.uniform(s.w_count(), -1.f, 1.f);
    const std::vector<float> bias = rng.uniform(s.out_channels, -1.f, 1.f);
    ConvParams p = conv_params(s, true, false, act);
    p.channels_last = true;
    std::vector<float> dense(size_t(s.y_count()));
    cpu::conv(p, x.data(), w.data(), bias.data(), nullptr, dense.data());
    const int64_t offset = rng.integer(0, 3), extra = offset + rng.integer(0, 3);
    p.y_channels = s.out_channels + extra;
    p.y_channel_offset = offset;
    const int64_t pixels = s.y_count() / s.out_channels;
    std::vector<float> wide(size_t(pixels * p.y_channels), -77.f);
    cpu::conv(p, x.data(), w.data(), bias.data(), nullptr, wide.data());
    for (int64_t px = 0; px < pixels; ++px)
      for (int64_t c = 0; c < p.y_channels; ++c) {
        const float got = wide[size_t(px * p.y_channels + c)];
        if (c >= offset && c < offset + s.out_channels) {
          ASSERT_EQ(got, dense[size_t(px * s.out_channels + c - offset)]) << trial << " " << px << " " << c;
        } else {
          ASSERT_EQ(got, -77.f) << "trial " << trial << ": channel " << c << " outside the slice";
        }
      }
  }
}

}  // namespace
}  // namespace jetplan::kernels
