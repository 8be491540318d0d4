// Hopper's warpgroup tensor-core instructions (sm_90a only: wgmma, PTX ISA 8.0), for the conv
// igemm's Hopper tiles (IgemmWg, conv_igemm_load.cuh). An extra of the sm_90 targets behind the
// same kernels' interface; the Ampere-class mma.sync tiles remain the product (Orin has no wgmma).
// Only code compiled for sm_90a may include this (the kernels that do guard their bodies with
// __CUDA_ARCH_FEAT_SM90_ALL, kernels/cuda/conv.cu).
//
// Shared-memory operands: K-major tiles of 128 bytes a row (64 halves or 128 int8) in the
// 128-byte swizzle, 16-byte chunk c of row r stored at chunk c ^ (r % 8), the 8-row groups 1024
// bytes apart and 1024-byte aligned (wg_desc). A step of 32 bytes of K (16 halves, 32 int8)
// within the row moves the start address by 32 bytes; the swizzle is of absolute address bits,
// so the base offset stays 0.
// Accumulators of m64nNk16 (f32): warp w of the warpgroup holds rows 16w..16w+15; its
// registers d[j][0..3] are mma.sync m16n8's C fragment of columns 8j..8j+7 (rows lane/4 and
// lane/4 + 8, columns 2 * (lane % 4) + 0, 1), which is the layout igemm_epilogue() reads.
#pragma once

#include <cstdint>
#include <type_traits>

namespace jetplan::kernels::cuda {
namespace {

// The matrix descriptor of a K-major, 128-byte-swizzled tile at shared address `addr`: start
// address >> 4 (bits 0-13), leading byte offset 1 (unused by swizzled K-major layouts, bits
// 16-29), stride byte offset 1024 >> 4 between 8-row groups (bits 32-45), base offset 0,
// swizzle mode 1 = 128 bytes (bits 62-63).
__device__ __forceinline__ uint64_t wg_desc(uint32_t addr) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 62);
}
// Orders this thread's earlier shared-memory writes (cp.async's, the generic proxy) before the
// async proxy's reads (wgmma's): after cp.async.wait_group, before the barrier.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving other accesses of the accumulators across the asynchronous
// instructions that write them.
template <typename A, int NI>
__device__ __forceinline__ void wgmma_fence_acc(A (&d)[NI][4]) {
#pragma unroll
  for (int i = 0; i < NI; ++i)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      if constexpr (std::is_floating_point_v<A>) asm volatile("" : "+f"(d[i][c])::"memory");
      else asm volatile("" : "+r"(d[i][c])::"memory");
    }
}

// D += A * B for a 64 x 128 x 32-byte-of-K step, A and B from shared memory (descriptors), both
// K-major (no transposes), scale-d 1: FP16 inputs into FP32 accumulators (m64n128k16; scale-a
// and scale-b 1) or Int8 into int32 (m64n128k32, exact). The 64 accumulator operands of either:
// JP_WGMMA_ACC with the constraint macro of their type.
#define JP_WGMMA_REGS \
  "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
  "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
  "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
  "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define JP_WGMMA_ACC(C) \
  C(d[0][0]), C(d[0][1]), C(d[0][2]), C(d[0][3]), C(d[1][0]), C(d[1][1]), C(d[1][2]), \
  C(d[1][3]), C(d[2][0]), C(d[2][1]), C(d[2][2]), C(d[2][3]), C(d[3][0]), C(d[3][1]), \
  C(d[3][2]), C(d[3][3]), C(d[4][0]), C(d[4][1]), C(d[4][2]), C(d[4][3]), C(d[5][0]), \
  C(d[5][1]), C(d[5][2]), C(d[5][3]), C(d[6][0]), C(d[6][1]), C(d[6][2]), C(d[6][3]), \
  C(d[7][0]), C(d[7][1]), C(d[7][2]), C(d[7][3]), C(d[8][0]), C(d[8][1]), C(d[8][2]), \
  C(d[8][3]), C(d[9][0]), C(d[9][1]), C(d[9][2]), C(d[9][3]), C(d[10][0]), C(d[10][1]), \
  C(d[10][2]), C(d[10][3]), C(d[11][0]), C(d[11][1]), C(d[11][2]), C(d[11][3]), C(d[12][0]), \
  C(d[12][1]), C(d[12][2]), C(d[12][3]), C(d[13][0]), C(d[13][1]), C(d[13][2]), C(d[13][3]), \
  C(d[14][0]), C(d[14][1]), C(d[14][2]), C(d[14][3]), C(d[15][0]), C(d[15][1]), C(d[15][2]), \
  C(d[15][3])
#define JP_WGMMA_F32(x) "+f"(x)
#define JP_WGMMA_S32(x) "+r"(x)
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[16][4], uint64_t a, uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" JP_WGMMA_REGS
      "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : JP_WGMMA_ACC(JP_WGMMA_F32)
      : "l"(a), "l"(b), "r"(1));
}
__device__ __forceinline__ void wgmma_m64n128k32(int32_t (&d)[16][4], uint64_t a, uint64_t b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {" JP_WGMMA_REGS
      "}, %64, %65, p;\n}\n"
      : JP_WGMMA_ACC(JP_WGMMA_S32)
      : "l"(a), "l"(b), "r"(1));
}
#undef JP_WGMMA_REGS
#undef JP_WGMMA_ACC
#undef JP_WGMMA_F32
#undef JP_WGMMA_S32

// One 32-byte K step of the accumulators' type: FP16 (m64n128k16) or INT8 (m64n128k32).
__device__ __forceinline__ void wgmma_step(float (&d)[16][4], uint64_t a, uint64_t b) {
  wgmma_m64n128k16(d, a, b);
}
__device__ __forceinline__ void wgmma_step(int32_t (&d)[16][4], uint64_t a, uint64_t b) {
  wgmma_m64n128k32(d, a, b);
}

}  // namespace
}  // namespace jetplan::kernels::cuda
