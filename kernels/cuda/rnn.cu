// ONNX RNN, LSTM and GRU on the GPU (FP16 storage or FP32; FP32 arithmetic and state), every
// feature of the CPU twin kernels/cpu/rnn.cc: directions, sequence_lens, initial states,
// peepholes, clip, input_forget, linear_before_reset, every RnnActivationKind, both layouts.
// One 256-thread block per (direction, batch entry) steps through time; the gate GEMVs run one
// warp per row (lanes strided over the row, a fixed shuffle tree: deterministic), and the state
// lives in dynamic shared memory: h [H], c [H], gx [G*H], gh [G*H], tmp [H], x_t [I] floats
// (rnn_shared_floats in rnn_select.cc). A launch with less dynamic shared memory computes nothing.
// Inputs: x, w, r, then b, sequence_lens (int32), initial_h, initial_c, peepholes where present;
// outputs: y, y_h, y_c where present (the runtime's order). No workspace.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/params_seq.h"

namespace jetplan::kernels::cuda {
namespace {

__device__ __forceinline__ float rnn_act(const RnnActivation& a, float x) {
  switch (a.kind) {
    case RnnActivationKind::kSigmoid: return 1.f / (1.f + expf(-x));
    case RnnActivationKind::kTanh: return tanhf(x);
    case RnnActivationKind::kRelu: return x < 0.f ? 0.f : x;
    case RnnActivationKind::kLeakyRelu: return x >= 0.f ? x : a.alpha * x;
    case RnnActivationKind::kThresholdedRelu: return x > a.alpha ? x : 0.f;
    case RnnActivationKind::kScaledTanh: return a.alpha * tanhf(a.beta * x);
    case RnnActivationKind::kHardSigmoid: return fminf(fmaxf(a.alpha * x + a.beta, 0.f), 1.f);
    case RnnActivationKind::kElu: return x >= 0.f ? x : a.alpha * expm1f(x);
    case RnnActivationKind::kSoftsign: return x / (1.f + fabsf(x));
    case RnnActivationKind::kSoftplus: return x > 0.f ? x + log1pf(expf(-x)) : log1pf(expf(x));
    case RnnActivationKind::kAffine: return a.alpha * x + a.beta;
  }
  return x;
}

__device__ __forceinline__ uint32_t dynamic_smem_bytes() {
  uint32_t v;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(v));
  return v;
}

// out[row] = (bias ? bias[row] : 0) + m[row, :] . v for row in [row0, row1): one warp per row.
template <typename T>
__device__ void gemv_rows(const T* m, const T* bias, const float* v, int64_t cols, int64_t row0,
                          int64_t row1, float* out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int64_t row = row0 + warp; row < row1; row += warps) {
    const T* mr = m + row * cols;
    float acc = 0.f;
    for (int64_t k = lane; k < cols; k += 32) acc = fmaf(load_float(mr, k), v[k], acc);
    for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) out[row] = acc + (bias != nullptr ? load_float(bias, row) : 0.f);
  }
}

