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
#include "tests/kernels/onnx_node_data.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

int32_t qmin(DType t) { return t == DType::kInt8 ? -128 : 0; }
int32_t qmax(DType t) { return t == DType::kInt8 ? 127 : 255; }
int32_t decode(DType t, uint8_t byte) { return t == DType::kInt8 ? int8_t(byte) : byte; }
uint8_t encode(int32_t v) { return uint8_t(v & 0xff); }

// The integers a correct kernel may return, per element: [lo, hi].
struct Allowed {
  std::vector<int32_t> lo, hi;
};

// The quantized value of real v (in units of the scale): round half to even by the FPU, add the
// zero point, saturate. Where v is within `rel` of a tie, both neighbours are allowed.
void allow(Allowed& a, double v, double rel, int32_t zp, DType t) {
  auto sat = [&](double q) {
    return int32_t(std::clamp(q + zp, double(qmin(t)), double(qmax(t))));
  };
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
  const double lower = std::floor(v);
  if (std::fabs(v - lower - 0.5) <= rel * std::fabs(v)) {
    a.lo.push_back(sat(lower));
    a.hi.push_back(sat(lower + 1));
  } else {
    a.lo.push_back(sat(std::nearbyint(v)));
    a.hi.push_back(a.lo.back());
  }
}

// Runs `kernel(out)` into n poisoned bytes, twice with two poisons, and checks each element of
// type t against `want`; returns how many elements are saturated.
template <typename Kernel>
int64_t check_bytes(int64_t n, DType t, const Allowed& want, Kernel kernel) {
  EXPECT_EQ(int64_t(want.lo.size()), n);
  int64_t saturated = 0;
  for (uint8_t poison : kBytePoisons) {
    ByteOutput out(n, poison);
    kernel(out.data());
    int64_t bad = 0;
    if (!out.guard_intact()) {
      ADD_FAILURE() << "kernel wrote past the output";
      ++bad;
    }
    saturated = 0;
    for (int64_t i = 0; i < n && i < int64_t(want.lo.size()); ++i) {
      const int32_t got = decode(t, out[i]);
      saturated += got == qmin(t) || got == qmax(t);
      if (got >= want.lo[size_t(i)] && got <= want.hi[size_t(i)]) continue;
      if (bad++ < 5)
        ADD_FAILURE() << "[" << i << "] got " << got << " want " << want.lo[size_t(i)]
                      << (want.lo[size_t(i)] == want.hi[size_t(i)]
                              ? ""
                              : " or " + std::to_string(want.hi[size_t(i)]))
                      << " (poison " << int{poison} << ")";
    }
    if (bad) break;  // one report per call
  }
  return saturated;
}

Allowed exactly(DType t, std::initializer_list<int32_t> v) {
  Allowed a{std::vector<int32_t>(v), std::vector<int32_t>(v)};
  for (int32_t e : v) EXPECT_TRUE(e >= qmin(t) && e <= qmax(t));
  return a;
}

TEST(QuantCompareHelper, RejectsWrongUnwrittenAndOverrun) {
  auto copy = [](Bytes b) { return [b](uint8_t* y) { std::copy(b.begin(), b.end(), y); }; };
  const Allowed want = exactly(DType::kInt8, {-1, 127});
  EXPECT_EQ(check_bytes(2, DType::kInt8, want, copy({0xff, 0x7f})), 1);
  EXPECT_NONFATAL_FAILURE(check_bytes(2, DType::kInt8, want, copy({0xff, 0x7e})), "got 126");
  EXPECT_NONFATAL_FAILURE(check_bytes(2, DType::kInt8, want, [](uint8_t* y) { y[1] = 0x7f; }),
                          "got");
  EXPECT_NONFATAL_FAILURE(check_bytes(2, DType::kInt8, want, copy({0xff, 0x7f, 0})), "past");
  Allowed tie;
  allow(tie, 2.5, 1e-9, 0, DType::kUInt8);
  allow(tie, -2.5000001, 1e-9, 0, DType::kInt8);
  EXPECT_EQ(tie.lo, (std::vector<int32_t>{2, -3}));
  EXPECT_EQ(tie.hi, (std::vector<int32_t>{3, -3}));
}

