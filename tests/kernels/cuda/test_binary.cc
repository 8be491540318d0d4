// CUDA Activation and Binary kernels (kernels/cuda/activation.cu, binary.cu) against their CPU twins
// (kernels/cpu/activation.cc, binary.cc): FP16 storage, fresh random inputs, poisoned outputs.
// Tolerance: FP16 output rounding (2^-11 relative) plus the twin's FP32 on FP16-rounded inputs:
// |got - want| <= 2e-3 * |want| + 2e-3 (transcendentals use fast exp in FP32). The Int8 Add and
// the float Binary into Int8: bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace gpu_test;
using namespace test_util;

constexpr uint16_t kBinary = static_cast<uint16_t>(OpFamilyId::kBinary);

// The params of a op b broadcast to their common shape, with activation act.
BinaryParams binary_params(BinaryOp op, const Shape& a, const Shape& b, Activation act) {
  const Shape out = test_util::broadcast_shapes({a, b});
  BinaryParams p;
  p.op = op;
  p.rank = static_cast<int32_t>(out.size());
  for (size_t d = 0; d < out.size(); ++d) p.out_dims[d] = out[d];
  test_util::broadcast_strides(a, out, p.a_strides);
  test_util::broadcast_strides(b, out, p.b_strides);
  p.act = act;
  return p;
}

// The selection's launch, and where p has the 8-wide form (binary_x8_fits) the `x8` variant
// with the selection's launch for it and with two blocks (each striding over many groups).
std::vector<cuda::LaunchChoice> with_x8(const cuda::LaunchChoice& chosen, const BinaryParams& p,
                                        const char* x8) {
  std::vector<cuda::LaunchChoice> runs = {chosen};
  if (!binary_x8_fits(p)) return runs;
  cuda::LaunchChoice run = chosen;
  run.variant = cuda::find_kernel_variant(x8);
  cuda::launch_1d(uint64_t(test_util::volume(std::vector<int64_t>(p.out_dims, p.out_dims + p.rank))) / 8,
                  256, gpu_test::device_target().sm_count * 8, &run);
  runs.push_back(run);
  run.grid[0] = 2;
  runs.push_back(run);
  return runs;
}

TEST(GpuBinary, BroadcastMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape a, b; };
  // The last four have the 8-wide form (the last dim a multiple of 8, each operand along it
  // contiguous or broadcast), and so does the second.
  const Case cases[] = {{{2, 3, 5, 7}, {2, 3, 5, 7}}, {{1, 7, 7, 64}, {1, 1, 1, 64}},
                        {{8, 1, 5}, {1, 6, 1}},       {{1}, {33}},
                        {{8, 14, 14, 96}, {8, 1, 1, 96}}, {{2, 1, 1, 40}, {2, 9, 9, 40}},
                        {{4, 6, 16}, {16}},           {{3, 5, 8}, {3, 5, 1}}};
  for (const Case& c : cases) {
    for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kMul, BinaryOp::kSub, BinaryOp::kMax,
                        BinaryOp::kMin, BinaryOp::kPRelu}) {
      const Shape out = test_util::broadcast_shapes({c.a, c.b});
      const BinaryParams p = binary_params(op, c.a, c.b, Activation{ActivationKind::kRelu, 0, 0});
      const int64_t na = test_util::volume(c.a), nb = test_util::volume(c.b),
                    ny = test_util::volume(out);
      std::vector<float> a = gpu_test::round_half(rng.uniform(na, -3.f, 3.f));
      std::vector<float> b = gpu_test::round_half(rng.uniform(nb, -3.f, 3.f));
      std::vector<float> want(ny);
      cpu::binary(p, a.data(), b.data(), want.data());
      const auto da = gpu_test::to_device(a, DType::kFloat16);
      const auto db = gpu_test::to_device(b, DType::kFloat16);
      DeviceBuffer dy(ny * 2);
      dy.poison16(gpu_test::kHalfPoison);
      cuda::StepPointers ptrs = gpu_test::step_pointers({da.get(), db.get()}, dy);
      cuda::LaunchChoice chosen;
      ASSERT_EQ(gpu_test::select(kBinary, DType::kFloat16, p, &chosen), "");
      for (const cuda::LaunchChoice& run : with_x8(chosen, p, "jp_binary_x8_f16")) {
        dy.poison16(gpu_test::kHalfPoison);
        ASSERT_EQ(gpu_test::launch(run.variant->name, run, ptrs, p), "");
        EXPECT_TRUE(gpu_test::all_close_half(dy.download<uint16_t>(ny), want, 2e-3, 2e-3))
            << test_util::shape_str(c.a) << " op " << static_cast<int>(op) << " "
            << run.variant->name << " grid " << run.grid[0];
        EXPECT_TRUE(dy.guard_intact());
      }
    }
  }
}

