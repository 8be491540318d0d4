// cpu::rnn (RNN, LSTM, GRU) against a reference written here another way: per-gate matrices
// and vectors, one direction only, always run forwards; a backward direction runs it on the
// reversed valid part of each sequence and reverses the result back; batch-major layouts are
// permutations of the sequence-major tensors. Checked also against hand-computed values and the
// ONNX node test data. Outputs and workspace are NaN-poisoned with a guard zone; NaN never
// passes. Inputs come from a seeded mt19937 (JETPLAN_TEST_SEED=<n> replays a failure).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/onnx_node_data.h"
#include "tests/kernels/rnn_test_params.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

using Vec = std::vector<double>;
using Mat = std::vector<Vec>;  // rows

// ------------------------------------------------------------------------ problem, kernel

struct Problem {
  RnnParams p = {};
  // x [S][N][I] and states [D][N][H] in sequence-major order whatever p.batch_major says.
  std::vector<float> x = {}, w = {}, r = {}, b = {}, init_h = {}, init_c = {}, peep = {};
  std::vector<int32_t> lens = {};
};

// out[c[perm[0]], c[perm[1]], ...] = v[c] for every coordinate c of dense `shape`.
template <typename T>
std::vector<T> permute(const std::vector<T>& v, const Shape& shape, const std::vector<int>& perm) {
  Shape out_shape;
  for (int d : perm) out_shape.push_back(shape[size_t(d)]);
  std::vector<T> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    Shape c(shape.size());
    for (size_t d = shape.size(), rest = i; d-- > 0; rest /= size_t(shape[d]))
      c[d] = int64_t(rest % size_t(shape[d]));
    size_t o = 0;
    for (size_t d = 0; d < perm.size(); ++d) o = o * size_t(out_shape[d]) + size_t(c[perm[d]]);
    out[o] = v[i];
  }
  return out;
}

struct Outputs {
  Output y, y_h, y_c;
};

void run_kernel(const Problem& pr, Outputs& out) {
  const RnnParams& p = pr.p;
  const int64_t D = rnn_num_directions(p), S = p.seq_length, N = p.batch, H = p.hidden_size;
  std::vector<float> x = pr.x, h0 = pr.init_h, c0 = pr.init_c;
  if (p.batch_major) {
    x = permute(x, {S, N, p.input_size}, {1, 0, 2});
    if (!h0.empty()) h0 = permute(h0, {D, N, H}, {1, 0, 2});
    if (!c0.empty()) c0 = permute(c0, {D, N, H}, {1, 0, 2});
  }
  out.y = Output(p.has_y ? S * D * N * H : 0);
  out.y_h = Output(p.has_y_h ? D * N * H : 0);
  out.y_c = Output(p.has_y_c ? D * N * H : 0);
  // Poisoned workspace: a read before a write propagates NaN into the outputs.
  Workspace ws(cpu::rnn_workspace_bytes(p), kNaNWord);
  auto ptr = [](const auto& v) { return v.empty() ? nullptr : v.data(); };
  // An output not asked for (size 0) is passed as null.
  auto out_ptr = [](Output& o) { return o.size() ? o.data() : nullptr; };
  cpu::rnn(p, x.data(), pr.w.data(), pr.r.data(), ptr(pr.b), ptr(pr.lens), ptr(h0), ptr(c0),
           ptr(pr.peep), out_ptr(out.y), out_ptr(out.y_h), out_ptr(out.y_c), ws.data());
  ASSERT_TRUE(ws.guard_intact()) << "kernel wrote past its workspace";
}

// The tolerances of these tests come as (rel, abs).
testing::AssertionResult close_to(const Output& got, const Vec& want, double rel, double abs) {
  return all_close(got, want, {rel, abs});
}

// ---------------------------------------------------------------------------- reference

