// kernels/cpu/bfloat16.h and the Cast kernel's bfloat16 pairs against bfloat16_reference.h
// (fields decoded with ldexp, rounding by scaling and rint) and hand values: every bfloat16 to
// float32; every upper half of a float32 with low halves at and around the tie, which round to
// nearest, ties to even (ONNX's reference and its current node tests); NaN stays NaN (quiet, sign
// and top payload bits kept) even when its payload lies in the dropped bits alone; infinities;
// float32's largest finite values round to infinity past the last tie; subnormals; the values of
// ONNX's test_cast_FLOAT_to_BFLOAT16.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/cpu/bfloat16.h"
#include "kernels/kernels.h"
#include "tests/kernels/bfloat16_reference.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

bool is_bfloat16_nan(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0; }

TEST(BFloat16, ToFloatIsExactForEveryValue) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const float got = bfloat16_to_float(uint16_t(b));
    const long double want = test_util::bfloat16_value(uint16_t(b));
    ASSERT_EQ(bits_of_float(got), b << 16) << "bfloat16 " << b;  // the upper half, NaNs included
    if (!std::isnan(want)) {
      ASSERT_EQ(static_cast<long double>(got), want) << "bfloat16 " << b;
      ASSERT_EQ(std::signbit(got), (b & 0x8000) != 0) << "bfloat16 " << b;
    }
  }
}

TEST(BFloat16, FromFloatRoundsToNearestEven) {
  // Every upper half (sign, exponent, top 7 mantissa bits) with low halves at, around and far
  // from the tie between neighbours: below the tie the upper half, above it the next value away
  // from zero (the upper half plus one: infinity after the largest), at it the even one of the two.
  const uint32_t lows[] = {0x0000, 0x0001, 0x3fff, 0x7fff, 0x8000, 0x8001, 0xc000, 0xffff};
  for (uint32_t upper = 0; upper <= 0xffff; ++upper) {
    for (uint32_t low : lows) {
      const float f = float_of_bits((upper << 16) | low);
      const uint16_t got = bfloat16_from_float(f);
      if (std::isnan(f)) {
        ASSERT_TRUE(is_bfloat16_nan(got)) << "float bits " << ((upper << 16) | low);
        continue;
      }
      ASSERT_EQ(got, test_util::bfloat16_rounded(f)) << "float bits " << ((upper << 16) | low);
      const uint32_t up = low > 0x8000 || (low == 0x8000 && (upper & 1)) ? 1 : 0;
      ASSERT_EQ(got, upper + up) << "float bits " << ((upper << 16) | low);
    }
  }
}

TEST(BFloat16, RandomFloatsRoundToNearest) {
  SEEDED_RNG(rng);
  for (int i = 0; i < 200000; ++i) {
    const float f = float_of_bits(uint32_t(rng.bits64() >> 32));
    if (std::isnan(f)) continue;
    const uint16_t got = bfloat16_from_float(f);
    ASSERT_EQ(got, test_util::bfloat16_rounded(f)) << "float " << f;
    // Nearest: at most half a step (of the finer side, at a binade's edge) away.
    const long double v = test_util::bfloat16_value(got);
    if (std::isinf(v)) continue;  // past the last tie: infinity
    int e = 0;
    std::frexp(static_cast<long double>(f), &e);
    const long double half_step = std::ldexp(1.0L, std::max(e - 9, -134));
    ASSERT_LE(std::fabs(v - static_cast<long double>(f)), half_step) << "float " << f;
  }
}

TEST(BFloat16, TiesRoundToEven) {
  // 1 + 2^-8 lies halfway between 1 (0x3f80) and 1 + 2^-7 (0x3f81): even is 0x3f80, which
  // truncation gives as well, so the odd case tells the rules apart: 1 + 3 * 2^-8 -> 0x3f82
  // (truncation: 0x3f81).
  EXPECT_EQ(bfloat16_from_float(1.00390625f), 0x3f80);
  EXPECT_EQ(bfloat16_from_float(1.01171875f), 0x3f82);
  EXPECT_EQ(bfloat16_from_float(-1.01171875f), 0xbf82);
  EXPECT_EQ(bfloat16_from_float(std::nextafter(1.00390625f, 2.f)), 0x3f81);  // just past a tie
  EXPECT_EQ(bfloat16_from_float(std::nextafter(1.0078125f, 2.f)), 0x3f81);  // just above a value
  EXPECT_EQ(bfloat16_from_float(std::nextafter(1.0078125f, 0.f)), 0x3f81);  // just below it
}