// Float16 Binary steps of the 8-wide form with more elements than the element-wise launch's
// threads take the _x8 variants (into Int8 too); smaller ones, other forms and Float32 do not.
TEST(GpuBinarySelect, LargeHalfStepsOfTheWideFormTakeTheX8Kernels) {
  const cuda::TargetInfo t = gpu_test::target_with(132);
  struct Want {
    Shape a, b;
    DType dt, y;
    const char* name;
  };
  const Want wants[] = {
      {{8, 112, 112, 32}, {8, 1, 1, 32}, DType::kFloat16, DType::kFloat16, "jp_binary_x8_f16"},
      {{8, 112, 112, 32}, {8, 1, 1, 32}, DType::kFloat16, DType::kInt8, "jp_binary_q8_x8_f16"},
      {{1, 14, 14, 672}, {1, 1, 1, 672}, DType::kFloat16, DType::kFloat16, "jp_binary_f16"},
      {{8, 112, 112, 36}, {8, 1, 1, 36}, DType::kFloat16, DType::kFloat16, "jp_binary_f16"},
      {{8, 32, 112, 112}, {8, 32, 1, 1}, DType::kFloat16, DType::kFloat16, "jp_binary_x8_f16"},
      {{8, 96, 56, 58}, {8, 96, 1, 1}, DType::kFloat16, DType::kFloat16, "jp_binary_f16"},
      {{8, 112, 112, 32}, {8, 1, 1, 32}, DType::kFloat32, DType::kFloat32, "jp_binary_f32"},
  };
  for (const Want& w : wants) {
    const BinaryParams p = binary_params(BinaryOp::kMul, w.a, w.b, {});
    cuda::StepDesc step = gpu_test::step_of(kBinary, &p, w.dt);
    step.num_inputs = w.y == DType::kInt8 ? 3 : 2;
    step.input_dtypes[0] = step.input_dtypes[1] = w.dt;
    step.input_dtypes[2] = DType::kFloat32;
    step.num_outputs = 1;
    step.output_dtypes[0] = w.y;
    cuda::LaunchChoice c;
    std::string why;
    ASSERT_TRUE(cuda::select_kernel(step, t, &c, &why)) << why;
    EXPECT_STREQ(c.variant->name, w.name) << test_util::shape_str(w.a);
  }
}

// An INT8 plan's Add (jp_binary_add_i8) against cpu::binary_add_int8: bit for bit (the same
// float operations, kernels/int8_epilogue.h), with broadcasting and ReLU; fresh random bytes,
// outputs poisoned, the guard checked. Another op on Int8 is refused.
TEST(GpuBinary, Int8AddMatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape a, b; };
  const Case cases[] = {{{8, 28, 28, 64}, {8, 28, 28, 64}}, {{1, 7, 7, 48}, {1, 1, 1, 48}},
                        {{3, 5, 17}, {3, 5, 17}}};
  for (const Case& c : cases) {
    for (ActivationKind act : {ActivationKind::kNone, ActivationKind::kRelu}) {
      const Shape out = test_util::broadcast_shapes({c.a, c.b});
      const BinaryParams p = binary_params(BinaryOp::kAdd, c.a, c.b, Activation{act, 0, 0});
      const int64_t na = test_util::volume(c.a), nb = test_util::volume(c.b),
                    ny = test_util::volume(out);
      const std::vector<uint8_t> a = rng.bytes(na), b = rng.bytes(nb);
      const std::vector<float> scales = {rng.uniform(0.005f, 0.05f), rng.uniform(0.005f, 0.05f),
                                         1.f / rng.uniform(0.01f, 0.05f)};
      std::vector<uint8_t> want(static_cast<size_t>(ny), 0x5a);
      cpu::binary_add_int8(p, reinterpret_cast<const int8_t*>(a.data()),
                           reinterpret_cast<const int8_t*>(b.data()), scales.data(),
                           reinterpret_cast<int8_t*>(want.data()));
      DeviceBuffer da(na), db(nb), dy(ny);
      da.upload(a.data(), na);
      db.upload(b.data(), nb);
      const auto ds = gpu_test::to_device(scales, DType::kFloat32);
      dy.poison16(gpu_test::kHalfPoison);
      cuda::StepPointers ptrs = gpu_test::step_pointers({&da, &db, ds.get()}, dy);
      cuda::LaunchChoice chosen;
      ASSERT_EQ(gpu_test::select_and_launch(kBinary, DType::kInt8, ptrs, p, &chosen), "");
      EXPECT_STREQ(chosen.variant->name, "jp_binary_add_i8");
      EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(dy, ny), want), -1)
          << test_util::shape_str(c.a) << " act " << static_cast<int>(act);
      EXPECT_TRUE(dy.guard_intact());
    }
  }
  BinaryParams mul;
  mul.op = BinaryOp::kMul;
  DeviceBuffer d1(16), d2(16);
  EXPECT_NE(gpu_test::select_and_launch(kBinary, DType::kInt8, gpu_test::step_pointers({&d1, &d1, &d1}, d2), mul), "");
}

