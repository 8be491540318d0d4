// CUDA Scatter (kernels/cuda/scatter.cu) against the CPU twin (kernels/cpu/scatter.cc): random
// shapes, indices (negative ones, duplicates, a few out of range, which both skip) and values,
// every reduction on every dtype it takes (Float16, Float32, Float64, Int32, Int64) and no
// reduction on elements of 1, 2, 4 and 8 bytes; ScatterElements along every axis and ScatterND
// with every index depth, and ScatterND whose tuples are marked sorted. Outputs are poisoned first and compared bit for bit: the kernel applies
// the same updates in the same order (NaN's payload aside, checked on its own). The selector's
// bound on the kernel's walk is checked without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/half.h"
#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
using test_util::Bytes;
using test_util::Shape;

constexpr uint16_t kScatter = static_cast<uint16_t>(OpFamilyId::kScatter);

struct Case {
  bool nd;
  int32_t axis;  // ScatterElements
  Shape data, idx;
};

// Updates' shape for `c` (ScatterND: the indices' dims but the last, then data's from k on).
Shape updates_shape(const Case& c) {
  if (!c.nd) return c.idx;
  Shape u(c.idx.begin(), c.idx.end() - 1);
  for (size_t d = size_t(c.idx.back()); d < c.data.size(); ++d) u.push_back(c.data[d]);
  return u;
}

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

ScatterParams params_for(const Case& c, ScatterReduction r, DType dtype, int64_t elem,
                         DType index_dtype) {
  ScatterParams p;
  p.nd = c.nd;
  p.axis = c.axis;
  p.reduction = r;
  p.dtype = dtype;
  p.elem_bytes = elem;
  p.index_dtype = index_dtype;
  const Shape u = updates_shape(c);
  EXPECT_EQ(scatter_shapes(&p, int32_t(c.data.size()), c.data.data(), int32_t(c.idx.size()),
                           c.idx.data(), int32_t(u.size()), u.data()),
            nullptr);
  return p;
}

// Indices of `c`: in range mostly, negative ones, and about one in 13 outside even from the end.
std::vector<int64_t> random_indices(test_util::SeededRng& rng, const Case& c) {
  std::vector<int64_t> idx(size_t(count(c.idx)));
  const int64_t k = c.nd ? c.idx.back() : 1;
  for (size_t i = 0; i < idx.size(); ++i) {
    const int64_t len = c.data[size_t(c.nd ? int64_t(i) % k : c.axis)];
    idx[i] = i % 13 == 12 ? (i % 2 ? len + 1 : -len - 2) : rng.integer(-len, len - 1);
  }
  return idx;
}

// n random elements of `dtype` (floats finite, small integers so products stay readable).
Bytes random_values(test_util::SeededRng& rng, DType dtype, int64_t elem, int64_t n) {
  Bytes b(size_t(n * elem));
  for (int64_t i = 0; i < n; ++i) {
    unsigned char* at = b.data() + i * elem;
    const float f = rng.uniform(-3.f, 3.f);
    const int64_t v = rng.integer(-9, 9);
    switch (dtype) {
      case DType::kFloat16: { const uint16_t h = half_from_float(f); std::memcpy(at, &h, 2); break; }
      case DType::kFloat32: std::memcpy(at, &f, 4); break;
      case DType::kFloat64: { const double d = f; std::memcpy(at, &d, 8); break; }
      case DType::kInt32: { const int32_t w = int32_t(v); std::memcpy(at, &w, 4); break; }
      case DType::kInt64: std::memcpy(at, &v, 8); break;
      default: { const Bytes r = rng.bytes(elem); std::memcpy(at, r.data(), size_t(elem)); break; }
    }
  }
  return b;
}

