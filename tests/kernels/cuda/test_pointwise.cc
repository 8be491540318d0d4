// CUDA Pointwise program kernels (kernels/cuda/pointwise.cu) against their CPU twin
// (kernels/cpu/pointwise.cc): fresh random inputs, poisoned outputs and guards, shapes
// with broadcasting, batch 1 and 8, odd sizes (the one-element and the four-element variants).
// Tolerance: FP16 storage: the twin in FP32 on the same FP16-rounded inputs, the GPU rounding
// its FP32 result once to FP16 (2^-11 relative) and using fast exp in activations:
// |got - want| <= 2e-3 * |want| + 2e-3. FP32 storage (fast exp against std::exp, through
// chains of up to 16 ops): |got - want| <= 1e-4 * |want| + 1e-4.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/pointwise_case.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
namespace cu = ::jetplan::rt::cu;
using pointwise_case::Case;
using test_util::Shape;

constexpr uint16_t kPointwise = static_cast<uint16_t>(OpFamilyId::kPointwise);

// Runs `c` on the GPU with `dtype` storage and on the twin; returns the chosen variant's name.
// `shifted`: every input one element past a 16-byte boundary (views into a larger buffer), so
// the eight-element kernel's 16-byte loads fall back to element loads.
std::string check_case(test_util::SeededRng& rng, const Case& c, DType dtype,
                       bool shifted = false) {
  const Shape out = pointwise_case::out_shape(c);
  SCOPED_TRACE(std::string(c.what) + " out " + test_util::shape_str(out) +
               (dtype == DType::kFloat16 ? " f16" : " f32"));
  const bool f16 = dtype == DType::kFloat16;
  std::vector<std::vector<float>> in = pointwise_case::random_inputs(rng, c);
  if (f16)
    for (std::vector<float>& v : in) v = gpu_test::round_half(v);
  const PointwiseParams p = pointwise_case::params_of(c);
  const int64_t n = test_util::volume(out);
  std::vector<float> want(static_cast<size_t>(n));
  const void* host[kMaxPointwiseInputs] = {};
  for (size_t k = 0; k < in.size(); ++k) host[k] = in[k].data();
  cpu::pointwise_chain(p, DType::kFloat32, host, want.data());

  std::vector<std::unique_ptr<DeviceBuffer>> dev;
  cuda::StepPointers ptrs{};
  for (size_t k = 0; k < in.size(); ++k) {
    std::vector<float> v = in[k];
    if (shifted) v.insert(v.begin(), 0.f);
    dev.push_back(gpu_test::to_device(v, dtype));
    ptrs.in[k] = static_cast<const char*>(dev.back()->get()) +
                 (shifted ? gpu_test::float_storage_bytes(dtype) : 0);
  }
  DeviceBuffer dy(static_cast<size_t>(n) * gpu_test::float_storage_bytes(dtype));
  gpu_test::poison(dy, dtype);
  ptrs.out[0] = dy.get();
  cuda::LaunchChoice choice;
  const std::string status = gpu_test::select_and_launch(kPointwise, dtype, ptrs, p, &choice);
  EXPECT_EQ(status, "");
  if (!status.empty()) return "";
  const double rel = f16 ? 2e-3 : 1e-4, abs = f16 ? 2e-3 : 1e-4;
  EXPECT_TRUE(gpu_test::all_close(gpu_test::download_floats(dy, size_t(n), dtype), want, rel, abs));
  EXPECT_TRUE(dy.guard_intact());
  // The eight-element kernel's shared memory: a slot per register read later than by the next
  // instruction.
  if (std::string(choice.variant->name) == "jp_pointwise_chain_f16_x8") {
    EXPECT_EQ(choice.shared_bytes,
              static_cast<uint32_t>(__builtin_popcount(pointwise_spilled(p))) * kPointwiseSlotBytes);
  }
  return choice.variant->name;
}

TEST(GpuPointwiseChain, ConverterChainsMatchCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
    for (int64_t batch : {1, 8}) {
      check_case(rng, pointwise_case::gelu_chain({batch, 197, 768}), dtype);
      check_case(rng, pointwise_case::sigmoid_gate(batch, 96, 28, 28), dtype);
      check_case(rng, pointwise_case::sigmoid_gate(batch, 3, 7, 5), dtype);  // odd
      check_case(rng, pointwise_case::channel_affine(batch, 64, 14, 14), dtype);
      check_case(rng, pointwise_case::channel_affine(batch, 5, 3, 3), dtype);
    }
    check_case(rng, pointwise_case::gelu_chain({}), dtype);  // one element
    check_case(rng, pointwise_case::gelu_chain({1, 1, 4}), dtype);
  }
}

