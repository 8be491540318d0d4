// CUDA INT8 conv kernels (the _i8 rows of kernels/cuda/conv.cu) against the CPU twin
// (cpu::conv_int8): every INT8 variant forced on every case it takes (grouped cases: the grouped
// tiles), with and without split-K, plus the selector's own choice, Int8 and Float16 outputs, no
// residual / an Int8 one / a Float16 one.
// The sums are exact integers on both sides and the epilogue runs the same float operations
// (kernels/int8_epilogue.h), so outputs must be equal bit for bit for the piecewise-linear
// activations; for the transcendental ones (the device's fast exp) an Int8 output may differ by
// one unit and a Float16 one by 1e-3 relative + 1e-3. Outputs are poisoned before each launch
// (0xA5 / 0x5A bytes) and the guard after them is checked; NaN never passes.
// GpuConvInt8Bench.DISABLED_ResNet50Batch1/8 time ResNet-50's conv layers in INT8 against FP16,
// DISABLED_Cin24And40 the expansions of 24 and 40 channels (run them with
// --gtest_also_run_disabled_tests).
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
  int64_t batch, cin, cout, h, w, k, stride, dilation, pad;
  int64_t groups = 1;  // cin: depthwise; else grouped (the grouped igemm form)
};

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

ConvParams params_of(const Case& c) {
  return test_util::int8_conv2d(c.batch, c.cin, c.cout, c.groups, {c.h, c.w}, c.k, c.stride,
                                c.dilation, c.pad, true);
}

const char* const kVariants[] = {
    "jp_conv_igemm_128x128_i8",       "jp_conv_igemm_64x64_i8",
    "jp_conv_igemm_32x64_i8",         "jp_conv_igemm_32x64k128_i8",
    "jp_conv_igemm_128x128_i8_f16out", "jp_conv_igemm_64x64_i8_f16out",
    "jp_conv_igemm_32x64_i8_f16out",  "jp_conv_igemm_32x64k128_i8_f16out",
    "jp_conv_igemm_64x64k128_i8",     "jp_conv_igemm_64x64k128_i8_f16out",
    "jp_conv_igemm_32x64_c8_i8",      "jp_conv_igemm_32x64_c8_i8_f16out",
    "jp_conv_igemm_32x64_grouped_i8", "jp_conv_igemm_32x64_grouped_i8_f16out",
    "jp_conv_igemm_64x64k128s2_i8",   "jp_conv_igemm_64x64k128s4_i8",
    "jp_conv_igemm_32x64k128s2_i8"};

// The tile of a variant, from its name (BMxBN).
void tile_of(const std::string& name, uint32_t* bm, uint32_t* bn) {
  *bm = name.find("128x128") != std::string::npos ? 128 : (name.find("64x64") != std::string::npos ? 64 : 32);
  *bn = *bm == 32 ? 64 : *bm;
}

cuda::LaunchChoice choice_of(const char* name, const ConvParams& p, uint32_t split) {
  cuda::LaunchChoice c;
  c.variant = cuda::find_kernel_variant(name);
  uint32_t bm = 0, bn = 0;
  tile_of(name, &bm, &bn);
  const uint64_t m = uint64_t(p.batch) * p.out_size[0] * p.out_size[1];
  c.grid[0] = cuda::ceil_div_u32(m, bm);
  c.grid[1] = cuda::ceil_div_u32(uint64_t(p.out_channels), bn);
  c.grid[2] = split;
  c.block[0] = c.variant != nullptr ? c.variant->block_threads : 0;
  c.shared_bytes = c.variant != nullptr ? c.variant->shared_bytes : 0;
  c.split_k = split;
  const uint64_t tiles = uint64_t(c.grid[0]) * c.grid[1];
  c.workspace_bytes = split > 1 ? tiles * (uint64_t(split) * bm * bn * 4 + 4) : 0;
  return c;
}

// The previous depthwise INT8 kernel (jp_conv_depthwise_i8[_f16out], the selection's for the
// depthwise convs the tiled one does not take), launched as the selection launches it: four
// channels a thread where C % 4 == 0.
cuda::LaunchChoice depthwise_legacy(const ConvParams& p, bool y8) {
  cuda::LaunchChoice c;
  c.variant = cuda::find_kernel_variant(y8 ? "jp_conv_depthwise_i8" : "jp_conv_depthwise_i8_f16out");
  const uint64_t work = uint64_t(p.batch) * p.out_size[0] * p.out_size[1] * p.in_channels;
  cuda::launch_1d(work / (p.in_channels % 4 == 0 ? 4 : 1), 256,
                  gpu_test::device_target().sm_count * 16, &c);
  return c;
}

// A tiled 3x3 INT8 launch with the other of the two kernels of its output type:
// jp_conv_dw3_i8[_f16out] (the next kernel row loaded ahead) and jp_conv_dw3_1row_i8[_f16out]
// (a row at a time).
cuda::LaunchChoice other_dw3_i8(cuda::LaunchChoice c) {
  const std::string name = c.variant->name;
  const std::string out = name.find("_f16out") != std::string::npos ? "_f16out" : "";
  const bool ahead = name.find("_1row_") == std::string::npos;
  c.variant = cuda::find_kernel_variant(((ahead ? "jp_conv_dw3_1row_i8" : "jp_conv_dw3_i8") + out).c_str());
  EXPECT_NE(c.variant, nullptr) << name;
  return c;
}

