// The INT8 Conv twin (cpu::conv_int8) and the INT8 epilogue arithmetic (kernels/int8_epilogue.h)
// against references written here another way:
//  - the integer sums: an explicitly zero-padded NCHW copy of x and a direct sum in int64, so an
//    output with multiplier 1, bias 0 and a Float16 y (exact for |sum| <= 2048) must equal the
//    reference sum exactly, in NCHW and NHWC, strided, dilated and grouped;
//  - the requantized Int8 output: the real value in double (sum * multiplier + bias, + residual *
//    its scale, the activation), divided by y's scale and rounded with std::nearbyint: the twin's
//    float arithmetic may land one unit away, never more;
//  - the QLinearConv twin (checked against ONNX's node test data) on the same bytes, zero points
//    0 and no bias, NCHW (its layout): within one unit (its multiplier is in double, this one's
//    in float).
// Outputs are poisoned (0xA5 / 0x5A bytes) with a guard zone. JETPLAN_TEST_SEED replays a run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/half.h"
#include "kernels/int8_epilogue.h"
#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using test_util::SeededRng;

TEST(Int8Epilogue, RoundsHalfToEvenSaturatesAndMapsNanToZero) {
  EXPECT_EQ(int8_quantize(2.5f, 1.f), 2);
  EXPECT_EQ(int8_quantize(3.5f, 1.f), 4);
  EXPECT_EQ(int8_quantize(-2.5f, 1.f), -2);
  EXPECT_EQ(int8_quantize(-0.5f, 1.f), 0);
  EXPECT_EQ(int8_quantize(126.6f, 1.f), 127);
  EXPECT_EQ(int8_quantize(200.f, 1.f), 127);
  EXPECT_EQ(int8_quantize(-1e30f, 1.f), -128);
  EXPECT_EQ(int8_quantize(INFINITY, 1.f), 127);
  EXPECT_EQ(int8_quantize(-INFINITY, 1.f), -128);
  EXPECT_EQ(int8_quantize(NAN, 1.f), 0);
  EXPECT_EQ(int8_quantize(1.f, 4.f), 4);
  // One rounding: 3 * (1/3 rounded to float) + 0 is not 1 in two roundings' arithmetic.
  EXPECT_EQ(int8_real(3, 1.f / 3.f, 0.f), std::fmaf(3.f, 1.f / 3.f, 0.f));
  EXPECT_EQ(int8_add_residual(1.f, -4, 0.25f), 0.f);
}

struct Case {
  const char* name;
  bool channels_last;
  int64_t batch, cin, cout, groups, h, w, k, stride, dilation, pad;
};

const Case kCases[] = {
    {"nhwc 3x3", true, 2, 16, 24, 1, 7, 6, 3, 1, 1, 1},
    {"nchw 3x3 s2", false, 1, 8, 5, 1, 9, 9, 3, 2, 1, 1},
    {"nhwc 1x1", true, 1, 32, 8, 1, 4, 5, 1, 1, 1, 0},
    {"nchw dilated", false, 2, 4, 6, 1, 8, 7, 3, 1, 2, 2},
    {"nhwc grouped 2", true, 1, 8, 6, 2, 6, 6, 3, 1, 1, 1},
    {"nchw depthwise", false, 1, 6, 6, 6, 5, 5, 3, 1, 1, 1},
};

ConvParams params_of(const Case& c) {
  return test_util::int8_conv2d(c.batch, c.cin, c.cout, c.groups, {c.h, c.w}, c.k, c.stride,
                                c.dilation, c.pad, c.channels_last);
}

// The integer sums [N, Cout, OH, OW] from a zero-padded NCHW copy of x.
std::vector<int64_t> reference_sums(const ConvParams& p, const std::vector<int8_t>& x,
                                    const std::vector<int8_t>& w) {
  const int64_t C = p.in_channels, O = p.out_channels, H = p.in_size[0], W = p.in_size[1];
  const int64_t K = p.kernel[0], pad = p.pad_begin[0], PH = H + 2 * pad + K * p.dilation[0],
                PW = W + 2 * pad + K * p.dilation[1];
  const int64_t cg = C / p.groups, og = O / p.groups;
  std::vector<int64_t> xp(size_t(p.batch * C * PH * PW), 0);
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j) {
          const int64_t src = p.channels_last ? ((n * H + i) * W + j) * C + c
                                              : ((n * C + c) * H + i) * W + j;
          xp[size_t(((n * C + c) * PH + i + pad) * PW + j + pad)] = x[size_t(src)];
        }
  const int64_t OH = p.out_size[0], OW = p.out_size[1];
  std::vector<int64_t> out(size_t(p.batch * O * OH * OW));
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t a = 0; a < OH; ++a)
        for (int64_t b = 0; b < OW; ++b) {
          int64_t s = 0;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t u = 0; u < K; ++u)
              for (int64_t v = 0; v < K; ++v) {
                const int64_t c = (o / og) * cg + ic;
                const int64_t wi = p.channels_last ? ((o * K + u) * K + v) * cg + ic
                                                   : ((o * cg + ic) * K + u) * K + v;
                s += xp[size_t(((n * C + c) * PH + a * p.stride[0] + u * p.dilation[0]) * PW +
                               b * p.stride[1] + v * p.dilation[1])] * w[size_t(wi)];
              }
          out[size_t(((n * O + o) * OH + a) * OW + b)] = s;
        }
  return out;
}

