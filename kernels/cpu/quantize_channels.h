// The [outer, channels, inner] walk of QuantizeLinear and DequantizeLinear (CPU twins): each
// run of `inner` elements shares one channel's scale and zero point (the tensor's only ones
// without per_channel).
#pragma once

#include <cstdint>

#include "kernels/quantization.h"
#include "kernels/quantize.h"

namespace jetplan::kernels::cpu {

// Calls run(first element, scale, zero point) for every (outer, channel) run, in memory order.
// zero_point may be null when !p.has_zero_point (then 0).
template <typename Run>
void for_each_channel_run(const QuantizeLinearParams& p, const float* scale, const void* zero_point,
                          Run run) {
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t ch = 0; ch < p.channels; ++ch) {
      const int64_t qi = p.per_channel ? ch : 0;
      const int32_t zp = p.has_zero_point ? load_quantized(p.qtype, zero_point, qi) : 0;
      run((o * p.channels + ch) * p.inner, scale[qi], zp);
    }
}

}  // namespace jetplan::kernels::cpu