template <typename T>
__device__ void rnn(const StepPointers& ptrs, const RnnParams& p) {
  extern __shared__ float smem[];
  const int64_t D = p.direction == RnnDirection::kBidirectional ? 2 : 1;
  const int64_t N = p.batch, S = p.seq_length;
  const int64_t H = p.hidden_size, I = p.input_size;
  // rnn_gate_count (host constexpr): RNN 1, LSTM 4, GRU 3.
  const int G = p.cell == RnnCell::kRnn    ? 1
                : p.cell == RnnCell::kLstm ? 4
                : p.cell == RnnCell::kGru  ? 3
                                           : 0;
  const int64_t GH = G * H;
  if (G == 0 || H < 1 || I < 1 || blockDim.x % 32 != 0) return;
  const uint64_t need = (3 * static_cast<uint64_t>(H) + 2 * static_cast<uint64_t>(GH) +
                         static_cast<uint64_t>(I)) * sizeof(float);
  if (dynamic_smem_bytes() < need) return;
  const bool lstm = p.cell == RnnCell::kLstm;
  float* h = smem;
  float* c = h + H;
  float* gx = c + H;
  float* gh = gx + GH;
  float* tmp = gh + GH;
  float* xs = tmp + H;

  int next = 3;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const T* b = p.has_bias ? static_cast<const T*>(ptrs.in[next++]) : nullptr;
  const int32_t* lens =
      p.has_sequence_lens ? static_cast<const int32_t*>(ptrs.in[next++]) : nullptr;
  const T* init_h = p.has_initial_h ? static_cast<const T*>(ptrs.in[next++]) : nullptr;
  const T* init_c = lstm && p.has_initial_c ? static_cast<const T*>(ptrs.in[next]) : nullptr;
  if (p.has_initial_c) ++next;
  const T* peep_all = lstm && p.has_peepholes ? static_cast<const T*>(ptrs.in[next]) : nullptr;
  int o = 0;
  T* y = p.has_y ? static_cast<T*>(ptrs.out[o++]) : nullptr;
  T* y_h = p.has_y_h ? static_cast<T*>(ptrs.out[o++]) : nullptr;
  T* y_c = lstm && p.has_y_c ? static_cast<T*>(ptrs.out[o]) : nullptr;

  for (int64_t pair = blockIdx.x; pair < D * N; pair += gridDim.x) {
    const int64_t d = pair / N, n = pair % N;
    const bool backwards = p.direction == RnnDirection::kReverse || d == 1;
    const RnnActivation* act = p.activations[d];
    const T* w = static_cast<const T*>(ptrs.in[1]) + d * GH * I;
    const T* r = static_cast<const T*>(ptrs.in[2]) + d * GH * H;
    const T* wb = b != nullptr ? b + d * 2 * GH : nullptr;
    const T* rb = b != nullptr ? b + d * 2 * GH + GH : nullptr;
    const T* peep = peep_all != nullptr ? peep_all + d * 3 * H : nullptr;
    int64_t len = S;
    if (lens != nullptr) {
      len = lens[n];
      len = len < 0 ? 0 : (len > S ? S : len);
    }
    const int64_t s0 = (p.batch_major ? n * D + d : d * N + n) * H;
    __syncthreads();  // the previous pair's last reads of h and c are done
    for (int64_t j = threadIdx.x; j < H; j += blockDim.x) {
      h[j] = init_h != nullptr ? load_float(init_h, s0 + j) : 0.f;
      c[j] = init_c != nullptr ? load_float(init_c, s0 + j) : 0.f;
    }
    auto f = [&](int k, float v) {
      if (p.has_clip) v = fminf(fmaxf(v, -p.clip), p.clip);
      return rnn_act(act[k], v);
    };
    for (int64_t s = 0; s < len; ++s) {
      const int64_t t = backwards ? len - 1 - s : s;
      const int64_t xo = (p.batch_major ? n * S + t : t * N + n) * I;
      for (int64_t k = threadIdx.x; k < I; k += blockDim.x) xs[k] = load_float(x, xo + k);
      __syncthreads();
      const bool gru_reset = p.cell == RnnCell::kGru && !p.linear_before_reset;
      gemv_rows(w, wb, xs, I, 0, GH, gx);
      gemv_rows(r, rb, h, H, 0, gru_reset ? 2 * H : GH, gh);
      __syncthreads();
      if (p.cell == RnnCell::kRnn) {
        for (int64_t j = threadIdx.x; j < H; j += blockDim.x) h[j] = f(0, gx[j] + gh[j]);
      } else if (lstm) {
        for (int64_t j = threadIdx.x; j < H; j += blockDim.x) {
          const float pi = peep ? load_float(peep, j) : 0.f;
          const float po = peep ? load_float(peep, H + j) : 0.f;
          const float pf = peep ? load_float(peep, 2 * H + j) : 0.f;
          const float ig = f(0, gx[j] + gh[j] + pi * c[j]);
          const float fg =
              p.input_forget ? 1.f - ig : f(0, gx[2 * H + j] + gh[2 * H + j] + pf * c[j]);
          const float cell = f(1, gx[3 * H + j] + gh[3 * H + j]);
          const float cj = fg * c[j] + ig * cell;
          c[j] = cj;
          const float og = f(0, gx[H + j] + gh[H + j] + po * cj);
          h[j] = og * rnn_act(act[2], cj);
        }
      } else {  // GRU
        for (int64_t j = threadIdx.x; j < H; j += blockDim.x) {
          gx[j] = f(0, gx[j] + gh[j]);              // z
          gx[H + j] = f(0, gx[H + j] + gh[H + j]);  // r
          tmp[j] = gx[H + j] * h[j];
        }
        if (gru_reset) {
          __syncthreads();
          gemv_rows(r, rb, tmp, H, 2 * H, 3 * H, gh);
        }
        __syncthreads();
        for (int64_t j = threadIdx.x; j < H; j += blockDim.x) {
          const float recur = gru_reset ? gh[2 * H + j] : gx[H + j] * gh[2 * H + j];
          const float cand = f(1, gx[2 * H + j] + recur);
          h[j] = (1.f - gx[j]) * cand + gx[j] * h[j];
        }
      }
      __syncthreads();
      if (y != nullptr) {
        const int64_t yo = (p.batch_major ? (n * S + t) * D + d : (t * D + d) * N + n) * H;
        for (int64_t j = threadIdx.x; j < H; j += blockDim.x) store_float(y, yo + j, h[j]);
      }
    }
    for (int64_t t = len; t < S && y != nullptr; ++t) {
      const int64_t yo = (p.batch_major ? (n * S + t) * D + d : (t * D + d) * N + n) * H;
      for (int64_t j = threadIdx.x; j < H; j += blockDim.x) store_float(y, yo + j, 0.f);
    }
    __syncthreads();
    for (int64_t j = threadIdx.x; j < H; j += blockDim.x) {
      if (y_h != nullptr) store_float(y_h, s0 + j, len == 0 ? 0.f : h[j]);
      if (y_c != nullptr) store_float(y_c, s0 + j, len == 0 ? 0.f : c[j]);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::RnnParams;
using jetplan::kernels::cuda::StepPointers;

extern "C" __global__ void __launch_bounds__(256) jp_rnn_f16(StepPointers ptrs, const RnnParams p) {
  jetplan::kernels::cuda::rnn<__half>(ptrs, p);
}
extern "C" __global__ void __launch_bounds__(256) jp_rnn_f32(StepPointers ptrs, const RnnParams p) {
  jetplan::kernels::cuda::rnn<float>(ptrs, p);
}