// ------------------------------------------------------------------ quantize / dequantize

const DType kQTypes[] = {DType::kInt8, DType::kUInt8};

TEST(QuantizeLinear, HandTiesSaturationAndNaN) {
  const float inf = INFINITY;
  const std::vector<float> x = {0.5f,   1.5f,    2.5f, -0.5f, -1.5f, -2.5f, 2.4999998f, 2.5000002f,
                                127.5f, -128.5f, 1000, -1000, inf,   -inf,  NAN};
  const float one = 1.f;
  const QuantizeLinearParams p{DType::kInt8, 1, 1, int64_t(x.size()), false, false};
  check_bytes(int64_t(x.size()), DType::kInt8,
              exactly(DType::kInt8, {0, 2, 2, 0, -2, -2, 2, 3, 127, -128, 127, -128, 127, -128, 0}),
              [&](uint8_t* y) { cpu::quantize_linear(p, x.data(), &one, nullptr, y); });

  // uint8, scale 0.5, zero point 10: 0.25 -> 0.5 -> 0; 0.75 -> 2; 1.25 -> 2; -2.25 -> -4;
  // -5.25 -> -10 -> 0 saturated; 122.75 -> 246 + 10 saturated; NaN -> the zero point.
  const std::vector<float> u = {0.25f, 0.75f, 1.25f, -2.25f, -5.25f, 122.75f, NAN};
  const float half = 0.5f;
  const uint8_t zp = 10;
  const QuantizeLinearParams pu{DType::kUInt8, 1, 1, int64_t(u.size()), false, true};
  check_bytes(int64_t(u.size()), DType::kUInt8, exactly(DType::kUInt8, {10, 12, 12, 6, 0, 255, 10}),
              [&](uint8_t* y) { cpu::quantize_linear(pu, u.data(), &half, &zp, y); });
}

TEST(QuantizeLinear, HandQuotientIsRoundedToFloatFirst) {
  // 0.35f / 0.1f is 3.49999988824 exactly but 3.5 in float, which ONNX's reference and
  // onnxruntime then round to 4; a double quotient would give 3.
  const float x = 0.35f, s = 0.1f;
  const QuantizeLinearParams p{DType::kInt8, 1, 1, 1, false, false};
  check_bytes(1, DType::kInt8, exactly(DType::kInt8, {4}),
              [&](uint8_t* y) { cpu::quantize_linear(p, &x, &s, nullptr, y); });
}

TEST(QuantizeLinear, HandPerChannelWithoutZeroPoint) {
  // [outer 2, channels 2, inner 2], scales 1 and 0.25.
  const std::vector<float> x = {1.5f, -1.5f, 1.5f, 0.125f, 3, 100, -0.375f, 40};
  const float scale[2] = {1.f, 0.25f};
  const QuantizeLinearParams p{DType::kInt8, 2, 2, 2, true, false};
  check_bytes(8, DType::kInt8, exactly(DType::kInt8, {2, -2, 6, 0, 3, 100, -2, 127}),
              [&](uint8_t* y) { cpu::quantize_linear(p, x.data(), scale, nullptr, y); });
}

// Random [outer, channels, inner] tensors with their per-tensor or per-channel parameters.
struct QTensor {
  QuantizeLinearParams p;
  std::vector<float> scale;
  Bytes zp;  // empty when !p.has_zero_point
  int32_t zero(int64_t c) const {
    return zp.empty() ? 0 : decode(p.qtype, zp[size_t(p.per_channel ? c : 0)]);
  }
};

