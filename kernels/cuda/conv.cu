// Conv on the GPU, channels_last FP16 (NHWC activations, weights [Cout, *kernel, Cin / groups]),
// FP32 accumulation, y = act(conv + bias + residual). Twin: kernels/cpu/conv.cc.
//
//   jp_conv_igemm_<BM>x<BN>_f16       implicit GEMM on tensor cores (mma.sync m16n8k16, ldmatrix,
//                                     cp.async multi-stage pipeline), 2-D, groups 1, Cin % 8 == 0.
//                                     M = N*OH*OW rows (output pixels), N = Cout, K = KH*KW*Cin:
//                                     NHWC weights are already the [Cout, K] row-major B matrix.
//   jp_conv_igemm_32x64k64_f16        32x64 tiles with 64 K a stage: half the pipeline steps, for
//                                     latency-bound small-M layers with long K.
//   jp_conv_igemm_64x64_anyc_f16      the same for any Cin (element-wise loads into shared memory).
//   jp_conv_depthwise_f16             groups == Cin == Cout, 2-D.
//   jp_conv_direct_f16                everything else (grouped, 1-D/3-D): one thread per output.
//
// Serial split-K (the igemm variants): gridDim.z slices of K; each CTA stores its FP32 partial
// tile in the workspace, counts its arrival (counters after the partials, zeroed by the runtime:
// zero_workspace), and the last CTA of a tile sums the slices in slice order (deterministic) and
// runs the epilogue. It resets the counter, so back-to-back launches also work without a memset.
#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/conv.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {


__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The 2-D geometry the igemm and depthwise kernels use (rank 1 maps to H = 1).
struct Geo2 {
  int H, W, C, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw;
};
__device__ __forceinline__ Geo2 geo2(const ConvParams& p) {
  Geo2 g;
  const bool r1 = p.spatial_rank == 1;
  // One window field's (H, W) pair: rank 1 has only W, and H is `h1` (1, or 0 for a padding).
  const auto hw = [r1](const int64_t* field, int h1, int* h, int* w) {
    *h = r1 ? h1 : int(field[0]);
    *w = int(field[r1 ? 0 : 1]);
  };
  hw(p.in_size, 1, &g.H, &g.W);
  hw(p.out_size, 1, &g.OH, &g.OW);
  hw(p.kernel, 1, &g.KH, &g.KW);
  hw(p.stride, 1, &g.sh, &g.sw);
  hw(p.dilation, 1, &g.dh, &g.dw);
  hw(p.pad_begin, 0, &g.ph, &g.pw);
  g.C = int(p.in_channels);
  return g;
}

__device__ __forceinline__ const __half* residual_ptr(const StepPointers& ptrs,
                                                      const ConvParams& p) {
  return p.has_residual ? static_cast<const __half*>(ptrs.in[p.has_bias ? 3 : 2]) : nullptr;
}

// A conv writing a Concat along channels in place stores into a channel slice of a wider y
// (ConvParams::y_channels, y_channel_offset; never with a residual).
__device__ __forceinline__ bool y_slice(const ConvParams& p) {
  return p.y_channel_offset != 0 || (p.y_channels != 0 && p.y_channels != p.out_channels);
}
// Where the dense NHWC output element i (channel c) lives in y.
__device__ __forceinline__ int64_t y_index(const ConvParams& p, int64_t i, int64_t c) {
  return y_slice(p) ? (i / p.out_channels) * p.y_channels + p.y_channel_offset + c : i;
}

// yi: the element's index in the dense output (the residual's layout).
__device__ __forceinline__ float epilogue(const ConvParams& p, const __half* bias,
                                          const __half* res, int64_t yi, int oc, float v) {
  if (p.has_bias) v += __half2float(bias[oc]);
  if (p.has_residual) v += __half2float(res[yi]);
  return activation_value(p.act, v);
}

// ------------------------------------------------------------------------ implicit GEMM

