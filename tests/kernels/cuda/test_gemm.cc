// CUDA Gemm kernels (kernels/cuda/gemm.cu) against the CPU twin (kernels/cpu/gemm.cc, double
// accumulation) on inputs rounded to FP16: every variant forced over a matrix of trans combos,
// odd and aligned M/N/K, batch 1 and 12 with broadcast (stride 0) operands, C absent / bias row /
// full / per batch, alpha/beta != 1 and activations; then the selector's own pick. Outputs are
// poisoned before each launch and the guard after y is checked.
// Tolerance: FP32 accumulation of K FP16 products (inputs in [-1, 1]) and one FP16 rounding of
// the output: |got - want| <= 1e-2 * |want| + 1e-3 * sqrt(K) + 1e-3.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

enum class CMode { kNone, kBiasRow, kFull, kPerBatch };

struct Case {
  int64_t batch, M, N, K;
  bool ta, tb;
  bool a_bcast, b_bcast;  // batch stride 0
  CMode c;
  float alpha, beta;
  ActivationKind act;
};

std::string describe(const Case& c) {
  return "batch " + std::to_string(c.batch) + " M " + std::to_string(c.M) + " N " +
         std::to_string(c.N) + " K " + std::to_string(c.K) + " ta " + std::to_string(c.ta) +
         " tb " + std::to_string(c.tb) + " a_bcast " + std::to_string(c.a_bcast) + " b_bcast " +
         std::to_string(c.b_bcast) + " c " + std::to_string(static_cast<int>(c.c)) + " alpha " +
         std::to_string(c.alpha) + " beta " + std::to_string(c.beta) + " act " +
         std::to_string(static_cast<int>(c.act));
}

GemmParams params_of(const Case& c) {
  GemmParams p = test_util::gemm_shape(c.batch, c.M, c.N, c.K, c.ta, c.tb);
  p.alpha = c.alpha;
  p.beta = c.beta;
  p.a_batch_stride = c.a_bcast ? 0 : c.M * c.K;
  p.b_batch_stride = c.b_bcast ? 0 : c.K * c.N;
  p.has_c = c.c != CMode::kNone;
  switch (c.c) {
    case CMode::kNone: break;
    case CMode::kBiasRow: p.c_stride_n = 1; break;
    case CMode::kFull: p.c_stride_m = c.N; p.c_stride_n = 1; break;
    case CMode::kPerBatch: p.c_stride_batch = c.M * c.N; p.c_stride_m = c.N; p.c_stride_n = 1; break;
  }
  p.act = Activation{c.act, 0.f, 0.f};
  if (c.act == ActivationKind::kLeakyRelu) p.act.alpha = 0.1f;
  if (c.act == ActivationKind::kClip) p.act = Activation{c.act, -0.5f, 2.f};
  return p;
}

int64_t c_elems(const Case& c) {
  switch (c.c) {
    case CMode::kNone: return 0;
    case CMode::kBiasRow: return c.N;
    case CMode::kFull: return c.M * c.N;
    case CMode::kPerBatch: return c.batch * c.M * c.N;
  }
  return 0;
}

constexpr uint32_t kForcedSplits = 3;  // uneven on purpose: some slices get no K tile

cuda::LaunchChoice launch_for(const std::string& name, const GemmParams& p) {
  return gpu_test::gemm_launch_for(name, p, kForcedSplits);
}

std::vector<std::string> variants_for(const Case& c) {
  std::vector<std::string> v;
  const std::string layout = std::string(c.ta ? "t" : "n") + (c.tb ? "t" : "n");
  v.push_back("jp_gemm_f16_mma64_" + layout);
  v.push_back("jp_gemm_f16_mma32_" + layout);
  if (c.batch == 1) v.push_back("jp_gemm_f16_mma32_splitk_" + layout);
  if (c.M <= 8) v.push_back(c.tb ? "jp_gemm_f16_gemv_bt" : "jp_gemm_f16_gemv_bn");
  return v;
}

