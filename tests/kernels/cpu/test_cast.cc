// kernels/cpu/half.h and the Cast kernel against references written another way: halves decoded
// with ldexp and encoded by scaling to the half's last place, rounding with nearbyintl and looking
// the value up in a table of all 65536 decoded halves; every Cast pair computed from the source
// value widened to long double (exact for every dtype) with explicit truncation, clamping and
// 128-bit modular reduction. Exhaustive over all halves, all int8/uint8 values and every rounding
// tie between neighbouring halves. Outputs are poisoned (two NaN patterns for float targets,
// 0xA5 and 0x5A bytes otherwise) with a guard zone; a NaN only passes where a NaN is expected
// and is not the poison. The seed of any failure is printed (JETPLAN_TEST_SEED=<n> replays it).
// bfloat16's own conversions (kernels/cpu/bfloat16.h) are tested in test_bfloat16.cc;
// here it joins every Cast pair, decoded with ldexp and rounded to nearest even by scaling.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cpu/half.h"
#include "kernels/kernels.h"
#include "tests/kernels/bfloat16_reference.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using test_util::Bytes;
using test_util::to_bytes;

__extension__ typedef __int128 Int128;

// ---------------------------------------------------------------------- independent half codec

// 1 sign, 5 exponent (bias 15), 10 mantissa bits; subnormals are m * 2^-24.
long double half_value(uint16_t h) { return test_util::ieee_value(h, 5, 10); }

// Non-negative finite half values to their bit patterns.
const std::map<long double, uint16_t>& half_table() {
  static const std::map<long double, uint16_t> table = [] {
    std::map<long double, uint16_t> t;
    for (uint32_t h = 0; h < 0x7c00; ++h) t[half_value(uint16_t(h))] = uint16_t(h);
    return t;
  }();
  return table;
}

// The nearest half (ties to even) of a non-NaN value.
uint16_t half_of(long double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const long double a = std::fabs(v);
  if (a >= 65520.0L) return sign | 0x7c00;  // at or past the tie between 65504 and 2^16
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e with f in [0.5, 1): its last half place is 2^(e - 11)
  const int last_place = std::max(e - 11, -24);
  const long double q = std::nearbyint(std::ldexp(a, -last_place));
  const auto it = half_table().find(std::ldexp(q, last_place));
  if (it == half_table().end()) {
    ADD_FAILURE() << "no half has the value " << double(std::ldexp(q, last_place));
    return 0;
  }
  return sign | it->second;
}

uint32_t float_bits(float f) {
  return test_util::load<uint32_t>(reinterpret_cast<unsigned char*>(&f));
}

// ------------------------------------------------------------------------------------ half.h

TEST(Half, ToFloatExhaustive) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float got = half_to_float(uint16_t(h));
    const long double want = half_value(uint16_t(h));
    if (std::isnan(want)) {
      // NaN keeps its sign and payload: the float's top mantissa bits are the half's.
      const uint32_t bits = ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13);
      ASSERT_EQ(float_bits(got), bits) << "half " << h;
    } else {
      ASSERT_EQ(static_cast<long double>(got), want) << "half " << h;
      ASSERT_EQ(std::signbit(got), (h & 0x8000) != 0) << "half " << h;
    }
    if (!std::isnan(want)) {
      ASSERT_EQ(static_cast<long double>(half_to_double(uint16_t(h))), want) << "half " << h;
    }
  }
}

TEST(Half, RoundTripOfEveryHalf) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t want = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) ? uint16_t(h | 0x200) : uint16_t(h);
    ASSERT_EQ(half_from_float(half_to_float(uint16_t(h))), want) << "half " << h;
    ASSERT_EQ(half_from_double(half_to_double(uint16_t(h))), want) << "half " << h;
  }
}