// The formulas of the ONNX operator pages, where possible through a different identity.
double act_ref(const RnnActivation& a, double x) {
  const double al = a.alpha, be = a.beta;
  switch (a.kind) {
    case RnnActivationKind::kSigmoid:
      return 0.5 * (1.0 + std::tanh(0.5 * x));
    case RnnActivationKind::kTanh:
      return 1.0 - 2.0 / (std::exp(2.0 * x) + 1.0);
    case RnnActivationKind::kRelu:
      return std::max(x, 0.0);
    case RnnActivationKind::kLeakyRelu:
      return x < 0 ? al * x : x;
    case RnnActivationKind::kThresholdedRelu:
      return x > al ? x : 0.0;
    case RnnActivationKind::kScaledTanh:
      return al * std::tanh(be * x);
    case RnnActivationKind::kHardSigmoid:
      return std::min(std::max(al * x + be, 0.0), 1.0);
    case RnnActivationKind::kElu:
      return x < 0 ? al * (std::exp(x) - 1.0) : x;
    case RnnActivationKind::kSoftsign:
      return x / (1.0 + std::fabs(x));
    case RnnActivationKind::kSoftplus:
      return std::log(1.0 + std::exp(x));
    case RnnActivationKind::kAffine:
      return al * x + be;
  }
  ADD_FAILURE() << "no reference for activation " << int(a.kind);
  return NAN;
}

// The weights of one direction, split per gate.
struct Gates {
  std::vector<Mat> W, R;    // [gate][row][col]
  std::vector<Vec> Wb, Rb;  // [gate][row]
  Vec Pi, Po, Pf;
};

Gates unpack(const Problem& pr, int64_t d) {
  const RnnParams& p = pr.p;
  const int64_t G = rnn_gate_count(p.cell), H = p.hidden_size, I = p.input_size;
  Gates g;
  g.W.assign(size_t(G), Mat(size_t(H), Vec(size_t(I))));
  g.R.assign(size_t(G), Mat(size_t(H), Vec(size_t(H))));
  g.Wb.assign(size_t(G), Vec(size_t(H), 0.0));
  g.Rb = g.Wb;
  for (int64_t q = 0; q < G; ++q)
    for (int64_t j = 0; j < H; ++j) {
      const int64_t row = (d * G + q) * H + j;
      for (int64_t k = 0; k < I; ++k) g.W[q][j][k] = pr.w[size_t(row * I + k)];
      for (int64_t k = 0; k < H; ++k) g.R[q][j][k] = pr.r[size_t(row * H + k)];
      if (!pr.b.empty()) {
        g.Wb[q][j] = pr.b[size_t((d * 2 * G + q) * H + j)];
        g.Rb[q][j] = pr.b[size_t((d * 2 * G + G + q) * H + j)];
      }
    }
  g.Pi = g.Po = g.Pf = Vec(size_t(H), 0.0);
  if (!pr.peep.empty())
    for (int64_t j = 0; j < H; ++j) {
      g.Pi[j] = pr.peep[size_t(d * 3 * H + j)];
      g.Po[j] = pr.peep[size_t(d * 3 * H + H + j)];
      g.Pf[j] = pr.peep[size_t(d * 3 * H + 2 * H + j)];
    }
  return g;
}

Vec matvec(const Mat& m, const Vec& v) {
  Vec out;
  for (const Vec& row : m) {
    double s = 0;
    for (size_t k = 0; k < v.size(); ++k) s += row[k] * v[k];
    out.push_back(s);
  }
  return out;
}