// Runs `variant` ("" = the selector's pick) on the case; `misalign` shifts A and B by one half
// so the kernels must notice the pointers are not 16-byte aligned; `grid_x` > 0 replaces the
// launch's grid.x (a grid-stride kernel still covers every output).
void run_case(test_util::SeededRng& rng, const Case& c, const std::string& variant,
              bool misalign = false, uint32_t grid_x = 0) {
  SCOPED_TRACE(describe(c) + " variant " + (variant.empty() ? "selected" : variant) +
               (misalign ? " misaligned" : ""));
  const GemmParams p = params_of(c);
  const int64_t na = (c.a_bcast ? 1 : c.batch) * c.M * c.K;
  const int64_t nb = (c.b_bcast ? 1 : c.batch) * c.K * c.N;
  const int64_t nc = c_elems(c), ny = c.batch * c.M * c.N;
  const std::vector<float> a = gpu_test::round_half(rng.uniform(na, -1.f, 1.f));
  const std::vector<float> b = gpu_test::round_half(rng.uniform(nb, -1.f, 1.f));
  const std::vector<float> cv = gpu_test::round_half(rng.uniform(std::max<int64_t>(nc, 1), -1.f, 1.f));
  std::vector<float> want(ny);
  cpu::gemm(p, a.data(), b.data(), nc > 0 ? cv.data() : nullptr, want.data());

  const int64_t shift = misalign ? 1 : 0;
  DeviceBuffer da((na + shift) * 2), db((nb + shift) * 2), dc(std::max<int64_t>(nc, 1) * 2),
      dy(ny * 2);
  std::vector<uint16_t> ha(shift, 0), hb(shift, 0);
  const std::vector<uint16_t> a16 = gpu_test::to_half(a), b16 = gpu_test::to_half(b);
  ha.insert(ha.end(), a16.begin(), a16.end());
  hb.insert(hb.end(), b16.begin(), b16.end());
  da.upload(ha.data(), ha.size() * 2);
  db.upload(hb.data(), hb.size() * 2);
  if (nc > 0) dc.upload(gpu_test::to_half(cv).data(), nc * 2);
  dy.poison16(gpu_test::kHalfPoison);
  cuda::StepPointers ptrs{};
  ptrs.in[0] = static_cast<uint16_t*>(da.get()) + shift;
  ptrs.in[1] = static_cast<uint16_t*>(db.get()) + shift;
  ptrs.in[2] = nc > 0 ? dc.get() : nullptr;
  ptrs.out[0] = dy.get();
  cuda::LaunchChoice l;
  if (variant.empty()) {
    ASSERT_EQ(gpu_test::select(kGemm, DType::kFloat16, p, &l), "");
  } else {
    l = launch_for(variant, p);
  }
  ASSERT_NE(l.variant, nullptr) << variant;
  if (grid_x > 0) l.grid[0] = grid_x;
  SCOPED_TRACE(std::string("ran ") + l.variant->name);
  // The workspace as the runtime hands it over: zeroed for zero_workspace rows, else garbage.
  const std::unique_ptr<DeviceBuffer> ws = gpu_test::workspace_for(l, &ptrs);
  ASSERT_EQ(gpu_test::launch(l.variant->name, l, ptrs, p), "");
  const double abs_tol = 1e-3 * std::sqrt(static_cast<double>(c.K)) + 1e-3;
  EXPECT_TRUE(gpu_test::all_close_half(dy.download<uint16_t>(ny), want, 1e-2, abs_tol));
  EXPECT_TRUE(dy.guard_intact());
  if (ws != nullptr) {
    EXPECT_TRUE(ws->guard_intact());
  }
}

std::vector<Case> matrix() {
  std::vector<Case> cases;
  using A = ActivationKind;
  // Every trans combo over odd and aligned extents, batch 1, no C.
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {7, 13, 9},
                             {64, 64, 64}, {197, 64, 768}, {65, 197, 40}, {8, 1000, 2048},
                             {3, 77, 197}, {16, 24, 8}, {1, 768, 64}})
        cases.push_back({1, M, N, K, ta, tb, false, false, CMode::kNone, 1.f, 1.f, A::kNone});
  // Batches with broadcast operands, C modes, alpha/beta and activations.
  cases.push_back({12, 197, 197, 64, false, true, false, false, CMode::kNone, 0.125f, 1.f, A::kNone});
  cases.push_back({12, 197, 64, 197, false, false, false, false, CMode::kNone, 1.f, 1.f, A::kNone});
  cases.push_back({12, 7, 64, 64, false, false, true, false, CMode::kBiasRow, 1.f, 1.f, A::kRelu});
  cases.push_back({12, 64, 40, 24, true, false, false, true, CMode::kPerBatch, 0.5f, -2.f, A::kTanh});
  cases.push_back({3, 5, 33, 17, true, true, false, true, CMode::kFull, 1.f, 0.5f, A::kSigmoid});
  cases.push_back({1, 197, 256, 128, false, false, false, false, CMode::kBiasRow, 1.f, 1.f, A::kGelu});
  cases.push_back({1, 100, 72, 96, false, true, false, false, CMode::kFull, 2.f, 0.25f, A::kClip});
  cases.push_back({2, 1, 1000, 512, false, true, false, true, CMode::kBiasRow, 1.f, 1.f, A::kNone});
  cases.push_back({4, 33, 65, 31, true, false, true, false, CMode::kFull, -1.f, 1.5f, A::kLeakyRelu});
  cases.push_back({1, 4, 130, 16, true, false, false, false, CMode::kFull, 1.f, 1.f, A::kHardSwish});
  // K = 0: y = act(beta * C).
  cases.push_back({2, 70, 9, 0, false, true, false, false, CMode::kFull, 1.f, 0.5f, A::kRelu});
  cases.push_back({1, 3, 9, 0, false, false, false, false, CMode::kBiasRow, 1.f, 2.f, A::kNone});
  return cases;
}

