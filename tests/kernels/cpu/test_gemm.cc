// cpu::gemm against matrix products of logical matrices materialized from their stored form
// (transposed, batch-strided, broadcast, every layout of C), and hand-computed cases.
// Every output is poisoned before each call and has a guard zone after its end; every
// comparison fails on NaN; inputs come from a seeded std::mt19937 whose seed is printed with any
// failure (JETPLAN_TEST_SEED=<n> replays it). See tests/kernels/kernel_test_util.h.

#include <gtest/gtest.h>

#include <algorithm>
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

// ------------------------------------------------------------------------------------- gemm

enum class BatchMode { kSingle, kStrided, kBroadcastA, kBroadcastB };
enum class CMode { kNone, kScalar, kRow, kColumn, kSharedMatrix, kColumnMajorPerBatch };
using GemmCase = std::tuple<bool /*trans_a*/, bool /*trans_b*/, BatchMode, CMode, bool /*act*/>;

// The other orientation of a rows x cols row-major matrix.
std::vector<double> transpose(const float* m, int64_t rows, int64_t cols) {
  std::vector<double> t(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[size_t(c * rows + r)] = m[r * cols + c];
  return t;
}

std::vector<double> as_is(const float* m, int64_t rows, int64_t cols) {
  return std::vector<double>(m, m + rows * cols);
}

class GemmMatrix : public testing::TestWithParam<GemmCase> {};

TEST_P(GemmMatrix, MatchesLogicalMatrices) {
  SEEDED_RNG(rng);
  const auto [trans_a, trans_b, batch_mode, c_mode, with_act] = GetParam();
  const int64_t M = 5, N = 7, K = 9;
  const int64_t batch = batch_mode == BatchMode::kSingle ? 1 : 3;
  const int64_t gap = 3;  // strided batches leave room between matrices

  GemmParams p = gemm_shape(batch, M, N, K, trans_a, trans_b);
  p.alpha = 1.25f;
  p.beta = -0.5f;
  p.a_batch_stride = batch_mode == BatchMode::kBroadcastA ? 0 : M * K + gap;
  p.b_batch_stride = batch_mode == BatchMode::kBroadcastB ? 0 : K * N + gap;
  if (with_act) p.act = {ActivationKind::kLeakyRelu, 0.2f, 0.f};

  const int64_t a_mats = p.a_batch_stride == 0 ? 1 : batch;
  const int64_t b_mats = p.b_batch_stride == 0 ? 1 : batch;
  const std::vector<float> a = rng.uniform((a_mats - 1) * p.a_batch_stride + M * K, -1.f, 1.f);
  const std::vector<float> b = rng.uniform((b_mats - 1) * p.b_batch_stride + K * N, -1.f, 1.f);

  // C in its stored form, and C expanded to [batch, M, N] by the meaning of each mode.
  std::vector<float> c;
  std::vector<double> c_full(size_t(batch * M * N), 0.0);
  p.has_c = c_mode != CMode::kNone;
  switch (c_mode) {
    case CMode::kNone:
      break;
    case CMode::kScalar:
      c = rng.uniform(1, -1.f, 1.f);
      std::fill(c_full.begin(), c_full.end(), c[0]);
      break;
    case CMode::kRow:  // [N]
      c = rng.uniform(N, -1.f, 1.f);
      p.c_stride_n = 1;
      for (size_t i = 0; i < c_full.size(); ++i) c_full[i] = c[i % size_t(N)];
      break;
    case CMode::kColumn:  // [M, 1]
      c = rng.uniform(M, -1.f, 1.f);
      p.c_stride_m = 1;
      for (size_t i = 0; i < c_full.size(); ++i) c_full[i] = c[(i / size_t(N)) % size_t(M)];
      break;
    case CMode::kSharedMatrix: {  // one [M, N] matrix with padded rows, for every batch
      c = rng.uniform(M * (N + 2), -1.f, 1.f);
      p.c_stride_m = N + 2;
      p.c_stride_n = 1;
      for (int64_t bi = 0; bi < batch; ++bi)
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n)
            c_full[size_t((bi * M + m) * N + n)] = c[size_t(m * (N + 2) + n)];
      break;
    }
    case CMode::kColumnMajorPerBatch: {  // [batch] matrices stored [N, M]
      c = rng.uniform(batch * N * M, -1.f, 1.f);
      p.c_stride_batch = N * M;
      p.c_stride_m = 1;
      p.c_stride_n = M;
      for (int64_t bi = 0; bi < batch; ++bi) {
        const std::vector<double> t = transpose(c.data() + bi * N * M, N, M);
        std::copy(t.begin(), t.end(), c_full.begin() + bi * M * N);
      }
      break;
    }
  }

  std::vector<double> want;
  for (int64_t bi = 0; bi < batch; ++bi) {
    const float* sa = a.data() + bi * p.a_batch_stride;
    const float* sb = b.data() + bi * p.b_batch_stride;
    const std::vector<double> la = trans_a ? transpose(sa, K, M) : as_is(sa, M, K);  // [M, K]
    const std::vector<double> lb = trans_b ? transpose(sb, N, K) : as_is(sb, K, N);  // [K, N]
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double dot = 0;
        for (int64_t k = 0; k < K; ++k) dot += la[size_t(m * K + k)] * lb[size_t(k * N + n)];
        double v = double{p.alpha} * dot;
        if (p.has_c) v += double{p.beta} * c_full[size_t((bi * M + m) * N + n)];
        want.push_back(activation_ref(p.act, v));
      }
  }

  Output y(batch * M * N);
  cpu::gemm(p, a.data(), b.data(), p.has_c ? c.data() : nullptr, y.data());
  EXPECT_TRUE(all_close(y, want, {1e-5, 1e-6}));
}

