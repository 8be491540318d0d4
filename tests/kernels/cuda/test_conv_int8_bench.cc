// GpuConvInt8Bench (run with --gtest_also_run_disabled_tests): ResNet-50's conv layers in INT8
// against FP16 at batch 1 and 8 (DISABLED_ResNet50Batch1/8, with every INT8 tile's own best),
// the expansions of 24 and 40 channels (DISABLED_Cin24And40), the depthwise layers of
// MobileNetV2 and EfficientNet-B0 (DISABLED_MobileNetV2Depthwise, DISABLED_EfficientNetB0Depthwise)
// and the RGB stem (DISABLED_Stem). JP_BENCH_SPLITS=1 adds the split-K curve of each ResNet-50
// layer's selected INT8 and FP16 tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/conv_bench.h"
#include "tests/kernels/cuda/conv_int8_util.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/reference_formulas.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
using namespace int8_conv_test;

// Buffers for timing one conv layer (x and w random, a zero epilogue, room for FP16)
// and the selector's INT8 (Int8 y) and FP16 choices for it.
struct BenchRun {
  std::unique_ptr<DeviceBuffer> dx, dw, de, dy;
  cuda::StepPointers ptrs{};
  cuda::LaunchChoice ch8, ch16;
  ConvParams p16;
};

void bench_run(const ConvParams& p, int64_t nx, int64_t nw, int64_t ny, BenchRun* r,
               bool int8 = true) {
  r->dx = std::make_unique<DeviceBuffer>(size_t(nx * 2));
  r->dw = std::make_unique<DeviceBuffer>(size_t(nw * 2));
  r->de = std::make_unique<DeviceBuffer>(size_t(p.out_channels * 8));
  r->dy = std::make_unique<DeviceBuffer>(size_t(ny * 2));
  r->dx->random16(1, 1.0f);  // random halves; as bytes, random Int8
  r->dw->random16(2, 1.0f);
  r->de->poison32(0);
  r->ptrs = gpu_test::step_pointers({r->dx.get(), r->dw.get(), r->de.get()}, *r->dy);
  if (int8) {
    ASSERT_EQ(select_int8(p, DType::kInt8, &r->ch8), "");
  }
  r->p16 = p;
  r->p16.int8 = ConvInt8{};
  ASSERT_EQ(gpu_test::select(kConv, DType::kFloat16, r->p16, &r->ch16), "");
}

