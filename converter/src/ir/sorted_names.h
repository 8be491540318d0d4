// Compile-time check for the op tables, which are searched by binary search on the op name.
#pragma once

#include <cstddef>

namespace jetplan::converter {

constexpr bool name_less(const char* a, const char* b) {
  while (*a != 0 && *a == *b) ++a, ++b;
  return static_cast<unsigned char>(*a) < static_cast<unsigned char>(*b);
}

// True when table[i].op_type strictly increases.
template <typename Entry, size_t N>
constexpr bool sorted_by_op_type(const Entry (&table)[N]) {
  for (size_t i = 1; i < N; ++i)
    if (!name_less(table[i - 1].op_type, table[i].op_type)) return false;
  return true;
}

}  // namespace jetplan::converter
