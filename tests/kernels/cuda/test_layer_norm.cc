// CUDA BatchNorm and LayerNorm (kernels/cuda/batch_norm.cu, layer_norm.cu; LayerNorm also in its
// RMS form, in the block-a-row and lanes-a-row forms, and into Int8) against their CPU twins (kernels/cpu/batch_norm.cc, layer_norm.cc). Every tensor of
// the step has the step's dtype (the twin reads the same values rounded to FP16). Tolerance:
// FP16 |got - want| <= 2e-3 * |want| + 2e-3 (output rounding 2^-11 plus FP32 statistics); FP32
// 1e-5 * |want| + 1e-5, the mean and inv_std_dev outputs too. NaN never passes; outputs
// poisoned, guards checked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kLayerNorm = static_cast<uint16_t>(OpFamilyId::kLayerNorm);

TEST(GpuLayerNorm, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  // rms: RMSNormalization (no mean pass), as LLaMA-style blocks use it.
  struct Case { int64_t outer, inner; bool bias; ActivationKind act; bool rms = false; };
  const Case cases[] = {{197, 768, true, ActivationKind::kNone},  // ViT-B, batch 1
                        {8 * 197, 384, true, ActivationKind::kNone},
                        {5, 1, false, ActivationKind::kNone},
                        {3, 1001, false, ActivationKind::kRelu},
                        {2, 4099, true, ActivationKind::kGelu},
                        {64, 2048, false, ActivationKind::kNone, true},
                        {7, 1, false, ActivationKind::kNone, true},
                        {3, 1001, true, ActivationKind::kSilu, true},
                        // The lanes-a-row form (FP16, 8k elements up to 256): ConvNeXt-T's 96
                        // and 192 channels, groups of 4, 8, 16 and 32 lanes with idle lanes (40,
                        // 104, 248), rows that leave a warp part empty (7 rows of 2 a warp), RMS.
                        {2 * 3136, 96, true, ActivationKind::kNone},
                        {3 * 196, 192, true, ActivationKind::kGelu},
                        {5, 104, true, ActivationKind::kRelu},
                        {7, 248, true, ActivationKind::kNone},
                        {9, 8, true, ActivationKind::kNone},
                        {11, 40, false, ActivationKind::kNone},
                        {40, 256, false, ActivationKind::kNone, true}};
  for (const Case& c : cases) {
    for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
      LayerNormParams p;
      p.outer = c.outer;
      p.inner = c.inner;
      p.epsilon = 1e-5f;
      p.has_bias = c.bias;
      p.act.kind = c.act;
      p.rms = c.rms;
      const int64_t n = c.outer * c.inner;
      // An offset mean tests the two-pass variance.
      std::vector<float> x = rng.uniform(n, 2.f, 6.f), scale = rng.uniform(c.inner, -2.f, 2.f),
                         bias = rng.uniform(c.inner, -1.f, 1.f);
      auto dx = gpu_test::upload_rounded(&x, dtype), ds = gpu_test::upload_rounded(&scale, dtype), db = gpu_test::upload_rounded(&bias, dtype);
      std::vector<float> want(n);
      cpu::layer_norm(p, x.data(), scale.data(), bias.data(), want.data(), nullptr, nullptr);
      DeviceBuffer dy(n * gpu_test::float_storage_bytes(dtype));
      gpu_test::poison(dy, dtype);
      cuda::StepPointers ptrs{};
      ptrs.in[0] = dx->get();
      ptrs.in[1] = ds->get();
      if (c.bias) ptrs.in[2] = db->get();
      ptrs.out[0] = dy.get();
      ASSERT_EQ(gpu_test::select_and_launch(kLayerNorm, dtype, ptrs, p), "");
      EXPECT_TRUE(gpu_test::close_to_twin(dy, want, dtype))
          << c.outer << "x" << c.inner << " rms " << c.rms;
      EXPECT_TRUE(dy.guard_intact());
      cuda::LaunchChoice chosen;
      ASSERT_EQ(gpu_test::select(kLayerNorm, dtype, p, &chosen), "");
      EXPECT_EQ(std::strcmp(chosen.variant->name, "jp_layer_norm_warp_f16") == 0,
                dtype == DType::kFloat16 && layer_norm_warp_fits(p))
          << chosen.variant->name;
      if (dtype != DType::kFloat16) continue;
      // Both FP16 forms where the lanes-a-row form takes the step, that one also on a grid too
      // small for one pass (its warps stride over the rows).
      cuda::LaunchChoice block;
      block.variant = cuda::find_kernel_variant("jp_layer_norm_f16");
      cuda::launch_1d(uint64_t(c.outer) * 256, 256, 1024, &block);
      cuda::LaunchChoice small = chosen;
      small.grid[0] = 1;
      for (const cuda::LaunchChoice& run : {block, small}) {
        if (!layer_norm_warp_fits(p)) break;
        gpu_test::poison(dy, dtype);
        ASSERT_EQ(gpu_test::launch(run.variant->name, run, ptrs, p), "");
        EXPECT_TRUE(gpu_test::close_to_twin(dy, want, dtype))
            << run.variant->name << " grid " << run.grid[0] << ", " << c.outer << "x" << c.inner;
        EXPECT_TRUE(dy.guard_intact());
      }
    }
  }
}