// One ResNet-50 layer at `batch`, bias + ReLU: the selector's INT8 choice (Int8 y) against its
// FP16 choice, and the fastest INT8 tile and split (for tuning the selector). Adds both times.
void bench_int8_layer(const BenchLayer& l, int64_t batch, std::initializer_list<uint32_t> splits,
                      double* total8, double* total16) {
  const Case c{"bench", batch, l.cin, l.cout, l.hw, l.hw, l.k, l.stride, 1, l.k / 2};
  ConvParams p = params_of(c);
  p.act = test_util::kEveryActivation[1];
  const int64_t nx = batch * l.hw * l.hw * l.cin;
  const int64_t ny = batch * p.out_size[0] * p.out_size[1] * l.cout;
  const int64_t k = l.k * l.k * l.cin, nw = l.cout * k;
  BenchRun r;
  bench_run(p, nx, nw, ny, &r);
  if (::testing::Test::HasFatalFailure()) return;
  const cuda::LaunchChoice &ch8 = r.ch8, &ch16 = r.ch16;
  const ConvParams& p16 = r.p16;
  double host = 0;
  auto timed = [&](const cuda::LaunchChoice& ch, const ConvParams& q) {
    cuda::StepPointers pp = r.ptrs;
    const auto ws = gpu_test::workspace_for(ch, &pp, /*zeroed=*/true);
    return time_launch(ch, pp, q, &host);
  };
  const double us8 = timed(ch8, p), us16 = timed(ch16, p16);
  ASSERT_GT(us8, 0);
  ASSERT_GT(us16, 0);
  double best_us = us8;
  std::string best = "selected", each_tile;
  for (const char* v : kVariants) {
    if (std::string(v).find("f16out") != std::string::npos) continue;
    // The grouped tiles refuse groups-1 steps (computing nothing, in no time at all).
    if (std::string(v).find("_grouped_") != std::string::npos) continue;
    if (l.cin % 16 != 0 && std::string(v).find("_c8_") == std::string::npos) continue;
    if (!gpu_test::variant_runs_here(v)) continue;
    double mine = 0;  // this variant's best over the splits
    uint32_t mine_split = 1;
    for (uint32_t split : splits) {
      if (split > 1 && split > cuda::ceil_div_u32(uint64_t(k), 64) / 2) continue;
      const double a = timed(choice_of(v, p, split), p);
      if (a > 0 && (mine == 0 || a < mine)) mine = a, mine_split = split;
      if (a > 0 && a < best_us) {
        best_us = a;
        best = std::string(v + 14) + " split " + std::to_string(split);
      }
    }
    // Every tile's own best (us / split), for tuning the rules.
    if (mine > 0) {
      char one[64];
      std::snprintf(one, sizeof one, " %s %.2f/%u", v + 14, mine, mine_split);
      each_tile += one;
    }
  }
  std::printf("b%lld %4lld->%4lld %3lldx%-3lld k%lld s%lld x%lld  int8 %-28s split %2u %7.2f us | fp16 %-26s split %2u %7.2f us | %.2fx | best int8 %s %.2f us |%s\n",
              (long long)batch, (long long)l.cin, (long long)l.cout, (long long)l.hw, (long long)l.hw,
              (long long)l.k, (long long)l.stride, (long long)l.count, ch8.variant->name, ch8.split_k,
              us8, ch16.variant->name, ch16.split_k, us16, us8 / us16, best.c_str(), best_us,
              each_tile.c_str());
  // JP_BENCH_SPLITS=1: the selected INT8 and FP16 tiles at every split of the list (the split-K
  // rule's curve), "split:us".
  if (std::getenv("JP_BENCH_SPLITS") != nullptr) {
    std::string curve;
    for (const auto& [name, q] : {std::pair<const char*, const ConvParams*>{ch8.variant->name, &p},
                                  {ch16.variant->name, &p16}}) {
      curve += std::string("   ") + (name + 14) + ":";
      for (uint32_t split : splits) {
        if (split > 1 && split > cuda::ceil_div_u32(uint64_t(k), 64) / 2) continue;
        char one[32];
        std::snprintf(one, sizeof one, " %u:%.2f", split, timed(choice_of(name, *q, split), *q));
        curve += one;
      }
    }
    std::printf("  splits%s\n", curve.c_str());
  }
  *total8 += us8 * double(l.count);
  *total16 += us16 * double(l.count);
}

// JP_BENCH_LAYER=i times only kResNet50[i] with the selector's choices (no search): one
// layer's launches for a profiler (ncu -k regex:jp_conv_igemm -c 1).
void bench_int8(int64_t batch, std::initializer_list<uint32_t> splits) {
  double t8 = 0, t16 = 0;
  const char* only = std::getenv("JP_BENCH_LAYER");
  for (size_t i = 0; i < std::size(kResNet50); ++i) {
    const BenchLayer& l = kResNet50[i];
    if (l.cin % 16 != 0) continue;  // the stem stays FP16
    if (only != nullptr && std::to_string(i) != only) continue;
    bench_int8_layer(l, batch, only != nullptr ? std::initializer_list<uint32_t>{} : splits, &t8,
                     &t16);
    if (::testing::Test::HasFatalFailure()) return;
  }
  std::printf("ResNet-50 batch %lld, conv layers but the stem: INT8 %.1f us, FP16 %.1f us, %.2fx\n",
              (long long)batch, t8, t16, t8 / t16);
}

