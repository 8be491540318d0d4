// The data-movement kernels of kernels/kernels.h (transpose, slice, gather, gather
// elements, pad, broadcast, where) against references written here another way: transpose and
// tile by scattering each input element to its output coordinates (the kernels gather), slice
// and pad through explicit per-dim index lists (pad's built by cropping and then extending one
// element at a time, reflect by bouncing between the ends), broadcasting by the numpy rule on
// coordinates, plus the ONNX specification's examples and hand cases. Every output is poisoned
// with 0xA5 and then 0x5A, has a guard zone, and inputs come from a seeded generator whose seed is
// printed with any failure (JETPLAN_TEST_SEED=<n> replays it).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/cpu/half.h"
#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// ---------------------------------------------------------------------------------- transpose

// Each element of x sent to its place: output coordinate d is x's coordinate perm[d].
Bytes transpose_reference(const Shape& xs, const Bytes& x, const std::vector<int>& perm,
                          int64_t elem) {
  Shape out(xs.size());
  for (size_t d = 0; d < xs.size(); ++d) out[d] = xs[size_t(perm[d])];
  Bytes y(x.size());
  for (int64_t e = 0; e < volume(xs); ++e) {
    const Shape xc = unravel(e, xs);
    Shape oc(xs.size());
    for (size_t d = 0; d < xs.size(); ++d) oc[d] = xc[size_t(perm[d])];
    copy_element(x, e, y, ravel(oc, out), elem);
  }
  return y;
}

void check_transpose(test_util::SeededRng& rng, const Shape& xs, const std::vector<int>& perm,
                     int64_t elem) {
  std::string perm_str;
  for (int v : perm) perm_str += std::to_string(v) + " ";
  SCOPED_TRACE("x " + shape_str(xs) + " perm " + perm_str + std::to_string(elem) + " bytes");
  const Bytes x = rng.bytes(volume(xs) * elem);
  const TransposeParams p = transpose_params(xs, perm, elem);
  expect_bytes(transpose_reference(xs, x, perm, elem), elem,
               [&](unsigned char* y) { cpu::transpose(p, x.data(), y); });
}

TEST(Transpose, Hand2x3) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const TransposeParams p = transpose_params({2, 3}, {1, 0}, 4);
  expect_bytes(to_bytes<float>({1, 4, 2, 5, 3, 6}), 4,
               [&](unsigned char* y) { cpu::transpose(p, x.data(), y); });
}