// BK: K per pipeline stage. Shared rows are BK + 8 halves (80 or 144 bytes): the 8 rows of each
// ldmatrix land in distinct 16-byte bank groups.
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, bool VEC>
struct Igemm {
  static constexpr bool kVec = VEC;
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kPitch = BK + 8;
  static constexpr int kThreads = WARPS_M * WARPS_N * 32;
  static constexpr int kWM = BM / WARPS_M, kWN = BN / WARPS_N;
  static constexpr int kMI = kWM / 16, kNI = kWN / 8;
  static constexpr int kAChunks = BM * (kBK / 8) / kThreads;  // 16-byte chunks per thread
  static constexpr int kBChunks = BN * (kBK / 8) / kThreads;
  static constexpr int kStageHalves = (BM + BN) * kPitch;
  static constexpr int kSharedBytes = STAGES * kStageHalves * 2;
  static_assert(kSharedBytes <= 100 * 1024, "fits every supported SM");
  static_assert(kAChunks >= 1 && kBChunks >= 1 && kNI % 2 == 0, "tile shape");
};

// The output pixels whose A rows a thread loads, fixed for the whole K loop: batch entry n, the
// receptive field's top-left input position (ih, iw), and ok = the row is inside M.
template <int CHUNKS>
struct IgemmRows {
  int n[CHUNKS], ih[CHUNKS], iw[CHUNKS];
  bool ok[CHUNKS];
};

// One pipeline stage's loads: K tile kt of A (the im2col rows of x) into sa, of B (the rows of
// w, already [Cout, K]) after it. VEC: 16-byte cp.async chunks (Cin % 8 == 0: a chunk never
// straddles a (kh, kw) boundary); otherwise element-wise loads through registers. Each thread
// loads K chunk j of its rows.
template <typename T>
__device__ __forceinline__ void igemm_load_tile(__half* sa, int kt, const Geo2& g, const __half* x,
                                                const __half* w, int N, int K, int n0, int tid,
                                                int j, const IgemmRows<T::kAChunks>& a) {
  __half* sb = sa + T::kBM * T::kPitch;
  const int kbase = kt * T::kBK + j * 8;
  if (T::kVec) {
    const bool k_ok = kbase < K;
    const int c = k_ok ? kbase % g.C : 0;
    const int rs = k_ok ? kbase / g.C : 0;
    const int kh = rs / g.KW, kw = rs - kh * g.KW;
#pragma unroll
    for (int i = 0; i < T::kAChunks; ++i) {
      const int row = tid / (T::kBK / 8) + i * (T::kThreads / (T::kBK / 8));
      const int ih = a.ih[i] + kh * g.dh, iw = a.iw[i] + kw * g.dw;
      const bool ok = k_ok && a.ok[i] && ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
      const __half* src =
          ok ? x + ((int64_t(a.n[i]) * g.H + ih) * g.W + iw) * g.C + c : x;
      cp_async16(smem_u32(sa + row * T::kPitch + j * 8), src, ok);
    }
#pragma unroll
    for (int i = 0; i < T::kBChunks; ++i) {
      const int row = tid / (T::kBK / 8) + i * (T::kThreads / (T::kBK / 8));
      const bool ok = k_ok && n0 + row < N;
      const __half* src = ok ? w + int64_t(n0 + row) * K + kbase : w;
      cp_async16(smem_u32(sb + row * T::kPitch + j * 8), src, ok);
    }
  } else {
    int cs[8], khs[8], kws[8];
    bool kok[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const int k = kbase + e;
      kok[e] = k < K;
      const int kk = kok[e] ? k : 0;
      cs[e] = kk % g.C;
      const int rs = kk / g.C;
      khs[e] = rs / g.KW;
      kws[e] = rs - khs[e] * g.KW;
    }
#pragma unroll
    for (int i = 0; i < T::kAChunks; ++i) {
      const int row = tid / (T::kBK / 8) + i * (T::kThreads / (T::kBK / 8));
      __align__(16) __half v[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const int ih = a.ih[i] + khs[e] * g.dh, iw = a.iw[i] + kws[e] * g.dw;
        const bool ok = kok[e] && a.ok[i] && ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
        v[e] = ok ? x[((int64_t(a.n[i]) * g.H + ih) * g.W + iw) * g.C + cs[e]] : __half(0.f);
      }
      *reinterpret_cast<uint4*>(sa + row * T::kPitch + j * 8) = *reinterpret_cast<uint4*>(v);
    }
#pragma unroll
    for (int i = 0; i < T::kBChunks; ++i) {
      const int row = tid / (T::kBK / 8) + i * (T::kThreads / (T::kBK / 8));
      __align__(16) __half v[8];
#pragma unroll
      for (int e = 0; e < 8; ++e)
        v[e] = (kok[e] && n0 + row < N) ? w[int64_t(n0 + row) * K + kbase + e] : __half(0.f);
      *reinterpret_cast<uint4*>(sb + row * T::kPitch + j * 8) = *reinterpret_cast<uint4*>(v);
    }
  }
}