// Runs the twin and the kernel on p's operands; "" when they agree bit for bit.
std::string against_twin(const ScatterParams& p, const Bytes& data, const Bytes& ib, const Bytes& upd) {
  Bytes want(data.size(), 0xEE);
  cpu::scatter(p, data.data(), ib.data(), upd.data(), want.data());
  DeviceBuffer dd(data.size()), di(ib.size()), du(upd.size()), dy(want.size());
  dd.upload(data.data(), data.size());
  di.upload(ib.data(), ib.size());
  du.upload(upd.data(), upd.size());
  dy.poison16(gpu_test::kHalfPoison);
  const cuda::StepPointers ptrs = gpu_test::step_pointers({&dd, &di, &du}, dy);
  if (std::string why = gpu_test::select_and_launch(kScatter, p.dtype, ptrs, p); !why.empty())
    return why;
  if (!dy.guard_intact()) return "wrote past its output";
  const int64_t at = gpu_test::first_difference(gpu_test::download_bytes(dy, want.size()), want);
  return at < 0 ? "" : "first difference at byte " + std::to_string(at);
}

// One case of random values and indices.
std::string check_case(test_util::SeededRng& rng, const Case& c, ScatterReduction r, DType dtype,
                       int64_t elem, DType index_dtype) {
  const ScatterParams p = params_for(c, r, dtype, elem, index_dtype);
  const Bytes data = random_values(rng, dtype, elem, count(c.data));
  const Bytes upd = random_values(rng, dtype, elem, count(updates_shape(c)));
  return against_twin(p, data, test_util::index_bytes(random_indices(rng, c), index_dtype), upd);
}

const Case kCases[] = {
    {false, 0, {7}, {11}},
    {false, 0, {4, 9}, {6, 9}},
    {false, 1, {4, 9}, {3, 12}},
    {false, 2, {2, 3, 5}, {2, 2, 8}},
    {false, 1, {4, 300, 6}, {4, 50, 6}},  // many updates on each line
    {false, 3, {2, 3, 4, 17}, {1, 3, 2, 9}},
    {true, 0, {9}, {6, 1}},
    {true, 0, {5, 7}, {4, 1}},
    {true, 0, {5, 7}, {3, 4, 2}},
    {true, 0, {2, 8, 64, 32}, {2, 8, 4, 3}},  // a cache of keys written at 4 positions a head
    {true, 0, {3, 4, 5}, {2, 2, 3}},          // single elements, duplicates likely
};

TEST(GpuScatter, EveryReductionAndDtypeMatchesTheTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Lane { DType dtype; int64_t elem; };
  const Lane reducing[] = {{DType::kFloat16, 2}, {DType::kFloat32, 4}, {DType::kFloat64, 8},
                           {DType::kInt32, 4}, {DType::kInt64, 8}};
  const ScatterReduction reductions[] = {ScatterReduction::kAdd, ScatterReduction::kMul,
                                         ScatterReduction::kMax, ScatterReduction::kMin};
  for (const Case& c : kCases) {
    const std::string where = std::string(c.nd ? "ScatterND" : "ScatterElements") + " data " +
                              test_util::shape_str(c.data) + " indices " +
                              test_util::shape_str(c.idx) + " axis " + std::to_string(c.axis);
    for (const DType it : {DType::kInt64, DType::kInt32}) {
      for (const int64_t elem : {1, 2, 4, 8})
        EXPECT_EQ(check_case(rng, c, ScatterReduction::kNone, DType::kBool, elem, it), "")
            << where << ", no reduction, " << elem << "-byte elements";
      for (const ScatterReduction r : reductions)
        for (const Lane& l : reducing)
          EXPECT_EQ(check_case(rng, c, r, l.dtype, l.elem, it), "")
              << where << ", reduction " << int(r) << ", dtype " << int(l.dtype);
    }
  }
}

