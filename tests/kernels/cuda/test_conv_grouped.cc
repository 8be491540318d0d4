// The grouped form of the conv igemm kernels (jp_conv_igemm_*_grouped_*, conv_grouped_igemm_fits
// in kernels/conv.h): which grouped convs the selection gives it and with what launch, and the
// tiles' channel ranges (conv_grouped_tile). Its outputs are checked against the CPU twin with the
// other conv kernels (test_conv.cc GpuConv and GpuConvSlice, test_conv_int8.cc GpuConvInt8: the
// grouped cases). GpuConvGroupedBench.DISABLED_RegNetY400MF times RegNetY-400MF's grouped convs
// in the selection's kernel against the direct kernel (FP16) and in INT8 (run it with
// --gtest_also_run_disabled_tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/conv_bench.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/reference_formulas.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
constexpr uint16_t kConv = static_cast<uint16_t>(OpFamilyId::kConv);

// A 2-D NHWC FP16 conv (square window k, padding k / 2) with bias.
ConvParams grouped_conv(int64_t batch, int64_t cin, int64_t cout, int64_t groups, int64_t hw,
                        int64_t k, int64_t stride) {
  ConvParams p = test_util::int8_conv2d(batch, cin, cout, groups, {hw, hw}, k, stride, 1, k / 2,
                                        /*channels_last=*/true);
  p.int8.enabled = false;
  return p;
}

int64_t most_tile_channels(const ConvParams& p) {
  int64_t first = 0, most = 0;
  for (int64_t n0 = 0; n0 < p.out_channels; n0 += 64)
    most = std::max(most, conv_grouped_tile(p, n0, 64, &first));
  return most;
}

// Grouped FP16 convs with 4k channels a group and Cin % 8 == 0 go to the grouped form's tiles
// (64x64 where they fill the SMs 2.5 times, else 32x64), with split-K over the most channels an
// N tile runs over; the other grouped convs (2 channels a group, 3-D) to the direct kernel.
TEST(GpuConvSelect, GroupedTakesTheGroupedTilesWhereTheyFit) {
  cuda::TargetInfo t = gpu_test::target_with(132);
  t.max_shared_per_block = 232448;
  struct Want {
    const char* what;
    ConvParams p;
    const char* name;
  };
  ConvParams three_d = grouped_conv(1, 16, 16, 2, 6, 3, 1);
  three_d.spatial_rank = 3;
  three_d.in_size[2] = three_d.out_size[2] = 4;
  three_d.kernel[2] = 1;
  three_d.stride[2] = three_d.dilation[2] = 1;
  const Want wants[] = {
      {"RegNetY b8 56x56 C 48", grouped_conv(8, 48, 48, 6, 56, 3, 1),
       "jp_conv_igemm_64x64_grouped_f16"},
      {"RegNetY b1 7x7 C 440", grouped_conv(1, 440, 440, 55, 7, 3, 1),
       "jp_conv_igemm_32x64_grouped_f16"},
      {"ResNeXt gw 4", grouped_conv(1, 128, 128, 32, 56, 3, 1), "jp_conv_igemm_32x64_grouped_f16"},
      {"gw 2", grouped_conv(1, 64, 64, 32, 56, 3, 1), "jp_conv_direct_f16"},
      {"3-D", three_d, "jp_conv_direct_f16"},
  };
  for (const Want& w : wants) {
    const ConvParams& p = w.p;
    cuda::StepDesc step = gpu_test::step_of(kConv, &p);
    step.dtype = DType::kFloat16;
    cuda::LaunchChoice c;
    std::string why;
    ASSERT_TRUE(cuda::select_kernel(step, t, &c, &why)) << why;
    EXPECT_STREQ(c.variant->name, w.name) << w.what;
    if (std::string(w.name).find("grouped") == std::string::npos) continue;
    // Every N tile has a block, and split-K leaves no slice empty on the widest tile.
    EXPECT_EQ(c.grid[1], cuda::ceil_div_u32(uint64_t(p.out_channels), 64)) << w.what;
    const uint64_t k = uint64_t(p.kernel[0] * p.kernel[1] * most_tile_channels(p));
    const uint32_t kt = cuda::ceil_div_u32(k, 32);
    EXPECT_GE(c.split_k, 1u) << w.what;
    EXPECT_LT(cuda::ceil_div_u32(kt, c.split_k) * (c.split_k - 1), kt) << w.what;
  }
}

