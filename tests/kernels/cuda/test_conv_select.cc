// The Conv family's CUDA selection (kernels/cuda/conv_select.cc): which kernel, tile, split
// and launch the selector gives each kind of conv on each kind of target. These run without a
// GPU (the selector is host code); test_conv.cc runs what they pick against the CPU twin.
#include <gtest/gtest.h>

#include <string>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/conv_test_cases.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace conv_test;
constexpr uint16_t kConv = static_cast<uint16_t>(OpFamilyId::kConv);

TEST(GpuConvSelect, RefusesWhatNoKernelTakes) {
  const Case first{"3x3 s1 p1", 1, 64, 64, 1, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  ConvParams p = params_of(first, false, {});
  cuda::StepDesc step = gpu_test::step_of(kConv, &p);
  cuda::TargetInfo t = gpu_test::target_with(16);
  t.max_shared_per_block = 163 * 1024;
  cuda::LaunchChoice c;
  std::string why;
  // Float32 (GPU plans of --precision fp32): the FP32 implicit GEMM for groups 1 (64x64 tiles,
  // 256 threads), the direct kernel for grouped convs; Float64: none.
  ASSERT_TRUE(cuda::select_kernel(step, t, &c, &why)) << why;
  EXPECT_STREQ(c.variant->name, "jp_conv_igemm_f32");
  ASSERT_TRUE(cuda::launch_conv_igemm_f32(p, &c));
  EXPECT_STREQ(c.variant->name, "jp_conv_igemm_f32");
  EXPECT_EQ(c.block[0], c.variant->block_threads);
  EXPECT_EQ(c.grid[1], uint32_t((p.out_channels + 63) / 64));
  const Case depthwise{"depthwise 3x3 s1 b8", 8, 32, 32, 32, {14, 14}, {3, 3}, {1, 1}, {1, 1},
                       {1, 1}, {1, 1}};
  ConvParams grouped = params_of(depthwise, false, {});
  ASSERT_TRUE(cuda::select_kernel(gpu_test::step_of(kConv, &grouped), t, &c, &why)) << why;
  EXPECT_STREQ(c.variant->name, "jp_conv_direct_f32");
  EXPECT_FALSE(cuda::launch_conv_igemm_f32(grouped, &c));
  step.dtype = DType::kFloat64;
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
  const Case late{"late 3x3 512", 1, 512, 512, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  p = params_of(late, false, {});  // 512 -> 512 at 7x7: 2x8 tiles, K 4608: split-K
  ASSERT_TRUE(cuda::select_kernel(step, t, &c, &why)) << why;
  EXPECT_STREQ(c.variant->name, "jp_conv_igemm_32x64k64_f16");
  EXPECT_GT(c.split_k, 1u);
  EXPECT_GT(c.workspace_bytes, 0u);
}

// A conv case and the variant the selector must pick for it.
struct Want {
  Case c;
  const char* name;
};
// The selector's FP16 choice for `w`'s conv (epilogue on) on `t`, checked against w.name.
cuda::LaunchChoice expect_selected(const Want& w, const cuda::TargetInfo& t) {
  const ConvParams p = params_of(w.c, true, {});
  cuda::StepDesc step = gpu_test::step_of(kConv, &p);
  step.dtype = DType::kFloat16;
  cuda::LaunchChoice c;
  std::string why;
  EXPECT_TRUE(cuda::select_kernel(step, t, &c, &why)) << w.c.name << ": " << why;
  EXPECT_STREQ(c.variant != nullptr ? c.variant->name : "", w.name) << w.c.name;
  return c;
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

// The 128x128 tiles' rules at ConvNeXt-T's MLP shapes (batch 8, H200's 132 SMs): N of 96 takes
// them from 256 K on (A read once), but not MobileNetV2's expansion of 16 channels to 96; 392
// rows do not (more than a sixth of the rows empty); a K of 96 gets 32 K a stage (64 would pad
// it to 128).
TEST(GpuConvSelect, BigTileRulesAtConvNextShapes) {
  const Want wants[] = {
      {{"down to 96", 8, 384, 96, 1, {56, 56}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
       "jp_conv_igemm_128x128k64_f16"},
      {{"392 rows", 8, 768, 3072, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
       "jp_conv_igemm_64x64k64_f16"},
      {{"K 96", 8, 96, 384, 1, {56, 56}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
       "jp_conv_igemm_128x128_f16"},
      {{"K 192", 8, 192, 768, 1, {28, 28}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
       "jp_conv_igemm_128x128k64_f16"},
      {{"16 to 96", 8, 16, 96, 1, {112, 112}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
       "jp_conv_igemm_64x64_f16"}};
  const cuda::TargetInfo t = gpu_test::target_with(132);
  for (const Want& w : wants) expect_selected(w, t);
}

// The Hopper tiles (wgmma, sm_only 90) on sm_90 targets only, and not with --portable-kernels
// (arch_kernels false), for large GEMMs: ViT-B's QKV GEMM at batch 8 in 128x128 ones, its MLP
// down-projection (78 such tiles) and ResNet-50's 3x3 convs of 128 and 512 channels at batch 8
// in 64x128 ones, the latter's 28 tiles in 5 K slices; the QKV GEMM at batch 1 and the 1x1 conv of 256 to 64 channels at batch 1
// (too small) keep the Ampere-class tiles; an sm_87 target of as many SMs never gets them.
TEST(GpuConvSelect, HopperTilesOnSm90TargetsOnly) {
  const Case qkv8{"qkv b8", 1, 768, 2304, 1, {1, 1576}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}};
  const Case down8{"down b8", 1, 3072, 768, 1, {1, 1576}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}};
  const Case r3x3{"3x3 b8", 8, 128, 128, 1, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  const Case r7x7{"7x7 b8", 8, 512, 512, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  const Case qkv1{"qkv b1", 1, 768, 2304, 1, {1, 197}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}};
  const Case n64{"n 64", 1, 256, 64, 1, {56, 56}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}};
  cuda::TargetInfo h100 = gpu_test::target_with(132);
  h100.sm_arch = 90;
  h100.max_shared_per_block = 232448;
  EXPECT_EQ(expect_selected({qkv8, "jp_conv_igemm_wg128x128_f16"}, h100).split_k, 1u);
  EXPECT_EQ(expect_selected({down8, "jp_conv_igemm_wg64x128_f16"}, h100).split_k, 1u);
  EXPECT_EQ(expect_selected({r3x3, "jp_conv_igemm_wg64x128_f16"}, h100).split_k, 1u);
  EXPECT_EQ(expect_selected({r7x7, "jp_conv_igemm_wg64x128_f16"}, h100).split_k, 5u);
  EXPECT_EQ(cuda::find_kernel_variant("jp_conv_igemm_wg64x128_f16")->sm_only, 90);
  EXPECT_EQ(expect_selected({qkv1, "jp_conv_igemm_32x64k64_f16"}, h100).variant->sm_only, 0);
  EXPECT_EQ(expect_selected({n64, "jp_conv_igemm_32x64k64_f16"}, h100).variant->sm_only, 0);
  cuda::TargetInfo portable = h100;
  portable.arch_kernels = false;
  cuda::TargetInfo orin_like = h100;
  orin_like.sm_arch = 87;
  for (const cuda::TargetInfo& t : {portable, orin_like}) {
    EXPECT_EQ(expect_selected({qkv8, "jp_conv_igemm_128x128k64_f16"}, t).variant->sm_only, 0);
    expect_selected({qkv1, "jp_conv_igemm_32x64k64_f16"}, t);
  }
}

// The runtime clears only the split-K arrival counters of an igemm step's workspace (its last
// 4 bytes a tile; the partial tiles before them are written whole before any CTA counts), and
// the whole workspace of a kZeroAll row. The GPU tests hand the kernels such workspaces
// (gpu_test::workspace_for: poisoned, the counters zeroed).
TEST(GpuConvSelect, SplitKClearsOnlyTheCounters) {
  const Case late{"late 3x3 512", 1, 512, 512, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  const cuda::LaunchChoice c = expect_selected({late, "jp_conv_igemm_32x64k64_f16"}, gpu_test::target_with(132));
  ASSERT_GT(c.split_k, 1u);
  uint64_t offset = 0, count = 0;
  cuda::workspace_clear_range(*c.variant, c.grid, c.workspace_bytes, &offset, &count);
  EXPECT_EQ(count, uint64_t(c.grid[0]) * c.grid[1] * 4);
  EXPECT_EQ(offset + count, c.workspace_bytes);
  EXPECT_EQ(c.workspace_bytes, count + count / 4 * c.split_k * 32 * 64 * 4);
  const cuda::KernelVariant* all = cuda::find_kernel_variant("jp_gemm_f16_mma32_splitk_nn");
  cuda::workspace_clear_range(*all, c.grid, 1000, &offset, &count);
  EXPECT_EQ(offset, 0u);
  EXPECT_EQ(count, 1000u);
}

// FP16 depthwise convs go to the tiled kernel of their window where it takes them (3x3/5x5 at
// stride 1 or 2, 7x7 at stride 1, C % 8 == 0, dilation 1) and they give it 128 threads an SM
// (7x7: always), and to the previous kernel otherwise (small late 3x3/5x5 layers at batch 1,
// odd shapes); blocks of at most 256 threads with the shared memory of their channels'
// weights, covering every channel group and striding over the pixels.
TEST(GpuConvSelect, DepthwiseTakesTheTiledKernelWhereItFits) {
  cuda::TargetInfo t = gpu_test::target_with(132);
  t.max_shared_per_block = 232448;
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
      {{"b1 7x7 C 768", 1, 768, 768, 768, {7, 7}, {7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3}},
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
    const cuda::LaunchChoice c = expect_selected(w, t);
    if (c.variant == nullptr || std::string(w.name).find("_conv_dw") == std::string::npos) continue;
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

// The stem kernels take convs of 4 input channels or fewer where they fit (K up to 256, their
// shared memory within the target's) and have at least as many tiles as the SMs hold CTAs of
// them: N tiles of 32 channels up to Cout 32, else 64, and a grid of those CTAs. The any-C tile
// takes the rest of the convs whose Cin is no multiple of 8 (fewer tiles, K past 256, Cin 5).
TEST(GpuConvSelect, StemsTakeTheStemKernels) {
  cuda::TargetInfo h100 = gpu_test::target_with(132);
  h100.max_shared_per_block = 232448;
  h100.shared_per_sm = 233472;
  const Case yolo{"yolo b8", 8, 3, 32, 1, {640, 640}, {6, 6}, {2, 2}, {1, 1}, {2, 2}, {2, 2}};
  const Case resnet8{"resnet b8", 8, 3, 64, 1, {224, 224}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}};
  const Case resnet1{"resnet b1", 1, 3, 64, 1, {224, 224}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}};
  const Case speech{"1-D k10 s5 b8", 8, 1, 512, 1, {16000}, {10}, {5}, {1}, {0}, {0}};
  const Case c5{"cin 5", 8, 5, 32, 1, {128, 128}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  const Case k363{"11x11 cin 3", 8, 3, 64, 1, {256, 256}, {11, 11}, {4, 4}, {1, 1}, {2, 2}, {2, 2}};
  cuda::LaunchChoice c = expect_selected({yolo, "jp_conv_stem_n32_f16"}, h100);
  ConvParams p = params_of(yolo, true, {});
  EXPECT_EQ(c.shared_bytes, conv_stem_layout(p, 32).bytes);
  EXPECT_EQ(c.block[0], 128u);
  EXPECT_EQ(c.grid[1], 1u);
  // 6 CTAs an SM by registers (the shared memory would allow more), striding over 8 * 320 * 5
  // tiles.
  EXPECT_EQ(c.grid[0], 6u * 132);
  c = expect_selected({resnet8, "jp_conv_stem_n64_f16"}, h100);
  EXPECT_EQ(c.grid[0], 3u * 132);  // 1792 tiles
  // 224 tiles: fewer than the 396 CTAs the SMs hold.
  expect_selected({resnet1, "jp_conv_igemm_64x64_anyc_f16"}, h100);
  c = expect_selected({speech, "jp_conv_stem_n64_f16"}, h100);  // 8 * 50 tiles
  EXPECT_EQ(c.grid[1], 8u);
  EXPECT_EQ(c.grid[0], 3u * 132);
  ASSERT_TRUE(cuda::launch_conv_stem(params_of(resnet1, true, {}), h100, &c));
  EXPECT_EQ(c.grid[0], 112u * 2);  // forced (the tests): one CTA a tile
  expect_selected({c5, "jp_conv_igemm_64x64_anyc_f16"}, h100);
  p = params_of(k363, true, {});
  EXPECT_FALSE(conv_stem_fits(p));  // K 363
  expect_selected({k363, "jp_conv_igemm_64x64_anyc_f16"}, h100);
  // Stride 9 is past the kernels' limit; an INT8 conv is not theirs.
  p = params_of(resnet8, true, {});
  EXPECT_TRUE(conv_stem_fits(p));
  p.stride[1] = 9;
  EXPECT_FALSE(conv_stem_fits(p));
  p = params_of(resnet8, true, {});
  p.int8.enabled = true;
  EXPECT_FALSE(conv_stem_fits(p));
}

}  // namespace
}  // namespace jetplan::kernels
