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

constexpr uint16_t kConcat = static_cast<uint16_t>(OpFamilyId::kConcat);

TEST(GpuConcat, MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case {
    int64_t outer, inner;
    std::vector<int64_t> axis_len;
  };
  const Case cases[] = {
      {1, 56 * 56, {64, 64}},          // NCHW channel concat, batch 1
      {8 * 13 * 13, 1, {67, 3, 128}},  // NHWC channel concat: inner 1, odd lengths
      {8 * 16 * 16, 1, {16, 32}},      // a U-Net skip connection's (Int8 with elem 1)
      {8, 7, {3, 0, 5, 1}},            // an empty input (null pointer)
      {2, 16, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
      {1, 1, {1}},
  };
  for (const Case& c : cases) {
    for (int64_t elem : {1, 2, 4, 8}) {
      ConcatParams p;
      p.outer = c.outer;
      p.inner = c.inner;
      p.elem_bytes = elem;
      p.num_inputs = static_cast<int32_t>(c.axis_len.size());
      int64_t total = 0;
      std::vector<Bytes> inputs;
      std::vector<std::unique_ptr<DeviceBuffer>> dins;
      std::vector<const void*> host_ptrs;
      cuda::StepPointers ptrs{};
      for (size_t k = 0; k < c.axis_len.size(); ++k) {
        p.axis_len[k] = c.axis_len[k];
        total += c.axis_len[k];
        const int64_t bytes = c.outer * c.axis_len[k] * c.inner * elem;
        inputs.push_back(rng.bytes(bytes));
        host_ptrs.push_back(bytes > 0 ? inputs.back().data() : nullptr);
        if (bytes > 0) {
          dins.push_back(std::make_unique<DeviceBuffer>(bytes));
          dins.back()->upload(inputs.back().data(), bytes);
          ptrs.in[k] = dins.back()->get();
        }
      }
      const int64_t out_bytes = c.outer * total * c.inner * elem;
      Bytes want(static_cast<size_t>(out_bytes));
      cpu::concat(p, host_ptrs.data(), want.data());
      DeviceBuffer dy(out_bytes);
      dy.poison16(gpu_test::kHalfPoison);
      ptrs.out[0] = dy.get();
      // 1-byte elements as an INT8 plan's Concat of Int8 tensors names them.
      const DType dtype = elem == 1 ? DType::kInt8 : DType::kFloat16;
      ASSERT_EQ(gpu_test::select_and_launch(kConcat, dtype, ptrs, p), "");
      EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(dy, out_bytes), want), -1)
          << "outer " << c.outer << " inner " << c.inner << " elem " << elem;
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