// The mean and inv_std_dev outputs (ONNX LayerNormalization's optional outputs 1 and 2), each
// alone and both, in both dtypes, the RMS form with inv_std_dev only: y and each statistic against
// the twin at the tolerance above. The lanes-a-row form never takes such a step.
TEST(GpuLayerNorm, WritesMeanAndInvStdDevLikeTheTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { int64_t outer, inner; bool mean, inv_std, rms; };
  const Case cases[] = {{12, 96, true, true, false},   {5, 1001, true, false, false},
                        {197, 768, false, true, false}, {3, 64, false, true, true},
                        {1, 7, true, true, false}};
  for (const Case& c : cases) {
    for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
      LayerNormParams p;
      p.outer = c.outer;
      p.inner = c.inner;
      p.epsilon = 1e-5f;
      p.has_bias = true;
      p.rms = c.rms;
      p.mean_output = c.mean ? 1 : 0;
      p.inv_std_output = c.inv_std ? (c.mean ? 2 : 1) : 0;
      const int64_t n = c.outer * c.inner;
      std::vector<float> x = rng.uniform(n, 1.f, 3.f), scale = rng.uniform(c.inner, -2.f, 2.f),
                         bias = rng.uniform(c.inner, -1.f, 1.f);
      auto dx = gpu_test::upload_rounded(&x, dtype), ds = gpu_test::upload_rounded(&scale, dtype),
           db = gpu_test::upload_rounded(&bias, dtype);
      std::vector<float> want(n), want_mean(c.outer), want_inv(c.outer);
      cpu::layer_norm(p, x.data(), scale.data(), bias.data(), want.data(),
                      c.mean ? want_mean.data() : nullptr, c.inv_std ? want_inv.data() : nullptr);
      const size_t eb = gpu_test::float_storage_bytes(dtype);
      DeviceBuffer dy(n * eb), dm(c.outer * eb), di(c.outer * eb);
      for (DeviceBuffer* b : {&dy, &dm, &di}) gpu_test::poison(*b, dtype);
      cuda::StepPointers ptrs{};
      ptrs.in[0] = dx->get();
      ptrs.in[1] = ds->get();
      ptrs.in[2] = db->get();
      ptrs.out[0] = dy.get();
      if (c.mean) ptrs.out[p.mean_output] = dm.get();
      if (c.inv_std) ptrs.out[p.inv_std_output] = di.get();
      cuda::LaunchChoice chosen;
      ASSERT_EQ(gpu_test::select(kLayerNorm, dtype, p, &chosen), "");
      EXPECT_STRNE(chosen.variant->name, "jp_layer_norm_warp_f16");
      ASSERT_EQ(gpu_test::select_and_launch(kLayerNorm, dtype, ptrs, p), "");
      const std::string label = std::to_string(c.outer) + "x" + std::to_string(c.inner);
      EXPECT_TRUE(gpu_test::close_to_twin(dy, want, dtype)) << label;
      if (c.mean) {
        EXPECT_TRUE(gpu_test::close_to_twin(dm, want_mean, dtype)) << label << " mean";
      }
      if (c.inv_std) {
        EXPECT_TRUE(gpu_test::close_to_twin(di, want_inv, dtype)) << label << " inv_std_dev";
      }
      for (DeviceBuffer* b : {&dy, &dm, &di}) EXPECT_TRUE(b->guard_intact()) << label;
      // A statistic the step lacks is not written: its buffer stays poison.
      DeviceBuffer untouched(c.outer * eb);
      gpu_test::poison(untouched, dtype);
      if (!c.mean) {
        EXPECT_EQ(dm.download_all(), untouched.download_all()) << label;
      }
      if (!c.inv_std) {
        EXPECT_EQ(di.download_all(), untouched.download_all()) << label;
      }
    }
  }
}