// Serial split-K, after the K loop: the CTA stores its FP32 partial tile, counts its arrival,
// and the last CTA of the tile to arrive sums every slice into acc (the epilogue runs there
// only). Returns whether this CTA is that last one.
template <typename T>
__device__ __forceinline__ bool igemm_split_k(float (&acc)[T::kMI][T::kNI][4],
                                              const StepPointers& ptrs, int splits,
                                              uint64_t tiles, int tid) {
  constexpr int kAcc = T::kMI * T::kNI * 4;
  float* ws = static_cast<float*>(ptrs.workspace);
  const uint64_t tile = uint64_t(blockIdx.y) * gridDim.x + blockIdx.x;
  uint32_t* counters = reinterpret_cast<uint32_t*>(ws + tiles * splits * T::kBM * T::kBN);
  float* mine = ws + (blockIdx.z * tiles + tile) * (T::kBM * T::kBN);
#pragma unroll
  for (int a = 0; a < T::kMI; ++a)
#pragma unroll
    for (int b = 0; b < T::kNI; ++b)
#pragma unroll
      for (int c = 0; c < 4; ++c) __stcg(mine + ((a * T::kNI + b) * 4 + c) * T::kThreads + tid, acc[a][b][c]);
  __threadfence();
  __syncthreads();
  __shared__ uint32_t last;
  if (tid == 0) last = atomicAdd(counters + tile, 1u) == uint32_t(splits - 1);
  __syncthreads();
  if (!last) return false;
  __threadfence();
  // Slice order for every element (so the bits do not depend on which CTA came last); the
  // loads of one slice are independent, so they are all in flight at once.
#pragma unroll
  for (int a = 0; a < T::kMI; ++a)
#pragma unroll
    for (int b = 0; b < T::kNI; ++b)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[a][b][c] = 0.f;
  for (int z = 0; z < splits; ++z) {
    const float* slice = ws + (uint64_t(z) * tiles + tile) * (T::kBM * T::kBN) + tid;
#pragma unroll
    for (int a = 0; a < T::kMI; ++a)
#pragma unroll
      for (int b = 0; b < T::kNI; ++b)
#pragma unroll
        for (int c = 0; c < 4; ++c)
          acc[a][b][c] += __ldcg(slice + ((a * T::kNI + b) * 4 + c) * T::kThreads);
  }
  static_assert(kAcc > 0, "");
  if (tid == 0) counters[tile] = 0;
  return true;
}

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, bool VEC>
__device__ __forceinline__ void igemm(const StepPointers& ptrs, const ConvParams& p) {
  using T = Igemm<BM, BN, BK, WARPS_M, WARPS_N, STAGES, VEC>;
  constexpr int kBK = T::kBK, kPitch = T::kPitch;
  extern __shared__ __align__(16) __half smem[];
  // A plan is untrusted: a kernel named for a step it does not fit computes nothing.
  if (blockDim.x != T::kThreads || !p.channels_last || p.spatial_rank > 2 || p.groups != 1 ||
      (VEC && p.in_channels % 8 != 0) ||
      p.batch * p.out_size[0] * p.out_size[1] >= (int64_t{1} << 31) ||
      p.out_channels >= (int64_t{1} << 31) ||
      p.kernel[0] * p.kernel[1] * p.in_channels >= (int64_t{1} << 31))
    return;
  const Geo2 g = geo2(p);
  const __half* x = static_cast<const __half*>(ptrs.in[0]);
  const __half* w = static_cast<const __half*>(ptrs.in[1]);
  const __half* bias = p.has_bias ? static_cast<const __half*>(ptrs.in[2]) : nullptr;
  const __half* res = residual_ptr(ptrs, p);
  __half* y = static_cast<__half*>(ptrs.out[0]);
  const int M = int(p.batch) * g.OH * g.OW;
  const int N = int(p.out_channels);
  const int K = g.KH * g.KW * g.C;
  const int KT = (K + kBK - 1) / kBK;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;

  // Split-K range of this CTA.
  const int splits = gridDim.z;
  const int per = (KT + splits - 1) / splits;
  const int kt_begin = min(KT, int(blockIdx.z) * per);
  const int kt_end = min(KT, kt_begin + per);
  const uint64_t tiles = uint64_t(gridDim.x) * gridDim.y;
  if (splits > 1 && (ptrs.workspace == nullptr ||
                     ptrs.workspace_bytes < tiles * (uint64_t(splits) * BM * BN * 4 + 4)))
    return;  // a plan with too little workspace computes nothing rather than overrun it

  // Rows this thread loads for A: fixed output pixels, K chunk j fixed per thread.
  const int j = tid % (kBK / 8);
  IgemmRows<T::kAChunks> rows;
#pragma unroll
  for (int i = 0; i < T::kAChunks; ++i) {
    const int m = m0 + tid / (kBK / 8) + i * (T::kThreads / (kBK / 8));
    rows.ok[i] = m < M;
    const int mm = rows.ok[i] ? m : 0;
    const int ow = mm % g.OW, t = mm / g.OW;
    rows.ih[i] = (t % g.OH) * g.sh - g.ph;
    rows.iw[i] = ow * g.sw - g.pw;
    rows.n[i] = t / g.OH;
  }

  auto load_tile = [&](int stage, int kt) {
    igemm_load_tile<T>(smem + stage * T::kStageHalves, kt, g, x, w, N, K, n0, tid, j, rows);
  };

  float acc[T::kMI][T::kNI][4];
#pragma unroll
  for (int a = 0; a < T::kMI; ++a)
#pragma unroll
    for (int b = 0; b < T::kNI; ++b)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[a][b][c] = 0.f;

  const int wm = (warp / WARPS_N) * T::kWM, wn = (warp % WARPS_N) * T::kWN;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (kt_begin + s < kt_end) load_tile(s, kt_begin + s);
    cp_async_commit();
  }
  for (int kt = kt_begin; kt < kt_end; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = kt + STAGES - 1;
    if (next < kt_end) load_tile((next - kt_begin) % STAGES, next);
    cp_async_commit();
    const __half* sa = smem + ((kt - kt_begin) % STAGES) * T::kStageHalves;
    const __half* sb = sa + BM * kPitch;
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      uint32_t af[T::kMI][4], bf[T::kNI / 2][4];
#pragma unroll
      for (int mi = 0; mi < T::kMI; ++mi)
        ldmatrix_x4(smem_u32(sa + (wm + mi * 16 + (lane & 15)) * kPitch + kk + (lane >> 4) * 8),
                    af[mi]);
#pragma unroll
      for (int np = 0; np < T::kNI / 2; ++np)
        ldmatrix_x4(smem_u32(sb + (wn + np * 16 + (lane & 7) + (lane >> 4) * 8) * kPitch + kk +
                             ((lane >> 3) & 1) * 8),
                    bf[np]);
#pragma unroll
      for (int mi = 0; mi < T::kMI; ++mi)
#pragma unroll
        for (int ni = 0; ni < T::kNI; ++ni)
          mma16816(acc[mi][ni], af[mi], bf[ni / 2][(ni & 1) * 2], bf[ni / 2][(ni & 1) * 2 + 1]);
    }
  }
  cp_async_wait<0>();

  if (splits > 1 && !igemm_split_k<T>(acc, ptrs, splits, tiles, tid)) return;

  // Epilogue: bias, residual, activation, FP16 store (pairs of channels when aligned), into a
  // channel slice of y when the conv writes a Concat in place.
  const bool slice = y_slice(p);
  const int64_t ldy = slice ? p.y_channels : N, y0 = slice ? p.y_channel_offset : 0;
  const bool pairs = (N & 1) == 0 && (ldy & 1) == 0 && (y0 & 1) == 0;
