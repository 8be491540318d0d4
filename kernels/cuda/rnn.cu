// ONNX RNN, LSTM and GRU on the GPU (FP16 storage or FP32; FP32 arithmetic and state), every
// feature of the CPU twin kernels/cpu/rnn.cc: directions, sequence_lens, initial states,
// peepholes, clip, input_forget, linear_before_reset, every RnnActivationKind, both layouts.
// Two kernels (the selector, rnn_select.cc, picks):
// - jp_rnn_persist_*: one cooperative grid through the whole recurrence, the hidden units split
//   over the blocks, which exchange h through tagged words in the workspace (rnn_layout.h);
// - jp_rnn_*: one 256-thread block per (direction, batch entry) steps through time; the gate
//   GEMVs run one warp per row (lanes strided over the row, a fixed shuffle tree:
//   deterministic), and the state lives in dynamic shared memory: h [H], c [H], gx [G*H],
//   gh [G*H], tmp [H], x_t [I] floats. No workspace.
// A launch with less dynamic shared memory (or workspace) than they need computes nothing.
// Inputs: x, w, r, then b, sequence_lens (int32), initial_h, initial_c, peepholes where present;
// outputs: y, y_h, y_c where present (the runtime's order).
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/rnn_layout.h"
#include "kernels/rnn.h"

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

// The step's tensors in the runtime's order: x, w, r, then b, sequence_lens (int32),
// initial_h, initial_c, peepholes where present; y, y_h, y_c where present. Null where absent
// (initial_c, peepholes and y_c for LSTM only).
template <typename T>
struct RnnIo {
  const T *x, *w, *r, *b, *init_h, *init_c, *peep;
  const int32_t* lens;
  T *y, *y_h, *y_c;
};

template <typename T>
__device__ RnnIo<T> rnn_io(const StepPointers& ptrs, const RnnParams& p) {
  const bool lstm = p.cell == RnnCell::kLstm;
  RnnIo<T> io;
  io.x = static_cast<const T*>(ptrs.in[0]);
  io.w = static_cast<const T*>(ptrs.in[1]);
  io.r = static_cast<const T*>(ptrs.in[2]);
  int next = 3;
  io.b = p.has_bias ? static_cast<const T*>(ptrs.in[next++]) : nullptr;
  io.lens = p.has_sequence_lens ? static_cast<const int32_t*>(ptrs.in[next++]) : nullptr;
  io.init_h = p.has_initial_h ? static_cast<const T*>(ptrs.in[next++]) : nullptr;
  io.init_c = lstm && p.has_initial_c ? static_cast<const T*>(ptrs.in[next]) : nullptr;
  if (p.has_initial_c) ++next;
  io.peep = lstm && p.has_peepholes ? static_cast<const T*>(ptrs.in[next]) : nullptr;
  int o = 0;
  io.y = p.has_y ? static_cast<T*>(ptrs.out[o++]) : nullptr;
  io.y_h = p.has_y_h ? static_cast<T*>(ptrs.out[o++]) : nullptr;
  io.y_c = lstm && p.has_y_c ? static_cast<T*>(ptrs.out[o]) : nullptr;
  return io;
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

  const RnnIo<T> io = rnn_io<T>(ptrs, p);
  const T *x = io.x, *b = io.b, *init_h = io.init_h, *init_c = io.init_c, *peep_all = io.peep;
  const int32_t* lens = io.lens;
  T *y = io.y, *y_h = io.y_h, *y_c = io.y_c;

  for (int64_t pair = blockIdx.x; pair < D * N; pair += gridDim.x) {
    const int64_t d = pair / N, n = pair % N;
    const bool backwards = p.direction == RnnDirection::kReverse || d == 1;
    const RnnActivation* act = p.activations[d];
    const T* w = io.w + d * GH * I;
    const T* r = io.r + d * GH * H;
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

// The blocks of the persistent kernel exchange state through tagged words: a float's bits in the
// low half and a tag in the high half of one 64-bit word, written and read whole (single-copy
// atomic), so a reader that sees the tag it waits for sees the value with it. No barrier: each
// block waits for exactly the words it reads. Needs all blocks resident (cooperative launch).
__device__ __forceinline__ void put_tagged(unsigned long long* p, float v, uint32_t tag) {
  const unsigned long long word = (static_cast<unsigned long long>(tag) << 32) | __float_as_uint(v);
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(word) : "memory");
}
__device__ __forceinline__ float get_tagged(const unsigned long long* p, uint32_t tag) {
  unsigned long long word;
  do {
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(p) : "memory");
  } while (static_cast<uint32_t>(word >> 32) != tag);
  return __uint_as_float(static_cast<uint32_t>(word));
}

