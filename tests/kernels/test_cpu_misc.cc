// cpu::softmax, cpu::batch_norm, cpu::concat and cpu::copy against references written here:
// softmax shifted by a row's first element, batch norm by its formula in double, concat copied
// element by element from 3-D coordinates, and hand-computed cases.
// Every output is poisoned before each call and has a guard zone after its end; every
// comparison fails on NaN; inputs come from a seeded std::mt19937 whose seed is printed with any
// failure (JETPLAN_TEST_SEED=<n> replays it). See tests/kernels/kernel_test_util.h.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// ---------------------------------------------------------------------------------- softmax

// Shifted by the first element of each row rather than the max: a different route to the same
// stable result, fine for rows whose spread is far below the exp overflow threshold.
std::vector<double> softmax_reference(const std::vector<float>& x, int64_t outer, int64_t axis,
                                      int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return size_t((o * axis + j) * inner + i); };
      const double shift = x[at(0)];
      double sum = 0;
      for (int64_t j = 0; j < axis; ++j) sum += std::exp(x[at(j)] - shift);
      for (int64_t j = 0; j < axis; ++j)
        y[at(j)] = log ? (x[at(j)] - shift) - std::log(sum) : std::exp(x[at(j)] - shift) / sum;
    }
  return y;
}

Output run_softmax(const std::vector<float>& x, int64_t outer, int64_t axis, int64_t inner,
                   bool log) {
  Output y(outer * axis * inner);
  cpu::softmax({outer, axis, inner, log}, x.data(), y.data());
  return y;
}

// Sum over the axis of each (outer, inner) row, of exp(y) for a log softmax.
std::vector<double> row_sums(const Output& y, int64_t outer, int64_t axis, int64_t inner,
                             bool log) {
  std::vector<double> sums;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double s = 0;
      for (int64_t j = 0; j < axis; ++j) {
        const double v = y[(o * axis + j) * inner + i];
        s += log ? std::exp(v) : v;
      }
      sums.push_back(s);
    }
  return sums;
}

constexpr Tolerance kSoftmaxTol{1e-6, 1e-7};

TEST(Softmax, Hand) {
  const std::vector<float> x = {1, 2, 3};
  EXPECT_TRUE(all_close(run_softmax(x, 1, 3, 1, false), {0.0900305732, 0.244728471, 0.665240956},
                        kSoftmaxTol));
  EXPECT_TRUE(all_close(run_softmax(x, 1, 3, 1, true),
                        {-2.40760596, -1.40760596, -0.407605964}, kSoftmaxTol));
  // A single element along the axis is certain.
  EXPECT_TRUE(all_close(run_softmax(x, 3, 1, 1, false), {1, 1, 1}, kExact));
  EXPECT_TRUE(all_close(run_softmax(x, 1, 1, 3, true), {0, 0, 0}, kExact));
}

TEST(Softmax, RandomRowsAndInnerAxis) {
  SEEDED_RNG(rng);
  for (int64_t inner : {1, 5}) {
    for (bool log : {false, true}) {
      SCOPED_TRACE("inner " + std::to_string(inner) + (log ? " log" : ""));
      const int64_t outer = 3, axis = 7;
      const std::vector<float> x = rng.uniform(outer * axis * inner, -5.f, 5.f);
      const Output y = run_softmax(x, outer, axis, inner, log);
      EXPECT_TRUE(all_close(y, softmax_reference(x, outer, axis, inner, log), kSoftmaxTol));
      EXPECT_TRUE(all_close(row_sums(y, outer, axis, inner, log),
                            std::vector<double>(size_t(outer * inner), 1.0), {0, 1e-6}));
    }
  }
}

TEST(Softmax, LargeInputsDoNotOverflow) {
  SEEDED_RNG(rng);
  for (float center : {1000.f, -1000.f, 80.f}) {
    for (bool log : {false, true}) {
      SCOPED_TRACE("center " + std::to_string(center) + (log ? " log" : ""));
      const int64_t outer = 2, axis = 9, inner = 3;
      std::vector<float> x = rng.uniform(outer * axis * inner, -10.f, 10.f);
      for (float& v : x) v += center;
      const Output y = run_softmax(x, outer, axis, inner, log);
      EXPECT_TRUE(all_close(y, softmax_reference(x, outer, axis, inner, log), kSoftmaxTol));
      EXPECT_TRUE(all_close(row_sums(y, outer, axis, inner, log),
                            std::vector<double>(size_t(outer * inner), 1.0), {0, 1e-6}));
    }
  }
  // A spread of 2000 along one row: the small entries underflow to exactly 0, the large one is 1.
  const std::vector<float> wide = {1000.f, -1000.f, 0.f};
  EXPECT_TRUE(all_close(run_softmax(wide, 1, 3, 1, false), {1, 0, 0}, kExact));
  EXPECT_TRUE(all_close(run_softmax(wide, 1, 3, 1, true), {0, -2000, -1000}, {1e-6, 0}));
}