#pragma unroll
  for (int mi = 0; mi < T::kMI; ++mi)
#pragma unroll
    for (int ni = 0; ni < T::kNI; ++ni)
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        const int m = m0 + wm + mi * 16 + (lane >> 2) + hr * 8;
        const int n = n0 + wn + ni * 8 + (lane & 3) * 2;
        if (m >= M || n >= N) continue;
        const int64_t yi = int64_t(m) * N + n, yo = int64_t(m) * ldy + y0 + n;
        const float v0 = epilogue(p, bias, res, yi, n, acc[mi][ni][hr * 2]);
        if (pairs) {
          const float v1 = epilogue(p, bias, res, yi + 1, n + 1, acc[mi][ni][hr * 2 + 1]);
          *reinterpret_cast<__half2*>(y + yo) = __floats2half2_rn(v0, v1);
        } else {
          y[yo] = __float2half_rn(v0);
          if (n + 1 < N)
            y[yo + 1] = __float2half_rn(epilogue(p, bias, res, yi + 1, n + 1, acc[mi][ni][hr * 2 + 1]));
        }
      }
}

// ------------------------------------------------------------------------ depthwise

// One thread per (output pixel, channel): consecutive threads take consecutive channels, so
// every load and store is coalesced over NHWC. KH/KW > 0: compile-time kernel size.
template <int KH, int KW>
__device__ __forceinline__ void depthwise(const StepPointers& ptrs, const ConvParams& p) {
  const Geo2 g = geo2(p);
  const __half* x = static_cast<const __half*>(ptrs.in[0]);
  const __half* w = static_cast<const __half*>(ptrs.in[1]);
  const __half* bias = p.has_bias ? static_cast<const __half*>(ptrs.in[2]) : nullptr;
  const __half* res = residual_ptr(ptrs, p);
  __half* y = static_cast<__half*>(ptrs.out[0]);
  const int kh_n = KH > 0 ? KH : g.KH, kw_n = KW > 0 ? KW : g.KW;
  const int64_t total = p.batch * g.OH * g.OW * g.C;
  for (int64_t i = global_thread(); i < total; i += global_threads()) {
    const int c = int(i % g.C);
    int64_t t = i / g.C;
    const int ow = int(t % g.OW);
    t /= g.OW;
    const int oh = int(t % g.OH);
    const int64_t n = t / g.OH;
    const __half* wc = w + int64_t(c) * kh_n * kw_n;
    float acc = 0.f;
#pragma unroll
    for (int kh = 0; kh < kh_n; ++kh) {
      const int ih = oh * g.sh - g.ph + kh * g.dh;
      if (ih < 0 || ih >= g.H) continue;
#pragma unroll
      for (int kw = 0; kw < kw_n; ++kw) {
        const int iw = ow * g.sw - g.pw + kw * g.dw;
        if (iw < 0 || iw >= g.W) continue;
        acc += __half2float(x[((n * g.H + ih) * g.W + iw) * g.C + c]) *
               __half2float(wc[kh * kw_n + kw]);
      }
    }
    y[y_index(p, i, c)] = __float2half_rn(epilogue(p, bias, res, i, c, acc));
  }
}

