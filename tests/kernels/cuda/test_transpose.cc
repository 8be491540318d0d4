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
      {{2, 197, 12, 64}, {0, 2, 1, 3}, false},  // ViT heads split: rows in 16-byte units
      {{3, 5, 7, 6}, {0, 2, 1, 3}, false},      // rows of 6 elements: units of 2, 4 or 16 bytes
      {{4, 10, 3, 12}, {2, 0, 1, 3}, false},    // rows of 12
      {{3, 5, 7, 3}, {0, 2, 1, 3}, false},      // rows of 3: 1-byte elements stay generic
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

// A converting transpose (FP16 -> FP32, or FP32 -> FP16 with to_half) against the CPU twin, bit
// for bit: the selected variant on values past the half range (+-inf) and subnormal halves,
// then the byte mover of x's element size, which must refuse such params (y stays poisoned).
void check_converting(test_util::SeededRng& rng, const TransposeCase& c, bool to_half) {
  const int64_t in_bytes = to_half ? 4 : 2, out_bytes = to_half ? 2 : 4;
  TransposeParams p = transpose_params(c.dims, c.perm, in_bytes);
  p.half_to_float = !to_half;
  p.float_to_half = to_half;
  const int64_t n = test_util::volume(c.dims);
  std::vector<float> xf = rng.uniform(n, -70000.f, 70000.f);  // past the half range: +-inf
  for (int64_t i = 0; i < n; i += 7) xf[size_t(i)] *= 1e-9f;  // subnormal halves
  Bytes x(static_cast<size_t>(n * in_bytes));
  if (to_half) {
    std::memcpy(x.data(), xf.data(), x.size());
  } else {
    const std::vector<uint16_t> xh = gpu_test::to_half(xf);
    std::memcpy(x.data(), xh.data(), x.size());
  }
  Bytes want(static_cast<size_t>(n * out_bytes));
  cpu::transpose(p, x.data(), want.data());
  DeviceBuffer dx(n * in_bytes), dy(n * out_bytes);
  dx.upload(x.data(), n * in_bytes);
  const auto poison = [&] {
    if (to_half) dy.poison16(gpu_test::kHalfPoison);
    else dy.poison32(gpu_test::kFloatPoison);
  };
  poison();
  cuda::StepPointers ptrs = gpu_test::step_pointers({&dx}, dy);
  cuda::LaunchChoice chosen;
  ASSERT_EQ(gpu_test::select_and_launch(kTranspose, to_half ? DType::kFloat32 : DType::kFloat16,
                                        ptrs, p, &chosen),
            "");
  const std::string prefix = c.tiled ? "jp_transpose_tiled_" : "jp_transpose_";
  const std::string name = chosen.variant->name;
  EXPECT_EQ(name, prefix + (to_half ? "f2h" : "h2f"));
  EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(dy, n * out_bytes), want), -1)
      << test_util::shape_str(c.dims) << " " << name;
  EXPECT_TRUE(dy.guard_intact());

  poison();
  const Bytes poisoned = gpu_test::download_bytes(dy, out_bytes);
  ASSERT_EQ(gpu_test::launch((prefix + (to_half ? "b4" : "b2")).c_str(), chosen, ptrs, p), "");
  EXPECT_EQ(gpu_test::download_bytes(dy, out_bytes), poisoned)
      << "a byte mover ran a converting transpose";
}

// The output cast fused into the layout transpose: FP16 in, FP32 out.
TEST(GpuTranspose, HalfToFloatMatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const TransposeCase cases[] = {
      {{1, 13, 11, 67}, {0, 3, 1, 2}, true},  // NHWC -> NCHW, the output transpose
      {{8, 7, 7, 2048}, {0, 3, 1, 2}, true},
      {{1, 1, 1, 1000}, {0, 3, 1, 2}, false},  // a classifier's output: extent-1 dims drop out
      {{2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}, false},
  };
  for (const TransposeCase& c : cases) check_converting(rng, c, false);
}