// ------------------------------------------------------------------------------- batch norm

TEST(BatchNorm, Hand) {
  // Channel 0: 2 (x - 1) / 2 + 1 = x. Channel 1: 0.5 (x - 2) / 0.5 - 1 = x - 3.
  const std::vector<float> x = {1, 2, 3, 4}, scale = {2, 0.5f}, bias = {1, -1}, mean = {1, 2},
                           var = {4, 0.25f};
  BatchNormParams p;
  p.channels = 2;
  p.spatial = 2;
  p.epsilon = 0.f;
  Output y(4);
  cpu::batch_norm(p, x.data(), scale.data(), bias.data(), mean.data(), var.data(), y.data());
  EXPECT_TRUE(all_close(y, {1, 2, 0, 1}, kExact));

  // Epsilon is added to var: var 0 with epsilon 1 divides by 1.
  const std::vector<float> zero_var = {0, 0};
  p.epsilon = 1.f;
  Output z(4);
  cpu::batch_norm(p, x.data(), scale.data(), bias.data(), mean.data(), zero_var.data(), z.data());
  EXPECT_TRUE(all_close(z, {1, 3, -0.5, 0}, kExact));
}

TEST(BatchNorm, RandomMatchesFormula) {
  SEEDED_RNG(rng);
  BatchNormParams p;
  p.batch = 3;
  p.channels = 5;
  p.spatial = 7;
  p.epsilon = 1e-3f;
  const std::vector<float> x = rng.uniform(p.batch * p.channels * p.spatial, -3.f, 3.f);
  const std::vector<float> scale = rng.uniform(p.channels, -2.f, 2.f);
  const std::vector<float> bias = rng.uniform(p.channels, -1.f, 1.f);
  const std::vector<float> mean = rng.uniform(p.channels, -1.f, 1.f);
  const std::vector<float> var = rng.uniform(p.channels, 0.05f, 2.f);
  std::vector<double> want;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.channels; ++c) {
      const double factor =
          scale[size_t(c)] / std::sqrt(double{var[size_t(c)]} + double{p.epsilon});
      for (int64_t s = 0; s < p.spatial; ++s)
        want.push_back((x[size_t((n * p.channels + c) * p.spatial + s)] - double{mean[size_t(c)]}) *
                           factor +
                       bias[size_t(c)]);
    }
  Output y(p.batch * p.channels * p.spatial);
  cpu::batch_norm(p, x.data(), scale.data(), bias.data(), mean.data(), var.data(), y.data());
  EXPECT_TRUE(all_close(y, want, {1e-6, 1e-6}));

  // channels_last: x and y [batch, spatial, channels], the same values moved.
  std::vector<float> x_nhwc(x.size());
  std::vector<double> want_nhwc(want.size());
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.channels; ++c)
      for (int64_t s = 0; s < p.spatial; ++s) {
        const size_t from = size_t((n * p.channels + c) * p.spatial + s);
        const size_t to = size_t((n * p.spatial + s) * p.channels + c);
        x_nhwc[to] = x[from];
        want_nhwc[to] = want[from];
      }
  p.channels_last = true;
  Output z(p.batch * p.channels * p.spatial);
  cpu::batch_norm(p, x_nhwc.data(), scale.data(), bias.data(), mean.data(), var.data(), z.data());
  EXPECT_TRUE(all_close(z, want_nhwc, {1e-6, 1e-6})) << "channels_last";
}

// --------------------------------------------------------------------------- concat and copy

using ConcatCase = std::tuple<int /*axis of a rank-3 tensor*/, int /*elem_bytes*/>;
class ConcatMatrix : public testing::TestWithParam<ConcatCase> {};

// Output built element by element from 3-D coordinates, not from outer/inner rows.
Bytes concat_reference(const std::vector<Shape>& shapes, const std::vector<Bytes>& inputs,
                       int axis, int64_t elem_bytes) {
  Shape out = shapes[0];
  out[size_t(axis)] = 0;
  for (const Shape& s : shapes) out[size_t(axis)] += s[size_t(axis)];
  Bytes y(size_t(volume(out) * elem_bytes));
  int64_t offset = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (int64_t e = 0; e < volume(shapes[i]); ++e) {
      Shape c = unravel(e, shapes[i]);
      c[size_t(axis)] += offset;
      std::copy_n(inputs[i].begin() + e * elem_bytes, elem_bytes,
                  y.begin() + ravel(c, out) * elem_bytes);
    }
    offset += shapes[i][size_t(axis)];
  }
  return y;
}

