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
constexpr unsigned kEventDisableTiming = 2;
constexpr int kCaptureModeThreadLocal = 1;
constexpr int kLaunchAttrProgrammaticStreamSerialization = 6;

// cuLaunchKernelEx's CUlaunchAttribute and CUlaunchConfig, with cuda.h's layout (CUDA 12/13):
// the attribute's value is a 64-byte union aligned as a pointer, after the id and 4 bytes of
// padding.
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int value;  // programmaticStreamSerializationAllowed, cooperative, ...
    void* align;
  } value;
};
struct LaunchConfig {
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
  CUstream stream;
  LaunchAttribute* attrs;
  unsigned num_attrs;
};
static_assert(sizeof(LaunchAttribute) == 72 && alignof(LaunchAttribute) == 8, "cuda.h's layout");
static_assert(sizeof(LaunchConfig) == 56 && alignof(LaunchConfig) == 8, "cuda.h's layout");

// Every driver call jetplan makes, listed once: X(member, symbol, parameters), symbol the
// versioned one cuda.h maps the call to. Driver declares a member of each and cuda_driver.cc binds
// each; cuEventElapsedTime, whose symbol depends on the driver's version, is bound by hand.
#define JP_CU_DRIVER_CALLS(X)                                                                    \
  X(Init, cuInit, (unsigned))                                                                    \
  X(DriverGetVersion, cuDriverGetVersion, (int*))                                                \
  X(DeviceGetCount, cuDeviceGetCount, (int*))                                                    \
  X(DeviceGet, cuDeviceGet, (CUdevice*, int))                                                    \
  X(DeviceGetName, cuDeviceGetName, (char*, int, CUdevice))                                      \
  X(DeviceGetAttribute, cuDeviceGetAttribute, (int*, int, CUdevice))                             \
  X(DeviceTotalMem, cuDeviceTotalMem_v2, (size_t*, CUdevice))                                    \
  X(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, (CUcontext*, CUdevice))                    \
  X(DevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, (CUdevice))                           \
  X(CtxSetCurrent, cuCtxSetCurrent, (CUcontext))                                                 \
  X(CtxGetCurrent, cuCtxGetCurrent, (CUcontext*))                                                \
  X(ModuleLoadData, cuModuleLoadData, (CUmodule*, const void*))                                  \
  X(ModuleUnload, cuModuleUnload, (CUmodule))                                                    \
  X(ModuleGetFunction, cuModuleGetFunction, (CUfunction*, CUmodule, const char*))                \
  X(FuncSetAttribute, cuFuncSetAttribute, (CUfunction, int, int))                                \
  X(FuncGetAttribute, cuFuncGetAttribute, (int*, int, CUfunction))                               \
  X(MemAlloc, cuMemAlloc_v2, (CUdeviceptr*, size_t))                                             \
  X(MemFree, cuMemFree_v2, (CUdeviceptr))                                                        \
  X(MemAllocHost, cuMemAllocHost_v2, (void**, size_t))                                           \
  X(MemFreeHost, cuMemFreeHost, (void*))                                                         \
  X(MemGetInfo, cuMemGetInfo_v2, (size_t*, size_t*))                                             \
  X(MemcpyHtoD, cuMemcpyHtoD_v2, (CUdeviceptr, const void*, size_t))                             \
  X(MemcpyDtoH, cuMemcpyDtoH_v2, (void*, CUdeviceptr, size_t))                                   \
  X(MemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void*, size_t, CUstream))         \
  X(MemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, (void*, CUdeviceptr, size_t, CUstream))               \
  X(MemcpyDtoDAsync, cuMemcpyDtoDAsync_v2, (CUdeviceptr, CUdeviceptr, size_t, CUstream))         \
  X(MemsetD8Async, cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream))              \
  X(StreamCreate, cuStreamCreate, (CUstream*, unsigned))                                         \
  X(StreamDestroy, cuStreamDestroy_v2, (CUstream))                                               \
  X(StreamSynchronize, cuStreamSynchronize, (CUstream))                                          \
  X(LaunchKernel, cuLaunchKernel,                                                                \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, \
     void**, void**))                                                                            \
  X(LaunchCooperativeKernel, cuLaunchCooperativeKernel,                                          \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, \
     void**))                                                                                    \
  X(OccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveBlocksPerMultiprocessor,      \
    (int*, CUfunction, int, size_t))                                                             \
  X(EventCreate, cuEventCreate, (CUevent*, unsigned))                                            \
  X(EventDestroy, cuEventDestroy_v2, (CUevent))                                                  \
  X(EventRecord, cuEventRecord, (CUevent, CUstream))                                             \
  X(EventSynchronize, cuEventSynchronize, (CUevent))                                             \
  X(StreamWaitEvent, cuStreamWaitEvent, (CUstream, CUevent, unsigned))                           \
  X(StreamBeginCapture, cuStreamBeginCapture_v2, (CUstream, int))                                \
  X(StreamEndCapture, cuStreamEndCapture, (CUstream, CUgraph*))                                  \
  X(GraphInstantiate, cuGraphInstantiateWithFlags, (CUgraphExec*, CUgraph, unsigned long long))  \
  X(GraphLaunch, cuGraphLaunch, (CUgraphExec, CUstream))                                         \
  X(GraphExecDestroy, cuGraphExecDestroy, (CUgraphExec))                                         \
  X(GraphDestroy, cuGraphDestroy, (CUgraph))                                                     \
  X(GetErrorName, cuGetErrorName, (CUresult, const char**))                                      \
  X(GetErrorString, cuGetErrorString, (CUresult, const char**))

struct Driver {
#define JP_CU_DRIVER_MEMBER(member, symbol, params) CUresult(*member) params;
  JP_CU_DRIVER_CALLS(JP_CU_DRIVER_MEMBER)
#undef JP_CU_DRIVER_MEMBER
  CUresult (*EventElapsedTime)(float*, CUevent, CUevent);  // cuEventElapsedTime[_v2]
  // cuLaunchKernelEx (CUDA 12.0+), bound when the driver has it: null on older drivers, which
  // then launch every kernel the plain way.
  CUresult (*LaunchKernelEx)(const LaunchConfig*, CUfunction, void**, void**);
  int version = 0;  // cuDriverGetVersion: 12030 for CUDA 12.3
};

// The driver, loaded and initialized once per process (thread-safe). JP_ERROR_DEVICE naming the
// reason (no libcuda, a symbol missing, cuInit failed, no device) when there is none; the
// library handle stays open for the life of the process.
[[nodiscard]] Status driver(const Driver** out);

// Launches `fn` on `stream` with `args`; a cooperative launch (cuLaunchCooperativeKernel: the
// driver starts every block of the grid at once, or fails) for kernels whose blocks wait for each
// other (the KernelVariant row says so). `early`: a programmatic dependent launch
// (cuLaunchKernelEx with programmatic stream serialization, sm_90+: see early_launch()): the
// kernel may start before the previous kernel on the stream has finished, and waits for it
// itself (griddepcontrol.wait) before it touches any tensor.
CUresult launch(const Driver& d, CUfunction fn, bool cooperative, const uint32_t grid[3],
                const uint32_t block[3], uint32_t shared_bytes, CUstream stream, void** args,
                bool early = false);

// Whether early (programmatic dependent) launches work on a device of `sm_arch` with this
// driver: sm_90 or newer (griddepcontrol), cuLaunchKernelEx bound, and a driver of CUDA 12.3 or
// later (launches of this kind inside stream capture become the graph's programmatic edges).
bool early_launch(const Driver& d, int sm_arch);

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
