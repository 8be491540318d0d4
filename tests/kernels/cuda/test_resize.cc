// CUDA Resize (kernels/cuda/resize.cu) against its CPU twin (kernels/cpu/resize.cc): NHWC
// U-Net style upsampling and odd scales, every mode and coordinate transform, each of the
// three kernels (row tiles for NHWC H and W, pixel runs, elements) as the selector picks it.
// Tolerance: nearest is exact (it copies an input); linear and cubic |got - want| <= 2e-3 * |want| + 2e-3 in FP16
// (output rounding 2^-11 plus FP32 weights), 1e-5 * |want| + 1e-5 in FP32; Int8 (nearest and
// linear) bit for bit. NaN never passes; outputs poisoned, guards checked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "kernels/kernels.h"
#include "kernels/resize_math.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using test_util::Shape;

constexpr uint16_t kResize = static_cast<uint16_t>(OpFamilyId::kResize);

ResizeParams make_params(const Shape& in, const Shape& out, ResizeMode mode, ResizeCoord coord,
                         ResizeNearest nearest) {
  ResizeParams p;
  p.mode = mode;
  p.coord = coord;
  p.nearest = nearest;
  p.rank = static_cast<int32_t>(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    p.in_dims[d] = in[d];
    p.out_dims[d] = out[d];
    p.scale[d] = static_cast<double>(out[d]) / static_cast<double>(in[d]);
    p.resized_length[d] = static_cast<double>(out[d]);
  }
  return p;
}

// The variant the selector picks for p: jp_resize_hw_* for an NHWC image's H and W in nearest
// or linear mode, jp_resize_pixels_* for the other rank-4 steps, jp_resize_* otherwise.
std::string expected_variant(const ResizeParams& p, const char* dtype) {
  const char* kind = resize_math::resizes_hw_only(p) ? "jp_resize_hw_"
                     : p.rank == 4                  ? "jp_resize_pixels_"
                                                    : "jp_resize_";
  return std::string(kind) + dtype;
}

void check(test_util::SeededRng& rng, const ResizeParams& p, DType dtype) {
  const bool f16 = dtype == DType::kFloat16;
  int64_t nx = 1, ny = 1;
  for (int d = 0; d < p.rank; ++d) {
    nx *= p.in_dims[d];
    ny *= p.out_dims[d];
  }
  std::vector<float> x = gpu_test::as_stored(rng.uniform(nx, -3.f, 3.f), f16);
  std::vector<float> want(ny);
  cpu::resize(p, x.data(), want.data());
  const gpu_test::FloatStepResult got = gpu_test::run_float_step(kResize, dtype, p, x, ny);
  ASSERT_EQ(got.status, "");
  EXPECT_EQ(got.chosen.variant->name, expected_variant(p, f16 ? "f16" : "f32"));
  const bool exact = p.mode == ResizeMode::kNearest;
  const double rel = exact ? 0 : (f16 ? 2e-3 : 1e-5), abs = exact ? 0 : (f16 ? 2e-3 : 1e-5);
  ASSERT_TRUE(gpu_test::all_close(got.y, want, rel, abs))
      << "mode " << int(p.mode) << " coord " << int(p.coord) << " nearest " << int(p.nearest);
  EXPECT_TRUE(got.guard_intact);
}

