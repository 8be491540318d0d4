// CUDA Elementwise, Where, Broadcast and Pad kernels (kernels/cuda/elementwise.cu) against their
// CPU twins (kernels/cpu/elementwise.cc, where.cc, broadcast.cc, pad.cc) on fresh random inputs
// with broadcasting, odd shapes, every dtype and element size, outputs poisoned and guards
// checked. Tolerance: none, every output is compared bit for bit (integer arithmetic, exact
// comparisons, fmod is exact in IEEE arithmetic, and the rest moves bytes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "tests/kernels/gpu/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
using test_util::Bytes;
using test_util::Shape;

constexpr uint16_t kPad = 23, kBroadcast = 24, kElementwise = 26, kWhere = 27;

// Uploads `inputs`, poisons an output of `out_bytes`, selects and launches; returns the output
// (and fails the test if the launch fails or the guard is hit).
template <typename Params>
Bytes run_gpu(uint16_t family, DType dt, const Params& p, const std::vector<Bytes>& inputs,
              size_t out_bytes) {
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  cuda::StepPointers ptrs{};
  for (size_t i = 0; i < inputs.size(); ++i) {
    bufs.push_back(std::make_unique<DeviceBuffer>(inputs[i].size()));
    bufs.back()->upload(inputs[i].data(), inputs[i].size());
    ptrs.in[i] = bufs.back()->get();
  }
  DeviceBuffer dy(out_bytes);
  Bytes fill(out_bytes, 0xEE);
  dy.upload(fill.data(), out_bytes);
  ptrs.out[0] = dy.get();
  EXPECT_EQ(gpu_test::select_and_launch(family, dt, ptrs, p), "");
  EXPECT_TRUE(dy.guard_intact());
  return dy.download<uint8_t>(out_bytes);
}

// Random values of dtype `dt`: small integers (many ties, zeros and -1 divisors) and the edges.
Bytes values(test_util::SeededRng& rng, DType dt, int64_t n) {
  Bytes out(static_cast<size_t>(n * dtype_bytes(dt)));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = rng.integer(-9, 9);
    unsigned char* dst = out.data() + i * dtype_bytes(dt);
    switch (dt) {
      case DType::kFloat32: { float f = static_cast<float>(v) * 0.75f; std::memcpy(dst, &f, 4); break; }
      case DType::kFloat64: { double f = static_cast<double>(v) * 0.75; std::memcpy(dst, &f, 8); break; }
      case DType::kFloat16: { uint16_t h = half_from_float(static_cast<float>(v) * 0.75f); std::memcpy(dst, &h, 2); break; }
      case DType::kInt8: { int8_t t = static_cast<int8_t>(i % 17 == 3 ? -128 : v); std::memcpy(dst, &t, 1); break; }
      case DType::kUInt8: { uint8_t t = static_cast<uint8_t>(v + 9); std::memcpy(dst, &t, 1); break; }
      case DType::kInt32: { int32_t t = static_cast<int32_t>(i % 17 == 3 ? INT32_MIN : (i % 19 == 4 ? 2000000011 : v)); std::memcpy(dst, &t, 4); break; }
      case DType::kInt64: { int64_t t = i % 17 == 3 ? INT64_MIN : (i % 19 == 4 ? int64_t{1} << 40 : v); std::memcpy(dst, &t, 8); break; }
      case DType::kBool: { uint8_t t = static_cast<uint8_t>(v < 0 ? 0 : v * 13); std::memcpy(dst, &t, 1); break; }
      case DType::kInt16:
      case DType::kUInt16:
      case DType::kUInt32:
      case DType::kUInt64:
      case DType::kBFloat16: ADD_FAILURE() << "no CUDA kernel takes dtype " << int(dt); break;
    }
  }
  return out;
}

