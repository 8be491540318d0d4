// The CumSum twin (kernels/cpu/cum_sum.cc), sums and products (CumProd), against the ONNX
// operator documentation's examples (hand-computed) and a naive reference (sums or products of
// prefixes, recomputed from scratch for every output, left to right) on random data; the ONNX
// node tests run it too (tests/conformance).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/half.h"
#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

CumSumParams params(DType dtype, int64_t outer, int64_t length, int64_t inner, bool exclusive,
                    bool reverse, bool product = false) {
  CumSumParams p;
  p.product = product;
  p.dtype = dtype;
  p.outer = outer;
  p.length = length;
  p.inner = inner;
  p.exclusive = exclusive;
  p.reverse = reverse;
  return p;
}

template <typename T>
std::vector<T> run(const CumSumParams& p, const std::vector<T>& x) {
  std::vector<T> y(x.size(), T(-77));  // poisoned
  cpu::cum_sum(p, x.data(), y.data());
  return y;
}

TEST(CpuCumSum, OnnxDocumentationExamples) {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  EXPECT_EQ(run(params(DType::kFloat64, 1, 5, 1, false, false), x),
            (std::vector<double>{1, 3, 6, 10, 15}));
  EXPECT_EQ(run(params(DType::kFloat64, 1, 5, 1, true, false), x),
            (std::vector<double>{0, 1, 3, 6, 10}));
  EXPECT_EQ(run(params(DType::kFloat64, 1, 5, 1, false, true), x),
            (std::vector<double>{15, 14, 12, 9, 5}));
  EXPECT_EQ(run(params(DType::kFloat64, 1, 5, 1, true, true), x),
            (std::vector<double>{14, 12, 9, 5, 0}));
  // [[1, 2, 3], [4, 5, 6]] along axis 0 (outer 1, length 2, inner 3) and axis 1 (2, 3, 1).
  const std::vector<float> m = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(run(params(DType::kFloat32, 1, 2, 3, false, false), m),
            (std::vector<float>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(run(params(DType::kFloat32, 2, 3, 1, false, false), m),
            (std::vector<float>{1, 3, 6, 4, 9, 15}));
}

TEST(CpuCumSum, IntegersWrapAndFloat16RoundsOncePerOutput) {
  const std::vector<int32_t> x = {2147483647, 1, 5};
  EXPECT_EQ(run(params(DType::kInt32, 1, 3, 1, false, false), x),
            (std::vector<int32_t>{2147483647, INT32_MIN, INT32_MIN + 5}));
  const std::vector<int64_t> y = {-3, 4, 10};
  EXPECT_EQ(run(params(DType::kInt64, 1, 3, 1, true, true), y), (std::vector<int64_t>{14, 10, 0}));
  // 2048 + 1 + 1 in float16: summed in float32 (2050, representable), not 2048 + 1 = 2048 twice.
  const std::vector<uint16_t> h = {half_from_float(2048.f), half_from_float(1.f),
                                   half_from_float(1.f)};
  const std::vector<uint16_t> got = run(params(DType::kFloat16, 1, 3, 1, false, false), h);
  EXPECT_EQ(half_to_float(got[1]), 2048.f);  // 2049 rounds to even
  EXPECT_EQ(half_to_float(got[2]), 2050.f);
}

TEST(CpuCumSum, MatchesPrefixSumsOnRandomData) {
  SEEDED_RNG(rng);
  const int64_t outer = 3, length = 17, inner = 4;
  std::vector<int64_t> x(outer * length * inner);
  for (int64_t& v : x) v = rng.integer(-1000, 1000);
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true}) {
      const std::vector<int64_t> got =
          run(params(DType::kInt64, outer, length, inner, exclusive, reverse), x);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < length; ++j)
          for (int64_t i = 0; i < inner; ++i) {
            int64_t want = 0;
            for (int64_t k = 0; k < length; ++k) {
              const bool before = reverse ? k > j : k < j;
              if (before || (!exclusive && k == j)) want += x[(o * length + k) * inner + i];
            }
            ASSERT_EQ(got[(o * length + j) * inner + i], want)
                << "o " << o << " j " << j << " i " << i << " exclusive " << exclusive
                << " reverse " << reverse;
          }
    }
}

