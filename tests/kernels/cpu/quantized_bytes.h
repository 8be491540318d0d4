// The checks of the quantized kernels' byte outputs: the integers a correct kernel may write per
// element (both neighbours of a real value within rounding of a tie), run into poisoned, guarded
// bytes; and random quantized tensors with their parameters.
#pragma once

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

namespace jetplan::kernels::test_util {

inline int32_t qmin(DType t) { return t == DType::kInt8 ? -128 : 0; }
inline int32_t qmax(DType t) { return t == DType::kInt8 ? 127 : 255; }
inline int32_t decode(DType t, uint8_t byte) { return t == DType::kInt8 ? int8_t(byte) : byte; }
inline uint8_t encode(int32_t v) { return uint8_t(v & 0xff); }

// The integers a correct kernel may return, per element: [lo, hi].
struct Allowed {
  std::vector<int32_t> lo, hi;
};

// The quantized value of real v (in units of the scale): round half to even by the FPU, add the
// zero point, saturate. Where v is within `rel` of a tie, both neighbours are allowed.
inline void allow(Allowed& a, double v, double rel, int32_t zp, DType t) {
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
inline int64_t check_bytes(int64_t n, DType t, const Allowed& want, Kernel kernel) {
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

inline Allowed exactly(DType t, std::initializer_list<int32_t> v) {
  Allowed a{std::vector<int32_t>(v), std::vector<int32_t>(v)};
  for (int32_t e : v) EXPECT_TRUE(e >= qmin(t) && e <= qmax(t));
  return a;
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

inline QTensor random_qtensor(SeededRng& rng, DType t, bool per_channel, bool has_zp) {
  QTensor q{{t, 1 + rng.below(3), 1 + rng.below(4), 1 + rng.below(6), per_channel, has_zp}, {}, {}};
  for (int64_t c = 0; c < (per_channel ? q.p.channels : 1); ++c) {
    q.scale.push_back(rng.uniform(0.008f, 0.02f));
    if (has_zp) q.zp.push_back(rng.bytes(1)[0]);
  }
  return q;
}

// The quantized types, for tests that run both.
constexpr DType kQTypes[] = {DType::kInt8, DType::kUInt8};

// ONNX node test data of the quantized ops: a tensor's quantized type, bytes, floats, and its
// bytes as the exact Allowed values.
inline DType qtype_of(const OnnxTensor& t) {
  return t.dtype == kOnnxInt8 ? DType::kInt8 : DType::kUInt8;
}
inline const uint8_t* bytes_of(const OnnxTensor& t) {
  return reinterpret_cast<const uint8_t*>(t.raw.data());
}
inline std::vector<float> floats_of(const OnnxTensor& t) { return values<float>(t, kOnnxFloat); }
inline Allowed expected_bytes(const OnnxTensor& t) {
  Allowed a;
  for (int64_t i = 0; i < element_count(t); ++i)
    a.lo.push_back(decode(qtype_of(t), bytes_of(t)[i]));
  a.hi = a.lo;
  return a;
}

// Random quantized types and scales of the QLinear tests.
inline DType random_qtype(SeededRng& rng) { return kQTypes[rng.below(2)]; }

inline std::vector<float> scales(SeededRng& rng, int64_t n) {
  std::vector<float> s;
  for (int64_t i = 0; i < n; ++i) s.push_back(rng.uniform(0.01f, 0.05f));
  return s;
}

// The output scale that puts the largest real value at 150 steps: some outputs saturate.
inline float output_scale(const std::vector<double>& real) {
  double m = 0;
  for (double v : real) m = std::max(m, std::fabs(v));
  return m > 0 ? float(m / 150) : 1.f;
}

}  // namespace jetplan::kernels::test_util
