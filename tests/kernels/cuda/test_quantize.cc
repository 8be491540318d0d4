// CUDA QuantizeLinear (kernels/cuda/quantize.cu) against the CPU twin (cpu::quantize_linear) bit
// for bit: Float16 and Float32 x (the twin reads the same values as float32), Int8 and UInt8 y,
// per tensor and per axis, with and without a zero point, values spread past the saturation
// points plus ties, NaN and infinities; and the image form (NCHW or NHWC into padded NHWC). y is poisoned (0xA5 / 0x5A) and its guard checked.
// DequantizeLinear (kernels/cuda/dequantize.cu) against cpu::dequantize_linear: Float32 y bit for
// bit, Float16 y the twin's float rounded to nearest even, bit for bit. DynamicQuantizeLinear
// (kernels/cuda/dynamic_quantize.cu) against cpu::dynamic_quantize_linear bit for bit: y, the
// scale and the zero point, Float32 and Float16 x.
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

// The image form (an INT8 stem's input transposed and padded to 8k channels, one thread a
// pixel): NCHW and NHWC x, Float16 and Float32, C' a multiple of 8 (8-byte stores) or not, with
// and without a zero point, against the twin bit for bit; y poisoned, its guard checked.
TEST(GpuQuantize, ImageFormMatchesCpuTwinBitForBit) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const DType xt : {DType::kFloat16, DType::kFloat32})
    for (const QuantizeLayout layout :
         {QuantizeLayout::kNchwToNhwcPadded, QuantizeLayout::kNhwcPadded})
      for (const auto& [c, cp] : {std::pair<int64_t, int64_t>{3, 8}, {12, 16}, {5, 7}, {1, 8}}) {
        QuantizeLinearParams p;
        p.qtype = DType::kInt8;
        p.has_zero_point = c == 5;
        p.layout = layout;
        p.outer = 3;
        p.channels = c;
        p.inner = 37 * 29;
        p.padded_channels = cp;
        const int64_t n = p.outer * c * p.inner, m = p.outer * p.inner * cp;
        std::vector<float> x = rng.uniform(n, -4.f, 4.f);
        const float specials[] = {NAN, INFINITY, -INFINITY, 0.5f, 1.5f, -2.5f, 0.f, -0.f};
        for (size_t i = 0; i < std::size(specials); ++i) x[i * 11] = specials[i];
        x = gpu_test::as_stored(x, xt == DType::kFloat16);
        const std::vector<float> scale = {0.5f};  // ties land exactly on .5
        const std::vector<uint8_t> zero = {uint8_t(int8_t(-5))};
        std::vector<uint8_t> want(static_cast<size_t>(m));
        cpu::quantize_linear(p, x.data(), scale.data(), p.has_zero_point ? zero.data() : nullptr,
                             want.data());
        const auto dx = gpu_test::to_device(x, xt);
        const auto ds = gpu_test::to_device(scale, DType::kFloat32);
        DeviceBuffer dz(1);
        dz.upload(zero.data(), 1);
        DeviceBuffer dy(static_cast<size_t>(m));
        cuda::StepPointers ptrs{};
        ptrs.in[0] = dx->get();
        ptrs.in[1] = ds->get();
        if (p.has_zero_point) ptrs.in[2] = dz.get();
        ptrs.out[0] = dy.get();
        for (const uint16_t poison : {uint16_t{0xA5A5}, uint16_t{0x5A5A}}) {
          dy.poison16(poison);
          cuda::LaunchChoice chosen;
          ASSERT_EQ(gpu_test::select_and_launch(kQuantize, xt, ptrs, p, &chosen), "");
          EXPECT_STREQ(chosen.variant->name, xt == DType::kFloat16 ? "jp_quantize_image_f16_i8"
                                                                   : "jp_quantize_image_f32_i8");
          EXPECT_EQ(dy.download<uint8_t>(want.size()), want)
              << chosen.variant->name << " C " << c << " C' " << cp;
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

// Ranges across zero, all positive, all negative, all zero (hi == lo: scale 1/255), with NaN and
// infinities, tensors from one element to more than the block's 1024 threads many times over; y,
// y_scale and y_zero_point poisoned, guards checked.
TEST(GpuDynamicQuantize, MatchesCpuTwinBitForBit) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  constexpr uint16_t kDynamic = static_cast<uint16_t>(OpFamilyId::kDynamicQuantize);
  struct Case { int64_t n; float lo, hi; bool specials; };
  const Case cases[] = {{1, -2.f, 3.f, false},      {37, 0.5f, 9.f, false},
                        {1000, -7.f, -0.25f, false}, {4099, -3.f, 12.f, true},
                        {98304, -6.f, 6.f, false},   {64, 0.f, 0.f, false}};
  for (const DType xt : {DType::kFloat32, DType::kFloat16})
    for (const Case& c : cases) {
      std::vector<float> x = c.lo == c.hi ? std::vector<float>(size_t(c.n), 0.f)
                                          : rng.uniform(c.n, c.lo, c.hi);
      if (c.specials) {
        x[5] = NAN;
        x[77] = 0.5f;
        x[700] = -0.f;
      }
      x = gpu_test::as_stored(x, xt == DType::kFloat16);
      DynamicQuantizeParams p;
      p.count = c.n;
      std::vector<uint8_t> want(size_t(c.n));
      float want_scale = 0.f;
      uint8_t want_zp = 0;
      cpu::dynamic_quantize_linear(p, x.data(), want.data(), &want_scale, &want_zp);
      const auto dx = gpu_test::to_device(x, xt);
      DeviceBuffer dy(size_t(c.n)), ds(4), dz(1);
      cuda::StepPointers ptrs{};
      ptrs.in[0] = dx->get();
      ptrs.out[0] = dy.get();
      ptrs.out[1] = ds.get();
      ptrs.out[2] = dz.get();
      cuda::StepDesc step = gpu_test::step_of(kDynamic, &p, xt);
      step.num_inputs = 1;
      step.input_dtypes[0] = xt;
      step.num_outputs = 3;
      step.output_dtypes[0] = DType::kUInt8;
      step.output_dtypes[1] = DType::kFloat32;
      step.output_dtypes[2] = DType::kUInt8;
      cuda::LaunchChoice chosen;
      std::string why;
      ASSERT_TRUE(cuda::select_kernel(step, gpu_test::device_target(), &chosen, &why)) << why;
      EXPECT_STREQ(chosen.variant->name, xt == DType::kFloat16 ? "jp_dynamic_quantize_f16"
                                                                : "jp_dynamic_quantize_f32");
      for (DeviceBuffer* b : {&dy, &ds, &dz}) b->poison16(0xA5A5);
      ASSERT_EQ(gpu_test::launch(chosen.variant->name, chosen, ptrs, p), "");
      const std::string label = std::to_string(c.n) + " elements in [" + std::to_string(c.lo) +
                                ", " + std::to_string(c.hi) + "]";
      EXPECT_EQ(dy.download<uint8_t>(want.size()), want) << label;
      const std::vector<float> got_scale = ds.download<float>(1);
      EXPECT_EQ(std::memcmp(&got_scale[0], &want_scale, 4), 0)
          << label << ": scale " << got_scale[0] << " want " << want_scale;
      EXPECT_EQ(dz.download<uint8_t>(1)[0], want_zp) << label;
      for (DeviceBuffer* b : {&dy, &ds, &dz}) EXPECT_TRUE(b->guard_intact()) << label;
    }
}

}  // namespace
}  // namespace jetplan::kernels
