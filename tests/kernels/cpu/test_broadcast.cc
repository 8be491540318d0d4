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

// ---------------------------------------------------------------------------------- broadcast

TEST(Broadcast, OnnxExpandAndTileExamples) {
  // Expand [[1], [2], [3]] to [2, 1, 6]: output [2, 3, 6].
  const std::vector<float> x = {1, 2, 3};
  BroadcastParams e;
  e.rank = 3;
  const int64_t e_out[3] = {2, 3, 6}, e_x[3] = {1, 3, 1}, e_strides[3] = {0, 1, 0};
  for (int d = 0; d < 3; ++d) {
    e.out_dims[d] = e_out[d];
    e.x_dims[d] = e_x[d];
    e.x_strides[d] = e_strides[d];
  }
  std::vector<float> want;
  for (int r = 0; r < 2; ++r)
    for (float v : x) want.insert(want.end(), 6, v);
  expect_bytes(to_bytes(want), 4, [&](unsigned char* y) { cpu::broadcast(e, x.data(), y); });

  // Tile [[0, 1], [2, 3]] by [2, 2].
  const std::vector<int32_t> t = {0, 1, 2, 3};
  BroadcastParams p;
  p.rank = 2;
  p.elem_bytes = 4;
  p.out_dims[0] = p.out_dims[1] = 4;
  p.x_dims[0] = p.x_dims[1] = 2;
  p.x_strides[0] = 2;
  p.x_strides[1] = 1;
  expect_bytes(to_bytes<int32_t>({0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3}), 4,
               [&](unsigned char* y) { cpu::broadcast(p, t.data(), y); });
}

TEST(Broadcast, RandomExpandBothEncodings) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const Shape out = rng.shape(size_t(rng.integer(0, 6)), 1, 4);
    Shape xs(out.begin() + rng.integer(0, int64_t(out.size())), out.end());
    for (int64_t& d : xs)
      if (rng.integer(0, 1)) d = 1;
    const int64_t elem = int64_t{1} << rng.integer(0, 3);
    const Bytes x = rng.bytes(volume(xs) * elem);
    Bytes want(size_t(volume(out) * elem));
    for (int64_t i = 0; i < volume(out); ++i)
      copy_element(x, broadcast_index(unravel(i, out), xs), want, i, elem);
    SCOPED_TRACE("x " + shape_str(xs) + " out " + shape_str(out));

    // x_dims of 1 with dense strides, and x_dims equal to the output's with stride 0.
    BroadcastParams ones, zeros;
    ones.rank = zeros.rank = int32_t(out.size());
    ones.elem_bytes = zeros.elem_bytes = elem;
    const size_t lead = out.size() - xs.size();
    const Shape dense = dense_strides(xs);
    broadcast_strides(xs, out, zeros.x_strides);
    for (size_t d = 0; d < out.size(); ++d) {
      ones.out_dims[d] = zeros.out_dims[d] = out[d];
      ones.x_dims[d] = d < lead ? 1 : xs[d - lead];
      ones.x_strides[d] = d < lead ? 0 : dense[d - lead];
      zeros.x_dims[d] = out[d];
    }
    expect_bytes(want, elem, [&](unsigned char* y) { cpu::broadcast(ones, x.data(), y); });
    expect_bytes(want, elem, [&](unsigned char* y) { cpu::broadcast(zeros, x.data(), y); });
  }
}

// Tile as a scatter: x element at xc lands at r * x_dims + xc for every repeat coordinate r.
Bytes tile_reference(const Shape& xs, const Bytes& x, const Shape& repeats, int64_t elem) {
  Shape out(xs.size());
  for (size_t d = 0; d < xs.size(); ++d) out[d] = xs[d] * repeats[d];
  Bytes y(size_t(volume(out) * elem));
  for (int64_t e = 0; e < volume(xs); ++e) {
    const Shape xc = unravel(e, xs);
    for (int64_t r = 0; r < volume(repeats); ++r) {
      const Shape rc = unravel(r, repeats);
      Shape oc(xs.size());
      for (size_t d = 0; d < xs.size(); ++d) oc[d] = rc[d] * xs[d] + xc[d];
      copy_element(x, e, y, ravel(oc, out), elem);
    }
  }
  return y;
}

TEST(Broadcast, RandomTile) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 80; ++trial) {
    const size_t rank = size_t(rng.integer(1, 5));
    const Shape xs = rng.shape(rank, 1, 4), repeats = rng.shape(rank, 1, 3);
    const int64_t elem = int64_t{1} << rng.integer(0, 3);
    const Bytes x = rng.bytes(volume(xs) * elem);
    BroadcastParams p;
    p.rank = int32_t(rank);
    p.elem_bytes = elem;
    const Shape dense = dense_strides(xs);
    for (size_t d = 0; d < rank; ++d) {
      p.out_dims[d] = xs[d] * repeats[d];
      p.x_dims[d] = xs[d];
      p.x_strides[d] = dense[d];
    }
    SCOPED_TRACE("x " + shape_str(xs) + " repeats " + shape_str(repeats));
    expect_bytes(tile_reference(xs, x, repeats, elem), elem,
                 [&](unsigned char* y) { cpu::broadcast(p, x.data(), y); });
  }
}

TEST(Broadcast, TileOfATransposedView) {
  SEEDED_RNG(rng);
  // x stored [3, 2] and read as its transpose [2, 3], tiled by [2, 2].
  const Bytes stored = rng.bytes(6 * 4);
  Bytes view(stored.size());
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) copy_element(stored, j * 2 + i, view, i * 3 + j, 4);
  BroadcastParams p;
  p.rank = 2;
  set_dims(p.out_dims, {4, 6});
  set_dims(p.x_dims, {2, 3});
  set_dims(p.x_strides, {1, 2});
  expect_bytes(tile_reference({2, 3}, view, {2, 2}, 4), 4,
               [&](unsigned char* y) { cpu::broadcast(p, stored.data(), y); });
}

}  // namespace
}  // namespace jetplan::kernels