// An INT8 grouped conv of 8k channels a group takes the INT8 grouped tile (Int8 or Float16 y); 4
// channels a group is refused with a reason that names the grouped forms.
TEST(GpuConvSelect, Int8GroupedTakesTheGroupedTile) {
  cuda::TargetInfo t = gpu_test::target_with(132);
  for (const DType y : {DType::kInt8, DType::kFloat16}) {
    ConvParams p = test_util::int8_conv2d(8, 48, 48, 6, {56, 56}, 3, 1, 1, 1, true);
    p.int8.y_dtype = y;
    const cuda::StepDesc step = gpu_test::int8_conv_step(&p, y);
    cuda::LaunchChoice c;
    std::string why;
    ASSERT_TRUE(cuda::select_kernel(step, t, &c, &why)) << why;
    EXPECT_STREQ(c.variant->name, y == DType::kInt8 ? "jp_conv_igemm_32x64_grouped_i8"
                                                    : "jp_conv_igemm_32x64_grouped_i8_f16out");
    p = test_util::int8_conv2d(1, 128, 128, 32, {56, 56}, 3, 1, 1, 1, true);
    p.int8.y_dtype = y;
    EXPECT_FALSE(cuda::select_kernel(step, t, &c, &why));
    EXPECT_NE(why.find("grouped"), std::string::npos) << why;
  }
}

// conv_grouped_tile: RegNetY's 8-channel groups, 8 to a tile; groups of 48 straddle tiles of 64
// (the second tile covers groups 1 and 2: channels 48 to 144); ResNeXt's 4-channel groups, 16 to
// a tile; a partial last tile; ranges in multiples of 8 channels.
TEST(GpuConvSelect, GroupedTileChannelRanges) {
  int64_t first = -1;
  ConvParams p = grouped_conv(1, 48, 48, 6, 8, 3, 1);
  EXPECT_EQ(conv_grouped_tile(p, 0, 64, &first), 48);
  EXPECT_EQ(first, 0);
  p = grouped_conv(1, 192, 192, 4, 8, 3, 1);
  EXPECT_EQ(conv_grouped_tile(p, 64, 64, &first), 96);
  EXPECT_EQ(first, 48);
  EXPECT_EQ(conv_grouped_tile(p, 128, 64, &first), 96);
  EXPECT_EQ(first, 96);
  p = grouped_conv(1, 128, 128, 32, 8, 3, 1);
  EXPECT_EQ(conv_grouped_tile(p, 64, 64, &first), 64);
  EXPECT_EQ(first, 64);
  p = grouped_conv(1, 440, 440, 55, 8, 3, 1);
  EXPECT_EQ(conv_grouped_tile(p, 384, 64, &first), 56);
  EXPECT_EQ(first, 384);
  p = grouped_conv(1, 48, 96, 6, 8, 3, 1);  // 8 in, 16 out a group: 4 groups a tile
  EXPECT_EQ(conv_grouped_tile(p, 64, 64, &first), 16);
  EXPECT_EQ(first, 32);
  EXPECT_TRUE(conv_grouped_igemm_fits(p, 4));  // FP16's B halves: 4 halves
  EXPECT_TRUE(conv_grouped_igemm_fits(p, 8));  // INT8's: 8 int8
  p = grouped_conv(1, 24, 24, 6, 8, 3, 1);  // 4 channels a group: FP16 only
  EXPECT_EQ(conv_grouped_tile(p, 0, 64, &first), 24);
  EXPECT_TRUE(conv_grouped_igemm_fits(p, 4));
  EXPECT_FALSE(conv_grouped_igemm_fits(p, 8));
  p = grouped_conv(1, 36, 36, 9, 8, 3, 1);  // Cin 36: A's 8-element loads would straddle pixels
  EXPECT_FALSE(conv_grouped_igemm_fits(p, 4));
  p = grouped_conv(1, 104, 104, 13, 8, 3, 1);  // RegNetY's 104: a multiple of 8, not of 16
  EXPECT_EQ(conv_grouped_tile(p, 64, 64, &first), 40);
  EXPECT_TRUE(conv_grouped_igemm_fits(p, 8));
}

