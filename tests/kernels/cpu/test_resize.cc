// cpu::resize against a port of the ONNX Python reference's algorithm: separable 1D passes,
// innermost dim first, each output sample taking the n nearest samples of the edge-padded line
// (ties to the smaller index) with the reference's coefficient rules. The kernel instead sums over
// a product of per-dim taps in one pass. The ONNX backend test data is in cpu/test_resize_onnx_nodes.cc.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/resize_case.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// -------------------------------------------------------------------- the ONNX reference, ported

// The n indices of [0, limit) nearest to x, ties to the smaller, in ascending order.
std::vector<int64_t> nearest_indices(double x, int n, int64_t limit) {
  std::vector<int64_t> all(static_cast<size_t>(limit));
  for (int64_t i = 0; i < limit; ++i) all[size_t(i)] = i;
  std::sort(all.begin(), all.end(), [x](int64_t a, int64_t b) {
    const double da = std::fabs(x - a), db = std::fabs(x - b);
    return da < db || (da == db && a < b);
  });
  all.resize(size_t(n));
  std::sort(all.begin(), all.end());
  return all;
}

// One output sample of a 1D line, as _interpolate_1d_with_x computes it (output_width = in *
// scale, or out for sizes; pytorch_half_pixel gives 0 at length 1 as the operator text says, where
// the reference has -0.5).
double interpolate_1d(const std::vector<double>& line, const ResizeCase& c, size_t d, int64_t x) {
  const double in = double(line.size()), out = c.length[d], s = c.scale[d];
  double xo = 0;
  switch (c.coord) {
    case ResizeCoord::kHalfPixel: xo = (x + 0.5) / s - 0.5; break;
    case ResizeCoord::kPytorchHalfPixel: xo = out == 1 ? 0.0 : (x + 0.5) / s - 0.5; break;
    case ResizeCoord::kAlignCorners: xo = out == 1 ? 0.0 : x * (in - 1) / (out - 1); break;
    case ResizeCoord::kAsymmetric: xo = x / s; break;
    case ResizeCoord::kTfHalfPixelForNn: xo = (x + 0.5) / s; break;
    case ResizeCoord::kTfCropAndResize: {
      const double r0 = c.roi_start.empty() ? 0 : c.roi_start[d];
      const double r1 = c.roi_start.empty() ? 1 : c.roi_end[d];
      xo = out == 1 ? (r1 - r0) * (in - 1) / 2 : x * (r1 - r0) * (in - 1) / (out - 1);
      xo += r0 * (in - 1);
      if (xo < 0 || xo > in - 1) return c.extrapolation;
      break;
    }
  }
  const double ratio = xo == std::floor(xo) ? 1.0 : xo - std::floor(xo);
  std::vector<double> coeffs;
  switch (c.mode) {
    case ResizeMode::kNearest:
      if (ratio == 1.0) coeffs = {0, 1};
      else if (c.nearest == ResizeNearest::kRoundPreferFloor) coeffs = {double(ratio <= 0.5), double(ratio > 0.5)};
      else if (c.nearest == ResizeNearest::kRoundPreferCeil) coeffs = {double(ratio < 0.5), double(ratio >= 0.5)};
      else if (c.nearest == ResizeNearest::kFloor) coeffs = {1, 0};
      else coeffs = {0, 1};
      break;
    case ResizeMode::kLinear:
      coeffs = {1 - ratio, ratio};
      break;
    case ResizeMode::kCubic: {
      const double A = c.a, r = ratio;
      coeffs = {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
                ((A + 2) * r - (A + 3)) * r * r + 1,
                ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1,
                ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A};
      break;
    }
  }
  const int n = int(coeffs.size());
  const int64_t pad = (n + 1) / 2;
  std::vector<double> padded;
  for (int64_t i = -pad; i < int64_t(line.size()) + pad; ++i)
    padded.push_back(line[size_t(std::min(std::max<int64_t>(i, 0), int64_t(line.size()) - 1))]);
  const std::vector<int64_t> idx = nearest_indices(xo + pad, n, int64_t(padded.size()));
  // The reference applies exclude_outside to every mode; it matters only to cubic (nearest and
  // linear taps outside the input read the edge element the inner tap reads), and for nearest
  // it can zero the only weight, so the kernel and this port apply it to cubic alone.
  if (c.exclude_outside && c.mode == ResizeMode::kCubic) {
    double sum = 0;
    for (int k = 0; k < n; ++k) {
      const int64_t orig = idx[size_t(k)] - pad;
      if (orig < 0 || orig >= int64_t(line.size())) coeffs[size_t(k)] = 0;
      sum += coeffs[size_t(k)];
    }
    for (double& w : coeffs) w /= sum;
  }
  double v = 0;
  for (int k = 0; k < n; ++k) v += coeffs[size_t(k)] * padded[size_t(idx[size_t(k)])];
  return v;
}

