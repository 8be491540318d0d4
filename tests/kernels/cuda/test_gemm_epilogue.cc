// The Gemm epilogues of kernels/cuda/gemm.cu against the CPU twin (kernels/cpu/gemm.cc, double
// accumulation) on FP16-rounded inputs: the residual R (y = act(alpha A B + beta C + R)) in every
// variant (mma 64/32 rows, serial split-K, both GEMVs), and the output-cast variants (_f32out:
// FP16 in, FP32 y), each forced and as the selector picks them. Shapes: ViT's [197, 768] x
// [768, 768] (batch 1, and batch 8 as one [1576, 768] product, as prepare folds it), odd M/N/K,
// GEMV sizes (M <= 8), split-K with 3 uneven slices. Outputs are poisoned (FP16 or FP32 NaN)
// before each launch and the guards after y and the workspace are checked.
// Tolerance: FP32 accumulation of K FP16 products and one rounding of the output (FP16, or none
// for FP32 outputs): |got - want| <= 1e-2 * |want| + 1e-3 * sqrt(K) + 1e-3.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
constexpr uint16_t kGemm = static_cast<uint16_t>(OpFamilyId::kGemm);
constexpr uint32_t kSplits = 3;  // uneven on purpose: with few K tiles a slice gets none

struct Case {
  int64_t batch, M, N, K;
  bool ta, tb;
  bool with_c;      // a bias row
  bool with_r;      // the residual
  ActivationKind act;
};

std::string describe(const Case& c) {
  return "batch " + std::to_string(c.batch) + " M " + std::to_string(c.M) + " N " +
         std::to_string(c.N) + " K " + std::to_string(c.K) + " ta " + std::to_string(c.ta) +
         " tb " + std::to_string(c.tb) + " C " + std::to_string(c.with_c) + " R " +
         std::to_string(c.with_r) + " act " + std::to_string(static_cast<int>(c.act));
}

GemmParams params_of(const Case& c) {
  GemmParams p = test_util::gemm_shape(c.batch, c.M, c.N, c.K, c.ta, c.tb);
  p.alpha = 0.75f;
  p.beta = 1.f;
  p.a_batch_stride = c.M * c.K;
  p.b_batch_stride = 0;  // one weight for every batch (a Linear layer)
  p.has_c = c.with_c;
  p.c_stride_n = 1;
  p.has_residual = c.with_r;
  p.act = Activation{c.act, 0.f, 0.f};
  return p;
}

cuda::LaunchChoice launch_for(const std::string& name, const GemmParams& p) {
  return gpu_test::gemm_launch_for(name, p, kSplits);
}

// Every variant that fits the case, FP16 out; and the _f32out ones (trans_a false, no split-K).
std::vector<std::string> variants_for(const Case& c, bool f32_out) {
  std::vector<std::string> v;
  const std::string layout = std::string(c.ta ? "t" : "n") + (c.tb ? "t" : "n");
  const std::string suffix = f32_out ? "_f32out" : "";
  if (f32_out && c.ta) return v;
  v.push_back("jp_gemm_f16_mma64_" + layout + suffix);
  v.push_back("jp_gemm_f16_mma32_" + layout + suffix);
  if (c.batch == 1 && !f32_out) v.push_back("jp_gemm_f16_mma32_splitk_" + layout);
  if (c.M <= 8) v.push_back(std::string(c.tb ? "jp_gemm_f16_gemv_bt" : "jp_gemm_f16_gemv_bn") + suffix);
  return v;
}

// Inputs on the device and the CPU twin's answer, shared by every variant of one case.
struct Prepared {
  GemmParams p;
  int64_t ny = 0;
  std::vector<double> want;
  std::unique_ptr<DeviceBuffer> da, db, dc, dr;
};

Prepared prepare(test_util::SeededRng& rng, const Case& c) {
  Prepared out;
  out.p = params_of(c);
  const int64_t na = c.batch * c.M * c.K, nb = c.K * c.N, ny = c.batch * c.M * c.N;
  out.ny = ny;
  const std::vector<float> a = gpu_test::round_half(rng.uniform(na, -1.f, 1.f));
  const std::vector<float> b = gpu_test::round_half(rng.uniform(nb, -1.f, 1.f));
  const std::vector<float> cv = gpu_test::round_half(rng.uniform(c.N, -1.f, 1.f));
  const std::vector<float> r = gpu_test::round_half(rng.uniform(ny, -2.f, 2.f));
  std::vector<float> y(ny);
  cpu::gemm(out.p, a.data(), b.data(), c.with_c ? cv.data() : nullptr,
            c.with_r ? r.data() : nullptr, y.data());
  out.want.assign(y.begin(), y.end());
  out.da = gpu_test::to_device(a, DType::kFloat16);
  out.db = gpu_test::to_device(b, DType::kFloat16);
  out.dc = gpu_test::to_device(cv, DType::kFloat16);
  out.dr = gpu_test::to_device(r, DType::kFloat16);
  return out;
}