QTensor random_qtensor(SeededRng& rng, DType t, bool per_channel, bool has_zp) {
  QTensor q{{t, 1 + rng.below(3), 1 + rng.below(4), 1 + rng.below(6), per_channel, has_zp}, {}, {}};
  for (int64_t c = 0; c < (per_channel ? q.p.channels : 1); ++c) {
    q.scale.push_back(rng.uniform(0.008f, 0.02f));
    if (has_zp) q.zp.push_back(rng.bytes(1)[0]);
  }
  return q;
}

TEST(QuantizeLinear, RandomMatchesDoubleReference) {
  SEEDED_RNG(rng);
  int64_t saturated = 0, ties = 0, total = 0;
  for (int rep = 0; rep < 4; ++rep)
    for (DType t : kQTypes)
      for (bool per_channel : {false, true})
        for (bool has_zp : {false, true}) {
          const QTensor q = random_qtensor(rng, t, per_channel, has_zp);
          const int64_t n = q.p.outer * q.p.channels * q.p.inner;
          std::vector<float> x;
          Allowed want;
          for (int64_t i = 0; i < n; ++i) {
            const int64_t c = (i / q.p.inner) % q.p.channels;
            x.push_back(rng.uniform(-2.5f, 2.5f));
            // The kernel divides in float: its quotient is within 2^-24 of the exact one.
            allow(want, double(x.back()) / q.scale[size_t(per_channel ? c : 0)], 0x1p-23, q.zero(c),
                  t);
            ties += want.lo.back() != want.hi.back();
          }
          total += n;
          saturated += check_bytes(n, t, want, [&](uint8_t* y) {
            cpu::quantize_linear(q.p, x.data(), q.scale.data(), has_zp ? q.zp.data() : nullptr, y);
          });
        }
  EXPECT_GT(saturated, 0) << "the inputs should reach saturation";
  EXPECT_LE(ties * 100, total) << "near-ties should be rare";
}

TEST(DequantizeLinear, HandAndRandom) {
  const Bytes x = {encode(-128), encode(127), 0, 5};
  const float half = 0.5f;
  const uint8_t zp = encode(-3);
  Output y(4);
  cpu::dequantize_linear({DType::kInt8, 1, 1, 4, false, true}, x.data(), &half, &zp, y.data());
  EXPECT_TRUE(all_close(y, {-62.5, 65, 1.5, 4}, kExact));

  SEEDED_RNG(rng);
  for (DType t : kQTypes)
    for (bool per_channel : {false, true})
      for (bool has_zp : {false, true}) {
        const QTensor q = random_qtensor(rng, t, per_channel, has_zp);
        const int64_t n = q.p.outer * q.p.channels * q.p.inner;
        const Bytes xs = rng.bytes(n);
        std::vector<float> want;
        for (int64_t i = 0; i < n; ++i) {
          const int64_t c = (i / q.p.inner) % q.p.channels;
          // Exact in double (a 9-bit integer times a float), so this is the rounded product.
          want.push_back(float(double(decode(t, xs[size_t(i)]) - q.zero(c)) *
                               q.scale[size_t(per_channel ? c : 0)]));
        }
        Output got(n);
        cpu::dequantize_linear(q.p, xs.data(), q.scale.data(), has_zp ? q.zp.data() : nullptr,
                               got.data());
        EXPECT_TRUE(all_close(got, to_doubles(want), kExact))
            << "type " << int(t) << " per_channel " << per_channel;
      }
}

TEST(QuantizeValue, RoundsHalfToEvenAndSaturates) {
  EXPECT_EQ(cpu::round_half_even(2.5), 2.0);
  EXPECT_EQ(cpu::round_half_even(3.5), 4.0);
  EXPECT_EQ(cpu::round_half_even(-2.5), -2.0);
  EXPECT_EQ(cpu::round_half_even(-0.49999999999999994), 0.0);
  EXPECT_EQ(cpu::round_half_even(4503599627370497.0), 4503599627370497.0);  // 2^52 + 1
  EXPECT_EQ(cpu::round_half_even(NAN), 0.0);
  EXPECT_EQ(cpu::quantize_value(1e300, 0, DType::kInt8), 127);
  EXPECT_EQ(cpu::quantize_value(-INFINITY, 5, DType::kUInt8), 0);
  EXPECT_EQ(cpu::quantize_value(-0.5, -128, DType::kInt8), -128);
  EXPECT_EQ(cpu::quantize_value(127.5, 127, DType::kUInt8), 255);
}

