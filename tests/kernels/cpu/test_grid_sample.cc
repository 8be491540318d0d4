// The GridSample twin (kernels/cpu/grid_sample.cc) against hand-computed samples (nearest's half
// to even, each padding mode at and past the borders, identity grids) and against a naive
// reference written the way ONNX's reference is (onnx/reference/ops/op_grid_sample.py: each
// dim interpolated by recursion over the leading one, in double) on random data of 1 to 3
// spatial dims, every mode, padding and align_corners; the ONNX node tests run it too
// (tests/conformance). Tolerance against the reference: 2e-5 relative and 2e-5 absolute: float32
// sums against double ones, of up to 64 cubic taps of |x| <= 2 whose weights sum to less than 2
// in magnitude, so the rounding scales with the taps, not with a result that cancels (a seed
// gave a cubic output of -0.0067 off by 2.2e-6).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using test_util::Output;
using test_util::Shape;

GridSampleParams params_of(const Shape& x, const Shape& out, GridSampleMode mode,
                           GridSamplePadding padding, bool align) {
  GridSampleParams p;
  p.mode = mode;
  p.padding = padding;
  p.align_corners = align;
  p.spatial = static_cast<int32_t>(x.size()) - 2;
  p.batch = x[0];
  p.channels = x[1];
  for (int d = 0; d < p.spatial; ++d) {
    p.in[kGridSampleMaxSpatial - p.spatial + d] = x[2 + d];
    p.out[kGridSampleMaxSpatial - p.spatial + d] = out[d];
  }
  return p;
}

std::vector<float> run(const GridSampleParams& p, const std::vector<float>& x,
                       const std::vector<float>& grid) {
  const int64_t n = p.batch * p.channels * grid_sample_positions(p);
  Output y(n);
  cpu::grid_sample(p, x.data(), grid.data(), y.data());
  EXPECT_TRUE(y.guard_intact());
  return std::vector<float>(y.data(), y.data() + n);
}

// ------------------------------------------------------------- naive reference, ONNX's way

// In float32, as the reference computes with float32 tensors (nearest picks depend on it).
double denormalize(float g, int64_t len, bool align) {
  const float l = static_cast<float>(len);
  return align ? (g + 1.f) / 2.f * (l - 1.f) : ((g + 1.f) * l - 1.f) / 2.f;
}

