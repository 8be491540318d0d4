// The data-movement kernels of kernels/cpu/tensor_ops.h (transpose, slice, gather, gather
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

using test_util::Bytes;
using test_util::copy_element;
using test_util::dense_strides;
using test_util::expect_bytes;
using test_util::ravel;
using test_util::Shape;
using test_util::shape_str;
using test_util::to_bytes;
using test_util::unravel;
using test_util::volume;

// ---------------------------------------------------------------------------------- transpose

TransposeParams transpose_params(const Shape& x, const std::vector<int>& perm, int64_t elem) {
  TransposeParams p;
  p.rank = static_cast<int32_t>(x.size());
  p.elem_bytes = elem;
  const Shape strides = dense_strides(x);
  for (size_t d = 0; d < x.size(); ++d) {
    p.out_dims[d] = x[size_t(perm[d])];
    p.x_strides[d] = strides[size_t(perm[d])];
  }
  return p;
}

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

TEST(Transpose, EmptyTensorWritesNothing) {
  const TransposeParams p = transpose_params({2, 0, 3}, {2, 0, 1}, 4);
  const float x = 1.f;
  expect_bytes({}, 4, [&](unsigned char* y) { cpu::transpose(p, &x, y); });
}

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

// ------------------------------------------------------------------------------------- gather

Bytes index_bytes(const std::vector<int64_t>& idx, DType t) {
  if (t == DType::kInt64) return to_bytes(idx);
  return to_bytes(std::vector<int32_t>(idx.begin(), idx.end()));
}

// y has shape data[:axis] + indices + data[axis+1:]; an index outside [-len, len) gives zeros.
Bytes gather_reference(const Shape& ds, const Bytes& data, size_t axis, const Shape& is,
                       const std::vector<int64_t>& idx, int64_t elem) {
  Shape out(ds.begin(), ds.begin() + long(axis));
  out.insert(out.end(), is.begin(), is.end());
  out.insert(out.end(), ds.begin() + long(axis) + 1, ds.end());
  Bytes y(size_t(volume(out) * elem), 0);
  for (int64_t i = 0; i < volume(out); ++i) {
    const Shape c = unravel(i, out);
    const Shape ic(c.begin() + long(axis), c.begin() + long(axis + is.size()));
    int64_t k = idx[size_t(ravel(ic, is))];
    if (k < -ds[axis] || k >= ds[axis]) continue;
    if (k < 0) k += ds[axis];
    Shape dc(c.begin(), c.begin() + long(axis));
    dc.push_back(k);
    dc.insert(dc.end(), c.begin() + long(axis + is.size()), c.end());
    copy_element(data, ravel(dc, ds), y, i, elem);
  }
  return y;
}

GatherParams gather_params(const Shape& ds, size_t axis, int64_t num_indices, int64_t elem,
                           DType index_dtype) {
  GatherParams p;
  p.outer = volume(Shape(ds.begin(), ds.begin() + long(axis)));
  p.axis_len = ds[axis];
  p.inner = volume(Shape(ds.begin() + long(axis) + 1, ds.end()));
  p.num_indices = num_indices;
  p.elem_bytes = elem;
  p.index_dtype = index_dtype;
  return p;
}

TEST(Gather, OnnxExamples) {
  const std::vector<float> a = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f};  // [3, 2]
  for (DType t : {DType::kInt64, DType::kInt32}) {
    const Bytes idx = index_bytes({0, 1, 1, 2}, t);  // [[0, 1], [1, 2]], axis 0
    expect_bytes(to_bytes<float>({1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f}), 4,
                 [&](unsigned char* y) {
                   cpu::gather(gather_params({3, 2}, 0, 4, 4, t), a.data(), idx.data(), y);
                 });
  }
  const std::vector<float> b = {1.0f, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f};  // [3, 3]
  const Bytes idx = index_bytes({0, 2}, DType::kInt64);  // [[0, 2]], axis 1: y [3, 1, 2]
  expect_bytes(to_bytes<float>({1.0f, 1.9f, 2.3f, 3.9f, 4.5f, 5.9f}), 4, [&](unsigned char* y) {
    cpu::gather(gather_params({3, 3}, 1, 2, 4, DType::kInt64), b.data(), idx.data(), y);
  });
}

TEST(Gather, NegativeIndicesCountFromTheEnd) {
  std::vector<float> x(10);
  std::iota(x.begin(), x.end(), 0.f);
  for (DType t : {DType::kInt64, DType::kInt32}) {
    const Bytes idx = index_bytes({0, -9, -10, -1}, t);  // ONNX gather_negative_indices, and -1
    expect_bytes(to_bytes<float>({0, 1, 0, 9}), 4, [&](unsigned char* y) {
      cpu::gather(gather_params({10}, 0, 4, 4, t), x.data(), idx.data(), y);
    });
  }
}

TEST(Gather, OutOfRangeIndexWritesZeros) {
  const std::vector<int16_t> x = {11, 12, 13, 21, 22, 23};  // [2, 3], gather along axis 1
  const int64_t big = std::numeric_limits<int64_t>::max(),
                small = std::numeric_limits<int64_t>::min();
  const Bytes idx64 = index_bytes({3, -4, big, small, 1}, DType::kInt64);
  expect_bytes(to_bytes<int16_t>({0, 0, 0, 0, 12, 0, 0, 0, 0, 22}), 2, [&](unsigned char* y) {
    cpu::gather(gather_params({2, 3}, 1, 5, 2, DType::kInt64), x.data(), idx64.data(), y);
  });
  const Bytes idx32 = to_bytes<int32_t>({std::numeric_limits<int32_t>::min(), -3, 2});
  expect_bytes(to_bytes<int16_t>({0, 11, 13, 0, 21, 23}), 2, [&](unsigned char* y) {
    cpu::gather(gather_params({2, 3}, 1, 3, 2, DType::kInt32), x.data(), idx32.data(), y);
  });
}

