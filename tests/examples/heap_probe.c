/* Counts the C allocator's calls for examples/firmware's test (check_firmware.py): linked into
 * the firmware program, it interposes malloc, calloc, realloc, free and the aligned allocators
 * (the executable's definitions win over the C library's for every caller, libstdc++'s operator
 * new included) and forwards to glibc's own entry points. While armed (heap_probe_arm) every
 * call is counted, free(NULL) included: the firmware prints how many fell in its control loop.
 * glibc only; not for sanitizer builds (they interpose the allocator themselves). */
#include <errno.h>
#include <stddef.h>

extern void* __libc_malloc(size_t bytes);
extern void* __libc_calloc(size_t count, size_t bytes);
extern void* __libc_realloc(void* ptr, size_t bytes);
extern void __libc_free(void* ptr);
extern void* __libc_memalign(size_t alignment, size_t bytes);

static int g_armed;
static long g_calls;

void heap_probe_arm(int armed) { __atomic_store_n(&g_armed, armed, __ATOMIC_SEQ_CST); }
long heap_probe_calls(void) { return __atomic_load_n(&g_calls, __ATOMIC_SEQ_CST); }

static void count(void) {
  if (__atomic_load_n(&g_armed, __ATOMIC_RELAXED)) __atomic_fetch_add(&g_calls, 1, __ATOMIC_SEQ_CST);
}

void* malloc(size_t bytes) {
  count();
  return __libc_malloc(bytes);
}
void* calloc(size_t count_, size_t bytes) {
  count();
  return __libc_calloc(count_, bytes);
}
void* realloc(void* ptr, size_t bytes) {
  count();
  return __libc_realloc(ptr, bytes);
}
void free(void* ptr) {
  count();
  __libc_free(ptr);
}
void* memalign(size_t alignment, size_t bytes) {
  count();
  return __libc_memalign(alignment, bytes);
}
void* aligned_alloc(size_t alignment, size_t bytes) {
  count();
  return __libc_memalign(alignment, bytes);
}
int posix_memalign(void** out, size_t alignment, size_t bytes) {
  void* p;
  count();
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  p = __libc_memalign(alignment, bytes);
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}