// ---------------------------------------------------------------------------- QLinearMatMul

DType random_qtype(SeededRng& rng) { return kQTypes[rng.below(2)]; }

std::vector<float> scales(SeededRng& rng, int64_t n) {
  std::vector<float> s;
  for (int64_t i = 0; i < n; ++i) s.push_back(rng.uniform(0.01f, 0.05f));
  return s;
}

// The output scale that puts the largest real value at 150 steps: some outputs saturate.
float output_scale(const std::vector<double>& real) {
  double m = 0;
  for (double v : real) m = std::max(m, std::fabs(v));
  return m > 0 ? float(m / 150) : 1.f;
}

TEST(QLinearMatMul, RandomMatchesRealValuedReference) {
  SEEDED_RNG(rng);
  int64_t saturated = 0;
  for (int rep = 0; rep < 40; ++rep) {
    QLinearMatMulParams p;
    p.batch = 1 + rng.below(3), p.M = 1 + rng.below(5), p.N = 1 + rng.below(5);
    p.K = 1 + rng.below(9);
    p.a_type = random_qtype(rng), p.b_type = random_qtype(rng), p.y_type = random_qtype(rng);
    p.a_per_row = rng.below(2), p.b_per_column = rng.below(2);
    p.a_batch_stride = rng.below(3) ? p.M * p.K : 0;  // 0 broadcasts one matrix
    p.b_batch_stride = rng.below(3) ? p.K * p.N : 0;
    const Bytes a = rng.bytes((p.batch - 1) * p.a_batch_stride + p.M * p.K);
    const Bytes b = rng.bytes((p.batch - 1) * p.b_batch_stride + p.K * p.N);
    const std::vector<float> as = scales(rng, p.a_per_row ? p.M : 1);
    const std::vector<float> bs = scales(rng, p.b_per_column ? p.N : 1);
    const Bytes azp = rng.bytes(int64_t(as.size())), bzp = rng.bytes(int64_t(bs.size()));
    const Bytes yzp = rng.bytes(1);
    // Real values: dequantize each operand, multiply in double.
    auto A = [&](int64_t i, int64_t m, int64_t k) {
      const size_t r = p.a_per_row ? size_t(m) : 0;
      return (decode(p.a_type, a[size_t(i * p.a_batch_stride + m * p.K + k)]) -
              decode(p.a_type, azp[r])) *
             double(as[r]);
    };
    auto B = [&](int64_t i, int64_t k, int64_t n) {
      const size_t c = p.b_per_column ? size_t(n) : 0;
      return (decode(p.b_type, b[size_t(i * p.b_batch_stride + k * p.N + n)]) -
              decode(p.b_type, bzp[c])) *
             double(bs[c]);
    };
    std::vector<double> real;
    for (int64_t i = 0; i < p.batch; ++i)
      for (int64_t m = 0; m < p.M; ++m)
        for (int64_t n = 0; n < p.N; ++n) {
          double s = 0;
          for (int64_t k = 0; k < p.K; ++k) s += A(i, m, k) * B(i, k, n);
          real.push_back(s);
        }
    const float ys = output_scale(real);
    Allowed want;
    for (double v : real) allow(want, v / ys, 1e-12, decode(p.y_type, yzp[0]), p.y_type);
    saturated += check_bytes(int64_t(real.size()), p.y_type, want, [&](uint8_t* y) {
      cpu::qlinear_matmul(p, a.data(), as.data(), azp.data(), b.data(), bs.data(), bzp.data(), &ys,
                          yzp.data(), y);
    });
  }
  EXPECT_GT(saturated, 0);
}

