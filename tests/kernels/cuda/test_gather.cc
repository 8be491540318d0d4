// CUDA data movement (kernels/cuda/copy.cu, transpose.cu, concat.cu, slice.cu, gather.cu) against
// the CPU twins (kernels/cpu/copy.cc, transpose.cc, concat.cc, slice.cc, gather.cc) on random bytes.
// Tolerance: none, bit-exact. Outputs poisoned, guards checked; shapes with odd extents, batch 1 and 8, every element size.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <numeric>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace gpu_test;
using namespace test_util;

constexpr uint16_t kGather = static_cast<uint16_t>(OpFamilyId::kGather);

TEST(GpuGather, MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  // {outer, axis_len, inner, num_indices}; the element size and index type vary below.
  const GatherParams cases[] = {{1, 30522, 768, 17},  // token embedding
                                {8, 13, 3, 5},
                                {3, 7, 1, 40},
                                {1, 5, 9, 0}};
  for (const GatherParams& c : cases) {
    for (int64_t elem : {2, 4}) {
      for (DType index_dtype : {DType::kInt64, DType::kInt32}) {
        GatherParams p = c;
        p.elem_bytes = elem;
        p.index_dtype = index_dtype;
        // In range, negative, and out of range both ways (zeros).
        std::vector<int64_t> idx(c.num_indices);
        for (int64_t j = 0; j < c.num_indices; ++j)
          idx[size_t(j)] = j % 5 == 4 ? (j % 2 ? c.axis_len + 3 : -c.axis_len - 1)
                                      : rng.integer(-c.axis_len, c.axis_len - 1);
        const Bytes ib = test_util::index_bytes(idx, index_dtype);
        const int64_t nx = c.outer * c.axis_len * c.inner * elem,
                      ny = c.outer * c.num_indices * c.inner * elem;
        const Bytes x = rng.bytes(nx);
        Bytes want(static_cast<size_t>(ny));
        cpu::gather(p, x.data(), ib.data(), want.data());
        DeviceBuffer dx(nx), di(ib.size() + 8), dy(ny);
        dx.upload(x.data(), x.size());
        if (!ib.empty()) di.upload(ib.data(), ib.size());
        dy.poison16(gpu_test::kHalfPoison);
        cuda::StepPointers ptrs = gpu_test::step_pointers({&dx, &di}, dy);
        ASSERT_EQ(gpu_test::select_and_launch(kGather, DType::kFloat16, ptrs, p), "");
        EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(dy, ny), want), -1)
            << c.outer << "x" << c.axis_len << "x" << c.inner << " elem " << elem;
        EXPECT_TRUE(dy.guard_intact());
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