// Float fmod by 0 is a NaN whose payload is the platform's: where both are NaN, the GPU's
// bytes are made the twin's (every other element must match bit for bit).
void same_nans(DType dt, Bytes& got, const Bytes& want) {
  const size_t eb = static_cast<size_t>(dtype_bytes(dt));
  for (size_t i = 0; i + eb <= want.size(); i += eb) {
    bool g, w;
    if (eb == 4) {
      float x, y;
      std::memcpy(&x, &got[i], 4), std::memcpy(&y, &want[i], 4);
      g = std::isnan(x), w = std::isnan(y);
    } else {
      double x, y;
      std::memcpy(&x, &got[i], 8), std::memcpy(&y, &want[i], 8);
      g = std::isnan(x), w = std::isnan(y);
    }
    if (g && w) std::memcpy(&got[i], &want[i], eb);
  }
}

struct Pair { Shape a, b; };
const Pair kPairs[] = {{{2, 3, 5, 7}, {2, 3, 5, 7}}, {{8, 1, 5}, {1, 6, 1}}, {{1}, {33}},
                       {{3, 1, 7}, {7}}, {{1, 129, 3}, {1, 1, 1}}};

TEST(GpuElementwise, EveryOpAndDTypeMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const DType dtypes[] = {DType::kFloat32, DType::kFloat16, DType::kInt8, DType::kUInt8,
                          DType::kInt32, DType::kInt64, DType::kBool, DType::kFloat64};
  int checked = 0;
  for (int o = 0; o < kElementwiseOpCount; ++o) {
    const auto op = static_cast<ElementwiseOp>(o);
    for (DType dt : dtypes) {
      if (!elementwise_supported(op, dt) && !(dt == DType::kFloat16 && elementwise_is_comparison(op)))
        continue;
      // Float64 arithmetic but FMod is CPU only (the runtime refuses it in CUDA plans).
      if (dt == DType::kFloat64 && !elementwise_is_comparison(op) && op != ElementwiseOp::kFMod)
        continue;
      for (const Pair& c : kPairs) {
        const Shape out = test_util::broadcast_shapes({c.a, c.b});
        ElementwiseParams p;
        p.op = op;
        p.dtype = dt;
        p.rank = static_cast<int32_t>(out.size());
        for (size_t d = 0; d < out.size(); ++d) p.out_dims[d] = out[d];
        test_util::broadcast_strides(c.a, out, p.a_strides);
        test_util::broadcast_strides(c.b, out, p.b_strides);
        const Bytes a = values(rng, dt, test_util::volume(c.a));
        const Bytes b = values(rng, dt, test_util::volume(c.b));
        const int64_t n = test_util::volume(out);
        Bytes want(static_cast<size_t>(n * dtype_bytes(elementwise_out_dtype(op, dt))));
        cpu::elementwise(p, a.data(), b.data(), want.data());
        Bytes got = run_gpu(kElementwise, dt, p, {a, b}, want.size());
        if (op == ElementwiseOp::kFMod) same_nans(dt, got, want);
        EXPECT_EQ(got, want) << "op " << o << " dtype " << int(dt) << " "
                             << test_util::shape_str(c.a) << " x " << test_util::shape_str(c.b);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(GpuWhere, EveryElementSizeMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape c, x, y; };
  const Case cases[] = {{{2, 3, 5}, {2, 3, 5}, {2, 3, 5}}, {{8, 1, 7}, {1, 5, 7}, {7}},
                        {{1}, {3, 33}, {1}}, {{1, 1, 9}, {4, 1, 1}, {1, 3, 1}}};
  for (int64_t elem : {1, 2, 4, 8, 3}) {
    for (const Case& c : cases) {
      const Shape out = test_util::broadcast_shapes({c.c, c.x, c.y});
      WhereParams p;
      p.rank = static_cast<int32_t>(out.size());
      p.elem_bytes = elem;
      for (size_t d = 0; d < out.size(); ++d) p.out_dims[d] = out[d];
      test_util::broadcast_strides(c.c, out, p.cond_strides);
      test_util::broadcast_strides(c.x, out, p.x_strides);
      test_util::broadcast_strides(c.y, out, p.y_strides);
      Bytes cond = rng.bytes(test_util::volume(c.c));
      for (size_t i = 0; i < cond.size(); i += 2) cond[i] = 0;
      const Bytes x = rng.bytes(test_util::volume(c.x) * elem);
      const Bytes y = rng.bytes(test_util::volume(c.y) * elem);
      Bytes want(static_cast<size_t>(test_util::volume(out) * elem));
      cpu::where(p, cond.data(), x.data(), y.data(), want.data());
      EXPECT_EQ(run_gpu(kWhere, DType::kFloat16, p, {cond, x, y}, want.size()), want)
          << "elem " << elem << " out " << test_util::shape_str(out);
    }
  }
}

TEST(GpuBroadcast, ExpandAndTileMatchCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape x, y; bool tile; };
  const Case cases[] = {{{1, 64}, {8, 7, 64}, false}, {{3, 1, 5}, {3, 9, 5}, false},
                        {{1}, {1001}, false},          {{2, 3}, {4, 9}, true},
                        {{1, 3, 1, 5}, {8, 6, 3, 5}, true}, {{7}, {7}, false}};
  for (int64_t elem : {1, 2, 4, 8, 6}) {
    for (const Case& c : cases) {
      BroadcastParams p;
      p.rank = static_cast<int32_t>(c.y.size());
      p.elem_bytes = elem;
      int64_t stride = 1;
      for (int32_t d = p.rank - 1; d >= 0; --d) {  // as the runtime's prepare_broadcast
        const int32_t xd = d - (p.rank - static_cast<int32_t>(c.x.size()));
        const int64_t dim = xd >= 0 ? c.x[xd] : 1;
        p.out_dims[d] = c.y[d];
        p.x_dims[d] = dim;
        p.x_strides[d] = stride;
        stride *= dim;
      }
      const Bytes x = rng.bytes(test_util::volume(c.x) * elem);
      Bytes want(static_cast<size_t>(test_util::volume(c.y) * elem));
      cpu::broadcast(p, x.data(), want.data());
      EXPECT_EQ(run_gpu(kBroadcast, DType::kFloat16, p, {x}, want.size()), want)
          << "elem " << elem << " " << test_util::shape_str(c.x) << " -> "
          << test_util::shape_str(c.y) << (c.tile ? " tile" : "");
    }
  }
}

TEST(GpuPad, EveryModeMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape x; Shape begin, end; };
  const Case cases[] = {{{1, 3, 5, 7}, {0, 0, 1, 1}, {0, 0, 1, 1}},
                        {{8, 5, 9, 3}, {0, 1, 2, 0}, {0, 2, 3, 0}},
                        {{2, 17}, {0, 5}, {0, 11}},
                        {{3, 7, 6}, {1, -2, 3}, {0, 2, -1}},
                        {{1, 1, 4, 4}, {0, 0, 3, 3}, {0, 0, 3, 3}}};
  for (int m = 0; m < kPadModeCount; ++m) {
    for (int64_t elem : {2, 4, 1, 8}) {
      for (const Case& c : cases) {
        PadParams p;
        p.mode = static_cast<PadMode>(m);
        p.rank = static_cast<int32_t>(c.x.size());
        p.elem_bytes = elem;
        Shape out(c.x.size());
        for (size_t d = 0; d < c.x.size(); ++d) {
          out[d] = c.x[d] + c.begin[d] + c.end[d];
          p.x_dims[d] = c.x[d];
          p.out_dims[d] = out[d];
          p.pads_begin[d] = c.begin[d];
        }
        const Bytes v = rng.bytes(8);
        std::memcpy(p.value, v.data(), 8);
        const Bytes x = rng.bytes(test_util::volume(c.x) * elem);
        Bytes want(static_cast<size_t>(test_util::volume(out) * elem));
        cpu::pad(p, x.data(), want.data());
        EXPECT_EQ(run_gpu(kPad, DType::kFloat16, p, {x}, want.size()), want)
            << "mode " << m << " elem " << elem << " " << test_util::shape_str(c.x);
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