// The persistent Rnn: one cooperative grid runs the whole recurrence, its blocks owning slices of
// the hidden units (rnn_layout.h). Per step s a block stages h_s (tag s + 1) of every unit from
// the workspace into shared memory, waiting for each word's tag; computes its rows of R h_s;
// updates its units' state and publishes h_{s+1} (tag s + 2, in the other half of the double
// buffer: a block can only overwrite h_s after every block has published h_{s+1}, so after all
// read h_s); then computes the next step's input projection W x_{s+1} while the others catch up.
// GRU without linear_before_reset exchanges r (.) h_s the same way (its candidate gate needs it
// for every unit). Same equations and options as rnn() above.
constexpr int kRnnBatchTile = 8;

// One block of the persistent kernel: its slice [u0, u0 + nu) of the D * H hidden units, the
// shared-memory arrays it works in (carved by rnn_persist), where its gate rows come from
// (cached: copied into shared memory once) and the step's tensors. rnn_persist builds it once;
// the members are the phases of the recurrence outside the projections (those stay lambdas
// of rnn_persist, passed in where a phase needs them).
template <typename T>
struct PersistBlock {
  const RnnParams& p;
  int N, H, I, G, U, u0, nu;
  int64_t S;
  bool cached;
  float *gx, *gh, *hs, *bx, *bh;
  int* lens_s;
  T *wc, *rc;
  const T *w, *r;
  int D, DNH;
  bool lstm, gru_reset;
  float *c, *c_h;
  unsigned long long *hbuf, *rh;  // the workspace's tagged words: h and r (.) h, [2][D N H]
  const T *b, *init_h, *init_c, *peep_all;
  const int32_t* lens;
  T *y, *y_h, *y_c;

  // Before the first step: the clamped sequence lengths, the block's biases, its gate rows when
  // cached, and the initial state (h_0 published with tag 1, c_0 in shared memory).
  __device__ __forceinline__ void stage_initial_state() const {
    for (int n = threadIdx.x; n < N; n += blockDim.x) {
      const int64_t l = lens != nullptr ? lens[n] : S;
      lens_s[n] = static_cast<int>(l < 0 ? 0 : (l > S ? S : l));  // S < 2^31 (the selector)
    }
    for (int lr = threadIdx.x; lr < nu * G; lr += blockDim.x) {
      const int f = u0 + lr / G, off = (f / H) * 2 * G * H + (lr % G) * H + f % H;
      bx[lr] = b != nullptr ? load_float(b, off) : 0.f;
      bh[lr] = b != nullptr ? load_float(b, off + G * H) : 0.f;
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
      put_tagged(hbuf + (d * N + n) * H + j, init_h != nullptr ? load_float(init_h, s0) : 0.f, 1u);
      c[n * U + u] = init_c != nullptr ? load_float(init_c, s0) : 0.f;
    }
  }

  // GRU without linear_before_reset, after R h_s for z and r: keeps the own units' h_s (hs is
  // restaged), applies z and r, and exchanges r (.) h_s, whose R product the candidate needs.
  template <typename Act, typename RecurrentProjection>
  __device__ __forceinline__ void exchange_reset_hidden(
      int64_t s, uint32_t tag, const Act& act,
      const RecurrentProjection& recurrent_projection) const {
    // Own units' h_s, as staged (GRU without linear_before_reset restages hs below).
    for (int e = threadIdx.x; gru_reset && e < N * nu; e += blockDim.x) {
      const int n = e / nu, f = u0 + e % nu;
      c_h[e] = hs[((f / H) * N + n) * H + f % H];
    }
    if (gru_reset) {
      for (int e = threadIdx.x; e < N * nu; e += blockDim.x) {
        const int n = e / nu, u = e % nu, f = u0 + u, d = f / H, j = f % H;
        if (s >= lens_s[n]) continue;
        float* z = gx + (n * G) * U + u;
        float* rg = gx + (n * G + 1) * U + u;
        *z = act(d, 0, *z + gh[(n * G) * U + u]);
        *rg = act(d, 0, *rg + gh[(n * G + 1) * U + u]);
        put_tagged(rh + (s % 2) * DNH + (d * N + n) * H + j, *rg * hs[(d * N + n) * H + j], tag);
      }
      // Entries whose sequence has ended publish nothing here: their words are not waited for.
      recurrent_projection(rh + (s % 2) * DNH, tag, false, s, 2, 3);  // r (.) h_s over hs
    }
  }