// Runs one direction forwards over xs from state (h, c); returns H after each step.
std::vector<Vec> run_forward(const RnnParams& p, const Gates& g, const RnnActivation* acts,
                             const std::vector<Vec>& xs, Vec& h, Vec& c) {
  auto F = [&](int k, double v) {
    if (p.has_clip) v = std::min(std::max(v, -double{p.clip}), double{p.clip});
    return act_ref(acts[k], v);
  };
  const size_t H = h.size();
  std::vector<Vec> hs;
  for (const Vec& x : xs) {
    std::vector<Vec> wx, rh;  // per gate: W x + Wb and R h + Rb
    for (size_t q = 0; q < g.W.size(); ++q) {
      wx.push_back(matvec(g.W[q], x));
      rh.push_back(matvec(g.R[q], h));
      for (size_t j = 0; j < H; ++j) wx[q][j] += g.Wb[q][j], rh[q][j] += g.Rb[q][j];
    }
    Vec hn(H), cn = c;
    if (p.cell == RnnCell::kRnn) {
      for (size_t j = 0; j < H; ++j) hn[j] = F(0, wx[0][j] + rh[0][j]);
    } else if (p.cell == RnnCell::kLstm) {  // gates i, o, f, c
      for (size_t j = 0; j < H; ++j) {
        const double in = F(0, wx[0][j] + rh[0][j] + g.Pi[j] * c[j]);
        const double fo = p.input_forget ? 1 - in : F(0, wx[2][j] + rh[2][j] + g.Pf[j] * c[j]);
        cn[j] = fo * c[j] + in * F(1, wx[3][j] + rh[3][j]);
        hn[j] = F(0, wx[1][j] + rh[1][j] + g.Po[j] * cn[j]) * act_ref(acts[2], cn[j]);
      }
    } else {  // GRU gates z, r, h
      Vec z(H), rg(H), rh_masked(H);
      for (size_t j = 0; j < H; ++j) {
        z[j] = F(0, wx[0][j] + rh[0][j]);
        rg[j] = F(0, wx[1][j] + rh[1][j]);
        rh_masked[j] = rg[j] * h[j];
      }
      const Vec reset_first = matvec(g.R[2], rh_masked);
      for (size_t j = 0; j < H; ++j) {
        const double rec = p.linear_before_reset ? rg[j] * rh[2][j]  // rh = Rh h + Rbh
                                                 : reset_first[j] + g.Rb[2][j];
        hn[j] = (1 - z[j]) * F(1, wx[2][j] + rec) + z[j] * h[j];
      }
    }
    h = hn;
    c = cn;
    hs.push_back(h);
  }
  return hs;
}

struct Expected {
  Vec y, y_h, y_c;  // sequence-major [S][D][N][H] and [D][N][H]
};

Expected reference(const Problem& pr) {
  const RnnParams& p = pr.p;
  const int64_t D = rnn_num_directions(p), S = p.seq_length, N = p.batch, H = p.hidden_size;
  Expected e{Vec(size_t(S * D * N * H), 0.0), Vec(size_t(D * N * H), 0.0), {}};
  e.y_c = e.y_h;
  for (int64_t d = 0; d < D; ++d) {
    const Gates g = unpack(pr, d);
    const bool backwards = p.direction == RnnDirection::kReverse || d == 1;
    for (int64_t n = 0; n < N; ++n) {
      const int64_t len = pr.lens.empty() ? S : std::clamp<int64_t>(pr.lens[size_t(n)], 0, S);
      std::vector<Vec> xs;
      for (int64_t t = 0; t < len; ++t) {
        const float* row = pr.x.data() + (t * N + n) * p.input_size;
        xs.emplace_back(row, row + p.input_size);
      }
      if (backwards) std::reverse(xs.begin(), xs.end());
      Vec h(size_t(H), 0.0), c(size_t(H), 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (!pr.init_h.empty()) h[size_t(j)] = pr.init_h[size_t((d * N + n) * H + j)];
        if (!pr.init_c.empty()) c[size_t(j)] = pr.init_c[size_t((d * N + n) * H + j)];
      }
      std::vector<Vec> hs = run_forward(p, g, p.activations[d], xs, h, c);
      if (backwards) std::reverse(hs.begin(), hs.end());
      for (int64_t t = 0; t < len; ++t)
        std::copy(hs[size_t(t)].begin(), hs[size_t(t)].end(),
                  e.y.begin() + ((t * D + d) * N + n) * H);
      if (len > 0) {
        std::copy(h.begin(), h.end(), e.y_h.begin() + (d * N + n) * H);
        std::copy(c.begin(), c.end(), e.y_c.begin() + (d * N + n) * H);
      }
    }
  }
  return e;
}

// Compares every requested output with the reference, in the kernel's layout.
void expect_matches(const Problem& pr, const Outputs& out, const Expected& e, double rel,
                    double abs) {
  const RnnParams& p = pr.p;
  const int64_t D = rnn_num_directions(p), S = p.seq_length, N = p.batch, H = p.hidden_size;
  auto state = [&](const Vec& v) { return p.batch_major ? permute(v, {D, N, H}, {1, 0, 2}) : v; };
  if (p.has_y) {
    EXPECT_TRUE(
        close_to(out.y, p.batch_major ? permute(e.y, {S, D, N, H}, {2, 0, 1, 3}) : e.y, rel, abs))
        << "Y";
  }
  if (p.has_y_h) {
    EXPECT_TRUE(close_to(out.y_h, state(e.y_h), rel, abs)) << "Y_h";
  }
  if (p.has_y_c) {
    EXPECT_TRUE(close_to(out.y_c, state(e.y_c), rel, abs)) << "Y_c";
  }
}

