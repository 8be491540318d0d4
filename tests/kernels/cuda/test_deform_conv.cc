// CUDA DeformConv (kernels/cuda/deform_conv.cu) against its CPU twin (kernels/cpu/deform_conv.cc)
// on fresh random inputs: offsets of a few pixels either way (taps in, across and outside x),
// masks, bias, groups and offset groups, tiles whole and partial, Float32 and Float16 storage.
// Both sample through deform_conv_tap and deform_conv_sample and sum in K order; the GPU fuses each product into its sum
// (fmaf), so float32 agrees within 1e-5 * |y| + 1e-5 * sqrt(K); Float16 tensors (the twin fed the
// same rounded values) within one rounding of y: 2e-3 * |y| + 1e-3 * sqrt(K). y poisoned (NaN
// never passes), guards checked.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kDeformConv = static_cast<uint16_t>(OpFamilyId::kDeformConv);

struct Case {
  test_util::DeformConvShape shape;
  bool bias, mask;
};

TEST(GpuDeformConv, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case cases[] = {{{1, 8, 12, 10, 16, 3, 3, 1, 1, 1, 1, 1}, true, true},
                        {{2, 6, 9, 11, 4, 3, 2, 2, 0, 1, 2, 3}, false, true},
                        {{1, 16, 20, 20, 72, 3, 3, 1, 2, 2, 4, 2}, true, false},
                        {{1, 64, 17, 15, 130, 3, 3, 1, 1, 1, 1, 4}, true, true}};
  for (const Case& cs : cases) {
    const test_util::DeformConvShape& c = cs.shape;
    for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
      DeformConvParams p = test_util::deform_conv_params(c);
      p.dtype = dtype;
      p.has_bias = cs.bias;
      p.has_mask = cs.mask;
      const int64_t taps = c.kh * c.kw, plane = p.out_h * p.out_w, K = deform_conv_k(p);
      std::vector<float> x = rng.uniform(c.n * c.c * c.h * c.w, -1.f, 1.f);
      std::vector<float> w = rng.uniform(c.cout * K, -1.f, 1.f);
      std::vector<float> off = rng.uniform(c.n * c.offset_groups * taps * 2 * plane, -3.f, 3.f);
      std::vector<float> b = rng.uniform(c.cout, -1.f, 1.f);
      std::vector<float> mask = rng.uniform(c.n * c.offset_groups * taps * plane, 0.f, 1.f);
      if (dtype == DType::kFloat16)  // the twin reads what the GPU reads
        for (std::vector<float>* v : {&x, &w, &off, &b, &mask}) *v = gpu_test::round_half(*v);
      const int64_t ny = c.n * c.cout * plane;
      std::vector<float> want(static_cast<size_t>(ny));
      cpu::deform_conv(p, x.data(), w.data(), off.data(), b.data(), mask.data(), want.data());
      const auto dx = gpu_test::to_device(x, dtype), dw = gpu_test::to_device(w, dtype);
      const auto doff = gpu_test::to_device(off, dtype), db = gpu_test::to_device(b, dtype);
      const auto dm = gpu_test::to_device(mask, dtype);
      DeviceBuffer dy(size_t(ny) * (dtype == DType::kFloat16 ? 2 : 4));
      gpu_test::poison(dy, dtype);
      std::vector<const DeviceBuffer*> in = {dx.get(), dw.get(), doff.get()};
      if (cs.bias) in.push_back(db.get());
      if (cs.mask) in.push_back(dm.get());
      cuda::StepPointers ptrs{};
      for (size_t i = 0; i < in.size(); ++i) ptrs.in[i] = in[i]->get();
      ptrs.out[0] = dy.get();
      ASSERT_EQ(gpu_test::select_and_launch(kDeformConv, dtype, ptrs, p), "");
      const std::vector<float> got = gpu_test::download_floats(dy, size_t(ny), dtype);
      const double rel = dtype == DType::kFloat16 ? 2e-3 : 1e-5;
      const double abs = (dtype == DType::kFloat16 ? 1e-3 : 1e-5) * std::sqrt(double(K));
      EXPECT_TRUE(gpu_test::all_close(got, want, rel, abs))
          << c.c << "->" << c.cout << (dtype == DType::kFloat16 ? " float16" : " float32");
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

TEST(GpuDeformConvSelect, TilesAndDtypes) {
  DeformConvParams p;
  p.batch = 2;
  p.groups = 2;
  p.in_channels = 8;
  p.out_channels = 130;
  p.out_h = 9;
  p.out_w = 10;
  cuda::LaunchChoice c;
  std::string why;
  const cuda::TargetInfo t = gpu_test::target_with(16);
  p.dtype = DType::kFloat16;
  ASSERT_TRUE(cuda::select_kernel(gpu_test::step_of(kDeformConv, &p, DType::kFloat16), t, &c, &why))
      << why;
  EXPECT_STREQ(c.variant->name, "jp_deform_conv_f16");
  EXPECT_EQ(c.grid[0], 2u);  // 90 pixels in tiles of 64
  EXPECT_EQ(c.grid[1], 2u);  // 65 channels a group
  EXPECT_EQ(c.grid[2], 4u);  // images times groups
  EXPECT_EQ(c.block[0], 256u);
  p.dtype = DType::kFloat64;
  EXPECT_FALSE(cuda::select_kernel(gpu_test::step_of(kDeformConv, &p, DType::kFloat64), t, &c, &why));
  EXPECT_NE(why.find("Float32 or Float16"), std::string::npos) << why;
}

}  // namespace
}  // namespace jetplan::kernels