std::vector<double> resize_reference(const ResizeCase& c, const std::vector<float>& x) {
  Shape shape = c.in;
  std::vector<double> t(x.begin(), x.end());
  for (size_t d = c.in.size(); d-- > 0;) {
    Shape next = shape;
    next[d] = c.out[d];
    std::vector<double> u(size_t(volume(next)));
    for (int64_t i = 0; i < volume(next); ++i) {
      Shape coord = unravel(i, next);
      std::vector<double> line;
      for (int64_t j = 0; j < shape[d]; ++j) {
        coord[d] = j;
        line.push_back(t[size_t(ravel(coord, shape))]);
      }
      u[size_t(i)] = interpolate_1d(line, c, d, unravel(i, next)[d]);
    }
    t = u;
    shape = next;
  }
  return t;
}

// ------------------------------------------------------------------------- hand properties

TEST(Resize, UnitScaleIsIdentityForEveryModeAndCoord) {
  SEEDED_RNG(rng);
  const Shape s = {2, 3, 5};
  const std::vector<float> x = rng.uniform(volume(s), -4.f, 4.f);
  std::vector<double> want(x.begin(), x.end());
  for (ResizeMode mode : {kNearest, kLinear, kCubic})
    for (int coord = 0; coord < kResizeCoordCount; ++coord) {
      if (ResizeCoord(coord) == ResizeCoord::kTfHalfPixelForNn) continue;  // shifts by half
      SCOPED_TRACE("mode " + std::to_string(int(mode)) + " coord " + std::to_string(coord));
      ResizeCase c;
      c.mode = mode;
      c.coord = ResizeCoord(coord);
      c.in = c.out = s;
      c.scale = {1, 1, 1};
      c.length = {2, 3, 5};
      c.exclude_outside = coord % 2 == 1;
      EXPECT_TRUE(all_close(run_resize(c, x), want, kExact));
    }
}

TEST(Resize, ExactSampleIsNotPoisonedByAnInfiniteNeighbour) {
  // asymmetric x2: even outputs fall on input samples and must not read the neighbour (0 * inf).
  ResizeCase c;
  c.mode = kLinear;
  c.coord = ResizeCoord::kAsymmetric;
  c.in = {3};
  c.out = {6};
  c.scale = {2};
  c.length = {6};
  const std::vector<float> x = {1.f, INFINITY, 3.f};
  const Output y = run_resize(c, x);
  EXPECT_EQ(y[0], 1.f);
  EXPECT_EQ(y[2], INFINITY);
  EXPECT_EQ(y[4], 3.f);
  EXPECT_EQ(y[5], 3.f);  // past the end: both taps clamp to the edge
  EXPECT_TRUE(y.guard_intact());
}

TEST(Resize, Rank1HandLinearHalfPixelEdges) {
  // 2 -> 4, c = (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25: the ends clamp to the edge.
  ResizeCase c;
  c.mode = kLinear;
  c.in = {2};
  c.out = {4};
  c.scale = {2};
  c.length = {4};
  EXPECT_TRUE(all_close(run_resize(c, {10.f, 20.f}), {10, 12.5, 17.5, 20}, kExact));
}

// ---------------------------------------------------------------------- random vs reference

