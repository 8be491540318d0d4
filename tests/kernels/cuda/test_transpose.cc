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

constexpr uint16_t kTranspose = static_cast<uint16_t>(OpFamilyId::kTranspose);

// y = x transposed by perm, x dense with shape dims.
struct TransposeCase {
  Shape dims;
  std::vector<int> perm;
  bool tiled;  // what selection should pick
};

TEST(GpuTranspose, MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const TransposeCase cases[] = {
      {{1, 3, 224, 224}, {0, 2, 3, 1}, true},   // NCHW -> NHWC, image input
      {{8, 67, 13, 11}, {0, 2, 3, 1}, true},    // odd everything, batch 8
      {{1, 13, 11, 67}, {0, 3, 1, 2}, true},    // NHWC -> NCHW
      {{8, 7, 7, 2048}, {0, 3, 1, 2}, true},
      {{33, 65}, {1, 0}, true},                 // a plain 2-D transpose
      {{2, 197, 12, 64}, {0, 2, 1, 3}, false},  // ViT heads split: generic
      {{2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}, false},
      {{5, 1, 9}, {1, 2, 0}, true},             // extent-1 dims drop out
      {{8, 3, 37, 41}, {0, 2, 3, 1}, true},     // 3 cols: one thread a row (narrow view)
      {{3, 41, 37, 2}, {0, 3, 1, 2}, true},     // 2 rows: one thread a col
      {{2, 9, 5, 7}, {0, 2, 3, 1}, true},       // 9: just past narrow, 32x32 tiles
      {{17}, {0}, false},
  };
  for (const TransposeCase& c : cases) {
    for (int64_t elem : {1, 2, 4, 8}) {
      const TransposeParams p = transpose_params(c.dims, c.perm, elem);
      const int64_t bytes = test_util::volume(c.dims) * elem;
      const Bytes x = rng.bytes(bytes);
      Bytes want(static_cast<size_t>(bytes));
      cpu::transpose(p, x.data(), want.data());
      gpu_test::ByteStep step(x, bytes);
      cuda::LaunchChoice chosen;
      ASSERT_EQ(gpu_test::select_and_launch(kTranspose, DType::kFloat16, step.ptrs, p, &chosen),
                "");
      EXPECT_EQ(std::string(chosen.variant->name).find("tiled") != std::string::npos, c.tiled)
          << chosen.variant->name << " for " << test_util::shape_str(c.dims);
      EXPECT_EQ(step.first_difference(want), -1)
          << test_util::shape_str(c.dims) << " elem " << elem << " " << chosen.variant->name;
      EXPECT_TRUE(step.dy.guard_intact());
    }
  }
}

// A grid of one block still covers every tile (grid-stride), and a plan naming the tiled kernel
// for a permutation it does not handle still gets the right answer.
TEST(GpuTranspose, TiledKernelAnyGridAndAnyPermutation) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const TransposeCase& c : {TransposeCase{{2, 35, 9, 7}, {0, 2, 3, 1}, true},
                                 TransposeCase{{2, 3, 4, 5}, {3, 1, 0, 2}, false}}) {
    const TransposeParams p = transpose_params(c.dims, c.perm, 2);
    const int64_t bytes = test_util::volume(c.dims) * 2;
    const Bytes x = rng.bytes(bytes);
    Bytes want(static_cast<size_t>(bytes));
    cpu::transpose(p, x.data(), want.data());
    gpu_test::ByteStep step(x, bytes);
    cuda::LaunchChoice one;
    one.block[0] = 32;
    one.block[1] = 8;
    ASSERT_EQ(gpu_test::launch("jp_transpose_tiled_b2", one, step.ptrs, p), "");
    EXPECT_EQ(step.first_difference(want), -1) << test_util::shape_str(c.dims);
    EXPECT_TRUE(step.dy.guard_intact());
  }
}

