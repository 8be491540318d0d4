// The Scatter twin (kernels/cpu/scatter.cc) against references written the other way round: for
// each output element, every update that lands on it is found by searching all of them (the
// kernel walks the updates and writes where each lands), then applied in the updates' order.
// Random shapes, indices (negative ones, duplicates, a few out of range, which are skipped) and
// values from a seeded generator (JETPLAN_TEST_SEED=<n> replays one); the ONNX examples; the
// shape checks of scatter_shapes.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/half.h"
#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

constexpr ScatterReduction kReductions[] = {ScatterReduction::kNone, ScatterReduction::kAdd,
                                            ScatterReduction::kMul, ScatterReduction::kMax,
                                            ScatterReduction::kMin};

double combine_ref(ScatterReduction r, double have, double u) {
  switch (r) {
    case ScatterReduction::kNone: return u;
    case ScatterReduction::kAdd: return have + u;
    case ScatterReduction::kMul: return have * u;
    case ScatterReduction::kMax: return std::isnan(have) || std::isnan(u) ? NAN : std::max(have, u);
    case ScatterReduction::kMin: return std::isnan(have) || std::isnan(u) ? NAN : std::min(have, u);
  }
  return NAN;
}

// The coordinates of element i of `dims`.
Shape coords(int64_t i, const Shape& dims) {
  Shape c(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    c[d] = i % dims[d];
    i /= dims[d];
  }
  return c;
}

int64_t offset(const Shape& c, const Shape& dims) {
  int64_t o = 0;
  for (size_t d = 0; d < dims.size(); ++d) o = o * dims[d] + c[d];
  return o;
}

ScatterParams params(bool nd, int32_t axis, ScatterReduction r, const Shape& data, const Shape& idx,
                     const Shape& upd) {
  ScatterParams p;
  p.nd = nd;
  p.axis = axis;
  p.reduction = r;
  p.dtype = DType::kFloat32;
  p.elem_bytes = 4;
  p.index_dtype = DType::kInt64;
  EXPECT_EQ(scatter_shapes(&p, int32_t(data.size()), data.data(), int32_t(idx.size()), idx.data(),
                           int32_t(upd.size()), upd.data()),
            nullptr);
  return p;
}

// Where update u of ScatterElements lands (an offset into data), or -1 out of range.
int64_t elements_target(const Shape& data, const Shape& idx_dims, int32_t axis,
                        const std::vector<int64_t>& idx, int64_t u) {
  Shape c = coords(u, idx_dims);
  int64_t k = idx[size_t(u)];
  if (k < 0) k += data[size_t(axis)];
  if (k < 0 || k >= data[size_t(axis)]) return -1;
  c[size_t(axis)] = k;
  return offset(c, data);
}

// Where element e of ScatterND's update tuple t lands, or -1.
int64_t nd_target(const Shape& data, const Shape& idx_dims, const std::vector<int64_t>& idx,
                  int64_t t, int64_t e) {
  const size_t k = size_t(idx_dims.back());
  Shape tail(data.begin() + long(k), data.end());
  Shape c = coords(e, tail);
  Shape head(k);
  for (size_t j = 0; j < k; ++j) {
    int64_t v = idx[size_t(t) * k + j];
    if (v < 0) v += data[j];
    if (v < 0 || v >= data[j]) return -1;
    head[j] = v;
  }
  head.insert(head.end(), c.begin(), c.end());
  return offset(head, data);
}

// Output element o: data[o] and then every update landing there, in update order.
std::vector<float> reference(bool nd, int32_t axis, ScatterReduction r, const Shape& data_dims,
                             const std::vector<float>& data, const Shape& idx_dims,
                             const std::vector<int64_t>& idx, const std::vector<float>& upd) {
  std::vector<float> y(data.size());
  for (size_t o = 0; o < data.size(); ++o) {
    double v = data[o];
    if (!nd) {
      for (int64_t u = 0; u < int64_t(upd.size()); ++u)
        if (elements_target(data_dims, idx_dims, axis, idx, u) == int64_t(o))
          v = float(combine_ref(r, v, upd[size_t(u)]));
    } else {
      const int64_t tuples = int64_t(idx.size()) / idx_dims.back();
      const int64_t slice = int64_t(upd.size()) / std::max<int64_t>(1, tuples);
      for (int64_t t = 0; t < tuples; ++t)
        for (int64_t e = 0; e < slice; ++e)
          if (nd_target(data_dims, idx_dims, idx, t, e) == int64_t(o))
            v = float(combine_ref(r, v, upd[size_t(t * slice + e)]));
    }
    y[o] = float(v);
  }
  return y;
}

