// CUDA data movement (kernels/cuda/tensor.cu: Copy, Transpose, Concat, Slice, Gather) against
// the CPU twins (kernels/cpu/transform.cc, transpose.cc, slice.cc, gather.cc) on random bytes. Tolerance: none, bit-exact. Outputs
// poisoned, guards checked; shapes with odd extents, batch 1 and 8, every element size.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <numeric>

#include "kernels/kernels.h"
#include "tests/kernels/gpu/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
using test_util::Bytes;
using test_util::Shape;

constexpr uint16_t kConcat = 7, kCopy = 8, kTranspose = 19, kSlice = 20, kGather = 21;

Bytes download(const DeviceBuffer& b, size_t n) { return b.download<uint8_t>(n); }

// The first byte that differs, or -1.
int64_t first_difference(const Bytes& got, const Bytes& want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) return static_cast<int64_t>(i);
  return -1;
}

TEST(GpuCopy, MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (int64_t bytes : {1, 7, 16, 4099, 1000000}) {
    for (int64_t offset : {0, 2, 5}) {  // misaligned pointers take narrower units
      const Bytes x = rng.bytes(bytes);
      CopyParams p;
      p.bytes = bytes;
      DeviceBuffer dx(bytes + offset), dy(bytes + offset);
      Bytes xo(bytes + offset, 0);
      std::copy(x.begin(), x.end(), xo.begin() + offset);
      dx.upload(xo.data(), xo.size());
      dy.poison16(gpu_test::kHalfPoison);
      const Bytes before = download(dy, bytes + offset);
      cuda::StepPointers ptrs{};
      ptrs.in[0] = static_cast<uint8_t*>(dx.get()) + offset;
      ptrs.out[0] = static_cast<uint8_t*>(dy.get()) + offset;
      ASSERT_EQ(gpu_test::select_and_launch(kCopy, DType::kFloat16, ptrs, p), "");
      const Bytes got = download(dy, bytes + offset);
      EXPECT_EQ(first_difference(Bytes(got.begin() + offset, got.end()), x), -1)
          << "bytes " << bytes << " offset " << offset;
      EXPECT_TRUE(std::equal(got.begin(), got.begin() + offset, before.begin())) << "wrote before y";
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

TEST(GpuCopy, OverlappingRangesMoveLikeMemmove) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const int64_t n = 3001;
  for (int64_t shift : {-37, 37, 0}) {
    const Bytes x = rng.bytes(n + 64);
    DeviceBuffer d(n + 64);
    d.upload(x.data(), x.size());
    Bytes want = x;
    CopyParams p;
    p.bytes = n;
    const int64_t from = shift < 0 ? 40 : 0, to = from + shift;
    cpu::copy(p, want.data() + from, want.data() + to);
    cuda::StepPointers ptrs{};
    ptrs.in[0] = static_cast<uint8_t*>(d.get()) + from;
    ptrs.out[0] = static_cast<uint8_t*>(d.get()) + to;
    ASSERT_EQ(gpu_test::select_and_launch(kCopy, DType::kFloat16, ptrs, p), "");
    EXPECT_EQ(first_difference(download(d, n + 64), want), -1) << "shift " << shift;
  }
}

// y = x transposed by perm, x dense with shape dims.
TransposeParams transpose_params(const Shape& dims, const std::vector<int>& perm, int64_t elem) {
  TransposeParams p;
  p.rank = static_cast<int32_t>(dims.size());
  p.elem_bytes = elem;
  const Shape strides = test_util::dense_strides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    p.out_dims[d] = dims[size_t(perm[d])];
    p.x_strides[d] = strides[size_t(perm[d])];
  }
  return p;
}

struct TransposeCase {
  Shape dims;
  std::vector<int> perm;
  bool tiled;  // what selection should pick
};

TEST(GpuTranspose, MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const TransposeCase cases[] = {
      {{1, 3, 224, 224}, {0, 2, 3, 1}, true},   // NCHW -> NHWC, image input
      {{8, 67, 13, 11}, {0, 2, 3, 1}, true},    // odd everything, batch 8
      {{1, 13, 11, 67}, {0, 3, 1, 2}, true},    // NHWC -> NCHW
      {{8, 7, 7, 2048}, {0, 3, 1, 2}, true},
      {{33, 65}, {1, 0}, true},                 // a plain 2-D transpose
      {{2, 197, 12, 64}, {0, 2, 1, 3}, false},  // ViT heads split: generic
      {{2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}, false},
      {{5, 1, 9}, {1, 2, 0}, true},             // extent-1 dims drop out
      {{17}, {0}, false},
  };
  for (const TransposeCase& c : cases) {
    for (int64_t elem : {1, 2, 4, 8}) {
      const TransposeParams p = transpose_params(c.dims, c.perm, elem);
      const int64_t bytes = test_util::volume(c.dims) * elem;
      const Bytes x = rng.bytes(bytes);
      Bytes want(static_cast<size_t>(bytes));
      cpu::transpose(p, x.data(), want.data());
      DeviceBuffer dx(bytes), dy(bytes);
      dx.upload(x.data(), x.size());
      dy.poison16(gpu_test::kHalfPoison);
      cuda::StepPointers ptrs{};
      ptrs.in[0] = dx.get();
      ptrs.out[0] = dy.get();
      cuda::LaunchChoice chosen;
      ASSERT_EQ(gpu_test::select_and_launch(kTranspose, DType::kFloat16, ptrs, p, &chosen), "");
      EXPECT_EQ(std::string(chosen.variant->name).find("tiled") != std::string::npos, c.tiled)
          << chosen.variant->name << " for " << test_util::shape_str(c.dims);
      EXPECT_EQ(first_difference(download(dy, bytes), want), -1)
          << test_util::shape_str(c.dims) << " elem " << elem << " " << chosen.variant->name;
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

// A grid of one block still covers every tile (grid-stride), and a plan naming the tiled kernel
// for a permutation it does not handle still gets the right answer.
TEST(GpuTranspose, TiledKernelAnyGridAndAnyPermutation) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const TransposeCase& c : {TransposeCase{{2, 35, 9, 7}, {0, 2, 3, 1}, true},
                                 TransposeCase{{2, 3, 4, 5}, {3, 1, 0, 2}, false}}) {
    const TransposeParams p = transpose_params(c.dims, c.perm, 2);
    const int64_t bytes = test_util::volume(c.dims) * 2;
    const Bytes x = rng.bytes(bytes);
    Bytes want(static_cast<size_t>(bytes));
    cpu::transpose(p, x.data(), want.data());
    DeviceBuffer dx(bytes), dy(bytes);
    dx.upload(x.data(), x.size());
    dy.poison16(gpu_test::kHalfPoison);
    cuda::StepPointers ptrs{};
    ptrs.in[0] = dx.get();
    ptrs.out[0] = dy.get();
    cuda::LaunchChoice one;
    one.block[0] = 32;
    one.block[1] = 8;
    ASSERT_EQ(gpu_test::launch("jp_transpose_tiled_b2", one, ptrs, p), "");
    EXPECT_EQ(first_difference(download(dy, bytes), want), -1) << test_util::shape_str(c.dims);
    EXPECT_TRUE(dy.guard_intact());
  }
}

// The output cast fused into the layout transpose: FP16 in, FP32 out, bit for bit the CPU
// twin's conversion; the byte-moving variants refuse such params (y stays poisoned).
TEST(GpuTranspose, HalfToFloatMatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const TransposeCase cases[] = {
      {{1, 13, 11, 67}, {0, 3, 1, 2}, true},  // NHWC -> NCHW, the output transpose
      {{8, 7, 7, 2048}, {0, 3, 1, 2}, true},
      {{1, 1, 1, 1000}, {0, 3, 1, 2}, false},  // a classifier's output: extent-1 dims drop out
      {{2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}, false},
  };
  for (const TransposeCase& c : cases) {
    TransposeParams p = transpose_params(c.dims, c.perm, 2);
    p.half_to_float = true;
    const int64_t n = test_util::volume(c.dims);
    std::vector<float> xf = rng.uniform(n, -70000.f, 70000.f);  // past the half range: +-inf
    for (int64_t i = 0; i < n; i += 7) xf[size_t(i)] *= 1e-9f;  // subnormal halves
    const std::vector<uint16_t> xh = gpu_test::to_half(xf);
    Bytes want(static_cast<size_t>(n * 4));
    cpu::transpose(p, xh.data(), want.data());
    DeviceBuffer dx(n * 2), dy(n * 4);
    dx.upload(xh.data(), n * 2);
    dy.poison32(gpu_test::kFloatPoison);
    cuda::StepPointers ptrs{};
    ptrs.in[0] = dx.get();
    ptrs.out[0] = dy.get();
    cuda::LaunchChoice chosen;
    ASSERT_EQ(gpu_test::select_and_launch(kTranspose, DType::kFloat16, ptrs, p, &chosen), "");
    const std::string name = chosen.variant->name;
    EXPECT_EQ(name, c.tiled ? "jp_transpose_tiled_h2f" : "jp_transpose_h2f");
    EXPECT_EQ(first_difference(download(dy, n * 4), want), -1)
        << test_util::shape_str(c.dims) << " " << name;
    EXPECT_TRUE(dy.guard_intact());

    dy.poison32(gpu_test::kFloatPoison);
    ASSERT_EQ(gpu_test::launch(c.tiled ? "jp_transpose_tiled_b2" : "jp_transpose_b2", chosen, ptrs, p),
              "");
    const Bytes after = download(dy, n * 4);
    uint32_t first;
    std::memcpy(&first, after.data(), 4);
    EXPECT_EQ(first, gpu_test::kFloatPoison) << "a byte mover ran a converting transpose";
  }
}

TEST(GpuConcat, MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case {
    int64_t outer, inner;
    std::vector<int64_t> axis_len;
  };
  const Case cases[] = {
      {1, 56 * 56, {64, 64}},          // NCHW channel concat, batch 1
      {8 * 13 * 13, 1, {67, 3, 128}},  // NHWC channel concat: inner 1, odd lengths
      {8, 7, {3, 0, 5, 1}},            // an empty input (null pointer)
      {2, 16, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
      {1, 1, {1}},
  };
  for (const Case& c : cases) {
    for (int64_t elem : {1, 2, 4, 8}) {
      ConcatParams p;
      p.outer = c.outer;
      p.inner = c.inner;
      p.elem_bytes = elem;
      p.num_inputs = static_cast<int32_t>(c.axis_len.size());
      int64_t total = 0;
      std::vector<Bytes> inputs;
      std::vector<std::unique_ptr<DeviceBuffer>> dins;
      std::vector<const void*> host_ptrs;
      cuda::StepPointers ptrs{};
      for (size_t k = 0; k < c.axis_len.size(); ++k) {
        p.axis_len[k] = c.axis_len[k];
        total += c.axis_len[k];
        const int64_t bytes = c.outer * c.axis_len[k] * c.inner * elem;
        inputs.push_back(rng.bytes(bytes));
        host_ptrs.push_back(bytes > 0 ? inputs.back().data() : nullptr);
        if (bytes > 0) {
          dins.push_back(std::make_unique<DeviceBuffer>(bytes));
          dins.back()->upload(inputs.back().data(), bytes);
          ptrs.in[k] = dins.back()->get();
        }
      }
      const int64_t out_bytes = c.outer * total * c.inner * elem;
      Bytes want(static_cast<size_t>(out_bytes));
      cpu::concat(p, host_ptrs.data(), want.data());
      DeviceBuffer dy(out_bytes);
      dy.poison16(gpu_test::kHalfPoison);
      ptrs.out[0] = dy.get();
      ASSERT_EQ(gpu_test::select_and_launch(kConcat, DType::kFloat16, ptrs, p), "");
      EXPECT_EQ(first_difference(download(dy, out_bytes), want), -1)
          << "outer " << c.outer << " inner " << c.inner << " elem " << elem;
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

TEST(GpuSlice, MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape x, starts, steps, out; };
  const Case cases[] = {
      {{8, 13, 11, 67}, {0, 1, 2, 3}, {1, 2, 3, 1}, {8, 6, 3, 64}},  // strided, NHWC crop
      {{1, 197, 768}, {0, 0, 0}, {1, 1, 1}, {1, 1, 768}},            // ViT class token
      {{2, 9, 7}, {1, 8, 6}, {1, -2, -3}, {1, 5, 3}},                // negative steps
      {{5}, {4}, {-1}, {5}},
  };
  for (const Case& c : cases) {
    for (int64_t elem : {1, 2, 4, 8}) {
      SliceParams p;
      p.rank = static_cast<int32_t>(c.x.size());
      p.elem_bytes = elem;
      for (size_t d = 0; d < c.x.size(); ++d) {
        p.x_dims[d] = c.x[d];
        p.out_dims[d] = c.out[d];
        p.starts[d] = c.starts[d];
        p.steps[d] = c.steps[d];
      }
      const int64_t nx = test_util::volume(c.x) * elem, ny = test_util::volume(c.out) * elem;
      const Bytes x = rng.bytes(nx);
      Bytes want(static_cast<size_t>(ny));
      cpu::slice(p, x.data(), want.data());
      DeviceBuffer dx(nx), dy(ny);
      dx.upload(x.data(), x.size());
      dy.poison16(gpu_test::kHalfPoison);
      cuda::StepPointers ptrs{};
      ptrs.in[0] = dx.get();
      ptrs.out[0] = dy.get();
      ASSERT_EQ(gpu_test::select_and_launch(kSlice, DType::kFloat16, ptrs, p), "");
      EXPECT_EQ(first_difference(download(dy, ny), want), -1)
          << test_util::shape_str(c.x) << " elem " << elem;
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

TEST(GpuGather, MatchesCpuTwinBitExact) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { int64_t outer, axis_len, inner, num_indices; };
  const Case cases[] = {{1, 30522, 768, 17},  // token embedding
                        {8, 13, 3, 5},
                        {3, 7, 1, 40},
                        {1, 5, 9, 0}};
  for (const Case& c : cases) {
    for (int64_t elem : {2, 4}) {
      for (DType index_dtype : {DType::kInt64, DType::kInt32}) {
        GatherParams p;
        p.outer = c.outer;
        p.axis_len = c.axis_len;
        p.inner = c.inner;
        p.num_indices = c.num_indices;
        p.elem_bytes = elem;
        p.index_dtype = index_dtype;
        // In range, negative, and out of range both ways (zeros).
        std::vector<int64_t> idx(c.num_indices);
        for (int64_t j = 0; j < c.num_indices; ++j)
          idx[size_t(j)] = j % 5 == 4 ? (j % 2 ? c.axis_len + 3 : -c.axis_len - 1)
                                      : rng.integer(-c.axis_len, c.axis_len - 1);
        Bytes ib;
        if (index_dtype == DType::kInt64) {
          ib = test_util::to_bytes(idx);
        } else {
          std::vector<int32_t> i32(idx.begin(), idx.end());
          ib = test_util::to_bytes(i32);
        }
        const int64_t nx = c.outer * c.axis_len * c.inner * elem,
                      ny = c.outer * c.num_indices * c.inner * elem;
        const Bytes x = rng.bytes(nx);
        Bytes want(static_cast<size_t>(ny));
        cpu::gather(p, x.data(), ib.data(), want.data());
        DeviceBuffer dx(nx), di(ib.size() + 8), dy(ny);
        dx.upload(x.data(), x.size());
        if (!ib.empty()) di.upload(ib.data(), ib.size());
        dy.poison16(gpu_test::kHalfPoison);
        cuda::StepPointers ptrs{};
        ptrs.in[0] = dx.get();
        ptrs.in[1] = di.get();
        ptrs.out[0] = dy.get();
        ASSERT_EQ(gpu_test::select_and_launch(kGather, DType::kFloat16, ptrs, p), "");
        EXPECT_EQ(first_difference(download(dy, ny), want), -1)
            << c.outer << "x" << c.axis_len << "x" << c.inner << " elem " << elem;
        EXPECT_TRUE(dy.guard_intact());
      }
    }
  }
}

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
  cuda::StepPointers ptrs{};
  ptrs.in[0] = a.get();
  ptrs.out[0] = b.get();
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