// The output cast fused into the layout transpose: FP16 in, FP32 out, bit for bit the CPU
// twin's conversion; the byte-moving variants refuse such params (y stays poisoned).
TEST(GpuTranspose, HalfToFloatMatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const TransposeCase cases[] = {
      {{1, 13, 11, 67}, {0, 3, 1, 2}, true},  // NHWC -> NCHW, the output transpose
      {{8, 7, 7, 2048}, {0, 3, 1, 2}, true},
      {{1, 1, 1, 1000}, {0, 3, 1, 2}, false},  // a classifier's output: extent-1 dims drop out
      {{2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}, false},
  };
  for (const TransposeCase& c : cases) {
    TransposeParams p = transpose_params(c.dims, c.perm, 2);
    p.half_to_float = true;
    const int64_t n = test_util::volume(c.dims);
    std::vector<float> xf = rng.uniform(n, -70000.f, 70000.f);  // past the half range: +-inf
    for (int64_t i = 0; i < n; i += 7) xf[size_t(i)] *= 1e-9f;  // subnormal halves
    const std::vector<uint16_t> xh = gpu_test::to_half(xf);
    Bytes want(static_cast<size_t>(n * 4));
    cpu::transpose(p, xh.data(), want.data());
    DeviceBuffer dx(n * 2), dy(n * 4);
    dx.upload(xh.data(), n * 2);
    dy.poison32(gpu_test::kFloatPoison);
    cuda::StepPointers ptrs = gpu_test::step_pointers({&dx}, dy);
    cuda::LaunchChoice chosen;
    ASSERT_EQ(gpu_test::select_and_launch(kTranspose, DType::kFloat16, ptrs, p, &chosen), "");
    const std::string name = chosen.variant->name;
    EXPECT_EQ(name, c.tiled ? "jp_transpose_tiled_h2f" : "jp_transpose_h2f");
    EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(dy, n * 4), want), -1)
        << test_util::shape_str(c.dims) << " " << name;
    EXPECT_TRUE(dy.guard_intact());

    dy.poison32(gpu_test::kFloatPoison);
    ASSERT_EQ(gpu_test::launch(c.tiled ? "jp_transpose_tiled_b2" : "jp_transpose_b2", chosen, ptrs, p),
              "");
    const Bytes after = gpu_test::download_bytes(dy, n * 4);
    uint32_t first;
    std::memcpy(&first, after.data(), 4);
    EXPECT_EQ(first, gpu_test::kFloatPoison) << "a byte mover ran a converting transpose";
  }
}

// The input cast fused into the layout transpose: FP32 in, FP16 out, bit for bit the CPU twin's
// rounding (to nearest even, past the half range to +-inf); the byte movers refuse such params.
TEST(GpuTranspose, FloatToHalfMatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const TransposeCase cases[] = {
      {{8, 3, 224, 224}, {0, 2, 3, 1}, true},  // the image input: NCHW -> NHWC, 3 channels
      {{1, 4, 33, 17}, {0, 2, 3, 1}, true},
      {{2, 67, 13, 11}, {0, 2, 3, 1}, true},   // wide enough for 32x32 tiles
      {{2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}, false},
  };
  for (const TransposeCase& c : cases) {
    TransposeParams p = transpose_params(c.dims, c.perm, 4);
    p.float_to_half = true;
    const int64_t n = test_util::volume(c.dims);
    std::vector<float> xf = rng.uniform(n, -70000.f, 70000.f);  // past the half range: +-inf
    for (int64_t i = 0; i < n; i += 7) xf[size_t(i)] *= 1e-9f;  // subnormal halves
    Bytes want(static_cast<size_t>(n * 2));
    cpu::transpose(p, xf.data(), want.data());
    DeviceBuffer dx(n * 4), dy(n * 2);
    dx.upload(xf.data(), n * 4);
    dy.poison16(gpu_test::kHalfPoison);
    cuda::StepPointers ptrs = gpu_test::step_pointers({&dx}, dy);
    cuda::LaunchChoice chosen;
    ASSERT_EQ(gpu_test::select_and_launch(kTranspose, DType::kFloat32, ptrs, p, &chosen), "");
    const std::string name = chosen.variant->name;
    EXPECT_EQ(name, c.tiled ? "jp_transpose_tiled_f2h" : "jp_transpose_f2h");
    EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(dy, n * 2), want), -1)
        << test_util::shape_str(c.dims) << " " << name;
    EXPECT_TRUE(dy.guard_intact());

    dy.poison16(gpu_test::kHalfPoison);
    ASSERT_EQ(gpu_test::launch(c.tiled ? "jp_transpose_tiled_b4" : "jp_transpose_b4", chosen, ptrs, p),
              "");
    const Bytes after = gpu_test::download_bytes(dy, n * 2);
    uint16_t first;
    std::memcpy(&first, after.data(), 2);
    EXPECT_EQ(first, gpu_test::kHalfPoison) << "a byte mover ran a converting transpose";
  }
}

}  // namespace
}  // namespace jetplan::kernels