double sig(double v) { return 1 / (1 + std::exp(-v)); }
constexpr double kHandRel = 1e-6, kHandAbs = 1e-7;

// ------------------------------------------------------------------------- activations

TEST(RnnActivation, EveryKindMatchesItsFormula) {
  static_assert(kRnnActivationKindCount == 11, "a new kind needs a formula in act_ref");
  for (int k = 0; k < kRnnActivationKindCount; ++k) {
    const RnnActivation a{RnnActivationKind(k), 0.35f, -0.6f};
    SCOPED_TRACE("kind " + std::to_string(k));
    for (double x : {-20.0, -3.0, -0.6, -0.35, -1e-3, 0.0, 1e-4, 0.35, 0.5, 2.5, 20.0}) {
      const double got = cpu::apply_rnn_activation(a, x), want = act_ref(a, x);
      EXPECT_NEAR(got, want, 1e-12 + 1e-12 * std::fabs(want)) << "x = " << x;
    }
  }
  EXPECT_EQ(cpu::apply_rnn_activation({RnnActivationKind::kThresholdedRelu, 1.f, 0.f}, 1.0), 0.0);
  EXPECT_EQ(cpu::apply_rnn_activation({RnnActivationKind::kHardSigmoid, 0.2f, 0.5f}, 10.0), 1.0);
  EXPECT_NEAR(cpu::apply_rnn_activation({RnnActivationKind::kSoftplus, 0, 0}, 800.0), 800.0, 1e-9);
  EXPECT_EQ(rnn_activation_defaults(RnnActivationKind::kLeakyRelu).alpha, 0.01f);
  EXPECT_EQ(rnn_activation_defaults(RnnActivationKind::kHardSigmoid).beta, 0.5f);
}

// ------------------------------------------------------------------------- hand values

TEST(Rnn, HandRnnForwardAndReverse) {
  for (RnnDirection dir : {RnnDirection::kForward, RnnDirection::kReverse}) {
    Problem pr{rnn_test_params(RnnCell::kRnn, dir, 2, 1, 1, 1)};
    pr.x = {1, -2}, pr.w = {0.5f}, pr.r = {0.25f}, pr.b = {0.1f, 0.2f};
    pr.p.has_bias = pr.p.has_y = pr.p.has_y_h = true;
    Outputs out;
    run_kernel(pr, out);
    if (dir == RnnDirection::kForward) {  // Ht = tanh(0.5 x + 0.25 Ht-1 + 0.3)
      const double h0 = std::tanh(0.8), h1 = std::tanh(-0.7 + 0.25 * h0);
      EXPECT_TRUE(close_to(out.y, {h0, h1}, kHandRel, kHandAbs));
      EXPECT_TRUE(close_to(out.y_h, {h1}, kHandRel, kHandAbs));
    } else {
      const double h1 = std::tanh(-0.7), h0 = std::tanh(0.8 + 0.25 * h1);
      EXPECT_TRUE(close_to(out.y, {h0, h1}, kHandRel, kHandAbs));
      EXPECT_TRUE(close_to(out.y_h, {h0}, kHandRel, kHandAbs));
    }
  }
}

TEST(Rnn, HandLstmPeepholesAndInputForget) {
  for (bool coupled : {false, true}) {
    Problem pr{rnn_test_params(RnnCell::kLstm, RnnDirection::kForward, 1, 1, 1, 1)};
    pr.x = {1}, pr.w = {0.1f, 0.2f, 0.3f, 0.4f}, pr.r = {0, 0, 0, 0};  // gates i, o, f, c
    pr.init_c = {0.5f}, pr.peep = {0.5f, 0.25f, -0.5f};                // i, o, f
    pr.p.has_initial_c = pr.p.has_peepholes = pr.p.has_y_h = pr.p.has_y_c = true;
    pr.p.input_forget = coupled;
    Outputs out;
    run_kernel(pr, out);
    const double i = sig(0.1 + 0.5 * 0.5), f = coupled ? 1 - i : sig(0.3 - 0.5 * 0.5);
    const double C = f * 0.5 + i * std::tanh(0.4), o = sig(0.2 + 0.25 * C);
    EXPECT_TRUE(close_to(out.y_c, {C}, kHandRel, kHandAbs)) << "coupled " << coupled;
    EXPECT_TRUE(close_to(out.y_h, {o * std::tanh(C)}, kHandRel, kHandAbs)) << "coupled " << coupled;
  }
}

