#include "kernels/concat.h"

#include <cstring>

namespace jetplan::kernels::cpu {

void concat(const ConcatParams& p, const void* const* inputs, void* y) {
  int64_t total = 0;
  for (int32_t i = 0; i < p.num_inputs; ++i) total += p.axis_len[i];
  const int64_t out_row = total * p.inner * p.elem_bytes;  // bytes of one outer index in y
  auto* out = static_cast<unsigned char*>(y);
  for (int64_t o = 0; o < p.outer; ++o) {
    int64_t offset = o * out_row;
    for (int32_t i = 0; i < p.num_inputs; ++i) {
      const int64_t row = p.axis_len[i] * p.inner * p.elem_bytes;
      // memcpy with a null pointer is undefined even for 0 bytes; an empty input may be null.
      if (row > 0)
        std::memcpy(out + offset, static_cast<const unsigned char*>(inputs[i]) + o * row,
                    static_cast<size_t>(row));
      offset += row;
    }
  }
}

}  // namespace jetplan::kernels::cpu