TEST(Half, EveryTieBetweenNeighboursRoundsToEven) {
  for (uint16_t h = 0; h < 0x7c00; ++h) {
    // Past 65504 (0x7bff) the next value would be 2^16, so the tie at 65520 goes to infinity.
    const uint16_t up = uint16_t(h + 1);
    const long double tie = (half_value(h) + (h == 0x7bff ? 65536.0L : half_value(up))) / 2;
    const float mid = static_cast<float>(tie);
    ASSERT_EQ(static_cast<long double>(mid), tie) << "the tie is exact in float";
    const uint16_t even = (h & 1) ? up : h;
    for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
      const float m = sign ? -mid : mid;
      ASSERT_EQ(half_from_float(m), sign | even) << "tie above half " << h;
      ASSERT_EQ(half_from_double(m), sign | even) << "tie above half " << h;
      // Anything off the tie, however little, goes to the nearer neighbour. Off by one double
      // place is invisible to a float: rounding through float first would land on the tie.
      ASSERT_EQ(half_from_float(std::nextafter(m, 0.f)), sign | h) << "below tie " << h;
      ASSERT_EQ(half_from_float(std::nextafter(m, 2 * m)), sign | up) << "above tie " << h;
      ASSERT_EQ(half_from_double(std::nextafter(double{m}, 0.0)), sign | h) << "below tie " << h;
      ASSERT_EQ(half_from_double(std::nextafter(double{m}, 2.0 * m)), sign | up) << "above " << h;
    }
  }
}