// Launches `variant` ("" = the selector's pick for the output dtype) and compares.
void run_variant(const Case& c, Prepared& in, const std::string& variant, bool f32_out) {
  SCOPED_TRACE(describe(c) + " variant " + (variant.empty() ? "selected" : variant) +
               (f32_out ? " f32 out" : " f16 out"));
  const GemmParams& p = in.p;
  const DType out_dtype = f32_out ? DType::kFloat32 : DType::kFloat16;
  DeviceBuffer dy(in.ny * gpu_test::float_storage_bytes(out_dtype));
  gpu_test::poison(dy, out_dtype);
  cuda::StepPointers ptrs{};
  int k = 0;
  ptrs.in[k++] = in.da->get();
  ptrs.in[k++] = in.db->get();
  if (c.with_c) ptrs.in[k++] = in.dc->get();
  if (c.with_r) ptrs.in[k++] = in.dr->get();
  ptrs.out[0] = dy.get();
  cuda::LaunchChoice l;
  if (variant.empty()) {
    cuda::StepDesc step =
        gpu_test::step_of(kGemm, &p, f32_out ? DType::kFloat32 : DType::kFloat16);
    step.num_inputs = k;
    for (int i = 0; i < k; ++i) step.input_dtypes[i] = DType::kFloat16;
    step.num_outputs = 1;
    step.output_dtypes[0] = step.dtype;
    std::string why;
    ASSERT_TRUE(cuda::select_kernel(step, gpu_test::device_target(), &l, &why)) << why;
    ASSERT_NE(l.variant, nullptr);
    EXPECT_EQ(std::string(l.variant->name).find("_f32out") != std::string::npos, f32_out)
        << l.variant->name;
  } else {
    l = launch_for(variant, p);
  }
  ASSERT_NE(l.variant, nullptr) << variant;
  EXPECT_EQ(l.variant->out_dtype,
            f32_out ? static_cast<uint8_t>(DType::kFloat32) : cuda::kAnyDType);
  SCOPED_TRACE(std::string("ran ") + l.variant->name);
  const std::unique_ptr<DeviceBuffer> ws = gpu_test::workspace_for(l, &ptrs);
  ASSERT_EQ(gpu_test::launch(l.variant->name, l, ptrs, p), "");
  const double abs_tol = 1e-3 * std::sqrt(static_cast<double>(c.K)) + 1e-3;
  EXPECT_TRUE(gpu_test::all_close(gpu_test::download_floats(dy, in.ny, out_dtype), in.want, 1e-2,
                                  abs_tol));
  EXPECT_TRUE(dy.guard_intact());
  if (ws != nullptr) {
    EXPECT_TRUE(ws->guard_intact());
  }
}

std::vector<Case> residual_matrix() {
  using A = ActivationKind;
  std::vector<Case> cases = {
      // ViT's projections and MLP-out: [197, 768] x [768, 768] (Linear weights: B [N, K]).
      {1, 197, 768, 768, false, true, true, true, A::kNone},
      {1, 197, 768, 768, false, false, true, true, A::kNone},
      // Batch 8, folded into rows as prepare does for a Linear over [8, 197, 768].
      {1, 8 * 197, 768, 768, false, true, true, true, A::kNone},
  };
  // Odd extents, every trans combo, with and without C, activations after the residual.
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      cases.push_back({1, 37, 53, 29, ta, tb, true, true, A::kRelu});
      cases.push_back({1, 65, 197, 40, ta, tb, false, true, A::kGelu});
      cases.push_back({1, 33, 130, 48, ta, tb, true, false, A::kGeluTanh});
    }
  const Case rest[] = {
      // Batched (not folded: trans_a) with the residual per batch.
      {3, 33, 65, 31, true, false, true, true, A::kSigmoid},
      {8, 17, 24, 64, false, true, false, true, A::kNone},
      // GEMV sizes: classifier heads at batch 1 and 8, odd N.
      {1, 1, 1000, 2048, false, true, true, true, A::kNone},
      {1, 8, 1000, 768, false, true, true, true, A::kRelu},
      {1, 5, 77, 130, false, false, true, true, A::kNone},
      {2, 3, 33, 9, false, false, false, true, A::kTanh},
      // Split-K: batch 1, long K, few tiles.
      {1, 40, 64, 768, false, true, true, true, A::kNone},
      {1, 97, 130, 1024, true, true, false, true, A::kHardSwish},
      // GPT-2's c_fc at a prefill of 128 tokens: bias and the tanh form of GELU.
      {1, 128, 3072, 768, false, false, true, false, A::kGeluTanh},
      // No residual: the f32out variants must still match the twin.
      {1, 70, 96, 128, false, true, true, false, A::kNone},
      {1, 2, 1000, 512, false, false, true, false, A::kNone},
  };
  cases.insert(cases.end(), std::begin(rest), std::end(rest));
  return cases;
}

// Every variant and the selector's choice over residual_matrix(), with FP16 output (false) or
// FP32 output (true).
class GpuGemmEpilogueEveryVariant : public testing::TestWithParam<bool> {};