std::string gemm_case_name(const testing::TestParamInfo<GemmCase>& info) {
  const auto [trans_a, trans_b, batch_mode, c_mode, with_act] = info.param;
  static const char* kBatch[] = {"single", "strided", "bcastA", "bcastB"};
  static const char* kC[] = {"noC", "Cscalar", "Crow", "Ccol", "Cshared", "Ccolmajor"};
  return std::string(trans_a ? "At" : "A") + (trans_b ? "Bt" : "B") + "_" +
         kBatch[int(batch_mode)] + "_" + kC[int(c_mode)] + (with_act ? "_leaky" : "");
}

INSTANTIATE_TEST_SUITE_P(
    Cpu, GemmMatrix,
    testing::Combine(testing::Bool(), testing::Bool(),
                     testing::Values(BatchMode::kSingle, BatchMode::kStrided,
                                     BatchMode::kBroadcastA, BatchMode::kBroadcastB),
                     testing::Values(CMode::kNone, CMode::kScalar, CMode::kRow, CMode::kColumn,
                                     CMode::kSharedMatrix, CMode::kColumnMajorPerBatch),
                     testing::Bool()),
    gemm_case_name);

TEST(Gemm, Hand2x2AllTransposes) {
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8}, c = {1};
  GemmParams p;
  p.M = p.N = p.K = 2;
  const struct {
    bool ta, tb;
    std::vector<double> want;
  } cases[] = {
      {false, false, {19, 22, 43, 50}},  // [[1,2],[3,4]] [[5,6],[7,8]]
      {true, false, {26, 30, 38, 44}},   // [[1,3],[2,4]] [[5,6],[7,8]]
      {false, true, {17, 23, 39, 53}},   // [[1,2],[3,4]] [[5,7],[6,8]]
      {true, true, {23, 31, 34, 46}},    // [[1,3],[2,4]] [[5,7],[6,8]]
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(std::string("trans_a ") + (k.ta ? "1" : "0") + " trans_b " + (k.tb ? "1" : "0"));
    p.trans_a = k.ta;
    p.trans_b = k.tb;
    p.has_c = false;
    Output y(4);
    cpu::gemm(p, a.data(), b.data(), nullptr, y.data());
    EXPECT_TRUE(all_close(y, k.want, kExact));

    // alpha 2, beta 3 with a scalar C of 1: 2 * AB + 3.
    p.alpha = 2.f;
    p.beta = 3.f;
    p.has_c = true;
    Output z(4);
    cpu::gemm(p, a.data(), b.data(), c.data(), z.data());
    std::vector<double> want;
    for (double v : k.want) want.push_back(2 * v + 3);
    EXPECT_TRUE(all_close(z, want, kExact));
    p.alpha = p.beta = 1.f;
  }
}

// The residual R (dense like y) is added after beta * C and before the activation, per batch,
// with and without C: against the logical formula in double.
TEST(Gemm, ResidualAfterCBeforeActivation) {
  SEEDED_RNG(rng);
  const int64_t batch = 3, M = 4, N = 6, K = 5;
  for (bool with_c : {false, true})
    for (bool relu : {false, true}) {
      SCOPED_TRACE(std::string("C ") + (with_c ? "1" : "0") + " relu " + (relu ? "1" : "0"));
      GemmParams p = gemm_shape(batch, M, N, K, false, true);
      p.alpha = 0.5f;
      p.beta = 2.f;
      p.a_batch_stride = M * K;
      p.b_batch_stride = 0;  // one weight for every batch
      p.has_c = with_c;
      p.c_stride_n = 1;  // a bias row
      p.has_residual = true;
      if (relu) p.act.kind = ActivationKind::kRelu;
      const std::vector<float> a = rng.uniform(batch * M * K, -1.f, 1.f);
      const std::vector<float> b = rng.uniform(N * K, -1.f, 1.f);
      const std::vector<float> c = rng.uniform(N, -1.f, 1.f);
      const std::vector<float> r = rng.uniform(batch * M * N, -2.f, 2.f);
      std::vector<double> want;
      for (int64_t bi = 0; bi < batch; ++bi)
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            double v = 0;
            for (int64_t k = 0; k < K; ++k)
              v += double(a[(bi * M + m) * K + k]) * b[n * K + k];
            v = 0.5 * v + (with_c ? 2.0 * c[n] : 0.0) + r[(bi * M + m) * N + n];
            want.push_back(relu ? std::max(v, 0.0) : v);
          }
      Output y(batch * M * N);
      cpu::gemm(p, a.data(), b.data(), with_c ? c.data() : nullptr, r.data(), y.data());
      EXPECT_TRUE(all_close(y, want, Tolerance{1e-6, 1e-6}));
      // The same step without the residual flag ignores r: it differs by exactly r.
      p.has_residual = false;
      Output z(batch * M * N);
      cpu::gemm(p, a.data(), b.data(), with_c ? c.data() : nullptr, z.data());
      if (!relu) {
        std::vector<double> minus_r;
        for (size_t i = 0; i < want.size(); ++i) minus_r.push_back(want[i] - r[i]);
        EXPECT_TRUE(all_close(z, minus_r, Tolerance{1e-6, 1e-6}));
      }
    }
}

}  // namespace
}  // namespace jetplan::kernels