// onnx/backend/test/case/node/cumprod.py: exclusive starts from the identity 1.
TEST(CpuCumProd, OnnxNodeTestExamples) {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  EXPECT_EQ(run(params(DType::kFloat64, 1, 5, 1, false, false, true), x),
            (std::vector<double>{1, 2, 6, 24, 120}));
  EXPECT_EQ(run(params(DType::kFloat64, 1, 5, 1, true, false, true), x),
            (std::vector<double>{1, 1, 2, 6, 24}));
  EXPECT_EQ(run(params(DType::kFloat64, 1, 5, 1, false, true, true), x),
            (std::vector<double>{120, 120, 60, 20, 5}));
  EXPECT_EQ(run(params(DType::kFloat64, 1, 5, 1, true, true, true), x),
            (std::vector<double>{120, 60, 20, 5, 1}));
  // [[1, 2, 3], [4, 5, 6]] along axis 0 and axis 1; int32 along axis 0.
  const std::vector<float> m = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(run(params(DType::kFloat32, 1, 2, 3, false, false, true), m),
            (std::vector<float>{1, 2, 3, 4, 10, 18}));
  EXPECT_EQ(run(params(DType::kFloat32, 2, 3, 1, false, false, true), m),
            (std::vector<float>{1, 2, 6, 4, 20, 120}));
  EXPECT_EQ(run(params(DType::kInt32, 1, 2, 3, false, false, true),
                std::vector<int32_t>{1, 2, 3, 4, 5, 6}),
            (std::vector<int32_t>{1, 2, 3, 4, 10, 18}));
}

TEST(CpuCumProd, IntegersWrapAndFloat16RoundsOncePerOutput) {
  // 65536 * 65536 = 2^32 wraps to 0 in int32; 3 * 2^31 wraps to INT32_MIN.
  EXPECT_EQ(run(params(DType::kInt32, 1, 3, 1, false, false, true),
                std::vector<int32_t>{65536, 65536, 7}),
            (std::vector<int32_t>{65536, 0, 0}));
  EXPECT_EQ(run(params(DType::kInt32, 1, 3, 1, false, false, true),
                std::vector<int32_t>{-2147483647 - 1, 3, -1}),
            (std::vector<int32_t>{INT32_MIN, INT32_MIN, INT32_MIN}));
  EXPECT_EQ(run(params(DType::kInt64, 1, 3, 1, true, true, true), std::vector<int64_t>{-3, 4, 10}),
            (std::vector<int64_t>{40, 10, 1}));
  EXPECT_EQ(run(params(DType::kInt64, 1, 2, 1, false, false, true),
                std::vector<int64_t>{int64_t{1} << 62, 4}),
            (std::vector<int64_t>{int64_t{1} << 62, 0}));
  // float16 multiplies in float32 and rounds each output once: 256 * 512 = 131072 overflows
  // float16 (inf) as an output, but the running product stays finite, so * 2^-9 gives 256
  // again (a float16 accumulator would stay inf).
  const std::vector<uint16_t> h = {half_from_float(256.f), half_from_float(512.f),
                                   half_from_float(1.f / 512.f)};
  const std::vector<uint16_t> got = run(params(DType::kFloat16, 1, 3, 1, false, false, true), h);
  EXPECT_EQ(half_to_float(got[0]), 256.f);
  EXPECT_TRUE(std::isinf(half_to_float(got[1])));
  EXPECT_EQ(half_to_float(got[2]), 256.f);
}

TEST(CpuCumProd, MatchesPrefixProductsOnRandomData) {
  SEEDED_RNG(rng);
  const int64_t outer = 3, length = 17, inner = 4;
  std::vector<int64_t> xi(outer * length * inner);
  std::vector<double> xf(xi.size());
  for (size_t k = 0; k < xi.size(); ++k) {
    xi[k] = 2 * rng.integer(-1000000, 1000000) + 1;  // odd: the wrapped products never reach 0
    xf[k] = double(rng.uniform(0.5f, 2.f)) / 3.0 * (rng.coin() ? 1 : -1);
  }
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true}) {
      const std::vector<int64_t> got =
          run(params(DType::kInt64, outer, length, inner, exclusive, reverse, true), xi);
      const std::vector<double> gotf =
          run(params(DType::kFloat64, outer, length, inner, exclusive, reverse, true), xf);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < length; ++j)
          for (int64_t i = 0; i < inner; ++i) {
            uint64_t want = 1;
            double wantf = 1;
            for (int64_t n = 0; n < length; ++n) {  // in the lane's order: from the end if reverse
              const int64_t k = reverse ? length - 1 - n : n;
              const bool before = reverse ? k > j : k < j;
              if (!before && !(!exclusive && k == j)) continue;
              want *= static_cast<uint64_t>(xi[(o * length + k) * inner + i]);
              wantf *= xf[(o * length + k) * inner + i];
            }
            const int64_t at = (o * length + j) * inner + i;
            ASSERT_EQ(got[at], static_cast<int64_t>(want))
                << "o " << o << " j " << j << " i " << i << " exclusive " << exclusive
                << " reverse " << reverse;
            ASSERT_EQ(gotf[at], wantf) << "bit for bit, left to right: o " << o << " j " << j
                                       << " i " << i;
          }
    }
}

}  // namespace
}  // namespace jetplan::kernels
