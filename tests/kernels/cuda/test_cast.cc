// CUDA Cast (kernels/cuda/cast.cu) against its CPU twin (kernels/cpu/cast.cc), Float32 <->
// Float16, integers/Bool to either float, floats, integers and Bool to integers, and every other
// pair of dtypes (the generic kernel). Tolerance: none, bit-exact (both round to nearest even; half to float is exact),
// except that a NaN need only stay a NaN. Outputs poisoned, guards checked; odd counts and
// pointers one element off the vector alignment take the scalar path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/bfloat16.h"
#include "kernels/cpu/half.h"
#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kCast = static_cast<uint16_t>(OpFamilyId::kCast);

// Values that probe rounding: random over the half range, ties, overflow, subnormals, signs.
std::vector<float> probe_floats(test_util::SeededRng& rng, int64_t count) {
  std::vector<float> x = rng.uniform(count, -70000.f, 70000.f);
  const float special[] = {0.f, -0.f, 65504.f, 65520.f, -65520.f, 1e-7f, -3e-8f, 6.1e-5f,
                           1.f + 1.f / 2048.f, 1.f + 3.f / 2048.f, INFINITY, -INFINITY,
                           std::numeric_limits<float>::quiet_NaN()};
  for (int64_t i = 0; i < count; ++i) {
    if (i % 3 == 0) x[size_t(i)] = rng.uniform(-4.f, 4.f);
    if (i % 7 == 0) x[size_t(i)] = special[size_t(i / 7) % std::size(special)];
  }
  return x;
}

// Casts x (of X) from `from` to `to` (y of Y) on the CPU twin into *want, and on the GPU, with x
// and y `offset` elements past the start of their buffers (1: off the 16-byte vector alignment),
// into *got from y's buffer start: count + offset elements, of which the first `offset` must stay
// poison. Checks the guard after y.
template <typename X, typename Y>
void cast_at_offset(DType from, DType to, const std::vector<X>& x, int64_t offset,
                    std::vector<Y>* want, std::vector<Y>* got) {
  const int64_t count = static_cast<int64_t>(x.size());
  CastParams p;
  p.from = from;
  p.to = to;
  p.count = count;
  want->assign(size_t(count), Y{0});
  cpu::cast(p, x.data(), want->data());
  DeviceBuffer dx((count + offset) * sizeof(X)), dy((count + offset) * sizeof(Y));
  std::vector<X> xo(count + offset, X{0});
  std::copy(x.begin(), x.end(), xo.begin() + offset);
  dx.upload(xo.data(), xo.size() * sizeof(X));
  if constexpr (sizeof(Y) == 2) dy.poison16(gpu_test::kHalfPoison);
  else dy.poison32(gpu_test::kFloatPoison);
  cuda::StepPointers ptrs{};
  ptrs.in[0] = static_cast<X*>(dx.get()) + offset;
  ptrs.out[0] = static_cast<Y*>(dy.get()) + offset;
  ASSERT_EQ(gpu_test::select_and_launch(kCast, from, ptrs, p), "");
  *got = dy.download<Y>(count + offset);
  EXPECT_TRUE(dy.guard_intact()) << "count " << count;
}

TEST(GpuCast, Float32ToFloat16MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (int64_t count : {1, 3, 4, 1023, 100003}) {
    for (int64_t offset : {0, 1}) {  // 1: x and y off the 16-byte vector alignment
      const std::vector<float> x = probe_floats(rng, count);
      std::vector<uint16_t> want, got;
      ASSERT_NO_FATAL_FAILURE(
          cast_at_offset(DType::kFloat32, DType::kFloat16, x, offset, &want, &got));
      for (int64_t i = 0; i < count; ++i) {
        const uint16_t g = got[size_t(i + offset)], w = want[size_t(i)];
        const bool nan = (w & 0x7c00) == 0x7c00 && (w & 0x3ff) != 0;
        const bool ok = nan ? ((g & 0x7c00) == 0x7c00 && (g & 0x3ff) != 0) : g == w;
        ASSERT_TRUE(ok) << "count " << count << " offset " << offset << " element " << i << ": "
                        << x[size_t(i)] << " -> 0x" << std::hex << g << ", want 0x" << w;
      }
      if (offset == 1) {
        EXPECT_EQ(got[0], gpu_test::kHalfPoison) << "wrote before y";
      }
    }
  }
}