// Every variant is chosen: 8 elements per thread (Float16) or 4 when the innermost dim allows,
// else 1.
TEST(GpuPointwiseChain, VariantFollowsInnermostDim) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  EXPECT_EQ(check_case(rng, pointwise_case::gelu_chain({8, 33}), DType::kFloat16),
            "jp_pointwise_chain_f16");
  EXPECT_EQ(check_case(rng, pointwise_case::gelu_chain({8, 36}), DType::kFloat16),
            "jp_pointwise_chain_f16_x4");
  EXPECT_EQ(check_case(rng, pointwise_case::gelu_chain({8, 32}), DType::kFloat16),
            "jp_pointwise_chain_f16_x8");
  EXPECT_EQ(check_case(rng, pointwise_case::gelu_chain({8, 33}), DType::kFloat32),
            "jp_pointwise_chain_f32");
  EXPECT_EQ(check_case(rng, pointwise_case::gelu_chain({3, 8}), DType::kFloat32),
            "jp_pointwise_chain_f32_x4");
}

// The eight-element kernel on random programs over shapes whose innermost dim is a multiple of
// 8 (inputs that broadcast along it, along other dims, or not at all), with its inputs aligned
// (16-byte loads) and shifted off the 16-byte boundary (element loads); and ConvNeXt's layer
// scale and residual, scale[c] * y + x over [N, H, W, C].
TEST(GpuPointwiseChain, EightElementKernelMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 40; ++trial) {
    Shape out = rng.shape(static_cast<size_t>(rng.integer(1, 4)), 1, 9);
    out.back() = 8 * rng.integer(1, 6);
    const int inputs = static_cast<int>(rng.integer(1, kMaxPointwiseInputs));
    const int instrs = static_cast<int>(rng.integer(inputs, kMaxPointwiseInstrs));
    EXPECT_EQ(check_case(rng, pointwise_case::random_chain(rng, out, inputs, instrs),
                         DType::kFloat16, trial % 4 == 3),
              "jp_pointwise_chain_f16_x8");
  }
  EXPECT_EQ(check_case(rng, pointwise_case::layer_scale(8, 56, 56, 96), DType::kFloat16),
            "jp_pointwise_chain_f16_x8");
}

TEST(GpuPointwiseChain, RandomProgramsMatchCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 40; ++trial) {
    const Shape out = rng.shape(static_cast<size_t>(rng.integer(1, 5)), 1, 12);
    const int inputs = static_cast<int>(rng.integer(1, kMaxPointwiseInputs));
    const int instrs = static_cast<int>(rng.integer(inputs, kMaxPointwiseInstrs));
    check_case(rng, pointwise_case::random_chain(rng, out, inputs, instrs),
               trial % 2 ? DType::kFloat32 : DType::kFloat16);
  }
}


// Timings (disabled: --gtest_also_run_disabled_tests --gtest_filter='*PointwiseChainBench*'):
// the fused program against the same chain as one standalone kernel per op (Binary, Unary,
// Activation) with FP16 intermediates in memory, as the unfused plan runs it. Driver events
// over 200 launches after 20 warm-up launches (gpu_test::mean_us); prints microseconds per chain.
// A selected FP16 launch, ready to repeat without synchronizing.
template <typename Params>
gpu_test::RepeatLaunch prepare_launch(uint16_t family, const cuda::StepPointers& ptrs,
                                      const Params& p) {
  gpu_test::RepeatLaunch l;
  cuda::LaunchChoice choice;
  const std::string why = gpu_test::select(family, DType::kFloat16, p, &choice);
  EXPECT_EQ(why, "");
  if (why.empty()) {
    EXPECT_EQ(gpu_test::repeat_launch(choice, ptrs, p, &l), "");
  }
  return l;
}