// Depthwise layers (C, input size, kernel, stride, count) of MobileNetV2 (224x224 input) and
// EfficientNet-B0's 5x5 ones, bias + ReLU: the previous kernels (FP16 one channel a thread,
// INT8 four) against the tiled ones (the selection's), FP16 and INT8.
void bench_depthwise(int64_t batch) {
  const int64_t layers[][5] = {{32, 112, 3, 1, 1}, {96, 112, 3, 2, 1}, {144, 56, 3, 1, 1},
                               {144, 56, 3, 2, 1}, {192, 28, 3, 1, 2}, {192, 28, 3, 2, 1},
                               {384, 14, 3, 1, 4}, {576, 14, 3, 1, 2}, {576, 14, 3, 2, 1},
                               {960, 7, 3, 1, 3},  {240, 28, 5, 2, 1}, {672, 14, 5, 1, 3},
                               {1152, 7, 5, 1, 4}};
  double old16 = 0, new16 = 0, old8 = 0, new8 = 0;
  // JP_BENCH_LAYER=i: only layer i, only the selection's FP16 launch (for a profiler).
  const char* only = std::getenv("JP_BENCH_LAYER");
  for (const auto& l : layers) {
    const int64_t c = l[0], hw = l[1], k = l[2];
    if (only != nullptr && std::to_string(&l - layers) != only) continue;
    ConvParams p = params_of({"bench", batch, c, c, hw, hw, k, l[3], 1, k / 2, c});
    p.act = test_util::kEveryActivation[1];
    const int64_t ny = batch * p.out_size[0] * p.out_size[1] * c;
    BenchRun r;
    bench_run(p, batch * hw * hw * c, c * k * k, ny, &r);
    if (::testing::Test::HasFatalFailure()) return;
    double host = 0;
    if (only != nullptr) {
      std::printf("b%lld layer %s: %s %.2f us\n", (long long)batch, only, r.ch16.variant->name,
                  time_launch(r.ch16, r.ptrs, r.p16, &host));
      continue;
    }
    cuda::LaunchChoice legacy16;
    legacy16.variant = cuda::find_kernel_variant("jp_conv_depthwise_f16");
    cuda::launch_1d(uint64_t(ny), 256, gpu_test::device_target().sm_count * 16, &legacy16);
    const double o16 = time_launch(legacy16, r.ptrs, r.p16, &host);
    const double o8 = time_launch(depthwise_legacy(p, true), r.ptrs, p, &host);
    const double t16 = time_launch(r.ch16, r.ptrs, r.p16, &host);
    const double t8 = time_launch(r.ch8, r.ptrs, p, &host);
    // 3x3: the other tiled INT8 kernel (a row ahead, or a row at a time) on the same launch.
    const double other8 = k == 3 ? time_launch(other_dw3_i8(r.ch8), r.ptrs, p, &host) : 0.0;
    std::printf("b%lld dw c%4lld %3lldx%-3lld k%lld s%lld x%lld  fp16 old %7.2f new %7.2f us (%.2fx) | "
                "int8 old %7.2f new %7.2f us (%.2fx) other 3x3 %7.2f | %s %s\n",
                (long long)batch, (long long)c, (long long)hw, (long long)hw, (long long)k,
                (long long)l[3], (long long)l[4], o16, t16, t16 / o16, o8, t8, t8 / o8, other8,
                r.ch16.variant->name, r.ch8.variant->name);
    old16 += o16 * double(l[4]);
    new16 += t16 * double(l[4]);
    old8 += o8 * double(l[4]);
    new8 += t8 * double(l[4]);
  }
  std::printf("depthwise layers batch %lld: FP16 old %.1f us, new %.1f us (%.2fx); INT8 old %.1f us, "
              "new %.1f us (%.2fx); INT8/FP16 new %.2fx\n",
              (long long)batch, old16, new16, new16 / old16, old8, new8, new8 / old8, new8 / new16);
}

// EfficientNet-B0's 3x3 depthwise layers (C, input size, stride, count) into Float16 (their
// outputs feed the squeeze-excitation pool), bias + ReLU: both tiled 3x3 INT8 kernels on the
// selection's launch, against the FP16 selection.
void bench_depthwise_f16out(int64_t batch) {
  const int64_t layers[][4] = {{32, 112, 1, 1}, {96, 112, 2, 1}, {144, 56, 1, 1},
                               {240, 28, 2, 1}, {480, 14, 1, 2}, {1152, 7, 1, 1}};
  double sel8 = 0, other8 = 0, t16 = 0, host = 0;
  for (const auto& l : layers) {
    ConvParams p = params_of({"bench", batch, l[0], l[0], l[1], l[1], 3, l[2], 1, 1, l[0]});
    p.act = test_util::kEveryActivation[1];
    const int64_t ny = batch * p.out_size[0] * p.out_size[1] * l[0];
    BenchRun r;
    bench_run(p, batch * l[1] * l[1] * l[0], l[0] * 9, ny, &r);
    if (::testing::Test::HasFatalFailure()) return;
    p.int8.y_dtype = DType::kFloat16;
    cuda::LaunchChoice ch;
    ASSERT_EQ(select_int8(p, DType::kFloat16, &ch), "");
    const double a = time_launch(ch, r.ptrs, p, &host), b = time_launch(other_dw3_i8(ch), r.ptrs, p, &host);
    const double f = time_launch(r.ch16, r.ptrs, r.p16, &host);
    std::printf("b%lld dw c%4lld %3lldx%-3lld s%lld x%lld  int8->fp16 %-28s %7.2f us, other %7.2f us | "
                "fp16 %7.2f us | %.2fx\n",
                (long long)batch, (long long)l[0], (long long)l[1], (long long)l[1], (long long)l[2],
                (long long)l[3], ch.variant->name, a, b, f, a / f);
    sel8 += a * double(l[3]);
    other8 += b * double(l[3]);
    t16 += f * double(l[3]);
  }
  std::printf("EfficientNet-B0 3x3 depthwise batch %lld: INT8 into Float16 %.1f us (other kernel "
              "%.1f us), FP16 %.1f us, %.2fx\n",
              (long long)batch, sel8, other8, t16, sel8 / t16);
}