TEST(Rnn, HandGruBothResetOrders) {
  for (bool lbr : {false, true}) {
    Problem pr{rnn_test_params(RnnCell::kGru, RnnDirection::kForward, 1, 1, 1, 1)};
    pr.x = {1}, pr.w = {0.1f, 0.2f, 0.3f}, pr.r = {0.4f, 0.5f, 0.6f};  // gates z, r, h
    pr.b = {0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f}, pr.init_h = {0.5f};
    pr.p.has_bias = pr.p.has_initial_h = pr.p.has_y_h = true;
    pr.p.linear_before_reset = lbr;
    Outputs out;
    run_kernel(pr, out);
    const double z = sig(0.1 + 0.4 * 0.5 + 0.05), r = sig(0.2 + 0.5 * 0.5 + 0.07);
    const double h = lbr ? std::tanh(0.3 + r * (0.6 * 0.5 + 0.06) + 0.03)
                         : std::tanh(0.3 + 0.6 * (r * 0.5) + 0.06 + 0.03);
    EXPECT_TRUE(close_to(out.y_h, {(1 - z) * h + z * 0.5}, kHandRel, kHandAbs)) << "lbr " << lbr;
  }
}

TEST(Rnn, HandClipBoundsTheActivationArgument) {
  Problem pr{rnn_test_params(RnnCell::kRnn, RnnDirection::kForward, 1, 1, 1, 1)};
  pr.x = {1}, pr.w = {10.f}, pr.r = {0.f};
  pr.p.activations[0][0] = {RnnActivationKind::kAffine, 2.f, 1.f};
  pr.p.has_clip = pr.p.has_y_h = true;
  pr.p.clip = 0.5f;
  Outputs out;
  run_kernel(pr, out);
  EXPECT_TRUE(close_to(out.y_h, {2.0}, 0, 0));  // 2 * clip(10) + 1
}

TEST(Rnn, HandSequenceLensBidirectional) {
  // Ht = tanh(x + r Ht-1) with r = 0 forwards and 0.5 backwards; steps past a length hold 100.
  const int64_t S = 3, N = 3;
  Problem pr{rnn_test_params(RnnCell::kRnn, RnnDirection::kBidirectional, S, N, 1, 1)};
  pr.w = {1.f, 1.f}, pr.r = {0.f, 0.5f}, pr.lens = {3, 1, 0};
  for (int64_t t = 0; t < S; ++t)
    for (int64_t n = 0; n < N; ++n)
      pr.x.push_back(t < pr.lens[size_t(n)] ? 0.1f * float(t + 1) - 0.25f * float(n) : 100.f);
  pr.p.has_sequence_lens = pr.p.has_y = pr.p.has_y_h = true;
  Outputs out;
  run_kernel(pr, out);
  auto X = [&](int64_t t, int64_t n) { return double{pr.x[size_t(t * N + n)]}; };
  const double b2 = std::tanh(X(2, 0)), b1 = std::tanh(X(1, 0) + 0.5 * b2),
               b0 = std::tanh(X(0, 0) + 0.5 * b1);
  auto T = [&](int64_t t, int64_t n) { return std::tanh(X(t, n)); };
  // clang-format off
  EXPECT_TRUE(close_to(out.y, {T(0, 0), T(0, 1), 0,   b0, T(0, 1), 0,    // t 0: forward, backward
                              T(1, 0), 0,       0,   b1, 0,       0,    // t 1
                              T(2, 0), 0,       0,   b2, 0,       0},   // t 2
                             kHandRel, kHandAbs));
  EXPECT_TRUE(close_to(out.y_h, {T(2, 0), T(0, 1), 0,   b0, T(0, 1), 0}, kHandRel, kHandAbs));
  // clang-format on
}

