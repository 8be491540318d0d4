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

// ------------------------------------------------------------------------------ ArgMax / Min

ArgReduceParams arg_params(ArgKind kind, bool last, int64_t outer, int64_t axis, int64_t inner) {
  return ArgReduceParams{kind, last, outer, axis, inner};
}

IndexOutput run_arg(const ArgReduceParams& p, const std::vector<float>& x) {
  IndexOutput y(p.outer * p.inner);
  cpu::arg_reduce(p, x.data(), y.data());
  return y;
}

TEST(ArgReduce, OnnxExamples) {
  const std::vector<float> x = {2, 1, 3, 10};  // [2, 2]
  EXPECT_TRUE(all_equal(run_arg(arg_params(ArgKind::kMax, false, 1, 2, 2), x), {1, 1}));
  EXPECT_TRUE(all_equal(run_arg(arg_params(ArgKind::kMax, false, 2, 2, 1), x), {0, 1}));
  EXPECT_TRUE(all_equal(run_arg(arg_params(ArgKind::kMin, false, 2, 2, 1), x), {1, 0}));
  const std::vector<float> ties = {2, 2, 3, 10};
  EXPECT_TRUE(all_equal(run_arg(arg_params(ArgKind::kMax, true, 2, 2, 1), ties), {1, 1}));
  EXPECT_TRUE(all_equal(run_arg(arg_params(ArgKind::kMax, false, 2, 2, 1), ties), {0, 1}));
  EXPECT_TRUE(all_equal(run_arg(arg_params(ArgKind::kMin, true, 2, 2, 1), ties), {1, 0}));
}

TEST(ArgReduce, NaNIsTheExtremeForBothKinds) {
  const std::vector<float> x = {1, NAN, 5, NAN, -7};
  for (ArgKind kind : {ArgKind::kMax, ArgKind::kMin}) {
    EXPECT_TRUE(all_equal(run_arg(arg_params(kind, false, 1, 5, 1), x), {1}));
    EXPECT_TRUE(all_equal(run_arg(arg_params(kind, true, 1, 5, 1), x), {3}));
  }
}

// Scans the axis with std::max_element / min_element (first extreme) or over the reversed axis
// (last extreme).
std::vector<int64_t> arg_reference(const ArgReduceParams& p, const std::vector<float>& x) {
  std::vector<int64_t> y;
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t i = 0; i < p.inner; ++i) {
      std::vector<float> row;
      for (int64_t j = 0; j < p.axis; ++j) row.push_back(x[size_t((o * p.axis + j) * p.inner + i)]);
      if (p.select_last_index) std::reverse(row.begin(), row.end());
      const auto it = p.kind == ArgKind::kMax ? std::max_element(row.begin(), row.end())
                                              : std::min_element(row.begin(), row.end());
      const int64_t j = it - row.begin();
      y.push_back(p.select_last_index ? p.axis - 1 - j : j);
    }
  return y;
}

TEST(ArgReduce, RandomWithTies) {
  SEEDED_RNG(rng);
  for (ArgKind kind : {ArgKind::kMax, ArgKind::kMin})
    for (bool last : {false, true})
      for (const auto& [outer, axis, inner] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                                               {3, 7, 1}, {2, 5, 4}, {1, 33, 3}, {4, 2, 5}}) {
        SCOPED_TRACE("kind " + std::to_string(int(kind)) + " last " + std::to_string(last) +
                     " axis " + std::to_string(axis));
        const ArgReduceParams p = arg_params(kind, last, outer, axis, inner);
        const std::vector<float> x = rng.integers(outer * axis * inner, -3, 3);
        EXPECT_TRUE(all_equal(run_arg(p, x), arg_reference(p, x)));
      }
}

}  // namespace
}  // namespace jetplan::kernels
