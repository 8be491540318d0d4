// The stem kernels of the Conv family (kernels/cuda/conv.cu): FP16 convs of groups 1 whose whole
// K (KH * KW * Cin) is short, such as the RGB stems of CNNs (3 channels, 3x3 to 7x7 windows) and
// a speech encoder's first 1-D conv (1 channel). The implicit-GEMM tiles load such an A operand
// element by element, gathering 2-byte elements for every (pixel, K column) of a tile (the any-C
// tile: the YOLO-style detector's 6x6 stem from 3 channels ran at 13 TFLOP/s on an H100).
// In NHWC, the K columns of one kernel row (kw, c) of an output pixel are a contiguous run of
// KW * Cin elements of one input row (at dilation 1), and neighbouring output pixels' runs
// overlap: so a tile of kConvStemRows output pixels of one output row loads the KH input row
// segments it reads once, whole and coalesced, into shared memory, and reads the im2col matrix
// from there: A[m][k] = rows[off[k] + m * sw * Cin], off[k] the K column's place in the rows
// (kernels/conv.h, ConvStemLayout). All of K's weights stay in shared memory for the CTA's
// life; CTAs stride over the tiles (a grid of as many CTAs as the SMs hold). mma.sync m16n8k16,
// FP32 accumulators, and the implicit-GEMM epilogue (igemm_epilogue, EpilogueF16): bias,
// residual, activation, a Concat's channel slice.
#pragma once

#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/conv.h"
#include "kernels/cuda/conv_epilogue.cuh"
#include "kernels/cuda/conv_igemm.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

// What igemm_epilogue() reads of a tile's shape: 4 warps of 16 rows by all BN columns.
template <int BN>
struct StemTile {
  using Acc = float;
  static constexpr int kBM = kConvStemRows, kBN = BN, kThreads = 128;
  static constexpr int kMI = 1, kNI = BN / 8, kEpiPitch = BN + 8;
  static_assert(BN % 16 == 0 && kBM == 64, "4 warps of 16 rows; B fragments in pairs");
};

__device__ __forceinline__ uint32_t dynamic_smem_bytes() {
  uint32_t r;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
}

__device__ __forceinline__ uint32_t pack_halves(uint16_t lo, uint16_t hi) {
  return uint32_t(lo) | (uint32_t(hi) << 16);
}