void expect_same(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " element " << i;
    } else {
      EXPECT_EQ(got[i], want[i]) << what << " element " << i;  // same operations, same order
    }
  }
}

TEST(Scatter, ElementsMatchTheSearchingReference) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 40; ++trial) {
    const int32_t rank = int32_t(rng.integer(1, 4));
    Shape data(static_cast<size_t>(rank)), idx(static_cast<size_t>(rank));
    for (int32_t d = 0; d < rank; ++d) data[size_t(d)] = rng.integer(1, 5);
    const int32_t axis = int32_t(rng.integer(0, rank - 1));
    for (int32_t d = 0; d < rank; ++d)
      idx[size_t(d)] = d == axis ? rng.integer(1, 6) : rng.integer(1, data[size_t(d)]);
    const int64_t nd = volume(data), ni = volume(idx), dim = data[size_t(axis)];
    std::vector<float> x(static_cast<size_t>(nd)), u(static_cast<size_t>(ni));
    for (float& v : x) v = rng.uniform(-2.f, 2.f);
    for (float& v : u) v = rng.uniform(-2.f, 2.f);
    if (trial % 5 == 0) x[0] = std::numeric_limits<float>::quiet_NaN();
    std::vector<int64_t> ix(static_cast<size_t>(ni));
    for (int64_t& v : ix) v = rng.integer(-dim - (trial % 7 == 0 ? 1 : 0), dim - 1);  // some out of range
    for (const ScatterReduction r : kReductions) {
      const ScatterParams p = params(false, axis, r, data, idx, idx);
      std::vector<float> y(static_cast<size_t>(nd), -777.f);
      cpu::scatter(p, x.data(), ix.data(), u.data(), y.data());
      expect_same(y, reference(false, axis, r, data, x, idx, ix, u), "elements");
      // In place (y is data), as the runtime may plan it.
      std::vector<float> in_place = x;
      cpu::scatter(p, in_place.data(), ix.data(), u.data(), in_place.data());
      expect_same(in_place, y, "elements in place");
    }
  }
}

TEST(Scatter, NdMatchesTheSearchingReference) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 40; ++trial) {
    const int32_t rank = int32_t(rng.integer(1, 4));
    Shape data(static_cast<size_t>(rank));
    for (int32_t d = 0; d < rank; ++d) data[size_t(d)] = rng.integer(1, 4);
    const int64_t k = rng.integer(1, rank);
    Shape idx = {rng.integer(1, 3), rng.integer(1, 3), k};
    if (trial % 3 == 0) idx = {k};  // one tuple
    Shape upd(idx.begin(), idx.end() - 1);
    upd.insert(upd.end(), data.begin() + long(k), data.end());
    std::vector<float> x(static_cast<size_t>(volume(data))), u(static_cast<size_t>(volume(upd)));
    for (float& v : x) v = rng.uniform(-2.f, 2.f);
    for (float& v : u) v = rng.uniform(-2.f, 2.f);
    std::vector<int64_t> ix(static_cast<size_t>(volume(idx)));
    for (size_t i = 0; i < ix.size(); ++i) {
      const int64_t dim = data[i % size_t(k)];
      ix[i] = rng.integer(-dim - (trial % 6 == 0 ? 1 : 0), dim - 1);
    }
    for (const ScatterReduction r : kReductions) {
      const ScatterParams p = params(true, 0, r, data, idx, upd);
      std::vector<float> y(x.size(), -777.f);
      cpu::scatter(p, x.data(), ix.data(), u.data(), y.data());
      expect_same(y, reference(true, 0, r, data, x, idx, ix, u), "nd");
    }
  }
}