ResizeCase random_case(SeededRng& rng, int rank, ResizeMode mode, ResizeCoord coord) {
  ResizeCase c;
  c.mode = mode;
  c.coord = coord;
  c.nearest = ResizeNearest(rng.integer(0, kResizeNearestCount - 1));
  c.a = rng.coin() ? -0.75f : -0.5f;
  c.exclude_outside = rng.coin();
  c.extrapolation = rng.uniform(-5.f, 5.f);
  static const float kScales[] = {0.5f, 0.6f, 0.75f, 0.8f, 1.f, 1.3f, 1.5f, 2.f, 2.5f, 3.f};
  for (int d = 0; d < rank; ++d) {
    const bool batch_like = rank >= 3 && d == 0;  // N stays put
    const int64_t in = batch_like ? 2 : rng.integer(1, 6);
    double scale = 1, length = double(in);
    int64_t out = in;
    if (!batch_like) {
      if (rng.coin()) {  // sizes
        out = rng.integer(1, 9);
        scale = double(out) / double(in);
        length = double(out);
      } else {  // scales
        float s = kScales[rng.integer(0, 9)];
        while (double(in) * double(s) < 1) s = kScales[rng.integer(0, 9)];
        length = double(in) * double(s);
        out = int64_t(std::floor(length));
        scale = s;
      }
    }
    c.in.push_back(in);
    c.out.push_back(out);
    c.scale.push_back(scale);
    c.length.push_back(length);
    const float start = batch_like ? 0.f : rng.uniform(-0.2f, 0.6f);
    c.roi_start.push_back(start);
    c.roi_end.push_back(batch_like ? 1.f : rng.uniform(start + 0.1f, 1.3f));
  }
  return c;
}

TEST(Resize, RandomEveryModeAndCoordMatchesOnnxReference) {
  SEEDED_RNG(rng);
  for (ResizeMode mode : {kNearest, kLinear, kCubic})
    for (int coord = 0; coord < kResizeCoordCount; ++coord)
      for (int rank = 1; rank <= 4; ++rank)
        for (int rep = 0; rep < 6; ++rep) {
          const ResizeCase c = random_case(rng, rank, mode, ResizeCoord(coord));
          SCOPED_TRACE("mode " + std::to_string(int(mode)) + " coord " + std::to_string(coord) +
                       " nearest " + std::to_string(int(c.nearest)) + " rank " +
                       std::to_string(rank) + " exclude " + std::to_string(c.exclude_outside));
          const std::vector<float> x = rng.uniform(volume(c.in), -1.f, 1.f);
          ASSERT_TRUE(all_close(run_resize(c, x), resize_reference(c, x), {1e-5, 1e-5}));
        }
}

// Int8 in the input's scale (an INT8 plan's nearest and linear Resizes, cpu::resize_int8, the
// GPU's arithmetic): against the ONNX reference over the integers (in double), nearest exactly,
// linear rounded to the nearest integer: within 0.5 + 1e-3 of the reference (the float weights
// and sums move it by ~1e-5, which can flip only a near-exact tie).
TEST(Resize, Int8NearestAndLinearMatchOnnxReference) {
  SEEDED_RNG(rng);
  for (ResizeMode mode : {kNearest, kLinear})
    for (int coord = 0; coord < kResizeCoordCount; ++coord) {
      if (ResizeCoord(coord) == ResizeCoord::kTfCropAndResize) continue;  // no Int8 form
      for (int rank = 1; rank <= 4; ++rank)
        for (int rep = 0; rep < 6; ++rep) {
          const ResizeCase c = random_case(rng, rank, mode, ResizeCoord(coord));
          SCOPED_TRACE("mode " + std::to_string(int(mode)) + " coord " + std::to_string(coord) +
                       " nearest " + std::to_string(int(c.nearest)) + " rank " +
                       std::to_string(rank));
          std::vector<int8_t> xq(static_cast<size_t>(volume(c.in)));
          std::vector<float> xf(xq.size());
          for (size_t i = 0; i < xq.size(); ++i) xf[i] = xq[i] = int8_t(rng.integer(-128, 127));
          const std::vector<double> want = resize_reference(c, xf);
          std::vector<int8_t> y(want.size(), int8_t{0x5a});
          cpu::resize_int8(resize_params(c), xq.data(), y.data());
          for (size_t i = 0; i < want.size(); ++i) {
            if (mode == kNearest) ASSERT_EQ(double(y[i]), want[i]) << i;
            else ASSERT_LE(std::fabs(double(y[i]) - want[i]), 0.5 + 1e-3) << i;
          }
        }
    }
}