TEST(QLinearMatMul, HandTiesAndInt32Wrap) {
  // a [2, 2] uint8 (scale 0.5, zp 0) times b = I (int8, scale 1, zp 0) with y_scale 1, y_zp 0:
  // y = a / 2 rounds 0.5, 1.5, 2.5 and 255 / 2 = 127.5 half to even.
  const Bytes a = {1, 3, 5, 255}, b = {1, 0, 0, 1}, zero = {0};
  const float half = 0.5f, one = 1.f;
  QLinearMatMulParams p;
  p.M = p.N = p.K = 2;
  p.a_type = DType::kUInt8, p.b_type = DType::kInt8, p.y_type = DType::kUInt8;
  check_bytes(4, DType::kUInt8, exactly(DType::kUInt8, {0, 2, 2, 128}), [&](uint8_t* y) {
    cpu::qlinear_matmul(p, a.data(), &half, zero.data(), b.data(), &one, zero.data(), &one,
                        zero.data(), y);
  });
  // K = 34000 products of (-128 - 127) * 255 sum to -2210850000, which int32 wraps to
  // 2084117296; with y_scale 1e8 that is 20.84 -> 21 (unwrapped it would saturate at -128).
  const int64_t K = 34000;
  const Bytes a2(size_t(K), encode(-128)), b2(size_t(K), 255), a_zp = {127};
  const float big = 1e8f;
  QLinearMatMulParams w;
  w.M = w.N = 1, w.K = K;
  w.a_type = DType::kInt8, w.b_type = DType::kUInt8, w.y_type = DType::kInt8;
  check_bytes(1, DType::kInt8, exactly(DType::kInt8, {21}), [&](uint8_t* y) {
    cpu::qlinear_matmul(w, a2.data(), &one, a_zp.data(), b2.data(), &one, zero.data(), &big,
                        zero.data(), y);
  });
}

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

// --------------------------------------------------------------------- ONNX node test data

DType qtype_of(const OnnxTensor& t) { return t.dtype == kOnnxInt8 ? DType::kInt8 : DType::kUInt8; }
const uint8_t* bytes_of(const OnnxTensor& t) {
  return reinterpret_cast<const uint8_t*>(t.raw.data());
}
std::vector<float> floats_of(const OnnxTensor& t) { return values<float>(t, kOnnxFloat); }
Allowed expected_bytes(const OnnxTensor& t) {
  Allowed a;
  for (int64_t i = 0; i < element_count(t); ++i)
    a.lo.push_back(decode(qtype_of(t), bytes_of(t)[i]));
  a.hi = a.lo;
  return a;
}

