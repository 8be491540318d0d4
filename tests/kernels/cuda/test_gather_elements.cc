// CUDA GatherElements (kernels/cuda/gather_elements.cu) against the CPU twin
// (kernels/cpu/gather_elements.cc) on random bytes: every element size (1, 2, 4, 8), Int32 and
// Int64 indices (in range, negative, and out of range both ways: zeros), every axis of ranks 1
// to 4, indices smaller than data off the axis and longer along it. Tolerance: none, bit-exact.
// Outputs poisoned, guards checked.
#include <gtest/gtest.h>

#include <cstring>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kGatherElements = static_cast<uint16_t>(OpFamilyId::kGatherElements);

TEST(GpuGatherElements, MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { std::vector<int64_t> data, out; };
  const Case cases[] = {{{7}, {11}},
                        {{4, 9}, {3, 12}},
                        {{2, 3, 5}, {2, 2, 5}},
                        {{1, 300, 4, 6}, {1, 100, 4, 6}},  // top-k rows of a detector's queries
                        {{3, 4, 5, 6}, {2, 3, 4, 5}}};
  for (const Case& c : cases) {
    const int32_t rank = static_cast<int32_t>(c.data.size());
    for (int32_t axis = 0; axis < rank; ++axis) {
      for (int64_t elem : {1, 2, 4, 8}) {
        for (DType index_dtype : {DType::kInt64, DType::kInt32}) {
          GatherElementsParams p;
          p.rank = rank;
          p.axis = axis;
          p.elem_bytes = elem;
          p.index_dtype = index_dtype;
          for (int32_t d = 0; d < rank; ++d) {
            p.data_dims[d] = c.data[size_t(d)];
            // Off the axis no larger than data; along it any length.
            p.out_dims[d] = d == axis ? c.out[size_t(d)] : std::min(c.out[size_t(d)], c.data[size_t(d)]);
          }
          int64_t ny = 1, nx = 1;
          for (int32_t d = 0; d < rank; ++d) ny *= p.out_dims[d], nx *= p.data_dims[d];
          const int64_t len = p.data_dims[axis];
          std::vector<int64_t> idx(static_cast<size_t>(ny));
          for (int64_t j = 0; j < ny; ++j)
            idx[size_t(j)] = j % 7 == 6 ? (j % 2 ? len + 2 : -len - 1) : rng.integer(-len, len - 1);
          const test_util::Bytes ib = test_util::index_bytes(idx, index_dtype);
          const test_util::Bytes x = rng.bytes(nx * elem);
          test_util::Bytes want(static_cast<size_t>(ny * elem));
          cpu::gather_elements(p, x.data(), ib.data(), want.data());
          DeviceBuffer dx(x.size()), di(ib.size()), dy(want.size());
          dx.upload(x.data(), x.size());
          di.upload(ib.data(), ib.size());
          dy.poison16(gpu_test::kHalfPoison);
          const cuda::StepPointers ptrs = gpu_test::step_pointers({&dx, &di}, dy);
          ASSERT_EQ(gpu_test::select_and_launch(kGatherElements, DType::kFloat16, ptrs, p), "");
          EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(dy, want.size()), want), -1)
              << "rank " << rank << " axis " << axis << " elem " << elem << " index "
              << int(index_dtype);
          EXPECT_TRUE(dy.guard_intact());
        }
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
