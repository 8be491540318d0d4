// Timings of the CUDA Gemm kernels on the ViT-B/16 batch-1 shapes and the ResNet-50 classifier
// (disabled: run with --gtest_also_run_disabled_tests --gtest_filter='*GemmBench*'). Each shape
// runs the selector's pick (marked *) and the plain mma variants, timed with driver events over
// repeated launches (gpu_test::mean_us); prints TFLOP/s.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

struct Shape {
  const char* name;
  int64_t batch, M, N, K;
  bool tb;
  bool bias;
  ActivationKind act;
};

TEST(GpuGemmBench, DISABLED_VitAndResnetShapes) {
  GPU_TEST_OR_SKIP();
  const Shape shapes[] = {
      {"vit qkv    [197,768]x[768,2304]", 1, 197, 2304, 768, false, true, ActivationKind::kNone},
      {"vit q.k^T  12x[197,64]x[64,197]", 12, 197, 197, 64, false, false, ActivationKind::kNone},
      {"vit q.k^T  12x[197,64]x[197,64]^T", 12, 197, 197, 64, true, false, ActivationKind::kNone},
      {"vit attn.v 12x[197,197]x[197,64]", 12, 197, 64, 197, false, false, ActivationKind::kNone},
      {"vit proj   [197,768]x[768,768]", 1, 197, 768, 768, false, true, ActivationKind::kNone},
      {"vit fc1    [197,768]x[768,3072]+gelu", 1, 197, 3072, 768, false, true, ActivationKind::kGelu},
      {"vit fc2    [197,3072]x[3072,768]", 1, 197, 768, 3072, false, true, ActivationKind::kNone},
      {"resnet fc  [1,2048]x[1000,2048]^T", 1, 1, 1000, 2048, true, true, ActivationKind::kNone},
      {"floor      [8,8]x[8,8] (launch cost)", 1, 8, 8, 8, false, false, ActivationKind::kNone},
      {"square     [2048,2048]x[2048,2048]", 1, 2048, 2048, 2048, false, false, ActivationKind::kNone},
  };
  std::printf("device: %s\n", gpu_test::device()->info.name);
  for (const Shape& s : shapes) {
    GemmParams p = test_util::gemm_shape(s.batch, s.M, s.N, s.K, false, s.tb);
    p.a_batch_stride = s.M * s.K;
    p.b_batch_stride = s.K * s.N;
    p.has_c = s.bias;
    p.c_stride_n = 1;
    p.act = Activation{s.act, 0.f, 0.f};
    DeviceBuffer da(s.batch * s.M * s.K * 2), db(s.batch * s.K * s.N * 2), dc(s.N * 2),
        dy(s.batch * s.M * s.N * 2);
    std::vector<uint16_t> ones(std::max(s.batch * s.M * s.K, s.batch * s.K * s.N), 0x2c00);  // 1/16
    da.upload(ones.data(), da.bytes());
    db.upload(ones.data(), db.bytes());
    dc.upload(ones.data(), dc.bytes());
    cuda::StepPointers ptrs = gpu_test::step_pointers({&da, &db, &dc}, dy);
    cuda::LaunchChoice l;
    ASSERT_EQ(gpu_test::select(uint16_t{2}, DType::kFloat16, p, &l), "");
    // The selector's pick, then the plain mma variants of both row tiles for comparison.
    std::vector<cuda::LaunchChoice> runs{l};
    const std::string picked = l.variant->name;
    if (picked.find("mma") != std::string::npos) {
      const std::string layout = picked.substr(picked.size() - 2);
      for (int bm : {64, 32}) {
        const std::string name = "jp_gemm_f16_mma" + std::to_string(bm) + "_" + layout;
        if (name == picked) continue;
        cuda::LaunchChoice o = l;
        o.variant = cuda::find_kernel_variant(name.c_str());
        o.grid[1] = static_cast<uint32_t>((s.M + bm - 1) / bm);
        o.grid[2] = static_cast<uint32_t>(std::min<int64_t>(s.batch, 65535));
        o.workspace_bytes = 0;
        runs.push_back(o);
      }
    }
    const auto ws = gpu_test::workspace_for(l, &ptrs, /*zeroed=*/true);
    for (const cuda::LaunchChoice& r : runs) {
      gpu_test::RepeatLaunch go;
      ASSERT_EQ(gpu_test::repeat_launch(r, ptrs, p, &go), "");
      const double us = gpu_test::mean_us(20, 200, go);
      ASSERT_GT(us, 0);
      const double flop = 2.0 * s.batch * s.M * s.N * s.K;
      std::printf("%-40s %-22s%s grid %ux%ux%u  %8.2f us  %7.2f TFLOP/s\n", s.name, r.variant->name,
                  &r == &runs[0] ? "*" : " ", r.grid[0], r.grid[1], r.grid[2], us,
                  flop / us * 1e-6);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
