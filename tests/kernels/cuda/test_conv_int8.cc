// CUDA INT8 conv kernels (the _i8 rows of kernels/cuda/conv.cu) against the CPU twin
// (cpu::conv_int8): every INT8 variant forced on every case it takes (grouped cases: the grouped
// tiles), with and without split-K, plus the selector's own choice, Int8 and Float16 outputs, no
// residual / an Int8 one / a Float16 one.
// The sums are exact integers on both sides and the epilogue runs the same float operations
// (kernels/int8_epilogue.h), so outputs must be equal bit for bit for the piecewise-linear
// activations; for the transcendental ones (the device's fast exp) an Int8 output may differ by
// one unit and a Float16 one by 1e-3 relative + 1e-3. Outputs are poisoned before each launch
// (0xA5 / 0x5A bytes) and the guard after them is checked; NaN never passes.
// The INT8 layer benchmarks (GpuConvInt8Bench) are in test_conv_int8_bench.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "kernels/cpu/half.h"
#include "kernels/kernels.h"
#include "tests/kernels/cuda/conv_int8_util.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/reference_formulas.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
using namespace int8_conv_test;

std::vector<Case> cases() {
  return {
      {"3x3 s1 p1", 1, 64, 64, 14, 14, 3, 1, 1, 1},
      {"3x3 s2 b8 cout 96", 8, 32, 96, 15, 15, 3, 2, 1, 1},
      {"1x1 b8 cout 136", 8, 128, 136, 14, 14, 1, 1, 1, 0},
      {"1x1 s2", 1, 64, 128, 14, 14, 1, 2, 1, 0},
      {"odd cout 13", 2, 16, 13, 9, 11, 3, 1, 1, 1},
      {"dilation 2", 1, 16, 24, 12, 12, 3, 1, 2, 2},
      {"late 3x3 512", 1, 512, 512, 7, 7, 3, 1, 1, 1},
      {"7x7 cin 48 pad 3", 2, 48, 40, 13, 10, 7, 2, 1, 3},
      {"1x1 cin 24 (an expansion)", 1, 24, 144, 14, 14, 1, 1, 1, 0},
      {"3x3 s2 b8 cin 40", 8, 40, 72, 11, 9, 3, 2, 1, 1},
      {"5x5 cin 8 dilation 2", 2, 8, 20, 13, 13, 5, 1, 2, 4},
      {"depthwise 3x3 c32", 1, 32, 32, 14, 14, 3, 1, 1, 1, 32},
      {"depthwise 3x3 s2 b8 c96", 8, 96, 96, 15, 15, 3, 2, 1, 1, 96},
      {"depthwise 5x5 s2 c144", 2, 144, 144, 14, 14, 5, 2, 1, 2, 144},
      {"depthwise 7x7 dilation 2 c20", 1, 20, 20, 16, 16, 7, 1, 2, 6, 20},
      {"depthwise 3x3 odd c13", 2, 13, 13, 9, 11, 3, 1, 1, 1, 13},
      {"depthwise 7x7 odd c13", 1, 13, 13, 12, 12, 7, 1, 1, 3, 13},
      {"depthwise 3x3 b8 c144 56x56", 8, 144, 144, 56, 56, 3, 1, 1, 1, 144},
      {"depthwise 7x7 c64 13x11", 2, 64, 64, 13, 11, 7, 1, 1, 3, 64},
      {"depthwise 5x5 s1 b3 c16 10x9", 3, 16, 16, 10, 9, 5, 1, 1, 2, 16},
      {"depthwise 3x3 s2 c40 pad 0", 2, 40, 40, 12, 13, 3, 2, 1, 0, 40},
      // Grouped (the grouped igemm form): RegNet's 8 channels a group, 16 in and 32 out a group,
      // groups of 48 that N tiles of 64 straddle, 440 channels (a partial last tile), dilated.
      {"grouped gw 8 s2 b2 c48", 2, 48, 48, 15, 15, 3, 2, 1, 1, 6},
      {"grouped 16 -> 32 a group", 1, 64, 128, 9, 9, 3, 1, 1, 1, 4},
      {"grouped gw 48 c192", 1, 192, 192, 7, 6, 3, 1, 1, 1, 4},
      {"grouped gw 8 c440 dilation 2", 1, 440, 440, 9, 9, 3, 1, 2, 2, 55},
  };
}

