// CUDA data movement (kernels/cuda/copy.cu, transpose.cu, concat.cu, slice.cu, gather.cu) against
// the CPU twins (kernels/cpu/copy.cc, transpose.cc, concat.cc, slice.cc, gather.cc) on random bytes.
// Tolerance: none, bit-exact. Outputs poisoned, guards checked; shapes with odd extents, batch 1 and 8, every element size.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <numeric>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace gpu_test;
using namespace test_util;

constexpr uint16_t kCopy = static_cast<uint16_t>(OpFamilyId::kCopy);
constexpr uint16_t kTranspose = static_cast<uint16_t>(OpFamilyId::kTranspose);

// Timings of the hot data movers and of the ViT/CNN shapes of the other families of this
// engineer's kernels (one file, one event helper). Not a check: run with
// --gtest_also_run_disabled_tests --gtest_filter='*Timing*'. Prints microseconds per launch
// (the mean over 50 back-to-back launches after 5 warm-ups) and the bandwidth of the bytes
// moved once.
template <typename Params>
double time_us(uint16_t family, DType dtype, const cuda::StepPointers& ptrs, const Params& p,
               std::string* name) {
  cuda::LaunchChoice ch;
  if (!gpu_test::select(family, dtype, p, &ch).empty()) return -1;
  *name = ch.variant->name;
  gpu_test::RepeatLaunch go;
  if (!gpu_test::repeat_launch(ch, ptrs, p, &go).empty()) return -1;
  return gpu_test::mean_us(5, 50, go);
}

void report(const char* what, const std::string& name, double us, double bytes) {
  std::printf("[timing] %-44s %-26s %9.2f us  %7.1f GB/s\n", what, name.c_str(), us,
              bytes / (us * 1e3));
}

TEST(GpuTiming, DISABLED_Kernels) {
  GPU_TEST_OR_SKIP();
  DeviceBuffer a(64 << 20), b(64 << 20);  // contents do not matter for timing
  cuda::StepPointers ptrs = gpu_test::step_pointers({&a}, b);
  std::string name;
  for (const Shape& dims : {Shape{8, 64, 112, 112}, Shape{1, 3, 224, 224}, Shape{8, 256, 56, 56}}) {
    for (bool to_nhwc : {true, false}) {
      const TransposeParams p = transpose_params(dims, to_nhwc ? std::vector<int>{0, 2, 3, 1}
                                                               : std::vector<int>{0, 3, 1, 2}, 2);
      const double us = time_us(kTranspose, DType::kFloat16, ptrs, p, &name);
      report((std::string(to_nhwc ? "transpose NCHW->NHWC f16 " : "transpose NHWC->NCHW f16 ") +
              test_util::shape_str(dims)).c_str(), name, us, 4.0 * test_util::volume(dims));
    }
  }
  {
    CopyParams p;
    p.bytes = 8 * 64 * 112 * 112 * 2;
    report("copy 12.8 MB", "jp_copy", time_us(kCopy, DType::kFloat16, ptrs, p, &name), 2.0 * p.bytes);
  }
  {
    CastParams p;
    p.from = DType::kFloat32;
    p.to = DType::kFloat16;
    p.count = 8 * 3 * 224 * 224;
    report("cast f32->f16 8x3x224x224", "", time_us(uint16_t{28}, DType::kFloat32, ptrs, p, &name),
           6.0 * p.count);
  }
  {
    PoolParams p;  // ResNet stem max pool, NHWC, batch 8
    p.batch = 8;
    p.channels = 64;
    p.in_size[0] = p.in_size[1] = 112;
    p.out_size[0] = p.out_size[1] = 56;
    p.kernel[0] = p.kernel[1] = 3;
    p.stride[0] = p.stride[1] = 2;
    p.pad_begin[0] = p.pad_begin[1] = p.pad_end[0] = p.pad_end[1] = 1;
    p.channels_last = true;
    const double us = time_us(uint16_t{1}, DType::kFloat16, ptrs, p, &name);
    report("maxpool 3x3s2 NHWC f16 8x112x112x64", name, us, 2.0 * 8 * 64 * (112 * 112 + 56 * 56));
    PoolParams g;  // ResNet-50 head
    g.kind = PoolKind::kAverage;
    g.batch = 8;
    g.channels = 2048;
    g.in_size[0] = g.in_size[1] = g.kernel[0] = g.kernel[1] = 7;
    g.channels_last = true;
    const double ug = time_us(uint16_t{1}, DType::kFloat16, ptrs, g, &name);
    report("global avgpool NHWC f16 8x7x7x2048", name, ug, 2.0 * 8 * 2048 * 50);
  }
  {
    SoftmaxParams p;  // ViT-B attention probabilities, batch 8
    p.outer = 8 * 12 * 197;
    p.axis = 197;
    const double us = time_us(uint16_t{5}, DType::kFloat16, ptrs, p, &name);
    report("softmax f16 rows 18912x197", name, us, 4.0 * p.outer * p.axis);
  }
  {
    LayerNormParams p;  // ViT-B, batch 8
    p.outer = 8 * 197;
    p.inner = 768;
    p.has_bias = true;
    ptrs.in[1] = a.get();
    ptrs.in[2] = a.get();
    const double us = time_us(uint16_t{15}, DType::kFloat16, ptrs, p, &name);
    report("layernorm f16 1576x768", name, us, 4.0 * p.outer * p.inner);
  }
}

}  // namespace
}  // namespace jetplan::kernels
