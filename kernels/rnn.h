// The Rnn family (ONNX RNN, LSTM and GRU, opsets 7 to 14, in one struct): parameters and CPU
// twin (kernels/cpu/rnn.cc); CUDA kernels in kernels/cuda/rnn.cu (tensor layout shared:
// kernels/cuda/rnn_layout.h).
#pragma once

#include <cstdint>

namespace jetplan::kernels {

enum class RnnCell : uint8_t { kRnn = 0, kLstm = 1, kGru = 2 };
constexpr int kRnnCellCount = 3;

// ONNX `direction`. kReverse runs the one direction backwards in time; kBidirectional runs
// direction 0 forwards and direction 1 backwards.
enum class RnnDirection : uint8_t { kForward = 0, kReverse = 1, kBidirectional = 2 };

// The activations ONNX allows inside RNN, LSTM and GRU, with the formulas the kernels apply.
enum class RnnActivationKind : uint8_t {
  kSigmoid = 0,          // 1 / (1 + exp(-x))
  kTanh = 1,             // tanh(x)
  kRelu = 2,             // max(0, x)
  kLeakyRelu = 3,        // x >= 0 ? x : alpha * x
  kThresholdedRelu = 4,  // x > alpha ? x : 0 (the ThresholdedRelu op and onnxruntime use >;
                         // the RNN page's ">=" differs only at x == alpha)
  kScaledTanh = 5,       // alpha * tanh(beta * x)
  kHardSigmoid = 6,      // min(max(alpha * x + beta, 0), 1)
  kElu = 7,              // x >= 0 ? x : alpha * (exp(x) - 1)
  kSoftsign = 8,         // x / (1 + |x|)
  kSoftplus = 9,         // log(1 + exp(x))
  kAffine = 10,          // alpha * x + beta
};
constexpr int kRnnActivationKindCount = 11;

struct RnnActivation {
  RnnActivationKind kind = RnnActivationKind::kSigmoid;
  float alpha = 0.f;
  float beta = 0.f;
};

// ONNX's alpha and beta for an activation named without them (those of the standalone ops).
// The converter consumes `activation_alpha` / `activation_beta` in list order, one value per
// activation that takes that parameter (as onnxruntime does), and falls back to these.
constexpr RnnActivation rnn_activation_defaults(RnnActivationKind k) {
  switch (k) {
    case RnnActivationKind::kSigmoid: return {k, 0.f, 0.f};
    case RnnActivationKind::kTanh: return {k, 0.f, 0.f};
    case RnnActivationKind::kRelu: return {k, 0.f, 0.f};
    case RnnActivationKind::kLeakyRelu: return {k, 0.01f, 0.f};
    case RnnActivationKind::kThresholdedRelu: return {k, 1.f, 0.f};
    case RnnActivationKind::kScaledTanh: return {k, 1.f, 1.f};
    case RnnActivationKind::kHardSigmoid: return {k, 0.2f, 0.5f};
    case RnnActivationKind::kElu: return {k, 1.f, 0.f};
    case RnnActivationKind::kSoftsign: return {k, 0.f, 0.f};
    case RnnActivationKind::kSoftplus: return {k, 0.f, 0.f};
    case RnnActivationKind::kAffine: return {k, 1.f, 0.f};
  }
  return {k, 0.f, 0.f};
}

// What a cell is made of, per direction: its gates, in ONNX's order along W's and R's rows (RNN
// i; LSTM i, o, f, c; GRU z, r, h), and its activation functions (RNN f; LSTM f, g, h; GRU f, g).
struct RnnCellShape {
  int gates;
  int activations;
};
constexpr RnnCellShape rnn_cell_shape(RnnCell c) {
  switch (c) {
    case RnnCell::kRnn: return {1, 1};
    case RnnCell::kLstm: return {4, 3};
    case RnnCell::kGru: return {3, 2};
  }
  return {0, 0};
}
constexpr int kMaxRnnActivations = 3;
constexpr int rnn_gate_count(RnnCell c) { return rnn_cell_shape(c).gates; }
constexpr int rnn_activation_count(RnnCell c) { return rnn_cell_shape(c).activations; }

// ONNX's defaults: RNN Tanh; LSTM Sigmoid, Tanh, Tanh; GRU Sigmoid, Tanh.
constexpr RnnActivationKind rnn_default_activation(RnnCell c, int k) {
  return (c == RnnCell::kRnn || k > 0) ? RnnActivationKind::kTanh : RnnActivationKind::kSigmoid;
}

// One ONNX RNN, LSTM or GRU node. With G = rnn_gate_count(cell), D = 1 + (direction ==
// kBidirectional), S = seq_length, N = batch, I = input_size, H = hidden_size, all float32:
//   x          [S, N, I], or [N, S, I] when batch_major (ONNX layout = 1)
//   w          [D, G*H, I]      r [D, G*H, H]
//   b          [D, 2*G*H]       Wb then Rb                                   (has_bias)
//   sequence_lens int32 [N]                                          (has_sequence_lens)
//   initial_h, initial_c, y_h, y_c  [D, N, H], or [N, D, H] when batch_major
//   peepholes  [D, 3*H]         order i, o, f; LSTM only                  (has_peepholes)
//   y          [S, D, N, H], or [N, S, D, H] when batch_major                       (has_y)
// Equations (ONNX's; t - 1 is the previous step in the direction of travel, (.) elementwise):
//   RNN   Ht = f(Xt*Wi^T + Ht-1*Ri^T + Wbi + Rbi)
//   LSTM  it = f(Xt*Wi^T + Ht-1*Ri^T + Pi (.) Ct-1 + Wbi + Rbi)
//         ft = f(Xt*Wf^T + Ht-1*Rf^T + Pf (.) Ct-1 + Wbf + Rbf), or 1 - it when input_forget
//         ct = g(Xt*Wc^T + Ht-1*Rc^T + Wbc + Rbc)
//         Ct = ft (.) Ct-1 + it (.) ct
//         ot = f(Xt*Wo^T + Ht-1*Ro^T + Po (.) Ct + Wbo + Rbo)
//         Ht = ot (.) h(Ct)
//   GRU   zt = f(Xt*Wz^T + Ht-1*Rz^T + Wbz + Rbz)
//         rt = f(Xt*Wr^T + Ht-1*Rr^T + Wbr + Rbr)
//         ht = g(Xt*Wh^T + (rt (.) Ht-1)*Rh^T + Rbh + Wbh)           linear_before_reset = 0
//         ht = g(Xt*Wh^T + rt (.) (Ht-1*Rh^T + Rbh) + Wbh)           linear_before_reset = 1
//         Ht = (1 - zt) (.) ht + zt (.) Ht-1
// clip bounds every gate's argument to [-clip, clip] before its activation (not Ct before h).
// sequence_lens: batch entry n runs L = sequence_lens[n] steps (values outside [0, S] are
// clamped: it is run-time data and the kernel cannot fail); forwards over t = 0..L-1, backwards
// over t = L-1..0, so a reversed padded sequence starts at its own last element. Y at t >= L is
// 0; Y_h and Y_c hold the state after the last step run, and 0 when L = 0 (as onnxruntime).
// Missing B, initial_h, initial_c or P read as zeros.
struct RnnParams {
  RnnCell cell = RnnCell::kLstm;
  RnnDirection direction = RnnDirection::kForward;
  bool batch_major = false;
  int64_t seq_length = 0;
  int64_t batch = 0;
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  // activations[d][k]: function k (see rnn_activation_count) of direction d, in ONNX's list
  // order; for kReverse, d = 0 is the reverse direction.
  RnnActivation activations[2][kMaxRnnActivations] = {};
  bool has_clip = false;
  float clip = 0.f;
  bool input_forget = false;         // LSTM only
  bool linear_before_reset = false;  // GRU only
  bool has_bias = false;
  bool has_sequence_lens = false;
  bool has_initial_h = false;
  bool has_initial_c = false;  // LSTM only
  bool has_peepholes = false;  // LSTM only
  bool has_y = false;
  bool has_y_h = false;
  bool has_y_c = false;  // LSTM only
};

constexpr int64_t rnn_num_directions(const RnnParams& p) {
  return p.direction == RnnDirection::kBidirectional ? 2 : 1;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// The activation above, in double (the recurrent kernel's working precision).
double apply_rnn_activation(const RnnActivation& act, double x);

// Bytes of scratch rnn() needs: the state of one batch entry and its gate pre-activations.
int64_t rnn_workspace_bytes(const RnnParams& p);

// RNN, LSTM or GRU per RnnParams; arguments in ONNX's input order, then the outputs. initial_c,
// peepholes and y_c are LSTM only (pass null otherwise). Accumulates and keeps the state in
// double; outputs are rounded to float once. workspace: rnn_workspace_bytes(p) bytes, aligned
// to 8, owned by the caller; its contents on entry do not matter and on return are garbage.
void rnn(const RnnParams& p, const float* x, const float* w, const float* r, const float* b,
         const int32_t* sequence_lens, const float* initial_h, const float* initial_c,
         const float* peepholes, float* y, float* y_h, float* y_c, void* workspace);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/rnn.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// 256-thread blocks. The persistent kernels' blocks wait for each other: cooperative launch,
// zeroed workspace (the step tags).
#define JP_CUDA_VARIANTS_rnn(X, F) \
  X(F, jp_rnn_f16, kF16, 256) \
  X(F, jp_rnn_f32, kF32, 256) \
  X(F, jp_rnn_persist_f16, kF16, 256, kAny, 0, true, true) \
  X(F, jp_rnn_persist_f32, kF32, 256, kAny, 0, true, true)
