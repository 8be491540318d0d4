#include <cmath>

#include "kernels/rnn.h"

namespace jetplan::kernels::cpu {

namespace {

// Each batch entry of each direction is an independent recurrence, so the kernel runs them one
// after another with the state of one entry in the workspace:
//   h [H], c [H], xw [4H] = Xt*W^T + Wb, hr [4H] = Ht-1*R^T + Rb   (doubles, gate-major)
constexpr int64_t kWorkspaceVectors = 2 + 2 * 4;

// Element offsets of the tensors of kernels/rnn.h in either layout.
struct Indexer {
  const RnnParams& p;
  int64_t D;
  int64_t x(int64_t t, int64_t n) const {
    return (p.batch_major ? n * p.seq_length + t : t * p.batch + n) * p.input_size;
  }
  int64_t y(int64_t t, int64_t d, int64_t n) const {
    return (p.batch_major ? (n * p.seq_length + t) * D + d : (t * D + d) * p.batch + n) *
           p.hidden_size;
  }
  int64_t state(int64_t d, int64_t n) const {
    return (p.batch_major ? n * D + d : d * p.batch + n) * p.hidden_size;
  }
};

template <typename T>
double dot(const float* row, const T* v, int64_t n) {
  double acc = 0.0;
  for (int64_t k = 0; k < n; ++k) acc += static_cast<double>(row[k]) * static_cast<double>(v[k]);
  return acc;
}

// out[i] = bias[i] (0 without bias) + row i of m (rows x cols) dotted with v.
template <typename T>
void affine_rows(const float* m, const float* bias, const T* v, int64_t rows, int64_t cols,
                 double* out) {
  for (int64_t i = 0; i < rows; ++i)
    out[i] = (bias ? static_cast<double>(bias[i]) : 0.0) + dot(m + i * cols, v, cols);
}

// One recurrence: the weights of one direction and the state of one batch entry.
struct Recurrence {
  const RnnParams& p;
  const RnnActivation* act;  // f, g, h of this direction
  const float* w;            // [G*H, I]
  const float* r;            // [G*H, H]
  const float* wb;           // [G*H] or null
  const float* rb;           // [G*H] or null
  const float* peep;         // [3H] (i, o, f) or null
  double* h;
  double* c;
  double* xw;
  double* hr;

  double f(int k, double v) const {
    if (p.has_clip) v = v < -p.clip ? -p.clip : (v > p.clip ? p.clip : v);
    return apply_rnn_activation(act[k], v);
  }

  // Advances h (and c) by one step on input row xt.
  void step(const float* xt) {
    const int64_t H = p.hidden_size;
    const int64_t GH = rnn_gate_count(p.cell) * H;
    affine_rows(w, wb, xt, GH, p.input_size, xw);
    affine_rows(r, rb, h, GH, H, hr);  // reads the whole of Ht-1 before any of it changes
    switch (p.cell) {
      case RnnCell::kRnn:
        for (int64_t j = 0; j < H; ++j) h[j] = f(0, xw[j] + hr[j]);
        return;
      case RnnCell::kLstm:
        for (int64_t j = 0; j < H; ++j) {
          const double pi = peep ? peep[j] : 0.0, po = peep ? peep[H + j] : 0.0,
                       pf = peep ? peep[2 * H + j] : 0.0;
          const double i = f(0, xw[j] + hr[j] + pi * c[j]);
          const double fg =
              p.input_forget ? 1.0 - i : f(0, xw[2 * H + j] + hr[2 * H + j] + pf * c[j]);
          const double cell = f(1, xw[3 * H + j] + hr[3 * H + j]);
          c[j] = fg * c[j] + i * cell;
          const double o = f(0, xw[H + j] + hr[H + j] + po * c[j]);
          h[j] = o * apply_rnn_activation(act[2], c[j]);
        }
        return;
      case RnnCell::kGru: {
        double* z = xw;  // overwritten in place: zt, then rt, then ht in hr's h part
        double* rg = xw + H;
        double* cand = hr + 2 * H;
        for (int64_t j = 0; j < H; ++j) {
          z[j] = f(0, xw[j] + hr[j]);
          rg[j] = f(0, xw[H + j] + hr[H + j]);
        }
        const float* rh = r + 2 * H * H;
        const float* rbh = rb ? rb + 2 * H : nullptr;
        for (int64_t j = 0; j < H; ++j) {
          double recur;
          if (p.linear_before_reset) {
            recur = rg[j] * hr[2 * H + j];  // hr already holds Ht-1*Rh^T + Rbh
          } else {
            double acc = rbh ? rbh[j] : 0.0;
            for (int64_t k = 0; k < H; ++k) acc += double{rh[j * H + k]} * (rg[k] * h[k]);
            recur = acc;
          }
          cand[j] = f(1, xw[2 * H + j] + recur);
        }
        for (int64_t j = 0; j < H; ++j) h[j] = (1.0 - z[j]) * cand[j] + z[j] * h[j];
        return;
      }
    }
  }
};

}  // namespace

double apply_rnn_activation(const RnnActivation& a, double x) {
  switch (a.kind) {
    case RnnActivationKind::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case RnnActivationKind::kTanh:
      return std::tanh(x);
    case RnnActivationKind::kRelu:
      return x < 0.0 ? 0.0 : x;
    case RnnActivationKind::kLeakyRelu:
      return x >= 0.0 ? x : a.alpha * x;
    case RnnActivationKind::kThresholdedRelu:
      return x > a.alpha ? x : 0.0;
    case RnnActivationKind::kScaledTanh:
      return a.alpha * std::tanh(a.beta * x);
    case RnnActivationKind::kHardSigmoid: {
      const double v = a.alpha * x + a.beta;
      return v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v);
    }
    case RnnActivationKind::kElu:
      return x >= 0.0 ? x : a.alpha * std::expm1(x);
    case RnnActivationKind::kSoftsign:
      return x / (1.0 + std::fabs(x));
    case RnnActivationKind::kSoftplus:
      // log(1 + e^x) without overflow for large x and without cancellation for small e^x.
      return x > 0.0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    case RnnActivationKind::kAffine:
      return a.alpha * x + a.beta;
  }
  return x;  // unreachable for a validated plan; keeps -Wreturn-type quiet without a default
}