TEST(Transpose, EveryPermutationUpToRank4) {
  SEEDED_RNG(rng);
  for (size_t rank = 0; rank <= 4; ++rank) {
    std::vector<int> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    do {
      const Shape xs = rng.shape(rank, 1, 4);
      for (int64_t elem : {1, 2, 3, 4, 8}) check_transpose(rng, xs, perm, elem);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(Transpose, RandomPermutationsRank5To8) {
  SEEDED_RNG(rng);
  for (size_t rank = 5; rank <= size_t{kMaxRank}; ++rank)
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<int> perm(rank);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng.engine());
      check_transpose(rng, rng.shape(rank, 1, 3), perm, trial % 2 ? 4 : 2);
    }
}

// Float16 in, Float32 out: each element widened exactly as it moves (NHWC -> NCHW here).
TEST(Transpose, HalfToFloatWidensAsItMoves) {
  TransposeParams p = transpose_params({1, 2, 2, 3}, {0, 3, 1, 2}, 2);
  p.half_to_float = true;
  // 1, -2, 0.5, 65504, 2^-24 (the least subnormal), -0, inf, -1.5, 3, 1024, 0.25, -inf
  const std::vector<uint16_t> x = {0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001, 0x8000,
                                   0x7c00, 0xbe00, 0x4200, 0x6400, 0x3400, 0xfc00};
  const float inf = std::numeric_limits<float>::infinity();
  // y[c][h][w] = x[h][w][c]
  const std::vector<float> want = {1, 65504, inf, 1024, -2, 5.9604644775390625e-8f,
                                   -1.5f, 0.25f, 0.5f, -0.f, 3, -inf};
  expect_bytes(to_bytes<float>(want), 4,
               [&](unsigned char* y) { cpu::transpose(p, x.data(), y); });
}

// Float32 in, Float16 out: each element rounded to nearest even as it moves (NCHW -> NHWC here,
// a GPU plan's input transpose with the input cast fused into it).
TEST(Transpose, FloatToHalfRoundsAsItMoves) {
  TransposeParams p = transpose_params({1, 3, 1, 2}, {0, 2, 3, 1}, 4);
  p.float_to_half = true;
  const float inf = std::numeric_limits<float>::infinity();
  // x[c][w]: 1, 1 + 2^-11 (a tie: rounds to even 1), 1 + 3 * 2^-11 (a tie: rounds up),
  // 65520 (rounds past 65504: inf), -2^-25 (below half the least subnormal: -0), -inf
  const std::vector<float> x = {1.f, 1.f + 0x1p-11f, 1.f + 3 * 0x1p-11f, 65520.f, -0x1p-25f, -inf};
  // y[w][c] = x[c][w]
  const std::vector<uint16_t> want = {0x3c00, 0x3c02, 0x8000, 0x3c00, 0x7c00, 0xfc00};
  expect_bytes(to_bytes<uint16_t>(want), 2,
               [&](unsigned char* y) { cpu::transpose(p, x.data(), y); });
}

// A Transpose writing its part of a larger y (a Concat in place): the dense result's blocks of
// y_block elements at y_offset + k * y_block_stride, every other byte of y untouched; converting
// and byte-moving alike. Reference: the dense transpose, its blocks copied into place here.
TEST(Transpose, WritesItsBlocksIntoALargerOutput) {
  SEEDED_RNG(rng);
  struct Case {
    Shape xs;
    std::vector<int> perm;
    int64_t block, gap, offset;
  };
  // A YOLO head [N, H, W, 3, 5] -> [N, 3, H, W, 5] into [N, rows, 5]; an NHWC -> NCHW into
  // channels of a larger NCHW tensor; whole-tensor blocks.
  for (const Case& c : {Case{{2, 3, 4, 3, 5}, {0, 3, 1, 2, 4}, 180, 40, 25},
                        Case{{2, 3, 4, 6}, {0, 3, 1, 2}, 72, 24, 12},
                        Case{{3, 7}, {1, 0}, 21, 0, 5}, Case{{3, 7}, {1, 0}, 3, 1, 0}}) {
    for (int conv = 0; conv < 2; ++conv) {
      SCOPED_TRACE(shape_str(c.xs) + " block " + std::to_string(c.block) +
                   (conv ? " half to float" : ""));
      const int64_t in_elem = 2, out_elem = conv ? 4 : 2, n = volume(c.xs);
      TransposeParams p = transpose_params(c.xs, c.perm, in_elem);
      p.half_to_float = conv == 1;
      Bytes x(static_cast<size_t>(n * in_elem));
      const std::vector<float> values = rng.uniform(n, -4.f, 4.f);
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = half_from_float(values[size_t(i)]);
        std::memcpy(&x[size_t(i * 2)], &h, 2);
      }
      Bytes dense(static_cast<size_t>(n * out_elem));
      cpu::transpose(p, x.data(), dense.data());
      p.y_block = c.block;
      p.y_block_stride = c.block + c.gap;
      p.y_offset = c.offset;
      const int64_t blocks = n / c.block;
      const int64_t y_count = c.offset + (blocks - 1) * p.y_block_stride + c.block + 3;
      Bytes want(static_cast<size_t>(y_count * out_elem), 0xA5);
      for (int64_t k = 0; k < blocks; ++k)
        std::memcpy(&want[size_t((c.offset + k * p.y_block_stride) * out_elem)],
                    &dense[size_t(k * c.block * out_elem)], size_t(c.block * out_elem));
      Bytes got(want.size(), 0xA5);
      cpu::transpose(p, x.data(), got.data());
      EXPECT_EQ(got, want);
    }
  }
}

TEST(Transpose, EmptyTensorWritesNothing) {
  const TransposeParams p = transpose_params({2, 0, 3}, {2, 0, 1}, 4);
  const float x = 1.f;
  expect_bytes({}, 4, [&](unsigned char* y) { cpu::transpose(p, &x, y); });
}

}  // namespace
}  // namespace jetplan::kernels