double reflect(double x, double lo, double hi) {
  const double span = hi - lo;
  if (span <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const int64_t n = static_cast<int64_t>(dx / span);
    const double r = dx - double(n) * span;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t n = static_cast<int64_t>(dx / span);
    const double r = dx - double(n) * span;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

struct Ref {
  const std::vector<float>* x;
  Shape dims;  // spatial dims of X
  GridSamplePadding padding;
  bool align;
  double lo(size_t) const { return align ? 0.0 : -0.5; }
  double hi(size_t d) const { return align ? double(dims[d] - 1) : double(dims[d]) - 0.5; }
  // The pixel at integer index i of dim d (ONNX's _pixel_at_array), `base` the offset of the
  // leading dims already chosen; valid false for a zero of 'zeros' padding.
  int64_t padded(size_t d, int64_t i, bool* valid) const {
    *valid = true;
    if (padding == GridSamplePadding::kZeros) {
      *valid = i >= 0 && i < dims[d];
      return i;
    }
    if (padding == GridSamplePadding::kBorder) return std::min(std::max<int64_t>(i, 0), dims[d] - 1);
    return static_cast<int64_t>(reflect(double(i), lo(d), hi(d)));
  }
  // Interpolates dims d.. at coordinates c[d..] within the block starting at `base`.
  double interp(size_t d, const std::vector<double>& c, int64_t base, GridSampleMode mode) const {
    int64_t stride = 1;
    for (size_t k = d + 1; k < dims.size(); ++k) stride *= dims[k];
    auto value_at = [&](int64_t i) {
      bool valid = true;
      const int64_t j = padded(d, i, &valid);
      if (!valid) return 0.0;
      if (d + 1 == dims.size()) return double((*x)[base + j]);
      return interp(d + 1, c, base + j * stride, mode);
    };
    if (mode == GridSampleMode::kNearest) return value_at(static_cast<int64_t>(c[d]));
    const int64_t x0 = static_cast<int64_t>(std::floor(c[d]));
    const double t = c[d] - double(x0);
    if (mode == GridSampleMode::kLinear) return (1 - t) * value_at(x0) + t * value_at(x0 + 1);
    const double a = -0.75;
    const double w[4] = {((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
                         ((a + 2) * t - (a + 3)) * t * t + 1,
                         ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
                         ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a};
    double sum = 0;
    for (int k = 0; k < 4; ++k) sum += w[k] * value_at(x0 - 1 + k);
    return sum;
  }
};

std::vector<double> reference(const Shape& xs, const Shape& out, const std::vector<float>& x,
                              const std::vector<float>& grid, GridSampleMode mode,
                              GridSamplePadding padding, bool align) {
  const size_t r = xs.size() - 2;
  Ref ref{&x, Shape(xs.begin() + 2, xs.end()), padding, align};
  int64_t positions = 1, plane = 1;
  for (int64_t e : out) positions *= e;
  for (int64_t e : ref.dims) plane *= e;
  std::vector<double> y;
  y.reserve(static_cast<size_t>(xs[0] * xs[1] * positions));
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t c = 0; c < xs[1]; ++c)
      for (int64_t pos = 0; pos < positions; ++pos) {
        std::vector<double> coord(r);
        for (size_t d = 0; d < r; ++d) {
          const float g =
              grid[static_cast<size_t>((n * positions + pos) * int64_t(r) + int64_t(r - 1 - d))];
          double v = denormalize(g, ref.dims[d], align);
          if (mode == GridSampleMode::kNearest) v = std::nearbyint(v);
          if (v < ref.lo(d) || v > ref.hi(d)) {
            if (padding == GridSamplePadding::kBorder)
              v = std::min(std::max(v, 0.0), double(ref.dims[d] - 1));
            else if (padding == GridSamplePadding::kReflection)
              v = reflect(v, ref.lo(d), ref.hi(d));
          }
          coord[d] = v;
        }
        y.push_back(ref.interp(0, coord, (n * xs[1] + c) * plane, mode));
      }
  return y;
}

constexpr GridSampleMode kModes[] = {GridSampleMode::kLinear, GridSampleMode::kNearest,
                                     GridSampleMode::kCubic};
constexpr GridSamplePadding kPaddings[] = {GridSamplePadding::kZeros, GridSamplePadding::kBorder,
                                           GridSamplePadding::kReflection};

// ------------------------------------------------------------------------------------ tests

// X [1, 1, 1, 4] = 10, 20, 30, 40 and H = 1 (y = 0 lands on row 0 in both alignments).
TEST(CpuGridSample, NearestRoundsHalfToEven) {
  const std::vector<float> x = {10, 20, 30, 40};
  // align_corners 0: pixel x = ((g + 1) * 4 - 1) / 2: g -0.5 -> 0.5, 0 -> 1.5, 0.5 -> 2.5,
  // -0.25 -> 1.0, 1 -> 3.5 (rounds to 4: past the end).
  const std::vector<float> grid = {-0.5f, 0, 0, 0, 0.5f, 0, -0.25f, 0, 1, 0};
  const GridSampleParams p = params_of({1, 1, 1, 4}, {1, 5}, GridSampleMode::kNearest,
                                       GridSamplePadding::kZeros, false);
  EXPECT_EQ(run(p, x, grid), (std::vector<float>{10, 30, 30, 20, 0}));
  GridSampleParams border = p;
  border.padding = GridSamplePadding::kBorder;
  EXPECT_EQ(run(border, x, grid), (std::vector<float>{10, 30, 30, 20, 40}));
}

TEST(CpuGridSample, PaddingModesAtAndPastTheBorders) {
  const std::vector<float> x = {10, 20, 30, 40};
  // align_corners 0, linear: g -1.125 -> x -0.75; g -0.875 -> x -0.25; g 1.375 -> x 4.25.
  const std::vector<float> grid = {-1.125f, 0, -0.875f, 0, 1.375f, 0};
  GridSampleParams p = params_of({1, 1, 1, 4}, {1, 3}, GridSampleMode::kLinear,
                                 GridSamplePadding::kZeros, false);
  // zeros: -0.75 reads 0.25 of x[0] (and 0.75 of the zero at -1); -0.25: 0.75 x[0]; 4.25: none.
  EXPECT_EQ(run(p, x, grid), (std::vector<float>{2.5f, 7.5f, 0}));
  p.padding = GridSamplePadding::kBorder;  // -0.75 clamps to 0; -0.25 reads x[0] twice
  EXPECT_EQ(run(p, x, grid), (std::vector<float>{10, 10, 40}));
  // reflection by -0.5 and 3.5: -0.75 -> -0.25 (taps -1 -> 0 and 0); 4.25 -> 2.75.
  p.padding = GridSamplePadding::kReflection;
  EXPECT_EQ(run(p, x, grid), (std::vector<float>{10, 10, 37.5f}));
  // align_corners 1 reflects by 0 and 3: g -1.5 -> x -0.75 -> 0.75; g 1.5 -> 3.75 -> 2.25.
  const GridSampleParams aligned = params_of({1, 1, 1, 4}, {1, 2}, GridSampleMode::kLinear,
                                             GridSamplePadding::kReflection, true);
  EXPECT_EQ(run(aligned, x, {-1.5f, 0, 1.5f, 0}), (std::vector<float>{17.5f, 32.5f}));
}

// A grid at the pixel centres (align_corners 1: -1 + 2 i / (len - 1)) gives X back in every mode.
TEST(CpuGridSample, IdentityGridGivesX) {
  SEEDED_RNG(rng);
  const Shape xs = {2, 3, 4, 5};
  const std::vector<float> x = rng.uniform(test_util::volume(xs), -1, 1);
  std::vector<float> grid;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t w = 0; w < 5; ++w) {
        grid.push_back(-1.f + 2.f * float(w) / 4.f);
        grid.push_back(-1.f + 2.f * float(h) / 3.f);
      }
  for (GridSampleMode mode : kModes)
    for (GridSamplePadding padding : kPaddings) {
      const std::vector<float> y = run(params_of(xs, {4, 5}, mode, padding, true), x, grid);
      for (size_t i = 0; i < x.size(); ++i)
        ASSERT_NEAR(y[i], x[i], 1e-6) << "mode " << int(mode) << " padding " << int(padding) << " at " << i;
    }
}

TEST(CpuGridSample, MatchesOnnxStyleReference) {
  SEEDED_RNG(rng);
  const struct {
    Shape x, out;
  } cases[] = {
      {{1, 1, 7}, {9}},               // 1-D
      {{2, 3, 5, 6}, {4, 7}},         // 2-D
      {{1, 2, 1, 4}, {3, 3}},         // a dim of one sample
      {{1, 2, 3, 4, 5}, {2, 3, 4}},   // volumetric
      {{2, 1, 1, 1, 3}, {2, 2, 2}},   // volumetric, dims of one
  };
  for (const auto& c : cases) {
    const int64_t r = static_cast<int64_t>(c.x.size()) - 2;
    int64_t positions = 1;
    for (int64_t e : c.out) positions *= e;
    const std::vector<float> x = rng.uniform(test_util::volume(c.x), -2, 2);
    // Coordinates well past the borders, so every padding reflects or clamps some of them.
    const std::vector<float> grid = rng.uniform(c.x[0] * positions * r, -2.5f, 2.5f);
    for (GridSampleMode mode : kModes)
      for (GridSamplePadding padding : kPaddings)
        for (bool align : {false, true}) {
          const GridSampleParams p = params_of(c.x, c.out, mode, padding, align);
          Output y(p.batch * p.channels * positions);
          cpu::grid_sample(p, x.data(), grid.data(), y.data());
          EXPECT_TRUE(test_util::all_close(y, reference(c.x, c.out, x, grid, mode, padding, align),
                                           {2e-5, 2e-5}))
              << test_util::shape_str(c.x) << " mode " << int(mode) << " padding "
              << int(padding) << " align " << align;
        }
  }
}

// Nearest picks at exact halves with both alignments: coordinates 0.5 apart.
TEST(CpuGridSample, NearestHalvesMatchReference) {
  const Shape xs = {1, 1, 1, 9};
  std::vector<float> x(9);
  for (int i = 0; i < 9; ++i) x[static_cast<size_t>(i)] = float(i + 1);
  std::vector<float> grid;
  for (int i = -12; i <= 12; ++i) grid.insert(grid.end(), {float(i) / 8.f, 0.f});
  for (GridSamplePadding padding : kPaddings)
    for (bool align : {false, true}) {
      const GridSampleParams p =
          params_of(xs, {1, 25}, GridSampleMode::kNearest, padding, align);
      Output y(25);
      cpu::grid_sample(p, x.data(), grid.data(), y.data());
      EXPECT_TRUE(test_util::all_close(
          y, reference(xs, {1, 25}, x, grid, GridSampleMode::kNearest, padding, align),
          test_util::kExact))
          << "padding " << int(padding) << " align " << align;
    }
}

TEST(CpuGridSample, NanCoordinatesStayInside) {
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> grid = {NAN, 0, 0, NAN, INFINITY, -INFINITY};
  for (GridSampleMode mode : kModes)
    for (GridSamplePadding padding : kPaddings) {
      const std::vector<float> y =
          run(params_of({1, 1, 2, 2}, {1, 3}, mode, padding, false), x, grid);
      if (mode != GridSampleMode::kNearest) continue;
      for (float v : y) EXPECT_FALSE(std::isnan(v)) << "padding " << int(padding);
    }
}

}  // namespace
}  // namespace jetplan::kernels