int64_t rnn_workspace_bytes(const RnnParams& p) {
  return kWorkspaceVectors * p.hidden_size * static_cast<int64_t>(sizeof(double));
}

void rnn(const RnnParams& p, const float* x, const float* w, const float* r, const float* b,
         const int32_t* sequence_lens, const float* initial_h, const float* initial_c,
         const float* peepholes, float* y, float* y_h, float* y_c, void* workspace) {
  const int64_t D = rnn_num_directions(p);
  const int64_t H = p.hidden_size, S = p.seq_length;
  const int64_t GH = rnn_gate_count(p.cell) * H;
  const bool lstm = p.cell == RnnCell::kLstm;
  const Indexer at{p, D};
  double* ws = static_cast<double*>(workspace);

  for (int64_t d = 0; d < D; ++d) {
    const bool backwards = p.direction == RnnDirection::kReverse || d == 1;
    Recurrence rec{p,
                   p.activations[d],
                   w + d * GH * p.input_size,
                   r + d * GH * H,
                   p.has_bias ? b + d * 2 * GH : nullptr,
                   p.has_bias ? b + d * 2 * GH + GH : nullptr,
                   lstm && p.has_peepholes ? peepholes + d * 3 * H : nullptr,
                   ws,
                   ws + H,
                   ws + 2 * H,
                   ws + 6 * H};
    for (int64_t n = 0; n < p.batch; ++n) {
      int64_t len = S;
      if (p.has_sequence_lens) {
        len = sequence_lens[n];
        len = len < 0 ? 0 : (len > S ? S : len);
      }
      const int64_t s0 = at.state(d, n);
      for (int64_t j = 0; j < H; ++j) {
        rec.h[j] = p.has_initial_h ? initial_h[s0 + j] : 0.0;
        rec.c[j] = lstm && p.has_initial_c ? initial_c[s0 + j] : 0.0;
      }
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = backwards ? len - 1 - s : s;
        rec.step(x + at.x(t, n));
        if (p.has_y)
          for (int64_t j = 0; j < H; ++j) y[at.y(t, d, n) + j] = static_cast<float>(rec.h[j]);
      }
      if (p.has_y)
        for (int64_t t = len; t < S; ++t)
          for (int64_t j = 0; j < H; ++j) y[at.y(t, d, n) + j] = 0.f;
      // A sequence of length 0 has no last state: onnxruntime reports zeros, and so do we.
      for (int64_t j = 0; j < H; ++j) {
        if (p.has_y_h) y_h[s0 + j] = len == 0 ? 0.f : static_cast<float>(rec.h[j]);
        if (lstm && p.has_y_c) y_c[s0 + j] = len == 0 ? 0.f : static_cast<float>(rec.c[j]);
      }
    }
  }
}

}  // namespace jetplan::kernels::cpu