// ------------------------------------------------------------------- random against reference

// variant 0: no optional input, Y_h and Y_c only; 1: bias, lengths, initial state, Y only;
// 2: everything, clip, input_forget / linear_before_reset; 3: everything, random activations.
Problem random_problem(SeededRng& rng, RnnCell cell, RnnDirection dir, bool batch_major,
                       int variant) {
  const int64_t S = 1 + rng.below(6), N = 1 + rng.below(4), I = 1 + rng.below(6),
                H = 1 + rng.below(6), D = dir == RnnDirection::kBidirectional ? 2 : 1,
                G = rnn_gate_count(cell);
  const bool lstm = cell == RnnCell::kLstm;
  Problem pr{rnn_test_params(cell, dir, S, N, I, H)};
  RnnParams& p = pr.p;
  p.batch_major = batch_major;
  pr.x = rng.uniform(S * N * I, -1.5f, 1.5f);
  pr.w = rng.uniform(D * G * H * I, -0.8f, 0.8f);
  pr.r = rng.uniform(D * G * H * H, -0.8f, 0.8f);
  p.has_y = variant != 0;
  p.has_y_h = variant != 1;
  p.has_y_c = lstm && variant != 1;
  if (variant == 0) return pr;
  p.has_bias = p.has_sequence_lens = p.has_initial_h = true;
  p.has_initial_c = lstm;
  pr.b = rng.uniform(D * 2 * G * H, -0.5f, 0.5f);
  // Entry 0 runs the whole sequence; the others any length, out-of-range ones (-1, S + 1) included.
  for (int64_t n = 0; n < N; ++n) pr.lens.push_back(int32_t(n == 0 ? S : rng.below(S + 3) - 1));
  pr.init_h = rng.uniform(D * N * H, -1.f, 1.f);
  if (lstm) pr.init_c = rng.uniform(D * N * H, -1.f, 1.f);
  if (variant == 1) return pr;
  p.has_peepholes = lstm;
  if (lstm) pr.peep = rng.uniform(D * 3 * H, -0.7f, 0.7f);
  if (variant == 2) {
    p.has_clip = true;
    p.clip = 0.6f;
    p.input_forget = lstm;
    p.linear_before_reset = cell == RnnCell::kGru;
  } else {
    // LSTM and GRU gates multiply states and each other: an unbounded gate function (Affine,
    // Relu) makes values explode within a few steps, so gates take a bounded one.
    const RnnActivationKind bounded[] = {
        RnnActivationKind::kSigmoid, RnnActivationKind::kTanh, RnnActivationKind::kHardSigmoid,
        RnnActivationKind::kSoftsign, RnnActivationKind::kScaledTanh};
    for (auto& per_dir : p.activations)
      for (int k = 0; k < kMaxRnnActivations; ++k) {
        const std::vector<float> ab = rng.uniform(2, -0.5f, 1.2f);
        const bool gate = k == 0 && cell != RnnCell::kRnn;
        per_dir[k] = {gate ? bounded[rng.below(5)] : RnnActivationKind(rng.below(11)), ab[0],
                      ab[1]};
      }
  }
  return pr;
}

class RnnMatrix : public testing::TestWithParam<RnnCell> {};

TEST_P(RnnMatrix, MatchesPerGateReference) {
  SEEDED_RNG(rng);
  for (RnnDirection dir :
       {RnnDirection::kForward, RnnDirection::kReverse, RnnDirection::kBidirectional})
    for (bool batch_major : {false, true})
      for (int variant = 0; variant < 4; ++variant)
        for (int rep = 0; rep < 3; ++rep) {
          SCOPED_TRACE("direction " + std::to_string(int(dir)) + " batch_major " +
                       std::to_string(batch_major) + " variant " + std::to_string(variant));
          const Problem pr = random_problem(rng, GetParam(), dir, batch_major, variant);
          Outputs out;
          run_kernel(pr, out);
          expect_matches(pr, out, reference(pr), 1e-6, 1e-7);
        }
}

INSTANTIATE_TEST_SUITE_P(Cells, RnnMatrix,
                         testing::Values(RnnCell::kRnn, RnnCell::kLstm, RnnCell::kGru));