TEST(Half, HandValues) {
  EXPECT_EQ(half_from_float(1.f), 0x3c00);
  EXPECT_EQ(half_from_float(-2.f), 0xc000);
  EXPECT_EQ(half_from_float(0.1f), 0x2e66);
  EXPECT_EQ(half_from_float(1.f / 3), 0x3555);
  EXPECT_EQ(half_from_float(65504.f), 0x7bff);
  EXPECT_EQ(half_from_float(65519.99f), 0x7bff);
  EXPECT_EQ(half_from_float(65520.f), 0x7c00);
  EXPECT_EQ(half_from_float(-1e6f), 0xfc00);
  EXPECT_EQ(half_from_float(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(half_from_float(std::ldexp(1.f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(half_from_float(std::ldexp(1.f, -25)), 0x0000);  // tie with 0: even
  EXPECT_EQ(half_from_float(std::ldexp(1.0000001f, -25)), 0x0001);
  EXPECT_EQ(half_from_float(std::ldexp(1.5f, -24)), 0x0002);  // tie 1 | 2: even
  EXPECT_EQ(half_from_float(std::ldexp(2.5f, -24)), 0x0002);  // tie 2 | 3: even
  EXPECT_EQ(half_from_float(std::ldexp(1.f, -14) - std::ldexp(1.f, -25)), 0x0400);  // to normal
  EXPECT_EQ(half_from_float(1e-10f), 0x0000);
  EXPECT_EQ(half_from_float(-1e-10f), 0x8000);
  EXPECT_EQ(half_from_float(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(half_from_float(-0.f), 0x8000);
  EXPECT_EQ(half_from_float(INFINITY), 0x7c00);
  EXPECT_EQ(half_from_float(-INFINITY), 0xfc00);
  EXPECT_EQ(half_from_float(NAN) & 0x7e00, 0x7e00);   // a quiet NaN
  EXPECT_EQ(half_from_float(-NAN) & 0xfe00, 0xfe00);  // keeps its sign
  EXPECT_EQ(half_from_double(1e300), 0x7c00);
  EXPECT_EQ(half_from_double(1e-300), 0x0000);
  EXPECT_EQ(half_from_double(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3c01);
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.f, -24));
}

TEST(Half, RandomFloatsAndDoublesRoundToNearest) {
  SEEDED_RNG(rng);
  for (int i = 0; i < 200000; ++i) {
    const int e = int(rng.integer(-28, 17));
    const float f = std::ldexp(rng.uniform(1.f, 2.f), e) * (rng.integer(0, 1) ? 1.f : -1.f);
    ASSERT_EQ(half_from_float(f), half_of(f)) << "float " << f;
    // A double with all 52 mantissa bits random.
    const uint64_t bits = (uint64_t(1023 + e) << 52) | (rng.bits64() >> 12);
    double d;
    std::memcpy(&d, &bits, sizeof d);
    ASSERT_EQ(half_from_double(d), half_of(d)) << "double " << d;
  }
}

// -------------------------------------------------------------------------------------- cast

// A source element widened without loss.
struct Source {
  bool is_float;
  long double v;  // NaN for a NaN
};

Source read(DType t, const unsigned char* p) {
  switch (t) {
    case DType::kFloat32:
      return {true, test_util::load<float>(p)};
    case DType::kFloat64:
      return {true, test_util::load<double>(p)};
    case DType::kFloat16:
      return {true, half_value(test_util::load<uint16_t>(p))};
    case DType::kBool:
      return {false, test_util::load<uint8_t>(p) ? 1.0L : 0.0L};
    case DType::kBFloat16:
      return {true, test_util::bfloat16_value(test_util::load<uint16_t>(p))};
    default:  // an integer; long double has 64 mantissa bits: exact
      return test_util::with_integer_type(t, [p](auto zero) {
        return Source{false, static_cast<long double>(test_util::load<decltype(zero)>(p))};
      });
  }
  return {false, 0};
}

template <typename T>
Bytes integer_bytes(const Source& s) {
  T out;
  if (s.is_float) {  // truncate, clamp; NaN is 0
    const long double lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    const long double t = std::isnan(s.v) ? 0 : std::trunc(s.v);
    out = t <= lo ? std::numeric_limits<T>::min()
                  : (t >= hi ? std::numeric_limits<T>::max() : static_cast<T>(t));
  } else {  // modulo 2^bits
    const Int128 m = Int128{1} << (8 * sizeof(T));
    Int128 r = ((static_cast<Int128>(s.v) % m) + m) % m;
    if (std::numeric_limits<T>::is_signed && r >= m / 2) r -= m;
    out = static_cast<T>(r);
  }
  return to_bytes(std::vector<T>{out});
}

// The expected bytes of `s` cast to `to`; empty when a NaN is expected.
Bytes cast_ref(const Source& s, DType to) {
  const bool nan = std::isnan(s.v);
  switch (to) {
    case DType::kFloat32:
      return nan ? Bytes{} : to_bytes(std::vector<float>{static_cast<float>(s.v)});
    case DType::kFloat64:
      return nan ? Bytes{} : to_bytes(std::vector<double>{static_cast<double>(s.v)});
    case DType::kFloat16:
      return nan ? Bytes{} : to_bytes(std::vector<uint16_t>{half_of(s.v)});
    case DType::kBool:
      return {static_cast<unsigned char>(nan || s.v != 0)};
    case DType::kBFloat16:  // through float32, then to bfloat16: both rounded to nearest even
      return nan ? Bytes{}
                 : to_bytes(std::vector<uint16_t>{
                       test_util::bfloat16_rounded(static_cast<float>(s.v))});
    default:  // an integer
      return test_util::with_integer_type(to, [&s](auto zero) { return integer_bytes<decltype(zero)>(s); });
  }
  return {};
}

// One element of poison per pattern: NaNs with payloads no conversion produces for the float
// types, the byte patterns otherwise.
Bytes poison_element(DType t, int pattern) {
  switch (t) {
    case DType::kFloat32:
      return to_bytes(std::vector<uint32_t>{pattern ? 0xffa5a5a5u : test_util::kPoisonBits});
    case DType::kFloat64:
      return to_bytes(
          std::vector<uint64_t>{pattern ? 0xfff5a5a5a5a5a5a5ull : 0x7ff0dead0000deadull});
    case DType::kFloat16:
      return to_bytes(std::vector<uint16_t>{uint16_t(pattern ? 0xfda5 : 0x7dad)});
    case DType::kBFloat16:  // signalling NaNs: a conversion's NaN is quiet
      return to_bytes(std::vector<uint16_t>{uint16_t(pattern ? 0xffa5 : 0x7fad)});
    default:
      return Bytes(size_t(dtype_bytes(t)), test_util::kBytePoisons[pattern]);
  }
}

bool is_nan_element(DType t, const unsigned char* p) {
  if (t == DType::kFloat32) return std::isnan(test_util::load<float>(p));
  if (t == DType::kFloat64) return std::isnan(test_util::load<double>(p));
  const uint16_t h = test_util::load<uint16_t>(p);
  if (t == DType::kBFloat16) return (h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0;
  return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
}

testing::AssertionResult check_cast(DType from, DType to, const Bytes& x) {
  const int64_t fb = dtype_bytes(from), tb = dtype_bytes(to), n = int64_t(x.size()) / fb;
  std::vector<Bytes> want;
  for (int64_t i = 0; i < n; ++i) {
    const unsigned char* xi = x.data() + i * fb;
    // A cast to the same dtype keeps the bits, NaN payloads included.
    want.push_back(from == to ? Bytes(xi, xi + fb) : cast_ref(read(from, xi), to));
  }
  for (int pattern = 0; pattern < 2; ++pattern) {
    const Bytes poison = poison_element(to, pattern);
    Bytes y;
    for (int64_t i = 0; i < n + test_util::kGuard; ++i)
      y.insert(y.end(), poison.begin(), poison.end());
    cpu::cast({from, to, n}, x.data(), y.data());
    for (int64_t i = n; i < n + test_util::kGuard; ++i)
      if (!std::equal(poison.begin(), poison.end(), y.begin() + i * tb))
        return testing::AssertionFailure() << "kernel wrote past the output";
    for (int64_t i = 0; i < n; ++i) {
      const unsigned char* got = y.data() + i * tb;
      const bool ok =
          want[size_t(i)].empty()
              ? is_nan_element(to, got) && !std::equal(poison.begin(), poison.end(), got)
              : std::equal(want[size_t(i)].begin(), want[size_t(i)].end(), got);
      if (ok) continue;
      std::ostringstream msg;
      msg << "element " << i << " of " << n << ": source bytes";
      for (int64_t k = 0; k < fb; ++k) msg << ' ' << int{x[size_t(i * fb + k)]};
      msg << ", got bytes";
      for (int64_t k = 0; k < tb; ++k) msg << ' ' << int{got[k]};
      msg << (want[size_t(i)].empty() ? ", want a NaN" : ", want bytes");
      for (unsigned char b : want[size_t(i)]) msg << ' ' << int{b};
      return testing::AssertionFailure() << msg.str();
    }
  }
  return testing::AssertionSuccess();
}

// Source values of each dtype: every value for the small types, edges and random ones otherwise.
Bytes cast_sources(test_util::SeededRng& rng, DType t) {
  const long double edges[] = {0,
                               1,
                               -1,
                               0.5L,
                               -0.5L,
                               1.5L,
                               -2.5L,
                               2.7L,
                               -2.7L,
                               127.9L,
                               128,
                               -128.9L,
                               -129,
                               255.9L,
                               256,
                               300,
                               65504,
                               65519,
                               65520,
                               16777217,
                               16777219,
                               2147483647,
                               2147483648.0L,
                               -2147483648.0L,
                               -2147483904.0L,
                               9007199254740993.0L,
                               9223372036854775807.0L,
                               -9223372036854775807.0L - 1,
                               1e20L,
                               -1e20L,
                               1e-8L};
  Bytes out;
  auto add = [&](auto v) {
    const Bytes b = to_bytes(std::vector<decltype(v)>{v});
    out.insert(out.end(), b.begin(), b.end());
  };
  switch (t) {
    case DType::kFloat16:
    case DType::kBFloat16:
      for (uint32_t h = 0; h <= 0xffff; ++h) add(uint16_t(h));
      return out;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kUInt16:  // every value, from the lowest up
      test_util::with_integer_type(t, [&add](auto zero) {
        using T = decltype(zero);
        if constexpr (sizeof(T) <= 2) {  // the other widths are never asked for here
          for (int v = std::numeric_limits<T>::min(); v <= std::numeric_limits<T>::max(); ++v)
            add(T(v));
        }
      });
      return out;
    case DType::kBool:
      return {0, 1};
    case DType::kUInt32:
      for (long double v : edges)
        if (v == std::trunc(v) && v >= 0 && v <= 4294967295.0L) add(uint32_t(v));
      for (int i = 0; i < 2000; ++i)
        add(uint32_t(i % 2 ? rng.integer(0, 70000) : int64_t(rng.bits64() >> 32)));
      return out;
    case DType::kUInt64:
      // Past INT64_MAX (a signed reading goes negative), and float ties above 2^40 and 2^63.
      for (long double v : edges)
        if (v == std::trunc(v) && v >= 0 && v < 1.8e19L) add(uint64_t(v));
      add(~uint64_t{0});
      for (int i = 0; i < 2000; ++i) {
        const uint64_t tie = (uint64_t{1} << (40 + i % 24)) + (uint64_t{1} << (16 + i % 24));
        add(i % 3 == 0 ? uint64_t(rng.integer(0, 70000))
                       : (i % 3 == 1 ? rng.bits64() : tie + uint64_t(rng.integer(0, 4))));
      }
      return out;
    case DType::kFloat32:
      for (long double v : edges) add(static_cast<float>(v));
      for (float v : {-0.f, INFINITY, -INFINITY, NAN, -NAN, std::numeric_limits<float>::max(),
                      std::numeric_limits<float>::denorm_min(), 2147483520.f, 9.2233715e18f})
        add(v);
      // bfloat16's edges: ties between neighbours (odd and even), a NaN whose payload lies in
      // the low half alone, the largest float, float subnormals.
      for (uint32_t bits : {0x3f808000u, 0x3f818000u, 0xbf818001u, 0x7f800001u, 0xff800001u,
                            0x7f7fffffu, 0x00800000u, 0x007fffffu, 0x8000ffffu})
        add(test_util::float_of_bits(bits));
      for (int i = 0; i < 2000; ++i)
        add(std::ldexp(rng.uniform(-2.f, 2.f), int(rng.integer(-30, 70))));
      return out;
    case DType::kFloat64:
      for (long double v : edges) add(static_cast<double>(v));
      for (double v : {-0.0, double(INFINITY), -double(INFINITY), double(NAN), 1e300,
                       9223372036854774784.0, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)})
        add(v);
      for (int i = 0; i < 2000; ++i) {
        const uint64_t bits = (uint64_t(1023 + rng.integer(-30, 70)) << 52) | (rng.bits64() >> 12);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        add(rng.integer(0, 1) ? d : -d);
      }
      return out;
    case DType::kInt32:
      for (long double v : edges)
        if (v == std::trunc(v) && v >= -2147483648.0L && v <= 2147483647.0L) add(int32_t(v));
      for (int i = 0; i < 2000; ++i)
        add(int32_t(rng.integer(i % 2 ? -70000 : INT32_MIN, i % 2 ? 70000 : INT32_MAX)));
      return out;
    case DType::kInt64:
      for (long double v : edges)
        if (v == std::trunc(v) && std::fabs(v) < 9.3e18L) add(int64_t(v));
      for (int i = 0; i < 2000; ++i) {
        // Small values, any value, and values a float tie plus a little above 2^40.
        const int64_t tie = (int64_t{1} << (40 + i % 20)) + (int64_t{1} << (16 + i % 20));
        add(int64_t(i % 3 == 0 ? rng.integer(-70000, 70000)
                               : (i % 3 == 1 ? int64_t(rng.bits64()) : tie + rng.integer(-2, 2))));
      }
      return out;
  }
  return out;
}

TEST(Cast, EveryPairOfDTypes) {
  SEEDED_RNG(rng);
  for (int from = 0; from < kDTypeCount; ++from) {
    const Bytes x = cast_sources(rng, DType(from));
    for (int to = 0; to < kDTypeCount; ++to) {
      SCOPED_TRACE("cast dtype " + std::to_string(from) + " to " + std::to_string(to));
      EXPECT_TRUE(check_cast(DType(from), DType(to), x));
    }
  }
}

template <typename From, typename To>
void expect_cast(DType from, DType to, From x, To want) {
  SCOPED_TRACE("cast dtype " + std::to_string(int(from)) + " to " + std::to_string(int(to)) +
               " of " + std::to_string(x));
  test_util::expect_bytes(to_bytes(std::vector<To>{want}), sizeof(To), [&](unsigned char* y) {
    cpu::cast({from, to, 1}, &x, y);
  });
}

TEST(Cast, HandValues) {
  constexpr DType f32 = DType::kFloat32, f64 = DType::kFloat64, f16 = DType::kFloat16,
                  i8 = DType::kInt8, u8 = DType::kUInt8, i32 = DType::kInt32, i64 = DType::kInt64,
                  b = DType::kBool;
  const int32_t max32 = std::numeric_limits<int32_t>::max(),
                min32 = std::numeric_limits<int32_t>::min();
  expect_cast(f32, i32, 2.7f, int32_t{2});
  expect_cast(f32, i32, -2.7f, int32_t{-2});
  expect_cast(f32, i32, 1e10f, max32);
  expect_cast(f32, i32, -1e10f, min32);
  expect_cast(f32, i32, NAN, int32_t{0});
  expect_cast(f32, i32, INFINITY, max32);
  expect_cast(f32, i32, -INFINITY, min32);
  expect_cast(f32, u8, -1.f, uint8_t{0});
  expect_cast(f32, u8, -0.9f, uint8_t{0});
  expect_cast(f32, u8, 300.f, uint8_t{255});
  expect_cast(f32, u8, 255.9f, uint8_t{255});
  expect_cast(f32, i8, 127.9f, int8_t{127});
  expect_cast(f32, i8, -129.f, int8_t{-128});
  expect_cast(i32, u8, 300, uint8_t{44});
  expect_cast(i32, u8, -1, uint8_t{255});
  expect_cast(i64, i32, int64_t{0x100000005}, int32_t{5});
  expect_cast(i64, u8, int64_t{-1}, uint8_t{255});
  expect_cast(f32, b, NAN, uint8_t{1});
  expect_cast(f32, b, -0.f, uint8_t{0});
  expect_cast(f32, b, 0.5f, uint8_t{1});
  expect_cast(i32, b, -7, uint8_t{1});
  expect_cast(b, f32, uint8_t{1}, 1.f);
  expect_cast(b, i64, uint8_t{1}, int64_t{1});
  expect_cast(i64, f64, int64_t{9007199254740993}, 9007199254740992.0);  // ties to even
  expect_cast(i32, f32, 16777217, 16777216.f);
  expect_cast(i32, f32, 16777219, 16777220.f);
  expect_cast(i64, f32, int64_t{0x7fffffffffffffff}, 9223372036854775808.f);
  // Just past a float tie: through double first it would land on the tie and round to even.
  expect_cast(i64, f32, (int64_t{1} << 60) + (int64_t{1} << 36) + 1,
              std::ldexp(1.f + 0x1p-23f, 60));
  expect_cast(f64, f32, 1e300, float(INFINITY));
  expect_cast(f64, f16, 65519.99, uint16_t{0x7bff});
  expect_cast(i32, f16, 65520, uint16_t{0x7c00});
  expect_cast(i32, f16, -65519, uint16_t{0xfbff});
  expect_cast(i64, f16, int64_t{2049}, uint16_t{0x6800});  // 2048: the tie goes to even
  expect_cast(f16, i8, uint16_t{0x7bff}, int8_t{127});
  expect_cast(f16, i32, uint16_t{0xfc00}, min32);
  expect_cast(f16, f32, uint16_t{0x3555}, 0.333251953125f);
  expect_cast(f64, i64, 9223372036854775808.0, std::numeric_limits<int64_t>::max());
  expect_cast(f64, i64, -9223372036854775808.0, std::numeric_limits<int64_t>::min());
  expect_cast(f64, i64, 9223372036854774784.0, int64_t{9223372036854774784});
}

}  // namespace
}  // namespace jetplan::kernels
