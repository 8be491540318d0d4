// CUDA conv kernels (kernels/cuda/conv.cu) against the CPU twin (kernels/cpu/conv.cc) with
// channels_last: every variant forced on every case it accepts (igemm tiles with and without
// split-K, the grouped form's tiles, depthwise, direct; 1-D convs on the 2-D ones too), plus the
// selector's own choice, over ResNet-like, grouped (RegNet, ResNeXt), speech-encoder (1-D), 3-D
// and odd shapes, batch 1 and 8, with the epilogue (bias, residual, activation) off and on.
// The twin runs on the FP16-rounded inputs, so only the kernel's FP32 accumulation order and its
// FP16 output rounding differ. Tolerance (K = the reduction length Cin/groups * kernel volume,
// inputs in [-1, 1]): |got - want| <= 1e-2 * |want| + 1e-2 * sqrt(K) / 8. NaN never passes;
// outputs are poisoned before each launch and the guard after them is checked.
// GpuConvBench.DISABLED_ResNet50Batch1 times ResNet-50's batch-1 conv layers (run it with
// --gtest_also_run_disabled_tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/conv_bench.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/reference_formulas.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
constexpr uint16_t kConv = static_cast<uint16_t>(OpFamilyId::kConv);

struct Case {
  const char* name;
  int64_t batch, cin, cout, groups;
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end;
};

ConvParams params_of(const Case& c, bool epilogue, Activation act) {
  ConvParams p;
  test_util::set_window_dims(p, static_cast<int>(c.in.size()), c);
  test_util::set_conv_channels(p, c.batch, c.cin, c.cout, c.groups);
  for (size_t d = 0; d < c.in.size(); ++d)
    p.out_size[d] = (c.in[d] + c.pad_begin[d] + c.pad_end[d] - c.dilation[d] * (c.kernel[d] - 1) - 1) /
                        c.stride[d] + 1;
  p.has_bias = epilogue;
  p.has_residual = epilogue;
  p.act = act;
  p.channels_last = true;
  return p;
}

int64_t out_volume(const ConvParams& p) {
  int64_t v = 1;
  for (int d = 0; d < p.spatial_rank; ++d) v *= p.out_size[d];
  return v;
}
int64_t in_volume(const ConvParams& p) {
  int64_t v = 1;
  for (int d = 0; d < p.spatial_rank; ++d) v *= p.in_size[d];
  return v;
}
int64_t kernel_volume(const ConvParams& p) {
  int64_t v = 1;
  for (int d = 0; d < p.spatial_rank; ++d) v *= p.kernel[d];
  return v;
}

struct IgemmTile {
  const char* name;
  uint32_t bm, bn;
  bool any_channels;
};
constexpr IgemmTile kTiles[] = {{"jp_conv_igemm_128x128_f16", 128, 128, false},
                                {"jp_conv_igemm_64x64_f16", 64, 64, false},
                                {"jp_conv_igemm_32x64_f16", 32, 64, false},
                                {"jp_conv_igemm_32x64k64_f16", 32, 64, false},
                                {"jp_conv_igemm_128x128k64_f16", 128, 128, false},
                                {"jp_conv_igemm_64x64k64_f16", 64, 64, false},
                                {"jp_conv_igemm_64x64_anyc_f16", 64, 64, true}};
// The grouped form's tiles (conv_grouped_igemm_fits).
constexpr IgemmTile kGroupedTiles[] = {{"jp_conv_igemm_64x64_grouped_f16", 64, 64, false},
                                       {"jp_conv_igemm_32x64_grouped_f16", 32, 64, false}};