// ------------------------------------------------------------------------ direct (any case)

__device__ void direct(const StepPointers& ptrs, const ConvParams& p) {
  const __half* x = static_cast<const __half*>(ptrs.in[0]);
  const __half* w = static_cast<const __half*>(ptrs.in[1]);
  const __half* bias = p.has_bias ? static_cast<const __half*>(ptrs.in[2]) : nullptr;
  const __half* res = residual_ptr(ptrs, p);
  __half* y = static_cast<__half*>(ptrs.out[0]);
  // Rank 1 and 2 run as rank 3 with leading unit dims.
  int64_t in[3], out[3], ker[3], st[3], dil[3], pad[3];
  const int lead = 3 - p.spatial_rank;
  for (int d = 0; d < 3; ++d) {
    const int s = d - lead;
    in[d] = s < 0 ? 1 : p.in_size[s];
    out[d] = s < 0 ? 1 : p.out_size[s];
    ker[d] = s < 0 ? 1 : p.kernel[s];
    st[d] = s < 0 ? 1 : p.stride[s];
    dil[d] = s < 0 ? 1 : p.dilation[s];
    pad[d] = s < 0 ? 0 : p.pad_begin[s];
  }
  const int64_t cin_g = p.in_channels / p.groups, cout_g = p.out_channels / p.groups;
  const int64_t kvol = ker[0] * ker[1] * ker[2];
  const int64_t total = p.batch * out[0] * out[1] * out[2] * p.out_channels;
  for (int64_t i = global_thread(); i < total; i += global_threads()) {
    const int64_t oc = i % p.out_channels;
    int64_t t = i / p.out_channels;
    const int64_t o2 = t % out[2];
    t /= out[2];
    const int64_t o1 = t % out[1];
    t /= out[1];
    const int64_t o0 = t % out[0];
    const int64_t n = t / out[0];
    const int64_t ic0 = (oc / cout_g) * cin_g;
    float acc = 0.f;
    for (int64_t k0 = 0; k0 < ker[0]; ++k0) {
      const int64_t i0 = o0 * st[0] - pad[0] + k0 * dil[0];
      if (i0 < 0 || i0 >= in[0]) continue;
      for (int64_t k1 = 0; k1 < ker[1]; ++k1) {
        const int64_t i1 = o1 * st[1] - pad[1] + k1 * dil[1];
        if (i1 < 0 || i1 >= in[1]) continue;
        for (int64_t k2 = 0; k2 < ker[2]; ++k2) {
          const int64_t i2 = o2 * st[2] - pad[2] + k2 * dil[2];
          if (i2 < 0 || i2 >= in[2]) continue;
          const __half* xs = x + (((n * in[0] + i0) * in[1] + i1) * in[2] + i2) * p.in_channels + ic0;
          const __half* ws = w + (oc * kvol + (k0 * ker[1] + k1) * ker[2] + k2) * cin_g;
          for (int64_t c = 0; c < cin_g; ++c) acc += __half2float(xs[c]) * __half2float(ws[c]);
        }
      }
    }
    y[y_index(p, i, oc)] = __float2half_rn(epilogue(p, bias, res, i, int(oc), acc));
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::ConvParams;
using jetplan::kernels::cuda::StepPointers;
namespace jk = jetplan::kernels::cuda;

// Block shapes and shared memory of these rows: the rows in kernels/conv.h repeat them (STAGES * (BM + BN) *
// (BK + 8) * 2 bytes); the GPU tests launch every row with exactly those numbers.
extern "C" __global__ void __launch_bounds__(256) jp_conv_igemm_128x128_f16(StepPointers ptrs, const ConvParams p) {
  jk::igemm<128, 128, 32, 2, 4, 3, true>(ptrs, p);
}
extern "C" __global__ void __launch_bounds__(128) jp_conv_igemm_64x64_f16(StepPointers ptrs, const ConvParams p) {
  jk::igemm<64, 64, 32, 2, 2, 4, true>(ptrs, p);
}
extern "C" __global__ void __launch_bounds__(128) jp_conv_igemm_32x64_f16(StepPointers ptrs, const ConvParams p) {
  jk::igemm<32, 64, 32, 1, 4, 4, true>(ptrs, p);
}
extern "C" __global__ void __launch_bounds__(128) jp_conv_igemm_32x64k64_f16(StepPointers ptrs, const ConvParams p) {
  jk::igemm<32, 64, 64, 1, 4, 3, true>(ptrs, p);
}
extern "C" __global__ void __launch_bounds__(128) jp_conv_igemm_64x64_anyc_f16(StepPointers ptrs, const ConvParams p) {
  jk::igemm<64, 64, 32, 2, 2, 4, false>(ptrs, p);
}
extern "C" __global__ void jp_conv_depthwise_f16(StepPointers ptrs, const ConvParams p) {
  if (!p.channels_last || p.groups != p.in_channels || p.out_channels != p.in_channels ||
      p.spatial_rank > 2)
    return;  // not a step this kernel fits (an untrusted plan)
  const int kh = p.spatial_rank == 2 ? int(p.kernel[0]) : 1;
  const int kw = int(p.kernel[p.spatial_rank == 2 ? 1 : 0]);
  if (kh == 3 && kw == 3) jk::depthwise<3, 3>(ptrs, p);
  else if (kh == 5 && kw == 5) jk::depthwise<5, 5>(ptrs, p);
  else jk::depthwise<0, 0>(ptrs, p);
}
extern "C" __global__ void jp_conv_direct_f16(StepPointers ptrs, const ConvParams p) {
  if (!p.channels_last) return;  // NCHW steps are not this kernel's (an untrusted plan)
  jk::direct(ptrs, p);
}