TEST(Resize, Rank8EveryDimResized) {
  SEEDED_RNG(rng);
  for (ResizeMode mode : {kNearest, kLinear, kCubic}) {
    SCOPED_TRACE("mode " + std::to_string(int(mode)));
    ResizeCase c;
    c.mode = mode;
    c.coord = ResizeCoord::kHalfPixel;
    for (int d = 0; d < kMaxRank; ++d) {
      c.in.push_back(d % 2 ? 2 : 3);
      c.out.push_back(d % 2 ? 3 : 2);
      c.scale.push_back(double(c.out.back()) / double(c.in.back()));
      c.length.push_back(double(c.out.back()));
    }
    const std::vector<float> x = rng.uniform(volume(c.in), -1.f, 1.f);
    EXPECT_TRUE(all_close(run_resize(c, x), resize_reference(c, x), {1e-5, 1e-5}));
  }
}

// A Resize writing its part of a larger y (its share of a Concat, in place: y_block,
// y_block_stride, y_offset): each element of the dense result at y_index, bit for bit the dense
// run's, every other element of y untouched; float32 and Int8, random cases of rank 1 to 4
// placed along a random axis that they do not resize.
TEST(Resize, WritesItsBlocksIntoALargerOutput) {
  SEEDED_RNG(rng);
  for (ResizeMode mode : {kNearest, kLinear, kCubic})
    for (int rank = 1; rank <= 4; ++rank)
      for (int rep = 0; rep < 4; ++rep) {
        ResizeCase c = random_case(rng, rank, mode, ResizeCoord::kHalfPixel);
        const size_t axis = size_t(rng.integer(0, rank - 1));
        c.out[axis] = c.in[axis];
        c.scale[axis] = 1.0;
        c.length[axis] = double(c.in[axis]);
        const int64_t before = rng.integer(0, 3), after = rng.integer(0, 3);
        int64_t inner = 1;
        for (size_t d = axis + 1; d < c.out.size(); ++d) inner *= c.out[d];
        ResizeParams placed = resize_params(c);
        placed.y_block = c.out[axis] * inner;
        placed.y_block_stride = (before + c.out[axis] + after) * inner;
        placed.y_offset = before * inner;
        const int64_t n = volume(c.out);
        const int64_t ny = n / c.out[axis] * (before + c.out[axis] + after);
        SCOPED_TRACE("mode " + std::to_string(int(mode)) + " rank " + std::to_string(rank) +
                     " axis " + std::to_string(axis));
        const std::vector<float> x = rng.uniform(volume(c.in), -1.f, 1.f);
        std::vector<float> dense(static_cast<size_t>(n)), y(static_cast<size_t>(ny), 77.f);
        cpu::resize(resize_params(c), x.data(), dense.data());
        cpu::resize(placed, x.data(), y.data());
        std::vector<bool> hit(size_t(ny), false);
        for (int64_t i = 0; i < n; ++i) {
          const int64_t at = y_index(placed, i);
          ASSERT_TRUE(at >= 0 && at < ny) << i;
          hit[size_t(at)] = true;
          ASSERT_EQ(std::memcmp(&y[size_t(at)], &dense[size_t(i)], sizeof(float)), 0) << i;
        }
        for (int64_t i = 0; i < ny; ++i) {
          if (!hit[size_t(i)]) { ASSERT_EQ(y[size_t(i)], 77.f) << "y " << i; }
        }
        if (mode == kCubic) continue;  // no Int8 form
        std::vector<int8_t> xq(x.size()), dq(static_cast<size_t>(n)), yq(static_cast<size_t>(ny), int8_t{0x5a});
        for (size_t i = 0; i < xq.size(); ++i) xq[i] = int8_t(rng.integer(-128, 127));
        cpu::resize_int8(resize_params(c), xq.data(), dq.data());
        cpu::resize_int8(placed, xq.data(), yq.data());
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(yq[size_t(y_index(placed, i))], dq[size_t(i)]) << i;
        for (int64_t i = 0; i < ny; ++i) {
          if (!hit[size_t(i)]) { ASSERT_EQ(yq[size_t(i)], int8_t{0x5a}) << "y " << i; }
        }
      }
}

}  // namespace
}  // namespace jetplan::kernels