// An INT8 plan's float Binary writing Int8 (jp_binary_q8_f16 / _f32, a squeeze-excitation Mul in
// front of an INT8 conv) against cpu::binary_to_int8 on the same float operands: bit for bit,
// with broadcasting, every op the converter lets write Int8 and its piecewise-linear
// activations; fresh random inputs, outputs poisoned, the guard checked.
TEST(GpuBinary, FloatIntoInt8MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape a, b; };
  const Case cases[] = {{{2, 14, 14, 96}, {2, 1, 1, 96}}, {{1, 7, 7, 48}, {1, 7, 7, 48}},
                        {{3, 5, 17}, {17}}};
  const Activation acts[] = {{}, {ActivationKind::kRelu, 0, 0}, {ActivationKind::kClip, -1.f, 2.f},
                             {ActivationKind::kLeakyRelu, 0.1f, 0}};
  size_t launched = 0;
  for (DType dt : {DType::kFloat16, DType::kFloat32})
    for (const Case& c : cases)
      for (BinaryOp op : {BinaryOp::kMul, BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kDiv,
                          BinaryOp::kMax, BinaryOp::kMin, BinaryOp::kPRelu})
        for (const Activation& act : acts) {
          const Shape out = test_util::broadcast_shapes({c.a, c.b});
          const BinaryParams p = binary_params(op, c.a, c.b, act);
          const int64_t na = test_util::volume(c.a), nb = test_util::volume(c.b),
                        ny = test_util::volume(out);
          std::vector<float> a = rng.uniform(na, -3.f, 3.f);
          std::vector<float> b = rng.uniform(nb, 0.25f, 2.f);  // Div: away from 0
          if (dt == DType::kFloat16) {
            a = gpu_test::round_half(a);
            b = gpu_test::round_half(b);
          }
          const float inv_y = 1.f / rng.uniform(0.01f, 0.05f);
          std::vector<uint8_t> want(static_cast<size_t>(ny), 0x5a);
          cpu::binary_to_int8(p, a.data(), b.data(), inv_y,
                              reinterpret_cast<int8_t*>(want.data()));
          const auto da = gpu_test::to_device(a, dt);
          const auto db = gpu_test::to_device(b, dt);
          const auto ds = gpu_test::to_device({inv_y}, DType::kFloat32);
          DeviceBuffer dy(ny);
          dy.poison16(gpu_test::kHalfPoison);
          cuda::StepDesc step;
          step.family = kBinary;
          step.params = &p;
          step.dtype = dt;
          step.num_inputs = 3;
          step.input_dtypes[0] = step.input_dtypes[1] = dt;
          step.input_dtypes[2] = DType::kFloat32;
          step.num_outputs = 1;
          step.output_dtypes[0] = DType::kInt8;
          cuda::LaunchChoice chosen;
          std::string why;
          ASSERT_TRUE(cuda::select_kernel(step, gpu_test::device_target(), &chosen, &why)) << why;
          ASSERT_STREQ(chosen.variant->name,
                       dt == DType::kFloat16 ? "jp_binary_q8_f16" : "jp_binary_q8_f32");
          cuda::StepPointers ptrs = gpu_test::step_pointers({da.get(), db.get(), ds.get()}, dy);
          for (const cuda::LaunchChoice& run :
               dt == DType::kFloat16 ? with_x8(chosen, p, "jp_binary_q8_x8_f16")
                                     : std::vector<cuda::LaunchChoice>{chosen}) {
            dy.poison16(gpu_test::kHalfPoison);
            ASSERT_EQ(gpu_test::launch(run.variant->name, run, ptrs, p), "");
            EXPECT_EQ(gpu_test::first_difference(gpu_test::download_bytes(dy, ny), want), -1)
                << test_util::shape_str(c.a) << " op " << static_cast<int>(op) << " act "
                << static_cast<int>(act.kind) << " dtype " << static_cast<int>(dt) << " "
                << run.variant->name << " grid " << run.grid[0];
            EXPECT_TRUE(dy.guard_intact());
          }
          ++launched;
        }
  EXPECT_EQ(launched, 2u * 3u * 7u * 4u);
}

}  // namespace
}  // namespace jetplan::kernels
