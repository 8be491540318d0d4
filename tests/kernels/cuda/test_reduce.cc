// CUDA pooling (kernels/cuda/pool.cu) against its CPU twin (kernels/cpu/pool.cc): NHWC FP16
// (what GPU plans run) over a matrix of kernels, strides, pads, dilations and ceil-mode windows,
// NCHW FP32, and NHWC global average pooling. Tolerance: max is exact (it picks an input);
// average |got - want| <= 2e-3 * |want| + 1e-3 in FP16 (output rounding 2^-11 plus FP32 sums),
// 1e-5 relative in FP32. NaN never passes; outputs poisoned, guards checked.
// Also Reduce (kernels/cuda/reduce.cu, twin kernels/cpu/reduce.cc): max/min exact, the sums
// 2e-3 relative + 2e-3 in FP16, 1e-5 relative + 1e-5 in FP32 (FP32 sums of up to 3136 terms);
// FP64 sums in double in the twin's order, so within 1e-13 relative (CUDA's exp and log are not
// glibc's), max/min exact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

TEST(GpuReduce, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { test_util::Shape dims; uint32_t mask; };
  const Case cases[] = {
      {{8, 7, 7, 67}, 0b0110},     // NHWC mean over H, W
      {{1, 64, 56, 56}, 0b1100},   // NCHW mean over H, W
      {{2, 197, 768}, 0b100},      // last axis
      {{3, 5, 7, 9}, 0b1011},
      {{6, 5}, 0},                 // no axes: each element alone
  };
  const ReduceOp ops[] = {ReduceOp::kMean, ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin,
                          ReduceOp::kL1, ReduceOp::kL2, ReduceOp::kSumSquare,
                          ReduceOp::kLogSumExp};
  for (const Case& c : cases) {
    for (ReduceOp op : ops) {
      for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
        const bool f16 = dtype == DType::kFloat16;
        ReduceParams p;
        p.op = op;
        p.rank = static_cast<int32_t>(c.dims.size());
        p.axis_mask = c.mask;
        int64_t nx = 1, ny = 1;
        for (size_t d = 0; d < c.dims.size(); ++d) {
          p.in_dims[d] = c.dims[d];
          nx *= c.dims[d];
          if (!(c.mask >> d & 1u)) ny *= c.dims[d];
        }
        std::vector<float> x = gpu_test::as_stored(rng.uniform(nx, -2.f, 2.f), f16);
        std::vector<float> want(ny);
        cpu::reduce(p, x.data(), want.data());
        const gpu_test::FloatStepResult got =
            gpu_test::run_float_step(uint16_t{11}, dtype, p, x, ny);
        ASSERT_EQ(got.status, "");
        const bool exact = op == ReduceOp::kMax || op == ReduceOp::kMin;
        const double tol_rel = exact ? 0 : (f16 ? 2e-3 : 1e-5), tol_abs = exact ? 0 : (f16 ? 2e-3 : 1e-5);
        ASSERT_TRUE(gpu_test::all_close(got.y, want, tol_rel, tol_abs))
            << "op " << int(op) << " " << test_util::shape_str(c.dims) << " mask " << c.mask
            << " f16 " << f16;
        EXPECT_TRUE(got.guard_intact);
      }
    }
  }
}

TEST(GpuReduce, Float64MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { test_util::Shape dims; uint32_t mask; };
  const Case cases[] = {{{8, 7, 7, 67}, 0b0110}, {{2, 197, 768}, 0b100}, {{3, 5, 7, 9}, 0b1011},
                        {{6, 5}, 0}, {{4, 3}, 0b11}};
  for (const Case& c : cases) {
    for (int o = 0; o < kReduceOpCount; ++o) {
      ReduceParams p;
      p.op = static_cast<ReduceOp>(o);
      p.rank = static_cast<int32_t>(c.dims.size());
      p.axis_mask = c.mask;
      int64_t nx = 1, ny = 1;
      for (size_t d = 0; d < c.dims.size(); ++d) {
        p.in_dims[d] = c.dims[d];
        nx *= c.dims[d];
        if (!(c.mask >> d & 1u)) ny *= c.dims[d];
      }
      // Positive for LogSum and Prod (a product of 1.0 +- 0.01 stays finite), else signed.
      std::vector<double> x(static_cast<size_t>(nx));
      for (double& v : x) {
        const double u = rng.uniform(-2.f, 2.f) + rng.uniform(-1.f, 1.f) * 1e-7;
        v = p.op == ReduceOp::kLogSum ? std::fabs(u) + 0.1
            : p.op == ReduceOp::kProd ? 1.0 + u * 0.005
                                      : u;
      }
      std::vector<double> want(static_cast<size_t>(ny));
      cpu::reduce(p, x.data(), want.data());
      std::vector<uint8_t> xb(x.size() * 8);
      std::memcpy(xb.data(), x.data(), xb.size());
      const std::vector<uint8_t> gb =
          gpu_test::run_bytes_step(uint16_t{11}, DType::kFloat64, p, {xb}, want.size() * 8);
      std::vector<double> got(want.size());
      std::memcpy(got.data(), gb.data(), gb.size());
      const bool exact = p.op == ReduceOp::kMax || p.op == ReduceOp::kMin;
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_FALSE(std::isnan(got[i])) << "op " << o << " output " << i;
        ASSERT_LE(std::fabs(got[i] - want[i]), exact ? 0.0 : 1e-13 * std::fabs(want[i]) + 1e-300)
            << "op " << o << " " << test_util::shape_str(c.dims) << " mask " << c.mask
            << " output " << i << ": " << got[i] << " vs " << want[i];
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