// The 1x1 expansions of 24 and 40 input channels (EfficientNet-B0: 24->144 at 56x56 twice,
// 40->240 at 28x28 twice; MobileNetV2: 24->144 at 56x56 twice): the tile of 8-byte halves
// against FP16's choice, batch 1 and 8.
TEST(GpuConvInt8Bench, DISABLED_Cin24And40) {
  GPU_TEST_OR_SKIP();
  const BenchLayer layers[] = {{24, 144, 56, 1, 1, 2}, {40, 240, 28, 1, 1, 2}};
  for (int64_t batch : {1, 8}) {
    double t8 = 0, t16 = 0;
    for (const BenchLayer& l : layers) bench_int8_layer(l, batch, {1, 2}, &t8, &t16);
    std::printf("Cin 24 and 40 expansions, batch %lld: INT8 %.1f us, FP16 %.1f us, %.2fx\n",
                (long long)batch, t8, t16, t8 / t16);
  }
}

// JP_BENCH_BATCH=b: batch b only.
TEST(GpuConvInt8Bench, DISABLED_MobileNetV2Depthwise) {
  GPU_TEST_OR_SKIP();
  const char* batch = std::getenv("JP_BENCH_BATCH");
  for (const int64_t b : {1, 8})
    if (batch == nullptr || std::to_string(b) == batch) bench_depthwise(b);
}

TEST(GpuConvInt8Bench, DISABLED_EfficientNetB0Depthwise) {
  GPU_TEST_OR_SKIP();
  for (const int64_t b : {1, 8}) bench_depthwise_f16out(b);
}

// The RGB stem (ResNet-50's 7x7 stride-2 conv to 64 channels, bias + ReLU) at batch 1 and 8:
// FP16 on its 3 channels (the element-wise anyc tile, the FP16 plan's), FP16 on the input padded
// to 8 channels (16-byte loads: a candidate for FP16 plans), INT8 padded to 8 (the c8 tile, the
// INT8 plan's since session 26).
TEST(GpuConvInt8Bench, DISABLED_Stem) {
  GPU_TEST_OR_SKIP();
  for (const int64_t b : {1, 8}) {
    double us[3] = {0, 0, 0};
    std::string names[3], each;
    for (const int64_t cin : {3, 8}) {
      ConvParams p = params_of({"stem", b, cin, 64, 224, 224, 7, 2, 1, 3});
      p.act = test_util::kEveryActivation[1];
      BenchRun r;
      bench_run(p, b * 224 * 224 * cin, 64 * 49 * cin, b * 112 * 112 * 64, &r, cin == 8);
      if (::testing::Test::HasFatalFailure()) return;
      double host = 0;
      const int at = cin == 3 ? 0 : 1;
      us[at] = time_launch(r.ch16, r.ptrs, r.p16, &host);
      names[at] = r.ch16.variant->name;
      if (cin == 8) {
        us[2] = time_launch(r.ch8, r.ptrs, p, &host);
        names[2] = r.ch8.variant->name;
        for (const char* v : kVariants) {  // every tile of 8-byte halves, one slice
          const std::string name(v);
          if (name.find("_c8_") == std::string::npos || name.find("f16out") != std::string::npos)
            continue;
          char one[64];
          std::snprintf(one, sizeof one, " %s %.2f", v + 14,
                        time_launch(choice_of(v, p, 1), r.ptrs, p, &host));
          each += one;
        }
      }
    }
    std::printf("stem b%lld: fp16 C3 %s %.2f us | fp16 C8 %s %.2f us | int8 C8 %s %.2f us |%s\n",
                (long long)b, names[0].c_str(), us[0], names[1].c_str(), us[1], names[2].c_str(),
                us[2], each.c_str());
  }
}

TEST(GpuConvInt8Bench, DISABLED_ResNet50Batch1) {
  GPU_TEST_OR_SKIP();
  bench_int8(1, {1, 2, 3, 4, 6, 8, 12, 16});
}

TEST(GpuConvInt8Bench, DISABLED_ResNet50Batch8) {
  GPU_TEST_OR_SKIP();
  bench_int8(8, {1, 2, 3, 4});
}

}  // namespace
}  // namespace jetplan::kernels