TEST(GpuCast, Float16ToFloat32MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (int64_t count : {1, 5, 4096, 65539}) {
    for (int64_t offset : {0, 1}) {
      std::vector<uint16_t> x(count);
      for (int64_t i = 0; i < count; ++i) {
        uint16_t h = static_cast<uint16_t>(rng.integer(0, 0xffff));
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0) h = 0x3c00;  // NaNs: see Float32ToFloat16
        x[size_t(i)] = h;
      }
      std::vector<uint32_t> want, got;
      ASSERT_NO_FATAL_FAILURE(
          cast_at_offset(DType::kFloat16, DType::kFloat32, x, offset, &want, &got));
      for (int64_t i = 0; i < count; ++i)
        ASSERT_EQ(got[size_t(i + offset)], want[size_t(i)])
            << "count " << count << " offset " << offset << " element " << i;
      if (offset == 1) {
        EXPECT_EQ(got[0], gpu_test::kFloatPoison) << "wrote before y";
      }
    }
  }
}

// Integers and Bool to Float16 and Float32, integers to Bool: values that probe rounding (odd integers past 2^11
// and 2^24, past the half range, both signs, the type's extremes; Bool bytes other than 0 and 1
// are true). Bit-exact: both round once to nearest even.
template <typename T>
std::vector<T> probe_integers(test_util::SeededRng& rng, int64_t count) {
  const double lo = double(std::numeric_limits<T>::min()), hi = double(std::numeric_limits<T>::max());
  const double special[] = {0, 1, -1, 2049, -2051, 65504, 65519, 65520, -70001, 16777217,
                            -33554435, 1099511627777.0, lo, hi};
  std::vector<T> x(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    double v = rng.uniform(-3000.f, 3000.f);
    if (i % 5 == 0) v = special[size_t(i / 5) % std::size(special)];
    x[size_t(i)] = static_cast<T>(std::min(hi, std::max(lo, std::trunc(v))));
  }
  return x;
}

template <typename T>
void check_int_cast(DType from, DType to, test_util::SeededRng& rng) {
  if (from == DType::kBool && to == DType::kBool) return;  // no cast
  for (int64_t count : {1, 1001, 65539}) {
    std::vector<T> x = probe_integers<T>(rng, count);
    if (from == DType::kBool)
      for (T& v : x) v = static_cast<T>(uint8_t(v) % 3);  // 0, 1 and 2 (true)
    CastParams p;
    p.from = from;
    p.to = to;
    p.count = count;
    const auto out_bytes = static_cast<size_t>(dtype_bytes(to));
    std::vector<uint8_t> want(size_t(count) * out_bytes);
    cpu::cast(p, x.data(), want.data());
    DeviceBuffer dx(size_t(count) * sizeof(T)), dy(size_t(count) * out_bytes);
    dx.upload(x.data(), x.size() * sizeof(T));
    dy.poison32(gpu_test::kFloatPoison);
    cuda::StepPointers ptrs = gpu_test::step_pointers({&dx}, dy);
    ASSERT_EQ(gpu_test::select_and_launch(kCast, from, ptrs, p), "")
        << int(from) << " -> " << int(to);
    const std::vector<uint8_t> got = dy.download_all();
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(std::memcmp(got.data() + i * out_bytes, want.data() + i * out_bytes, out_bytes), 0)
          << int(from) << " -> " << int(to) << " element " << i << " value " << double(x[size_t(i)]);
    EXPECT_TRUE(dy.guard_intact()) << int(from) << " -> " << int(to) << " count " << count;
  }
}

TEST(GpuCast, IntegersAndBoolToFloatMatchCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (DType to : {DType::kFloat16, DType::kFloat32, DType::kBool}) {
    check_int_cast<int64_t>(DType::kInt64, to, rng);
    check_int_cast<int32_t>(DType::kInt32, to, rng);
    check_int_cast<int8_t>(DType::kInt8, to, rng);
    check_int_cast<uint8_t>(DType::kUInt8, to, rng);
    check_int_cast<uint8_t>(DType::kBool, to, rng);
  }
}

// Integers and Bool to Int64, Int32, Int8 and UInt8: the low bits (wrapping past the narrower
// type's range, the probes hold its extremes and odd values past 2^8, 2^16 and 2^32); Bool is 0
// or 1. Bit-exact.
TEST(GpuCast, IntegersAndBoolToIntegersMatchCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (DType to : {DType::kInt64, DType::kInt32, DType::kInt8, DType::kUInt8}) {
    if (to != DType::kInt64) check_int_cast<int64_t>(DType::kInt64, to, rng);
    if (to != DType::kInt32) check_int_cast<int32_t>(DType::kInt32, to, rng);
    if (to != DType::kInt8) check_int_cast<int8_t>(DType::kInt8, to, rng);
    if (to != DType::kUInt8) check_int_cast<uint8_t>(DType::kUInt8, to, rng);
    check_int_cast<uint8_t>(DType::kBool, to, rng);
  }
}