// Copies `count` elements, element i being position e = i % len of strip r = i / len, to
// dst[r * pitch + e]: value load(r, e, i). Each of the block's 128 threads keeps U loads in flight
// before it stores them (one at a time, every load waited on before its store, the row segments
// of a tile took 24 global round trips a thread: the loads, not the mma, set the kernel's time).
template <int U, typename Load>
__device__ __forceinline__ void copy_strips(uint16_t* dst, int pitch, int count, int len, int tid,
                                            Load load) {
  constexpr int kThreads = 128;
  const int step_r = kThreads / len, step_e = kThreads - step_r * len;
  int r = tid / len, e = tid - r * len;
  for (int i0 = tid; i0 < count; i0 += U * kThreads) {
    uint16_t v[U];
    int at[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = i0 + u * kThreads;
      at[u] = r * pitch + e;
      v[u] = i < count ? load(r, e, i) : uint16_t(0);
      e += step_e;
      r += step_r;
      if (e >= len) e -= len, ++r;
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (i0 + u * kThreads < count) dst[at[u]] = v[u];
  }
}

template <int BN>
__device__ __forceinline__ void conv_stem(const StepPointers& ptrs, const ConvParams& p) {
  using T = StemTile<BN>;
  const ConvStemLayout l = conv_stem_layout(p, BN);
  if (blockDim.x != T::kThreads || !conv_stem_fits(p) || dynamic_smem_bytes() < l.bytes ||
      int64_t(blockIdx.y) * BN >= p.out_channels) {
    pdl_wait();
    return;  // not a step this kernel fits (an untrusted plan)
  }
  extern __shared__ __align__(16) unsigned char igemm_smem[];
  uint16_t* sw_ = reinterpret_cast<uint16_t*>(igemm_smem + l.w_at);
  int* offs = reinterpret_cast<int*>(igemm_smem + l.off_at);
  uint16_t* rows = reinterpret_cast<uint16_t*>(igemm_smem + l.rows_at);
  const Geo2 g = geo2(p);
  const int C = g.C, N = int(p.out_channels), K = l.k, KP = l.k_pad, kPitch = KP + 8;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int n0 = int(blockIdx.y) * BN;
  const uint16_t* x = static_cast<const uint16_t*>(ptrs.in[0]);
  const uint16_t* w = static_cast<const uint16_t*>(ptrs.in[1]);

  // Where each K column (kh, kw, c) sits in the rows, for output pixel 0 of the tile; the
  // padding columns read zeros (their weights are zeros too, but x * 0 of an Inf is NaN).
  const int kwc = g.KW * C;
  for (int k = tid; k < KP; k += T::kThreads) {
    int o = g.KH * l.row_pitch;
    if (k < K) {
      const int kh = k / kwc, r = k - kh * kwc, kw = r / C, c = r - kw * C;
      o = kh * l.row_pitch + kw * g.dw * C + c;
    }
    offs[k] = o;
  }
  for (int i = tid; i < l.zeros; i += T::kThreads) rows[g.KH * l.row_pitch + i] = 0;
  // Weights [BN][KP + 8]: the CTA's rows of w (contiguous in w: [Cout][K]), zeros past K and
  // past the last output channel.
  const int w_rows = min(BN, N - n0);
  for (int i = tid; i < BN * (KP - K); i += T::kThreads) {
    const int n = i / (KP - K);
    sw_[n * kPitch + K + (i - n * (KP - K))] = 0;
  }
  for (int i = tid; i < (BN - w_rows) * K; i += T::kThreads) {
    const int n = i / K;
    sw_[(w_rows + n) * kPitch + (i - n * K)] = 0;
  }
  const uint16_t* w0 = w + int64_t(n0) * K;
  auto load_w = [&] {
    copy_strips<8>(sw_, kPitch, w_rows * K, K, tid, [&](int, int, int i) { return w0[i]; });
  };
  if (p.w_constant) load_w();
  pdl_wait();
  if (!p.w_constant) load_w();

  const int tiles_per_row = (g.OW + kConvStemRows - 1) / kConvStemRows;
  const int64_t tiles = int64_t(p.batch) * g.OH * tiles_per_row;
  const int row_len = g.W * C;  // elements of one input row
  const int wm = warp * 16;
  // This thread's A rows (pixels wm + lane / 4 and 8 below) in the rows, and its K column pair.
  const int step = g.sw * C;
  const int mo0 = (wm + (lane >> 2)) * step, mo1 = mo0 + 8 * step, kc = (lane & 3) * 2;
  const uint32_t sb = smem_u32(sw_) +
                      uint32_t(((lane & 7) + (lane >> 4) * 8) * kPitch + ((lane >> 3) & 1) * 8) * 2;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    // The next kernel launches early (pdl_trigger) once every CTA is at its last tile: the grid
    // is one wave of CTAs that stay to the end, so a trigger at their start would let the next
    // kernel's blocks sit on the SMs' room for the whole of this one (the grid has a tile for
    // every CTA: each triggers once). Whole plans took the same time either way (H100,
    // session 32 run F: 0.997-1.004x).
    if (t + gridDim.x >= tiles) pdl_trigger();
    const int64_t r = t / tiles_per_row;  // n * OH + oh
    const int ow0 = int(t - r * tiles_per_row) * kConvStemRows;
    const int oh = int(r % g.OH);
    const int64_t n = r / g.OH;
    const int iw0 = ow0 * g.sw - g.pw;
    // The tile's KH row segments: elements [iw0 * C, + span) of input rows ih (zeros outside x).
    const uint16_t* xn = x + n * g.H * int64_t(row_len);
    const int ih0 = oh * g.sh - g.ph;
    copy_strips<8>(rows, l.row_pitch, g.KH * l.span, l.span, tid, [&](int kh, int e, int) {
      const int ih = ih0 + kh * g.dh, q = iw0 * C + e;
      return ih >= 0 && ih < g.H && q >= 0 && q < row_len ? xn[int64_t(ih) * row_len + q]
                                                          : uint16_t(0);
    });
    __syncthreads();
    float acc[1][T::kNI][4];
#pragma unroll
    for (int b = 0; b < T::kNI; ++b)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[0][b][c] = 0.f;
#pragma unroll 2
    for (int kk = 0; kk < KP; kk += 16) {
      const int2 lo = *reinterpret_cast<const int2*>(offs + kk + kc);
      const int2 hi = *reinterpret_cast<const int2*>(offs + kk + 8 + kc);
      uint32_t af[4];
      af[0] = pack_halves(rows[lo.x + mo0], rows[lo.y + mo0]);
      af[1] = pack_halves(rows[lo.x + mo1], rows[lo.y + mo1]);
      af[2] = pack_halves(rows[hi.x + mo0], rows[hi.y + mo0]);
      af[3] = pack_halves(rows[hi.x + mo1], rows[hi.y + mo1]);
#pragma unroll
      for (int np = 0; np < T::kNI / 2; ++np) {
        uint32_t bf[4];
        ldmatrix_x4(sb + uint32_t(np * 16 * kPitch + kk) * 2, bf);
        mma_step(acc[0][np * 2], af, bf[0], bf[1]);
        mma_step(acc[0][np * 2 + 1], af, bf[2], bf[3]);
      }
    }
    const int m0 = int(r * g.OW + ow0);
    const int valid = min(kConvStemRows, g.OW - ow0);
    // The epilogue's barriers also order this tile's reads of the rows before the next tile's
    // loads overwrite them.
    igemm_epilogue<T, EpilogueF16>(acc, ptrs, p, m0 + valid, N, m0, n0, wm, 0, tid);
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda
