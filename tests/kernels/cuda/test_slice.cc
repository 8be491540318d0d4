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

constexpr uint16_t kSlice = static_cast<uint16_t>(OpFamilyId::kSlice);

TEST(GpuSlice, MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape x, starts, steps, out; };
  const Case cases[] = {
      {{8, 13, 11, 67}, {0, 1, 2, 3}, {1, 2, 3, 1}, {8, 6, 3, 64}},  // strided, NHWC crop
      {{1, 197, 768}, {0, 0, 0}, {1, 1, 1}, {1, 1, 768}},            // ViT class token
      {{2, 9, 7}, {1, 8, 6}, {1, -2, -3}, {1, 5, 3}},                // negative steps
      {{5}, {4}, {-1}, {5}},
  };
  for (const Case& c : cases) {
    for (int64_t elem : {1, 2, 4, 8}) {
      SliceParams p;
      p.rank = static_cast<int32_t>(c.x.size());
      p.elem_bytes = elem;
      for (size_t d = 0; d < c.x.size(); ++d) {
        p.x_dims[d] = c.x[d];
        p.out_dims[d] = c.out[d];
        p.starts[d] = c.starts[d];
        p.steps[d] = c.steps[d];
      }
      const int64_t nx = test_util::volume(c.x) * elem, ny = test_util::volume(c.out) * elem;
      const Bytes x = rng.bytes(nx);
      Bytes want(static_cast<size_t>(ny));
      cpu::slice(p, x.data(), want.data());
      DeviceBuffer dx(nx), dy(ny);
      dx.upload(x.data(), x.size());
      dy.poison16(gpu_test::kHalfPoison);
      cuda::StepPointers ptrs{};
      ptrs.in[0] = dx.get();
      ptrs.out[0] = dy.get();
      ASSERT_EQ(gpu_test::select_and_launch(kSlice, DType::kFloat16, ptrs, p), "");
      EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(dy, ny), want), -1)
          << test_util::shape_str(c.x) << " elem " << elem;
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