// The launch of igemm tile `t` with `split` K slices (what conv_select.cc computes for it).
cuda::LaunchChoice igemm_choice(const IgemmTile& t, const ConvParams& p, uint32_t split) {
  cuda::LaunchChoice c;
  c.variant = cuda::find_kernel_variant(t.name);
  const uint64_t m = uint64_t(p.batch) * out_volume(p), n = uint64_t(p.out_channels);
  c.grid[0] = cuda::ceil_div_u32(m, t.bm);
  c.grid[1] = cuda::ceil_div_u32(n, t.bn);
  c.grid[2] = split;
  c.block[0] = c.variant->block_threads;
  c.shared_bytes = c.variant->shared_bytes;
  c.split_k = split;
  const uint64_t tiles = uint64_t(c.grid[0]) * c.grid[1];
  c.workspace_bytes = split > 1 ? tiles * (uint64_t(split) * t.bm * t.bn * 4 + 4) : 0;
  return c;
}

// Launches `choice` with a workspace as the runtime gives it: zeroed for zero_workspace rows,
// garbage otherwise. "" on success.
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

std::vector<Case> cases() {
  return {
      {"3x3 s1 p1", 1, 64, 64, 1, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {"3x3 s2 p1 b8", 8, 32, 96, 1, {15, 15}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
      {"1x1 b8 cout 136", 8, 128, 136, 1, {14, 14}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
      {"1x1 s2", 1, 64, 128, 1, {14, 14}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}},
      {"7x7 s2 cin 3", 1, 3, 64, 1, {40, 40}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}},
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

TEST_P(GpuConv, EveryVariantMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case c = cases()[size_t(GetParam())];
  for (int epilogue = 0; epilogue < 2; ++epilogue) {
    const Activation act = epilogue ? test_util::kEveryActivation[1 + GetParam() % 10] : Activation{};
    const ConvParams p = params_of(c, epilogue == 1, act);
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
      if (!igemm_ok || (!t.any_channels && p.in_channels % 8 != 0)) continue;
      runs.push_back({t.name, igemm_choice(t, p, 1)});
      if (kt >= 3) runs.push_back({std::string(t.name) + " split 3", igemm_choice(t, p, 3)});
      if (kt >= 16) runs.push_back({std::string(t.name) + " split 7", igemm_choice(t, p, 7)});
    }
    for (const IgemmTile& t : kGroupedTiles) {  // split-K slices may be empty on some tiles
      if (!conv_grouped_igemm_fits(p, 4)) continue;
      runs.push_back({t.name, igemm_choice(t, p, 1)});
      runs.push_back({std::string(t.name) + " split 3", igemm_choice(t, p, 3)});
    }
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
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuConv, testing::Range(0, static_cast<int>(cases().size())));

// Concat in place: y has `extra` more channels than the conv makes and the conv writes its own
// at `offset` (odd offsets take the kernels' unpaired stores). Every variant must match the CPU
// twin inside the slice and leave every other channel as it was (poisoned).
class GpuConvSlice : public testing::TestWithParam<int> {};

TEST_P(GpuConvSlice, EveryVariantWritesOnlyItsChannelSlice) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case c = cases()[size_t(GetParam())];
  for (const auto& [offset, extra] : {std::pair<int64_t, int64_t>{0, 5}, {3, 3}, {8, 8}}) {
    ConvParams p = params_of(c, false, test_util::kEveryActivation[1 + GetParam() % 10]);
    p.has_bias = true;
    p.y_channels = p.out_channels + extra;
    p.y_channel_offset = offset;
    const int64_t pixels = p.batch * out_volume(p);
    const int64_t nx = p.batch * in_volume(p) * p.in_channels, ny = pixels * p.y_channels;
    const int64_t k = kernel_volume(p) * (p.in_channels / p.groups);
    const int64_t nw = p.out_channels * k;
    const std::vector<float> x = gpu_test::round_half(rng.uniform(nx, -1.f, 1.f));
    const std::vector<float> w = gpu_test::round_half(rng.uniform(nw, -1.f, 1.f));
    const std::vector<float> bias = gpu_test::round_half(rng.uniform(p.out_channels, -1.f, 1.f));
    // The twin writes the same slice of a float y that starts out as NaN everywhere.
    std::vector<float> want(static_cast<size_t>(ny), std::nanf(""));
    cpu::conv(p, x.data(), w.data(), bias.data(), nullptr, want.data());

    const auto dx = gpu_test::to_device(x, DType::kFloat16);
    const auto dw = gpu_test::to_device(w, DType::kFloat16);
    const auto db = gpu_test::to_device(bias, DType::kFloat16);
    DeviceBuffer dy(ny * 2);
    cuda::StepPointers ptrs = gpu_test::step_pointers({dx.get(), dw.get(), db.get()}, dy);
    std::vector<std::pair<std::string, cuda::LaunchChoice>> runs;
    const uint32_t kt = cuda::ceil_div_u32(uint64_t(k), 32);
    for (const IgemmTile& t : kTiles) {
      if (p.groups != 1 || p.spatial_rank > 2 || (!t.any_channels && p.in_channels % 8 != 0))
        continue;
      runs.push_back({t.name, igemm_choice(t, p, 1)});
      if (kt >= 3) runs.push_back({std::string(t.name) + " split 3", igemm_choice(t, p, 3)});
    }
    for (const IgemmTile& t : kGroupedTiles)
      if (conv_grouped_igemm_fits(p, 4)) runs.push_back({t.name, igemm_choice(t, p, 2)});
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

TEST(GpuConvSelect, RefusesWhatNoKernelTakes) {
  ConvParams p = params_of(cases()[0], false, {});
  cuda::StepDesc step = gpu_test::step_of(kConv, &p);
  cuda::TargetInfo t = gpu_test::target_with(16);
  t.max_shared_per_block = 163 * 1024;
  cuda::LaunchChoice c;
  std::string why;
  EXPECT_FALSE(cuda::select_kernel(step, t, &c, &why));
  EXPECT_NE(why.find("Float16"), std::string::npos) << why;
  step.dtype = DType::kFloat16;
  p.channels_last = false;
  EXPECT_FALSE(cuda::select_kernel(step, t, &c, &why));
  EXPECT_NE(why.find("channels_last"), std::string::npos) << why;
  p.channels_last = true;
  ASSERT_TRUE(cuda::select_kernel(step, t, &c, &why)) << why;
  EXPECT_STREQ(c.variant->name, "jp_conv_igemm_32x64k64_f16");  // 8x1 tiles, K 576: one slice
  EXPECT_EQ(c.split_k, 1u);
  p = params_of(cases()[8], false, {});  // 512 -> 512 at 7x7: 2x8 tiles, K 4608: split-K
  ASSERT_TRUE(cuda::select_kernel(step, t, &c, &why)) << why;
  EXPECT_STREQ(c.variant->name, "jp_conv_igemm_32x64k64_f16");
  EXPECT_GT(c.split_k, 1u);
  EXPECT_GT(c.workspace_bytes, 0u);
}

// The 128x128 tile with 64 K a stage needs 108 KiB of shared memory: targets with less (sm_86,
// sm_89: 99 KiB a block) get the 32-K one, which needs 68 KiB.
TEST(GpuConvSelect, BigTileFollowsTheTargetsSharedMemory) {
  const Case gemm{"gemm", 1, 768, 2304, 1, {40, 40}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}};
  ConvParams p = params_of(gemm, false, {});
  cuda::StepDesc step = gpu_test::step_of(kConv, &p);
  step.dtype = DType::kFloat16;
  cuda::TargetInfo t = gpu_test::target_with(16);
  cuda::LaunchChoice c;
  std::string why;
  for (const auto& [smem, name] : {std::pair<uint32_t, const char*>{232448, "jp_conv_igemm_128x128k64_f16"},
                                   {166912, "jp_conv_igemm_128x128k64_f16"},
                                   {101376, "jp_conv_igemm_128x128_f16"}}) {
    t.max_shared_per_block = smem;
    ASSERT_TRUE(cuda::select_kernel(step, t, &c, &why)) << why;
    EXPECT_STREQ(c.variant->name, name) << smem;
    EXPECT_LE(c.shared_bytes, smem);
    EXPECT_EQ(c.split_k, 1u);
  }
}

// FP16 depthwise convs go to the tiled kernel of their window where it takes them (3x3/5x5 at
// stride 1 or 2, 7x7 at stride 1, C % 8 == 0, dilation 1) and they give it 128 threads an SM,
// and to the previous kernel otherwise (small late layers at batch 1, odd shapes); blocks
// of at most 256 threads with the shared memory of their channels' weights, covering every
// channel group and striding over the pixels.
TEST(GpuConvSelect, DepthwiseTakesTheTiledKernelWhereItFits) {
  cuda::TargetInfo t = gpu_test::target_with(132);
  t.max_shared_per_block = 232448;
  struct Want {
    Case c;
    const char* name;
  };
  const Want wants[] = {
      {{"b8 112x112 C 32", 8, 32, 32, 32, {112, 112}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       "jp_conv_dw3_f16"},
      {{"b1 7x7 C 960", 1, 960, 960, 960, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       "jp_conv_depthwise_f16"},
      {{"b8 7x7 C 960", 8, 960, 960, 960, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       "jp_conv_dw3_f16"},
      {{"5x5 s2", 8, 240, 240, 240, {28, 28}, {5, 5}, {2, 2}, {1, 1}, {2, 2}, {2, 2}},
       "jp_conv_dw5_f16"},
      {{"7x7 s1", 8, 96, 96, 96, {56, 56}, {7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3}},
       "jp_conv_dw7_f16"},
      {{"7x7 s2", 1, 96, 96, 96, {56, 56}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}},
       "jp_conv_depthwise_f16"},
      {{"dilation 2", 1, 32, 32, 32, {56, 56}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}},
       "jp_conv_depthwise_f16"},
      {{"C 36", 1, 36, 36, 36, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
       "jp_conv_depthwise_f16"},
      {{"1-D", 1, 32, 32, 32, {56}, {3}, {1}, {1}, {1}, {1}}, "jp_conv_depthwise_f16"},
      {{"3x5", 1, 32, 32, 32, {56, 56}, {3, 5}, {1, 1}, {1, 1}, {1, 2}, {1, 2}},
       "jp_conv_depthwise_f16"},
  };
  for (const Want& w : wants) {
    const ConvParams p = params_of(w.c, true, {});
    cuda::StepDesc step = gpu_test::step_of(kConv, &p);
    step.dtype = DType::kFloat16;
    cuda::LaunchChoice c;
    std::string why;
    ASSERT_TRUE(cuda::select_kernel(step, t, &c, &why)) << why;
    EXPECT_STREQ(c.variant->name, w.name) << w.c.name;
    if (std::string(w.name).find("_dw_") == std::string::npos) continue;
    const uint64_t groups = uint64_t(p.in_channels) / 8;
    EXPECT_LE(c.block[0] * c.block[1], 256u) << w.c.name;
    EXPECT_GE(uint64_t(c.block[0]) * c.grid[1], groups) << w.c.name;
    EXPECT_LT(uint64_t(c.block[0]) * (c.grid[1] - 1), groups) << w.c.name;
    const uint64_t pixels = uint64_t(p.batch) * p.out_size[0] * p.out_size[1];
    // The blocks stride over the pixels: no more than they need, at most 6 an SM.
    EXPECT_LE(c.grid[0], cuda::ceil_div_u32(pixels, c.block[1])) << w.c.name;
    EXPECT_LE(uint64_t(c.grid[0]) * c.grid[1], 6u * 132 + c.grid[1]) << w.c.name;
    EXPECT_EQ(c.shared_bytes, uint64_t(p.kernel[0] * p.kernel[1]) * 8 * c.block[0] * 4) << w.c.name;
    EXPECT_LE(c.shared_bytes, 48u * 1024) << w.c.name;
  }
}

// Times the selector's choice for layer `l` at `batch` (bias + ReLU epilogue) and every igemm
// tile with each of `splits`, printing one line; adds the choice's time and FLOPs to the totals.
void bench_layer(const BenchLayer& l, int64_t batch, std::initializer_list<uint32_t> splits,
                 double* total_us, double* total_flop) {
  {
    const int64_t pad = l.k / 2;
    Case c{"bench", batch, l.cin, l.cout, 1, {l.hw, l.hw}, {l.k, l.k}, {l.stride, l.stride}, {1, 1},
           {pad, pad}, {pad, pad}};
    const ConvParams p = params_of(c, true, test_util::kEveryActivation[1]);
    const int64_t nx = batch * in_volume(p) * p.in_channels;
    const int64_t ny = batch * out_volume(p) * p.out_channels;
    const int64_t k = kernel_volume(p) * p.in_channels, nw = p.out_channels * k;
    DeviceBuffer dx(nx * 2), dw(nw * 2), db(p.out_channels * 2), dy(ny * 2);
    dx.poison16(0x3c00);
    dw.poison16(0x2000);
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
      if (!t.any_channels && q.in_channels % 8 != 0) continue;
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
                  std::initializer_list<uint32_t> splits) {
  double total_us = 0, total_flop = 0;
  for (const BenchLayer& l : layers) {
    bench_layer(l, batch, splits, &total_us, &total_flop);
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

// Stem convs of RGB input as they are (3 channels: the element-wise `anyc` tile) against the
// same convs over input padded with zero channels to 8 (the 16-byte cp.async tiles): whether
// padding the input pays (issue 16). ResNet's 7x7 stem and MobileNet/EfficientNet's 3x3 one.
TEST(GpuConvBench, DISABLED_StemChannels) {
  GPU_TEST_OR_SKIP();
  constexpr BenchLayer kStems[] = {{3, 64, 224, 7, 2, 1}, {8, 64, 224, 7, 2, 1},
                                   {3, 32, 224, 3, 2, 1}, {8, 32, 224, 3, 2, 1}};
  for (int64_t batch : {1, 8})
    bench_layers("stems at batch " + std::to_string(batch), kStems, batch, {1, 2, 4});
}

// Depthwise layers of MobileNetV2 / EfficientNet-B0 at batch 1: memory-bound, so GB/s of x + y.
TEST(GpuConvBench, DISABLED_DepthwiseBatch1) {
  GPU_TEST_OR_SKIP();
  struct Dw {
    int64_t c, hw, k, stride;
  };
  const Dw layers[] = {{96, 112, 3, 2}, {144, 56, 3, 1}, {192, 28, 3, 1}, {384, 14, 3, 1},
                       {960, 7, 3, 1}, {240, 28, 5, 2}, {672, 14, 5, 1}, {1152, 7, 5, 1}};
  for (const Dw& l : layers) {
    const int64_t pad = l.k / 2;
    Case c{"dw", 1, l.c, l.c, l.c, {l.hw, l.hw}, {l.k, l.k}, {l.stride, l.stride}, {1, 1},
           {pad, pad}, {pad, pad}};
    ConvParams p = params_of(c, true, test_util::kEveryActivation[1]);
    p.has_residual = false;
    const int64_t nx = in_volume(p) * l.c, ny = out_volume(p) * l.c, nw = l.c * l.k * l.k;
    DeviceBuffer dx(nx * 2), dw(nw * 2), db(l.c * 2), dy(ny * 2);
    dx.poison16(0x3c00);
    dw.poison16(0x2000);
    db.poison16(0);
    cuda::StepPointers ptrs = gpu_test::step_pointers({&dx, &dw, &db}, dy);
    cuda::LaunchChoice ch;
    ASSERT_EQ(gpu_test::select(kConv, DType::kFloat16, p, &ch), "");
    double plain = 0;
    const double us = time_launch(ch, ptrs, p, &plain);
    ASSERT_GT(us, 0);
    std::printf("dw C %4lld %3lldx%-3lld k%lld s%lld  %-24s %7.2f us  %6.1f GB/s\n", (long long)l.c,
                (long long)l.hw, (long long)l.hw, (long long)l.k, (long long)l.stride,
                ch.variant->name, us, double(nx + ny) * 2 / us * 1e-3);
  }
}

}  // namespace
}  // namespace jetplan::kernels
