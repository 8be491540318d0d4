// Attention on the GPU, flash-style (FlashAttention-2's forward structure on Ampere-class tensor
// cores): O = softmax(scale * Q Kt + mask) V with FP16 storage, FP32 accumulation and an online
// softmax, so no score matrix ever reaches memory. Twin: kernels/cpu/attention.cc.
//
// A CTA owns BM query rows (64 or 128) of one (batch, head), one warp per 16 rows (two in the
// key-split _k2 kernels, see attention()), and walks the keys in tiles of kAttentionKeyTile (64)
// rows. Shared memory holds the Q tile (read once into
// mma fragments, later the staging area of O), one K and one V tile; V's copy overlaps Q Kt and
// the softmax, the next K's copy overlaps P V (cp.async, 16 bytes a thread). Each warp keeps its
// scores (16 x 64), its O accumulators (16 x D) and its rows' running max and sum in registers;
// P goes from the score accumulators straight into the A fragments of the P V mma. Rows padded by
// 8 halves keep the ldmatrix row addresses in distinct banks for every head dim.
//
// Any shape: query and key counts need not be multiples of the tiles (missing rows are zero-
// filled and their scores -inf), a causal mask stops the key loop at the diagonal tile, and
// operands whose rows are not 16-byte aligned are copied element by element (synchronously).
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/attention.h"
#include "kernels/cuda/gemm_mma.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/int8_epilogue.h"