TEST(GpuGemm, EveryVariantMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const Case& c : matrix())
    for (const std::string& v : variants_for(c)) run_case(rng, c, v);
}

// Float32 storage (GPU plans of --precision fp32): the selector's jp_gemm_f32 on every case of
// the matrix against the twin on the same float32 inputs; only the summation order differs:
// |got - want| <= 1e-5 * |want| + 1e-5 * sqrt(K) / 8 + 1e-6. Output poisoned (NaN), guard checked.
TEST(GpuGemm, Float32MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const Case& c : matrix()) {
    SCOPED_TRACE(describe(c));
    const GemmParams p = params_of(c);
    const int64_t na = (c.a_bcast ? 1 : c.batch) * c.M * c.K;
    const int64_t nb = (c.b_bcast ? 1 : c.batch) * c.K * c.N;
    const int64_t nc = c_elems(c), ny = c.batch * c.M * c.N;
    const std::vector<float> a = rng.uniform(na, -1.f, 1.f), b = rng.uniform(nb, -1.f, 1.f);
    const std::vector<float> cv = rng.uniform(std::max<int64_t>(nc, 1), -1.f, 1.f);
    std::vector<float> want(ny);
    cpu::gemm(p, a.data(), b.data(), nc > 0 ? cv.data() : nullptr, want.data());
    const auto da = gpu_test::to_device(a, DType::kFloat32);
    const auto db = gpu_test::to_device(b, DType::kFloat32);
    const auto dc = gpu_test::to_device(cv, DType::kFloat32);
    DeviceBuffer dy(std::max<int64_t>(ny, 1) * 4);
    gpu_test::poison(dy, DType::kFloat32);
    cuda::StepPointers ptrs{};
    ptrs.in[0] = da->get();
    ptrs.in[1] = db->get();
    ptrs.in[2] = nc > 0 ? dc->get() : nullptr;
    ptrs.out[0] = dy.get();
    cuda::LaunchChoice chosen;
    ASSERT_EQ(gpu_test::select_and_launch(kGemm, DType::kFloat32, ptrs, p, &chosen), "");
    EXPECT_STREQ(chosen.variant->name, "jp_gemm_f32");
    EXPECT_TRUE(gpu_test::all_close(dy.download<float>(ny), want, 1e-5,
                                    1e-5 * std::sqrt(double(c.K)) / 8 + 1e-6));
    EXPECT_TRUE(dy.guard_intact());
  }
}

TEST(GpuGemm, SelectedVariantMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const Case& c : matrix()) run_case(rng, c, "");
}

// Pointers off 16-byte alignment with otherwise vectorizable extents: the kernels must take
// their element-wise paths (the arena never does this, but a plan's offsets are not trusted).
TEST(GpuGemm, MisalignedPointersMatchCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const Case big{2, 64, 128, 64, ta, tb, false, false, CMode::kFull, 1.f, 1.f, ActivationKind::kNone};
      const Case small{1, 2, 64, 64, ta, tb, false, false, CMode::kNone, 1.f, 1.f, ActivationKind::kNone};
      for (const Case& c : {big, small})
        for (const std::string& v : variants_for(c)) run_case(rng, c, v, /*misalign=*/true);
    }
}

// The gemv kernels stride over their column groups: one CTA (a plan's grid is not trusted)
// still writes every column of every batch.
TEST(GpuGemm, GemvAnyGridCoversEveryColumn) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case bt{2, 3, 77, 197, false, true, false, false, CMode::kBiasRow, 1.f, 1.f, ActivationKind::kNone};
  const Case bn{2, 3, 77, 197, false, false, false, false, CMode::kBiasRow, 1.f, 1.f, ActivationKind::kNone};
  run_case(rng, bt, "jp_gemm_f16_gemv_bt", false, 1);
  run_case(rng, bn, "jp_gemm_f16_gemv_bn", false, 1);
}

