// Host memory for the runtime core. Every allocation goes through the process-wide jp_allocator
// (default: posix_memalign/free), so firmware can supply its own heap and tests can inject
// failures. Built without exceptions: an allocation can fail and says so instead of throwing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

namespace jetplan::rt {

// Null on failure or when bytes == 0. alignment: a power of two.
void* allocate(size_t bytes, size_t alignment);
void deallocate(void* p);

// Constructs a T in allocated memory; null when out of memory.
template <typename T>
T* create() {
  void* memory = allocate(sizeof(T), alignof(T) < sizeof(void*) ? sizeof(void*) : alignof(T));
  return memory != nullptr ? new (memory) T() : nullptr;
}

template <typename T>
void destroy(T* p) {
  if (p == nullptr) return;
  p->~T();
  deallocate(p);
}

// A fixed-size array of trivially copyable T, allocated once (zero-filled) and owned.
template <typename T>
class Array {
  static_assert(std::is_trivially_copyable_v<T>, "Array holds plain data only");

 public:
  Array() = default;
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  ~Array() { deallocate(data_); }

  // False when out of memory; the array is then empty.
  [[nodiscard]] bool allocate(size_t count) {
    deallocate(data_);
    data_ = nullptr;
    size_ = 0;
    if (count == 0) return true;
    if (count > SIZE_MAX / sizeof(T)) return false;
    const size_t align = alignof(T) < sizeof(void*) ? sizeof(void*) : alignof(T);
    data_ = static_cast<T*>(::jetplan::rt::allocate(count * sizeof(T), align));
    if (data_ == nullptr) return false;
    std::memset(static_cast<void*>(data_), 0, count * sizeof(T));
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

}  // namespace jetplan::rt
