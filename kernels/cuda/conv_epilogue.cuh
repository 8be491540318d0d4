// The output stages of the Conv family's kernels (kernels/cuda/conv.cu): where y and the
// residual live (channel slices of a Concat written in place), the FP16 epilogue (bias,
// residual, activation) and the INT8 one (the channel epilogue's multiplier and bias, residual,
// activation, Int8 or Float16 y: kernels/int8_epilogue.h), in the forms the implicit GEMM
// (igemm_epilogue(), conv_igemm_epilogue.cuh) and the tiled depthwise kernels
// (conv_depthwise.cuh) call.
#pragma once

#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/conv.h"
#include "kernels/cuda/conv_depthwise.cuh"
#include "kernels/cuda/conv_igemm_epilogue.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/int8_epilogue.h"

namespace jetplan::kernels::cuda {
namespace {

__device__ __forceinline__ const __half* residual_ptr(const StepPointers& ptrs,
                                                      const ConvParams& p) {
  return p.has_residual ? static_cast<const __half*>(ptrs.in[p.has_bias ? 3 : 2]) : nullptr;
}

// A conv writing a Concat along channels in place stores into a channel slice of a wider y
// (ConvParams::y_channels, y_channel_offset); a residual stays dense ([N, *out, Cout]).
__device__ __forceinline__ bool y_slice(const ConvParams& p) {
  return p.y_channel_offset != 0 || (p.y_channels != 0 && p.y_channels != p.out_channels);
}
// Where the dense NHWC output element i (channel c) lives in y.
__device__ __forceinline__ int64_t y_index(const ConvParams& p, int64_t i, int64_t c) {
  return y_slice(p) ? (i / p.out_channels) * p.y_channels + p.y_channel_offset + c : i;
}

// The end of every conv epilogue: act(v + residual), or act(v) + residual where the residual
// joins after the activation (ConvParams::residual_after_act: YOLO's x + SiLU(conv(x))).
// `add` joins the residual to a value, `act` applies the activation. One call of act, whichever
// the order: with a call on each path the FP16 tiles' code grew by 44% (the activation inlined
// three times over for every kind with_activation() instantiates), and every conv of ResNet-50
// ran 5-15% slower (H100, run F of session 32).
template <typename Add, typename Act>
__device__ __forceinline__ float with_residual(const ConvParams& p, float v, Add add, Act act) {
  const bool after = p.has_residual && p.residual_after_act;
  const float a = act(p.has_residual && !after ? add(v) : v);
  return after ? add(a) : a;
}

// yi: the element's index in the dense output (the residual's layout).
__device__ __forceinline__ float epilogue(const ConvParams& p, const __half* bias,
                                          const __half* res, int64_t yi, int oc, float v) {
  if (p.has_bias) v += __half2float(bias[oc]);
  return with_residual(
      p, v, [&](float a) { return a + __half2float(res[yi]); },
      [&](float a) { return activation_value(p.act, a); });
}


// Where the igemm epilogues put output (m, n): y's row m holds ldy channels (the Concat's when
// the conv writes a channel slice of it in place, else N) and n goes to channel y0 + n.
template <typename T>
struct YSlice {
  T* y;
  int64_t ldy, y0;
  __device__ __forceinline__ int64_t at(int m, int n) const { return int64_t(m) * ldy + y0 + n; }
};
template <typename T>
__device__ __forceinline__ YSlice<T> y_slice_of(const StepPointers& ptrs, const ConvParams& p,
                                                int N) {
  const bool slice = y_slice(p);
  return {static_cast<T*>(ptrs.out[0]), slice ? p.y_channels : N, slice ? p.y_channel_offset : 0};
}


// The FP16 igemm epilogue: bias, residual, activation, FP16 store, into a channel slice of y
// when the conv writes a Concat in place; epilogue()'s operations in its order. The interface
// igemm_epilogue() (conv_igemm.cuh) calls:
//   context(ptrs, p, N)           what every output of the tile shares, read once
//   column(ctx, p, n, N)          what channels n and n + 1 share (nothing past N is read)
//   staged(p, col, e, acc)        channel n + e's accumulator with its column's part applied
//   aligned4(ctx, p, N)           every group of four channels n..n+3 (n a multiple of 4) of y
//                                 and of the residual starts on a multiple of 4 elements
//   residual<FAST>(ctx, p, ok, m, n, N, r)  the residual of output row m, channels n..n+3, as
//                                 floats
//   store4<A, FAST>(ctx, p, m, n, N, v, r)  finishes staged values v of channels n..n+3 (those
//                                 < N) and stores them
//   kExtendedActivations          whether Gelu is inlined (with_activation<true>)
// FAST: the group is inside y and aligned4() holds, so the accesses go untested.
struct EpilogueF16 {
  static constexpr bool kExtendedActivations = false;
  struct Ctx {
    const __half* bias;
    const __half* res;
    YSlice<__half> out;
  };
  static __device__ __forceinline__ bool fits(const ConvParams& p) { return !p.int8.enabled; }
  static __device__ __forceinline__ Ctx context(const StepPointers& ptrs, const ConvParams& p,
                                                int N) {
    return {p.has_bias ? static_cast<const __half*>(ptrs.in[2]) : nullptr, residual_ptr(ptrs, p),
            y_slice_of<__half>(ptrs, p, N)};
  }
  struct Col {
    float b[2];  // the bias of channels n and n + 1 (0 without one or past N)
  };
  static __device__ __forceinline__ Col column(const Ctx& c, const ConvParams& p, int n, int N) {
    Col col{{0.f, 0.f}};
    if (p.has_bias) {
      if (n < N) col.b[0] = __half2float(c.bias[n]);
      if (n + 1 < N) col.b[1] = __half2float(c.bias[n + 1]);
    }
    return col;
  }
  static __device__ __forceinline__ float staged(const ConvParams& p, const Col& col, int e,
                                                 float acc) {
    return p.has_bias ? acc + col.b[e] : acc;
  }
  static __device__ __forceinline__ bool aligned4(const Ctx& c, const ConvParams& p, int N) {
    return c.out.ldy % 4 == 0 && c.out.y0 % 4 == 0 && (!p.has_residual || N % 4 == 0);
  }
  template <bool FAST>
  static __device__ __forceinline__ void residual(const Ctx& c, const ConvParams& p, bool ok,
                                                  int m, int n, int N, float (&r)[4]) {
    if (ok && p.has_residual) load4<FAST>(c.res, int64_t(m) * N + n, N - n, r);
  }
  // A: the activation kind, or -1 (with_activation(), device_math.cuh).
  template <int A, bool FAST>
  static __device__ __forceinline__ void store4(const Ctx& c, const ConvParams& p, int m, int n,
                                                int N, float4 s, const float (&r)[4]) {
    float v[4] = {s.x, s.y, s.z, s.w};
#pragma unroll
    for (int e = 0; e < 4; ++e)
      v[e] = with_residual(
          p, v[e], [&](float a) { return a + r[e]; },
          [&](float a) { return act_value<A>(p.act, a); });
    store4_half<FAST>(c.out.y, c.out.at(m, n), N - n, v);
  }
};

// EpilogueF16 with Gelu inlined on whole tiles, for the 128x128 tiles (registers held to 128
// anyway) that run the transformer and ConvNeXt MLPs at batch 8. With Gelu inlined in every FP16
// tile, ConvNeXt-T ran 9% and ViT-B 5% faster at batch 8, but MobileNetV2 and EfficientNet-B0
// 2-5% slower: the smaller tiles took up to 7 more registers and other code for every
// activation (H200, session 18). GeluTanh (GPT-2's MLP) stays out of line: inlined beside Gelu
// it took the 128x128k64 tile, which spills already, from 52/68 to 56/84 bytes of spill
// stores/loads (sm_90 ptxas; not measured on a GPU).
struct EpilogueF16Gelu : EpilogueF16 {
  static constexpr bool kExtendedActivations = true;
};

// The INT8 igemm epilogue (kernels/int8_epilogue.h, in the CPU twin's order): the channel
// epilogue's multiplier and bias, the residual, the activation, then Int8 (Y8) or Float16.
// EpilogueF16's interface, and real() for the depthwise kernel's one element at a time.
template <bool Y8>
struct EpilogueI8 {
  static constexpr bool kExtendedActivations = false;  // INT8 plans keep the code small
  struct Ctx {
    const float* epi;
    const void* res;
    YSlice<void> out;
  };
  // The step's y and residual types are this variant's (an untrusted plan may name another).
  static __device__ __forceinline__ bool fits(const ConvParams& p) {
    return p.int8.enabled && p.int8.y_dtype == (Y8 ? DType::kInt8 : DType::kFloat16) &&
           (!p.has_residual || p.int8.residual_dtype == DType::kInt8 ||
            p.int8.residual_dtype == DType::kFloat16);
  }
  static __device__ __forceinline__ Ctx context(const StepPointers& ptrs, const ConvParams& p,
                                                int N) {
    return {static_cast<const float*>(ptrs.in[2]), p.has_residual ? ptrs.in[3] : nullptr,
            y_slice_of<void>(ptrs, p, N)};
  }
  struct Col {
    float mult[2], shift[2];  // the channel epilogue of channels n and n + 1 (0 past N)
  };
  static __device__ __forceinline__ Col column(const Ctx& c, const ConvParams&, int n, int N) {
    Col col{{0.f, 0.f}, {0.f, 0.f}};
#pragma unroll
    for (int e = 0; e < 2; ++e)
      if (n + e < N) col.mult[e] = c.epi[n + e], col.shift[e] = c.epi[N + n + e];
    return col;
  }
  static __device__ __forceinline__ float staged(const ConvParams&, const Col& col, int e,
                                                 int32_t acc) {
    return int8_real(acc, col.mult[e], col.shift[e]);
  }
  // The residual's element r (an Int8 or Float16 value as a float, exactly) joins v:
  // int8_add_residual() for Int8, an add for Float16.
  static __device__ __forceinline__ float add_residual(const ConvParams& p, float v, float r) {
    if (!p.has_residual) return v;
    return p.int8.residual_dtype == DType::kInt8
               ? int8_add_residual(v, int32_t(r), p.int8.residual_scale)
               : v + r;
  }
  // With the activation (kind A, or -1: the step's), before or after it (with_residual).
  template <int A>
  static __device__ __forceinline__ float finish(const ConvParams& p, float v, float r) {
    return with_residual(
        p, v, [&](float a) { return add_residual(p, a, r); },
        [&](float a) { return act_value<A>(p.act, a); });
  }
  static __device__ __forceinline__ bool aligned4(const Ctx& c, const ConvParams& p, int N) {
    return c.out.ldy % 4 == 0 && c.out.y0 % 4 == 0 && (!p.has_residual || N % 4 == 0);
  }
  template <bool FAST>
  static __device__ __forceinline__ void residual(const Ctx& c, const ConvParams& p, bool ok,
                                                  int m, int n, int N, float (&r)[4]) {
    if (!ok || !p.has_residual) return;
    const int64_t i = int64_t(m) * N + n;
    if (p.int8.residual_dtype == DType::kInt8)
      load4<FAST>(static_cast<const int8_t*>(c.res), i, N - n, r);
    else
      load4<FAST>(static_cast<const __half*>(c.res), i, N - n, r);
  }
  template <int A, bool FAST>
  static __device__ __forceinline__ void store4(const Ctx& c, const ConvParams& p, int m, int n,
                                                int N, float4 s, const float (&r)[4]) {
    float v[4] = {s.x, s.y, s.z, s.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = finish<A>(p, v[e], r[e]);
    const int64_t o = c.out.at(m, n);
    if (Y8) {
      int8_t q[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) q[e] = int8_quantize(v[e], p.int8.y_inv_scale);
      store4_int8<FAST>(static_cast<int8_t*>(c.out.y), o, N - n, q);
    } else {
      store4_half<FAST>(static_cast<__half*>(c.out.y), o, N - n, v);
    }
  }
  // One element (the depthwise kernel): int32 sum acc of dense element yi, channel epilogue
  // (mult, shift).
  static __device__ __forceinline__ float real(const Ctx& c, const ConvParams& p, int64_t yi,
                                               float mult, float shift, int32_t acc) {
    float r = 0.f;
    if (p.has_residual)
      r = p.int8.residual_dtype == DType::kInt8
              ? float(static_cast<const int8_t*>(c.res)[yi])
              : __half2float(static_cast<const __half*>(c.res)[yi]);
    return with_residual(
        p, int8_real(acc, mult, shift), [&](float a) { return add_residual(p, a, r); },
        [&](float a) { return activation_value(p.act, a); });
  }
};

// The output stages of the tiled depthwise kernels (conv_depthwise.cuh: Out::store of 8 channels
// c0.. of one output pixel): FP16, epilogue()'s operations; INT8, EpilogueI8's. One 16-byte
// (8-byte for Int8) store where y's channels allow, else element by element.
struct DwOutF16 {
  struct Ctx {
    const __half* bias;
    const __half* res;
    __half* y;
  };
  struct Chan {
    float bias[kDwVec];
  };
  static __device__ __forceinline__ bool fits(const ConvParams& p) { return !p.int8.enabled; }
  static __device__ __forceinline__ Ctx context(const StepPointers& ptrs, const ConvParams& p,
                                                int) {
    return {p.has_bias ? static_cast<const __half*>(ptrs.in[2]) : nullptr, residual_ptr(ptrs, p),
            static_cast<__half*>(ptrs.out[0])};
  }
  static __device__ __forceinline__ Chan channel(const Ctx& c, const ConvParams& p, int c0) {
    Chan ch;
#pragma unroll
    for (int e = 0; e < kDwVec; ++e) ch.bias[e] = p.has_bias ? __half2float(c.bias[c0 + e]) : 0.f;
    return ch;
  }
  // epilogue()'s operations in its order, the activation A (act_value).
  template <int A>
  static __device__ __forceinline__ void store(const Ctx& c, const Chan& ch, const ConvParams& p,
                                               int64_t pixel, int c0,
                                               const float (&acc)[kDwVec]) {
    const int64_t yi = pixel * p.out_channels + c0;
    float v[kDwVec];
#pragma unroll
    for (int e = 0; e < kDwVec; ++e) {
      float f = acc[e];
      if (p.has_bias) f += ch.bias[e];
      v[e] = with_residual(
          p, f, [&](float a) { return a + __half2float(c.res[yi + e]); },
          [&](float a) { return act_value<A>(p.act, a); });
    }
    store8(c.y + (y_slice(p) ? pixel * p.y_channels + p.y_channel_offset + c0 : yi), v);
  }
};
template <bool Y8>
struct DwOutI8 {
  using Epi = EpilogueI8<Y8>;
  using Ctx = typename Epi::Ctx;
  struct Chan {
    float mult[kDwVec], shift[kDwVec];
  };
  static __device__ __forceinline__ bool fits(const ConvParams& p) { return Epi::fits(p); }
  static __device__ __forceinline__ Ctx context(const StepPointers& ptrs, const ConvParams& p,
                                                int C) {
    return Epi::context(ptrs, p, C);
  }
  static __device__ __forceinline__ Chan channel(const Ctx& c, const ConvParams& p, int c0) {
    Chan ch;
#pragma unroll
    for (int e = 0; e < kDwVec; ++e)
      ch.mult[e] = c.epi[c0 + e], ch.shift[e] = c.epi[p.out_channels + c0 + e];
    return ch;
  }
  // Epi::real()'s operations, the activation A (Epi::finish).
  template <int A>
  static __device__ __forceinline__ void store(const Ctx& c, const Chan& ch, const ConvParams& p,
                                               int64_t pixel, int c0,
                                               const int32_t (&acc)[kDwVec]) {
    const int64_t yi = pixel * p.out_channels + c0;
    float v[kDwVec];
#pragma unroll
    for (int e = 0; e < kDwVec; ++e) {
      float r = 0.f;
      if (p.has_residual)
        r = p.int8.residual_dtype == DType::kInt8
                ? float(static_cast<const int8_t*>(c.res)[yi + e])
                : __half2float(static_cast<const __half*>(c.res)[yi + e]);
      v[e] = Epi::template finish<A>(p, int8_real(acc[e], ch.mult[e], ch.shift[e]), r);
    }
    const int64_t yo = c.out.at(int(pixel), c0);
    if (Y8) {
      __align__(8) int8_t q[kDwVec];
#pragma unroll
      for (int e = 0; e < kDwVec; ++e) q[e] = int8_quantize(v[e], p.int8.y_inv_scale);
      store8(static_cast<int8_t*>(c.out.y) + yo, q);
    } else {
      store8(static_cast<__half*>(c.out.y) + yo, v);
    }
  }
};

}  // namespace
}  // namespace jetplan::kernels::cuda