// Same inputs, same bits: two launches of each variant agree exactly.
TEST(GpuGemm, Deterministic) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case c{1, 8, 1000, 2048, false, true, false, false, CMode::kBiasRow, 1.f, 1.f,
               ActivationKind::kNone};
  const GemmParams p = params_of(c);
  const auto a = gpu_test::to_half(rng.uniform(c.M * c.K, -1.f, 1.f));
  const auto b = gpu_test::to_half(rng.uniform(c.K * c.N, -1.f, 1.f));
  const auto bias = gpu_test::to_half(rng.uniform(c.N, -1.f, 1.f));
  DeviceBuffer da(a.size() * 2), db(b.size() * 2), dc(bias.size() * 2), dy(c.M * c.N * 2);
  da.upload(a.data(), a.size() * 2);
  db.upload(b.data(), b.size() * 2);
  dc.upload(bias.data(), bias.size() * 2);
  cuda::StepPointers ptrs = gpu_test::step_pointers({&da, &db, &dc}, dy);
  for (const std::string& v : variants_for(c)) {
    const cuda::LaunchChoice l = launch_for(v, p);
    // Zeroed once: split-K leaves its counters at 0 for a replay.
    const std::unique_ptr<DeviceBuffer> ws = gpu_test::workspace_for(l, &ptrs, /*zeroed=*/true);
    std::vector<uint8_t> first;
    for (int rep = 0; rep < 2; ++rep) {
      dy.poison16(gpu_test::kHalfPoison);
      ASSERT_EQ(gpu_test::launch(v.c_str(), l, ptrs, p), "");
      if (rep == 0) first = dy.download_all();
      else EXPECT_EQ(first, dy.download_all()) << v;
    }
  }
}

TEST(GpuGemmSelect, RefusesOtherDtypesAndPicksByShape) {
  GemmParams p = test_util::gemm_shape(1, 1, 1000, 2048, false, true);
  cuda::StepDesc step = gpu_test::step_of(kGemm, &p);
  cuda::TargetInfo t = gpu_test::target_with(16);
  cuda::LaunchChoice l;
  std::string why;
  // Float32 storage (Float32 GPU plans): the FP32 kernel, 64x64 tiles.
  ASSERT_TRUE(cuda::select_kernel(step, t, &l, &why)) << why;
  EXPECT_STREQ(l.variant->name, "jp_gemm_f32");
  EXPECT_EQ(l.grid[0], 16u);
  EXPECT_EQ(l.grid[1], 1u);
  EXPECT_EQ(l.block[0], l.variant->block_threads);
  step.dtype = DType::kFloat64;
  EXPECT_FALSE(cuda::select_kernel(step, t, &l, &why));
  EXPECT_NE(why.find("Float16"), std::string::npos) << why;
  step.dtype = DType::kFloat16;
  ASSERT_TRUE(cuda::select_kernel(step, t, &l, &why)) << why;
  EXPECT_STREQ(l.variant->name, "jp_gemm_f16_gemv_bt");
  p.M = 197;
  p.trans_a = true;
  p.batch = 100000;
  ASSERT_TRUE(cuda::select_kernel(step, t, &l, &why)) << why;
  EXPECT_STREQ(l.variant->name, "jp_gemm_f16_mma64_tt");
  EXPECT_EQ(l.grid[2], 65535u);
  EXPECT_EQ(l.block[0], l.variant->block_threads);
  p.batch = 1;  // 4 x 1 tiles of 64 rows on 16 SMs: 32-row tiles
  p.N = 256;
  ASSERT_TRUE(cuda::select_kernel(step, t, &l, &why)) << why;
  EXPECT_STREQ(l.variant->name, "jp_gemm_f16_mma32_tt");
  EXPECT_EQ(l.grid[1], 7u);
  p.K = 768;  // 1 x 7 tiles on 16 SMs, 24 K tiles: split K in min(8, 24 / 4, 32 / 7) slices
  p.N = 64;
  ASSERT_TRUE(cuda::select_kernel(step, t, &l, &why)) << why;
  EXPECT_STREQ(l.variant->name, "jp_gemm_f16_mma32_splitk_tt");
  EXPECT_EQ(l.grid[2], 5u);
  EXPECT_TRUE(l.variant->zero_workspace);
  EXPECT_GT(l.workspace_bytes, 0u);
  step.dtype = DType::kInt8;
  EXPECT_FALSE(cuda::select_kernel(step, t, &l, &why));
}

}  // namespace
}  // namespace jetplan::kernels