std::vector<int8_t> random_int8(test_util::SeededRng& rng, int64_t n) {
  std::vector<int8_t> v(static_cast<size_t>(n));
  for (int8_t& e : v) e = static_cast<int8_t>(rng.integer(-128, 127));
  return v;
}

bool piecewise_linear(ActivationKind k) {
  return k == ActivationKind::kNone || k == ActivationKind::kRelu || k == ActivationKind::kClip ||
         k == ActivationKind::kLeakyRelu;
}

// Compares y (Int8 or Float16 bytes) with the twin's; "" when they agree as the header says.
std::string compare(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, bool y8,
                    bool exact) {
  const size_t n = y8 ? want.size() : want.size() / 2;
  int bad = 0;
  std::string first;
  for (size_t i = 0; i < n; ++i) {
    bool ok;
    double g, w;
    if (y8) {
      g = int8_t(got[i]), w = int8_t(want[i]);
      ok = exact ? g == w : std::fabs(g - w) <= 1.0;
    } else {
      uint16_t gb, wb;
      std::memcpy(&gb, &got[2 * i], 2);
      std::memcpy(&wb, &want[2 * i], 2);
      g = half_to_float(gb), w = half_to_float(wb);
      ok = !std::isnan(g) && (exact ? gb == wb : std::fabs(g - w) <= 1e-3 * std::fabs(w) + 1e-3);
    }
    if (!ok && bad++ == 0)
      first = "element " + std::to_string(i) + ": got " + std::to_string(g) + ", want " +
              std::to_string(w);
  }
  return bad == 0 ? "" : std::to_string(bad) + " of " + std::to_string(n) + " differ; " + first;
}

class GpuConvInt8 : public testing::TestWithParam<int> {};