// An INT8 plan's LayerNorm writing Int8 (jp_layer_norm_q8_f16 / _f32 and the lanes-a-row
// jp_layer_norm_warp_q8_f16, a transformer's LayerNorm in front of an INT8 GEMM) against
// cpu::layer_norm_to_int8 on the same inputs. The twin takes the statistics in double, the
// kernels in float, so a value within a hair of a rounding boundary may round the other way:
// every output within one unit of the twin's and at least 99% equal; the scale is picked so that
// some outputs saturate (checked: both ends of the range occur). Outputs poisoned, guards
// checked; every form also launched where the selection would pick another (the block kernel on
// a lanes-a-row step).
TEST(GpuLayerNorm, IntoInt8MatchesCpuTwinWithinOneUnit) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { int64_t outer, inner; bool bias; ActivationKind act; bool rms = false; };
  const Case cases[] = {{197, 768, true, ActivationKind::kNone},  // ViT-B's ln_1 at batch 1
                        {8 * 197, 384, true, ActivationKind::kNone},
                        {3, 1001, false, ActivationKind::kRelu},
                        {64, 2048, false, ActivationKind::kNone, true},
                        {2 * 3136, 96, true, ActivationKind::kNone},  // lanes-a-row
                        {5, 104, true, ActivationKind::kNone},
                        {40, 256, false, ActivationKind::kNone, true}};
  for (const Case& c : cases) {
    for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
      LayerNormParams p;
      p.outer = c.outer;
      p.inner = c.inner;
      p.has_bias = c.bias;
      p.act.kind = c.act;
      p.rms = c.rms;
      p.inv_scale_input = c.bias ? 3 : 2;
      const int64_t n = c.outer * c.inner;
      std::vector<float> x = rng.uniform(n, 2.f, 6.f), scale = rng.uniform(c.inner, -2.f, 2.f),
                         bias = rng.uniform(c.inner, -1.f, 1.f);
      auto dx = gpu_test::upload_rounded(&x, dtype), ds = gpu_test::upload_rounded(&scale, dtype),
           db = gpu_test::upload_rounded(&bias, dtype);
      // 127 at 2.5: the outputs reach about 4.5 (|scale| up to 2 times up to 1.8 standard
      // deviations, plus the bias), so the largest saturate at both ends.
      const float inv_y = 127.f / 2.5f;
      std::vector<int8_t> want(static_cast<size_t>(n));
      cpu::layer_norm_to_int8(p, x.data(), scale.data(), bias.data(), inv_y, want.data());
      const auto dinv = gpu_test::to_device({inv_y}, DType::kFloat32);
      DeviceBuffer dy(n);
      cuda::StepPointers ptrs{};
      ptrs.in[0] = dx->get();
      ptrs.in[1] = ds->get();
      if (c.bias) ptrs.in[2] = db->get();
      ptrs.in[p.inv_scale_input] = dinv->get();
      ptrs.out[0] = dy.get();
      cuda::StepDesc step;
      step.family = kLayerNorm;
      step.params = &p;
      step.dtype = dtype;
      step.num_inputs = p.inv_scale_input + 1;
      for (int i = 0; i < p.inv_scale_input; ++i) step.input_dtypes[i] = dtype;
      step.input_dtypes[p.inv_scale_input] = DType::kFloat32;
      step.num_outputs = 1;
      step.output_dtypes[0] = DType::kInt8;
      cuda::LaunchChoice chosen;
      std::string why;
      ASSERT_TRUE(cuda::select_kernel(step, gpu_test::device_target(), &chosen, &why)) << why;
      const bool warp = dtype == DType::kFloat16 && layer_norm_warp_fits(p);
      const char* block_name =
          dtype == DType::kFloat16 ? "jp_layer_norm_q8_f16" : "jp_layer_norm_q8_f32";
      EXPECT_STREQ(chosen.variant->name, warp ? "jp_layer_norm_warp_q8_f16" : block_name);
      std::vector<cuda::LaunchChoice> runs = {chosen};
      if (warp) {
        cuda::LaunchChoice block;
        block.variant = cuda::find_kernel_variant("jp_layer_norm_q8_f16");
        cuda::launch_1d(uint64_t(c.outer) * 256, 256, 1024, &block);
        runs.push_back(block);
      }
      for (const cuda::LaunchChoice& run : runs) {
        dy.poison16(gpu_test::kHalfPoison);
        ASSERT_EQ(gpu_test::launch(run.variant->name, run, ptrs, p), "");
        const std::vector<uint8_t> got = gpu_test::download_bytes(dy, n);
        int64_t equal = 0, far = 0, top = 0, bottom = 0;
        for (int64_t i = 0; i < n; ++i) {
          const int g = static_cast<int8_t>(got[static_cast<size_t>(i)]);
          const int w = want[static_cast<size_t>(i)];
          equal += g == w;
          far += std::abs(g - w) > 1;
          top += w == 127;
          bottom += w == -128;
        }
        const std::string label = std::string(run.variant->name) + " " +
                                  std::to_string(c.outer) + "x" + std::to_string(c.inner);
        EXPECT_EQ(far, 0) << label;
        EXPECT_GE(equal, n * 99 / 100) << label;
        EXPECT_TRUE(dy.guard_intact()) << label;
        if (c.act == ActivationKind::kNone) {
          EXPECT_GT(top, 0) << label;
          EXPECT_GT(bottom, 0) << label;
        }
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
