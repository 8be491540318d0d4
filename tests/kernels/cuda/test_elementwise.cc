// CUDA Elementwise, Where, Broadcast and Pad kernels (kernels/cuda/elementwise.cu, where.cu, broadcast.cu, pad.cu) against their
// CPU twins (kernels/cpu/elementwise.cc, where.cc, broadcast.cc, pad.cc) on fresh random inputs
// with broadcasting, odd shapes, every dtype and element size, outputs poisoned and guards
// checked. Tolerance: none, every output is compared bit for bit (integer arithmetic, exact
// comparisons, fmod and float64 + - * / exact in IEEE arithmetic, and the rest moves bytes),
// but float64 Pow (2 ulp, CUDA's pow) and NaN payloads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace gpu_test;
using namespace test_util;

constexpr uint16_t kElementwise = static_cast<uint16_t>(OpFamilyId::kElementwise);

// Random values of dtype `dt`: small integers (many ties, zeros and -1 divisors) and the edges.
Bytes values(test_util::SeededRng& rng, DType dt, int64_t n) {
  Bytes out(static_cast<size_t>(n * dtype_bytes(dt)));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = rng.integer(-9, 9);
    unsigned char* dst = out.data() + i * dtype_bytes(dt);
    switch (dt) {
      case DType::kFloat32: { float f = static_cast<float>(v) * 0.75f; std::memcpy(dst, &f, 4); break; }
      case DType::kFloat64: { double f = static_cast<double>(v) * 0.75; std::memcpy(dst, &f, 8); break; }
      case DType::kFloat16: { uint16_t h = half_from_float(static_cast<float>(v) * 0.75f); std::memcpy(dst, &h, 2); break; }
      case DType::kInt8: { int8_t t = static_cast<int8_t>(i % 17 == 3 ? -128 : v); std::memcpy(dst, &t, 1); break; }
      case DType::kUInt8: { uint8_t t = static_cast<uint8_t>(v + 9); std::memcpy(dst, &t, 1); break; }
      case DType::kInt32: { int32_t t = static_cast<int32_t>(i % 17 == 3 ? INT32_MIN : (i % 19 == 4 ? 2000000011 : v)); std::memcpy(dst, &t, 4); break; }
      case DType::kInt64: { int64_t t = i % 17 == 3 ? INT64_MIN : (i % 19 == 4 ? int64_t{1} << 40 : v); std::memcpy(dst, &t, 8); break; }
      case DType::kBool: { uint8_t t = static_cast<uint8_t>(v < 0 ? 0 : v * 13); std::memcpy(dst, &t, 1); break; }
      case DType::kInt16: { int16_t t = static_cast<int16_t>(i % 17 == 3 ? INT16_MIN : (i % 19 == 4 ? 30011 : v)); std::memcpy(dst, &t, 2); break; }
      case DType::kUInt16: { uint16_t t = static_cast<uint16_t>(i % 19 == 4 ? 65535 : v + 9); std::memcpy(dst, &t, 2); break; }
      case DType::kUInt32: { uint32_t t = static_cast<uint32_t>(i % 19 == 4 ? 4000000007u : v + 9); std::memcpy(dst, &t, 4); break; }
      case DType::kUInt64: { uint64_t t = i % 19 == 4 ? (uint64_t{1} << 63) + 5 : static_cast<uint64_t>(v + 9); std::memcpy(dst, &t, 8); break; }
      case DType::kBFloat16: ADD_FAILURE() << "no Elementwise op takes bfloat16"; break;
    }
  }
  return out;
}