TEST_P(GpuConvInt8, EveryVariantMatchesCpuTwinBitForBit) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case c = cases()[size_t(GetParam())];
  // residual: 0 none, 1 Int8, 2 Float16 (before or after the activation); activations cycle
  // through every kind.
  for (int residual = 0; residual < 3; ++residual) {
    ConvParams p = params_of(c);
    const Activation act = test_util::kEveryActivation[(GetParam() * 3 + residual) % kActivationKindCount];
    p.act = act;
    p.has_residual = residual != 0;
    // Half the residual runs join it after the activation (each kind on every other case).
    p.residual_after_act = residual != 0 && (GetParam() + residual) % 2 == 0;
    p.int8.residual_dtype = residual == 1 ? DType::kInt8 : DType::kFloat16;
    p.int8.residual_scale = 0.02f;
    const int64_t pixels = p.batch * p.out_size[0] * p.out_size[1];
    const int64_t nx = p.batch * p.in_size[0] * p.in_size[1] * p.in_channels;
    const int64_t k = p.kernel[0] * p.kernel[1] * p.in_channels / p.groups;
    const int64_t ny = pixels * p.out_channels;
    const std::vector<int8_t> x = random_int8(rng, nx), w = random_int8(rng, p.out_channels * k);
    // Multipliers near what calibration gives: outputs spread over the Int8 range.
    std::vector<float> epi(size_t(2 * p.out_channels));
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      epi[size_t(oc)] = rng.uniform(0.5f, 2.f) / (64.f * std::sqrt(float(k)));
      epi[size_t(p.out_channels + oc)] = rng.uniform(-1.f, 1.f);
    }
    const std::vector<int8_t> r8 = random_int8(rng, ny);
    const std::vector<uint16_t> r16 = gpu_test::to_half(rng.uniform(ny, -2.f, 2.f));
    const void* res = residual == 1 ? static_cast<const void*>(r8.data()) : r16.data();

    const auto dx = std::make_unique<DeviceBuffer>(size_t(nx));
    dx->upload(x.data(), x.size());
    const auto dw = std::make_unique<DeviceBuffer>(w.size());
    dw->upload(w.data(), w.size());
    const auto de = gpu_test::to_device(epi, DType::kFloat32);
    const auto dr = std::make_unique<DeviceBuffer>(size_t(ny) * 2);
    dr->upload(res, size_t(ny) * (residual == 1 ? 1 : 2));

    for (const bool y8 : {true, false}) {
      p.int8.y_dtype = y8 ? DType::kInt8 : DType::kFloat16;
      p.int8.y_inv_scale = 1.f / 0.05f;
      std::vector<uint8_t> want(size_t(ny) * (y8 ? 1 : 2));
      cpu::conv_int8(p, x.data(), w.data(), epi.data(), p.has_residual ? res : nullptr,
                     want.data());
      DeviceBuffer dy(want.size());
      cuda::StepPointers ptrs{};
      ptrs.in[0] = dx->get();
      ptrs.in[1] = dw->get();
      ptrs.in[2] = de->get();
      if (p.has_residual) ptrs.in[3] = dr->get();
      ptrs.out[0] = dy.get();

      std::vector<std::pair<std::string, cuda::LaunchChoice>> runs;
      const uint32_t kt = cuda::ceil_div_u32(uint64_t(k), 64);
      const bool depthwise = p.groups == p.in_channels && p.groups == p.out_channels;
      const bool grouped = p.groups != 1 && !depthwise;
      for (const char* v : kVariants) {
        // Grouped steps: the grouped tiles only (split-K slices may be empty on some tiles); the
        // others groups 1 only.
        if (depthwise || (std::string(v).find("_grouped_") != std::string::npos) != grouped ||
            (std::string(v).find("f16out") == std::string::npos) != y8)
          continue;
        // Cin % 16 != 0: only the tile of 8-byte halves takes it (the others refuse the step).
        if (p.in_channels % 16 != 0 && std::string(v).find("_c8_") == std::string::npos) continue;
        if (!gpu_test::variant_runs_here(v)) continue;
        runs.push_back({v, choice_of(v, p, 1)});
        if (kt >= 3 || grouped)
          runs.push_back({std::string(v) + " split 3", choice_of(v, p, 3)});
      }
      cuda::LaunchChoice chosen;
      ASSERT_EQ(select_int8(p, y8 ? DType::kInt8 : DType::kFloat16, &chosen), "");
      runs.push_back({std::string("selected ") + chosen.variant->name, chosen});
      if (p.groups == 1) {
        const int64_t k = p.kernel[0] * p.kernel[1] * p.in_channels;
        EXPECT_EQ(std::string(chosen.variant->name).find("_c8_") != std::string::npos,
                  p.in_channels % 16 != 0 || p.in_channels <= 64 ||
                      (k <= 256 && p.out_channels <= 64))
            << chosen.variant->name;
      }
      if (grouped) {
        EXPECT_NE(std::string(chosen.variant->name).find("_grouped_"), std::string::npos)
            << chosen.variant->name;
      }
      if (depthwise) {
        // The tiled kernel where it takes the conv and the layer gives every SM 128 threads of
        // 8 channels (or the window is 7x7), else the previous one.
        const bool tiled = conv_dw_tiled_fits(p);
        const int64_t threads8 = p.batch * p.out_size[0] * p.out_size[1] * p.in_channels / 8;
        const bool picks_tiled =
            tiled && (threads8 >= 128 * int64_t(gpu_test::device_target().sm_count) ||
                      p.kernel[0] == 7);
        EXPECT_EQ(std::string(chosen.variant->name)
                      .find(picks_tiled ? "jp_conv_dw" : "jp_conv_depthwise_i8"),
                  0u)
            << chosen.variant->name;
        const cuda::LaunchChoice legacy = depthwise_legacy(p, y8);
        runs.push_back({"previous kernel", legacy});
        runs.push_back({"one channel a thread", depthwise_one_channel_a_thread(legacy, p)});
        cuda::LaunchChoice t;
        EXPECT_EQ(cuda::launch_conv_dw_tiled(p, gpu_test::device_target(), &t), tiled);
        if (tiled && p.kernel[0] == 3) {  // both 3x3 kernels, on the same launch
          const cuda::LaunchChoice o = other_dw3_i8(t);
          runs.push_back({std::string("tiled ") + o.variant->name, o});
        }
        if (tiled) {  // and two blocks along the pixels (each strides over many)
          t.grid[0] = std::min<uint32_t>(t.grid[0], 2);
          runs.push_back({std::string("tiled, two blocks ") + t.variant->name, t});
        }
      }

      for (const auto& [label, choice] : runs) {
        ASSERT_NE(choice.variant, nullptr) << label;
        for (const uint8_t poison : {uint8_t{0xA5}, uint8_t{0x5A}}) {
          dy.poison16(uint16_t(poison * 0x101));
          cuda::StepPointers pp = ptrs;
          const std::unique_ptr<DeviceBuffer> ws = gpu_test::workspace_for(choice, &pp);
          ASSERT_EQ(gpu_test::launch(choice.variant->name, choice, pp, p), "") << label;
          const std::string diff = compare(dy.download<uint8_t>(want.size()), want, y8,
                                           piecewise_linear(act.kind));
          EXPECT_EQ(diff, "") << c.name << ", " << label << ", residual " << residual;
          EXPECT_TRUE(dy.guard_intact()) << c.name << ", " << label;
          if (ws) {
            EXPECT_TRUE(ws->guard_intact()) << label;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuConvInt8, testing::Range(0, static_cast<int>(cases().size())));

// A depthwise INT8 conv writing a Concat in place: its channels land in a slice of a wider y
// (several channels a store where the slice is aligned for it, one at a time where not; a small
// and a large layer; Int8 and Float16 y) and nothing outside the slice is touched, by the tiled
// kernels (the selection's and the other 3x3 one) and the previous one.
TEST(GpuConvInt8, DepthwiseWritesAChannelSlice) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const std::pair<int64_t, int64_t> shapes[] = {{9, 4}, {9, 2}, {9, 8}, {256, 4}, {256, 2}, {256, 8}};
  for (const auto& [hw, offset] : shapes) {
    ConvParams p = params_of({"slice", 2, 32, 32, hw, hw, 3, 1, 1, 1, 32});
    p.act = test_util::kEveryActivation[1];
    p.y_channels = 40;
    p.y_channel_offset = offset;
    const int64_t pixels = p.batch * p.out_size[0] * p.out_size[1];
    const std::vector<int8_t> x = random_int8(rng, p.batch * hw * hw * 32), w = random_int8(rng, 32 * 9);
    std::vector<float> epi(64);
    for (int64_t c = 0; c < 32; ++c) {
      epi[size_t(c)] = rng.uniform(0.5f, 2.f) / 192.f;
      epi[size_t(32 + c)] = rng.uniform(-1.f, 1.f);
    }
    const auto dx = std::make_unique<DeviceBuffer>(x.size());
    dx->upload(x.data(), x.size());
    const auto dw = std::make_unique<DeviceBuffer>(w.size());
    dw->upload(w.data(), w.size());
    const auto de = gpu_test::to_device(epi, DType::kFloat32);
    for (const bool y8 : {true, false}) {
      p.int8.y_dtype = y8 ? DType::kInt8 : DType::kFloat16;
      p.int8.y_inv_scale = y8 ? 1.f / 0.05f : 1.f;
      std::vector<uint8_t> want(size_t(pixels * 40 * (y8 ? 1 : 2)), 0x5A);
      cpu::conv_int8(p, x.data(), w.data(), epi.data(), nullptr, want.data());
      DeviceBuffer dy(want.size());
      cuda::LaunchChoice chosen;
      ASSERT_EQ(select_int8(p, p.int8.y_dtype, &chosen), "");
      // The small layer takes one channel a thread (fewer than 128 threads of 8 channels an
      // SM), the large one the tiled kernel holding one kernel row at a time (384 threads an
      // SM or more); both tiled 3x3 kernels and the previous one run too.
      const std::string out = y8 ? "" : "_f16out";
      EXPECT_EQ(chosen.variant->name,
                (hw == 9 ? "jp_conv_depthwise_i8" : "jp_conv_dw3_1row_i8") + out);
      cuda::LaunchChoice tiled;
      ASSERT_TRUE(cuda::launch_conv_dw_tiled(p, gpu_test::device_target(), &tiled));
      const cuda::StepPointers ptrs = gpu_test::step_pointers({dx.get(), dw.get(), de.get()}, dy);
      for (const cuda::LaunchChoice& run :
           {chosen, tiled, other_dw3_i8(tiled), depthwise_legacy(p, y8)}) {
        dy.poison16(0x5A5A);
        ASSERT_EQ(gpu_test::launch(run.variant->name, run, ptrs, p), "");
        EXPECT_EQ(compare(dy.download<uint8_t>(want.size()), want, y8, true), "")
            << run.variant->name << ", " << hw << "x" << hw << ", offset " << offset;
        EXPECT_TRUE(dy.guard_intact());
      }
    }
  }
}

// The tiles of 8-byte halves take Cin % 16 != 0 and the short-K convs (64 input channels or
// fewer; 1x1 into 64 channels or fewer from 256 K or less): ResNet-50's 56x56 layers at batch 1
// and 8, 32 rows where 64-row tiles would not fill the SMs twice; 256->128 stays on the others.
TEST(GpuConvSelect, Int8ShortKTakesTheTilesOfHalves) {
  cuda::TargetInfo h100 = gpu_test::target_with(132);
  h100.sm_arch = 90;
  h100.max_shared_per_block = 232448;
  struct Want {
    int64_t batch, cin, cout, k;
    const char* tile;  // without _i8 / _i8_f16out; nullptr: not a tile of halves
  };
  const Want wants[] = {{8, 64, 64, 1, "64x64_c8"},  {8, 64, 64, 3, "64x64_c8"},
                        {8, 64, 256, 1, "64x64_c8"}, {8, 256, 64, 1, "64x64_c8"},
                        {1, 64, 256, 1, "32x64_c8"}, {1, 256, 64, 1, "32x64_c8"},
                        {8, 256, 128, 1, nullptr},   {8, 128, 128, 3, nullptr},
                        {1, 512, 64, 1, nullptr}};
  for (const DType y : {DType::kInt8, DType::kFloat16}) {
    const std::string suffix = y == DType::kInt8 ? "_i8" : "_i8_f16out";
    for (const Want& w : wants) {
      ConvParams p = test_util::int8_conv2d(w.batch, w.cin, w.cout, 1, {56, 56}, w.k, 1, 1,
                                            w.k / 2, true);
      p.int8.y_dtype = y;
      cuda::LaunchChoice c;
      std::string why;
      ASSERT_TRUE(cuda::select_kernel(gpu_test::int8_conv_step(&p, y), h100, &c, &why)) << why;
      const std::string name = c.variant->name;
      if (w.tile != nullptr)
        EXPECT_EQ(name, "jp_conv_igemm_" + std::string(w.tile) + suffix);
      else
        EXPECT_EQ(name.find("_c8_"), std::string::npos) << name;
    }
  }
}

// An FP16 step never runs an INT8 kernel and an INT8 step never an FP16 one: a plan naming the
// wrong one computes nothing (the output keeps its poison).
TEST(GpuConvInt8, KernelsRefuseStepsOfTheOtherType) {
  GPU_TEST_OR_SKIP();
  ConvParams p = params_of(cases()[0]);
  const int64_t ny = p.batch * p.out_size[0] * p.out_size[1] * p.out_channels;
  DeviceBuffer dx(size_t(p.batch * 14 * 14 * 64 * 2)), dw(size_t(64 * 9 * 64 * 2)),
      de(size_t(2 * 64 * 4)), dy(size_t(ny * 2));
  cuda::StepPointers ptrs{};
  ptrs.in[0] = dx.get();
  ptrs.in[1] = dw.get();
  ptrs.in[2] = de.get();
  ptrs.out[0] = dy.get();
  const std::vector<uint8_t> poisoned(size_t(ny * 2), 0x5A);
  p.int8.enabled = false;  // an FP16 step given to an INT8 kernel
  dy.poison16(0x5A5A);
  ASSERT_EQ(gpu_test::launch("jp_conv_igemm_64x64_i8", choice_of("jp_conv_igemm_64x64_i8", p, 1), ptrs, p), "");
  EXPECT_EQ(dy.download<uint8_t>(poisoned.size()), poisoned);
  p.int8.enabled = true;  // and the other way round
  ASSERT_EQ(gpu_test::launch("jp_conv_igemm_64x64k64_f16", choice_of("jp_conv_igemm_64x64k64_f16", p, 1), ptrs, p), "");
  EXPECT_EQ(dy.download<uint8_t>(poisoned.size()), poisoned);
}



}  // namespace
}  // namespace jetplan::kernels