// Selection alone (no GPU needed): the row-tile kernel takes exactly the NHWC H-and-W steps in
// nearest and linear modes.
TEST(GpuResizeSelect, RowTilesTakeNhwcImageResizes) {
  const cuda::TargetInfo t = gpu_test::target_with(4);
  struct Case {
    Shape in, out;
    ResizeMode mode;
    ResizeCoord coord;
    const char* want;
  };
  const Case cases[] = {
      {{1, 28, 28, 64}, {1, 56, 56, 64}, ResizeMode::kLinear, ResizeCoord::kHalfPixel,
       "jp_resize_hw_f16"},
      {{2, 5, 6, 3}, {2, 3, 13, 3}, ResizeMode::kNearest, ResizeCoord::kAsymmetric,
       "jp_resize_hw_f16"},
      {{1, 4, 4, 8}, {1, 8, 8, 8}, ResizeMode::kLinear, ResizeCoord::kAlignCorners,
       "jp_resize_hw_f16"},
      {{1, 4, 4, 8}, {1, 8, 8, 8}, ResizeMode::kCubic, ResizeCoord::kHalfPixel,
       "jp_resize_pixels_f16"},
      {{1, 4, 4, 8}, {1, 8, 8, 8}, ResizeMode::kNearest, ResizeCoord::kTfHalfPixelForNn,
       "jp_resize_pixels_f16"},
      {{1, 4, 4, 8}, {1, 8, 8, 16}, ResizeMode::kLinear, ResizeCoord::kHalfPixel,
       "jp_resize_pixels_f16"},  // C resized
      {{1, 4, 4, 8}, {2, 8, 8, 8}, ResizeMode::kNearest, ResizeCoord::kAsymmetric,
       "jp_resize_pixels_f16"},  // N resized
      {{1, 8, 4}, {1, 8, 8}, ResizeMode::kLinear, ResizeCoord::kHalfPixel, "jp_resize_f16"},
  };
  for (const Case& c : cases) {
    const ResizeParams p = make_params(c.in, c.out, c.mode, c.coord, ResizeNearest::kFloor);
    const cuda::StepDesc step = gpu_test::step_of(kResize, &p, DType::kFloat16);
    cuda::LaunchChoice l;
    std::string why;
    ASSERT_TRUE(cuda::select_kernel(step, t, &l, &why)) << why;
    EXPECT_STREQ(l.variant->name, c.want) << c.want;
  }
}

TEST(GpuResize, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape in, out; };
  const Case cases[] = {
      {{1, 28, 28, 64}, {1, 56, 56, 64}},  // U-Net x2 upsample, NHWC
      {{8, 7, 9, 3}, {8, 14, 18, 3}},      // batch 8, odd sizes
      {{2, 3, 13, 11}, {2, 3, 5, 23}},     // NCHW, down and up, odd scales
      {{1, 5, 1}, {1, 12, 1}},             // 1-D
      // NHWC H and W only (jp_resize_hw_*): 16-byte channel groups in FP16 and FP32 (24), in
      // FP32 only (12), one element a thread (5, 1); downscales, odd extents, one row, more
      // channel groups than a block has threads (2056 FP16 channels: one column a tile).
      {{3, 9, 7, 24}, {3, 20, 15, 24}},
      {{2, 17, 15, 12}, {2, 8, 7, 12}},
      {{2, 5, 6, 5}, {2, 11, 13, 5}},
      {{1, 1, 9, 1}, {1, 4, 31, 1}},
      {{1, 3, 2, 2056}, {1, 6, 5, 2056}},
  };
  for (const Case& c : cases) {
    for (ResizeCoord coord : {ResizeCoord::kHalfPixel, ResizeCoord::kAlignCorners,
                              ResizeCoord::kAsymmetric, ResizeCoord::kPytorchHalfPixel}) {
      for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
        check(rng, make_params(c.in, c.out, ResizeMode::kLinear, coord, ResizeNearest::kFloor),
              dtype);
        check(rng, make_params(c.in, c.out, ResizeMode::kCubic, coord, ResizeNearest::kFloor),
              dtype);
      }
    }
    for (ResizeNearest nearest : {ResizeNearest::kRoundPreferFloor, ResizeNearest::kRoundPreferCeil,
                                  ResizeNearest::kFloor, ResizeNearest::kCeil})
      for (ResizeCoord coord : {ResizeCoord::kHalfPixel, ResizeCoord::kAsymmetric,
                                ResizeCoord::kTfHalfPixelForNn})
        check(rng, make_params(c.in, c.out, ResizeMode::kNearest, coord, nearest), DType::kFloat16);
  }
  // Cubic with exclude_outside, and tf_crop_and_resize with an roi reaching outside.
  ResizeParams p = make_params({1, 9, 8, 5}, {1, 17, 3, 5}, ResizeMode::kCubic,
                               ResizeCoord::kHalfPixel, ResizeNearest::kFloor);
  p.exclude_outside = true;
  check(rng, p, DType::kFloat32);
  p = make_params({1, 9, 8, 2}, {1, 6, 7, 2}, ResizeMode::kLinear, ResizeCoord::kTfCropAndResize,
                  ResizeNearest::kFloor);
  p.roi_start[1] = -0.2;
  p.roi_end[1] = 0.9;
  p.roi_start[2] = 0.1;
  p.roi_end[2] = 1.3;
  p.extrapolation_value = 7.5f;
  check(rng, p, DType::kFloat16);
}

