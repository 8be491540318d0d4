// Pad, broadcast copy (Expand, Tile) and Where of kernels/cpu/tensor_ops.h against references
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

using test_util::broadcast_index;
using test_util::broadcast_shapes;
using test_util::broadcast_strides;
using test_util::Bytes;
using test_util::copy_element;
using test_util::dense_strides;
using test_util::expect_bytes;
using test_util::ravel;
using test_util::Shape;
using test_util::shape_str;
using test_util::to_bytes;
using test_util::unravel;
using test_util::volume;

// ---------------------------------------------------------------------------------------- pad

// The x coordinate of a position outside the kept range [kept[0], kept.back()], `j` places from
// its first element (negative: before it), walked there one step at a time.
int64_t extend(const std::vector<int64_t>& kept, int64_t j, PadMode mode) {
  const int64_t m = int64_t(kept.size());
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return j < 0 ? kept.front() : kept.back();
    case PadMode::kWrap: {
      int64_t p = j;
      while (p < 0) p += m;
      while (p >= m) p -= m;
      return kept[size_t(p)];
    }
    case PadMode::kReflect: {
      if (m == 1) return kept[0];
      int64_t p = j < 0 ? 0 : m - 1, dir = j < 0 ? -1 : 1;
      for (int64_t s = j < 0 ? -j : j - (m - 1); s > 0; --s) {
        if (p + dir < 0 || p + dir >= m) dir = -dir;  // bounce off the end, not repeating it
        p += dir;
      }
      return kept[size_t(p)];
    }
  }
  ADD_FAILURE() << "pad mode " << int(mode) << " has no reference";
  return -1;
}

// For each output position of one dim, the x coordinate it copies, or -1 for the value.
std::vector<int64_t> pad_coords(int64_t n, int64_t begin, int64_t end, PadMode mode) {
  std::vector<int64_t> kept;
  for (int64_t k = begin < 0 ? -begin : 0; k < n - (end < 0 ? -end : 0); ++k) kept.push_back(k);
  std::deque<int64_t> out(kept.begin(), kept.end());
  for (int64_t t = 1; t <= begin; ++t) out.push_front(extend(kept, -t, mode));
  for (int64_t t = 0; t < end; ++t) out.push_back(extend(kept, int64_t(kept.size()) + t, mode));
  return {out.begin(), out.end()};
}

struct PadCase {
  PadParams params;
  Shape out;
  Bytes want;
};

PadCase pad_case(PadMode mode, const Shape& xs, const Bytes& x, const Shape& begin,
                 const Shape& end, const Bytes& value) {
  PadCase c;
  const int64_t elem = int64_t(value.size());
  c.params.mode = mode;
  c.params.rank = int32_t(xs.size());
  c.params.elem_bytes = elem;
  std::memcpy(c.params.value, value.data(), value.size());
  std::vector<std::vector<int64_t>> coords;
  for (size_t d = 0; d < xs.size(); ++d) {
    coords.push_back(pad_coords(xs[d], begin[d], end[d], mode));
    c.out.push_back(int64_t(coords[d].size()));
    c.params.x_dims[d] = xs[d];
    c.params.out_dims[d] = c.out[d];
    c.params.pads_begin[d] = begin[d];
  }
  for (int64_t i = 0; i < volume(c.out); ++i) {
    const Shape oc = unravel(i, c.out);
    Shape xc(xs.size());
    bool inside = true;
    for (size_t d = 0; d < xs.size(); ++d) {
      xc[d] = coords[d][size_t(oc[d])];
      inside = inside && xc[d] >= 0;
    }
    if (inside) {
      c.want.insert(c.want.end(), x.begin() + ravel(xc, xs) * elem,
                    x.begin() + (ravel(xc, xs) + 1) * elem);
    } else {
      c.want.insert(c.want.end(), value.begin(), value.end());
    }
  }
  return c;
}

void expect_pad(const PadCase& c, const void* x) {
  expect_bytes(c.want, c.params.elem_bytes, [&](unsigned char* y) { cpu::pad(c.params, x, y); });
}

// The expected output of a hand case checked against the reference first, so a mistake in either
// shows up as a disagreement of the two before the kernel runs.
void expect_pad_hand(PadMode mode, const std::vector<float>& x, const Shape& xs, const Shape& begin,
                     const Shape& end, float value, const std::vector<float>& want) {
  const PadCase c = pad_case(mode, xs, to_bytes(x), begin, end, to_bytes<float>({value}));
  EXPECT_EQ(c.want, to_bytes(want)) << "the reference disagrees with the hand result";
  expect_bytes(to_bytes(want), 4, [&](unsigned char* y) { cpu::pad(c.params, x.data(), y); });
}

TEST(Pad, OnnxExamples) {
  const std::vector<float> x = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f};  // [3, 2], pads [0,2,0,0]
  expect_pad_hand(PadMode::kConstant, x, {3, 2}, {0, 2}, {0, 0}, 0.f,
                  {0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f});
  expect_pad_hand(PadMode::kReflect, x, {3, 2}, {0, 2}, {0, 0}, 0.f,
                  {1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f});
  expect_pad_hand(PadMode::kEdge, x, {3, 2}, {0, 2}, {0, 0}, 0.f,
                  {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f});
  // wrap with pads [2, 1, 1, 1]: 6 rows of 4.
  expect_pad_hand(PadMode::kWrap, x, {3, 2}, {2, 1}, {1, 1}, 0.f,
                  {3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f,
                   3.4f, 2.3f, 3.4f, 2.3f, 5.7f, 4.5f, 5.7f, 4.5f, 1.2f, 1.0f, 1.2f, 1.0f});
}

