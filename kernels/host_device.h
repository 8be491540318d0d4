// JP_HD marks a function that the CPU twins (host C++, any compiler) and the CUDA kernels
// (nvcc device code) share, so one definition of index and coordinate math serves both sides:
// __host__ __device__ under nvcc, nothing elsewhere. Only plain arithmetic and <cmath> calls
// that CUDA also provides for double (floor, fmin, fmax) go into such functions.
#pragma once

#if defined(__CUDACC__)
#define JP_HD __host__ __device__
#else
#define JP_HD
#endif

// JP_HD_INLINE: a JP_HD function always inlined on the device (as the kernels' own
// __forceinline__ helpers are), an ordinary inline function on the host.
#if defined(__CUDACC__)
#define JP_HD_INLINE __host__ __device__ __forceinline__
#else
#define JP_HD_INLINE inline
#endif