// Offset of y[n, o, a, b] in the step's layout.
int64_t y_at(const ConvParams& p, int64_t n, int64_t o, int64_t a, int64_t b) {
  const int64_t O = p.out_channels, OH = p.out_size[0], OW = p.out_size[1];
  return p.channels_last ? ((n * OH + a) * OW + b) * O + o : ((n * O + o) * OH + a) * OW + b;
}

std::vector<int8_t> random_int8(SeededRng& rng, int64_t n) {
  std::vector<int8_t> v(static_cast<size_t>(n));
  for (int8_t& e : v) e = static_cast<int8_t>(rng.integer(-128, 127));
  return v;
}

TEST(ConvInt8, SumsAreExactIntegersInEveryLayout) {
  SEEDED_RNG(rng);
  for (const Case& c : kCases) {
    ConvParams p = params_of(c);
    const int64_t kvol = p.kernel[0] * p.kernel[1] * (p.in_channels / p.groups);
    // Small values keep every |sum| <= 2048, exact in Float16.
    std::vector<int8_t> x = random_int8(rng, p.batch * p.in_channels * p.in_size[0] * p.in_size[1]);
    std::vector<int8_t> w = random_int8(rng, p.out_channels * kvol);
    for (int8_t& e : x) e = static_cast<int8_t>(e % 4);
    for (int8_t& e : w) e = static_cast<int8_t>(e % 4);
    const std::vector<int64_t> want = reference_sums(p, x, w);
    std::vector<float> epi(size_t(2 * p.out_channels), 0.f);
    for (int64_t o = 0; o < p.out_channels; ++o) epi[size_t(o)] = 1.f;
    p.int8.y_dtype = DType::kFloat16;
    for (unsigned char poison : test_util::kBytePoisons) {
      test_util::ByteOutput y(int64_t(want.size()) * 2, poison);
      cpu::conv_int8(p, x.data(), w.data(), epi.data(), nullptr, y.data());
      EXPECT_TRUE(y.guard_intact()) << c.name;
      const unsigned char* bytes = y.data();
      int bad = 0;
      for (int64_t n = 0; n < p.batch; ++n)
        for (int64_t o = 0; o < p.out_channels; ++o)
          for (int64_t a = 0; a < p.out_size[0]; ++a)
            for (int64_t b = 0; b < p.out_size[1]; ++b) {
              uint16_t h;
              std::memcpy(&h, bytes + 2 * y_at(p, n, o, a, b), 2);
              const int64_t r = want[size_t(((n * p.out_channels + o) * p.out_size[0] + a) *
                                                p.out_size[1] + b)];
              bad += half_to_float(h) != float(r);
            }
      EXPECT_EQ(bad, 0) << c.name;
    }
  }
}