// Every attribute of these models is at its default (axis = 1; QLinearConv: no padding,
// stride 1, group 1). Tensors are taken in ONNX input order: x, scale, zero point for the
// quantize tests; a/x, scale, zp, b/w, scale, zp, y_scale, y_zp for the QLinear ones.
TEST(Quant, OnnxNodeTestData) {
  if (!have_node_test("test_qlinearconv"))
    GTEST_SKIP() << "no ONNX node test data in " << node_data_dir();
  for (const char* test : {"test_quantizelinear", "test_quantizelinear_axis"}) {
    SCOPED_TRACE(test);
    const std::vector<OnnxTensor> t = load_node_case(test);
    ASSERT_EQ(t.size(), 4u);
    const bool axis = t[1].dims.size() == 1;
    const QuantizeLinearParams p{qtype_of(t[2]),
                                 1,
                                 axis ? t[0].dims[1] : 1,
                                 axis ? element_count(t[0]) / t[0].dims[1] : element_count(t[0]),
                                 axis,
                                 true};
    const std::vector<float> x = floats_of(t[0]), s = floats_of(t[1]);
    check_bytes(element_count(t[3]), qtype_of(t[3]), expected_bytes(t[3]), [&](uint8_t* y) {
      cpu::quantize_linear(p, x.data(), s.data(), bytes_of(t[2]), y);
    });
  }
  for (const char* test : {"test_dequantizelinear", "test_dequantizelinear_axis"}) {
    SCOPED_TRACE(test);
    const std::vector<OnnxTensor> t = load_node_case(test);
    ASSERT_EQ(t.size(), 4u);
    const bool axis = t[1].dims.size() == 1;
    const QuantizeLinearParams p{qtype_of(t[0]),
                                 1,
                                 axis ? t[0].dims[1] : 1,
                                 axis ? element_count(t[0]) / t[0].dims[1] : element_count(t[0]),
                                 axis,
                                 true};
    Output y(element_count(t[3]));
    cpu::dequantize_linear(p, bytes_of(t[0]), floats_of(t[1]).data(), bytes_of(t[2]), y.data());
    EXPECT_TRUE(all_close(y, to_doubles(floats_of(t[3])), kExact));
  }
  for (const char* test : {"test_qlinearmatmul_2D", "test_qlinearmatmul_3D"}) {
    SCOPED_TRACE(test);
    const std::vector<OnnxTensor> t = load_node_case(test);
    ASSERT_EQ(t.size(), 9u);
    const Shape& ad = t[0].dims;
    QLinearMatMulParams p;
    p.batch = ad.size() == 3 ? ad[0] : 1;
    p.M = ad[ad.size() - 2], p.K = ad.back(), p.N = t[3].dims.back();
    p.a_batch_stride = p.M * p.K, p.b_batch_stride = p.K * p.N;
    p.a_type = qtype_of(t[0]), p.b_type = qtype_of(t[3]), p.y_type = qtype_of(t[8]);
    const std::vector<float> as = floats_of(t[1]), bs = floats_of(t[4]), ys = floats_of(t[6]);
    check_bytes(element_count(t[8]), p.y_type, expected_bytes(t[8]), [&](uint8_t* y) {
      cpu::qlinear_matmul(p, bytes_of(t[0]), as.data(), bytes_of(t[2]), bytes_of(t[3]), bs.data(),
                          bytes_of(t[5]), ys.data(), bytes_of(t[7]), y);
    });
  }
  {
    const std::vector<OnnxTensor> t = load_node_case("test_qlinearconv");
    ASSERT_EQ(t.size(), 9u);
    QLinearConvParams q;
    ConvParams& p = q.conv;
    p.batch = t[0].dims[0], p.in_channels = t[0].dims[1], p.out_channels = t[3].dims[0];
    for (int d = 0; d < 2; ++d) {
      p.in_size[d] = t[0].dims[size_t(2 + d)], p.kernel[d] = t[3].dims[size_t(2 + d)];
      p.out_size[d] = p.in_size[d] - p.kernel[d] + 1;
    }
    q.x_type = qtype_of(t[0]), q.w_type = qtype_of(t[3]), q.y_type = qtype_of(t[8]);
    q.w_per_channel = element_count(t[4]) > 1;
    const std::vector<float> xs = floats_of(t[1]), ws = floats_of(t[4]), ys = floats_of(t[6]);
    check_bytes(element_count(t[8]), q.y_type, expected_bytes(t[8]), [&](uint8_t* y) {
      cpu::qlinear_conv(q, bytes_of(t[0]), xs.data(), bytes_of(t[2]), bytes_of(t[3]), ws.data(),
                        bytes_of(t[5]), ys.data(), bytes_of(t[7]), nullptr, y);
    });
  }
}

}  // namespace
}  // namespace jetplan::kernels