TEST(GpuPointwiseChainBench, DISABLED_FusedAgainstOneKernelPerOp) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case cases[] = {pointwise_case::gelu_chain({1, 197, 3072}),
                        pointwise_case::gelu_chain({8, 197, 3072}),
                        pointwise_case::sigmoid_gate(1, 96, 56, 56),
                        pointwise_case::sigmoid_gate(8, 96, 56, 56),
                        pointwise_case::channel_affine(8, 64, 56, 56),
                        pointwise_case::layer_scale(8, 56, 56, 96)};
  for (const Case& c : cases) {
    const Shape out = pointwise_case::out_shape(c);
    const int64_t n = test_util::volume(out);
    std::vector<std::unique_ptr<DeviceBuffer>> in;
    for (const Shape& s : c.inputs) {
      in.push_back(std::make_unique<DeviceBuffer>(test_util::volume(s) * 2));
      in.back()->upload(gpu_test::to_half(rng.uniform(test_util::volume(s), -1.f, 1.f)).data(),
                        test_util::volume(s) * 2);
    }
    // Fused.
    DeviceBuffer dy(n * 2);
    cuda::StepPointers ptrs{};
    for (size_t k = 0; k < in.size(); ++k) ptrs.in[k] = in[k]->get();
    ptrs.out[0] = dy.get();
    const PointwiseParams params = pointwise_case::params_of(c);
    gpu_test::RepeatLaunch fused = prepare_launch(kPointwise, ptrs, params);
    const double fused_us = gpu_test::mean_us(20, 200, fused);
    // The four-element kernel on the same chain, where the eight-element one was selected.
    double x4_us = 0.0;
    if (std::string(fused.choice.variant->name) == "jp_pointwise_chain_f16_x8") {
      cuda::LaunchChoice x4 = fused.choice;
      x4.variant = cuda::find_kernel_variant("jp_pointwise_chain_f16_x4");
      x4.shared_bytes = 0;
      cuda::launch_1d(static_cast<uint64_t>(n + 3) / 4, 128,
                      gpu_test::device_target().sm_count * 16, &x4);
      gpu_test::RepeatLaunch l;
      EXPECT_EQ(gpu_test::repeat_launch(x4, ptrs, params, &l), "");
      x4_us = gpu_test::mean_us(20, 200, l);
    }
    // One kernel per op: register r lives in input buffer (loads) or its own [out] buffer.
    std::vector<std::unique_ptr<DeviceBuffer>> regs;
    std::vector<const void*> where(c.program.size());
    std::vector<Shape> shape(c.program.size());
    std::vector<gpu_test::RepeatLaunch> ops;
    for (size_t r = 0; r < c.program.size(); ++r) {
      const PointwiseInstr& i = c.program[r];
      if (i.kind == PointwiseInstrKind::kLoad) {
        where[r] = in[i.op]->get();
        shape[r] = c.inputs[i.op];
        continue;
      }
      regs.push_back(std::make_unique<DeviceBuffer>(n * 2));
      where[r] = regs.back()->get();
      shape[r] = out;
      cuda::StepPointers q{};
      q.in[0] = where[i.a];
      q.in[1] = where[i.b];
      q.out[0] = regs.back()->get();
      if (i.kind == PointwiseInstrKind::kBinary) {
        BinaryParams p;
        p.op = static_cast<BinaryOp>(i.op);
        p.rank = static_cast<int32_t>(out.size());
        for (size_t d = 0; d < out.size(); ++d) p.out_dims[d] = out[d];
        test_util::broadcast_strides(shape[i.a], out, p.a_strides);
        test_util::broadcast_strides(shape[i.b], out, p.b_strides);
        ops.push_back(prepare_launch(3, q, p));
      } else if (i.kind == PointwiseInstrKind::kUnary) {
        UnaryParams p;
        p.op = static_cast<UnaryOp>(i.op);
        p.dtype = DType::kFloat16;
        p.count = n;
        ops.push_back(prepare_launch(25, q, p));
      } else {
        ActivationParams p;
        p.count = n;
        p.act = i.act;
        ops.push_back(prepare_launch(4, q, p));
      }
    }
    const double split_us = gpu_test::mean_us(20, 200, [&] {
      for (gpu_test::RepeatLaunch& l : ops)
        if (const cu::CUresult r = l(); r != cu::kSuccess) return r;
      return cu::kSuccess;
    });
    int64_t bytes = n * 2;
    for (const Shape& s : c.inputs) bytes += test_util::volume(s) * 2;
    std::printf("%-34s out %-18s fused %8.1f us (%6.0f GB/s, %s)  %zu kernels %8.1f us  x%.2f",
                c.what, test_util::shape_str(out).c_str(), fused_us, bytes / fused_us * 1e-3,
                fused.choice.variant->name, ops.size(), split_us, split_us / fused_us);
    if (x4_us > 0.0) std::printf("  x4 kernel %8.1f us (x8/x4 %.3f)", x4_us, fused_us / x4_us);
    std::printf("\n");
  }
}

}  // namespace
}  // namespace jetplan::kernels
