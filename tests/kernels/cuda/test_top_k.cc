// CUDA TopK (kernels/cuda/top_k.cu) against its CPU twin (kernels/cpu/top_k.cc) on the same
// values (FP16 inputs rounded for the twin too): indices equal exactly and values equal (a NaN
// need only stay a NaN). Fresh random inputs over a detector's query selection (k 300 of 8400 x
// 4 classes flattened), a classifier's top 5, rows along an inner axis, and odd shapes; values
// drawn from a few integers where ties must fall to the lower index, NaNs sprinkled in (above
// every number), largest and smallest, k from 1 to the whole axis. Outputs poisoned, guards
// checked.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kTopK = static_cast<uint16_t>(OpFamilyId::kTopK);

TEST(GpuTopK, MatchesCpuTwinExactly) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { int64_t outer, axis, inner, k; bool ties, nans; };
  const Case cases[] = {{1, 8400 * 4, 1, 300, false, false},  // a detector's queries
                        {4, 1000, 1, 5, false, true},         // a classifier's top 5
                        {2, 37, 6, 37, true, true},           // the whole axis, inner rows
                        {3, 513, 1, 1, true, false},
                        {1, 9, 2, 4, true, true}};
  for (const Case& c : cases) {
    const int64_t n = c.outer * c.axis * c.inner, ny = c.outer * c.k * c.inner;
    for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
      std::vector<float> x = rng.uniform(n, -8.f, 8.f);
      if (c.ties)
        for (float& v : x) v = std::round(v / 4.f);  // five values: ties everywhere
      if (c.nans)
        for (int64_t i = 3; i < n; i += 17) x[size_t(i)] = std::nanf("");
      auto dx = gpu_test::upload_rounded(&x, dtype);
      for (bool largest : {true, false}) {
        TopKParams p;
        p.outer = c.outer;
        p.axis = c.axis;
        p.inner = c.inner;
        p.k = c.k;
        p.largest = largest;
        std::vector<float> want_values(static_cast<size_t>(ny));
        std::vector<int64_t> want_indices(static_cast<size_t>(ny));
        std::vector<unsigned char> ws(static_cast<size_t>(cpu::topk_workspace_bytes(p)) + 8);
        cpu::topk(p, x.data(), ws.data(), want_values.data(), want_indices.data());
        DeviceBuffer dv(size_t(ny) * gpu_test::float_storage_bytes(dtype)), di(size_t(ny) * 8);
        gpu_test::poison(dv, dtype);
        di.poison32(gpu_test::kFloatPoison);
        cuda::StepPointers ptrs = gpu_test::step_pointers({dx.get()}, dv);
        ptrs.out[1] = di.get();
        ASSERT_EQ(gpu_test::select_and_launch(kTopK, dtype, ptrs, p), "");
        const std::vector<float> values = gpu_test::download_floats(dv, size_t(ny), dtype);
        const std::vector<int64_t> indices = di.download<int64_t>(size_t(ny));
        for (int64_t i = 0; i < ny; ++i) {
          ASSERT_EQ(indices[size_t(i)], want_indices[size_t(i)])
              << c.outer << "x" << c.axis << "x" << c.inner << " k " << c.k << " largest "
              << largest << " dtype " << int(dtype) << " output " << i;
          const float v = values[size_t(i)], w = want_values[size_t(i)];
          ASSERT_TRUE(v == w || (std::isnan(v) && std::isnan(w))) << v << " vs " << w;
        }
        EXPECT_TRUE(dv.guard_intact());
        EXPECT_TRUE(di.guard_intact());
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