// Times RegNetY-400MF's grouped 3x3 convs (8 channels a group; bias + ReLU) at batch 1 and 8: the
// selection's FP16 kernel against the direct kernel that ran them before the grouped form, and
// the selection's INT8 kernel.
TEST(GpuConvGroupedBench, DISABLED_RegNetY400MF) {
  GPU_TEST_OR_SKIP();
  struct Layer {
    int64_t c, hw, stride, count;
  };
  const Layer layers[] = {{48, 112, 2, 1}, {104, 56, 2, 1}, {104, 28, 1, 2}, {208, 28, 2, 1},
                          {208, 14, 1, 5}, {440, 14, 2, 1}, {440, 7, 1, 5}};
  for (const int64_t batch : {1, 8}) {
    double total[3] = {0, 0, 0};
    for (const Layer& l : layers) {
      ConvParams p = grouped_conv(batch, l.c, l.c, l.c / 8, l.hw, 3, l.stride);
      p.act = test_util::kEveryActivation[1];
      const int64_t nx = batch * l.hw * l.hw * l.c;
      const int64_t ny = batch * p.out_size[0] * p.out_size[1] * l.c, nw = l.c * 9 * 8;
      DeviceBuffer dx(nx * 2), dw(nw * 2), db(l.c * 4 * 2), dy(ny * 2);
      dx.poison16(0x0101);
      dw.poison16(0x0101);
      db.poison16(0);
      cuda::StepPointers ptrs = gpu_test::step_pointers({&dx, &dw, &db}, dy);
      cuda::LaunchChoice sel, direct;
      ASSERT_EQ(gpu_test::select(kConv, DType::kFloat16, p, &sel), "");
      direct.variant = cuda::find_kernel_variant("jp_conv_direct_f16");
      cuda::launch_1d(uint64_t(ny), 256, gpu_test::device_target().sm_count * 16, &direct);
      const auto ws = gpu_test::workspace_for(sel, &ptrs, /*zeroed=*/true);
      double plain = 0;
      const double us = time_launch(sel, ptrs, p, &plain);
      const double direct_us = time_launch(direct, ptrs, p, &plain);
      // INT8: the same bytes read as Int8 (0x01), the epilogue's [2, C] floats in the bias slot.
      ConvParams q = test_util::int8_conv2d(batch, l.c, l.c, l.c / 8, {l.hw, l.hw}, 3, l.stride, 1,
                                            1, true);
      q.act = p.act;
      cuda::LaunchChoice sel8;
      std::string why;
      ASSERT_TRUE(cuda::select_kernel(gpu_test::int8_conv_step(&q, DType::kInt8),
                                      gpu_test::device_target(), &sel8, &why))
          << why;
      cuda::StepPointers ptrs8 = ptrs;
      const auto ws8 = gpu_test::workspace_for(sel8, &ptrs8, /*zeroed=*/true);
      const double us8 = time_launch(sel8, ptrs8, q, &plain);
      ASSERT_GT(us, 0);
      ASSERT_GT(direct_us, 0);
      ASSERT_GT(us8, 0);
      std::printf("b%lld grouped C %3lld %3lldx%-3lld s%lld x%lld  %-34s %7.2f us  direct %7.2f us "
                  "(%.2fx)  INT8 %-36s %7.2f us\n",
                  (long long)batch, (long long)l.c, (long long)l.hw, (long long)l.hw,
                  (long long)l.stride, (long long)l.count, sel.variant->name, us, direct_us,
                  direct_us / us, sel8.variant->name, us8);
      total[0] += us * double(l.count);
      total[1] += direct_us * double(l.count);
      total[2] += us8 * double(l.count);
    }
    std::printf("RegNetY-400MF batch %lld, grouped convs: %.1f us (direct kernel %.1f us, %.2fx; "
                "INT8 %.1f us)\n",
                (long long)batch, total[0], total[1], total[1] / total[0], total[2]);
  }
}

}  // namespace
}  // namespace jetplan::kernels