TEST_P(ConcatMatrix, ThreeInputsMatchCoordinateCopy) {
  SEEDED_RNG(rng);
  const auto [axis, elem_bytes] = GetParam();
  const Shape base = {2, 3, 4};
  const int64_t lens[3] = {1, 3, 2};
  std::vector<Shape> shapes;
  std::vector<Bytes> inputs;
  std::vector<const void*> pointers;
  ConcatParams p;
  p.elem_bytes = elem_bytes;
  p.num_inputs = 3;
  for (int i = 0; i < 3; ++i) {
    Shape s = base;
    s[size_t(axis)] = lens[i];
    shapes.push_back(s);
    inputs.push_back(rng.bytes(volume(s) * elem_bytes));
    p.axis_len[i] = lens[i];
  }
  for (const Bytes& in : inputs) pointers.push_back(in.data());
  p.outer = 1;
  for (int d = 0; d < axis; ++d) p.outer *= base[size_t(d)];
  p.inner = 1;
  for (int d = axis + 1; d < 3; ++d) p.inner *= base[size_t(d)];

  const Bytes want = concat_reference(shapes, inputs, axis, elem_bytes);
  for (unsigned char poison : kBytePoisons) {
    ByteOutput y(int64_t(want.size()), poison);
    cpu::concat(p, pointers.data(), y.data());
    EXPECT_TRUE(y.equals(want));
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, ConcatMatrix,
                         testing::Combine(testing::Values(0, 1, 2), testing::Values(1, 2, 4, 8)),
                         [](const testing::TestParamInfo<ConcatCase>& info) {
                           return "axis" + std::to_string(std::get<0>(info.param)) + "_" +
                                  std::to_string(std::get<1>(info.param)) + "bytes";
                         });

TEST(Concat, MaxInputsAndAnEmptyOne) {
  SEEDED_RNG(rng);
  const int64_t outer = 2, inner = 3, elem_bytes = 4;
  ConcatParams p;
  p.outer = outer;
  p.inner = inner;
  p.elem_bytes = elem_bytes;
  p.num_inputs = kMaxConcatInputs;
  std::vector<Shape> shapes;
  std::vector<Bytes> inputs;
  std::vector<const void*> pointers;
  for (int i = 0; i < kMaxConcatInputs; ++i) {
    const int64_t len = i == 5 ? 0 : 1 + i % 3;  // input 5 is empty and passed as null
    shapes.push_back({outer, len, inner});
    inputs.push_back(rng.bytes(outer * len * inner * elem_bytes));
    p.axis_len[i] = len;
  }
  for (const Bytes& in : inputs) pointers.push_back(in.empty() ? nullptr : in.data());
  const Bytes want = concat_reference(shapes, inputs, 1, elem_bytes);
  for (unsigned char poison : kBytePoisons) {
    ByteOutput y(int64_t(want.size()), poison);
    cpu::concat(p, pointers.data(), y.data());
    EXPECT_TRUE(y.equals(want));
  }
}

TEST(Copy, BytesArriveExactly) {
  SEEDED_RNG(rng);
  for (int64_t n : {1, 37, 4096}) {
    SCOPED_TRACE(std::to_string(n) + " bytes");
    const Bytes x = rng.bytes(n);
    for (unsigned char poison : kBytePoisons) {
      ByteOutput y(n, poison);
      cpu::copy({n}, x.data(), y.data());
      EXPECT_TRUE(y.equals(x));
    }
  }
}

TEST(Copy, InPlaceKeepsTheData) {
  SEEDED_RNG(rng);
  const Bytes x = rng.bytes(1000);
  Bytes buf = x;
  cpu::copy({int64_t(buf.size())}, buf.data(), buf.data());
  EXPECT_EQ(buf, x);
}

TEST(Copy, ZeroBytesWritesNothing) {
  const Bytes x = {1, 2, 3};
  for (unsigned char poison : kBytePoisons) {
    ByteOutput y(3, poison);
    cpu::copy({0}, x.data(), y.data());
    EXPECT_TRUE(y.equals(Bytes(3, poison)));
  }
}

}  // namespace
}  // namespace jetplan::kernels
