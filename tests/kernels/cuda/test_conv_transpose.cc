// CUDA ConvTranspose (kernels/cuda/conv_transpose.cu) against the CPU twin
// (kernels/cpu/conv_transpose.cc): NCHW 1-D/2-D/3-D, strides, pads, output padding, dilation,
// groups, bias, residual and activations, batch 1 and 8, odd channels; the channels_last
// upsampling GEMM over every tile; fresh random inputs, outputs poisoned, guards checked.
// Tolerances: Float16 storage (twin in double on the FP16-rounded inputs, the GPU in FP32 with
// one FP16 rounding at the end): |got - want| <= 2e-3 |want| + 2e-3. Float32: 1e-5 |want| + 2e-5
// (FP32 sums of up to a few hundred products against the twin's double).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
constexpr uint16_t kConvTranspose = static_cast<uint16_t>(OpFamilyId::kConvTranspose);

struct Case {
  int rank;
  int64_t batch, cin, cout, groups;
  int64_t in[3], kernel[3], stride[3], dilation[3], pad_begin[3], pad_end[3], out_pad[3];
  bool bias, residual;
  ActivationKind act;
};

const Case kCases[] = {
    // U-Net decoder upsampling: 2x2 stride 2.
    {2, 1, 64, 32, 1, {7, 9}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {0, 0}, true, false, ActivationKind::kNone},
    {2, 8, 16, 8, 1, {5, 6}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {0, 0}, true, true, ActivationKind::kRelu},
    // Non-overlapping upsampling with odd channels, partial tiles, stride 3 and 2x1.
    {2, 8, 7, 13, 1, {5, 11}, {3, 3}, {3, 3}, {1, 1}, {0, 0}, {0, 0}, {0, 0}, true, true, ActivationKind::kRelu},
    {2, 1, 9, 20, 1, {3, 1}, {2, 1}, {2, 1}, {1, 1}, {0, 0}, {0, 0}, {0, 0}, false, false, ActivationKind::kNone},
    // 3x3 stride 2 pad 1 output padding 1, odd channels.
    {2, 1, 5, 7, 1, {6, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, false, ActivationKind::kNone},
    // Groups and dilation.
    {2, 8, 6, 9, 3, {5, 7}, {3, 3}, {1, 1}, {2, 2}, {1, 2}, {2, 1}, {0, 0}, false, true, ActivationKind::kLeakyRelu},
    // Depthwise, asymmetric stride.
    {2, 1, 3, 3, 3, {4, 9}, {4, 3}, {3, 1}, {1, 1}, {0, 1}, {1, 0}, {2, 0}, true, false, ActivationKind::kNone},
    // 1-D and 3-D.
    {1, 8, 4, 5, 1, {17}, {4}, {2}, {1}, {1}, {1}, {0}, true, false, ActivationKind::kRelu},
    {3, 1, 3, 5, 1, {3, 4, 5}, {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, false, false, ActivationKind::kNone},
};

ConvTransposeParams params_of(const Case& c) {
  ConvTransposeParams p;
  test_util::set_window_dims(p, c.rank, c);
  test_util::set_conv_channels(p, c.batch, c.cin, c.cout, c.groups);
  for (int d = 0; d < c.rank; ++d) {
    p.out_size[d] = c.stride[d] * (c.in[d] - 1) + c.out_pad[d] + (c.kernel[d] - 1) * c.dilation[d] +
                    1 - c.pad_begin[d] - c.pad_end[d];
  }
  p.has_bias = c.bias;
  p.has_residual = c.residual;
  p.act = Activation{c.act, 0.1f, 0.f};
  return p;
}

void check(DType dt) {
  SEEDED_RNG(rng);
  const bool f16 = dt == DType::kFloat16;
  for (size_t ci = 0; ci < std::size(kCases); ++ci) {
    const Case& c = kCases[ci];
    const ConvTransposeParams p = params_of(c);
    int64_t in_plane = 1, out_plane = 1, kvol = 1;
    for (int d = 0; d < c.rank; ++d) {
      in_plane *= p.in_size[d];
      out_plane *= p.out_size[d];
      kvol *= p.kernel[d];
    }
    const int64_t nx = c.batch * c.cin * in_plane, nw = c.cin * (c.cout / c.groups) * kvol,
                  ny = c.batch * c.cout * out_plane;
    auto gen = [&](int64_t n) {
      std::vector<float> v = rng.uniform(n, -1.f, 1.f);
      return f16 ? gpu_test::round_half(v) : v;
    };
    const std::vector<float> x = gen(nx), w = gen(nw), bias = gen(c.cout), res = gen(ny);
    std::vector<float> want(ny);
    cpu::conv_transpose(p, x.data(), w.data(), c.bias ? bias.data() : nullptr,
                        c.residual ? res.data() : nullptr, want.data());
    std::vector<std::unique_ptr<DeviceBuffer>> bufs;
    cuda::StepPointers ptrs{};
    int next = 0;
    auto add = [&](const std::vector<float>& v) {
      bufs.push_back(gpu_test::to_device(v, dt));
      ptrs.in[next++] = bufs.back()->get();
    };
    add(x);
    add(w);
    if (c.bias) add(bias);
    if (c.residual) add(res);
    DeviceBuffer dy(ny * gpu_test::float_storage_bytes(dt));
    gpu_test::poison(dy, dt);
    ptrs.out[0] = dy.get();
    ASSERT_EQ(gpu_test::select_and_launch(kConvTranspose, dt, ptrs, p), "") << "case " << ci;
    const double rel = f16 ? 2e-3 : 1e-5, abs = f16 ? 2e-3 : 2e-5;
    EXPECT_TRUE(gpu_test::all_close(gpu_test::download_floats(dy, ny, dt), want, rel, abs))
        << "case " << ci;
    EXPECT_TRUE(dy.guard_intact()) << "case " << ci;
  }
}

TEST(GpuConvTransposeSelect, UpsamplingTakesTheTiledKernel) {
  cuda::TargetInfo t = gpu_test::target_with(4);
  std::string why;
  for (size_t ci = 0; ci < std::size(kCases); ++ci) {
    const ConvTransposeParams p = params_of(kCases[ci]);
    cuda::StepDesc step = gpu_test::step_of(kConvTranspose, &p, DType::kFloat16);
    cuda::LaunchChoice c;
    ASSERT_TRUE(cuda::select_kernel(step, t, &c, &why)) << why;
    const bool upsample = ci < 4;  // the first four cases: kernel == stride, no pads, groups 1
    EXPECT_STREQ(c.variant->name,
                 upsample ? "jp_conv_transpose_upsample_f16" : "jp_conv_transpose_f16") << ci;
  }
}

TEST(GpuConvTranspose, Float16MatchesCpuTwin) { GPU_TEST_OR_SKIP(); check(DType::kFloat16); }
TEST(GpuConvTranspose, Float32MatchesCpuTwin) { GPU_TEST_OR_SKIP(); check(DType::kFloat32); }

// ------------------------------------------------------- channels_last upsampling (igemm)
// jp_conv_transpose_upsample_igemm_*: NHWC x, residual and y, w [KH, KW, Cout, Cin], against
// the twin in NCHW (x, w, residual permuted on the host, y permuted back). Each case runs through
// every tile the selector has for it (targets of 1 SM, of as many SMs as 64x64 tiles, of 2^20
// SMs, and the device's), so both the whole aligned tiles (Cout % 4 == 0: 8-byte stores) and the
// ragged ones are checked. Tolerance as the FP16 cases above: 2e-3 |want| + 2e-3.
struct UpCase {
  int64_t batch, cin, cout, h, w, kh, kw;
  bool bias, residual;
  ActivationKind act;
};
const UpCase kUpCases[] = {
    {1, 64, 32, 7, 9, 2, 2, true, false, ActivationKind::kNone},       // U-Net form
    {3, 16, 8, 5, 6, 2, 2, true, true, ActivationKind::kRelu},         // batch 3, residual
    {2, 24, 20, 9, 13, 2, 1, false, true, ActivationKind::kNone},      // 2x1, K tail (24)
    {1, 40, 6, 9, 9, 3, 3, true, false, ActivationKind::kLeakyRelu},   // stride 3, Cout % 4 != 0
    {2, 13, 7, 5, 11, 2, 2, true, true, ActivationKind::kRelu},        // any Cin (_anyc), odd
    {1, 3, 5, 1, 1, 2, 2, true, false, ActivationKind::kNone},         // one pixel, Cin 3
    {2, 256, 128, 16, 16, 2, 2, true, false, ActivationKind::kRelu},   // many tiles, long K
    {1, 72, 36, 17, 3, 2, 2, false, false, ActivationKind::kNone},     // Cout 36: ragged N
};

// [N, C, *rest] <-> [N, *rest, C] of a dense tensor (to_last: NCHW -> NHWC).
std::vector<float> move_channels(const std::vector<float>& v, int64_t n, int64_t c, int64_t rest,
                                 bool to_last) {
  std::vector<float> out(v.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < rest; ++i) {
        const int64_t first = (b * c + ch) * rest + i, last = (b * rest + i) * c + ch;
        if (to_last) out[last] = v[first];
        else out[first] = v[last];
      }
  return out;
}

TEST(GpuConvTranspose, ChannelsLastUpsamplingMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (size_t ci = 0; ci < std::size(kUpCases); ++ci) {
    const UpCase& c = kUpCases[ci];
    Case nchw{2, c.batch, c.cin, c.cout, 1, {c.h, c.w}, {c.kh, c.kw}, {c.kh, c.kw}, {1, 1},
              {0, 0}, {0, 0}, {0, 0}, c.bias, c.residual, c.act};
    const ConvTransposeParams twin = params_of(nchw);
    ConvTransposeParams p = twin;
    p.channels_last = true;
    const int64_t in_plane = c.h * c.w, out_plane = in_plane * c.kh * c.kw, kvol = c.kh * c.kw;
    const int64_t nx = c.batch * c.cin * in_plane, nw = c.cin * c.cout * kvol,
                  ny = c.batch * c.cout * out_plane;
    auto gen = [&](int64_t n) { return gpu_test::round_half(rng.uniform(n, -1.f, 1.f)); };
    const std::vector<float> x = gen(nx), w = gen(nw), bias = gen(c.cout), res = gen(ny);
    std::vector<float> want(ny);
    cpu::conv_transpose(twin, x.data(), w.data(), c.bias ? bias.data() : nullptr,
                        c.residual ? res.data() : nullptr, want.data());
    // w [Cin, Cout, KH, KW] -> [KH, KW, Cout, Cin]: as [Cin, Cout * KH * KW] with Cout * KH * KW
    // "pixels", then (Cout, k) -> (k, Cout).
    std::vector<float> w_gemm(nw);
    for (int64_t i = 0; i < c.cin; ++i)
      for (int64_t o = 0; o < c.cout; ++o)
        for (int64_t k = 0; k < kvol; ++k)
          w_gemm[(k * c.cout + o) * c.cin + i] = w[(i * c.cout + o) * kvol + k];
    const std::vector<float> x_nhwc = move_channels(x, c.batch, c.cin, in_plane, true);
    const std::vector<float> res_nhwc = move_channels(res, c.batch, c.cout, out_plane, true);

    cuda::TargetInfo device = gpu_test::device_target();
    const uint64_t m = uint64_t(c.batch * in_plane), n = uint64_t(kvol * c.cout);
    const uint64_t tiles64 = ((m + 63) / 64) * ((n + 63) / 64),
                   tiles128 = ((m + 127) / 128) * ((n + 127) / 128);
    const cuda::TargetInfo targets[] = {gpu_test::target_with(1),
                                        gpu_test::target_with(uint32_t(tiles64)),
                                        gpu_test::target_with(1u << 20), device};
    const char* const want_tile[] = {"128x128", tiles128 < tiles64 ? "64x64" : "128x128",
                                     "32x64", nullptr};
    for (size_t ti = 0; ti < std::size(targets); ++ti) {
      std::vector<std::unique_ptr<DeviceBuffer>> bufs;
      cuda::StepPointers ptrs{};
      int next = 0;
      auto add = [&](const std::vector<float>& v) {
        bufs.push_back(gpu_test::to_device(v, DType::kFloat16));
        ptrs.in[next++] = bufs.back()->get();
      };
      add(x_nhwc);
      add(w_gemm);
      if (c.bias) add(bias);
      if (c.residual) add(res_nhwc);
      DeviceBuffer dy(ny * 2);
      gpu_test::poison(dy, DType::kFloat16);
      ptrs.out[0] = dy.get();
      cuda::LaunchChoice chosen;
      ASSERT_EQ(gpu_test::select_and_launch(kConvTranspose, DType::kFloat16, ptrs, p, &chosen,
                                            &targets[ti]),
                "")
          << "case " << ci;
      const std::string name = chosen.variant->name;
      if (c.cin % 8 != 0) {
        EXPECT_EQ(name, "jp_conv_transpose_upsample_igemm_64x64_anyc_f16") << ci;
      } else if (want_tile[ti] != nullptr) {
        EXPECT_EQ(name, std::string("jp_conv_transpose_upsample_igemm_") + want_tile[ti] + "_f16")
            << ci;
      }
      const std::vector<float> got = move_channels(
          gpu_test::download_floats(dy, ny, DType::kFloat16), c.batch, c.cout, out_plane, false);
      EXPECT_TRUE(gpu_test::all_close(got, want, 2e-3, 2e-3)) << "case " << ci << " " << name;
      EXPECT_TRUE(dy.guard_intact()) << "case " << ci << " " << name;
      // The same tile into a channel slice of a Concat's y (written in place:
      // ConvTransposeParams.y_channels, y_channel_offset), 4-aligned (8-byte stores where Cout
      // allows) and not: each pixel's channels bit for bit the dense run's, the rest poisoned.
      const std::vector<uint16_t> dense = dy.download<uint16_t>(size_t(ny));
      for (const int64_t first : {int64_t{4}, int64_t{1}}) {
        ConvTransposeParams slice = p;
        slice.y_channels = c.cout + first + 3;
        slice.y_channel_offset = first;
        const int64_t pixels = c.batch * out_plane, n_big = pixels * slice.y_channels;
        DeviceBuffer big(n_big * 2);
        gpu_test::poison(big, DType::kFloat16);
        cuda::StepPointers slice_ptrs = ptrs;
        slice_ptrs.out[0] = big.get();
        cuda::LaunchChoice again;
        ASSERT_EQ(gpu_test::select_and_launch(kConvTranspose, DType::kFloat16, slice_ptrs, slice,
                                              &again, &targets[ti]),
                  "");
        EXPECT_EQ(std::string(again.variant->name), name);
        const std::vector<uint16_t> y = big.download<uint16_t>(size_t(n_big));
        for (int64_t px = 0; px < pixels; ++px)
          for (int64_t k = 0; k < slice.y_channels; ++k) {
            const uint16_t v = y[size_t(px * slice.y_channels + k)];
            if (k >= first && k < first + c.cout) {
              ASSERT_EQ(v, dense[size_t(px * c.cout + k - first)])
                  << "case " << ci << " " << name << " pixel " << px << " channel " << k;
            } else {
              ASSERT_EQ(v, gpu_test::kHalfPoison) << "case " << ci << " pixel " << px << " " << k;
            }
          }
        EXPECT_TRUE(big.guard_intact()) << "case " << ci << " " << name;
      }
    }
  }
}

// The selector: channels_last upsampling steps take the tensor-core GEMM (Float16 only), any
// other channels_last form is refused by name (the converter keeps those NCHW).
TEST(GpuConvTransposeSelect, ChannelsLastTakesTheGemmOrIsRefused) {
  const cuda::TargetInfo t = gpu_test::target_with(4);
  std::string why;
  cuda::LaunchChoice l;
  ConvTransposeParams up = params_of(kCases[0]);
  up.channels_last = true;
  cuda::StepDesc step = gpu_test::step_of(kConvTranspose, &up, DType::kFloat16);
  ASSERT_TRUE(cuda::select_kernel(step, t, &l, &why)) << why;
  EXPECT_EQ(std::string(l.variant->name).rfind("jp_conv_transpose_upsample_igemm_", 0), 0u)
      << l.variant->name;
  EXPECT_EQ(l.grid[2], 1u);
  EXPECT_EQ(l.workspace_bytes, 0u);
  step.dtype = DType::kFloat32;
  EXPECT_FALSE(cuda::select_kernel(step, t, &l, &why));
  EXPECT_NE(why.find("Float16 only"), std::string::npos) << why;
  ConvTransposeParams padded = params_of(kCases[4]);  // 3x3 stride 2 pad 1
  padded.channels_last = true;
  step = gpu_test::step_of(kConvTranspose, &padded, DType::kFloat16);
  EXPECT_FALSE(cuda::select_kernel(step, t, &l, &why));
  EXPECT_NE(why.find("upsampling form only"), std::string::npos) << why;
}

// Timing only (run with --gtest_also_run_disabled_tests): the U-Net decoder's 2x2 stride-2
// upsampling convolutions at a 256x256 input, FP16, batch 1 and 8.
TEST(GpuConvTransposeBench, DISABLED_UNetUpsampling) {
  GPU_TEST_OR_SKIP();
  struct Shape { int64_t batch, cin, cout, in; };
  const Shape shapes[] = {{1, 1024, 512, 16}, {1, 512, 256, 32}, {1, 256, 128, 64},
                          {1, 128, 64, 128},  {8, 128, 64, 128}};
  std::printf("device: %s\n", gpu_test::device()->info.name);
  for (const Shape& s : shapes) {
    Case c{2, s.batch, s.cin, s.cout, 1, {s.in, s.in}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0},
           {0, 0}, true, false, ActivationKind::kNone};
    for (bool channels_last : {false, true}) {
      ConvTransposeParams p = params_of(c);
      p.channels_last = channels_last;  // the same bytes serve as NHWC (all values equal)
      const int64_t nx = s.batch * s.cin * s.in * s.in, nw = s.cin * s.cout * 4,
                    ny = s.batch * s.cout * 4 * s.in * s.in;
      DeviceBuffer dx(nx * 2), dw(nw * 2), db(s.cout * 2), dy(ny * 2);
      std::vector<uint16_t> ones(std::max(nx, nw), 0x2c00);  // 1/16
      dx.upload(ones.data(), dx.bytes());
      dw.upload(ones.data(), dw.bytes());
      db.upload(ones.data(), db.bytes());
      cuda::StepPointers ptrs = gpu_test::step_pointers({&dx, &dw, &db}, dy);
      cuda::LaunchChoice l;
      ASSERT_EQ(gpu_test::select_and_launch(kConvTranspose, DType::kFloat16, ptrs, p, &l), "");
      gpu_test::RepeatLaunch go;
      ASSERT_EQ(gpu_test::repeat_launch(l, ptrs, p, &go), "");
      const double us = gpu_test::mean_us(5, 50, go);
      ASSERT_GT(us, 0);
      std::printf("convT 2x2/2 n%ld %4ld->%4ld %3ldx%-3ld  %-48s %9.1f us  %6.2f TFLOP/s\n",
                  static_cast<long>(s.batch), static_cast<long>(s.cin),
                  static_cast<long>(s.cout), static_cast<long>(s.in), static_cast<long>(s.in),
                  l.variant->name, us, 2.0 * ny * s.cin / us * 1e-6);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