TEST_P(GpuGemmEpilogueEveryVariant, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const bool f32out = GetParam();
  for (const Case& c : residual_matrix()) {
    if (f32out && c.ta) continue;  // no _f32out variant: the selector refuses (checked below)
    Prepared in = prepare(rng, c);
    for (const std::string& v : variants_for(c, f32out)) run_variant(c, in, v, f32out);
    run_variant(c, in, "", f32out);
  }
}

INSTANTIATE_TEST_SUITE_P(GpuGemmEpilogue, GpuGemmEpilogueEveryVariant, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "Float32Output" : "Residual");
                         });

// Split-K adds R once: two launches of the split variant on the same zeroed-once workspace
// (counters back at 0 after each) give the same bits as each other, and match the twin.
TEST(GpuGemmEpilogue, SplitKResidualDeterministic) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case c{1, 40, 64, 768, false, true, true, true, ActivationKind::kNone};
  Prepared in = prepare(rng, c);
  const cuda::LaunchChoice l = launch_for("jp_gemm_f16_mma32_splitk_nt", in.p);
  DeviceBuffer ws(l.workspace_bytes), dy(in.ny * 2);
  ws.zero();
  cuda::StepPointers ptrs{};
  ptrs.in[0] = in.da->get();
  ptrs.in[1] = in.db->get();
  ptrs.in[2] = in.dc->get();
  ptrs.in[3] = in.dr->get();
  ptrs.out[0] = dy.get();
  ptrs.workspace = ws.get();
  ptrs.workspace_bytes = l.workspace_bytes;
  std::vector<uint8_t> first;
  for (int rep = 0; rep < 2; ++rep) {
    dy.poison16(gpu_test::kHalfPoison);
    ASSERT_EQ(gpu_test::launch(l.variant->name, l, ptrs, in.p), "");
    if (rep == 0) first = dy.download_all();
    else EXPECT_EQ(first, dy.download_all());
  }
  run_variant(c, in, "jp_gemm_f16_mma32_splitk_nt", false);
}

// Host-only: the selector maps a Float32 output to the _f32out twins, never splits K for them,
// and refuses trans_a (the converter then keeps its Cast step).
TEST(GpuGemmEpilogueSelect, Float32OutputVariants) {
  GemmParams p = test_util::gemm_shape(1, 1, 1000, 2048, false, true);
  cuda::StepDesc step = gpu_test::step_of(kGemm, &p);
  step.num_inputs = 3;
  step.input_dtypes[0] = step.input_dtypes[1] = step.input_dtypes[2] = DType::kFloat16;
  step.num_outputs = 1;
  step.output_dtypes[0] = DType::kFloat32;
  cuda::TargetInfo t = gpu_test::target_with(16);
  cuda::LaunchChoice l;
  std::string why;
  ASSERT_TRUE(cuda::select_kernel(step, t, &l, &why)) << why;
  EXPECT_STREQ(l.variant->name, "jp_gemm_f16_gemv_bt_f32out");
  EXPECT_EQ(l.variant->out_dtype, static_cast<uint8_t>(DType::kFloat32));
  p.trans_b = false;
  ASSERT_TRUE(cuda::select_kernel(step, t, &l, &why)) << why;
  EXPECT_STREQ(l.variant->name, "jp_gemm_f16_gemv_bn_f32out");
  // A shape that splits K in FP16 (gemm_select's own test): plain 32-row tiles in FP32.
  p.M = 197;
  p.N = 64;
  p.K = 768;
  p.trans_b = true;
  ASSERT_TRUE(cuda::select_kernel(step, t, &l, &why)) << why;
  EXPECT_STREQ(l.variant->name, "jp_gemm_f16_mma32_nt_f32out");
  EXPECT_EQ(l.split_k, 1u);
  EXPECT_EQ(l.workspace_bytes, 0u);
  step.output_dtypes[0] = DType::kFloat16;
  ASSERT_TRUE(cuda::select_kernel(step, t, &l, &why)) << why;
  EXPECT_STREQ(l.variant->name, "jp_gemm_f16_mma32_splitk_nt");
  step.output_dtypes[0] = DType::kFloat32;
  p.trans_a = true;
  EXPECT_FALSE(cuda::select_kernel(step, t, &l, &why));
  EXPECT_NE(why.find("transposed A"), std::string::npos) << why;
  // Float32 inputs: the FP32 kernel into Float32 (Float32 GPU plans), none into Float16.
  p.trans_a = false;
  step.input_dtypes[0] = DType::kFloat32;
  ASSERT_TRUE(cuda::select_kernel(step, t, &l, &why)) << why;
  EXPECT_STREQ(l.variant->name, "jp_gemm_f32");
  step.output_dtypes[0] = DType::kFloat16;
  EXPECT_FALSE(cuda::select_kernel(step, t, &l, &why));
  EXPECT_NE(why.find("Float16"), std::string::npos) << why;
}

}  // namespace
}  // namespace jetplan::kernels