TEST(ConvInt8, RequantizedOutputWithinOneUnitOfTheRealValue) {
  SEEDED_RNG(rng);
  for (const Case& c : kCases) {
    for (const ActivationKind kind : {ActivationKind::kNone, ActivationKind::kRelu}) {
      ConvParams p = params_of(c);
      p.act.kind = kind;
      p.has_residual = true;
      p.int8.residual_dtype = DType::kInt8;
      p.int8.residual_scale = 0.03f;
      p.int8.y_dtype = DType::kInt8;
      const float y_scale = 0.07f;
      p.int8.y_inv_scale = 1.f / y_scale;
      const int64_t kvol = p.kernel[0] * p.kernel[1] * (p.in_channels / p.groups);
      const std::vector<int8_t> x =
          random_int8(rng, p.batch * p.in_channels * p.in_size[0] * p.in_size[1]);
      const std::vector<int8_t> w = random_int8(rng, p.out_channels * kvol);
      const int64_t ny = p.batch * p.out_channels * p.out_size[0] * p.out_size[1];
      const std::vector<int8_t> r = random_int8(rng, ny);
      std::vector<float> epi(size_t(2 * p.out_channels));
      for (int64_t o = 0; o < p.out_channels; ++o) {
        epi[size_t(o)] = rng.uniform(0.5f, 2.f) / (1800.f * std::sqrt(float(kvol)));
        epi[size_t(p.out_channels + o)] = rng.uniform(-2.f, 2.f);
      }
      const std::vector<int64_t> sums = reference_sums(p, x, w);
      test_util::ByteOutput y(ny, 0xA5);
      cpu::conv_int8(p, x.data(), w.data(), epi.data(), r.data(), y.data());
      EXPECT_TRUE(y.guard_intact());
      int bad = 0, saturated = 0;
      for (int64_t n = 0; n < p.batch; ++n)
        for (int64_t o = 0; o < p.out_channels; ++o)
          for (int64_t a = 0; a < p.out_size[0]; ++a)
            for (int64_t b = 0; b < p.out_size[1]; ++b) {
              const int64_t yi = y_at(p, n, o, a, b);
              double real = double(sums[size_t(((n * p.out_channels + o) * p.out_size[0] + a) *
                                                   p.out_size[1] + b)]) *
                                epi[size_t(o)] +
                            epi[size_t(p.out_channels + o)] + double(r[size_t(yi)]) * 0.03;
              if (kind == ActivationKind::kRelu && real < 0) real = 0;
              const double q = std::fmin(127, std::fmax(-128, std::nearbyint(real / y_scale)));
              saturated += std::fabs(q) >= 127;
              bad += std::fabs(double(int8_t(y.data()[yi])) - q) > 1;
            }
      EXPECT_EQ(bad, 0) << c.name;
      EXPECT_LT(saturated, ny / 4) << c.name << ": the case should exercise the range, not the rails";
    }
  }
}

TEST(ConvInt8, AgreesWithQLinearConvWithinOneUnit) {
  SEEDED_RNG(rng);
  for (const Case& c : kCases) {
    if (c.channels_last) continue;  // the QLinearConv twin reads NCHW only (ONNX's layout)
    ConvParams p = params_of(c);
    p.int8.y_dtype = DType::kInt8;
    const float xs = 0.02f, ys = 0.5f;
    const int64_t kvol = p.kernel[0] * p.kernel[1] * (p.in_channels / p.groups);
    const std::vector<int8_t> x = random_int8(rng, p.batch * p.in_channels * p.in_size[0] * p.in_size[1]);
    const std::vector<int8_t> w = random_int8(rng, p.out_channels * kvol);
    std::vector<float> ws(size_t(p.out_channels)), epi(size_t(2 * p.out_channels), 0.f);
    for (int64_t o = 0; o < p.out_channels; ++o) {
      ws[size_t(o)] = rng.uniform(0.001f, 0.01f);
      epi[size_t(o)] = xs * ws[size_t(o)];
    }
    p.int8.y_inv_scale = 1.f / ys;
    const int64_t ny = p.batch * p.out_channels * p.out_size[0] * p.out_size[1];
    std::vector<int8_t> got(static_cast<size_t>(ny)), want(static_cast<size_t>(ny));
    cpu::conv_int8(p, x.data(), w.data(), epi.data(), nullptr, got.data());
    QLinearConvParams q;
    q.conv = p;
    q.conv.has_bias = false;
    q.conv.int8 = ConvInt8{};
    q.x_type = q.w_type = q.y_type = DType::kInt8;
    q.w_per_channel = true;
    const int8_t zero = 0;
    const std::vector<int8_t> wzp(size_t(p.out_channels), 0);
    cpu::qlinear_conv(q, x.data(), &xs, &zero, w.data(), ws.data(), wzp.data(), &ys, &zero,
                      nullptr, want.data());
    int bad = 0, differ = 0;
    for (int64_t i = 0; i < ny; ++i) {
      bad += std::abs(int(got[size_t(i)]) - int(want[size_t(i)])) > 1;
      differ += got[size_t(i)] != want[size_t(i)];
    }
    EXPECT_EQ(bad, 0) << c.name;
    EXPECT_LE(differ, ny / 50 + 1) << c.name << ": one-unit differences must stay rare";
  }
}

}  // namespace
}  // namespace jetplan::kernels