namespace jetplan::kernels::cuda::attention {
namespace {

using gemm::cp_async16;
using gemm::cp_async_commit;
using gemm::cp_async_wait;
using gemm::ldmatrix_x4;
using gemm::ldmatrix_x4_trans;
using gemm::mma_16816;

constexpr int kBN = kAttentionKeyTile;
constexpr int kPad = 8;  // halves
constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// Rows the 16-byte path can copy: every row start of the operand is 16-byte aligned.
__device__ __forceinline__ bool rows_aligned(const __half* base, const AttentionStrides& s) {
  return aligned16(base) && s.batch % 8 == 0 && s.head % 8 == 0 && s.seq % 8 == 0;
}

// Copies `rows` rows of D halves (row i at g + i * seq_stride; rows past `valid` are zeros) into
// the smem tile s (pitch D + kPad): by cp.async when vec, else element by element.
template <int ROWS, int D, int THREADS>
__device__ __forceinline__ void load_rows(__half* s, const __half* g, int64_t seq_stride,
                                          int64_t valid, bool vec) {
  constexpr int kChunks = D / 8;
  for (int e = static_cast<int>(threadIdx.x); e < ROWS * kChunks; e += THREADS) {
    const int r = e / kChunks, c = (e % kChunks) * 8;
    __half* dst = s + r * (D + kPad) + c;
    const bool in = r < valid;
    const __half* src = in ? g + r * seq_stride + c : g;
    if (vec) {
      cp_async16(dst, src, in ? 16 : 0);
    } else {
#pragma unroll
      for (int k = 0; k < 8; ++k) dst[k] = in ? src[k] : __float2half_rn(0.f);
    }
  }
}

__device__ __forceinline__ uint32_t pack_half2(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// One query tile's running state in a warp: rows g and g + 8 of its 16 (g = lane / 4), lanes of a
// quad holding different columns of the same two rows.
template <int D>
struct RowState {
  float o[D / 8][4];  // O accumulators, the mma C layout over (16 rows, D)
  float max[2];       // running maximum of each row (-inf: nothing seen yet)
  float sum[2];       // this lane's part of the running sum of exp (quad-summed at the end)
};

// The scores of the warp's 16 rows against key tile sk: s = Q Kt (qf: Q's A fragments).
template <int D>
__device__ __forceinline__ void scores_tile(float (&s)[kBN / 8][4], const uint32_t (&qf)[D / 16][4],
                                            const __half* sk, int lane) {
#pragma unroll
  for (int j = 0; j < kBN / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
    for (int j = 0; j < kBN / 16; ++j) {
      // K is stored [key, d]: the B operand (d x key) "col-major", no transpose needed.
      uint32_t r[4];
      ldmatrix_x4(r, sk + (j * 16 + lane % 8 + (lane / 16) * 8) * (D + kPad) + kk * 16 +
                         ((lane / 8) % 2) * 8);
      const uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      mma_16816(s[2 * j], qf[kk], b0);
      mma_16816(s[2 * j + 1], qf[kk], b1);
    }
}

// Scale, mask (-inf past the keys, above the diagonal when causal, plus the additive mask),
// then the online softmax: the running max and sum of each row, O rescaled to the new max, and
// s replaced by P = exp(s - max). A row still at -inf keeps exponent reference 0, so exp(-inf)
// gives 0 rather than NaN (FlashAttention's Check_inf).
template <int D>
__device__ __forceinline__ void softmax_tile(float (&s)[kBN / 8][4], RowState<D>& st,
                                             const AttentionParams& p, const __half* mb,
                                             int64_t row0, int64_t n0, int lane) {
  const float neg_inf = -__int_as_float(0x7f800000);
  float tile_max[2] = {neg_inf, neg_inf};
#pragma unroll
  for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t i = row0 + (e / 2) * 8, key = n0 + j * 8 + (lane % 4) * 2 + e % 2;
      float v = s[j][e] * p.scale;
      if (key >= p.seq_kv || (p.causal && key > i)) {
        v = neg_inf;
      } else if (mb != nullptr && i < p.seq_q) {
        v += __half2float(mb[i * p.mask_q + key * p.mask_kv]);
      }
      s[j][e] = v;
      tile_max[e / 2] = fmaxf(tile_max[e / 2], v);
    }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
    const float new_max = fmaxf(st.max[r], tile_max[r]);
    const float ref = new_max == neg_inf ? 0.f : new_max * kLog2e;
    const float correction = exp2f(st.max[r] * kLog2e - ref);
    st.max[r] = new_max;
    st.sum[r] *= correction;
#pragma unroll
    for (int d = 0; d < D / 8; ++d) {
      st.o[d][2 * r] *= correction;
      st.o[d][2 * r + 1] *= correction;
    }
#pragma unroll
    for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const float e = exp2f(s[j][2 * r + c] * kLog2e - ref);
        s[j][2 * r + c] = e;
        st.sum[r] += e;
      }
  }
}

// O += P V for the warp's rows: P from the score accumulators (the C layout of two n8 tiles is
// the A layout of one k16 step), V tile sv stored [key, d] (B as k x n row-major: ldmatrix.trans).
template <int D>
__device__ __forceinline__ void accumulate_pv(RowState<D>& st, const float (&s)[kBN / 8][4],
                                              const __half* sv, int lane) {
#pragma unroll
  for (int kk = 0; kk < kBN / 16; ++kk) {
    const uint32_t a[4] = {pack_half2(s[2 * kk][0], s[2 * kk][1]),
                           pack_half2(s[2 * kk][2], s[2 * kk][3]),
                           pack_half2(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                           pack_half2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
    for (int j = 0; j < D / 16; ++j) {
      uint32_t r[4];
      ldmatrix_x4_trans(r, sv + (kk * 16 + lane % 8 + ((lane / 8) % 2) * 8) * (D + kPad) +
                               j * 16 + (lane / 16) * 8);
      const uint32_t b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      mma_16816(st.o[2 * j], a, b0);
      mma_16816(st.o[2 * j + 1], a, b1);
    }
  }
}

// O / sum into the warp's 16 rows of the staging tile so (the Q tile's smem), then those rows to
// global memory: 16 bytes a lane when O's rows are aligned, else element by element. Int8 O
// (the _q8 kernels): each value rounded by int8_quantize with inv_o, 8 bytes a lane.
template <int D, typename Y>
__device__ __forceinline__ void store_rows(RowState<D>& st, __half* so, Y* og,
                                           const AttentionStrides& os, int64_t valid, bool vec,
                                           int lane, float inv_o) {
  constexpr bool kInt8 = std::is_same_v<Y, int8_t>;
  // Staging row pitch in elements of Y (the same bytes as the Q tile's rows).
  constexpr int kPitch = kInt8 ? 2 * (D + kPad) : D + kPad;
  Y* sy = reinterpret_cast<Y*>(so);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float total = st.sum[r];
    total += __shfl_xor_sync(0xffffffffu, total, 1);
    total += __shfl_xor_sync(0xffffffffu, total, 2);
    const float inv = total > 0.f ? 1.f / total : 0.f;  // 0: every key masked out
    const int row = lane / 4 + 8 * r;
#pragma unroll
    for (int d = 0; d < D / 8; ++d) {
      const float a = st.o[d][2 * r] * inv, b = st.o[d][2 * r + 1] * inv;
      Y* at = sy + row * kPitch + d * 8 + (lane % 4) * 2;
      if constexpr (kInt8) {
        at[0] = int8_quantize(a, inv_o);
        at[1] = int8_quantize(b, inv_o);
      } else {
        *reinterpret_cast<uint32_t*>(at) = pack_half2(a, b);
      }
    }
  }
  __syncwarp();
  constexpr int kChunks = D / 8;
  for (int e = lane; e < 16 * kChunks; e += 32) {
    const int r = e / kChunks, c = (e % kChunks) * 8;
    if (r >= valid) continue;
    const Y* src = sy + r * kPitch + c;
    Y* dst = og + r * os.seq + c;
    if (vec) {
      if constexpr (kInt8)
        *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(src);
      else
        *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
    } else {
#pragma unroll
      for (int k = 0; k < 8; ++k) dst[k] = src[k];
    }
  }
}

// The _k2 kernels' end of a query tile: the second warp of each 16 rows hands its softmax state
// (O, running max and sum, lane by lane: both warps' lanes hold the same rows and columns)
// through shared memory `buf` (the K/V tiles', free by then) to the first, which rescales both
// to the larger maximum and adds them (a row no key reached in either keeps max -inf, sum 0).
// Ends with every warp past the barrier; the caller's next barrier guards `buf`'s reuse.
template <int D, int BM>
__device__ __forceinline__ void merge_halves(RowState<D>& st, float* buf, int warp, int half,
                                             int lane) {
  constexpr int kFields = D / 2 + 4;
  float* mine = buf + warp * kFields * 32 + lane;  // field f at mine[f * 32]
  if (half == 1) {
#pragma unroll
    for (int d = 0; d < D / 8; ++d)
#pragma unroll
      for (int e = 0; e < 4; ++e) mine[(d * 4 + e) * 32] = st.o[d][e];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      mine[(D / 2 + r) * 32] = st.max[r];
      mine[(D / 2 + 2 + r) * 32] = st.sum[r];
    }
  }
  __syncthreads();
  if (half != 0) return;
  const float neg_inf = -__int_as_float(0x7f800000);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float m1 = mine[(D / 2 + r) * 32], s1 = mine[(D / 2 + 2 + r) * 32];
    const float m = fmaxf(st.max[r], m1);
    const float c0 = m == neg_inf ? 0.f : exp2f((st.max[r] - m) * kLog2e);
    const float c1 = m == neg_inf ? 0.f : exp2f((m1 - m) * kLog2e);
    st.max[r] = m;
    st.sum[r] = st.sum[r] * c0 + s1 * c1;
#pragma unroll
    for (int d = 0; d < D / 8; ++d)
#pragma unroll
      for (int c = 0; c < 2; ++c)
        st.o[d][2 * r + c] = st.o[d][2 * r + c] * c0 + mine[(d * 4 + 2 * r + c) * 32] * c1;
  }
}