// Int8 in the input's scale (an INT8 plan's nearest and linear Resizes, jp_resize_pixels_i8 at
// rank 4, jp_resize_i8 otherwise): bit for
// bit the twin (cpu::resize_int8; both run resize_math::int8_tap_sum), on fresh random bytes,
// outputs poisoned, the guard checked. The selector refuses cubic and tf_crop_and_resize.
TEST(GpuResize, Int8MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape in, out; };
  const Case cases[] = {
      {{1, 28, 28, 64}, {1, 56, 56, 64}},  // U-Net x2 upsample, NHWC
      {{8, 7, 9, 16}, {8, 14, 18, 16}},    // batch 8
      {{2, 13, 11, 3}, {2, 5, 23, 3}},     // down and up, odd scales
      {{1, 5, 1}, {1, 12, 1}},             // 1-D
      {{3, 9, 7, 48}, {3, 20, 15, 48}},    // 16-byte channel groups, odd extents
      {{2, 17, 15, 24}, {2, 8, 7, 24}},    // one element a thread (24 % 16), downscale
  };
  for (const Case& c : cases) {
    for (ResizeCoord coord : {ResizeCoord::kHalfPixel, ResizeCoord::kAlignCorners,
                              ResizeCoord::kAsymmetric, ResizeCoord::kPytorchHalfPixel,
                              ResizeCoord::kTfHalfPixelForNn}) {
      for (ResizeMode mode : {ResizeMode::kNearest, ResizeMode::kLinear}) {
        const ResizeParams p = make_params(c.in, c.out, mode, coord, ResizeNearest::kRoundPreferCeil);
        int64_t nx = 1, ny = 1;
        for (int d = 0; d < p.rank; ++d) {
          nx *= p.in_dims[d];
          ny *= p.out_dims[d];
        }
        const std::vector<uint8_t> x = rng.bytes(nx);
        std::vector<uint8_t> want(static_cast<size_t>(ny), 0x5a);
        cpu::resize_int8(p, reinterpret_cast<const int8_t*>(x.data()),
                         reinterpret_cast<int8_t*>(want.data()));
        gpu_test::ByteStep step(x, static_cast<size_t>(ny));
        cuda::LaunchChoice chosen;
        ASSERT_EQ(gpu_test::select_and_launch(kResize, DType::kInt8, step.ptrs, p, &chosen), "");
        // H and W of NHWC take the row-tile kernel; other rank-4 steps (tf_half_pixel_for_nn)
        // the pixel-run one (a thread per pixel and 8 elements of dim 3).
        EXPECT_EQ(chosen.variant->name, expected_variant(p, "i8"));
        EXPECT_EQ(step.first_difference(want), -1)
            << "mode " << int(mode) << " coord " << int(coord) << " in " << c.in[1];
        EXPECT_TRUE(step.dy.guard_intact());
      }
    }
  }
  gpu_test::ByteStep step(std::vector<uint8_t>(16), 64);
  ResizeParams cubic = make_params({1, 4, 4, 1}, {1, 8, 8, 1}, ResizeMode::kCubic,
                                   ResizeCoord::kHalfPixel, ResizeNearest::kFloor);
  EXPECT_NE(gpu_test::select_and_launch(kResize, DType::kInt8, step.ptrs, cubic), "");
  ResizeParams crop = make_params({1, 4, 4, 1}, {1, 8, 8, 1}, ResizeMode::kLinear,
                                  ResizeCoord::kTfCropAndResize, ResizeNearest::kFloor);
  EXPECT_NE(gpu_test::select_and_launch(kResize, DType::kInt8, step.ptrs, crop), "");
}