// Float16 and Float32 to Int64, Int32, Int8 and UInt8: truncated toward zero and saturated at
// the type's range, NaN 0 (the twin's rules). The probes: fractions of both signs, values past
// every type's range, infinities, NaN, and float16's rounding of the float32 probes. Bit-exact.
TEST(GpuCast, FloatsToIntegersMatchCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (DType from : {DType::kFloat16, DType::kFloat32}) {
    for (DType to : {DType::kInt64, DType::kInt32, DType::kInt8, DType::kUInt8}) {
      for (int64_t count : {1, 1001, 65539}) {
        std::vector<float> xf = probe_floats(rng, count);
        const float wide[] = {-0.99f, 0.99f, -1.5f, 127.9f, 128.f, -128.9f, -129.f, 255.5f,
                              256.f, 3e9f, -3e9f, 2147483520.f, 9.3e18f, -9.3e18f, 1e30f};
        for (int64_t i = 1; i < count; i += 5) xf[size_t(i)] = wide[size_t(i / 5) % std::size(wide)];
        CastParams p;
        p.from = from;
        p.to = to;
        p.count = count;
        const std::vector<uint16_t> xh = gpu_test::to_half(xf);
        const void* host = from == DType::kFloat16 ? static_cast<const void*>(xh.data())
                                                   : static_cast<const void*>(xf.data());
        const size_t in_bytes = size_t(count) * size_t(dtype_bytes(from));
        const size_t out_bytes = size_t(count) * size_t(dtype_bytes(to));
        std::vector<uint8_t> want(out_bytes);
        cpu::cast(p, host, want.data());
        DeviceBuffer dx(in_bytes), dy(out_bytes);
        dx.upload(host, in_bytes);
        dy.poison32(gpu_test::kFloatPoison);
        cuda::StepPointers ptrs = gpu_test::step_pointers({&dx}, dy);
        ASSERT_EQ(gpu_test::select_and_launch(kCast, from, ptrs, p), "");
        const std::vector<uint8_t> got = dy.download_all();
        const size_t elem = size_t(dtype_bytes(to));
        for (int64_t i = 0; i < count; ++i)
          ASSERT_EQ(std::memcmp(got.data() + size_t(i) * elem, want.data() + size_t(i) * elem, elem), 0)
              << int(from) << " -> " << int(to) << " element " << i << " value " << xf[size_t(i)];
        EXPECT_TRUE(dy.guard_intact()) << int(from) << " -> " << int(to) << " count " << count;
      }
    }
  }
}

// Float16 and Float32 to Bool: nonzero (NaN, infinities, subnormals) is 1, +-0 is 0.
TEST(GpuCast, FloatsToBoolMatchCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (DType from : {DType::kFloat16, DType::kFloat32}) {
    for (int64_t count : {1, 1001, 65539}) {
      std::vector<float> xf = probe_floats(rng, count);
      for (int64_t i = 0; i < count; i += 4) xf[size_t(i)] = (i / 4) % 2 ? 0.f : -0.f;
      CastParams p;
      p.from = from;
      p.to = DType::kBool;
      p.count = count;
      const std::vector<uint16_t> xh = gpu_test::to_half(xf);
      const void* host = from == DType::kFloat16 ? static_cast<const void*>(xh.data())
                                                 : static_cast<const void*>(xf.data());
      const size_t in_bytes = size_t(count) * (from == DType::kFloat16 ? 2 : 4);
      std::vector<uint8_t> want(static_cast<size_t>(count));
      cpu::cast(p, host, want.data());
      DeviceBuffer dx(in_bytes), dy(static_cast<size_t>(count));
      dx.upload(host, in_bytes);
      dy.poison32(gpu_test::kFloatPoison);
      cuda::StepPointers ptrs = gpu_test::step_pointers({&dx}, dy);
      ASSERT_EQ(gpu_test::select_and_launch(kCast, from, ptrs, p), "");
      const std::vector<uint8_t> got = dy.download_all();
      for (int64_t i = 0; i < count; ++i)
        ASSERT_EQ(got[size_t(i)], want[size_t(i)]) << int(from) << " element " << i;
      EXPECT_TRUE(dy.guard_intact()) << int(from) << " count " << count;
    }
  }
}