// --------------------------------------------------------------------- ONNX node test data

// Attributes read by hand from the models (every other attribute is at its default):
// hidden_size, and layout = 1 for the *_batchwise tests. Inputs and outputs go by name.
struct NodeCase {
  const char* test;
  RnnCell cell;
  int64_t hidden_size;
  bool batch_major;
};
const NodeCase kNodeCases[] = {
    {"test_simple_rnn_defaults", RnnCell::kRnn, 4, false},
    {"test_simple_rnn_with_initial_bias", RnnCell::kRnn, 5, false},
    {"test_simple_rnn_batchwise", RnnCell::kRnn, 4, true},
    {"test_rnn_seq_length", RnnCell::kRnn, 5, false},
    {"test_lstm_defaults", RnnCell::kLstm, 3, false},
    {"test_lstm_with_initial_bias", RnnCell::kLstm, 4, false},
    {"test_lstm_with_peepholes", RnnCell::kLstm, 3, false},
    {"test_lstm_batchwise", RnnCell::kLstm, 7, true},
    {"test_gru_defaults", RnnCell::kGru, 5, false},
    {"test_gru_with_initial_bias", RnnCell::kGru, 3, false},
    {"test_gru_seq_length", RnnCell::kGru, 5, false},
    {"test_gru_batchwise", RnnCell::kGru, 6, true},
};

TEST(Rnn, OnnxNodeTestData) {
  if (!have_node_test("test_lstm_defaults"))
    GTEST_SKIP() << "no ONNX node test data in " << node_data_dir();
  for (const NodeCase& c : kNodeCases) {
    SCOPED_TRACE(c.test);
    std::map<std::string, OnnxTensor> t = by_name(load_node_case(c.test));
    ASSERT_TRUE(t.count("X") && t.count("W") && t.count("R"));
    const Shape& xd = t["X"].dims;
    ASSERT_EQ(xd.size(), 3u);
    const int64_t S = xd[c.batch_major ? 1 : 0], N = xd[c.batch_major ? 0 : 1];
    Problem pr{rnn_test_params(c.cell, RnnDirection::kForward, S, N, xd[2], c.hidden_size)};
    ASSERT_EQ(t["R"].dims, (Shape{1, rnn_gate_count(c.cell) * c.hidden_size, c.hidden_size}));
    RnnParams& p = pr.p;
    p.batch_major = c.batch_major;
    auto seq_major = [&](const std::vector<float>& v, const Shape& d) {
      return c.batch_major ? permute(v, d, {1, 0, 2}) : v;
    };
    pr.x = seq_major(values<float>(t["X"], kOnnxFloat), xd);
    pr.w = values<float>(t["W"], kOnnxFloat);
    pr.r = values<float>(t["R"], kOnnxFloat);
    if ((p.has_bias = t.count("B"))) pr.b = values<float>(t["B"], kOnnxFloat);
    if ((p.has_sequence_lens = t.count("sequence_lens")))
      pr.lens = values<int32_t>(t["sequence_lens"], kOnnxInt32);
    if ((p.has_initial_h = t.count("initial_h")))
      pr.init_h = seq_major(values<float>(t["initial_h"], kOnnxFloat), t["initial_h"].dims);
    if ((p.has_initial_c = t.count("initial_c")))
      pr.init_c = seq_major(values<float>(t["initial_c"], kOnnxFloat), t["initial_c"].dims);
    if ((p.has_peepholes = t.count("P"))) pr.peep = values<float>(t["P"], kOnnxFloat);
    p.has_y = p.has_y_h = true;
    p.has_y_c = c.cell == RnnCell::kLstm;
    Outputs out;
    run_kernel(pr, out);
    int compared = 0;
    for (const auto& [name, got] :
         {std::pair<const char*, const Output*>{"Y", &out.y}, {"Y_h", &out.y_h}}) {
      if (!t.count(name)) continue;
      const std::vector<float> want = values<float>(t[name], kOnnxFloat);
      EXPECT_TRUE(close_to(*got, Vec(want.begin(), want.end()), 1e-6, 1e-7)) << name;
      ++compared;
    }
    EXPECT_GT(compared, 0);
  }
}

}  // namespace
}  // namespace jetplan::kernels
