// Pointwise programs for the kernel tests (CPU twin against a double reference, CUDA against the
// twin): builders of instructions, the chains the converter forms (erf-GELU, sigmoid gate,
// per-channel affine with a second input) and random programs over shapes that broadcast.
#pragma once

#include <cmath>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/reference_formulas.h"

namespace jetplan::kernels::pointwise_case {

using test_util::Shape;

// One instruction; the fields a kind does not use keep PointwiseInstr's defaults (0).
inline PointwiseInstr instr(PointwiseInstrKind kind, int op, int a = 0, int b = 0,
                            Activation f = {}) {
  PointwiseInstr i;
  i.kind = kind;
  i.op = static_cast<uint8_t>(op);
  i.a = static_cast<uint8_t>(a);
  i.b = static_cast<uint8_t>(b);
  i.act = f;
  return i;
}
inline PointwiseInstr load(int k) { return instr(PointwiseInstrKind::kLoad, k); }
inline PointwiseInstr bin(BinaryOp op, int a, int b) {
  return instr(PointwiseInstrKind::kBinary, static_cast<int>(op), a, b);
}
inline PointwiseInstr un(UnaryOp op, int a) {
  return instr(PointwiseInstrKind::kUnary, static_cast<int>(op), a);
}
inline PointwiseInstr act(Activation f, int a) {
  return instr(PointwiseInstrKind::kActivation, 0, a, 0, f);
}

struct Case {
  const char* what;
  std::vector<Shape> inputs;
  std::vector<PointwiseInstr> program;
  std::vector<float> lo, hi;  // the range of each input's random values
};

inline Shape out_shape(const Case& c) { return test_util::broadcast_shapes(c.inputs); }

// The params as a kernel takes them (not merged as plan load merges them: every dim is walked).
inline PointwiseParams params_of(const Case& c) {
  const Shape out = out_shape(c);
  PointwiseParams p;
  p.rank = static_cast<int32_t>(out.size());
  for (size_t d = 0; d < out.size(); ++d) p.out_dims[d] = out[d];
  p.num_inputs = static_cast<int32_t>(c.inputs.size());
  for (size_t k = 0; k < c.inputs.size(); ++k)
    test_util::broadcast_strides(c.inputs[k], out, p.in_strides[k]);
  p.num_instrs = static_cast<int32_t>(c.program.size());
  for (size_t i = 0; i < c.program.size(); ++i) p.program[i] = c.program[i];
  return p;
}

// 0.5 * x * (1 + erf(x / c)): inputs x, c, one, half (the constants as inputs of one element).
inline Case gelu_chain(const Shape& x) {
  return {"erf-gelu",
          {x, {1}, {1}, {1}},
          {load(0), load(1), bin(BinaryOp::kDiv, 0, 1), un(UnaryOp::kErf, 2), load(2),
           bin(BinaryOp::kAdd, 3, 4), bin(BinaryOp::kMul, 0, 5), load(3),
           bin(BinaryOp::kMul, 6, 7)},
          {-4.f, 1.3f, 0.9f, 0.4f},
          {4.f, 1.5f, 1.1f, 0.6f}};
}

// sigmoid(x) * y + z: inputs x, y [N, C, H, W] and z per channel [1, C, 1, 1].
inline Case sigmoid_gate(int64_t n, int64_t c, int64_t h, int64_t w) {
  return {"sigmoid-mul-add",
          {{n, c, h, w}, {n, c, h, w}, {1, c, 1, 1}},
          {load(0), act({ActivationKind::kSigmoid, 0.f, 0.f}, 0), load(1),
           bin(BinaryOp::kMul, 1, 2), load(2), bin(BinaryOp::kAdd, 3, 4)},
          {-6.f, -2.f, -1.f},
          {6.f, 2.f, 1.f}};
}

// relu(x * scale[c] + shift[c] + r) - r with x, r [N, C, H, W] (r read twice), then Tanh, Abs.
inline Case channel_affine(int64_t n, int64_t c, int64_t h, int64_t w) {
  return {"per-channel affine + residual",
          {{n, c, h, w}, {c, 1, 1}, {c, 1, 1}, {n, c, h, w}},
          {load(0), load(1), bin(BinaryOp::kMul, 0, 1), load(2), bin(BinaryOp::kAdd, 2, 3),
           load(3), bin(BinaryOp::kAdd, 4, 5), act({ActivationKind::kRelu, 0.f, 0.f}, 6),
           bin(BinaryOp::kSub, 7, 5), act({ActivationKind::kTanh, 0.f, 0.f}, 8),
           un(UnaryOp::kAbs, 9)},
          {-2.f, 0.5f, -1.f, -1.f},
          {2.f, 1.5f, 1.f, 1.f}};
}

// ConvNeXt's layer scale and residual, scale[c] * y + x over channels-last [N, H, W, C].
inline Case layer_scale(int64_t n, int64_t h, int64_t w, int64_t c) {
  return {"layer scale + residual",
          {{n, h, w, c}, {c}, {n, h, w, c}},
          {load(0), load(1), bin(BinaryOp::kMul, 0, 1), load(2), bin(BinaryOp::kAdd, 2, 3)},
          {-4.f, -1.f, -4.f},
          {4.f, 1.f, 4.f}};
}

// A random program of `instrs` instructions over inputs whose shapes are `out` with random dims
// set to 1 (and some of lower rank): every input loaded, ops that stay finite on [-2, 2].
inline Case random_chain(test_util::SeededRng& rng, const Shape& out, int inputs, int instrs) {
  Case c{"random", {}, {}, {}, {}};
  for (int k = 0; k < inputs; ++k) {
    Shape s = out;
    for (int64_t& d : s)
      if (rng.below(3) == 0) d = 1;
    if (k > 0 && rng.coin() && !s.empty()) s.erase(s.begin());
    if (k == 0) s = out;  // the output's shape comes from somewhere
    c.inputs.push_back(s);
    c.lo.push_back(-2.f);
    c.hi.push_back(2.f);
  }
  int next_load = 0;
  const BinaryOp bops[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kMax,
                           BinaryOp::kMin, BinaryOp::kPRelu};
  const UnaryOp uops[] = {UnaryOp::kAbs, UnaryOp::kNeg, UnaryOp::kCos, UnaryOp::kErf,
                          UnaryOp::kSin, UnaryOp::kAtan, UnaryOp::kSoftsign};
  for (int r = 0; r < instrs; ++r) {
    const int left = instrs - r;
    const bool must_load = r == 0 || (inputs - next_load) >= left;
    if (next_load < inputs && (must_load || rng.below(3) == 0)) {
      c.program.push_back(load(next_load++));
      continue;
    }
    const int a = static_cast<int>(rng.below(r)), b = static_cast<int>(rng.below(r));
    switch (rng.below(3)) {
      case 0: c.program.push_back(bin(bops[rng.below(6)], a, b)); break;
      case 1: c.program.push_back(un(uops[rng.below(7)], a)); break;
      default:
        c.program.push_back(act(test_util::kEveryActivation[rng.below(kActivationKindCount)], a));
        break;
    }
  }
  return c;
}

inline std::vector<std::vector<float>> random_inputs(test_util::SeededRng& rng, const Case& c) {
  std::vector<std::vector<float>> data;
  for (size_t k = 0; k < c.inputs.size(); ++k)
    data.push_back(rng.uniform(test_util::volume(c.inputs[k]), c.lo[k], c.hi[k]));
  return data;
}

}  // namespace jetplan::kernels::pointwise_case