// Pairs the typed kernels leave out (Float64, BFloat16, Int16, UInt16, UInt32, UInt64 at either
// end) go to the generic kernel: selection takes every pair.
TEST(GpuCast, PairsWithoutATypedKernelSelectTheGenericOne) {
  CastParams p;
  p.from = DType::kFloat64;
  p.to = DType::kInt64;
  p.count = 5;
  cuda::StepDesc step = gpu_test::step_of(kCast, &p, DType::kFloat64);
  cuda::TargetInfo t = gpu_test::target_with(8);
  cuda::LaunchChoice choice;
  std::string why;
  ASSERT_TRUE(cuda::select_kernel(step, t, &choice, &why)) << why;
  EXPECT_STREQ(choice.variant->name, "jp_cast_any");
}

// `count` elements of dtype t: half random bit patterns (NaNs, infinities, subnormals and every
// integer), half values in +-70000 (fractions, ties of the narrower floats, small integers).
std::vector<uint8_t> probe_bytes(test_util::SeededRng& rng, DType t, int64_t count) {
  const size_t eb = size_t(dtype_bytes(t));
  std::vector<uint8_t> out(size_t(count) * eb);
  for (int64_t i = 0; i < count; ++i) {
    uint8_t* dst = out.data() + size_t(i) * eb;
    const uint64_t bits = rng.bits64();
    const double v = i % 3 == 0 ? std::trunc(double(rng.uniform(-300.f, 300.f)))
                                : double(rng.uniform(-70000.f, 70000.f));
    if (i % 2 == 1) {
      std::memcpy(dst, &bits, eb);
      if (t == DType::kBool) *dst = static_cast<uint8_t>(bits % 3);  // 2 is true too
      continue;
    }
    switch (t) {
      case DType::kFloat32: { const float f = float(v); std::memcpy(dst, &f, 4); break; }
      case DType::kFloat64: std::memcpy(dst, &v, 8); break;
      case DType::kFloat16: { const uint16_t h = half_from_double(v); std::memcpy(dst, &h, 2); break; }
      case DType::kBFloat16: { const uint16_t h = bfloat16_from_float(float(v)); std::memcpy(dst, &h, 2); break; }
      case DType::kBool: *dst = v > 0 ? 1 : 0; break;
      default: {  // an integer: v truncated, as its type's bits
        const int64_t n = static_cast<int64_t>(std::trunc(v));
        std::memcpy(dst, &n, eb);  // little endian: the low bytes
      }
    }
  }
  return out;
}

bool is_nan_at(DType t, const uint8_t* p) {
  if (t == DType::kFloat32) { float f; std::memcpy(&f, p, 4); return std::isnan(f); }
  if (t == DType::kFloat64) { double f; std::memcpy(&f, p, 8); return std::isnan(f); }
  uint16_t h;
  std::memcpy(&h, p, 2);
  if (t == DType::kFloat16) return (h & 0x7fffu) > 0x7c00u;
  if (t == DType::kBFloat16) return (h & 0x7fffu) > 0x7f80u;
  return false;
}

// Every pair of the 13 dtypes, whichever kernel selection takes (the generic one for most):
// bit for bit with the twin, but that a NaN need only stay a NaN. Odd counts, outputs poisoned,
// guards checked.
TEST(GpuCast, EveryPairOfDtypesMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  int pairs = 0;
  for (int f = 0; f < kDTypeCount; ++f) {
    for (int g = 0; g < kDTypeCount; ++g) {
      const auto from = static_cast<DType>(f), to = static_cast<DType>(g);
      if (from == to) continue;
      for (int64_t count : {1, 4099}) {
        const std::vector<uint8_t> x = probe_bytes(rng, from, count);
        CastParams p;
        p.from = from;
        p.to = to;
        p.count = count;
        const size_t ob = size_t(dtype_bytes(to));
        std::vector<uint8_t> want(size_t(count) * ob);
        cpu::cast(p, x.data(), want.data());
        DeviceBuffer dx(x.size()), dy(want.size());
        dx.upload(x.data(), x.size());
        dy.poison32(gpu_test::kFloatPoison);
        cuda::StepPointers ptrs = gpu_test::step_pointers({&dx}, dy);
        ASSERT_EQ(gpu_test::select_and_launch(kCast, from, ptrs, p), "") << f << " -> " << g;
        const std::vector<uint8_t> got = dy.download_all();
        for (int64_t i = 0; i < count; ++i) {
          const uint8_t* a = got.data() + size_t(i) * ob;
          const uint8_t* b = want.data() + size_t(i) * ob;
          if (is_nan_at(to, b) && is_nan_at(to, a)) continue;
          ASSERT_EQ(std::memcmp(a, b, ob), 0) << f << " -> " << g << " element " << i;
        }
        EXPECT_TRUE(dy.guard_intact()) << f << " -> " << g << " count " << count;
      }
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, kDTypeCount * (kDTypeCount - 1));
}

}  // namespace
}  // namespace jetplan::kernels
