// cpu::arg_reduce and cpu::topk against references written differently: ArgMax/ArgMin with
// std::max_element / min_element over the (possibly reversed) axis, TopK with std::stable_sort
// of (value, index) pairs; plus the ONNX operator examples and hand cases for NaN and ties.

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// --------------------------------------------------------------------------------------- TopK

TopKParams topk_params(int64_t outer, int64_t axis, int64_t inner, int64_t k, bool largest) {
  return TopKParams{outer, axis, inner, k, largest};
}

struct TopKResult {
  Output values;
  IndexOutput indices;
};

TopKResult run_topk(const TopKParams& p, const std::vector<float>& x) {
  TopKResult r{Output(p.outer * p.k * p.inner), IndexOutput(p.outer * p.k * p.inner)};
  Workspace ws(cpu::topk_workspace_bytes(p));
  cpu::topk(p, x.data(), ws.data(), r.values.data(), r.indices.data());
  EXPECT_TRUE(ws.guard_intact()) << "topk wrote past its workspace";
  return r;
}

// std::stable_sort of (value, index) pairs by value alone keeps equal values in index order;
// NaN is mapped to +inf-and-beyond by sorting on (is_nan, value).
void topk_reference(const TopKParams& p, const std::vector<float>& x, std::vector<double>* values,
                    std::vector<int64_t>* indices) {
  values->assign(size_t(p.outer * p.k * p.inner), 0);
  indices->assign(size_t(p.outer * p.k * p.inner), 0);
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t i = 0; i < p.inner; ++i) {
      std::vector<std::pair<float, int64_t>> row;
      for (int64_t j = 0; j < p.axis; ++j) row.push_back({x[size_t((o * p.axis + j) * p.inner + i)], j});
      const auto key = [](float v) { return std::make_pair(std::isnan(v), std::isnan(v) ? 0.f : v); };
      std::stable_sort(row.begin(), row.end(), [&](const auto& a, const auto& b) {
        return p.largest ? key(b.first) < key(a.first) : key(a.first) < key(b.first);
      });
      for (int64_t j = 0; j < p.k; ++j) {
        const size_t out = size_t((o * p.k + j) * p.inner + i);
        (*values)[out] = row[size_t(j)].first;
        (*indices)[out] = row[size_t(j)].second;
      }
    }
}

TEST(TopK, OnnxExamples) {
  const std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  TopKResult top = run_topk(topk_params(3, 4, 1, 3, true), x);
  EXPECT_TRUE(all_close(top.values, {3, 2, 1, 7, 6, 5, 11, 10, 9}, kExact));
  EXPECT_TRUE(all_equal(top.indices, {3, 2, 1, 3, 2, 1, 3, 2, 1}));
  const std::vector<float> y = {0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8};
  TopKResult small = run_topk(topk_params(3, 4, 1, 3, false), y);
  EXPECT_TRUE(all_close(small.values, {0, 1, 2, 4, 5, 6, 8, 9, 10}, kExact));
  EXPECT_TRUE(all_equal(small.indices, {0, 1, 2, 0, 1, 2, 3, 2, 1}));
}

TEST(TopK, TiesByLowerIndexAndNaNAboveEverything) {
  const std::vector<float> x = {1, 3, NAN, 3, -0.f, 0.f, 1, NAN};
  TopKResult top = run_topk(topk_params(1, 8, 1, 8, true), x);
  EXPECT_TRUE(all_equal(top.indices, {2, 7, 1, 3, 0, 6, 4, 5}));
  TopKResult low = run_topk(topk_params(1, 8, 1, 5, false), x);
  EXPECT_TRUE(all_equal(low.indices, {4, 5, 0, 6, 1}));
  EXPECT_TRUE(all_close(low.values, {0, 0, 1, 1, 3}, kExact));
  // k = 0 writes nothing.
  TopKResult none = run_topk(topk_params(1, 8, 1, 0, true), x);
  EXPECT_TRUE(none.values.guard_intact() && none.indices.guard_intact());
}

TEST(TopK, RandomAgainstStableSort) {
  SEEDED_RNG(rng);
  for (bool largest : {true, false})
    for (const auto& [outer, axis, inner] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                                             {2, 9, 1}, {3, 17, 4}, {1, 200, 2}, {5, 6, 3}})
      for (int64_t k : {int64_t(1), axis / 2, axis}) {
        SCOPED_TRACE("largest " + std::to_string(largest) + " axis " + std::to_string(axis) +
                     " k " + std::to_string(k));
        const TopKParams p = topk_params(outer, axis, inner, k, largest);
        // Integers: many ties; some NaN.
        std::vector<float> x = rng.integers(outer * axis * inner, -5, 5);
        for (float& v : x)
          if (rng.integer(0, 19) == 0) v = NAN;
        std::vector<double> want_values;
        std::vector<int64_t> want_indices;
        topk_reference(p, x, &want_values, &want_indices);
        TopKResult got = run_topk(p, x);
        EXPECT_TRUE(all_equal(got.indices, want_indices));
        // Values: equal where the reference is a number, NaN (not poison) where it is NaN.
        for (size_t i = 0; i < want_values.size(); ++i) {
          if (std::isnan(want_values[i])) {
            EXPECT_TRUE(std::isnan(got.values[int64_t(i)]) && !is_poison(got.values[int64_t(i)]));
            want_values[i] = 0;
            got.values.data()[i] = 0;
          }
        }
        EXPECT_TRUE(all_close(got.values, want_values, kExact));
      }
}

}  // namespace
}  // namespace jetplan::kernels