// The depthwise INT8 launch with one thread a channel (more blocks than four channels a thread
// need: the kernel then takes one channel a thread).
cuda::LaunchChoice depthwise_one_channel_a_thread(cuda::LaunchChoice c, const ConvParams& p) {
  const uint64_t work = uint64_t(p.batch) * p.out_size[0] * p.out_size[1] * p.in_channels;
  c.grid[0] = cuda::ceil_div_u32(work, c.block[0]);
  return c;
}

// The selector's choice for an INT8 conv step (Int8 x and w, the Float32 channel epilogue, a
// residual where p has one, y of type `y`): "" or why it refused.
std::string select_int8(const ConvParams& p, DType y, cuda::LaunchChoice* out) {
  cuda::StepDesc step = gpu_test::step_of(kConv, &p, DType::kInt8);
  step.num_inputs = p.has_residual ? 4 : 3;
  step.input_dtypes[0] = step.input_dtypes[1] = DType::kInt8;
  step.input_dtypes[2] = DType::kFloat32;
  step.num_outputs = 1;
  step.output_dtypes[0] = y;
  std::string why;
  return cuda::select_kernel(step, gpu_test::device_target(), out, &why) ? "" : why;
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
  // residual: 0 none, 1 Int8, 2 Float16; activations cycle through every kind.
  for (int residual = 0; residual < 3; ++residual) {
    ConvParams p = params_of(c);
    const Activation act = test_util::kEveryActivation[(GetParam() * 3 + residual) % kActivationKindCount];
    p.act = act;
    p.has_residual = residual != 0;
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
        runs.push_back({v, choice_of(v, p, 1)});
        if (kt >= 3 || grouped)
          runs.push_back({std::string(v) + " split 3", choice_of(v, p, 3)});
      }
      cuda::LaunchChoice chosen;
      ASSERT_EQ(select_int8(p, y8 ? DType::kInt8 : DType::kFloat16, &chosen), "");
      runs.push_back({std::string("selected ") + chosen.variant->name, chosen});
      if (p.groups == 1) {
        EXPECT_EQ(std::string(chosen.variant->name).find("_c8_") != std::string::npos,
                  p.in_channels % 16 != 0)
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
      // The large layer holds one kernel row at a time (384 threads an SM or more).
      const std::string out = y8 ? "" : "_f16out";
      EXPECT_EQ(chosen.variant->name, (hw == 9 ? "jp_conv_dw3_i8" : "jp_conv_dw3_1row_i8") + out);
      const cuda::StepPointers ptrs = gpu_test::step_pointers({dx.get(), dw.get(), de.get()}, dy);
      for (const cuda::LaunchChoice& run :
           {chosen, other_dw3_i8(chosen), depthwise_legacy(p, y8)}) {
        dy.poison16(0x5A5A);
        ASSERT_EQ(gpu_test::launch(run.variant->name, run, ptrs, p), "");
        EXPECT_EQ(compare(dy.download<uint8_t>(want.size()), want, y8, true), "")
            << run.variant->name << ", " << hw << "x" << hw << ", offset " << offset;
        EXPECT_TRUE(dy.guard_intact());
      }
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


// Buffers for timing one conv layer (x and w of small values, a zero epilogue, room for FP16)
// and the selector's INT8 (Int8 y) and FP16 choices for it.
struct BenchRun {
  std::unique_ptr<DeviceBuffer> dx, dw, de, dy;
  cuda::StepPointers ptrs{};
  cuda::LaunchChoice ch8, ch16;
  ConvParams p16;
};

void bench_run(const ConvParams& p, int64_t nx, int64_t nw, int64_t ny, BenchRun* r) {
  r->dx = std::make_unique<DeviceBuffer>(size_t(nx * 2));
  r->dw = std::make_unique<DeviceBuffer>(size_t(nw * 2));
  r->de = std::make_unique<DeviceBuffer>(size_t(p.out_channels * 8));
  r->dy = std::make_unique<DeviceBuffer>(size_t(ny * 2));
  r->dx->poison16(0x0101);
  r->dw->poison16(0x0101);
  r->de->poison32(0);
  r->ptrs = gpu_test::step_pointers({r->dx.get(), r->dw.get(), r->de.get()}, *r->dy);
  ASSERT_EQ(select_int8(p, DType::kInt8, &r->ch8), "");
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
  std::string best = "selected", sliced;
  for (const char* v : kVariants) {
    if (std::string(v).find("f16out") != std::string::npos) continue;
    // The grouped tiles refuse groups-1 steps (computing nothing, in no time at all).
    if (std::string(v).find("_grouped_") != std::string::npos) continue;
    if (l.cin % 16 != 0 && std::string(v).find("_c8_") == std::string::npos) continue;
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
      sliced += one;
    }
  }
  std::printf("b%lld %4lld->%4lld %3lldx%-3lld k%lld s%lld x%lld  int8 %-28s split %2u %7.2f us | fp16 %-26s split %2u %7.2f us | %.2fx | best int8 %s %.2f us |%s\n",
              (long long)batch, (long long)l.cin, (long long)l.cout, (long long)l.hw, (long long)l.hw,
              (long long)l.k, (long long)l.stride, (long long)l.count, ch8.variant->name, ch8.split_k,
              us8, ch16.variant->name, ch16.split_k, us16, us8 / us16, best.c_str(), best_us,
              sliced.c_str());
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

TEST(GpuConvInt8Bench, DISABLED_ResNet50Batch1) {
  GPU_TEST_OR_SKIP();
  bench_int8(1, {1, 2, 3, 4, 6, 8, 12, 16});
}

TEST(GpuConvInt8Bench, DISABLED_ResNet50Batch8) {
  GPU_TEST_OR_SKIP();
  bench_int8(8, {1, 2, 4});
}

}  // namespace
}  // namespace jetplan::kernels