TEST(BFloat16, NaNStaysNaN) {
  EXPECT_EQ(bfloat16_from_float(std::numeric_limits<float>::quiet_NaN()), 0x7fc0);
  EXPECT_EQ(bfloat16_from_float(-std::numeric_limits<float>::quiet_NaN()), 0xffc0);
  // Payload in the dropped half only: truncation alone would give infinity.
  EXPECT_EQ(bfloat16_from_float(float_of_bits(0x7f800001u)), 0x7fc0);
  EXPECT_EQ(bfloat16_from_float(float_of_bits(0xff80ffffu)), 0xffc0);
  // The top payload bits are kept, the quiet bit set.
  EXPECT_EQ(bfloat16_from_float(float_of_bits(0x7f8a0000u)), 0x7fca);
  EXPECT_EQ(bfloat16_from_float(float_of_bits(0x7fffffffu)), 0x7fff);
  for (uint32_t payload = 1; payload < (1u << 23); payload += 4099) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint16_t got = bfloat16_from_float(float_of_bits(sign | 0x7f800000u | payload));
      ASSERT_TRUE(is_bfloat16_nan(got)) << "payload " << payload;
      ASSERT_EQ(got & 0x8000, sign >> 16) << "payload " << payload;
    }
  }
}

TEST(BFloat16, InfinitiesAndTheLargestFloats) {
  EXPECT_EQ(bfloat16_from_float(INFINITY), 0x7f80);
  EXPECT_EQ(bfloat16_from_float(-INFINITY), 0xff80);
  // The largest bfloat16 is 0x7f7f (~3.39e38); floats from the tie after it (0x7f7f8000, its
  // upper half odd) on round to infinity, as IEEE rounding to nearest overflows.
  EXPECT_EQ(bfloat16_from_float(float_of_bits(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(bfloat16_from_float(float_of_bits(0x7f7f8000u)), 0x7f80);
  EXPECT_EQ(bfloat16_from_float(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(bfloat16_from_float(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(bfloat16_to_float(0x7f7f), float_of_bits(0x7f7f0000u));
  EXPECT_TRUE(std::isinf(bfloat16_to_float(0xff80)));
}

TEST(BFloat16, ZerosAndSubnormals) {
  EXPECT_EQ(bfloat16_from_float(0.f), 0x0000);
  EXPECT_EQ(bfloat16_from_float(-0.f), 0x8000);
  const float min_normal = std::numeric_limits<float>::min();  // 2^-126: 0x0080 in bfloat16
  EXPECT_EQ(bfloat16_from_float(min_normal), 0x0080);
  // float's largest subnormal is 2^-16 of a bfloat16 step below 2^-126: it rounds up to it.
  EXPECT_EQ(bfloat16_from_float(std::nextafter(min_normal, 0.f)), 0x0080);
  EXPECT_EQ(bfloat16_from_float(float_of_bits(0x007f7fffu)), 0x007f);  // bfloat16's largest one
  EXPECT_EQ(bfloat16_from_float(std::ldexp(1.f, -133)), 0x0001);  // smallest bfloat16 subnormal
  EXPECT_EQ(bfloat16_from_float(std::ldexp(1.9f, -133)), 0x0002);
  EXPECT_EQ(bfloat16_from_float(std::ldexp(1.5f, -134)), 0x0001);  // 0.75 of a step
  EXPECT_EQ(bfloat16_from_float(std::ldexp(1.f, -134)), 0x0000);   // half a step: to even, 0
  EXPECT_EQ(bfloat16_from_float(std::ldexp(3.f, -134)), 0x0002);   // 1.5 steps: to even, 2
  EXPECT_EQ(bfloat16_from_float(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(bfloat16_to_float(0x0001), std::ldexp(1.f, -133));
  EXPECT_EQ(bfloat16_to_float(0x807f), -std::ldexp(127.f, -133));
}

TEST(BFloat16, OnnxConformanceValues) {
  // node/test_cast_FLOAT_to_BFLOAT16 (onnx 1.13 and later; onnx 1.12's stored output is the
  // truncation, one step nearer zero in five places): input and stored output bits.
  const uint32_t in[] = {0x3ef535b8, 0x3ef5eeb0, 0x3effd6b2, 0x3f51b0e5, 0x3ef0cccc, 0x3f51040c,
                         0x3e57eed1, 0x3f391039, 0x7fc00000, 0x7f800000, 0x7f800000, 0xff800000};
  const uint16_t want[] = {0x3ef5, 0x3ef6, 0x3f00, 0x3f52, 0x3ef1, 0x3f51,
                           0x3e58, 0x3f39, 0x7fc0, 0x7f80, 0x7f80, 0xff80};
  std::vector<float> x;
  for (uint32_t b : in) x.push_back(float_of_bits(b));
  test_util::expect_bytes(to_bytes(std::vector<uint16_t>(std::begin(want), std::end(want))), 2,
                          [&](unsigned char* y) {
                            cpu::cast({DType::kFloat32, DType::kBFloat16, 12}, x.data(), y);
                          });
  // And back (node/test_cast_BFLOAT16_to_FLOAT): each upper half as a float, exactly.
  std::vector<uint32_t> back;
  for (uint16_t b : want) back.push_back(uint32_t(b) << 16);
  test_util::expect_bytes(to_bytes(back), 4, [&](unsigned char* y) {
    cpu::cast({DType::kBFloat16, DType::kFloat32, 12}, want, y);
  });
}

template <typename From, typename To>
void expect_cast(DType from, DType to, From x, To want) {
  SCOPED_TRACE("cast dtype " + std::to_string(int(from)) + " to " + std::to_string(int(to)));
  test_util::expect_bytes(to_bytes(std::vector<To>{want}), sizeof(To), [&](unsigned char* y) {
    cpu::cast({from, to, 1}, &x, y);
  });
}

TEST(BFloat16, CastsThroughFloat) {
  constexpr DType bf = DType::kBFloat16, f64 = DType::kFloat64, f16 = DType::kFloat16,
                  i32 = DType::kInt32, i64 = DType::kInt64, u8 = DType::kUInt8, b = DType::kBool;
  // To bfloat16: rounded to float32 first, then to bfloat16, both to nearest even. Just above
  // the tie 1 + 2^-8, a double rounds to the tie as a float, which then goes to even (0x3f80);
  // one rounding from the double would give 0x3f81.
  expect_cast(f64, bf, 1.00390625 + 0x1p-40, uint16_t{0x3f80});
  expect_cast(f64, bf, 1.00390625 + 0x1p-20, uint16_t{0x3f81});
  expect_cast(f64, bf, 1e300, uint16_t{0x7f80});  // infinity as a float
  expect_cast(i32, bf, 16777217, uint16_t{0x4b80});  // 2^24 as a float
  expect_cast(i32, bf, 257, uint16_t{0x4380});       // a tie: to even, 256
  expect_cast(i32, bf, 259, uint16_t{0x4382});       // a tie: to even, 260
  expect_cast(i64, bf, int64_t{-259}, uint16_t{0xc382});  // -260
  expect_cast(f16, bf, uint16_t{0x3c01}, uint16_t{0x3f80});  // 1 + 2^-10: to nearest, 1
  expect_cast(b, bf, uint8_t{1}, uint16_t{0x3f80});
  // From bfloat16: exact as a float32, then that float's rules.
  expect_cast(bf, f64, uint16_t{0x3f81}, 1.0078125);
  expect_cast(bf, f16, uint16_t{0x4780}, uint16_t{0x7c00});  // 65536: past the largest half
  expect_cast(bf, f16, uint16_t{0x3f81}, uint16_t{0x3c08});
  expect_cast(bf, i32, uint16_t{0xc0b0}, int32_t{-5});       // -5.5 truncates
  expect_cast(bf, i32, uint16_t{0x7f80}, std::numeric_limits<int32_t>::max());
  expect_cast(bf, i64, uint16_t{0x7fc0}, int64_t{0});  // NaN
  expect_cast(bf, u8, uint16_t{0x4380}, uint8_t{255});  // 256 saturates
  expect_cast(bf, b, uint16_t{0x8000}, uint8_t{0});     // -0
  expect_cast(bf, b, uint16_t{0x7fc0}, uint8_t{1});     // NaN is true
  expect_cast(bf, bf, uint16_t{0x7f81}, uint16_t{0x7f81});  // same dtype: the bits, unchanged
}

}  // namespace
}  // namespace jetplan::kernels