TEST(Pad, HandNegativePadsCropFirst) {
  const std::vector<float> x = {1, 2, 3, 4, 5};
  expect_pad_hand(PadMode::kEdge, x, {5}, {-1}, {2}, 0.f, {2, 3, 4, 5, 5, 5});
  expect_pad_hand(PadMode::kReflect, x, {5}, {-1}, {2}, 0.f, {2, 3, 4, 5, 4, 3});
  // Cropped to [1, 2, 3] first, so the reflection of the begin pad reads the cropped tensor.
  expect_pad_hand(PadMode::kReflect, x, {5}, {2}, {-2}, 0.f, {3, 2, 1, 2, 3});
  expect_pad_hand(PadMode::kWrap, x, {5}, {2}, {-2}, 0.f, {2, 3, 1, 2, 3});
  expect_pad_hand(PadMode::kConstant, x, {5}, {-2}, {1}, 9.f, {3, 4, 5, 9});
  expect_pad_hand(PadMode::kConstant, x, {5}, {-3}, {-2}, 9.f, {});
  expect_pad_hand(PadMode::kConstant, x, {5}, {1}, {-5}, 9.f, {9});  // all of x cropped
}

TEST(Pad, HandLongPadsRepeatLikeNumpy) {
  const std::vector<float> x = {1, 2, 3};
  // numpy.pad([1, 2, 3], 5, 'reflect') and numpy.pad([1, 2, 3], 4, 'wrap').
  expect_pad_hand(PadMode::kReflect, x, {3}, {5}, {5}, 0.f,
                  {2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2});
  expect_pad_hand(PadMode::kWrap, x, {3}, {4}, {4}, 0.f, {3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1});
  expect_pad_hand(PadMode::kEdge, x, {3}, {3}, {2}, 0.f, {1, 1, 1, 1, 2, 3, 3, 3});
  expect_pad_hand(PadMode::kReflect, {7}, {1}, {2}, {1}, 0.f, {7, 7, 7, 7});  // one element
}

TEST(Pad, ConstantValueBytesOfEachWidth) {
  const std::vector<int64_t> x = {1, 2};
  const Bytes value = to_bytes<int64_t>({-0x0102030405060708});
  const PadCase c = pad_case(PadMode::kConstant, {2}, to_bytes(x), {1}, {1}, value);
  expect_bytes(to_bytes<int64_t>({-0x0102030405060708, 1, 2, -0x0102030405060708}), 8,
               [&](unsigned char* y) { cpu::pad(c.params, x.data(), y); });
  const Bytes x8 = {1, 2, 3, 4};  // [2, 2] of one-byte elements, value 0xEE
  const PadCase d = pad_case(PadMode::kConstant, {2, 2}, x8, {1, 0}, {0, 1}, {0xEE});
  expect_bytes({0xEE, 0xEE, 0xEE, 1, 2, 0xEE, 3, 4, 0xEE}, 1,
               [&](unsigned char* y) { cpu::pad(d.params, x8.data(), y); });
}

TEST(Pad, RandomPadsEveryMode) {
  SEEDED_RNG(rng);
  for (PadMode mode : {PadMode::kConstant, PadMode::kReflect, PadMode::kEdge, PadMode::kWrap}) {
    for (int trial = 0; trial < 60; ++trial) {
      const Shape xs = rng.shape(size_t(rng.integer(1, 4)), 1, 5);
      Shape begin, end;
      for (int64_t n : xs) {
        int64_t b, e;
        do {  // edge, reflect and wrap need something left after cropping
          b = rng.integer(-2, 5);
          e = rng.integer(-2, 5);
        } while (n + b + e < 0 || (mode != PadMode::kConstant &&
                                   n + std::min<int64_t>(b, 0) + std::min<int64_t>(e, 0) < 1));
        begin.push_back(b);
        end.push_back(e);
      }
      const int64_t elem = int64_t{1} << rng.integer(0, 3);
      const Bytes x = rng.bytes(volume(xs) * elem);
      const PadCase c = pad_case(mode, xs, x, begin, end, rng.bytes(elem));
      SCOPED_TRACE("mode " + std::to_string(int(mode)) + " x " + shape_str(xs) + " begin " +
                   shape_str(begin) + " end " + shape_str(end));
      expect_pad(c, x.data());
    }
  }
}

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
  p.out_dims[0] = 4;
  p.out_dims[1] = 6;
  p.x_dims[0] = 2;
  p.x_dims[1] = 3;
  p.x_strides[0] = 1;
  p.x_strides[1] = 2;
  expect_bytes(tile_reference({2, 3}, view, {2, 2}, 4), 4,
               [&](unsigned char* y) { cpu::broadcast(p, stored.data(), y); });
}

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
