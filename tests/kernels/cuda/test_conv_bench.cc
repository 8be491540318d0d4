// Conv layer benchmarks of the FP16 CUDA kernels (run them with --gtest_also_run_disabled_tests):
// the selector's choice and every igemm tile and split at ResNet-50's layers (batch 1 and 8),
// ViT-B/16's GEMMs and ConvNeXt-T's MLPs (as 1x1 convs), stems, and the depthwise layers of
// MobileNetV2, EfficientNet-B0 and ConvNeXt-T. Times are the mean of a CUDA graph of
// back-to-back launches (time_launch, conv_bench.h); JETPLAN_BENCH_ALL=1 prints every tile and
// split's time too.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <string>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/conv_bench.h"
#include "tests/kernels/cuda/conv_test_cases.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/reference_formulas.h"

namespace jetplan::kernels {
namespace {

using namespace conv_test;
using gpu_test::DeviceBuffer;
constexpr uint16_t kConv = static_cast<uint16_t>(OpFamilyId::kConv);

// Times the selector's choice for layer `l` at `batch` (bias + `act` epilogue: ReLU unless
// given) and every igemm tile with each of `splits`, printing one line; adds the choice's time
// and FLOPs to the totals.
void bench_layer(const BenchLayer& l, int64_t batch, std::initializer_list<uint32_t> splits,
                 double* total_us, double* total_flop,
                 Activation act = test_util::kEveryActivation[1]) {
  {
    const int64_t pad = l.k / 2;
    Case c{"bench", batch, l.cin, l.cout, 1, {l.hw, l.hw}, {l.k, l.k}, {l.stride, l.stride}, {1, 1},
           {pad, pad}, {pad, pad}};
    const ConvParams p = params_of(c, true, act);
    const int64_t nx = batch * in_volume(p) * p.in_channels;
    const int64_t ny = batch * out_volume(p) * p.out_channels;
    const int64_t k = kernel_volume(p) * p.in_channels, nw = p.out_channels * k;
    DeviceBuffer dx(nx * 2), dw(nw * 2), db(p.out_channels * 2), dy(ny * 2);
    dx.random16(1, 1.0f);
    dw.random16(2, 0.05f);
    db.poison16(0);
    cuda::StepPointers ptrs = gpu_test::step_pointers({&dx, &dw, &db}, dy);
    ConvParams q = p;
    q.has_residual = false;
    cuda::LaunchChoice ch;
    ASSERT_EQ(gpu_test::select(kConv, DType::kFloat16, q, &ch), "");
    const auto ws = gpu_test::workspace_for(ch, &ptrs, /*zeroed=*/true);
    double host_us = 0;
    const double us = time_launch(ch, ptrs, q, &host_us);
    ASSERT_GT(us, 0) << ch.variant->name;
    // The other tiles and splits, for tuning the selector.
    double best_us = us;
    std::string best = "selected", alts;
    for (const IgemmTile& t : kTiles) {
      if ((!t.any_channels && q.in_channels % 8 != 0) || !gpu_test::variant_runs_here(t.name)) continue;
      for (uint32_t split : splits) {
        if (split > cuda::ceil_div_u32(uint64_t(k), 32) / 2 && split > 1) continue;
        const cuda::LaunchChoice alt = igemm_choice(t, q, split);
        cuda::StepPointers alt_ptrs = ptrs;
        const auto alt_ws = gpu_test::workspace_for(alt, &alt_ptrs, /*zeroed=*/true);
        double h = 0;
        const double a_us = time_launch(alt, alt_ptrs, q, &h);
        if (a_us > 0) {
          char buf[64];
          std::snprintf(buf, sizeof buf, " %s/%u=%.2f", t.name + 14, split, a_us);
          alts += buf;
        }
        if (a_us > 0 && a_us < best_us) {
          best_us = a_us;
          best = std::string(t.name + 8) + " split " + std::to_string(split);
        }
      }
    }
    const double flop = 2.0 * double(ny) * double(k);
    std::printf("b%lld conv %4lld->%4lld %3lldx%-3lld k%lld s%lld x%lld  %-30s split %2u  %8.2f us  %6.1f TFLOP/s  (plain launches %.1f us; best %s %.2f us)\n",
                (long long)batch, (long long)l.cin, (long long)l.cout, (long long)l.hw, (long long)l.hw,
                (long long)l.k, (long long)l.stride, (long long)l.count, ch.variant->name,
                ch.split_k, us, flop / us * 1e-6, host_us, best.c_str(), best_us);
    // JETPLAN_BENCH_ALL=1: every tile and split's time too (tile/split=us), for the selector.
    if (std::getenv("JETPLAN_BENCH_ALL") != nullptr) std::printf("  alts:%s\n", alts.c_str());
    *total_us += us * double(l.count);
    *total_flop += flop * double(l.count);
  }
}

// bench_layer over `layers` at `batch`, then a line of their totals headed `what`.
template <typename Layers>
void bench_layers(const std::string& what, const Layers& layers, int64_t batch,
                  std::initializer_list<uint32_t> splits,
                  Activation act = test_util::kEveryActivation[1]) {
  double total_us = 0, total_flop = 0;
  for (const BenchLayer& l : layers) {
    bench_layer(l, batch, splits, &total_us, &total_flop, act);
    if (::testing::Test::HasFatalFailure()) return;
  }
  std::printf("%s: %.1f us, %.2f GFLOP, %.1f TFLOP/s\n", what.c_str(), total_us,
              total_flop * 1e-9, total_flop / total_us * 1e-6);
}

TEST(GpuConvBench, DISABLED_ResNet50Batch1) {
  GPU_TEST_OR_SKIP();
  bench_layers("ResNet-50 batch 1, all conv layers", kResNet50, 1, {1, 2, 3, 4, 6, 8, 12, 16});
}

TEST(GpuConvBench, DISABLED_ResNet50Batch8) {
  GPU_TEST_OR_SKIP();
  bench_layers("ResNet-50 batch 8, all conv layers", kResNet50, 8, {1, 2, 4});
}

// ViT-B/16's GEMMs as the 1x1 convs GPU plans run them ([tokens, 1, 1, C]): QKV, output
// projection, MLP up and down, at batch 1 (197 tokens) and 8 (1576).
TEST(GpuConvBench, DISABLED_VitGemms) {
  GPU_TEST_OR_SKIP();
  constexpr BenchLayer kVit[] = {{768, 2304, 1, 1, 1, 12}, {768, 768, 1, 1, 1, 12},
                                 {768, 3072, 1, 1, 1, 12}, {3072, 768, 1, 1, 1, 12}};
  for (int64_t tokens : {197, 1576})
    bench_layers("ViT-B/16 " + std::to_string(tokens) + " tokens, all GEMMs", kVit, tokens,
                 {1, 2, 3, 4});
}

// ConvNeXt-T's MLPs as the 1x1 convs GPU plans run them: the up-projection with GELU, the
// down-projection with its bias only (ReLU here), at batch 1 and 8.
TEST(GpuConvBench, DISABLED_ConvNextMlps) {
  GPU_TEST_OR_SKIP();
  constexpr BenchLayer kMlps[] = {{96, 384, 56, 1, 1, 3},    {384, 96, 56, 1, 1, 3},
                                  {192, 768, 28, 1, 1, 3},   {768, 192, 28, 1, 1, 3},
                                  {384, 1536, 14, 1, 1, 9},  {1536, 384, 14, 1, 1, 9},
                                  {768, 3072, 7, 1, 1, 3},   {3072, 768, 7, 1, 1, 3}};
  for (int64_t batch : {1, 8}) {
    double us = 0, flop = 0;
    for (size_t i = 0; i < std::size(kMlps); ++i) {
      bench_layer(kMlps[i], batch, {1, 2, 3, 4}, &us, &flop,
                  test_util::kEveryActivation[i % 2 == 0 ? 9 : 1]);  // Gelu, Relu
      if (::testing::Test::HasFatalFailure()) return;
    }
    std::printf("ConvNeXt-T batch %lld, all MLP convs: %.1f us, %.2f GFLOP, %.1f TFLOP/s\n",
                (long long)batch, us, flop * 1e-9, flop / us * 1e-6);
  }
}

// Stem convs of RGB input as they are (3 channels: the selector's stem kernel, against the
// element-wise `anyc` tile among the alternatives) and over input padded with zero channels to
// 8 (the 16-byte cp.async tiles): ResNet's 7x7 stem, MobileNet/EfficientNet's 3x3 one, and the
// YOLO-style detector's 6x6 one at 640x640 (padded by 3 here, by 2 in the model).
TEST(GpuConvBench, DISABLED_StemChannels) {
  GPU_TEST_OR_SKIP();
  constexpr BenchLayer kStems[] = {{3, 64, 224, 7, 2, 1}, {8, 64, 224, 7, 2, 1},
                                   {3, 32, 224, 3, 2, 1}, {8, 32, 224, 3, 2, 1},
                                   {3, 32, 640, 6, 2, 1}};
  for (int64_t batch : {1, 8})
    bench_layers("stems at batch " + std::to_string(batch), kStems, batch, {1, 2, 4});
}

// The YOLO-style detector's convs after its stem at 640x640 (YOLOv5s widths): large images, 32
// to 128 channels, short K. At batch 8 they take a fifth of the plan's time at a small part of
// the memory roofline (tests/perf/RESULTS.md, session 33): every tile's time, for the selector,
// with the model's SiLU epilogue.
TEST(GpuConvBench, DISABLED_YoloEarlyLayers) {
  GPU_TEST_OR_SKIP();
  constexpr BenchLayer kYolo[] = {{32, 64, 320, 3, 2, 1},  {64, 32, 160, 1, 1, 2},
                                  {32, 32, 160, 1, 1, 1},  {32, 32, 160, 3, 1, 1},
                                  {64, 64, 160, 1, 1, 1},  {64, 128, 160, 3, 2, 1},
                                  {128, 64, 80, 1, 1, 2},  {64, 64, 80, 1, 1, 2},
                                  {64, 64, 80, 3, 1, 2},   {128, 128, 80, 1, 1, 1}};
  for (int64_t batch : {1, 8})
    bench_layers("YOLO-style early convs at batch " + std::to_string(batch), kYolo, batch,
                 {1, 2}, test_util::kEveryActivation[8]);  // SiLU
}

// The depthwise layers of MobileNetV2, EfficientNet-B0 and ConvNeXt-T at batch 1 and 8: the
// selected kernel and launch, the tiled kernel of the window (jp_conv_dw<K>_f16, its own
// launch) and the kernel of a channel a thread (jp_conv_depthwise_f16), for the selection rule.
TEST(GpuConvBench, DISABLED_DepthwiseVariants) {
  GPU_TEST_OR_SKIP();
  struct Dw {
    int64_t c, hw, k, stride;
  };
  const Dw layers[] = {{96, 112, 3, 2}, {144, 56, 3, 1}, {192, 28, 3, 1}, {384, 14, 3, 1},
                       {960, 7, 3, 1},   {240, 28, 5, 2}, {672, 14, 5, 1}, {1152, 7, 5, 1},
                       {96, 56, 7, 1},   {192, 28, 7, 1}, {384, 14, 7, 1}, {768, 7, 7, 1}};
  const cuda::TargetInfo target = gpu_test::device_target();
  for (int64_t batch : {1, 8}) {
    for (const Dw& l : layers) {
      const int64_t pad = l.k / 2;
      Case c{"dw", batch, l.c, l.c, l.c, {l.hw, l.hw}, {l.k, l.k}, {l.stride, l.stride}, {1, 1},
             {pad, pad}, {pad, pad}};
      ConvParams p = params_of(c, true, test_util::kEveryActivation[1]);
      p.has_residual = false;
      const int64_t nx = batch * in_volume(p) * l.c, ny = batch * out_volume(p) * l.c;
      DeviceBuffer dx(nx * 2), dw(l.c * l.k * l.k * 2), db(l.c * 2), dy(ny * 2);
      dx.random16(1, 1.0f);
      dw.random16(2, 0.05f);
      db.poison16(0);
      cuda::StepPointers ptrs = gpu_test::step_pointers({&dx, &dw, &db}, dy);
      cuda::LaunchChoice ch, tiled, one;
      ASSERT_EQ(gpu_test::select(kConv, DType::kFloat16, p, &ch), "");
      ASSERT_TRUE(cuda::launch_conv_dw_tiled(p, target, &tiled));
      one.variant = cuda::find_kernel_variant("jp_conv_depthwise_f16");
      cuda::launch_1d(uint64_t(ny), 256, target.sm_count * 16, &one);
      double plain = 0;
      const double us = time_launch(ch, ptrs, p, &plain);
      const double tiled_us = time_launch(tiled, ptrs, p, &plain);
      const double one_us = time_launch(one, ptrs, p, &plain);
      std::printf("b%lld dw%lld s%lld C %4lld %3lldx%-3lld %-22s %7.2f us | tiled %.2f, a channel "
                  "a thread %.2f\n", (long long)batch, (long long)l.k, (long long)l.stride,
                  (long long)l.c, (long long)l.hw, (long long)l.hw, ch.variant->name, us,
                  tiled_us, one_us);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
