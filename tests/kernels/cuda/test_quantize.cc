// CUDA QuantizeLinear (kernels/cuda/quantize.cu) against the CPU twin (cpu::quantize_linear) bit
// for bit: Float16 and Float32 x (the twin reads the same values as float32), Int8 and UInt8 y,
// per tensor and per axis, with and without a zero point, values spread past the saturation
// points plus ties, NaN and infinities. y is poisoned (0xA5 / 0x5A) and its guard checked.
// DequantizeLinear (kernels/cuda/dequantize.cu) against cpu::dequantize_linear: Float32 y bit for
// bit, Float16 y the twin's float rounded to nearest even, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
constexpr uint16_t kQuantize = static_cast<uint16_t>(OpFamilyId::kQuantize);
constexpr uint16_t kDequantize = static_cast<uint16_t>(OpFamilyId::kDequantize);

TEST(GpuQuantize, MatchesCpuTwinBitForBit) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const DType xt : {DType::kFloat16, DType::kFloat32})
    for (const DType qt : {DType::kInt8, DType::kUInt8})
      for (const bool per_channel : {false, true})
        for (const bool zp : {false, true}) {
          QuantizeLinearParams p;
          p.qtype = qt;
          p.outer = 3;
          p.channels = 5;
          p.inner = 37;
          p.per_channel = per_channel;
          p.has_zero_point = zp;
          const int64_t n = p.outer * p.channels * p.inner;
          std::vector<float> x = rng.uniform(n, -300.f, 300.f);
          const float specials[] = {NAN, INFINITY, -INFINITY, 0.5f, 1.5f, -2.5f, 0.f, -0.f};
          for (size_t i = 0; i < std::size(specials); ++i) x[i * 7] = specials[i];
          x = gpu_test::as_stored(x, xt == DType::kFloat16);
          const int64_t ns = per_channel ? p.channels : 1;
          std::vector<float> scale = rng.uniform(ns, 0.25f, 2.f);
          scale[0] = 0.5f;  // ties land exactly on .5
          std::vector<uint8_t> zero(static_cast<size_t>(ns));
          for (uint8_t& z : zero)
            z = qt == DType::kInt8 ? uint8_t(int8_t(rng.integer(-20, 20))) : uint8_t(rng.integer(0, 40));
          std::vector<uint8_t> want(static_cast<size_t>(n));
          cpu::quantize_linear(p, x.data(), scale.data(), zp ? zero.data() : nullptr, want.data());

          const auto dx = gpu_test::to_device(x, xt);
          const auto ds = gpu_test::to_device(scale, DType::kFloat32);
          DeviceBuffer dz(zero.size());
          dz.upload(zero.data(), zero.size());
          DeviceBuffer dy(static_cast<size_t>(n));
          cuda::StepPointers ptrs{};
          ptrs.in[0] = dx->get();
          ptrs.in[1] = ds->get();
          if (zp) ptrs.in[2] = dz.get();
          ptrs.out[0] = dy.get();
          for (const uint16_t poison : {uint16_t{0xA5A5}, uint16_t{0x5A5A}}) {
            dy.poison16(poison);
            cuda::LaunchChoice chosen;
            ASSERT_EQ(gpu_test::select_and_launch(kQuantize, xt, ptrs, p, &chosen), "");
            EXPECT_EQ(dy.download<uint8_t>(want.size()), want)
                << chosen.variant->name << " per_channel " << per_channel << " zp " << zp;
            EXPECT_TRUE(dy.guard_intact());
          }
        }
}

TEST(GpuDequantize, MatchesCpuTwinBitForBit) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const DType yt : {DType::kFloat16, DType::kFloat32})
    for (const DType qt : {DType::kInt8, DType::kUInt8})
      for (const bool per_channel : {false, true})
        for (const bool zp : {false, true}) {
          QuantizeLinearParams p;
          p.qtype = qt;
          p.outer = 3;
          p.channels = per_channel ? 5 : 1;
          p.inner = per_channel ? 67 : 1001;
          p.per_channel = per_channel;
          p.has_zero_point = zp;
          const int64_t n = p.outer * p.channels * p.inner;
          const test_util::Bytes x = rng.bytes(n);  // every int8 / uint8 value
          const test_util::Bytes zero = rng.bytes(p.channels);
          std::vector<float> scale = rng.uniform(p.channels, 1e-3f, 0.5f);
          std::vector<float> want(static_cast<size_t>(n));
          cpu::dequantize_linear(p, x.data(), scale.data(), zp ? zero.data() : nullptr,
                                 want.data());
          std::vector<uint8_t> sb(scale.size() * 4);
          std::memcpy(sb.data(), scale.data(), sb.size());
          std::vector<std::vector<uint8_t>> ins = {x, sb};
          if (zp) ins.push_back(zero);
          const size_t eb = yt == DType::kFloat16 ? 2 : 4;
          const std::vector<uint8_t> got =
              gpu_test::run_bytes_step(kDequantize, yt, p, ins, size_t(n) * eb);
          for (int64_t i = 0; i < n; ++i) {
            if (yt == DType::kFloat16) {
              uint16_t h;
              std::memcpy(&h, &got[size_t(i) * 2], 2);
              ASSERT_EQ(h, half_from_float(want[size_t(i)])) << "element " << i;
            } else {
              float f;
              std::memcpy(&f, &got[size_t(i) * 4], 4);
              ASSERT_EQ(f, want[size_t(i)]) << "element " << i;
            }
          }
        }
}

}  // namespace
}  // namespace jetplan::kernels