// The input cast fused into the layout transpose: FP32 in, FP16 out (rounded to nearest even).
TEST(GpuTranspose, FloatToHalfMatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const TransposeCase cases[] = {
      {{8, 3, 224, 224}, {0, 2, 3, 1}, true},  // the image input: NCHW -> NHWC, 3 channels
      {{1, 4, 33, 17}, {0, 2, 3, 1}, true},
      {{2, 67, 13, 11}, {0, 2, 3, 1}, true},   // wide enough for 32x32 tiles
      {{2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}, false},
  };
  for (const TransposeCase& c : cases) check_converting(rng, c, true);
}

// A Transpose writing its part of a larger y (a Concat in place, TransposeParams.y_block):
// every path (tiled, narrow lines, rows in wide units, the generic 32-bit loop) and the FP16 ->
// FP32 one, against the CPU twin over the whole of y, whose other bytes stay poisoned.
TEST(GpuTranspose, WritesItsBlocksIntoALargerOutputLikeTheTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case {
    TransposeCase c;
    int64_t block, gap, offset;  // in elements
  };
  const Case cases[] = {
      // YOLO head: [N, H, W, 3, 85] -> [N, 3, H, W, 85] into [N, rows, 85] (generic loop)
      {{{2, 20, 20, 3, 85}, {0, 3, 1, 2, 4}, false}, 3 * 400 * 85, 3 * 100 * 85, 0},
      {{{2, 10, 10, 3, 85}, {0, 3, 1, 2, 4}, false}, 3 * 100 * 85, 3 * 400 * 85, 3 * 400 * 85},
      // head split with rows of 8 halves (16-byte units), blocks of whole rows
      {{{2, 6, 4, 8}, {0, 2, 1, 3}, false}, 192, 64, 32},
      // NHWC -> NCHW into more channels (32x32 tiles), and a narrow one (one thread a line)
      {{{2, 9, 7, 40}, {0, 3, 1, 2}, true}, 9 * 7 * 40, 9 * 7 * 8, 9 * 7 * 3},
      {{{2, 9, 7, 3}, {0, 3, 1, 2}, true}, 9 * 7 * 3, 9 * 7 * 5, 9 * 7 * 2},
  };
  for (const Case& k : cases) {
    for (int conv = 0; conv < 2; ++conv) {
      const TransposeCase& c = k.c;
      SCOPED_TRACE(test_util::shape_str(c.dims) + (conv ? " half to float" : ""));
      const int64_t out_elem = conv ? 4 : 2, n = test_util::volume(c.dims);
      TransposeParams p = transpose_params(c.dims, c.perm, 2);
      p.half_to_float = conv == 1;
      p.y_block = k.block;
      p.y_block_stride = k.block + k.gap;
      p.y_offset = k.offset;
      const int64_t y_count = k.offset + (n / k.block - 1) * p.y_block_stride + k.block + k.gap;
      const std::vector<uint16_t> xh = gpu_test::to_half(rng.uniform(n, -8.f, 8.f));
      Bytes x(static_cast<size_t>(n * 2));
      std::memcpy(x.data(), xh.data(), x.size());
      Bytes want(static_cast<size_t>(y_count * out_elem), 0xA5);  // DeviceBuffer's poison
      cpu::transpose(p, x.data(), want.data());
      DeviceBuffer dx(n * 2), dy(y_count * out_elem);
      dx.upload(x.data(), x.size());
      cuda::StepPointers ptrs = gpu_test::step_pointers({&dx}, dy);
      cuda::LaunchChoice chosen;
      ASSERT_EQ(gpu_test::select_and_launch(kTranspose, DType::kFloat16, ptrs, p, &chosen), "");
      const std::string name = chosen.variant->name;
      EXPECT_EQ(name.find("tiled") != std::string::npos, c.tiled) << name;
      EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(dy, want.size()), want), -1)
          << name;
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