// One CTA: query tiles, heads and batches grid-stride (gridDim x, y, z), so any grid is safe.
// A launch whose params disagree with the variant (head dim, block) computes nothing.
// KS 2 (the _k2 kernels): two warps for each 16 query rows, each taking one of every two key
// tiles (a step loads 2 x 64 keys), their softmax states merged through shared memory at the
// end: half the chain of dependent math a warp walks, for launches of fewer CTAs than SMs
// (one warp a scheduler is latency-bound: ncu, ViT-B at batch 1, tests/perf/RESULTS.md).
template <int D, int BM, typename Y = __half, int KS = 1>
__device__ __forceinline__ void attention(const StepPointers& ptrs, const AttentionParams& p) {
  constexpr int kThreads = BM * 2 * KS, kLd = D + kPad, kStep = kBN * KS;
  extern __shared__ __align__(16) unsigned char smem[];
  __half* sq = reinterpret_cast<__half*>(smem);
  __half* sk = sq + BM * kLd;
  __half* sv = sk + kStep * kLd;
  if (p.head_dim != D || blockDim.x != kThreads || blockDim.y != 1 || blockDim.z != 1) return;
  constexpr bool kInt8 = std::is_same_v<Y, int8_t>;
  if (kInt8 != (p.inv_scale_input > 0) || p.inv_scale_input >= kMaxStepInputs) return;
  const float inv_o = kInt8 ? *static_cast<const float*>(ptrs.in[p.inv_scale_input]) : 0.f;

  const auto* Q = static_cast<const __half*>(ptrs.in[0]) + p.q.offset;
  const auto* K = static_cast<const __half*>(ptrs.in[1]) + p.k.offset;
  const auto* V = static_cast<const __half*>(ptrs.in[2]) + p.v.offset;
  const auto* M = p.has_mask ? static_cast<const __half*>(ptrs.in[3]) : nullptr;
  auto* O = static_cast<Y*>(ptrs.out[0]) + p.o.offset;
  // O's rows: 16-byte (Float16) or 8-byte (Int8) chunks where the start and strides allow.
  const bool vec_q = rows_aligned(Q, p.q), vec_k = rows_aligned(K, p.k),
             vec_v = rows_aligned(V, p.v),
             vec_o = reinterpret_cast<uintptr_t>(O) % (8 * sizeof(Y)) == 0 && p.o.batch % 8 == 0 &&
                     p.o.head % 8 == 0 && p.o.seq % 8 == 0;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  // The warp's 16 query rows (warp) and its key tile of each step (half).
  const int warp = KS == 1 ? static_cast<int>(threadIdx.x) / 32
                            : static_cast<int>(threadIdx.x) / 32 % (BM / 16);
  const int half = KS == 1 ? 0 : static_cast<int>(threadIdx.x) / 32 / (BM / 16);
  const float neg_inf = -__int_as_float(0x7f800000);

  for (int64_t b = blockIdx.z; b < p.batch; b += gridDim.z)
    for (int64_t h = blockIdx.y; h < p.heads; h += gridDim.y)
      for (int64_t m0 = static_cast<int64_t>(blockIdx.x) * BM; m0 < p.seq_q;
           m0 += static_cast<int64_t>(gridDim.x) * BM) {
        const __half* qg = Q + b * p.q.batch + h * p.q.head + m0 * p.q.seq;
        const __half* kg = K + b * p.k.batch + h * p.k.head;
        const __half* vg = V + b * p.v.batch + h * p.v.head;
        const __half* mb = M != nullptr ? M + b * p.mask_batch + h * p.mask_head : nullptr;
        // Causal: no key past the tile's last query row contributes.
        const int64_t keys = p.causal ? min(p.seq_kv, m0 + BM) : p.seq_kv;
        const int tiles = static_cast<int>((keys + kStep - 1) / kStep);

        __syncthreads();  // the previous tile's output staging is done with sq
        load_rows<BM, D, kThreads>(sq, qg, p.q.seq, p.seq_q - m0, vec_q);
        if (tiles > 0) load_rows<kStep, D, kThreads>(sk, kg, p.k.seq, p.seq_kv, vec_k);
        cp_async_commit();

        RowState<D> st;
#pragma unroll
        for (int d = 0; d < D / 8; ++d) st.o[d][0] = st.o[d][1] = st.o[d][2] = st.o[d][3] = 0.f;
        st.max[0] = st.max[1] = neg_inf;
        st.sum[0] = st.sum[1] = 0.f;
        uint32_t qf[D / 16][4];
        const int64_t row0 = m0 + warp * 16 + lane / 4;

        for (int t = 0; t < tiles; ++t) {
          const int64_t n0 = static_cast<int64_t>(t) * kStep;
          load_rows<kStep, D, kThreads>(sv, vg + n0 * p.v.seq, p.v.seq, p.seq_kv - n0, vec_v);
          cp_async_commit();
          cp_async_wait<1>();
          __syncthreads();  // Q (first tile) and K tile t are in
          if (t == 0) {
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk)
              ldmatrix_x4(qf[kk], sq + (warp * 16 + lane % 16) * kLd + kk * 16 + (lane / 16) * 8);
          }
          float s[kBN / 8][4];
          scores_tile<D>(s, qf, sk + half * kBN * kLd, lane);
          softmax_tile<D>(s, st, p, mb, row0, n0 + half * kBN, lane);
          __syncthreads();  // every warp is done with K tile t
          if (t + 1 < tiles)
            load_rows<kStep, D, kThreads>(sk, kg + (n0 + kStep) * p.k.seq, p.k.seq,
                                          p.seq_kv - n0 - kStep, vec_k);
          cp_async_commit();
          cp_async_wait<1>();
          __syncthreads();  // V tile t is in
          accumulate_pv<D>(st, s, sv + half * kBN * kLd, lane);
          __syncthreads();  // every warp is done with V tile t
        }
        cp_async_wait<0>();
        __syncthreads();  // nothing in flight into sq (a tile without keys)
        if constexpr (KS == 2) {
          merge_halves<D, BM>(st, reinterpret_cast<float*>(sk), warp, half, lane);
          if (half != 0) continue;
        }
        const int64_t first = m0 + warp * 16;
        if (first < p.seq_q) {
          Y* og = O + b * p.o.batch + h * p.o.head + first * p.o.seq;
          store_rows<D, Y>(st, sq + warp * 16 * kLd, og, p.o, p.seq_q - first, vec_o, lane,
                           inv_o);
        }
      }
}

}  // namespace
}  // namespace jetplan::kernels::cuda::attention

