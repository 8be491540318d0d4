// CUDA pooling (kernels/cuda/pool.cu) against its CPU twin (kernels/cpu/pool.cc): NHWC FP16
// (what GPU plans run) over a matrix of kernels, strides, pads, dilations and ceil-mode windows,
// NCHW FP32, and NHWC global average pooling. Tolerance: max is exact (it picks an input);
// average |got - want| <= 2e-3 * |want| + 1e-3 in FP16 (output rounding 2^-11 plus FP32 sums),
// 1e-5 relative in FP32. NaN never passes; outputs poisoned, guards checked.
// Also Reduce (kernels/cuda/reduce.cu, twin kernels/cpu/reduce.cc): max/min exact, the sums
// 2e-3 relative + 2e-3 in FP16, 1e-5 relative + 1e-5 in FP32 (FP32 sums of up to 3136 terms).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

constexpr uint16_t kPool = static_cast<uint16_t>(OpFamilyId::kPool);

struct PoolCase {
  int64_t batch, channels;
  int rank;
  int64_t in[3], kernel[3], stride[3], dilation[3], pad_begin[3], pad_end[3];
  bool ceil_mode;
};

PoolParams make_params(const PoolCase& c, PoolKind kind, bool include_pad, bool channels_last) {
  PoolParams p;
  p.kind = kind;
  test_util::set_window_dims(p, c.rank, c);
  p.batch = c.batch;
  p.channels = c.channels;
  p.count_include_pad = include_pad;
  p.channels_last = channels_last;
  for (int d = 0; d < c.rank; ++d) {
    p.pad_end[d] = c.pad_end[d];
    // ONNX output size, with the last window starting inside the input or the leading padding.
    const int64_t span = c.in[d] + c.pad_begin[d] + c.pad_end[d] - c.dilation[d] * (c.kernel[d] - 1) - 1;
    int64_t out = (c.ceil_mode ? (span + c.stride[d] - 1) / c.stride[d] : span / c.stride[d]) + 1;
    if ((out - 1) * c.stride[d] - c.pad_begin[d] >= c.in[d]) --out;
    p.out_size[d] = out;
  }
  return p;
}

int64_t plane(const PoolParams& p, bool out) {
  int64_t v = 1;
  for (int d = 0; d < p.spatial_rank; ++d) v *= out ? p.out_size[d] : p.in_size[d];
  return v;
}

// Runs one pool on the GPU (FP16 or FP32 storage) and compares with the twin.
void check(test_util::SeededRng& rng, const PoolParams& p, DType dtype, const char* want_kernel) {
  const bool f16 = dtype == DType::kFloat16;
  const int64_t nx = p.batch * p.channels * plane(p, false), ny = p.batch * p.channels * plane(p, true);
  std::vector<float> x = gpu_test::as_stored(rng.uniform(nx, -4.f, 4.f), f16);
  std::vector<float> want(ny);
  cpu::pool(p, x.data(), want.data());
  const gpu_test::FloatStepResult got = gpu_test::run_float_step(kPool, dtype, p, x, ny);
  ASSERT_EQ(got.status, "");
  EXPECT_STREQ(got.chosen.variant->name, want_kernel);
  const bool is_max = p.kind == PoolKind::kMax;
  const double rel = is_max ? 0 : (f16 ? 2e-3 : 1e-5), abs = is_max ? 0 : (f16 ? 1e-3 : 1e-6);
  ASSERT_TRUE(gpu_test::all_close(got.y, want, rel, abs))
      << "(kind " << int(p.kind) << " include_pad " << p.count_include_pad << ")";
  EXPECT_TRUE(got.guard_intact);
}

const PoolCase kCases[] = {
    // ResNet stem max pool 3x3 s2 p1 on 112x112 (cut to 29x31: odd), batch 1 and 8.
    {1, 64, 2, {29, 31}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false},
    {8, 67, 2, {13, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, false},
    {8, 24, 2, {15, 13}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true},  // 8-channel vectors
    {2, 48, 2, {12, 12}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}, false},  // SPPF: 16-channel Int8
    {2, 16, 3, {5, 6, 7}, {2, 3, 2}, {1, 2, 2}, {1, 1, 2}, {1, 0, 1}, {0, 1, 1}, true},
    // ceil mode with a window past pad_end, asymmetric pads, dilation.
    {2, 5, 2, {7, 6}, {3, 2}, {2, 2}, {2, 1}, {1, 0}, {0, 1}, true},
    {1, 3, 2, {9, 9}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, true},
    // 1-D and 3-D.
    {8, 33, 1, {17}, {4}, {3}, {1}, {2}, {1}, true},
    {1, 7, 3, {5, 6, 7}, {2, 3, 2}, {1, 2, 2}, {1, 1, 2}, {1, 0, 1}, {0, 1, 1}, false},
};

