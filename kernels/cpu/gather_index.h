// The index handling of Gather and GatherElements (CPU twins): indices of either index dtype,
// negative ones counting from the end, out-of-range ones giving -1 (the twins write zeros).
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/dtype.h"

namespace jetplan::kernels::cpu {

inline int64_t load_index(DType t, const void* indices, int64_t i) {
  if (t == DType::kInt32) {
    int32_t v;
    std::memcpy(&v, static_cast<const unsigned char*>(indices) + i * 4, sizeof v);
    return v;
  }
  int64_t v;
  std::memcpy(&v, static_cast<const unsigned char*>(indices) + i * 8, sizeof v);
  return v;
}

// The index resolved into [0, len), or -1 when it lies outside even after counting from the end.
inline int64_t resolve_index(int64_t index, int64_t len) {
  if (index < 0) index += len;
  return index >= 0 && index < len ? index : -1;
}

}  // namespace jetplan::kernels::cpu