// ScatterND marked sorted (tuples naming strictly increasing offsets, as the converter leaves
// constant ones): the kernel binary-searches them; every reduction, both index dtypes.
TEST(GpuScatter, SortedTuplesMatchTheTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Sorted { Shape data; int64_t k; };
  const Sorted cases[] = {{{1000}, 1}, {{3, 80, 80, 6}, 4}, {{3, 80, 80, 6}, 2}, {{64, 33}, 1}};
  for (const Sorted& c : cases) {
    Shape rows_dims(c.data.begin(), c.data.begin() + c.k);
    const int64_t rows = count(rows_dims);
    // About a third of the rows, in increasing order, as tuples of k coordinates.
    std::vector<int64_t> tuples;
    for (int64_t r = 0; r < rows; ++r) {
      if (rng.integer(0, 2) != 0) continue;
      tuples.resize(tuples.size() + size_t(c.k));
      int64_t rest = r;
      for (int64_t m = c.k - 1; m >= 0; --m) {
        tuples[tuples.size() - size_t(c.k) + size_t(m)] = rest % c.data[size_t(m)];
        rest /= c.data[size_t(m)];
      }
    }
    const Case nd{true, 0, c.data, {int64_t(tuples.size()) / c.k, c.k}};
    for (const DType it : {DType::kInt64, DType::kInt32}) {
      for (const ScatterReduction r : {ScatterReduction::kNone, ScatterReduction::kAdd,
                                       ScatterReduction::kMax}) {
        ScatterParams p = params_for(nd, r, DType::kFloat16, 2, it);
        p.sorted = true;
        const Bytes data = random_values(rng, DType::kFloat16, 2, count(c.data));
        const Bytes upd = random_values(rng, DType::kFloat16, 2, count(updates_shape(nd)));
        EXPECT_EQ(against_twin(p, data, test_util::index_bytes(tuples, it), upd), "")
            << test_util::shape_str(c.data) << " k " << c.k << " reduction " << int(r);
      }
    }
  }
}

// max and min give NaN where either side is NaN, as the twin does (payloads may differ).
TEST(GpuScatter, MaxAndMinPropagateNaN) {
  GPU_TEST_OR_SKIP();
  const Case c{false, 0, {4}, {3}};
  const std::vector<float> data = {1.f, NAN, 3.f, 4.f}, upd = {NAN, 2.f, 5.f};
  const std::vector<int64_t> idx = {0, 1, 3};
  for (const ScatterReduction r : {ScatterReduction::kMax, ScatterReduction::kMin}) {
    const ScatterParams p = params_for(c, r, DType::kFloat32, 4, DType::kInt64);
    const Bytes ib = test_util::index_bytes(idx, DType::kInt64);
    DeviceBuffer dd(16), di(ib.size()), du(12), dy(16);
    dd.upload(data.data(), 16);
    di.upload(ib.data(), ib.size());
    du.upload(upd.data(), 12);
    dy.poison32(gpu_test::kFloatPoison);
    ASSERT_EQ(gpu_test::select_and_launch(kScatter, DType::kFloat32,
                                          gpu_test::step_pointers({&dd, &di, &du}, dy), p),
              "");
    const std::vector<float> y = dy.download<float>(4);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_TRUE(std::isnan(y[1]));
    EXPECT_EQ(y[2], 3.f);
    EXPECT_EQ(y[3], r == ScatterReduction::kMax ? 5.f : 4.f);
  }
}

// Without a GPU: the selector refuses a scatter whose walks would pass its bound, naming the
// sizes, and takes one just under it.
TEST(GpuScatterSelect, RefusesWalksPastTheBound) {
  const Case big{true, 0, {65536, 64}, {65536, 1}};  // 4M elements x 65536 tuples
  const ScatterParams p = params_for(big, ScatterReduction::kNone, DType::kFloat16, 2, DType::kInt64);
  cuda::LaunchChoice choice;
  std::string why;
  ASSERT_FALSE(cuda::select_kernel(gpu_test::step_of(kScatter, &p, DType::kFloat16),
                                   gpu_test::target_with(132), &choice, &why));
  EXPECT_NE(why.find("65536 index reads for each of 4194304 output elements"), std::string::npos)
      << why;
  const Case small{true, 0, {256, 64}, {64, 1}};
  const ScatterParams q = params_for(small, ScatterReduction::kAdd, DType::kFloat16, 2, DType::kInt32);
  ASSERT_TRUE(cuda::select_kernel(gpu_test::step_of(kScatter, &q, DType::kFloat16),
                                  gpu_test::target_with(132), &choice, &why))
      << why;
  EXPECT_STREQ(choice.variant->name, "jp_scatter");
  // The same 4M elements under 65536 sorted tuples: a search of 18 steps each, taken.
  ScatterParams sorted = p;
  sorted.sorted = true;
  EXPECT_TRUE(cuda::select_kernel(gpu_test::step_of(kScatter, &sorted, DType::kFloat16),
                                  gpu_test::target_with(132), &choice, &why))
      << why;
}

}  // namespace
}  // namespace jetplan::kernels
