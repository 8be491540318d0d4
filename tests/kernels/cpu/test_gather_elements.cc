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