namespace jetplan::kernels {
namespace {

using namespace test_util;

// ------------------------------------------------------------------- DynamicQuantizeLinear

struct DynamicRef {
  float scale;
  int32_t zero_point;
  Allowed y;
};

// ONNX's reference, step by step in float32 as numpy computes it, rounding with the FPU
// (std::nearbyint, round to nearest even) where the kernel has its own tie rule.
DynamicRef dynamic_quantize_ref(const std::vector<float>& x) {
  const float lo = std::min(0.f, *std::min_element(x.begin(), x.end()));
  const float hi = std::max(0.f, *std::max_element(x.begin(), x.end()));
  DynamicRef r;
  r.scale = (hi == lo ? 1.f : hi - lo) / 255.f;
  const float initial = 0.f - lo / r.scale;
  r.zero_point = int32_t(std::nearbyint(std::clamp(initial, 0.f, 255.f)));
  for (float v : x) {
    const float q = std::nearbyint(v / r.scale) + float(r.zero_point);
    r.y.lo.push_back(int32_t(std::clamp(q, 0.f, 255.f)));
  }
  r.y.hi = r.y.lo;
  return r;
}

// Runs the kernel (output poisoned, guarded) and checks y bit for bit, scale and zero point.
void check_dynamic(const std::vector<float>& x, const DynamicRef& want) {
  const int64_t n = int64_t(x.size());
  float scale = NAN;
  uint8_t zp = 0xA5;
  check_bytes(n, DType::kUInt8, want.y, [&](uint8_t* y) {
    scale = NAN;
    zp = 0xA5;
    cpu::dynamic_quantize_linear({n}, x.data(), y, &scale, &zp);
  });
  EXPECT_EQ(scale, want.scale);
  EXPECT_EQ(int32_t{zp}, want.zero_point);
}

TEST(DynamicQuantizeLinear, HandValues) {
  // ONNX's example: range [-3, 2], scale 5 / 255, zero point round(153) = 153.
  const std::vector<float> x = {0, 2, -3, -2.5f, 1.34f, 0.5f};
  DynamicRef want{5.f / 255.f, 153, exactly(DType::kUInt8, {153, 255, 0, 26, 221, 179})};
  check_dynamic(x, want);
  // All zero: the range is empty, ONNX's reference takes scale 1 / 255 and everything is 0.
  check_dynamic({0, 0, 0}, {1.f / 255.f, 0, exactly(DType::kUInt8, {0, 0, 0})});
  // Positive only: the range is widened down to 0, so the zero point is 0.
  check_dynamic({2.55f, 1.f}, {2.55f / 255.f, 0, exactly(DType::kUInt8, {255, 100})});
  // Negative only: widened up to 0, zero point 255.
  check_dynamic({-2.55f, -1.f}, {2.55f / 255.f, 255, exactly(DType::kUInt8, {0, 155})});
}

TEST(DynamicQuantizeLinear, RandomMatchesReference) {
  SEEDED_RNG(rng);
  for (auto [lo, hi] : {std::pair{-4.f, 4.f}, std::pair{-1.f, 9.f}, std::pair{0.5f, 3.f},
                        std::pair{-7.f, -0.25f}}) {
    SCOPED_TRACE("range " + std::to_string(lo) + " .. " + std::to_string(hi));
    const std::vector<float> x = rng.uniform(301, lo, hi);
    check_dynamic(x, dynamic_quantize_ref(x));
  }
}

TEST(DynamicQuantizeLinear, OnnxNodeTestData) {
  if (!have_node_test("test_dynamicquantizelinear"))
    GTEST_SKIP() << "no ONNX node test data in " << node_data_dir();
  for (const char* test : {"test_dynamicquantizelinear", "test_dynamicquantizelinear_max_adjusted",
                           "test_dynamicquantizelinear_min_adjusted"}) {
    SCOPED_TRACE(test);
    const std::vector<OnnxTensor> t = load_node_case(test);
    ASSERT_EQ(t.size(), 4u);  // x; y, y_scale, y_zero_point
    const std::vector<float> x = floats_of(t[0]);
    DynamicRef want;
    want.y = expected_bytes(t[1]);
    want.scale = floats_of(t[2]).at(0);
    want.zero_point = bytes_of(t[3])[0];
    check_dynamic(x, want);
  }
}

}  // namespace
}  // namespace jetplan::kernels
