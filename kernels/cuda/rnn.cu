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
#include "kernels/cuda/rnn_layout.h"
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

// A barrier across the whole grid on a counter in the zeroed workspace, split into arrive and
// wait so that a block does work which needs no other block's results (the next step's input
// projection) while the others catch up. Every block calls both equally often; the grid is
// launched cooperatively, so all of its blocks are resident. Requires fewer than 2^31 arrivals.
struct GridBarrier {
  unsigned int* count;
  unsigned int target;

  __device__ void arrive() {
    __syncthreads();  // the block's writes are done ...
    if (threadIdx.x == 0) {
      __threadfence();  // ... and visible GPU-wide before its arrival counts
      atomicAdd(count, 1u);
    }
  }
  __device__ void wait() {
    target += gridDim.x;
    if (threadIdx.x == 0) {
      unsigned int seen;
      do {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(count) : "memory");
      } while (seen < target);
      __threadfence();
    }
    __syncthreads();
  }
};

// The persistent Rnn: one cooperative grid runs the whole recurrence, its blocks owning slices of
// the hidden units (rnn_layout.h), with one grid barrier per step (two for GRU without
// linear_before_reset, whose candidate gate needs r (.) h_{t-1} of every unit). Per step a block
// stages h_{t-1} from the workspace into shared memory, computes its rows of R h_{t-1} (one warp
// per (batch entry, gate row); lanes strided over the row and a fixed shuffle tree:
// deterministic), updates its units' state and writes h_t; then, before waiting at the barrier,
// the input projection W x_{t+1} of the next step. Same equations and options as rnn() above.
template <typename T>
__device__ void rnn_persist(const StepPointers& ptrs, const RnnParams& p) {
  extern __shared__ float smem[];
  if (p.batch < 1 || p.hidden_size < 1 || p.input_size < 1 || p.seq_length < 0 ||
      blockDim.x % 32 != 0)
    return;
  const RnnPersistLayout L = rnn_persist_layout(p, gridDim.x, sizeof(T));
  const uint32_t have = dynamic_smem_bytes();
  // Uniform over the grid: either every block returns here or none does. What passes bounds
  // every shared-memory extent below (N, D N H, D N I, G U ...) by 2^31: 32-bit local indices.
  if (have < L.state_bytes || ptrs.workspace == nullptr || ptrs.workspace_bytes < L.workspace_bytes)
    return;
  const int D = p.direction == RnnDirection::kBidirectional ? 2 : 1;
  const int N = static_cast<int>(p.batch), H = static_cast<int>(p.hidden_size);
  const int I = static_cast<int>(p.input_size);
  const int64_t S = p.seq_length;
  const int G = p.cell == RnnCell::kRnn ? 1 : p.cell == RnnCell::kLstm ? 4 : 3;
  const bool cached = have >= L.cached_bytes;
  const bool lstm = p.cell == RnnCell::kLstm;
  const bool gru_reset = p.cell == RnnCell::kGru && !p.linear_before_reset;
  const int U = static_cast<int>(L.units);
  const int u0 = static_cast<int>(blockIdx.x) * U;
  const int nu = u0 >= D * H ? 0 : (D * H - u0 < U ? D * H - u0 : U);
  const int d_lo = nu > 0 ? u0 / H : 0, nd = nu > 0 ? (u0 + nu - 1) / H - d_lo + 1 : 0;
  float* c = smem;
  float* gx = c + N * U;
  float* gh = gx + N * G * U;
  float* hs = gh + N * G * U;
  float* xs = hs + D * N * H;
  int* lens_s = reinterpret_cast<int*>(xs + D * N * I);
  T* wc = reinterpret_cast<T*>(reinterpret_cast<char*>(smem) + L.state_bytes);
  T* rc = wc + G * U * I;
  char* ws = static_cast<char*>(ptrs.workspace);
  GridBarrier bar{reinterpret_cast<unsigned int*>(ws), 0u};
  float* hbuf = reinterpret_cast<float*>(ws + L.h_offset);
  float* rh = reinterpret_cast<float*>(ws + L.rh_offset);
  const int DNH = D * N * H;

  int next = 3;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const T* w = static_cast<const T*>(ptrs.in[1]);
  const T* r = static_cast<const T*>(ptrs.in[2]);
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

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  // The time index of step s (< the entry's length) of batch entry n in direction d.
  auto time_of = [&](int d, int n, int64_t s) -> int64_t {
    const bool backwards = p.direction == RnnDirection::kReverse || d == 1;
    return backwards ? lens_s[n] - 1 - s : s;
  };
  // Local gate row lr = u * G + g: unit u0 + u, gate g, of W (k = I) or R (k = H).
  auto row = [&](bool recurrent, int lr) -> const T* {
    if (cached) return recurrent ? rc + lr * H : wc + lr * I;
    const int f = u0 + lr / G;
    const int64_t grow = static_cast<int64_t>(f / H) * G * H + (lr % G) * H + f % H;
    return recurrent ? r + grow * H : w + grow * I;
  };
  auto bias = [&](bool recurrent, int lr) -> float {
    if (b == nullptr) return 0.f;
    const int f = u0 + lr / G;
    return load_float(b, (f / H) * 2 * G * H + (recurrent ? G * H : 0) + (lr % G) * H + f % H);
  };
  // Every lane gets row . v over k elements.
  auto dot = [&](const T* m, const float* v, int k) {
    float acc = 0.f;
    for (int i = lane; i < k; i += 32) acc = fmaf(load_float(m, i), v[i], acc);
    for (int off = 16; off > 0; off /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    return acc;
  };
  auto act = [&](int d, int k, float v) {
    if (p.has_clip) v = fminf(fmaxf(v, -p.clip), p.clip);
    return rnn_act(p.activations[d][k], v);
  };
  // gx[n, g, u] = W row . x_t(n) + Wb for the step s, over the directions this block owns:
  // x rows staged one warp per (direction, batch entry).
  auto input_projection = [&](int64_t s) {
    for (int dn = warp; dn < nd * N; dn += warps) {
      const int d = d_lo + dn / N, n = dn % N;
      if (s >= lens_s[n]) continue;
      const int64_t t = time_of(d, n, s);
      const T* src = x + (p.batch_major ? n * S + t : t * N + n) * I;
      float* dst = xs + (d * N + n) * I;
      for (int k = lane; k < I; k += 32) dst[k] = load_float(src, k);
    }
    __syncthreads();
    for (int e = warp; e < N * G * nu; e += warps) {
      const int n = e / (G * nu), lr = e % (G * nu), d = (u0 + lr / G) / H;
      if (s >= lens_s[n]) continue;
      const float v = dot(row(false, lr), xs + (d * N + n) * I, I) + bias(false, lr);
      if (lane == 0) gx[(n * G + lr % G) * U + lr / G] = v;
    }
  };
  // gh[n, g, u] = R row . v(n) + Rb for the gates [g0, g1), v staged in hs from `src`.
  auto recurrent_projection = [&](int64_t s, const float* src, int g0, int g1) {
    const int base = d_lo * N * H, span = nd * N * H;
    for (int e = threadIdx.x; e < span; e += blockDim.x) hs[base + e] = __ldcg(src + base + e);
    __syncthreads();
    for (int e = warp; e < N * G * nu; e += warps) {
      const int n = e / (G * nu), lr = e % (G * nu), g = lr % G, d = (u0 + lr / G) / H;
      if (s >= lens_s[n] || g < g0 || g >= g1) continue;
      const float v = dot(row(true, lr), hs + (d * N + n) * H, H) + bias(true, lr);
      if (lane == 0) gh[(n * G + g) * U + lr / G] = v;
    }
    __syncthreads();
  };

  for (int n = threadIdx.x; n < N; n += blockDim.x) {
    const int64_t l = lens != nullptr ? lens[n] : S;
    lens_s[n] = static_cast<int>(l < 0 ? 0 : (l > S ? S : l));  // S < 2^31 (the selector)
  }
  if (cached) {
    for (int e = threadIdx.x; e < nu * G * I; e += blockDim.x) {
      const int lr = e / I, f = u0 + lr / G;
      wc[e] = w[(static_cast<int64_t>(f / H) * G * H + (lr % G) * H + f % H) * I + e % I];
    }
    for (int e = threadIdx.x; e < nu * G * H; e += blockDim.x) {
      const int lr = e / H, f = u0 + lr / G;
      rc[e] = r[(static_cast<int64_t>(f / H) * G * H + (lr % G) * H + f % H) * H + e % H];
    }
  }
  for (int e = threadIdx.x; e < N * nu; e += blockDim.x) {
    const int n = e / nu, u = e % nu, f = u0 + u, d = f / H, j = f % H;
    const int s0 = (p.batch_major ? n * D + d : d * N + n) * H + j;
    hbuf[(d * N + n) * H + j] = init_h != nullptr ? load_float(init_h, s0) : 0.f;
    c[n * U + u] = init_c != nullptr ? load_float(init_c, s0) : 0.f;
  }
  __syncthreads();  // the lengths and the cached rows
  if (S > 0) input_projection(0);
  bar.arrive();
  bar.wait();

  for (int64_t s = 0; s < S; ++s) {
    const float* hprev = hbuf + (s % 2) * DNH;
    float* hnext = hbuf + ((s + 1) % 2) * DNH;
    recurrent_projection(s, hprev, 0, gru_reset ? 2 : G);
    if (gru_reset) {
      for (int e = threadIdx.x; e < N * nu; e += blockDim.x) {
        const int n = e / nu, u = e % nu, f = u0 + u, d = f / H, j = f % H;
        if (s >= lens_s[n]) continue;
        float* z = gx + (n * G) * U + u;
        float* rg = gx + (n * G + 1) * U + u;
        *z = act(d, 0, *z + gh[(n * G) * U + u]);
        *rg = act(d, 0, *rg + gh[(n * G + 1) * U + u]);
        rh[(d * N + n) * H + j] = *rg * hs[(d * N + n) * H + j];
      }
      bar.arrive();
      bar.wait();
      recurrent_projection(s, rh, 2, 3);  // stages r (.) h over hs
    }
    for (int e = threadIdx.x; e < N * nu; e += blockDim.x) {
      const int n = e / nu, u = e % nu, f = u0 + u, d = f / H, j = f % H;
      const int64_t len = lens_s[n];
      const float hp = __ldcg(hprev + (d * N + n) * H + j);
      const auto gxv = [&](int g) { return gx[(n * G + g) * U + u]; };
      const auto ghv = [&](int g) { return gh[(n * G + g) * U + u]; };
      float hn = hp;
      int64_t t = s;  // where Y gets 0 once the entry's sequence has ended
      if (s < len) {
        t = time_of(d, n, s);
        if (p.cell == RnnCell::kRnn) {
          hn = act(d, 0, gxv(0) + ghv(0));
        } else if (lstm) {
          const T* peep = peep_all != nullptr ? peep_all + d * 3 * H : nullptr;
          const float pi = peep ? load_float(peep, j) : 0.f;
          const float po = peep ? load_float(peep, H + j) : 0.f;
          const float pf = peep ? load_float(peep, 2 * H + j) : 0.f;
          const float cp = c[n * U + u];
          const float ig = act(d, 0, gxv(0) + ghv(0) + pi * cp);
          const float fg = p.input_forget ? 1.f - ig : act(d, 0, gxv(2) + ghv(2) + pf * cp);
          const float cell = act(d, 1, gxv(3) + ghv(3));
          const float cn = fg * cp + ig * cell;
          c[n * U + u] = cn;
          const float og = act(d, 0, gxv(1) + ghv(1) + po * cn);
          hn = og * rnn_act(p.activations[d][2], cn);
        } else {  // GRU
          float z, rg, recur;
          if (gru_reset) {
            z = gxv(0);
            rg = gxv(1);
            recur = ghv(2);
          } else {
            z = act(d, 0, gxv(0) + ghv(0));
            rg = act(d, 0, gxv(1) + ghv(1));
            recur = rg * ghv(2);
          }
          const float cand = act(d, 1, gxv(2) + recur);
          hn = (1.f - z) * cand + z * hp;
        }
      }
      hnext[(d * N + n) * H + j] = hn;
      if (y != nullptr) {
        const int64_t yo = (p.batch_major ? (n * S + t) * D + d : (t * D + d) * N + n) * H + j;
        store_float(y, yo, s < len ? hn : 0.f);
      }
    }
    bar.arrive();
    if (s + 1 < S) input_projection(s + 1);
    bar.wait();
  }
  const float* hlast = hbuf + (S % 2) * DNH;
  for (int e = threadIdx.x; e < N * nu; e += blockDim.x) {
    const int n = e / nu, u = e % nu, f = u0 + u, d = f / H, j = f % H;
    const bool empty = lens_s[n] == 0;
    const int s0 = (p.batch_major ? n * D + d : d * N + n) * H + j;
    if (y_h != nullptr) store_float(y_h, s0, empty ? 0.f : __ldcg(hlast + (d * N + n) * H + j));
    if (y_c != nullptr) store_float(y_c, s0, empty ? 0.f : c[n * U + u]);
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

// Persistent: launched cooperatively (rnn_variants.inc), the workspace zeroed.
extern "C" __global__ void __launch_bounds__(256)
    jp_rnn_persist_f16(StepPointers ptrs, const RnnParams p) {
  jetplan::kernels::cuda::rnn_persist<__half>(ptrs, p);
}
extern "C" __global__ void __launch_bounds__(256)
    jp_rnn_persist_f32(StepPointers ptrs, const RnnParams p) {
  jetplan::kernels::cuda::rnn_persist<float>(ptrs, p);
}