// A Resize writing its part of a larger y (a Concat written in place: ResizeParams.y_block,
// y_block_stride, y_offset): along channels (blocks of C, the row-tile kernel's pixel placing;
// with 16-byte groups and without) and along H (blocks of rows, through y_index), in every
// kernel (row tiles, pixel runs, elements) and dtype. Each placed element is bit for bit what
// the same kernel writes into a dense y, every other element of y keeps its poison; Int8 and
// nearest FP32 also equal the twin's placed y bit for bit.
TEST(GpuResize, WritesItsBlocksIntoALargerOutputLikeTheTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case {
    Shape in, out;
    ResizeMode mode;
    ResizeCoord coord;
    int axis;             // the Concat's
    int64_t y_extent, offset;  // y's extent along the axis; the result's first index in it
  };
  const Case cases[] = {
      {{2, 5, 6, 16}, {2, 10, 12, 16}, ResizeMode::kNearest, ResizeCoord::kAsymmetric, 3, 40, 8},
      {{2, 5, 6, 16}, {2, 10, 12, 16}, ResizeMode::kLinear, ResizeCoord::kHalfPixel, 3, 32, 16},
      {{1, 4, 7, 5}, {1, 9, 13, 5}, ResizeMode::kLinear, ResizeCoord::kAlignCorners, 3, 12, 7},
      {{2, 4, 4, 8}, {2, 8, 8, 8}, ResizeMode::kNearest, ResizeCoord::kAsymmetric, 1, 11, 2},
      {{1, 4, 4, 8}, {1, 8, 8, 8}, ResizeMode::kCubic, ResizeCoord::kHalfPixel, 3, 24, 8},
      {{2, 6, 5}, {2, 6, 15}, ResizeMode::kLinear, ResizeCoord::kHalfPixel, 1, 9, 3},
  };
  for (const Case& c : cases) {
    ResizeParams dense = make_params(c.in, c.out, c.mode, c.coord, ResizeNearest::kFloor);
    Shape y_shape = c.out;
    y_shape[size_t(c.axis)] = c.y_extent;
    int64_t inner = 1, nx = 1, n = 1, ny = 1;
    for (size_t d = size_t(c.axis) + 1; d < y_shape.size(); ++d) inner *= y_shape[d];
    for (size_t d = 0; d < c.in.size(); ++d) {
      nx *= c.in[d];
      n *= c.out[d];
      ny *= y_shape[d];
    }
    ResizeParams placed = dense;
    placed.y_block = c.out[size_t(c.axis)] * inner;
    placed.y_block_stride = c.y_extent * inner;
    placed.y_offset = c.offset * inner;
    const std::string what = "case in " + std::to_string(c.in[1]) + " axis " +
                             std::to_string(c.axis) + " mode " + std::to_string(int(c.mode));
    for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
      const std::vector<float> x = gpu_test::as_stored(rng.uniform(nx, -3.f, 3.f), dtype == DType::kFloat16);
      const gpu_test::FloatStepResult a = gpu_test::run_float_step(kResize, dtype, dense, x, n);
      const gpu_test::FloatStepResult b = gpu_test::run_float_step(kResize, dtype, placed, x, ny);
      ASSERT_EQ(a.status + b.status, "") << what;
      EXPECT_EQ(a.chosen.variant->name, b.chosen.variant->name) << what;
      std::vector<bool> hit(size_t(ny), false);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t at = y_index(placed, i);
        hit[size_t(at)] = true;
        ASSERT_EQ(std::memcmp(&a.y[size_t(i)], &b.y[size_t(at)], sizeof(float)), 0)
            << what << " element " << i << ": " << a.y[size_t(i)] << " placed " << b.y[size_t(at)];
      }
      for (int64_t i = 0; i < ny; ++i) {
        if (!hit[size_t(i)]) { ASSERT_TRUE(std::isnan(b.y[size_t(i)])) << what << " y " << i; }
      }
      EXPECT_TRUE(b.guard_intact) << what;
      if (dtype == DType::kFloat32 && c.mode == ResizeMode::kNearest) {
        std::vector<float> want(size_t(ny), std::nanf(""));
        cpu::resize(placed, x.data(), want.data());
        for (int64_t i = 0; i < ny; ++i)
          ASSERT_TRUE(hit[size_t(i)] ? want[size_t(i)] == b.y[size_t(i)] : std::isnan(want[size_t(i)]))
              << what << " twin y " << i;
      }
    }
    if (c.mode == ResizeMode::kCubic) continue;  // no Int8 form
    const std::vector<uint8_t> xb = rng.bytes(size_t(nx));
    gpu_test::ByteStep step(xb, size_t(ny));
    std::vector<uint8_t> want = gpu_test::download_bytes(step.dy, size_t(ny));
    cpu::resize_int8(placed, reinterpret_cast<const int8_t*>(xb.data()),
                     reinterpret_cast<int8_t*>(want.data()));
    ASSERT_EQ(gpu_test::select_and_launch(kResize, DType::kInt8, step.ptrs, placed), "") << what;
    EXPECT_EQ(step.first_difference(want), -1) << what << " int8";
    EXPECT_TRUE(step.dy.guard_intact()) << what;
  }
}

