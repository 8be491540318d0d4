#include "runtime/src/cuda/cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>

#include <cstdio>

namespace jetplan::rt::cu {
namespace {

struct Loaded {
  Driver driver{};
  Status status = JP_ERROR_DEVICE;
  char message[256] = {};
};

Loaded g_loaded;
pthread_once_t g_once = PTHREAD_ONCE_INIT;

template <typename Fn>
bool bind(void* lib, const char* symbol, Fn* out, Loaded* loaded) {
  *out = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (*out == nullptr) {
    std::snprintf(loaded->message, sizeof(loaded->message),
                  "the CUDA driver (libcuda.so.1) lacks %s: the driver is too old for jetplan",
                  symbol);
    return false;
  }
  return true;
}

void load_once() {
  Loaded* l = &g_loaded;
  // RTLD_NODELETE: the driver stays mapped for the process; unloading it under live contexts of
  // other libraries is never safe.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (lib == nullptr) {
    std::snprintf(l->message, sizeof(l->message),
                  "no CUDA driver: libcuda.so.1 cannot be loaded (%s)", dlerror());
    return;
  }
  Driver& d = l->driver;
#define JP_CU_DRIVER_BIND(member, symbol, params) &&bind(lib, #symbol, &d.member, l)
  const bool ok = true JP_CU_DRIVER_CALLS(JP_CU_DRIVER_BIND);
#undef JP_CU_DRIVER_BIND
  if (!ok) return;
  // cuEventElapsedTime_v2 (CUDA 12.8+) and the original share their signature.
  d.EventElapsedTime =
      reinterpret_cast<decltype(d.EventElapsedTime)>(dlsym(lib, "cuEventElapsedTime_v2"));
  if (d.EventElapsedTime == nullptr && !bind(lib, "cuEventElapsedTime", &d.EventElapsedTime, l))
    return;
  d.LaunchKernelEx =
      reinterpret_cast<decltype(d.LaunchKernelEx)>(dlsym(lib, "cuLaunchKernelEx"));
  const CUresult r = d.Init(0);
  if (r != kSuccess) {
    char text[128];
    std::snprintf(l->message, sizeof(l->message), "cuInit failed: %s%s",
                  error_text(d, r, text, sizeof(text)),
                  r == kErrorNoDevice ? "; this machine has no usable NVIDIA GPU" : "");
    return;
  }
  int count = 0;
  if (d.DeviceGetCount(&count) != kSuccess || count < 1) {
    std::snprintf(l->message, sizeof(l->message), "the CUDA driver reports no GPU");
    return;
  }
  if (d.DriverGetVersion(&d.version) != kSuccess) d.version = 0;
  l->status = JP_OK;
}

}  // namespace

Status driver(const Driver** out) {
  pthread_once(&g_once, load_once);
  if (g_loaded.status != JP_OK) return fail(g_loaded.status, "%s", g_loaded.message);
  *out = &g_loaded.driver;
  return JP_OK;
}

CUresult launch(const Driver& d, CUfunction fn, bool cooperative, const uint32_t grid[3],
                const uint32_t block[3], uint32_t shared_bytes, CUstream stream, void** args,
                bool early) {
  if (early && !cooperative && d.LaunchKernelEx != nullptr) {
    LaunchAttribute attr{};
    attr.id = kLaunchAttrProgrammaticStreamSerialization;
    attr.value.value = 1;
    const LaunchConfig config{grid[0], grid[1], grid[2], block[0], block[1], block[2],
                              shared_bytes, stream, &attr, 1};
    return d.LaunchKernelEx(&config, fn, args, nullptr);
  }
  if (cooperative) {
    return d.LaunchCooperativeKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                     shared_bytes, stream, args);
  }
  return d.LaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes,
                        stream, args, nullptr);
}

bool early_launch(const Driver& d, int sm_arch) {
  return sm_arch >= 90 && d.LaunchKernelEx != nullptr && d.version >= 12030;
}

const char* error_text(const Driver& d, CUresult r, char* buffer, size_t size) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.GetErrorName == nullptr || d.GetErrorName(r, &name) != kSuccess) name = nullptr;
  if (d.GetErrorString == nullptr || d.GetErrorString(r, &text) != kSuccess) text = nullptr;
  std::snprintf(buffer, size, "%s (%s)", name ? name : "CUDA error", text ? text : "no detail");
  if (name == nullptr) std::snprintf(buffer, size, "CUDA error %d", r);
  return buffer;
}

Status check(const Driver& d, CUresult r, const char* what) {
  if (r == kSuccess) return JP_OK;
  char text[160];
  return fail(r == kErrorOutOfMemory ? JP_ERROR_OUT_OF_MEMORY : JP_ERROR_DEVICE, "%s: %s", what,
              error_text(d, r, text, sizeof(text)));
}

Status device_info(const Driver& d, int ordinal, DeviceInfo* out) {
  int count = 0;
  JP_RETURN_IF_ERROR(check(d, d.DeviceGetCount(&count), "cuDeviceGetCount"));
  if (ordinal < 0 || ordinal >= count) {
    return fail(JP_ERROR_DEVICE, "GPU %d does not exist (this machine has %d)", ordinal, count);
  }
  out->ordinal = ordinal;
  JP_RETURN_IF_ERROR(check(d, d.DeviceGet(&out->device, ordinal), "cuDeviceGet"));
  JP_RETURN_IF_ERROR(check(d, d.DeviceGetName(out->name, sizeof(out->name) - 1, out->device),
                           "cuDeviceGetName"));
  int major = 0, minor = 0;
  JP_RETURN_IF_ERROR(check(d, d.DeviceGetAttribute(&major, kAttrMajor, out->device), "attribute"));
  JP_RETURN_IF_ERROR(check(d, d.DeviceGetAttribute(&minor, kAttrMinor, out->device), "attribute"));
  out->sm_arch = major * 10 + minor;
  JP_RETURN_IF_ERROR(check(
      d, d.DeviceGetAttribute(&out->sm_count, kAttrMultiprocessorCount, out->device), "attribute"));
  JP_RETURN_IF_ERROR(check(d,
                           d.DeviceGetAttribute(&out->max_shared_per_block_optin,
                                                kAttrMaxSharedPerBlockOptin, out->device),
                           "attribute"));
  JP_RETURN_IF_ERROR(
      check(d, d.DeviceGetAttribute(&out->l2_bytes, kAttrL2CacheSize, out->device), "attribute"));
  JP_RETURN_IF_ERROR(
      check(d, d.DeviceGetAttribute(&out->clock_khz, kAttrClockRate, out->device), "attribute"));
  JP_RETURN_IF_ERROR(check(d, d.DeviceTotalMem(&out->total_memory, out->device), "cuDeviceTotalMem"));
  return JP_OK;
}

}  // namespace jetplan::rt::cu