class GpuPool : public testing::TestWithParam<int> {};

TEST_P(GpuPool, ChannelsLastFloat16MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const PoolCase& c = kCases[GetParam()];
  const char* kernel = c.channels % 8 == 0 ? "jp_pool_nhwc8_f16" : "jp_pool_f16";
  check(rng, make_params(c, PoolKind::kMax, false, true), DType::kFloat16, kernel);
  check(rng, make_params(c, PoolKind::kAverage, false, true), DType::kFloat16, kernel);
  check(rng, make_params(c, PoolKind::kAverage, true, true), DType::kFloat16, kernel);
}

TEST_P(GpuPool, ChannelsFirstFloat32MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const PoolCase& c = kCases[GetParam()];
  check(rng, make_params(c, PoolKind::kMax, false, false), DType::kFloat32, "jp_pool_f32");
  check(rng, make_params(c, PoolKind::kAverage, true, false), DType::kFloat32, "jp_pool_f32");
}

// MaxPool's Indices output (NCHW, write_indices; row- and column-major within the plane) in
// FP16 and FP32 storage: the values exactly, the Int64 indices equal to the twin's pool() on
// the same (stored) values, ties included (integers in [-4, 4]: many equal maxima, the first
// taken); indices poisoned, guards checked.
TEST_P(GpuPool, MaxIndicesMatchCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const PoolCase& c = kCases[GetParam()];
  for (DType dtype : {DType::kFloat16, DType::kFloat32})
    for (bool column_major : {false, true}) {
      PoolParams p = make_params(c, PoolKind::kMax, false, false);
      p.write_indices = true;
      p.indices_column_major = column_major;
      const int64_t nx = p.batch * p.channels * plane(p, false),
                    ny = p.batch * p.channels * plane(p, true);
      std::vector<float> x = rng.integers(nx, -4, 4);
      std::vector<float> want(static_cast<size_t>(ny));
      std::vector<int64_t> want_i(static_cast<size_t>(ny));
      cpu::pool(p, x.data(), want.data(), want_i.data());
      const auto dx = gpu_test::to_device(x, dtype);
      gpu_test::DeviceBuffer dy(static_cast<size_t>(ny) * gpu_test::float_storage_bytes(dtype)),
          di(static_cast<size_t>(ny) * 8);
      gpu_test::poison(dy, dtype);
      di.poison16(0xA5A5);
      cuda::StepPointers ptrs{};
      ptrs.in[0] = dx->get();
      ptrs.out[0] = dy.get();
      ptrs.out[1] = di.get();
      cuda::LaunchChoice chosen;
      ASSERT_EQ(gpu_test::select_and_launch(kPool, dtype, ptrs, p, &chosen), "");
      EXPECT_STREQ(chosen.variant->name,
                   dtype == DType::kFloat16 ? "jp_pool_f16" : "jp_pool_f32");
      EXPECT_TRUE(gpu_test::all_close(gpu_test::download_floats(dy, want.size(), dtype), want, 0,
                                      0));
      EXPECT_EQ(di.download<int64_t>(want_i.size()), want_i)
          << "column_major " << column_major << " rank " << c.rank;
      EXPECT_TRUE(dy.guard_intact());
      EXPECT_TRUE(di.guard_intact());
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuPool, testing::Range(0, static_cast<int>(std::size(kCases))));

// Max of Int8 (an INT8 plan's pools between INT8 convs): bit for bit the twin
// (cpu::max_pool_int8), NHWC with 16 channels a thread where channels % 16 == 0, one element a
// thread otherwise and for NCHW; outputs poisoned (0x5a bytes), the guard checked.
TEST_P(GpuPool, MaxOfInt8MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const PoolCase& c = kCases[GetParam()];
  for (bool channels_last : {true, false}) {
    const PoolParams p = make_params(c, PoolKind::kMax, false, channels_last);
    const int64_t nx = p.batch * p.channels * plane(p, false), ny = p.batch * p.channels * plane(p, true);
    std::vector<uint8_t> x = rng.bytes(nx);
    std::vector<uint8_t> want(static_cast<size_t>(ny), 0x5a);
    cpu::max_pool_int8(p, reinterpret_cast<const int8_t*>(x.data()),
                       reinterpret_cast<int8_t*>(want.data()));
    gpu_test::ByteStep step(x, static_cast<size_t>(ny));
    cuda::LaunchChoice chosen;
    ASSERT_EQ(gpu_test::select_and_launch(kPool, DType::kInt8, step.ptrs, p, &chosen), "");
    EXPECT_STREQ(chosen.variant->name, "jp_pool_max_i8");
    EXPECT_EQ(step.first_difference(want), -1)
        << "channels_last " << channels_last << " channels " << c.channels;
    EXPECT_TRUE(step.dy.guard_intact());
  }
  // Average of Int8 would need a requantization: the selector refuses it.
  PoolParams avg = make_params(c, PoolKind::kAverage, false, true);
  gpu_test::ByteStep step(std::vector<uint8_t>(16), 16);
  EXPECT_NE(gpu_test::select_and_launch(kPool, DType::kInt8, step.ptrs, avg), "");
}

TEST(GpuPoolGlobal, AverageChannelsLastMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const PoolCase cases[] = {
      {1, 2048, 2, {7, 7}, {7, 7}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false},  // ResNet-50 head
      {8, 67, 2, {13, 11}, {13, 11}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false},
      {2, 5, 2, {56, 56}, {56, 56}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false},  // long reduction
      {3, 40, 1, {1}, {1}, {1}, {1}, {0}, {0}, false},
      {1, 32, 2, {112, 112}, {112, 112}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false},  // sliced
      {1, 96, 2, {56, 56}, {56, 56}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false},
      {2, 37, 2, {33, 31}, {33, 31}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false},
  };
  for (const PoolCase& c : cases) {
    check(rng, make_params(c, PoolKind::kAverage, false, true), DType::kFloat16,
          "jp_pool_global_avg_f16");
    check(rng, make_params(c, PoolKind::kAverage, false, true), DType::kFloat32,
          "jp_pool_global_avg_f32");
  }
}

// A small batch's global average runs in spatial slices that meet in the workspace: the selector
// slices EfficientNet's first squeeze (112x112x32 at batch 1), every launch gives the same bits
// (the counters reset themselves; the slices add in slice order), and a plan that gives the
// sliced launch too little workspace computes nothing rather than overrun it.
TEST(GpuPoolGlobal, SlicedAverageIsDeterministic) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const PoolCase c{1, 32, 2, {112, 112}, {112, 112}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false};
  const PoolParams p = make_params(c, PoolKind::kAverage, false, true);
  const int64_t nx = 112 * 112 * 32;
  const std::vector<float> x = gpu_test::round_half(rng.uniform(nx, -2.f, 2.f));
  const auto dx = gpu_test::to_device(x, DType::kFloat16);
  cuda::LaunchChoice chosen;
  ASSERT_EQ(gpu_test::select(kPool, DType::kFloat16, p, &chosen), "");
  EXPECT_GT(chosen.grid[1], 1u) << "not sliced";
  EXPECT_GT(chosen.workspace_bytes, 0u);
  gpu_test::DeviceBuffer ws(chosen.workspace_bytes);
  ws.zero();
  std::vector<uint16_t> first;
  for (int run = 0; run < 3; ++run) {
    gpu_test::DeviceBuffer dy(32 * 2);
    dy.poison16(gpu_test::kHalfPoison);
    cuda::StepPointers ptrs = gpu_test::step_pointers({dx.get()}, dy);
    ptrs.workspace = ws.get();
    ptrs.workspace_bytes = chosen.workspace_bytes;
    ASSERT_EQ(gpu_test::launch(chosen.variant->name, chosen, ptrs, p), "");
    const std::vector<uint16_t> got = dy.download<uint16_t>(32);
    if (run == 0) first = got;
    EXPECT_EQ(got, first) << "run " << run;
    EXPECT_TRUE(dy.guard_intact());
  }
  std::vector<float> want(32);
  cpu::pool(p, x.data(), want.data());
  EXPECT_TRUE(gpu_test::all_close_half(first, want, 2e-3, 2e-3));
  gpu_test::DeviceBuffer dy(32 * 2);
  dy.poison16(gpu_test::kHalfPoison);
  cuda::StepPointers short_ws = gpu_test::step_pointers({dx.get()}, dy);
  short_ws.workspace = ws.get();
  short_ws.workspace_bytes = chosen.workspace_bytes - 4;
  ASSERT_EQ(gpu_test::launch(chosen.variant->name, chosen, short_ws, p), "");
  EXPECT_EQ(dy.download<uint16_t>(32), std::vector<uint16_t>(32, gpu_test::kHalfPoison));
}

}  // namespace
}  // namespace jetplan::kernels
