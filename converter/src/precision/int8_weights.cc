#include "converter/src/precision/int8_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "converter/src/ir/error.h"

namespace jetplan::converter {

std::vector<float> quantize_conv_weights(const DraftTensor& w, const std::vector<float>* given,
                                         std::vector<uint8_t>* q) {
  constexpr float kQMax = 127.f;
  const int64_t oc = w.shape[0];
  const size_t per = w.data->size() / 4 / static_cast<size_t>(oc);
  const bool explicit_scales =
      given != nullptr && (given->size() == 1 || given->size() == static_cast<size_t>(oc));
  const float lowest = explicit_scales ? -128.f : -kQMax;
  std::vector<float> scales(static_cast<size_t>(oc));
  q->resize(w.data->size() / 4);
  for (int64_t o = 0; o < oc; ++o) {
    const float* src = reinterpret_cast<const float*>(w.data->data()) + o * per;
    float m = 0.f;
    for (size_t i = 0; i < per; ++i) m = std::max(m, std::fabs(src[i]));
    if (!std::isfinite(m))
      fail("node '", w.name, "': a weight that is not finite cannot be quantized to INT8");
    float scale = m > 0.f ? m / kQMax : 1.f;
    if (explicit_scales) scale = (*given)[given->size() == 1 ? 0 : static_cast<size_t>(o)];
    scales[static_cast<size_t>(o)] = scale;
    for (size_t i = 0; i < per; ++i) {
      const float v = std::nearbyint(src[i] / scale);
      (*q)[static_cast<size_t>(o) * per + i] =
          static_cast<uint8_t>(static_cast<int8_t>(std::max(lowest, std::min(kQMax, v))));
    }
  }
  return scales;
}

DraftTensor pad_input_channels(const DraftTensor& w, int64_t cp, std::vector<uint8_t>* storage) {
  const int64_t c = w.shape.back();
  const size_t rows = w.data->size() / 4 / static_cast<size_t>(c);
  storage->assign(rows * static_cast<size_t>(cp) * 4, 0);  // +0.0f
  for (size_t r = 0; r < rows; ++r)
    std::memcpy(storage->data() + r * static_cast<size_t>(cp) * 4,
                w.data->data() + r * static_cast<size_t>(c) * 4, static_cast<size_t>(c) * 4);
  DraftTensor padded = w;
  padded.shape.back() = cp;
  padded.size_bytes = storage->size();
  padded.data = storage;
  return padded;
}

int64_t int8_padded_channels(int64_t groups, int64_t cin) {
  return groups == 1 && cin % 8 != 0 ? (cin + 7) / 8 * 8 : cin;
}

const char* int8_conv_form_refusal(int64_t groups, int64_t cin, int64_t cout) {
  if (groups == 1) return nullptr;  // Cin % 8 != 0: padded (int8_padded_channels)
  if (groups == cin && cout == cin) return nullptr;  // depthwise
  if (groups > 1 && cin % groups == 0 && cout % groups == 0 && (cin / groups) % 8 == 0)
    return nullptr;
  return "grouped, but neither depthwise nor of a multiple of 8 input channels a group (the INT8 "
         "kernels' grouped form)";
}

}  // namespace jetplan::converter
