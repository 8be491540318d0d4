// Host memory for the runtime core, which is built without exceptions: every allocation can
// fail and reports it instead of throwing or aborting.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace jetplan::rt {

// Returns null on failure or when bytes == 0. alignment: a power of two >= sizeof(void*).
inline void* aligned_alloc_bytes(size_t bytes, size_t alignment) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes) != 0) return nullptr;
  return p;
}

inline void aligned_free(void* p) { std::free(p); }

// A fixed-size array of trivially copyable T, allocated once (zero-filled) and owned.
template <typename T>
class Array {
  static_assert(std::is_trivially_copyable_v<T>, "Array holds plain data only");

 public:
  Array() = default;
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  ~Array() { std::free(data_); }

  // False when out of memory; the array is then empty.
  [[nodiscard]] bool allocate(size_t count) {
    std::free(data_);
    data_ = nullptr;
    size_ = 0;
    if (count == 0) return true;
    data_ = static_cast<T*>(std::calloc(count, sizeof(T)));
    if (data_ == nullptr) return false;
    size_ = count;
    return true;
  }

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

// Allocates a T with new (nothrow); null when out of memory.
template <typename T>
T* make_nothrow() {
  return new (std::nothrow) T();
}

}  // namespace jetplan::rt
