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
#include <deque>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// -------------------------------------------------------------------------------------- slice

// ONNX/numpy slice of one dim before resolution: start and end may be negative or out of range.
struct SliceSpec {
  int64_t start, end, step;
};

// The coordinates a slice visits along a dim of size n, as Python's range() over the clamped
// bounds produces them.
std::vector<int64_t> slice_coords(int64_t n, SliceSpec s) {
  auto clamp = [&](int64_t v) {
    if (v < 0) v += n;
    return s.step > 0 ? std::clamp<int64_t>(v, 0, n) : std::clamp<int64_t>(v, -1, n - 1);
  };
  std::vector<int64_t> coords;
  for (int64_t k = clamp(s.start); s.step > 0 ? k < clamp(s.end) : k > clamp(s.end); k += s.step)
    coords.push_back(k);
  return coords;
}

struct SliceCase {
  SliceParams params;
  Shape out;
  Bytes want;
};

// Params resolved the way the converter does, and the reference from the coordinate lists.
SliceCase slice_case(const Shape& xs, const Bytes& x, const std::vector<SliceSpec>& specs,
                     int64_t elem) {
  SliceCase c;
  c.params.rank = static_cast<int32_t>(xs.size());
  c.params.elem_bytes = elem;
  std::vector<std::vector<int64_t>> coords;
  for (size_t d = 0; d < xs.size(); ++d) {
    coords.push_back(slice_coords(xs[d], specs[d]));
    c.out.push_back(int64_t(coords[d].size()));
    c.params.x_dims[d] = xs[d];
    c.params.out_dims[d] = c.out[d];
    c.params.starts[d] = coords[d].empty() ? 0 : coords[d][0];
    c.params.steps[d] = specs[d].step;
  }
  c.want.resize(size_t(volume(c.out) * elem));
  for (int64_t i = 0; i < volume(c.out); ++i) {
    const Shape oc = unravel(i, c.out);
    Shape xc(xs.size());
    for (size_t d = 0; d < xs.size(); ++d) xc[d] = coords[d][size_t(oc[d])];
    copy_element(x, ravel(xc, xs), c.want, i, elem);
  }
  return c;
}

TEST(Slice, OnnxExamples) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};  // [2, 4]
  const Bytes xb = to_bytes(x);
  const SliceCase a = slice_case({2, 4}, xb, {{1, 2, 1}, {0, 3, 2}}, 4);
  EXPECT_EQ(a.out, (Shape{1, 2}));
  expect_bytes(to_bytes<float>({5, 7}), 4,
               [&](unsigned char* y) { cpu::slice(a.params, x.data(), y); });
  const SliceCase b = slice_case({2, 4}, xb, {{0, -1, 1}, {1, 1000, 1}}, 4);
  EXPECT_EQ(b.out, (Shape{1, 3}));
  expect_bytes(to_bytes<float>({2, 3, 4}), 4,
               [&](unsigned char* y) { cpu::slice(b.params, x.data(), y); });
}

TEST(Slice, HandNegativeSteps) {
  const std::vector<int32_t> x = {1, 2, 3, 4, 5};
  SliceParams p;
  p.rank = 1;
  p.x_dims[0] = 5;
  p.out_dims[0] = 5;
  p.starts[0] = 4;
  p.steps[0] = -1;
  expect_bytes(to_bytes<int32_t>({5, 4, 3, 2, 1}), 4,
               [&](unsigned char* y) { cpu::slice(p, x.data(), y); });
  p.out_dims[0] = 3;
  p.steps[0] = -2;
  expect_bytes(to_bytes<int32_t>({5, 3, 1}), 4,
               [&](unsigned char* y) { cpu::slice(p, x.data(), y); });
}

TEST(Slice, OnnxNegativeStepsExample) {
  // slice_neg_steps: x [20, 10, 5], starts [20, 10, 4], ends [0, 0, 1], steps [-1, -3, -2].
  std::vector<int16_t> x(1000);
  std::iota(x.begin(), x.end(), int16_t{0});
  const SliceCase c =
      slice_case({20, 10, 5}, to_bytes(x), {{20, 0, -1}, {10, 0, -3}, {4, 1, -2}}, 2);
  EXPECT_EQ(c.out, (Shape{19, 3, 2}));
  // y[0,0,0] = x[19,9,4], y[0,0,1] = x[19,9,2], y[0,1,0] = x[19,6,4], y[18,2,1] = x[1,3,2].
  EXPECT_EQ(test_util::load<int16_t>(c.want.data()), 19 * 50 + 9 * 5 + 4);
  EXPECT_EQ(test_util::load<int16_t>(c.want.data() + 2), 19 * 50 + 9 * 5 + 2);
  EXPECT_EQ(test_util::load<int16_t>(c.want.data() + 4), 19 * 50 + 6 * 5 + 4);
  EXPECT_EQ(test_util::load<int16_t>(c.want.data() + c.want.size() - 2), 1 * 50 + 3 * 5 + 2);
  expect_bytes(c.want, 2, [&](unsigned char* y) { cpu::slice(c.params, x.data(), y); });
}

TEST(Slice, RandomSpecsMatchCoordinateLists) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t rank = size_t(rng.integer(1, 5));
    const Shape xs = rng.shape(rank, 1, 6);
    std::vector<SliceSpec> specs;
    for (int64_t n : xs) {
      int64_t step = rng.integer(1, 3) * (rng.integer(0, 1) ? 1 : -1);
      specs.push_back(
          {rng.integer(-2 * n - 1, 2 * n + 1), rng.integer(-2 * n - 1, 2 * n + 1), step});
    }
    const int64_t elem = int64_t{1} << rng.integer(0, 3);
    const Bytes x = rng.bytes(volume(xs) * elem);
    const SliceCase c = slice_case(xs, x, specs, elem);
    SCOPED_TRACE("x " + shape_str(xs) + " out " + shape_str(c.out));
    expect_bytes(c.want, elem, [&](unsigned char* y) { cpu::slice(c.params, x.data(), y); });
  }
}

TEST(Slice, SplitPiecesReassembleTheInput) {
  SEEDED_RNG(rng);
  const Shape xs = {2, 6, 3};
  const int64_t elem = 4, lens[3] = {1, 3, 2};
  const Bytes x = rng.bytes(volume(xs) * elem);
  Bytes joined(x.size(), 0);
  int64_t offset = 0;
  for (int64_t len : lens) {
    SliceParams p;
    p.rank = 3;
    p.elem_bytes = elem;
    for (int d = 0; d < 3; ++d) {
      p.x_dims[d] = xs[size_t(d)];
      p.out_dims[d] = d == 1 ? len : xs[size_t(d)];
      p.steps[d] = 1;
    }
    p.starts[1] = offset;
    const Shape piece = {2, len, 3};
    test_util::ByteOutput y(volume(piece) * elem, 0xA5);
    cpu::slice(p, x.data(), y.data());
    EXPECT_TRUE(y.guard_intact());
    const Bytes got(y.data(), y.data() + y.size());
    for (int64_t e = 0; e < volume(piece); ++e) {
      Shape c = unravel(e, piece);
      c[1] += offset;
      copy_element(got, e, joined, ravel(c, xs), elem);
    }
    offset += len;
  }
  EXPECT_EQ(joined, x);
}

}  // namespace
}  // namespace jetplan::kernels
