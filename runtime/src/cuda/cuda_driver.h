// The CUDA driver API, loaded at run time with dlopen ("libcuda.so.1"), so that libjetplan links
// no CUDA library and cross-compiles with a plain g++. Only the calls jetplan makes are declared,
// with the ABI of the versioned symbols cuda.h maps them to (cuMemAlloc -> cuMemAlloc_v2, ...).
// The types are opaque handles and integers, as in cuda.h; the enum values used are copied
// from cuda.h (CUDA 12/13 ABI, stable since CUDA 11).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/src/api/status.h"

namespace jetplan::rt::cu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;

constexpr CUresult kSuccess = 0;
constexpr CUresult kErrorOutOfMemory = 2;
constexpr CUresult kErrorNoDevice = 100;
constexpr int kAttrClockRate = 13;             // kHz
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrL2CacheSize = 38;
constexpr int kAttrMajor = 75;
constexpr int kAttrMinor = 76;
constexpr int kAttrMaxSharedPerBlockOptin = 97;
constexpr int kFuncAttrNumRegs = 4;
constexpr int kFuncAttrMaxDynamicShared = 8;
constexpr unsigned kStreamNonBlocking = 1;
constexpr unsigned kEventDefault = 0;
constexpr int kCaptureModeThreadLocal = 1;

struct Driver {
  CUresult (*Init)(unsigned);
  CUresult (*DriverGetVersion)(int*);
  CUresult (*DeviceGetCount)(int*);
  CUresult (*DeviceGet)(CUdevice*, int);
  CUresult (*DeviceGetName)(char*, int, CUdevice);
  CUresult (*DeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*DeviceTotalMem)(size_t*, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*DevicePrimaryCtxRelease)(CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxGetCurrent)(CUcontext*);
  CUresult (*ModuleLoadData)(CUmodule*, const void*);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*FuncSetAttribute)(CUfunction, int, int);
  CUresult (*FuncGetAttribute)(int*, int, CUfunction);
  CUresult (*MemAlloc)(CUdeviceptr*, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemAllocHost)(void**, size_t);
  CUresult (*MemFreeHost)(void*);
  CUresult (*MemGetInfo)(size_t*, size_t*);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*MemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*MemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*StreamCreate)(CUstream*, unsigned);
  CUresult (*StreamDestroy)(CUstream);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void**, void**);
  CUresult (*LaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, CUstream, void**);
  CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int*, CUfunction, int, size_t);
  CUresult (*EventCreate)(CUevent*, unsigned);
  CUresult (*EventDestroy)(CUevent);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*EventSynchronize)(CUevent);
  CUresult (*EventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*StreamBeginCapture)(CUstream, int);
  CUresult (*StreamEndCapture)(CUstream, CUgraph*);
  CUresult (*GraphInstantiate)(CUgraphExec*, CUgraph, unsigned long long);
  CUresult (*GraphLaunch)(CUgraphExec, CUstream);
  CUresult (*GraphExecDestroy)(CUgraphExec);
  CUresult (*GraphDestroy)(CUgraph);
  CUresult (*GetErrorName)(CUresult, const char**);
  CUresult (*GetErrorString)(CUresult, const char**);
};

// The driver, loaded and initialized once per process (thread-safe). JP_ERROR_DEVICE naming the
// reason (no libcuda, a symbol missing, cuInit failed, no device) when there is none; the
// library handle stays open for the life of the process.
[[nodiscard]] Status driver(const Driver** out);

// Launches `fn` on `stream` with `args`; a cooperative launch (cuLaunchCooperativeKernel: the
// driver starts every block of the grid at once, or fails) for kernels whose blocks wait for each
// other (the KernelVariant row says so).
CUresult launch(const Driver& d, CUfunction fn, bool cooperative, const uint32_t grid[3],
                const uint32_t block[3], uint32_t shared_bytes, CUstream stream, void** args);

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for messages.
const char* error_text(const Driver& d, CUresult r, char* buffer, size_t size);

// fail() with the driver's error text appended: "<what>: CUDA_ERROR_... (...)". Out-of-memory
// results map to JP_ERROR_OUT_OF_MEMORY, the others to JP_ERROR_DEVICE.
[[nodiscard]] Status check(const Driver& d, CUresult r, const char* what);

// The properties of one device that plan load checks against a plan's target.
struct DeviceInfo {
  CUdevice device = 0;
  int ordinal = 0;
  char name[128] = {};
  int sm_arch = 0;  // major * 10 + minor
  int sm_count = 0;
  int max_shared_per_block_optin = 0;
  int l2_bytes = 0;
  int clock_khz = 0;
  size_t total_memory = 0;
};
[[nodiscard]] Status device_info(const Driver& d, int ordinal, DeviceInfo* out);

}  // namespace jetplan::rt::cu
