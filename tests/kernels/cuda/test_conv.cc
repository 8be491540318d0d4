// CUDA conv kernels (kernels/cuda/conv.cu) against the CPU twin (kernels/cpu/conv.cc) with
// channels_last: every variant forced on every case it accepts (igemm tiles with and without
// split-K, the grouped form's tiles, depthwise, direct; 1-D convs on the 2-D ones too), plus the
// selector's own choice, over ResNet-like, grouped (RegNet, ResNeXt), speech-encoder (1-D), 3-D
// and odd shapes, batch 1 and 8, with the epilogue (bias, residual, activation) off and on, and
// with the residual after the activation.
// The twin runs on the FP16-rounded inputs, so only the kernel's FP32 accumulation order and its
// FP16 output rounding differ. Tolerance (K = the reduction length Cin/groups * kernel volume,
// inputs in [-1, 1]): |got - want| <= 1e-2 * |want| + 1e-2 * sqrt(K) / 8. NaN never passes;
// outputs are poisoned before each launch and the guard after them is checked.
// The layer benchmarks (GpuConvBench) are in test_conv_bench.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/conv_test_cases.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/reference_formulas.h"

namespace jetplan::kernels {
namespace {

using namespace conv_test;
using gpu_test::DeviceBuffer;
constexpr uint16_t kConv = static_cast<uint16_t>(OpFamilyId::kConv);


// Launches `choice` with a workspace as the runtime gives it: garbage but for what the row's
// zero_workspace clears (the igemm rows: the split-K counters at its end). "" on success.
std::string launch_with_workspace(const cuda::LaunchChoice& choice, cuda::StepPointers ptrs,
                                  const ConvParams& p) {
  const std::unique_ptr<DeviceBuffer> ws = gpu_test::workspace_for(choice, &ptrs);
  std::string r = gpu_test::launch(choice.variant->name, choice, ptrs, p);
  if (r.empty() && ws && !ws->guard_intact()) r = "workspace guard overwritten";
  return r;
}

// Tolerance (K the reduction length): |got - want| <= 1e-2 * |want| + 1e-2 * sqrt(K) / 8.
testing::AssertionResult close_conv(const std::vector<uint16_t>& got, const std::vector<float>& want,
                                    int64_t k) {
  return gpu_test::all_close_half(got, want, 1e-2, 1e-2 * std::sqrt(double(k)) / 8);
}

// The tiled depthwise kernel where it takes p (conv_dw_tiled_fits): the selection's launch and
// one of two blocks along the pixels (each strides over many).
void push_tiled_depthwise(const ConvParams& p,
                          std::vector<std::pair<std::string, cuda::LaunchChoice>>* runs) {
  cuda::LaunchChoice t;
  const bool fits = cuda::launch_conv_dw_tiled(p, gpu_test::device_target(), &t);
  EXPECT_EQ(fits, conv_dw_tiled_fits(p));
  if (!fits) return;
  runs->push_back({std::string("tiled ") + t.variant->name, t});
  t.grid[0] = std::min<uint32_t>(t.grid[0], 2);
  runs->push_back({std::string("tiled, two blocks ") + t.variant->name, t});
}

// The stem kernels where they take p (conv_stem_fits): the selection's launch (whichever N tile
// it gives), the other N tile forced, and two CTAs striding over every tile.
void push_stem(const ConvParams& p, std::vector<std::pair<std::string, cuda::LaunchChoice>>* runs) {
  cuda::LaunchChoice t;
  if (!cuda::launch_conv_stem(p, gpu_test::device_target(), &t)) {
    EXPECT_FALSE(conv_stem_fits(p) && conv_stem_layout(p, 64).bytes <= 48 * 1024);
    return;
  }
  runs->push_back({std::string("stem ") + t.variant->name, t});
  const bool n32 = std::string(t.variant->name) == "jp_conv_stem_n32_f16";
  cuda::LaunchChoice o = t;
  o.variant = cuda::find_kernel_variant(n32 ? "jp_conv_stem_n64_f16" : "jp_conv_stem_n32_f16");
  o.grid[1] = cuda::ceil_div_u32(uint64_t(p.out_channels), n32 ? 64 : 32);
  o.shared_bytes = conv_stem_layout(p, n32 ? 64 : 32).bytes;
  runs->push_back({std::string("stem ") + o.variant->name, o});
  t.grid[0] = std::min<uint32_t>(t.grid[0], 2);
  runs->push_back({std::string("stem, two CTAs ") + t.variant->name, t});
}

std::vector<Case> cases() {
  return {
      {"3x3 s1 p1", 1, 64, 64, 1, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"3x3 s2 p1 b8", 8, 32, 96, 1, {15, 15}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
      {"1x1 b8 cout 136", 8, 128, 136, 1, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
      {"1x1 s2", 1, 64, 128, 1, {14, 14}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}},
      {"7x7 s2 cin 3", 1, 3, 64, 1, {40, 40}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}},
      // Stems (the stem kernels): YOLOv5's 6x6 s2 into 32 channels with a row of 71 outputs (a
      // partial second tile), MobileNet's 3x3 s2, 4 channels into 80 (two N tiles, the second
      // partial), a dilated one, a 9x9 window of K 243.
      {"6x6 s2 p2 cin 3 cout 32 b2", 2, 3, 32, 1, {21, 142}, {6, 6}, {2, 2}, {1, 1}, {2, 2}, {2, 2}},
      {"3x3 s2 cin 3 cout 24 b3", 3, 3, 24, 1, {17, 130}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 1}},
      {"3x3 s1 cin 4 cout 80", 1, 4, 80, 1, {9, 70}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"5x3 dil 2x3 s1x2 cin 2 cout 16", 2, 2, 16, 1, {13, 40}, {5, 3}, {1, 2}, {2, 3}, {2, 1}, {3, 2}},
      {"9x9 s4 cin 3 cout 64", 1, 3, 64, 1, {40, 300}, {9, 9}, {4, 4}, {1, 1}, {4, 4}, {4, 4}},
      {"odd cin 5 cout 13", 2, 5, 13, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 0}, {2, 1}},
      {"dilation 2", 1, 16, 24, 1, {12, 12}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}},
      {"asym pads 3x2", 2, 24, 40, 1, {10, 9}, {3, 2}, {1, 2}, {1, 1}, {0, 1}, {2, 0}},
      {"late 3x3 512", 1, 512, 512, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"cin 60", 1, 60, 20, 1, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"cout 7", 1, 8, 7, 1, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"depthwise 3x3 s1 b8", 8, 32, 32, 32, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"depthwise 3x3 s2", 1, 48, 48, 48, {15, 15}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
      {"depthwise 5x5 s2", 1, 24, 24, 24, {16, 16}, {5, 5}, {2, 2}, {1, 1}, {2, 2}, {1, 1}},
      {"depthwise 3x3 dil 2 C 7", 2, 7, 7, 7, {9, 9}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}},
      {"depthwise 7x7 C 64", 2, 64, 64, 64, {13, 11}, {7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3}},
      {"depthwise 5x5 s1 asym pads", 3, 16, 16, 16, {10, 9}, {5, 5}, {1, 1}, {1, 1}, {2, 1}, {1, 2}},
      {"depthwise 3x3 s2 pad 0 C 40", 2, 40, 40, 40, {12, 13}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1}},
      {"grouped 4", 2, 16, 8, 4, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      // Grouped (the grouped igemm form): RegNet's 8 channels a group, ResNeXt's 4, groups of 48
      // that N tiles of 64 straddle, groups wider than a tile, an expansion within groups,
      // RegNetY-400MF's last stage (440 channels: a partial last tile).
      {"grouped gw 8 s2 b2", 2, 48, 48, 6, {15, 15}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
      {"grouped gw 4 (ResNeXt)", 1, 128, 128, 32, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"grouped gw 48 straddles tiles", 1, 192, 192, 4, {7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"grouped gw 128 (2 tiles a group)", 2, 256, 256, 2, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"grouped 1x1 expansion 8 -> 24", 2, 64, 192, 8, {6, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
      {"grouped gw 8 C 440 b3", 3, 440, 440, 55, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"1-D", 2, 12, 10, 1, {20}, {5}, {2}, {1}, {2}, {1}},
      // 1-D convs run on the 2-D kernels as height 1 (speech encoders: wide C, long L).
      {"1-D k3 s1 C 80x256", 2, 80, 256, 1, {150}, {3}, {1}, {1}, {1}, {1}},
      {"1-D k10 s5 cin 1", 1, 1, 64, 1, {400}, {10}, {5}, {1}, {0}, {0}},
      {"1-D depthwise k5 dil 2", 2, 24, 24, 24, {33}, {5}, {1}, {2}, {4}, {4}},
      {"1-D grouped 8", 1, 64, 32, 8, {40}, {3}, {1}, {1}, {1}, {1}},
      {"3-D", 1, 6, 9, 3, {5, 6, 4}, {3, 3, 2}, {1, 2, 1}, {1, 1, 1}, {1, 1, 0}, {1, 0, 1}},
  };
}

class GpuConv : public testing::TestWithParam<int> {};

// Every kernel that takes conv `p` (case `c`) against the CPU twin, on fresh inputs.
template <typename Rng>
void check_every_variant(const Case& c, const ConvParams& p, int epilogue, Rng& rng) {
  const int64_t nx = p.batch * in_volume(p) * p.in_channels;
  const int64_t ny = p.batch * out_volume(p) * p.out_channels;
  const int64_t k = kernel_volume(p) * (p.in_channels / p.groups);
  const int64_t nw = p.out_channels * k;
  const std::vector<float> x = gpu_test::round_half(rng.uniform(nx, -1.f, 1.f));
  const std::vector<float> w = gpu_test::round_half(rng.uniform(nw, -1.f, 1.f));
  const std::vector<float> bias = gpu_test::round_half(rng.uniform(p.out_channels, -1.f, 1.f));
  const std::vector<float> res = gpu_test::round_half(rng.uniform(ny, -1.f, 1.f));
  std::vector<float> want(static_cast<size_t>(ny));
  cpu::conv(p, x.data(), w.data(), bias.data(), res.data(), want.data());

  const auto dx = gpu_test::to_device(x, DType::kFloat16);
  const auto dw = gpu_test::to_device(w, DType::kFloat16);
  const auto db = gpu_test::to_device(bias, DType::kFloat16);
  const auto dr = gpu_test::to_device(res, DType::kFloat16);
  DeviceBuffer dy(ny * 2);
  cuda::StepPointers ptrs{};
  ptrs.in[0] = dx->get();
  ptrs.in[1] = dw->get();
  if (p.has_bias) ptrs.in[2] = db->get();
  if (p.has_residual) ptrs.in[p.has_bias ? 3 : 2] = dr->get();
  ptrs.out[0] = dy.get();

  std::vector<std::pair<std::string, cuda::LaunchChoice>> runs;
  const bool igemm_ok = p.groups == 1 && p.spatial_rank <= 2;
  const uint32_t kt = cuda::ceil_div_u32(uint64_t(k), 32);
  for (const IgemmTile& t : kTiles) {
    if (!igemm_ok || (!t.any_channels && p.in_channels % 8 != 0) || !gpu_test::variant_runs_here(t.name)) continue;
    runs.push_back({t.name, igemm_choice(t, p, 1)});
    if (kt >= 3) runs.push_back({std::string(t.name) + " split 3", igemm_choice(t, p, 3)});
    if (kt >= 16) runs.push_back({std::string(t.name) + " split 7", igemm_choice(t, p, 7)});
  }
  for (const IgemmTile& t : kGroupedTiles) {  // split-K slices may be empty on some tiles
    if (!conv_grouped_igemm_fits(p, 4)) continue;
    runs.push_back({t.name, igemm_choice(t, p, 1)});
    runs.push_back({std::string(t.name) + " split 3", igemm_choice(t, p, 3)});
  }
  push_stem(p, &runs);
  cuda::LaunchChoice one;
  const uint64_t total = uint64_t(ny);
  if (p.spatial_rank <= 2 && p.groups == p.in_channels && p.groups == p.out_channels) {
    one.variant = cuda::find_kernel_variant("jp_conv_depthwise_f16");
    cuda::launch_1d(total, 256, 1024, &one);
    runs.push_back({"depthwise", one});
    cuda::launch_1d(total, 64, 3, &one);  // a grid too small for one pass: strides over the rest
    runs.push_back({"depthwise small grid", one});
    push_tiled_depthwise(p, &runs);
  }
  one.variant = cuda::find_kernel_variant("jp_conv_direct_f16");
  cuda::launch_1d(total, 256, 1024, &one);
  runs.push_back({"direct", one});
  cuda::LaunchChoice chosen;
  ASSERT_EQ(gpu_test::select(kConv, DType::kFloat16, p, &chosen), "");
  runs.push_back({std::string("selected ") + chosen.variant->name + " split " +
                      std::to_string(chosen.split_k),
                  chosen});

  for (const auto& [label, choice] : runs) {
    ASSERT_NE(choice.variant, nullptr) << label;
    dy.poison16(gpu_test::kHalfPoison);
    ASSERT_EQ(launch_with_workspace(choice, ptrs, p), "") << c.name << ": " << label;
    EXPECT_TRUE(close_conv(dy.download<uint16_t>(size_t(ny)), want, k)) << c.name << ", " << label << ", epilogue " << epilogue;
    EXPECT_TRUE(dy.guard_intact()) << c.name << ", " << label;
  }
}

TEST_P(GpuConv, EveryVariantMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case c = cases()[size_t(GetParam())];
  // Epilogue 0: none; 1: bias, residual, activation; 2: the residual after the activation.
  for (int epilogue = 0; epilogue < 3; ++epilogue) {
    const Activation act = epilogue ? test_util::kEveryActivation[1 + GetParam() % 10] : Activation{};
    ConvParams p = params_of(c, epilogue != 0, act);
    p.residual_after_act = epilogue == 2;
    check_every_variant(c, p, epilogue, rng);
  }
}

// Float32 convs (GPU plans of --precision fp32): the FP32 implicit GEMM (jp_conv_igemm_f32, the
// selector's for groups 1) and the direct kernel (jp_conv_direct_f32, every case) against the
// twin on the same float32 inputs; only the summation order differs:
// |got - want| <= 1e-5 * |want| + 1e-5 * sqrt(K) / 8. Outputs poisoned (NaN), the guard checked.
TEST_P(GpuConv, Float32MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case c = cases()[size_t(GetParam())];
  for (int epilogue = 0; epilogue < 2; ++epilogue) {
    const Activation act = epilogue ? test_util::kEveryActivation[1 + GetParam() % 10] : Activation{};
    const ConvParams p = params_of(c, epilogue == 1, act);
    const int64_t ny = p.batch * out_volume(p) * p.out_channels;
    const int64_t k = kernel_volume(p) * (p.in_channels / p.groups);
    const std::vector<float> x = rng.uniform(p.batch * in_volume(p) * p.in_channels, -1.f, 1.f);
    const std::vector<float> w = rng.uniform(p.out_channels * k, -1.f, 1.f);
    const std::vector<float> bias = rng.uniform(p.out_channels, -1.f, 1.f);
    const std::vector<float> res = rng.uniform(ny, -1.f, 1.f);
    std::vector<float> want(static_cast<size_t>(ny));
    cpu::conv(p, x.data(), w.data(), bias.data(), res.data(), want.data());
    const auto dx = gpu_test::to_device(x, DType::kFloat32);
    const auto dw = gpu_test::to_device(w, DType::kFloat32);
    const auto db = gpu_test::to_device(bias, DType::kFloat32);
    const auto dr = gpu_test::to_device(res, DType::kFloat32);
    DeviceBuffer dy(size_t(ny) * 4);
    cuda::StepPointers ptrs{};
    ptrs.in[0] = dx->get();
    ptrs.in[1] = dw->get();
    if (p.has_bias) ptrs.in[2] = db->get();
    if (p.has_residual) ptrs.in[p.has_bias ? 3 : 2] = dr->get();
    ptrs.out[0] = dy.get();
    // The selector's kernel (the FP32 implicit GEMM for groups 1, else direct), then the
    // direct kernel forced for groups 1 too.
    cuda::LaunchChoice chosen;
    ASSERT_EQ(gpu_test::select(kConv, DType::kFloat32, p, &chosen), "") << c.name;
    EXPECT_STREQ(chosen.variant->name, p.groups == 1 ? "jp_conv_igemm_f32" : "jp_conv_direct_f32");
    std::vector<cuda::LaunchChoice> runs = {chosen};
    cuda::LaunchChoice igemm;
    EXPECT_EQ(cuda::launch_conv_igemm_f32(p, &igemm), p.groups == 1) << c.name;
    if (p.groups == 1) {
      cuda::LaunchChoice direct;
      direct.variant = cuda::find_kernel_variant("jp_conv_direct_f32");
      cuda::launch_1d(uint64_t(ny), 256, 1024, &direct);
      runs.push_back(direct);
    }
    for (const cuda::LaunchChoice& run : runs) {
      gpu_test::poison(dy, DType::kFloat32);
      ASSERT_EQ(gpu_test::launch(run.variant->name, run, ptrs, p), "") << c.name;
      EXPECT_TRUE(gpu_test::all_close(dy.download<float>(size_t(ny)), want, 1e-5,
                                      1e-5 * std::sqrt(double(k)) / 8))
          << c.name << ", epilogue " << epilogue << ", " << run.variant->name;
      EXPECT_TRUE(dy.guard_intact()) << c.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuConv, testing::Range(0, static_cast<int>(cases().size())));

// Every activation on convs of whole tiles (M and N multiples of 128), where the FP16 epilogue
// inlines Gelu (with_activation<true>), and on one of edge tiles.
TEST(GpuConv, EveryActivationOnWholeAndEdgeTiles) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case shapes[] = {
      {"1x1 whole tiles", 2, 64, 256, 1, {16, 16}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
      {"3x3 edge tiles", 1, 32, 136, 1, {15, 13}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}}};
  for (const Case& c : shapes)
    for (const Activation& act : test_util::kEveryActivation) {
      SCOPED_TRACE(std::string(c.name) + ", activation " + std::to_string(int(act.kind)));
      check_every_variant(c, params_of(c, true, act), 1, rng);
    }
}

// GPT-2's c_fc as GPU plans run it: a 1x1 conv over 128 tokens, 768 -> 3072 channels, with
// bias and the tanh form of GELU (out of line in every tile: inlined beside Gelu, it added
// spills to the 128x128k64 tile), every variant.
TEST(GpuConv, Gpt2MlpWithGeluTanh) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case c{"gpt2 c_fc", 1, 768, 3072, 1, {1, 128}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}};
  check_every_variant(c, params_of(c, true, {ActivationKind::kGeluTanh, 0.f, 0.f}), 1, rng);
}

// Concat in place: y has `extra` more channels than the conv makes and the conv writes its own
// at `offset` (odd offsets take the kernels' unpaired stores), adding a dense residual before
// or after the activation. Every variant must match the CPU twin inside the slice and leave
// every other channel as it was (poisoned).
class GpuConvSlice : public testing::TestWithParam<int> {};

TEST_P(GpuConvSlice, EveryVariantWritesOnlyItsChannelSlice) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case c = cases()[size_t(GetParam())];
  // A residual (dense) before the activation at offset 3, after it at offset 8.
  for (const auto& [offset, extra] : {std::pair<int64_t, int64_t>{0, 5}, {3, 3}, {8, 8}}) {
    ConvParams p = params_of(c, false, test_util::kEveryActivation[1 + GetParam() % 10]);
    p.has_bias = true;
    p.has_residual = offset != 0;
    p.residual_after_act = offset == 8;
    p.y_channels = p.out_channels + extra;
    p.y_channel_offset = offset;
    const int64_t pixels = p.batch * out_volume(p);
    const int64_t nx = p.batch * in_volume(p) * p.in_channels, ny = pixels * p.y_channels;
    const int64_t k = kernel_volume(p) * (p.in_channels / p.groups);
    const int64_t nw = p.out_channels * k;
    const std::vector<float> x = gpu_test::round_half(rng.uniform(nx, -1.f, 1.f));
    const std::vector<float> w = gpu_test::round_half(rng.uniform(nw, -1.f, 1.f));
    const std::vector<float> bias = gpu_test::round_half(rng.uniform(p.out_channels, -1.f, 1.f));
    const std::vector<float> res =
        gpu_test::round_half(rng.uniform(pixels * p.out_channels, -1.f, 1.f));
    // The twin writes the same slice of a float y that starts out as NaN everywhere.
    std::vector<float> want(static_cast<size_t>(ny), std::nanf(""));
    cpu::conv(p, x.data(), w.data(), bias.data(), res.data(), want.data());

    const auto dx = gpu_test::to_device(x, DType::kFloat16);
    const auto dw = gpu_test::to_device(w, DType::kFloat16);
    const auto db = gpu_test::to_device(bias, DType::kFloat16);
    const auto dr = gpu_test::to_device(res, DType::kFloat16);
    DeviceBuffer dy(ny * 2);
    cuda::StepPointers ptrs = gpu_test::step_pointers({dx.get(), dw.get(), db.get()}, dy);
    if (p.has_residual) ptrs.in[3] = dr->get();
    std::vector<std::pair<std::string, cuda::LaunchChoice>> runs;
    const uint32_t kt = cuda::ceil_div_u32(uint64_t(k), 32);
    for (const IgemmTile& t : kTiles) {
      if (p.groups != 1 || p.spatial_rank > 2 || (!t.any_channels && p.in_channels % 8 != 0) ||
          !gpu_test::variant_runs_here(t.name))
        continue;
      runs.push_back({t.name, igemm_choice(t, p, 1)});
      if (kt >= 3) runs.push_back({std::string(t.name) + " split 3", igemm_choice(t, p, 3)});
    }
    for (const IgemmTile& t : kGroupedTiles)
      if (conv_grouped_igemm_fits(p, 4)) runs.push_back({t.name, igemm_choice(t, p, 2)});
    push_stem(p, &runs);
    cuda::LaunchChoice one;
    if (p.spatial_rank <= 2 && p.groups == p.in_channels && p.groups == p.out_channels) {
      one.variant = cuda::find_kernel_variant("jp_conv_depthwise_f16");
      cuda::launch_1d(uint64_t(pixels * p.out_channels), 256, 1024, &one);
      runs.push_back({"depthwise", one});
      push_tiled_depthwise(p, &runs);
    }
    one.variant = cuda::find_kernel_variant("jp_conv_direct_f16");
    cuda::launch_1d(uint64_t(pixels * p.out_channels), 256, 1024, &one);
    runs.push_back({"direct", one});
    for (const auto& [label, choice] : runs) {
      ASSERT_NE(choice.variant, nullptr) << label;
      dy.poison16(gpu_test::kHalfPoison);
      ASSERT_EQ(launch_with_workspace(choice, ptrs, p), "") << c.name << ": " << label;
      const std::vector<uint16_t> got = dy.download<uint16_t>(size_t(ny));
      std::vector<uint16_t> inside;
      std::vector<float> inside_want;
      for (int64_t i = 0; i < ny; ++i) {
        const int64_t ch = i % p.y_channels;
        if (ch >= offset && ch < offset + p.out_channels) {
          inside.push_back(got[size_t(i)]);
          inside_want.push_back(want[size_t(i)]);
        } else {
          ASSERT_EQ(got[size_t(i)], gpu_test::kHalfPoison)
              << c.name << ", " << label << ": channel " << ch << " outside the slice written";
        }
      }
      EXPECT_TRUE(close_conv(inside, inside_want, k))
          << c.name << ", " << label << ", offset " << offset << " extra " << extra;
      EXPECT_TRUE(dy.guard_intact()) << c.name << ", " << label;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuConvSlice,
                         testing::Range(0, static_cast<int>(cases().size())));

}  // namespace
}  // namespace jetplan::kernels