TEST(Gather, RandomShapesAxesAndIndexTypes) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 120; ++trial) {
    const Shape ds = rng.shape(size_t(rng.integer(1, 4)), 1, 5);
    const size_t axis = size_t(rng.integer(0, int64_t(ds.size()) - 1));
    const Shape is = rng.shape(size_t(rng.integer(0, 2)), 1, 4);
    const int64_t len = ds[axis];
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < volume(is); ++i)  // mostly valid, negatives included, some outside
      idx.push_back(rng.integer(0, 9) == 0
                        ? rng.integer(len, len + 3) * (rng.integer(0, 1) ? 1 : -1) - 1
                        : rng.integer(-len, len - 1));
    const DType t = trial % 2 ? DType::kInt32 : DType::kInt64;
    const int64_t elem = int64_t{1} << rng.integer(0, 3);
    const Bytes data = rng.bytes(volume(ds) * elem), ib = index_bytes(idx, t);
    SCOPED_TRACE("data " + shape_str(ds) + " axis " + std::to_string(axis) + " indices " +
                 shape_str(is));
    const GatherParams p = gather_params(ds, axis, volume(is), elem, t);
    expect_bytes(gather_reference(ds, data, axis, is, idx, elem), elem,
                 [&](unsigned char* y) { cpu::gather(p, data.data(), ib.data(), y); });
  }
}

// ---------------------------------------------------------------------------- gather elements

GatherElementsParams gather_elements_params(const Shape& ds, const Shape& is, int axis,
                                            int64_t elem, DType t) {
  GatherElementsParams p;
  p.rank = static_cast<int32_t>(ds.size());
  p.axis = axis;
  p.elem_bytes = elem;
  p.index_dtype = t;
  for (size_t d = 0; d < ds.size(); ++d) {
    p.data_dims[d] = ds[d];
    p.out_dims[d] = is[d];
  }
  return p;
}

Bytes gather_elements_reference(const Shape& ds, const Bytes& data, const Shape& is,
                                const std::vector<int64_t>& idx, size_t axis, int64_t elem) {
  Bytes y(size_t(volume(is) * elem), 0);
  for (int64_t i = 0; i < volume(is); ++i) {
    Shape c = unravel(i, is);
    const int64_t k = idx[size_t(i)];
    if (k < -ds[axis] || k >= ds[axis]) continue;
    c[axis] = k < 0 ? k + ds[axis] : k;
    copy_element(data, ravel(c, ds), y, i, elem);
  }
  return y;
}

TEST(GatherElements, OnnxExamples) {
  const std::vector<int32_t> a = {1, 2, 3, 4};
  const Bytes ia = index_bytes({0, 0, 1, 0}, DType::kInt64);
  expect_bytes(to_bytes<int32_t>({1, 1, 4, 3}), 4, [&](unsigned char* y) {
    cpu::gather_elements(gather_elements_params({2, 2}, {2, 2}, 1, 4, DType::kInt64), a.data(),
                         ia.data(), y);
  });
  const std::vector<int32_t> b = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const Bytes ib = index_bytes({1, 2, 0, 2, 0, 0}, DType::kInt32);
  expect_bytes(to_bytes<int32_t>({4, 8, 3, 7, 2, 3}), 4, [&](unsigned char* y) {
    cpu::gather_elements(gather_elements_params({3, 3}, {2, 3}, 0, 4, DType::kInt32), b.data(),
                         ib.data(), y);
  });
  const Bytes in = index_bytes({-1, -2, 0, -2, 0, 0}, DType::kInt64);  // negative indices
  expect_bytes(to_bytes<int32_t>({7, 5, 3, 4, 2, 3}), 4, [&](unsigned char* y) {
    cpu::gather_elements(gather_elements_params({3, 3}, {2, 3}, 0, 4, DType::kInt64), b.data(),
                         in.data(), y);
  });
  const Bytes io = index_bytes({3, -4, 1}, DType::kInt64);  // out of range: zeros
  expect_bytes(to_bytes<int32_t>({0, 0, 6}), 4, [&](unsigned char* y) {
    cpu::gather_elements(gather_elements_params({3, 3}, {1, 3}, 0, 4, DType::kInt64), b.data(),
                         io.data(), y);
  });
}

TEST(GatherElements, RandomShapesAndAxes) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const Shape ds = rng.shape(size_t(rng.integer(1, 4)), 1, 5);
    const size_t axis = size_t(rng.integer(0, int64_t(ds.size()) - 1));
    Shape is;
    for (size_t d = 0; d < ds.size(); ++d)
      is.push_back(d == axis ? rng.integer(1, 6) : rng.integer(1, ds[d]));
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < volume(is); ++i) idx.push_back(rng.integer(-ds[axis] - 1, ds[axis]));
    const DType t = trial % 2 ? DType::kInt32 : DType::kInt64;
    const int64_t elem = int64_t{1} << rng.integer(0, 3);
    const Bytes data = rng.bytes(volume(ds) * elem), ib = index_bytes(idx, t);
    SCOPED_TRACE("data " + shape_str(ds) + " indices " + shape_str(is) + " axis " +
                 std::to_string(axis));
    const GatherElementsParams p = gather_elements_params(ds, is, int(axis), elem, t);
    expect_bytes(gather_elements_reference(ds, data, is, idx, axis, elem), elem,
                 [&](unsigned char* y) { cpu::gather_elements(p, data.data(), ib.data(), y); });
  }
}

}  // namespace
}  // namespace jetplan::kernels