// Float fmod by 0 is a NaN whose payload is the platform's: where both are NaN, the GPU's
// bytes are made the twin's (every other element must match bit for bit).
void same_nans(DType dt, Bytes& got, const Bytes& want) {
  const size_t eb = static_cast<size_t>(dtype_bytes(dt));
  for (size_t i = 0; i + eb <= want.size(); i += eb) {
    bool g, w;
    if (eb == 2) {
      uint16_t x, y;
      std::memcpy(&x, &got[i], 2), std::memcpy(&y, &want[i], 2);
      g = std::isnan(half_to_float(x)), w = std::isnan(half_to_float(y));
    } else if (eb == 4) {
      float x, y;
      std::memcpy(&x, &got[i], 4), std::memcpy(&y, &want[i], 4);
      g = std::isnan(x), w = std::isnan(y);
    } else {
      double x, y;
      std::memcpy(&x, &got[i], 8), std::memcpy(&y, &want[i], 8);
      g = std::isnan(x), w = std::isnan(y);
    }
    if (g && w) std::memcpy(&got[i], &want[i], eb);
  }
}

// Float64 Pow is CUDA's pow on the GPU, within 2 ulp of glibc's std::pow (CUDA's documented
// bound for pow): a GPU double that close to the twin's is made the twin's; every other one
// must match bit for bit (NaN positions included, by same_nans).
void within_pow_ulps(Bytes* got, const Bytes& want) {
  for (size_t i = 0; i + 8 <= want.size(); i += 8) {
    int64_t g, w;
    std::memcpy(&g, &(*got)[i], 8), std::memcpy(&w, &want[i], 8);
    if ((g < 0) != (w < 0)) continue;  // opposite signs: never close
    const int64_t ulps = g > w ? g - w : w - g;
    if (ulps <= 2) std::memcpy(&(*got)[i], &want[i], 8);
  }
}

struct Pair { Shape a, b; };
const Pair kPairs[] = {{{2, 3, 5, 7}, {2, 3, 5, 7}}, {{8, 1, 5}, {1, 6, 1}}, {{1}, {33}},
                       {{3, 1, 7}, {7}}, {{1, 129, 3}, {1, 1, 1}}};

TEST(GpuElementwise, EveryOpAndDTypeMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const DType dtypes[] = {DType::kFloat32, DType::kFloat16, DType::kInt8,   DType::kUInt8,
                          DType::kInt32,   DType::kInt64,   DType::kBool,   DType::kFloat64,
                          DType::kInt16,   DType::kUInt16,  DType::kUInt32, DType::kUInt64};
  int checked = 0;
  for (int o = 0; o < kElementwiseOpCount; ++o) {
    const auto op = static_cast<ElementwiseOp>(o);
    for (DType dt : dtypes) {
      if (!elementwise_supported(op, dt) && !(dt == DType::kFloat16 && elementwise_is_comparison(op)))
        continue;
      for (const Pair& c : kPairs) {
        const Shape out = test_util::broadcast_shapes({c.a, c.b});
        ElementwiseParams p;
        p.op = op;
        p.dtype = dt;
        p.rank = static_cast<int32_t>(out.size());
        for (size_t d = 0; d < out.size(); ++d) p.out_dims[d] = out[d];
        test_util::broadcast_strides(c.a, out, p.a_strides);
        test_util::broadcast_strides(c.b, out, p.b_strides);
        const Bytes a = values(rng, dt, test_util::volume(c.a));
        const Bytes b = values(rng, dt, test_util::volume(c.b));
        const int64_t n = test_util::volume(out);
        Bytes want(static_cast<size_t>(n * dtype_bytes(elementwise_out_dtype(op, dt))));
        cpu::elementwise(p, a.data(), b.data(), want.data());
        Bytes got = gpu_test::run_bytes_step(kElementwise, dt, p, {a, b}, want.size());
        const bool floating = dt == DType::kFloat16 || dt == DType::kFloat32 || dt == DType::kFloat64;
        if (floating && !elementwise_is_comparison(op)) same_nans(dt, got, want);
        if (op == ElementwiseOp::kPow) within_pow_ulps(&got, want);
        EXPECT_EQ(got, want) << "op " << o << " dtype " << int(dt) << " "
                             << test_util::shape_str(c.a) << " x " << test_util::shape_str(c.b);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace jetplan::kernels