  // The cell update of step s for the block's units: h_{s+1} published to hnext (tag + 1), Y
  // written (0 once an entry's sequence has ended), c kept in shared memory.
  template <typename Act, typename TimeOf>
  __device__ __forceinline__ void update_units(int64_t s, uint32_t tag, unsigned long long* hnext,
                                               const Act& act, const TimeOf& time_of) const {
    for (int e = threadIdx.x; e < N * nu; e += blockDim.x) {
      const int n = e / nu, u = e % nu, f = u0 + u, d = f / H, j = f % H;
      const int64_t len = lens_s[n];
      const float hp = gru_reset ? c_h[e] : hs[(d * N + n) * H + j];
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
      put_tagged(hnext + (d * N + n) * H + j, hn, tag + 1);
      if (y != nullptr) {
        const int64_t yo = (p.batch_major ? (n * S + t) * D + d : (t * D + d) * N + n) * H + j;
        store_float(y, yo, s < len ? hn : 0.f);
      }
    }
  }

  // After the last step: Y_h (h_S, once every block has published it) and Y_c, 0 for entries of
  // length 0.
  __device__ __forceinline__ void write_final_state() const {
    const unsigned long long* hlast = hbuf + (S % 2) * DNH;
    for (int e = threadIdx.x; e < N * nu; e += blockDim.x) {
      const int n = e / nu, u = e % nu, f = u0 + u, d = f / H, j = f % H;
      const bool empty = lens_s[n] == 0;
      const int s0 = (p.batch_major ? n * D + d : d * N + n) * H + j;
      const float h = get_tagged(hlast + (d * N + n) * H + j, static_cast<uint32_t>(S) + 1);
      if (y_h != nullptr) store_float(y_h, s0, empty ? 0.f : h);
      if (y_c != nullptr) store_float(y_c, s0, empty ? 0.f : c[n * U + u]);
    }
  }
};

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
  float* c_h = c + N * U;  // own units' h_s (GRU without linear_before_reset)
  float* gx = c_h + N * U;
  float* gh = gx + N * G * U;
  float* hs = gh + N * G * U;
  float* xs = hs + D * N * H;
  float* bx = xs + D * N * I;  // the block's biases Wb and Rb, [G U] each
  float* bh = bx + G * U;
  int* lens_s = reinterpret_cast<int*>(bh + G * U);
  T* wc = reinterpret_cast<T*>(reinterpret_cast<char*>(smem) + L.state_bytes);
  T* rc = wc + G * U * I;
  char* ws = static_cast<char*>(ptrs.workspace);
  unsigned long long* hbuf = reinterpret_cast<unsigned long long*>(ws + L.h_offset);
  unsigned long long* rh = reinterpret_cast<unsigned long long*>(ws + L.rh_offset);
  const int DNH = D * N * H;
  const RnnIo<T> io = rnn_io<T>(ptrs, p);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  const T *x = io.x, *w = io.w, *r = io.r;
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
  // out[(n G + g) U + u] = bias[lr] + row(lr) . vec[(d N + n) K ...] for every gate row
  // lr = u G + g of the gates [g0, g1) and batch entry n: one warp per row, which reads each
  // weight once for up to kRnnBatchTile entries (as many accumulators: independent FMA chains);
  // lanes strided over the row and a fixed shuffle tree per entry (deterministic). Entries whose
  // sequence has ended get a value nobody reads.
  auto project = [&](bool recurrent, const float* vec, int k, const float* bias, float* out,
                     int g0, int g1) {
    for (int lr = warp; lr < G * nu; lr += warps) {
      const int g = lr % G, d = (u0 + lr / G) / H;
      if (g < g0 || g >= g1) continue;
      const T* m = row(recurrent, lr);
      for (int n0 = 0; n0 < N; n0 += kRnnBatchTile) {
        const float* v = vec + (d * N + n0) * k;
        float acc[kRnnBatchTile];
#pragma unroll
        for (int q = 0; q < kRnnBatchTile; ++q) acc[q] = 0.f;
        for (int i = lane; i < k; i += 32) {
          const float wv = load_float(m, i);
#pragma unroll
          for (int q = 0; q < kRnnBatchTile; ++q)
            if (n0 + q < N) acc[q] = fmaf(wv, v[q * k + i], acc[q]);
        }
#pragma unroll
        for (int q = 0; q < kRnnBatchTile; ++q) {
          if (n0 + q >= N) break;
          float a = acc[q];
          for (int off = 16; off > 0; off /= 2) a += __shfl_xor_sync(0xffffffffu, a, off);
          if (lane == 0) out[((n0 + q) * G + g) * U + lr / G] = a + bias[lr];
        }
      }
    }
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
    project(false, xs, I, bx, gx, 0, G);
  };
  // gh[n, g, u] = R row . v(n) + Rb for the gates [g0, g1), v staged in hs from the tagged
  // words `src` once they carry `tag`.
  // With `ended_too` false, entries whose sequence has ended are not waited for (nor staged).
  auto recurrent_projection = [&](const unsigned long long* src, uint32_t tag, bool ended_too,
                                  int64_t s, int g0, int g1) {
    const int base = d_lo * N * H, span = nd * N * H;
    __syncthreads();  // the last reads of hs are done
    for (int e = threadIdx.x; e < span; e += blockDim.x) {
      if (ended_too || s < lens_s[(e / H) % N]) hs[base + e] = get_tagged(src + base + e, tag);
    }
    __syncthreads();
    project(true, hs, H, bh, gh, g0, g1);
    __syncthreads();
  };
  const PersistBlock<T> blk{p,  N,  H,  I,  G,  U,      u0, nu, S,  cached,
                            gx, gh, hs, bx, bh, lens_s, wc, rc, w,  r,
                            D,  DNH, lstm, gru_reset, c, c_h, hbuf, rh,
                            io.b, io.init_h, io.init_c, io.peep, io.lens, io.y, io.y_h, io.y_c};

  blk.stage_initial_state();
  __syncthreads();  // the lengths and the cached rows
  if (S > 0) input_projection(0);

  for (int64_t s = 0; s < S; ++s) {
    const uint32_t tag = static_cast<uint32_t>(s) + 1;  // of h_s; S < 2^31 (the selector)
    unsigned long long* hnext = hbuf + ((s + 1) % 2) * DNH;
    recurrent_projection(hbuf + (s % 2) * DNH, tag, true, s, 0, gru_reset ? 2 : G);
    blk.exchange_reset_hidden(s, tag, act, recurrent_projection);
    blk.update_units(s, tag, hnext, act, time_of);
    if (s + 1 < S) input_projection(s + 1);
  }
  blk.write_final_state();
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::RnnParams;
using jetplan::kernels::cuda::StepPointers;

extern "C" __global__ void __launch_bounds__(256) jp_rnn_f16(StepPointers ptrs, const RnnParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  jetplan::kernels::cuda::rnn<__half>(ptrs, p);
}
extern "C" __global__ void __launch_bounds__(256) jp_rnn_f32(StepPointers ptrs, const RnnParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  jetplan::kernels::cuda::rnn<float>(ptrs, p);
}

// Persistent: launched cooperatively (its rows in kernels/rnn.h), the workspace zeroed; one block
// per SM
// is all the grid uses, so the registers need not fit more.
extern "C" __global__ void __launch_bounds__(256, 1)
    jp_rnn_persist_f16(StepPointers ptrs, const RnnParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  jetplan::kernels::cuda::rnn_persist<__half>(ptrs, p);
}
extern "C" __global__ void __launch_bounds__(256, 1)
    jp_rnn_persist_f32(StepPointers ptrs, const RnnParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  jetplan::kernels::cuda::rnn_persist<float>(ptrs, p);
}
