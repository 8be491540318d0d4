#include "runtime/src/api/memory.h"

#include <pthread.h>

#include <cstdlib>

#include "jetplan/jetplan.h"

namespace jetplan::rt {
namespace {

void* default_allocate(void*, size_t bytes, size_t alignment) {
  void* p = nullptr;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  return posix_memalign(&p, alignment, bytes) == 0 ? p : nullptr;
}

void default_deallocate(void*, void* p) { std::free(p); }

pthread_mutex_t g_allocator_mutex = PTHREAD_MUTEX_INITIALIZER;
jp_allocator g_allocator = {default_allocate, default_deallocate, nullptr};

jp_allocator current() {
  pthread_mutex_lock(&g_allocator_mutex);
  const jp_allocator a = g_allocator;
  pthread_mutex_unlock(&g_allocator_mutex);
  return a;
}

}  // namespace

void* allocate(size_t bytes, size_t alignment) {
  if (bytes == 0) return nullptr;
  const jp_allocator a = current();
  return a.allocate(a.user, bytes, alignment);
}

void deallocate(void* p) {
  if (p == nullptr) return;
  const jp_allocator a = current();
  a.deallocate(a.user, p);
}

}  // namespace jetplan::rt

extern "C" void jp_set_allocator(const jp_allocator* allocator) {
  using namespace jetplan::rt;
  pthread_mutex_lock(&g_allocator_mutex);
  if (allocator != nullptr && allocator->allocate != nullptr && allocator->deallocate != nullptr) {
    g_allocator = *allocator;
  } else {
    g_allocator = jp_allocator{default_allocate, default_deallocate, nullptr};
  }
  pthread_mutex_unlock(&g_allocator_mutex);
}
