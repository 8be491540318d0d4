// CUDA ArgMax and ArgMin (kernels/cuda/arg_reduce.cu) against the CPU twin
// (kernels/cpu/arg_reduce.cc) on the same values (FP16 inputs rounded for the twin too): the
// indices must be equal, exactly. Fresh random inputs over shapes of a segmentation head
// (argmax over channels, inner > 1), a classifier and a CTC decoder (inner 1), and odd ones;
// values drawn from a few integers so ties are common (first index, or last with
// select_last_index) and NaNs sprinkled in (NaN is the extreme of both kinds). Outputs poisoned,
// guards checked.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kArgReduce = static_cast<uint16_t>(OpFamilyId::kArgReduce);

TEST(GpuArgReduce, MatchesCpuTwinExactly) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { int64_t outer, axis, inner; bool ties, nans; };
  const Case cases[] = {{1, 21, 64 * 64, false, false},  // segmentation: 21 classes
                        {2, 19, 33 * 17, true, true},
                        {4, 1000, 1, false, false},      // a classifier
                        {50, 30, 1, true, false},        // CTC over 50 frames
                        {3, 7, 5, true, true},
                        {5, 1, 3, false, true}};         // an axis of one
  for (const Case& c : cases) {
    const int64_t n = c.outer * c.axis * c.inner, ny = c.outer * c.inner;
    for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
      std::vector<float> x = rng.uniform(n, -4.f, 4.f);
      if (c.ties)
        for (float& v : x) v = std::round(v);  // nine values: many ties
      if (c.nans)
        for (int64_t i = 0; i < n; i += 13) x[size_t(i)] = std::nanf("");
      auto dx = gpu_test::upload_rounded(&x, dtype);
      for (ArgKind kind : {ArgKind::kMax, ArgKind::kMin}) {
        for (bool last : {false, true}) {
          ArgReduceParams p;
          p.kind = kind;
          p.select_last_index = last;
          p.outer = c.outer;
          p.axis = c.axis;
          p.inner = c.inner;
          std::vector<int64_t> want(static_cast<size_t>(ny));
          cpu::arg_reduce(p, x.data(), want.data());
          DeviceBuffer dy(size_t(ny) * 8);
          dy.poison32(gpu_test::kFloatPoison);
          const cuda::StepPointers ptrs = gpu_test::step_pointers({dx.get()}, dy);
          ASSERT_EQ(gpu_test::select_and_launch(kArgReduce, dtype, ptrs, p), "");
          const std::vector<int64_t> got = dy.download<int64_t>(size_t(ny));
          for (int64_t i = 0; i < ny; ++i)
            ASSERT_EQ(got[size_t(i)], want[size_t(i)])
                << c.outer << "x" << c.axis << "x" << c.inner << " " << int(dtype) << " kind "
                << int(kind) << " last " << last << " output " << i;
          EXPECT_TRUE(dy.guard_intact());
        }
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