TEST(Scatter, OnnxExamplesAndInt32IndicesOfInt64Data) {
  // ScatterND's first example: data 1..8, indices [[4], [3], [1], [7]], updates 9..12.
  {
    const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8}, u = {9, 10, 11, 12};
    const std::vector<int64_t> ix = {4, 3, 1, 7};
    const ScatterParams p = params(true, 0, ScatterReduction::kNone, {8}, {4, 1}, {4});
    std::vector<float> y(8);
    cpu::scatter(p, x.data(), ix.data(), u.data(), y.data());
    EXPECT_EQ(y, (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
  }
  // ScatterElements with axis 1, int32 indices, int64 data added: [[1, 2, 3, 4, 5]], indices
  // [[1, 3]], updates [[1.1e11, 2]] -> [[1, 2 + 1.1e11, 3, 6, 5]].
  ScatterParams p;
  p.axis = 1;
  p.reduction = ScatterReduction::kAdd;
  p.dtype = DType::kInt64;
  p.elem_bytes = 8;
  p.index_dtype = DType::kInt32;
  const Shape data = {1, 5}, idx = {1, 2};
  ASSERT_EQ(scatter_shapes(&p, 2, data.data(), 2, idx.data(), 2, idx.data()), nullptr);
  const std::vector<int64_t> x = {1, 2, 3, 4, 5}, u = {110000000000, 2};
  const std::vector<int32_t> ix = {1, -2};
  std::vector<int64_t> y(5);
  cpu::scatter(p, x.data(), ix.data(), u.data(), y.data());
  EXPECT_EQ(y, (std::vector<int64_t>{1, 110000000002, 3, 6, 5}));
}

TEST(Scatter, ShapeChecksSayWhy) {
  ScatterParams p;
  const Shape data = {4, 3};
  const Shape idx_big = {2, 4}, idx_rank = {2};
  EXPECT_STREQ(scatter_shapes(&p, 2, data.data(), 2, idx_big.data(), 2, idx_big.data()),
               "indices are larger than data off the axis");
  EXPECT_STREQ(scatter_shapes(&p, 2, data.data(), 1, idx_rank.data(), 1, idx_rank.data()),
               "data, indices and updates need one rank");
  p.nd = true;
  const Shape idx3 = {2, 3}, upd = {2, 3};
  EXPECT_STREQ(scatter_shapes(&p, 2, data.data(), 2, idx3.data(), 2, upd.data()),
               "the indices' last dim must be 1 to data's rank");
  const Shape idx1 = {2, 1}, upd_short = {2, 2};  // [2, 3] would fit
  EXPECT_STREQ(scatter_shapes(&p, 2, data.data(), 2, idx1.data(), 2, upd_short.data()),
               "updates must have the indices' dims but the last, then data's from the indexed on");
  EXPECT_TRUE(scatter_reduces(ScatterReduction::kAdd, DType::kFloat16));
  EXPECT_FALSE(scatter_reduces(ScatterReduction::kAdd, DType::kInt8));
  EXPECT_FALSE(scatter_reduces(ScatterReduction::kMax, DType::kBool));
  EXPECT_TRUE(scatter_reduces(ScatterReduction::kNone, DType::kInt8));
}

// Float16 reduces in float32 and rounds after every update (as the CUDA kernel does): 2048 + 1
// is a tie that rounds back to 2048, twice, where one rounding of the sum would give 2050.
// Integers wrap.
TEST(Scatter, Float16RoundsEachUpdateAndIntegersWrap) {
  ScatterParams p = params(false, 0, ScatterReduction::kAdd, {2}, {3}, {3});
  p.dtype = DType::kFloat16;
  p.elem_bytes = 2;
  const std::vector<uint16_t> data = {half_from_float(2048.f), half_from_float(1.5f)};
  const std::vector<uint16_t> upd = {half_from_float(1.f), half_from_float(1.f),
                                     half_from_float(0.25f)};
  const std::vector<int64_t> idx = {0, 0, 1};
  std::vector<uint16_t> y(2, 0x7e5a);
  cpu::scatter(p, data.data(), idx.data(), upd.data(), y.data());
  EXPECT_EQ(half_to_float(y[0]), 2048.f);
  EXPECT_EQ(half_to_float(y[1]), 1.75f);
  p.dtype = DType::kInt32;
  p.elem_bytes = 4;
  const std::vector<int32_t> di = {2147483647, -5}, ui = {1, 2, 3};
  std::vector<int32_t> yi(2, 0);
  cpu::scatter(p, di.data(), idx.data(), ui.data(), yi.data());
  EXPECT_EQ(yi[0], -2147483647 + 1);  // 2^31 - 1 + 1 + 2 wraps to -2^31 + 2
  EXPECT_EQ(yi[1], -2);
}

}  // namespace
}  // namespace jetplan::kernels