#define JP_ATTENTION_KERNEL(d, m, ks, sfx)                                                     \
  extern "C" __global__ void __launch_bounds__(m * 2 * ks) jp_attention_f16_d##d##_m##m##sfx(     \
      jetplan::kernels::cuda::StepPointers ptrs, const jetplan::kernels::AttentionParams p) {   \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();                  \
    jetplan::kernels::cuda::attention::attention<d, m, __half, ks>(ptrs, p);                    \
  }                                                                                              \
  extern "C" __global__ void __launch_bounds__(m * 2 * ks) jp_attention_q8_f16_d##d##_m##m##sfx(  \
      jetplan::kernels::cuda::StepPointers ptrs, const jetplan::kernels::AttentionParams p) {   \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();                  \
    jetplan::kernels::cuda::attention::attention<d, m, int8_t, ks>(ptrs, p);                    \
  }
JP_ATTENTION_KERNEL(32, 64, 1, )
JP_ATTENTION_KERNEL(64, 64, 1, )
JP_ATTENTION_KERNEL(80, 64, 1, )
JP_ATTENTION_KERNEL(96, 64, 1, )
JP_ATTENTION_KERNEL(128, 64, 1, )
JP_ATTENTION_KERNEL(32, 128, 1, )
JP_ATTENTION_KERNEL(64, 128, 1, )
JP_ATTENTION_KERNEL(80, 128, 1, )
JP_ATTENTION_KERNEL(96, 128, 1, )
JP_ATTENTION_KERNEL(128, 128, 1, )
JP_ATTENTION_KERNEL(32, 64, 2, _k2)
JP_ATTENTION_KERNEL(64, 64, 2, _k2)
JP_ATTENTION_KERNEL(80, 64, 2, _k2)
JP_ATTENTION_KERNEL(96, 64, 2, _k2)
JP_ATTENTION_KERNEL(128, 64, 2, _k2)
#undef JP_ATTENTION_KERNEL
