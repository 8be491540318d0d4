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

}  // namespace
}  // namespace jetplan::kernels