// Timing only (run with --gtest_also_run_disabled_tests): the bench U-Net's two bilinear x2
// upsamples (NHWC FP16, 128 channels to 128x128 and 64 to 256x256) at batch 1 and 8, in the
// kernel the selector picks (jp_resize_hw_f16) and in the pixel-run kernel it replaced, with
// the bytes moved per microsecond (output written plus input read once).
TEST(GpuResizeBench, DISABLED_UNetUpsampling) {
  GPU_TEST_OR_SKIP();
  struct Shape4 {
    int64_t n, h, w, c;
  };
  const Shape4 shapes[] = {{1, 64, 64, 128}, {1, 128, 128, 64}, {8, 64, 64, 128},
                           {8, 128, 128, 64}};
  std::printf("device: %s\n", gpu_test::device()->info.name);
  for (const Shape4& s : shapes) {
    const ResizeParams p =
        make_params({s.n, s.h, s.w, s.c}, {s.n, 2 * s.h, 2 * s.w, s.c}, ResizeMode::kLinear,
                    ResizeCoord::kHalfPixel, ResizeNearest::kFloor);
    const int64_t nx = s.n * s.h * s.w * s.c, ny = 4 * nx;
    gpu_test::DeviceBuffer dx(nx * 2), dy(ny * 2);
    dx.zero();
    const cuda::StepPointers ptrs = gpu_test::step_pointers({&dx}, dy);
    cuda::LaunchChoice picked;
    ASSERT_EQ(gpu_test::select_and_launch(kResize, DType::kFloat16, ptrs, p, &picked), "");
    // The pixel-run kernel with the launch its selector gave it (a thread per 8 channels).
    cuda::LaunchChoice pixels;
    cuda::launch_1d(uint64_t(ny / s.c) * uint64_t((s.c + 7) / 8), 256,
                    gpu_test::device_target().sm_count * 8, &pixels);
    pixels.variant = &cuda::kernel_variant(cuda::VariantId::jp_resize_pixels_f16);
    for (const cuda::LaunchChoice& l : {picked, pixels}) {
      gpu_test::RepeatLaunch go;
      ASSERT_EQ(gpu_test::repeat_launch(l, ptrs, p, &go), "");
      const double us = gpu_test::mean_us(5, 50, go);
      ASSERT_GT(us, 0);
      std::printf("resize x2 n%ld %3ldx%-3ld c%-4ld %-22s %9.1f us  %7.1f GB/s\n",
                  static_cast<long>(s.n), static_cast<long>(s.h), static_cast<long>(s.w),
                  static_cast<long>(s.c), l.variant->name, us, 2.0 * (nx + ny) / us * 1e-3);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
