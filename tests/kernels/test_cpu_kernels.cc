// The CPU reference kernels against implementations written here in a different way: conv as
// im2col + matrix multiply, pooling over an explicitly padded tensor, gemm on logical matrices
// materialized from their stored form, broadcasting by modulo indexing, and hand-computed cases.
// Every output is poisoned (NaN, or two byte patterns for byte kernels) before each call and has
// a guard zone after its end; every comparison fails on NaN. Inputs come from a seeded
// std::mt19937 whose seed is printed with any failure (JETPLAN_TEST_SEED=<n> replays it).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cpu/cpu_kernels.h"

namespace jetplan::kernels {
namespace {

using Shape = std::vector<int64_t>;
using Bytes = std::vector<unsigned char>;

int64_t volume(const Shape& s) {
  int64_t v = 1;
  for (int64_t d : s) v *= d;
  return v;
}

// Row-major coordinates of flat index i in shape s.
Shape unravel(int64_t i, const Shape& s) {
  Shape c(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    c[d] = i % s[d];
    i /= s[d];
  }
  return c;
}

int64_t ravel(const Shape& c, const Shape& s) {
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + c[d];
  return i;
}

// ------------------------------------------------------------------------------------ seeds

uint32_t fresh_seed() {
  if (const char* env = std::getenv("JETPLAN_TEST_SEED"))
    return static_cast<uint32_t>(std::strtoul(env, nullptr, 10));
  return std::random_device{}();
}

// A generator whose seed is attached to every failure reported while it lives.
class SeededRng {
 public:
  SeededRng(const char* file, int line)
      : seed_(fresh_seed()),
        gen_(seed_),
        trace_(file, line,
               "seed " + std::to_string(seed_) + " (replay: JETPLAN_TEST_SEED=" +
                   std::to_string(seed_) + ")") {}

  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(gen_); }
  std::vector<float> uniform(int64_t n, float lo, float hi) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = uniform(lo, hi);
    return v;
  }
  // Magnitude in [lo, hi], random sign: keeps divisors away from 0.
  std::vector<float> signed_magnitude(int64_t n, float lo, float hi) {
    std::vector<float> v = uniform(n, lo, hi);
    for (float& e : v)
      if (gen_() & 1u) e = -e;
    return v;
  }
  Bytes bytes(int64_t n) {
    Bytes v(static_cast<size_t>(n));
    for (unsigned char& e : v) e = static_cast<unsigned char>(gen_() & 0xffu);
    return v;
  }

 private:
  uint32_t seed_;
  std::mt19937 gen_;
  testing::ScopedTrace trace_;
};
#define SEEDED_RNG(name) SeededRng name(__FILE__, __LINE__)

// ------------------------------------------------------------------ poisoned outputs, compare

constexpr uint32_t kPoisonBits = 0x7fc0deadu;  // a quiet NaN with a payload no kernel computes
constexpr int64_t kGuard = 16;                 // elements after the end that must stay poison

float poison_value() {
  float f;
  std::memcpy(&f, &kPoisonBits, sizeof f);
  return f;
}

bool is_poison(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits == kPoisonBits;
}

// A float output of n elements, poisoned at construction, followed by a poisoned guard zone.
class Output {
 public:
  explicit Output(int64_t n) : n_(n), buf_(static_cast<size_t>(n + kGuard), poison_value()) {}
  float* data() { return buf_.data(); }
  int64_t size() const { return n_; }
  float operator[](int64_t i) const { return buf_[static_cast<size_t>(i)]; }
  bool guard_intact() const {
    for (int64_t i = n_; i < n_ + kGuard; ++i)
      if (!is_poison((*this)[i])) return false;
    return true;
  }

 private:
  int64_t n_;
  std::vector<float> buf_;
};

struct Tolerance {
  double rel;
  double abs;
};
constexpr Tolerance kExact{0.0, 0.0};

// NaN on either side never passes, nor does an infinity unless both sides are the same one.
bool element_close(double got, double want, Tolerance tol) {
  if (std::isnan(got) || std::isnan(want)) return false;
  if (got == want) return true;
  return std::fabs(got - want) <= tol.abs + tol.rel * std::fabs(want);
}

testing::AssertionResult all_close(const Output& got, const std::vector<double>& want,
                                   Tolerance tol) {
  if (got.size() != static_cast<int64_t>(want.size()))
    return testing::AssertionFailure()
           << "output has " << got.size() << " elements, reference " << want.size();
  if (!got.guard_intact()) return testing::AssertionFailure() << "kernel wrote past the output";
  std::ostringstream detail;
  detail << std::setprecision(9);
  int64_t failures = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    const double w = want[static_cast<size_t>(i)];
    if (element_close(got[i], w, tol)) continue;
    if (failures++ < 8) {
      detail << "\n  [" << i << "] got " << got[i] << " want " << w;
      if (is_poison(got[i])) detail << " (poison: never written)";
    }
  }
  if (failures == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << failures << " of " << got.size()
                                     << " elements differ beyond rel " << tol.rel << " abs "
                                     << tol.abs << ":" << detail.str();
}

testing::AssertionResult all_close(const std::vector<double>& got, const std::vector<double>& want,
                                   Tolerance tol) {
  if (got.size() != want.size())
    return testing::AssertionFailure() << "sizes " << got.size() << " and " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (!element_close(got[i], want[i], tol))
      return testing::AssertionFailure()
             << std::setprecision(9) << "[" << i << "] got " << got[i] << " want " << want[i];
  return testing::AssertionSuccess();
}

// A byte output poisoned with one pattern, plus a guard zone. Byte kernels run twice with two
// patterns, so a byte left unwritten cannot match the reference both times by chance.
class ByteOutput {
 public:
  ByteOutput(int64_t n, unsigned char poison)
      : n_(n), poison_(poison), buf_(static_cast<size_t>(n + kGuard), poison) {}
  unsigned char* data() { return buf_.data(); }
  testing::AssertionResult equals(const Bytes& want) const {
    if (static_cast<int64_t>(want.size()) != n_)
      return testing::AssertionFailure() << "reference has " << want.size() << " bytes, not "
                                         << n_;
    for (int64_t i = n_; i < n_ + kGuard; ++i)
      if (buf_[static_cast<size_t>(i)] != poison_)
        return testing::AssertionFailure() << "kernel wrote past the output";
    for (size_t i = 0; i < want.size(); ++i)
      if (buf_[i] != want[i])
        return testing::AssertionFailure()
               << "byte " << i << " is " << int{buf_[i]} << ", want " << int{want[i]}
               << " (poison " << int{poison_} << ")";
    return testing::AssertionSuccess();
  }

 private:
  int64_t n_;
  unsigned char poison_;
  Bytes buf_;
};
constexpr unsigned char kBytePoisons[2] = {0xff, 0x00};  // 0xffffffff is a float NaN

TEST(CompareHelpers, RejectNaNMismatchPoisonAndOverrun) {
  Output y(3);
  EXPECT_FALSE(all_close(y, {1, 2, 3}, {1, 1}));  // never written: poison is NaN
  y.data()[0] = 1.f;
  y.data()[1] = 2.f;
  y.data()[2] = 3.5f;
  EXPECT_TRUE(all_close(y, {1, 2, 3.5}, kExact));
  EXPECT_FALSE(all_close(y, {1, 2, 3}, {1e-3, 1e-3}));
  EXPECT_TRUE(all_close(y, {1, 2, 3}, {0.2, 0.0}));
  EXPECT_FALSE(all_close(y, {1, 2, NAN}, {1, 1}));
  EXPECT_FALSE(all_close(y, {1, 2}, {1, 1}));
  y.data()[2] = INFINITY;
  EXPECT_FALSE(all_close(y, {1, 2, 3}, {1, 1}));
  EXPECT_TRUE(all_close(y, {1, 2, INFINITY}, kExact));
  y.data()[3] = 0.f;  // first guard element
  EXPECT_FALSE(all_close(y, {1, 2, INFINITY}, kExact));

  ByteOutput b(2, 0xff);
  EXPECT_FALSE(b.equals({1, 2}));
  b.data()[0] = 1;
  b.data()[1] = 2;
  EXPECT_TRUE(b.equals({1, 2}));
  b.data()[2] = 0;
  EXPECT_FALSE(b.equals({1, 2}));
}

// ------------------------------------------------------------------------------- activation

// The formulas of params.h, in double, where possible through a different identity than the
// kernel would naturally use.
double sigmoid_ref(double x) { return 0.5 * (1.0 + std::tanh(0.5 * x)); }

double activation_ref(const Activation& a, double x) {
  switch (a.kind) {
    case ActivationKind::kNone:
      return x;
    case ActivationKind::kRelu:
      return std::max(x, 0.0);
    case ActivationKind::kClip:
      return std::min(std::max(x, double{a.alpha}), double{a.beta});
    case ActivationKind::kLeakyRelu:
      return x >= 0 ? x : a.alpha * x;
    case ActivationKind::kSigmoid:
      return sigmoid_ref(x);
    case ActivationKind::kTanh:
      return 1.0 - 2.0 / (std::exp(2.0 * x) + 1.0);
    case ActivationKind::kHardSigmoid: {
      const double v = double{a.alpha} * x + a.beta;
      return v <= 0 ? 0.0 : (v >= 1 ? 1.0 : v);
    }
    case ActivationKind::kHardSwish:
      return x <= -3 ? 0.0 : (x >= 3 ? x : x * (x + 3) / 6);
    case ActivationKind::kSilu:
      return x * sigmoid_ref(x);
    case ActivationKind::kGelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case ActivationKind::kElu:
      return x >= 0 ? x : a.alpha * (std::exp(x) - 1.0);
  }
  ADD_FAILURE() << "activation kind " << int(a.kind) << " has no reference";
  return NAN;
}

// One entry per ActivationKind, in enum order, with parameters that matter.
const Activation kEveryActivation[] = {
    {ActivationKind::kNone, 0.f, 0.f},       {ActivationKind::kRelu, 0.f, 0.f},
    {ActivationKind::kClip, -0.5f, 2.f},     {ActivationKind::kLeakyRelu, 0.1f, 0.f},
    {ActivationKind::kSigmoid, 0.f, 0.f},    {ActivationKind::kTanh, 0.f, 0.f},
    {ActivationKind::kHardSigmoid, 0.2f, 0.5f}, {ActivationKind::kHardSwish, 0.f, 0.f},
    {ActivationKind::kSilu, 0.f, 0.f},       {ActivationKind::kGelu, 0.f, 0.f},
    {ActivationKind::kElu, 1.3f, 0.f},
};
static_assert(sizeof kEveryActivation / sizeof kEveryActivation[0] == kActivationKindCount,
              "a new ActivationKind needs an entry here and a formula in activation_ref");

constexpr Tolerance kActivationTol{1e-5, 1e-6};

TEST(Activation, TableCoversEveryKindInOrder) {
  for (int k = 0; k < kActivationKindCount; ++k)
    EXPECT_EQ(static_cast<int>(kEveryActivation[k].kind), k);
}

TEST(Activation, EveryKindMatchesItsFormula) {
  SEEDED_RNG(rng);
  std::vector<float> x = {-100.f, -30.f, -10.f, -6.f, -3.0001f, -3.f, -2.5f, -1.f, -0.5f,
                          -1e-3f, -1e-6f, 0.f,    1e-6f, 1e-3f,   0.5f, 1.f,  2.f,  2.5f,
                          3.f,    3.0001f, 6.f,  10.f,  30.f,    100.f};
  const std::vector<float> random = rng.uniform(64, -8.f, 8.f);
  x.insert(x.end(), random.begin(), random.end());
  const int64_t n = static_cast<int64_t>(x.size());

  for (const Activation& act : kEveryActivation) {
    SCOPED_TRACE("activation kind " + std::to_string(int(act.kind)));
    std::vector<double> want;
    for (float v : x) want.push_back(activation_ref(act, v));

    Output y(n);
    cpu::activation({n, act}, x.data(), y.data());
    EXPECT_TRUE(all_close(y, want, kActivationTol));

    Output single(n);
    for (int64_t i = 0; i < n; ++i) single.data()[i] = cpu::apply_activation(act, x[size_t(i)]);
    EXPECT_TRUE(all_close(single, want, kActivationTol));
  }
}

TEST(Activation, HandValues) {
  const Activation clip{ActivationKind::kClip, -1.f, 1.f};
  EXPECT_EQ(cpu::apply_activation(clip, -3.f), -1.f);
  EXPECT_EQ(cpu::apply_activation(clip, 0.25f), 0.25f);
  EXPECT_EQ(cpu::apply_activation(clip, 3.f), 1.f);
  EXPECT_EQ(cpu::apply_activation({ActivationKind::kLeakyRelu, 0.5f, 0.f}, -4.f), -2.f);
  EXPECT_EQ(cpu::apply_activation({ActivationKind::kHardSwish, 0.f, 0.f}, 1.5f), 1.125f);
  EXPECT_EQ(cpu::apply_activation({ActivationKind::kHardSigmoid, 0.5f, 0.25f}, 1.f), 0.75f);
  EXPECT_FLOAT_EQ(cpu::apply_activation({ActivationKind::kSigmoid, 0.f, 0.f}, 0.f), 0.5f);
  EXPECT_FLOAT_EQ(cpu::apply_activation({ActivationKind::kGelu, 0.f, 0.f}, 1.f), 0.8413447f);
  EXPECT_FLOAT_EQ(cpu::apply_activation({ActivationKind::kElu, 2.f, 0.f}, -1.f), -1.2642411f);
}

TEST(Activation, InPlace) {
  SEEDED_RNG(rng);
  const std::vector<float> x = rng.uniform(257, -6.f, 6.f);
  for (const Activation& act : kEveryActivation) {
    SCOPED_TRACE("activation kind " + std::to_string(int(act.kind)));
    std::vector<double> want;
    for (float v : x) want.push_back(activation_ref(act, v));
    Output buf(static_cast<int64_t>(x.size()));
    std::copy(x.begin(), x.end(), buf.data());
    cpu::activation({buf.size(), act}, buf.data(), buf.data());
    EXPECT_TRUE(all_close(buf, want, kActivationTol));
  }
}

// ----------------------------------------------------------------------------------- binary

const BinaryOp kEveryBinaryOp[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul,
                                   BinaryOp::kDiv, BinaryOp::kMax, BinaryOp::kMin,
                                   BinaryOp::kPow};
static_assert(sizeof kEveryBinaryOp / sizeof kEveryBinaryOp[0] == kBinaryOpCount,
              "a new BinaryOp needs an entry here and in binary_ref");

double binary_ref(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
    case BinaryOp::kMax:
      return std::max(a, b);
    case BinaryOp::kMin:
      return std::min(a, b);
    case BinaryOp::kPow:
      return std::pow(a, b);
  }
  ADD_FAILURE() << "binary op " << int(op) << " has no reference";
  return NAN;
}

// numpy broadcasting, the shapes aligned at their last dim.
Shape broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    out[i] = std::max(da, db);
  }
  return out;
}

// Strides of a dense tensor `shape` read at the coordinates of `out`: 0 for a broadcast dim.
void broadcast_strides(const Shape& shape, const Shape& out, int64_t* strides) {
  const size_t lead = out.size() - shape.size();
  int64_t dense = 1;
  for (size_t i = out.size(); i-- > 0;) {
    const int64_t d = i < lead ? 1 : shape[i - lead];
    strides[i] = d == 1 ? 0 : dense;
    dense *= d;
  }
}

BinaryParams binary_params(BinaryOp op, const Shape& a, const Shape& b, Activation act) {
  const Shape out = broadcast(a, b);
  BinaryParams p;
  p.op = op;
  p.rank = static_cast<int32_t>(out.size());
  for (size_t i = 0; i < out.size(); ++i) p.out_dims[i] = out[i];
  broadcast_strides(a, out, p.a_strides);
  broadcast_strides(b, out, p.b_strides);
  p.act = act;
  return p;
}

// Element of dense `shape` that output coordinate `c` reads: each coordinate taken modulo the
// operand's dim (a dim of 1 always gives 0), the shape aligned at its last dim.
int64_t broadcast_index(const Shape& c, const Shape& shape) {
  const size_t lead = c.size() - shape.size();
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + c[lead + d] % shape[d];
  return i;
}

std::vector<double> binary_reference(BinaryOp op, const Shape& as, const std::vector<float>& a,
                                     const Shape& bs, const std::vector<float>& b,
                                     Activation act) {
  const Shape out = broadcast(as, bs);
  std::vector<double> y;
  for (int64_t i = 0; i < volume(out); ++i) {
    const Shape c = unravel(i, out);
    const double v = binary_ref(op, a[size_t(broadcast_index(c, as))],
                                b[size_t(broadcast_index(c, bs))]);
    y.push_back(activation_ref(act, v));
  }
  return y;
}

// Operands in the ranges where every op is finite and well conditioned.
void binary_inputs(SeededRng& rng, BinaryOp op, int64_t na, int64_t nb, std::vector<float>& a,
                   std::vector<float>& b) {
  a = op == BinaryOp::kPow ? rng.uniform(na, 0.5f, 2.f) : rng.uniform(na, -2.f, 2.f);
  b = op == BinaryOp::kDiv ? rng.signed_magnitude(nb, 0.5f, 2.f) : rng.uniform(nb, -2.f, 2.f);
}

constexpr Tolerance kBinaryTol{1e-6, 1e-6};

TEST(Binary, HandBroadcasts) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, row = {10, 20, 30};
  Output y(6);
  cpu::binary(binary_params(BinaryOp::kAdd, {2, 3}, {3}, {}), a.data(), row.data(), y.data());
  EXPECT_TRUE(all_close(y, {11, 22, 33, 14, 25, 36}, kExact));

  const std::vector<float> col = {1, 2};
  Output z(6);
  cpu::binary(binary_params(BinaryOp::kSub, {2, 1}, {1, 3}, {}), col.data(), row.data(),
              z.data());
  EXPECT_TRUE(all_close(z, {-9, -19, -29, -8, -18, -28}, kExact));

  const std::vector<float> s = {2};
  Output w(6);
  cpu::binary(binary_params(BinaryOp::kPow, {2, 3}, {1}, {ActivationKind::kClip, 0.f, 20.f}),
              a.data(), s.data(), w.data());
  EXPECT_TRUE(all_close(w, {1, 4, 9, 16, 20, 20}, kExact));
}

struct BinaryShapes {
  Shape a, b;
};

TEST(Binary, EveryOpOverBroadcastShapes) {
  SEEDED_RNG(rng);
  const BinaryShapes cases[] = {
      {{2, 3, 4}, {3, 1}},
      {{1}, {2, 3}},
      {{2, 3}, {1}},
      {{2, 1, 4}, {1, 3, 1}},
      {{4, 5}, {4, 5}},
      {{}, {}},
      {{3, 1, 5, 1, 2}, {4, 1, 3, 1}},
      {{2, 1, 2, 1, 2, 1, 2, 3}, {1, 2, 1, 2, 1, 2, 1, 3}},  // kMaxRank
  };
  for (const BinaryShapes& s : cases) {
    // Both operand orders: catches an op applied backwards or a broadcast that works one way.
    for (const auto& [sa, sb] : {std::pair{s.a, s.b}, std::pair{s.b, s.a}}) {
      for (BinaryOp op : kEveryBinaryOp) {
        SCOPED_TRACE("op " + std::to_string(int(op)) + " shapes of rank " +
                     std::to_string(sa.size()) + " and " + std::to_string(sb.size()));
        std::vector<float> a, b;
        binary_inputs(rng, op, volume(sa), volume(sb), a, b);
        Output y(volume(broadcast(sa, sb)));
        cpu::binary(binary_params(op, sa, sb, {}), a.data(), b.data(), y.data());
        EXPECT_TRUE(all_close(y, binary_reference(op, sa, a, sb, b, {}), kBinaryTol));
      }
    }
  }
}

TEST(Binary, FusedActivation) {
  SEEDED_RNG(rng);
  const Shape as = {3, 4, 5}, bs = {4, 1};
  const std::pair<BinaryOp, Activation> cases[] = {
      {BinaryOp::kSub, {ActivationKind::kRelu, 0.f, 0.f}},
      {BinaryOp::kMul, {ActivationKind::kLeakyRelu, 0.1f, 0.f}},
      {BinaryOp::kAdd, {ActivationKind::kSigmoid, 0.f, 0.f}},
      {BinaryOp::kMax, {ActivationKind::kClip, -0.5f, 0.5f}},
  };
  for (const auto& [op, act] : cases) {
    SCOPED_TRACE("op " + std::to_string(int(op)) + " act " + std::to_string(int(act.kind)));
    std::vector<float> a, b;
    binary_inputs(rng, op, volume(as), volume(bs), a, b);
    Output y(volume(as));
    cpu::binary(binary_params(op, as, bs, act), a.data(), b.data(), y.data());
    EXPECT_TRUE(all_close(y, binary_reference(op, as, a, bs, b, act), kBinaryTol));
  }
}

TEST(Binary, StridedOperandReadsATransposedView) {
  SEEDED_RNG(rng);
  // a is stored [4, 3] and read as its transpose [3, 4]; b is dense [3, 4].
  const std::vector<float> a = rng.uniform(12, -2.f, 2.f), b = rng.uniform(12, -2.f, 2.f);
  BinaryParams p;
  p.op = BinaryOp::kSub;
  p.rank = 2;
  p.out_dims[0] = 3;
  p.out_dims[1] = 4;
  p.a_strides[0] = 1;
  p.a_strides[1] = 3;
  p.b_strides[0] = 4;
  p.b_strides[1] = 1;
  std::vector<double> want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) want.push_back(double{a[size_t(j * 3 + i)]} - b[size_t(i * 4 + j)]);
  Output y(12);
  cpu::binary(p, a.data(), b.data(), y.data());
  EXPECT_TRUE(all_close(y, want, kBinaryTol));
}

// ------------------------------------------------------------------------------------- conv

// A convolution in the terms of the contract; padding at the end is explicit here and out() is
// derived from it.
struct ConvShape {
  int64_t batch = 1, in_channels = 1, out_channels = 1, groups = 1;
  Shape in, kernel, stride, dilation, pad_begin, pad_end;

  Shape out() const {
    Shape o(in.size());
    for (size_t d = 0; d < in.size(); ++d)
      o[d] = (in[d] + pad_begin[d] + pad_end[d] - dilation[d] * (kernel[d] - 1) - 1) / stride[d] +
             1;
    return o;
  }
  int64_t x_count() const { return batch * in_channels * volume(in); }
  int64_t w_count() const { return out_channels * (in_channels / groups) * volume(kernel); }
  int64_t y_count() const { return batch * out_channels * volume(out()); }
};

ConvParams conv_params(const ConvShape& s, bool bias, bool residual, Activation act) {
  ConvParams p;
  p.spatial_rank = static_cast<int32_t>(s.in.size());
  p.batch = s.batch;
  p.in_channels = s.in_channels;
  p.out_channels = s.out_channels;
  p.groups = s.groups;
  const Shape out = s.out();
  for (size_t d = 0; d < s.in.size(); ++d) {
    p.in_size[d] = s.in[d];
    p.out_size[d] = out[d];
    p.kernel[d] = s.kernel[d];
    p.stride[d] = s.stride[d];
    p.dilation[d] = s.dilation[d];
    p.pad_begin[d] = s.pad_begin[d];
  }
  p.has_bias = bias;
  p.has_residual = residual;
  p.act = act;
  return p;
}

// im2col + plain matrix multiply, in double. Weights [out_channels, in_channels / groups,
// *kernel] are already the [out_channels, rows] matrix that multiplies the column matrix.
std::vector<double> conv_reference(const ConvShape& s, const std::vector<float>& x,
                                   const std::vector<float>& w, const float* bias,
                                   const float* residual, Activation act) {
  const Shape out = s.out();
  const int64_t in_vol = volume(s.in), out_vol = volume(out), k_vol = volume(s.kernel);
  const int64_t in_per_group = s.in_channels / s.groups;
  const int64_t out_per_group = s.out_channels / s.groups;
  const int64_t rows = in_per_group * k_vol;
  std::vector<double> y(size_t(s.y_count()));
  std::vector<double> cols(size_t(rows * out_vol));
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t g = 0; g < s.groups; ++g) {
      for (int64_t ic = 0; ic < in_per_group; ++ic)
        for (int64_t kk = 0; kk < k_vol; ++kk)
          for (int64_t op = 0; op < out_vol; ++op) {
            const Shape kc = unravel(kk, s.kernel), oc = unravel(op, out);
            Shape ix(s.in.size());
            bool in_x = true;
            for (size_t d = 0; d < s.in.size(); ++d) {
              ix[d] = oc[d] * s.stride[d] - s.pad_begin[d] + kc[d] * s.dilation[d];
              in_x = in_x && ix[d] >= 0 && ix[d] < s.in[d];
            }
            const int64_t channel = g * in_per_group + ic;
            cols[size_t((ic * k_vol + kk) * out_vol + op)] =
                in_x ? x[size_t((n * s.in_channels + channel) * in_vol + ravel(ix, s.in))] : 0.0;
          }
      for (int64_t o = 0; o < out_per_group; ++o)
        for (int64_t op = 0; op < out_vol; ++op) {
          const int64_t oc = g * out_per_group + o;
          double v = 0;
          for (int64_t r = 0; r < rows; ++r)
            v += double{w[size_t(oc * rows + r)]} * cols[size_t(r * out_vol + op)];
          const int64_t yi = (n * s.out_channels + oc) * out_vol + op;
          if (bias) v += bias[oc];
          if (residual) v += residual[yi];
          y[size_t(yi)] = activation_ref(act, v);
        }
    }
  return y;
}

constexpr Tolerance kConvTol{1e-5, 1e-5};

ConvShape conv_1d(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                  int64_t pad_end) {
  ConvShape s;
  s.in = {in};
  s.kernel = {kernel};
  s.stride = {stride};
  s.dilation = {dilation};
  s.pad_begin = {pad_begin};
  s.pad_end = {pad_end};
  return s;
}

TEST(Conv, Hand1DPaddingAndEpilogueOrder) {
  const ConvShape s = conv_1d(4, 3, 1, 1, 1, 1);
  const std::vector<float> x = {1, 2, 3, 4}, w = {1, 0, -1}, bias = {0.5f},
                           residual = {1, 2, 0, -4};
  Output plain(4);
  cpu::conv(conv_params(s, false, false, {}), x.data(), w.data(), nullptr, nullptr, plain.data());
  EXPECT_TRUE(all_close(plain, {-2, -2, -2, 3}, kExact));

  Output biased(4);
  cpu::conv(conv_params(s, true, false, {}), x.data(), w.data(), bias.data(), nullptr,
            biased.data());
  EXPECT_TRUE(all_close(biased, {-1.5, -1.5, -1.5, 3.5}, kExact));

  // relu(conv + bias + residual) = relu({-0.5, 0.5, -1.5, -0.5}); applying relu before the
  // residual would give {1, 2, 0, -0.5}.
  Output fused(4);
  cpu::conv(conv_params(s, true, true, {ActivationKind::kRelu, 0.f, 0.f}), x.data(), w.data(),
            bias.data(), residual.data(), fused.data());
  EXPECT_TRUE(all_close(fused, {0, 0.5, 0, 0}, kExact));
}

TEST(Conv, Hand1DDilation) {
  const ConvShape s = conv_1d(6, 2, 1, 2, 0, 0);  // y[o] = x[o] + 10 x[o + 2]
  const std::vector<float> x = {1, 2, 3, 4, 5, 6}, w = {1, 10};
  Output y(4);
  cpu::conv(conv_params(s, false, false, {}), x.data(), w.data(), nullptr, nullptr, y.data());
  EXPECT_TRUE(all_close(y, {31, 42, 53, 64}, kExact));
}

TEST(Conv, Hand2DStrideAndPadding) {
  ConvShape s;
  s.in = {3, 3};
  s.kernel = {2, 2};
  s.stride = {1, 1};
  s.dilation = {1, 1};
  s.pad_begin = {0, 0};
  s.pad_end = {0, 0};
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 1, 1, 1};
  Output y(4);
  cpu::conv(conv_params(s, false, false, {}), x.data(), w.data(), nullptr, nullptr, y.data());
  EXPECT_TRUE(all_close(y, {12, 16, 24, 28}, kExact));

  s.stride = {2, 2};
  s.pad_begin = {1, 1};
  s.pad_end = {1, 1};
  ASSERT_EQ(s.out(), (Shape{2, 2}));
  Output z(4);
  cpu::conv(conv_params(s, false, false, {}), x.data(), w.data(), nullptr, nullptr, z.data());
  EXPECT_TRUE(all_close(z, {1, 5, 11, 28}, kExact));
}

TEST(Conv, HandGroupsAndBatch) {
  // Two groups of one channel: out channel 0 sees only in channel 0, out channel 1 only 1.
  ConvShape s = conv_1d(2, 1, 1, 1, 0, 0);
  s.batch = 2;
  s.in_channels = 2;
  s.out_channels = 2;
  s.groups = 2;
  const std::vector<float> x = {1, 2, 3, 4, /*batch 1*/ 5, 6, 7, 8}, w = {2, -1}, bias = {0, 100};
  Output y(8);
  cpu::conv(conv_params(s, true, false, {}), x.data(), w.data(), bias.data(), nullptr, y.data());
  EXPECT_TRUE(all_close(y, {2, 4, 97, 96, 10, 12, 93, 92}, kExact));
}

enum class GroupKind { kDense, kTwoGroups, kDepthwise, kDepthwiseTimesTwo };
enum class Epilogue { kNone, kBias, kBiasResidualRelu, kResidualSilu };
using ConvCase = std::tuple<int /*rank*/, int /*stride*/, int /*dilation*/, GroupKind,
                            int /*batch*/, Epilogue>;

// Odd channel counts per group, asymmetric padding, a kernel that is not square.
ConvShape conv_case_shape(const ConvCase& c) {
  const auto [rank, stride, dilation, groups, batch, epilogue] = c;
  static const int64_t kIn[3] = {7, 6, 5}, kKernel[3] = {3, 2, 3};
  static const int64_t kPadBegin[3] = {1, 0, 2}, kPadEnd[3] = {0, 1, 1};
  ConvShape s;
  s.batch = batch;
  for (int d = 0; d < rank; ++d) {
    s.in.push_back(kIn[d]);
    s.kernel.push_back(kKernel[d]);
    s.stride.push_back(stride);
    s.dilation.push_back(dilation);
    s.pad_begin.push_back(kPadBegin[d]);
    s.pad_end.push_back(kPadEnd[d]);
  }
  switch (groups) {
    case GroupKind::kDense:
      s.in_channels = 3, s.out_channels = 5, s.groups = 1;
      break;
    case GroupKind::kTwoGroups:
      s.in_channels = 6, s.out_channels = 10, s.groups = 2;
      break;
    case GroupKind::kDepthwise:
      s.in_channels = 5, s.out_channels = 5, s.groups = 5;
      break;
    case GroupKind::kDepthwiseTimesTwo:
      s.in_channels = 5, s.out_channels = 10, s.groups = 5;
      break;
  }
  return s;
}

class ConvMatrix : public testing::TestWithParam<ConvCase> {};

TEST_P(ConvMatrix, MatchesIm2colMatmul) {
  SEEDED_RNG(rng);
  const ConvShape s = conv_case_shape(GetParam());
  const Epilogue e = std::get<5>(GetParam());
  const bool has_bias = e == Epilogue::kBias || e == Epilogue::kBiasResidualRelu;
  const bool has_residual = e == Epilogue::kBiasResidualRelu || e == Epilogue::kResidualSilu;
  const Activation act = e == Epilogue::kBiasResidualRelu ? Activation{ActivationKind::kRelu, 0, 0}
                         : e == Epilogue::kResidualSilu   ? Activation{ActivationKind::kSilu, 0, 0}
                                                          : Activation{};
  const std::vector<float> x = rng.uniform(s.x_count(), -1.f, 1.f);
  const std::vector<float> w = rng.uniform(s.w_count(), -1.f, 1.f);
  const std::vector<float> bias = rng.uniform(s.out_channels, -1.f, 1.f);
  const std::vector<float> residual = rng.uniform(s.y_count(), -1.f, 1.f);
  const float* b = has_bias ? bias.data() : nullptr;
  const float* r = has_residual ? residual.data() : nullptr;

  Output y(s.y_count());
  cpu::conv(conv_params(s, has_bias, has_residual, act), x.data(), w.data(), b, r, y.data());
  EXPECT_TRUE(all_close(y, conv_reference(s, x, w, b, r, act), kConvTol));
}

std::string conv_case_name(const testing::TestParamInfo<ConvCase>& info) {
  const auto [rank, stride, dilation, groups, batch, epilogue] = info.param;
  static const char* kGroups[] = {"dense", "groups2", "depthwise", "depthwisex2"};
  static const char* kEpilogue[] = {"plain", "bias", "bias_res_relu", "res_silu"};
  return std::to_string(rank) + "d_s" + std::to_string(stride) + "_d" + std::to_string(dilation) +
         "_" + kGroups[int(groups)] + "_n" + std::to_string(batch) + "_" + kEpilogue[int(epilogue)];
}

INSTANTIATE_TEST_SUITE_P(
    Cpu, ConvMatrix,
    testing::Combine(testing::Values(1, 2, 3), testing::Values(1, 2), testing::Values(1, 2),
                     testing::Values(GroupKind::kDense, GroupKind::kTwoGroups,
                                     GroupKind::kDepthwise, GroupKind::kDepthwiseTimesTwo),
                     testing::Values(1, 3),
                     testing::Values(Epilogue::kNone, Epilogue::kBias,
                                     Epilogue::kBiasResidualRelu, Epilogue::kResidualSilu)),
    conv_case_name);

// Channels [first, first + count) of a [batch, channels, plane] tensor.
std::vector<float> channel_slice(const std::vector<float>& t, int64_t batch, int64_t channels,
                                 int64_t plane, int64_t first, int64_t count) {
  std::vector<float> out;
  for (int64_t n = 0; n < batch; ++n) {
    const auto begin = t.begin() + (n * channels + first) * plane;
    out.insert(out.end(), begin, begin + count * plane);
  }
  return out;
}

TEST(Conv, GroupedEqualsOneConvPerGroup) {
  SEEDED_RNG(rng);
  struct Case {
    int rank;
    int64_t in_channels, out_channels, groups, stride, dilation;
  };
  const Case cases[] = {{1, 9, 6, 3, 1, 1}, {2, 7, 7, 7, 2, 1}, {3, 4, 6, 2, 2, 2},
                        {2, 3, 9, 3, 1, 2}};
  for (const Case& c : cases) {
    SCOPED_TRACE("rank " + std::to_string(c.rank) + " groups " + std::to_string(c.groups));
    ConvShape s;
    s.batch = 2;
    s.in_channels = c.in_channels;
    s.out_channels = c.out_channels;
    s.groups = c.groups;
    for (int d = 0; d < c.rank; ++d) {
      s.in.push_back(6 - d);
      s.kernel.push_back(3);
      s.stride.push_back(c.stride);
      s.dilation.push_back(c.dilation);
      s.pad_begin.push_back(1);
      s.pad_end.push_back(2);
    }
    const Activation act{ActivationKind::kTanh, 0.f, 0.f};
    const std::vector<float> x = rng.uniform(s.x_count(), -1.f, 1.f);
    const std::vector<float> w = rng.uniform(s.w_count(), -1.f, 1.f);
    const std::vector<float> bias = rng.uniform(s.out_channels, -1.f, 1.f);
    const std::vector<float> residual = rng.uniform(s.y_count(), -1.f, 1.f);
    Output grouped(s.y_count());
    cpu::conv(conv_params(s, true, true, act), x.data(), w.data(), bias.data(), residual.data(),
              grouped.data());

    ConvShape one = s;
    one.groups = 1;
    one.in_channels = s.in_channels / s.groups;
    one.out_channels = s.out_channels / s.groups;
    const int64_t in_vol = volume(s.in), out_vol = volume(s.out());
    const int64_t w_per_group = one.w_count();
    std::vector<double> assembled(size_t(s.y_count()));
    for (int64_t g = 0; g < s.groups; ++g) {
      const std::vector<float> xg =
          channel_slice(x, s.batch, s.in_channels, in_vol, g * one.in_channels, one.in_channels);
      const std::vector<float> wg(w.begin() + g * w_per_group, w.begin() + (g + 1) * w_per_group);
      const std::vector<float> rg = channel_slice(residual, s.batch, s.out_channels, out_vol,
                                                  g * one.out_channels, one.out_channels);
      Output yg(one.y_count());
      cpu::conv(conv_params(one, true, true, act), xg.data(), wg.data(),
                bias.data() + g * one.out_channels, rg.data(), yg.data());
      ASSERT_TRUE(yg.guard_intact());
      for (int64_t n = 0; n < s.batch; ++n)
        for (int64_t i = 0; i < one.out_channels * out_vol; ++i)
          assembled[size_t((n * s.out_channels + g * one.out_channels) * out_vol + i)] =
              yg[n * one.out_channels * out_vol + i];
    }
    EXPECT_TRUE(all_close(grouped, assembled, kConvTol));
    EXPECT_TRUE(all_close(grouped, conv_reference(s, x, w, bias.data(), residual.data(), act),
                          kConvTol));
  }
}

// ------------------------------------------------------------------------------------- pool

struct PoolShape {
  int64_t batch = 1, channels = 1;
  Shape in, out, kernel, stride, dilation, pad_begin, pad_end;
};

PoolParams pool_params(const PoolShape& s, PoolKind kind, bool count_include_pad) {
  PoolParams p;
  p.kind = kind;
  p.spatial_rank = static_cast<int32_t>(s.in.size());
  p.batch = s.batch;
  p.channels = s.channels;
  for (size_t d = 0; d < s.in.size(); ++d) {
    p.in_size[d] = s.in[d];
    p.out_size[d] = s.out[d];
    p.kernel[d] = s.kernel[d];
    p.stride[d] = s.stride[d];
    p.dilation[d] = s.dilation[d];
    p.pad_begin[d] = s.pad_begin[d];
    p.pad_end[d] = s.pad_end[d];
  }
  p.count_include_pad = count_include_pad;
  return p;
}

PoolShape pool_1d(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                  int64_t pad_begin, int64_t pad_end) {
  PoolShape s;
  s.in = {in};
  s.out = {out};
  s.kernel = {kernel};
  s.stride = {stride};
  s.dilation = {dilation};
  s.pad_begin = {pad_begin};
  s.pad_end = {pad_end};
  return s;
}

// Runs one pool on x; the output is poisoned first.
Output run_pool(const PoolShape& s, PoolKind kind, bool include_pad, const std::vector<float>& x) {
  Output y(s.batch * s.channels * volume(s.out));
  cpu::pool(pool_params(s, kind, include_pad), x.data(), y.data());
  return y;
}

TEST(Pool, HandMax2D) {
  PoolShape s;
  s.in = {4, 4};
  s.out = {2, 2};
  s.kernel = {2, 2};
  s.stride = {2, 2};
  s.dilation = {1, 1};
  s.pad_begin = {0, 0};
  s.pad_end = {0, 0};
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[size_t(i)] = float(i + 1);
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kMax, false, x), {6, 8, 14, 16}, kExact));
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, false, x), {3.5, 5.5, 11.5, 13.5}, kExact));
}

TEST(Pool, HandMaxSkipsPaddingOfNegativeInput) {
  // Padding read as 0 would make every window touching it 0.
  PoolShape s;
  s.in = {3, 3};
  s.out = {3, 3};
  s.kernel = {2, 2};
  s.stride = {1, 1};
  s.dilation = {1, 1};
  s.pad_begin = {1, 1};
  s.pad_end = {0, 0};
  const std::vector<float> x = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kMax, false, x),
                        {-1, -1, -2, -1, -1, -2, -4, -4, -5}, kExact));
}

TEST(Pool, HandAverageCountIncludePadBothWays) {
  const PoolShape s = pool_1d(4, 4, 3, 1, 1, 1, 1);
  const std::vector<float> x = {1, 2, 3, 4};
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, true, x), {1, 2, 3, 7.0 / 3}, {1e-6, 0}));
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, false, x), {1.5, 2, 3, 3.5}, kExact));

  PoolShape corner;
  corner.in = {2, 2};
  corner.out = {3, 3};
  corner.kernel = {2, 2};
  corner.stride = {1, 1};
  corner.dilation = {1, 1};
  corner.pad_begin = {1, 1};
  corner.pad_end = {1, 1};
  const std::vector<float> c = {1, 2, 3, 4};
  EXPECT_TRUE(all_close(run_pool(corner, PoolKind::kAverage, true, c),
                        {0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1}, kExact));
  EXPECT_TRUE(all_close(run_pool(corner, PoolKind::kAverage, false, c),
                        {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}, kExact));
}

TEST(Pool, HandCeilModeWindowPastPadEndCountsNothing) {
  // Windows {0,1,2} {2,3,4} {4,5,6}; position 6 is past the input.
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const PoolShape no_pad = pool_1d(6, 3, 3, 2, 1, 0, 0);  // 6 lies beyond pad_end: never counts
  EXPECT_TRUE(all_close(run_pool(no_pad, PoolKind::kAverage, true, x), {2, 4, 5.5}, kExact));
  EXPECT_TRUE(all_close(run_pool(no_pad, PoolKind::kAverage, false, x), {2, 4, 5.5}, kExact));
  EXPECT_TRUE(all_close(run_pool(no_pad, PoolKind::kMax, false, x), {3, 5, 6}, kExact));
  const PoolShape pad_end = pool_1d(6, 3, 3, 2, 1, 0, 1);  // 6 is padding: counts when included
  EXPECT_TRUE(
      all_close(run_pool(pad_end, PoolKind::kAverage, true, x), {2, 4, 11.0 / 3}, {1e-6, 0}));
  EXPECT_TRUE(all_close(run_pool(pad_end, PoolKind::kAverage, false, x), {2, 4, 5.5}, kExact));
}

TEST(Pool, HandDilation) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7};
  const PoolShape s = pool_1d(7, 4, 2, 1, 3, 0, 0);  // taps o and o + 3
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kMax, false, x), {4, 5, 6, 7}, kExact));
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, false, x), {2.5, 3.5, 4.5, 5.5}, kExact));

  // Taps {-2, 0, 2}, {0, 2, 4}, {2, 4, 6}: -2 and 6 are padding.
  const std::vector<float> y = {1, 2, 3, 4, 5};
  const PoolShape p = pool_1d(5, 3, 3, 2, 2, 2, 2);
  EXPECT_TRUE(all_close(run_pool(p, PoolKind::kMax, false, y), {3, 5, 5}, kExact));
  EXPECT_TRUE(
      all_close(run_pool(p, PoolKind::kAverage, true, y), {4.0 / 3, 3, 8.0 / 3}, {1e-6, 0}));
  EXPECT_TRUE(all_close(run_pool(p, PoolKind::kAverage, false, y), {2, 3, 4}, kExact));
}

TEST(Pool, HandWindowWhollyInPaddingGivesZero) {
  // The documented choice of pool.cc: no input under the window gives 0 for max and average.
  const std::vector<float> x = {-1, -2};
  const PoolShape s = pool_1d(2, 4, 1, 1, 1, 1, 1);
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kMax, false, x), {0, -1, -2, 0}, kExact));
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, true, x), {0, -1, -2, 0}, kExact));
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, false, x), {0, -1, -2, 0}, kExact));
}

TEST(Pool, Hand3DAndChannels) {
  PoolShape s;
  s.channels = 2;
  s.in = {2, 2, 2};
  s.out = {1, 1, 1};
  s.kernel = {2, 2, 2};
  s.stride = {1, 1, 1};
  s.dilation = {1, 1, 1};
  s.pad_begin = {0, 0, 0};
  s.pad_end = {0, 0, 0};
  std::vector<float> x(16);
  for (int i = 0; i < 8; ++i) {
    x[size_t(i)] = float(i + 1);
    x[size_t(i + 8)] = -10.f * float(i + 1);
  }
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kMax, false, x), {8, -10}, kExact));
  EXPECT_TRUE(all_close(run_pool(s, PoolKind::kAverage, false, x), {4.5, -45}, kExact));
}

// Over an explicitly padded tensor: the input is laid into its middle, a mask marks real
// elements, and window taps past the padded extent do not exist.
std::vector<double> pool_reference(const PoolShape& s, PoolKind kind, bool include_pad,
                                   const std::vector<float>& x) {
  const size_t rank = s.in.size();
  Shape padded(rank);
  for (size_t d = 0; d < rank; ++d) padded[d] = s.pad_begin[d] + s.in[d] + s.pad_end[d];
  const int64_t in_vol = volume(s.in), out_vol = volume(s.out), k_vol = volume(s.kernel);
  std::vector<double> y;
  for (int64_t plane = 0; plane < s.batch * s.channels; ++plane) {
    std::vector<double> value(size_t(volume(padded)), 0.0);
    std::vector<bool> real(size_t(volume(padded)), false);
    for (int64_t i = 0; i < in_vol; ++i) {
      Shape c = unravel(i, s.in);
      for (size_t d = 0; d < rank; ++d) c[d] += s.pad_begin[d];
      value[size_t(ravel(c, padded))] = x[size_t(plane * in_vol + i)];
      real[size_t(ravel(c, padded))] = true;
    }
    for (int64_t op = 0; op < out_vol; ++op) {
      const Shape oc = unravel(op, s.out);
      double sum = 0, max = -INFINITY;
      int64_t taps = 0, inputs = 0;
      for (int64_t kk = 0; kk < k_vol; ++kk) {
        const Shape kc = unravel(kk, s.kernel);
        Shape pc(rank);
        bool exists = true;
        for (size_t d = 0; d < rank; ++d) {
          pc[d] = oc[d] * s.stride[d] + kc[d] * s.dilation[d];
          exists = exists && pc[d] < padded[d];
        }
        if (!exists) continue;
        ++taps;
        const size_t at = size_t(ravel(pc, padded));
        if (!real[at]) continue;
        ++inputs;
        sum += value[at];
        max = std::max(max, value[at]);
      }
      if (inputs == 0) ADD_FAILURE() << "the test built a window without input at " << op;
      y.push_back(kind == PoolKind::kMax ? max : sum / double(include_pad ? taps : inputs));
    }
  }
  return y;
}

enum class PoolMode { kMax, kAverageIncludePad, kAverageExcludePad };
using PoolCase = std::tuple<int /*rank*/, PoolMode, int /*stride*/, int /*dilation*/,
                            bool /*ceil*/>;

class PoolMatrix : public testing::TestWithParam<PoolCase> {};

TEST_P(PoolMatrix, MatchesPaddedTensorPool) {
  SEEDED_RNG(rng);
  const auto [rank, mode, stride, dilation, ceil_mode] = GetParam();
  static const int64_t kIn[3] = {7, 6, 5}, kKernel[3] = {3, 2, 2};
  static const int64_t kPadBegin[3] = {1, 0, 1}, kPadEnd[3] = {0, 1, 1};
  PoolShape s;
  s.batch = 2;
  s.channels = 3;
  bool window_past_pad_end = false;
  for (int d = 0; d < rank; ++d) {
    const int64_t span = kIn[d] + kPadBegin[d] + kPadEnd[d] - dilation * (kKernel[d] - 1) - 1;
    int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    // As ONNX and PyTorch do: the last window starts inside the input or the leading padding.
    if ((out - 1) * stride - kPadBegin[d] >= kIn[d]) --out;
    window_past_pad_end = window_past_pad_end || (out - 1) * stride > span;
    s.in.push_back(kIn[d]);
    s.out.push_back(out);
    s.kernel.push_back(kKernel[d]);
    s.stride.push_back(stride);
    s.dilation.push_back(dilation);
    s.pad_begin.push_back(kPadBegin[d]);
    s.pad_end.push_back(kPadEnd[d]);
  }
  if (ceil_mode && stride == 2) {
    EXPECT_TRUE(window_past_pad_end) << "the case lost its purpose";
  }

  const PoolKind kind = mode == PoolMode::kMax ? PoolKind::kMax : PoolKind::kAverage;
  const bool include_pad = mode == PoolMode::kAverageIncludePad;
  const std::vector<float> x = rng.uniform(s.batch * s.channels * volume(s.in), -1.f, 1.f);
  EXPECT_TRUE(all_close(run_pool(s, kind, include_pad, x), pool_reference(s, kind, include_pad, x),
                        kind == PoolKind::kMax ? kExact : Tolerance{1e-6, 1e-7}));
}

std::string pool_case_name(const testing::TestParamInfo<PoolCase>& info) {
  const auto [rank, mode, stride, dilation, ceil_mode] = info.param;
  static const char* kMode[] = {"max", "avg_incl_pad", "avg_excl_pad"};
  return std::to_string(rank) + "d_" + kMode[int(mode)] + "_s" + std::to_string(stride) + "_d" +
         std::to_string(dilation) + (ceil_mode ? "_ceil" : "_floor");
}

INSTANTIATE_TEST_SUITE_P(Cpu, PoolMatrix,
                         testing::Combine(testing::Values(1, 2, 3),
                                          testing::Values(PoolMode::kMax,
                                                          PoolMode::kAverageIncludePad,
                                                          PoolMode::kAverageExcludePad),
                                          testing::Values(1, 2), testing::Values(1, 2),
                                          testing::Bool()),
                         pool_case_name);

// ------------------------------------------------------------------------------------- gemm

enum class BatchMode { kSingle, kStrided, kBroadcastA, kBroadcastB };
enum class CMode { kNone, kScalar, kRow, kColumn, kSharedMatrix, kColumnMajorPerBatch };
using GemmCase = std::tuple<bool /*trans_a*/, bool /*trans_b*/, BatchMode, CMode, bool /*act*/>;

// The other orientation of a rows x cols row-major matrix.
std::vector<double> transpose(const float* m, int64_t rows, int64_t cols) {
  std::vector<double> t(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[size_t(c * rows + r)] = m[r * cols + c];
  return t;
}

std::vector<double> as_is(const float* m, int64_t rows, int64_t cols) {
  return std::vector<double>(m, m + rows * cols);
}

class GemmMatrix : public testing::TestWithParam<GemmCase> {};

TEST_P(GemmMatrix, MatchesLogicalMatrices) {
  SEEDED_RNG(rng);
  const auto [trans_a, trans_b, batch_mode, c_mode, with_act] = GetParam();
  const int64_t M = 5, N = 7, K = 9;
  const int64_t batch = batch_mode == BatchMode::kSingle ? 1 : 3;
  const int64_t gap = 3;  // strided batches leave room between matrices

  GemmParams p;
  p.batch = batch;
  p.M = M;
  p.N = N;
  p.K = K;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  p.alpha = 1.25f;
  p.beta = -0.5f;
  p.a_batch_stride = batch_mode == BatchMode::kBroadcastA ? 0 : M * K + gap;
  p.b_batch_stride = batch_mode == BatchMode::kBroadcastB ? 0 : K * N + gap;
  if (with_act) p.act = {ActivationKind::kLeakyRelu, 0.2f, 0.f};

  const int64_t a_mats = p.a_batch_stride == 0 ? 1 : batch;
  const int64_t b_mats = p.b_batch_stride == 0 ? 1 : batch;
  const std::vector<float> a = rng.uniform((a_mats - 1) * p.a_batch_stride + M * K, -1.f, 1.f);
  const std::vector<float> b = rng.uniform((b_mats - 1) * p.b_batch_stride + K * N, -1.f, 1.f);

  // C in its stored form, and C expanded to [batch, M, N] by the meaning of each mode.
  std::vector<float> c;
  std::vector<double> c_full(size_t(batch * M * N), 0.0);
  p.has_c = c_mode != CMode::kNone;
  switch (c_mode) {
    case CMode::kNone:
      break;
    case CMode::kScalar:
      c = rng.uniform(1, -1.f, 1.f);
      std::fill(c_full.begin(), c_full.end(), c[0]);
      break;
    case CMode::kRow:  // [N]
      c = rng.uniform(N, -1.f, 1.f);
      p.c_stride_n = 1;
      for (size_t i = 0; i < c_full.size(); ++i) c_full[i] = c[i % size_t(N)];
      break;
    case CMode::kColumn:  // [M, 1]
      c = rng.uniform(M, -1.f, 1.f);
      p.c_stride_m = 1;
      for (size_t i = 0; i < c_full.size(); ++i) c_full[i] = c[(i / size_t(N)) % size_t(M)];
      break;
    case CMode::kSharedMatrix: {  // one [M, N] matrix with padded rows, for every batch
      c = rng.uniform(M * (N + 2), -1.f, 1.f);
      p.c_stride_m = N + 2;
      p.c_stride_n = 1;
      for (int64_t bi = 0; bi < batch; ++bi)
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n)
            c_full[size_t((bi * M + m) * N + n)] = c[size_t(m * (N + 2) + n)];
      break;
    }
    case CMode::kColumnMajorPerBatch: {  // [batch] matrices stored [N, M]
      c = rng.uniform(batch * N * M, -1.f, 1.f);
      p.c_stride_batch = N * M;
      p.c_stride_m = 1;
      p.c_stride_n = M;
      for (int64_t bi = 0; bi < batch; ++bi) {
        const std::vector<double> t = transpose(c.data() + bi * N * M, N, M);
        std::copy(t.begin(), t.end(), c_full.begin() + bi * M * N);
      }
      break;
    }
  }

  std::vector<double> want;
  for (int64_t bi = 0; bi < batch; ++bi) {
    const float* sa = a.data() + bi * p.a_batch_stride;
    const float* sb = b.data() + bi * p.b_batch_stride;
    const std::vector<double> la = trans_a ? transpose(sa, K, M) : as_is(sa, M, K);  // [M, K]
    const std::vector<double> lb = trans_b ? transpose(sb, N, K) : as_is(sb, K, N);  // [K, N]
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double dot = 0;
        for (int64_t k = 0; k < K; ++k) dot += la[size_t(m * K + k)] * lb[size_t(k * N + n)];
        double v = double{p.alpha} * dot;
        if (p.has_c) v += double{p.beta} * c_full[size_t((bi * M + m) * N + n)];
        want.push_back(activation_ref(p.act, v));
      }
  }

  Output y(batch * M * N);
  cpu::gemm(p, a.data(), b.data(), p.has_c ? c.data() : nullptr, y.data());
  EXPECT_TRUE(all_close(y, want, {1e-5, 1e-6}));
}

std::string gemm_case_name(const testing::TestParamInfo<GemmCase>& info) {
  const auto [trans_a, trans_b, batch_mode, c_mode, with_act] = info.param;
  static const char* kBatch[] = {"single", "strided", "bcastA", "bcastB"};
  static const char* kC[] = {"noC", "Cscalar", "Crow", "Ccol", "Cshared", "Ccolmajor"};
  return std::string(trans_a ? "At" : "A") + (trans_b ? "Bt" : "B") + "_" +
         kBatch[int(batch_mode)] + "_" + kC[int(c_mode)] + (with_act ? "_leaky" : "");
}

INSTANTIATE_TEST_SUITE_P(
    Cpu, GemmMatrix,
    testing::Combine(testing::Bool(), testing::Bool(),
                     testing::Values(BatchMode::kSingle, BatchMode::kStrided,
                                     BatchMode::kBroadcastA, BatchMode::kBroadcastB),
                     testing::Values(CMode::kNone, CMode::kScalar, CMode::kRow, CMode::kColumn,
                                     CMode::kSharedMatrix, CMode::kColumnMajorPerBatch),
                     testing::Bool()),
    gemm_case_name);

TEST(Gemm, Hand2x2AllTransposes) {
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8}, c = {1};
  GemmParams p;
  p.M = p.N = p.K = 2;
  const struct {
    bool ta, tb;
    std::vector<double> want;
  } cases[] = {
      {false, false, {19, 22, 43, 50}},  // [[1,2],[3,4]] [[5,6],[7,8]]
      {true, false, {26, 30, 38, 44}},   // [[1,3],[2,4]] [[5,6],[7,8]]
      {false, true, {17, 23, 39, 53}},   // [[1,2],[3,4]] [[5,7],[6,8]]
      {true, true, {23, 31, 34, 46}},    // [[1,3],[2,4]] [[5,7],[6,8]]
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(std::string("trans_a ") + (k.ta ? "1" : "0") + " trans_b " + (k.tb ? "1" : "0"));
    p.trans_a = k.ta;
    p.trans_b = k.tb;
    p.has_c = false;
    Output y(4);
    cpu::gemm(p, a.data(), b.data(), nullptr, y.data());
    EXPECT_TRUE(all_close(y, k.want, kExact));

    // alpha 2, beta 3 with a scalar C of 1: 2 * AB + 3.
    p.alpha = 2.f;
    p.beta = 3.f;
    p.has_c = true;
    Output z(4);
    cpu::gemm(p, a.data(), b.data(), c.data(), z.data());
    std::vector<double> want;
    for (double v : k.want) want.push_back(2 * v + 3);
    EXPECT_TRUE(all_close(z, want, kExact));
    p.alpha = p.beta = 1.f;
  }
}

// ---------------------------------------------------------------------------------- softmax

// Shifted by the first element of each row rather than the max: a different route to the same
// stable result, fine for rows whose spread is far below the exp overflow threshold.
std::vector<double> softmax_reference(const std::vector<float>& x, int64_t outer, int64_t axis,
                                      int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return size_t((o * axis + j) * inner + i); };
      const double shift = x[at(0)];
      double sum = 0;
      for (int64_t j = 0; j < axis; ++j) sum += std::exp(x[at(j)] - shift);
      for (int64_t j = 0; j < axis; ++j)
        y[at(j)] = log ? (x[at(j)] - shift) - std::log(sum) : std::exp(x[at(j)] - shift) / sum;
    }
  return y;
}

Output run_softmax(const std::vector<float>& x, int64_t outer, int64_t axis, int64_t inner,
                   bool log) {
  Output y(outer * axis * inner);
  cpu::softmax({outer, axis, inner, log}, x.data(), y.data());
  return y;
}

// Sum over the axis of each (outer, inner) row, of exp(y) for a log softmax.
std::vector<double> row_sums(const Output& y, int64_t outer, int64_t axis, int64_t inner,
                             bool log) {
  std::vector<double> sums;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double s = 0;
      for (int64_t j = 0; j < axis; ++j) {
        const double v = y[(o * axis + j) * inner + i];
        s += log ? std::exp(v) : v;
      }
      sums.push_back(s);
    }
  return sums;
}

constexpr Tolerance kSoftmaxTol{1e-6, 1e-7};

TEST(Softmax, Hand) {
  const std::vector<float> x = {1, 2, 3};
  EXPECT_TRUE(all_close(run_softmax(x, 1, 3, 1, false), {0.0900305732, 0.244728471, 0.665240956},
                        kSoftmaxTol));
  EXPECT_TRUE(all_close(run_softmax(x, 1, 3, 1, true),
                        {-2.40760596, -1.40760596, -0.407605964}, kSoftmaxTol));
  // A single element along the axis is certain.
  EXPECT_TRUE(all_close(run_softmax(x, 3, 1, 1, false), {1, 1, 1}, kExact));
  EXPECT_TRUE(all_close(run_softmax(x, 1, 1, 3, true), {0, 0, 0}, kExact));
}

TEST(Softmax, RandomRowsAndInnerAxis) {
  SEEDED_RNG(rng);
  for (int64_t inner : {1, 5}) {
    for (bool log : {false, true}) {
      SCOPED_TRACE("inner " + std::to_string(inner) + (log ? " log" : ""));
      const int64_t outer = 3, axis = 7;
      const std::vector<float> x = rng.uniform(outer * axis * inner, -5.f, 5.f);
      const Output y = run_softmax(x, outer, axis, inner, log);
      EXPECT_TRUE(all_close(y, softmax_reference(x, outer, axis, inner, log), kSoftmaxTol));
      EXPECT_TRUE(all_close(row_sums(y, outer, axis, inner, log),
                            std::vector<double>(size_t(outer * inner), 1.0), {0, 1e-6}));
    }
  }
}

TEST(Softmax, LargeInputsDoNotOverflow) {
  SEEDED_RNG(rng);
  for (float center : {1000.f, -1000.f, 80.f}) {
    for (bool log : {false, true}) {
      SCOPED_TRACE("center " + std::to_string(center) + (log ? " log" : ""));
      const int64_t outer = 2, axis = 9, inner = 3;
      std::vector<float> x = rng.uniform(outer * axis * inner, -10.f, 10.f);
      for (float& v : x) v += center;
      const Output y = run_softmax(x, outer, axis, inner, log);
      EXPECT_TRUE(all_close(y, softmax_reference(x, outer, axis, inner, log), kSoftmaxTol));
      EXPECT_TRUE(all_close(row_sums(y, outer, axis, inner, log),
                            std::vector<double>(size_t(outer * inner), 1.0), {0, 1e-6}));
    }
  }
  // A spread of 2000 along one row: the small entries underflow to exactly 0, the large one is 1.
  const std::vector<float> wide = {1000.f, -1000.f, 0.f};
  EXPECT_TRUE(all_close(run_softmax(wide, 1, 3, 1, false), {1, 0, 0}, kExact));
  EXPECT_TRUE(all_close(run_softmax(wide, 1, 3, 1, true), {0, -2000, -1000}, {1e-6, 0}));
}

// ------------------------------------------------------------------------------- batch norm

TEST(BatchNorm, Hand) {
  // Channel 0: 2 (x - 1) / 2 + 1 = x. Channel 1: 0.5 (x - 2) / 0.5 - 1 = x - 3.
  const std::vector<float> x = {1, 2, 3, 4}, scale = {2, 0.5f}, bias = {1, -1}, mean = {1, 2},
                           var = {4, 0.25f};
  BatchNormParams p;
  p.channels = 2;
  p.spatial = 2;
  p.epsilon = 0.f;
  Output y(4);
  cpu::batch_norm(p, x.data(), scale.data(), bias.data(), mean.data(), var.data(), y.data());
  EXPECT_TRUE(all_close(y, {1, 2, 0, 1}, kExact));

  // Epsilon is added to var: var 0 with epsilon 1 divides by 1.
  const std::vector<float> zero_var = {0, 0};
  p.epsilon = 1.f;
  Output z(4);
  cpu::batch_norm(p, x.data(), scale.data(), bias.data(), mean.data(), zero_var.data(), z.data());
  EXPECT_TRUE(all_close(z, {1, 3, -0.5, 0}, kExact));
}

TEST(BatchNorm, RandomMatchesFormula) {
  SEEDED_RNG(rng);
  BatchNormParams p;
  p.batch = 3;
  p.channels = 5;
  p.spatial = 7;
  p.epsilon = 1e-3f;
  const std::vector<float> x = rng.uniform(p.batch * p.channels * p.spatial, -3.f, 3.f);
  const std::vector<float> scale = rng.uniform(p.channels, -2.f, 2.f);
  const std::vector<float> bias = rng.uniform(p.channels, -1.f, 1.f);
  const std::vector<float> mean = rng.uniform(p.channels, -1.f, 1.f);
  const std::vector<float> var = rng.uniform(p.channels, 0.05f, 2.f);
  std::vector<double> want;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.channels; ++c) {
      const double factor =
          scale[size_t(c)] / std::sqrt(double{var[size_t(c)]} + double{p.epsilon});
      for (int64_t s = 0; s < p.spatial; ++s)
        want.push_back((x[size_t((n * p.channels + c) * p.spatial + s)] - double{mean[size_t(c)]}) *
                           factor +
                       bias[size_t(c)]);
    }
  Output y(p.batch * p.channels * p.spatial);
  cpu::batch_norm(p, x.data(), scale.data(), bias.data(), mean.data(), var.data(), y.data());
  EXPECT_TRUE(all_close(y, want, {1e-6, 1e-6}));
}

// --------------------------------------------------------------------------- concat and copy

using ConcatCase = std::tuple<int /*axis of a rank-3 tensor*/, int /*elem_bytes*/>;
class ConcatMatrix : public testing::TestWithParam<ConcatCase> {};

// Output built element by element from 3-D coordinates, not from outer/inner rows.
Bytes concat_reference(const std::vector<Shape>& shapes, const std::vector<Bytes>& inputs,
                       int axis, int64_t elem_bytes) {
  Shape out = shapes[0];
  out[size_t(axis)] = 0;
  for (const Shape& s : shapes) out[size_t(axis)] += s[size_t(axis)];
  Bytes y(size_t(volume(out) * elem_bytes));
  int64_t offset = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (int64_t e = 0; e < volume(shapes[i]); ++e) {
      Shape c = unravel(e, shapes[i]);
      c[size_t(axis)] += offset;
      std::copy_n(inputs[i].begin() + e * elem_bytes, elem_bytes,
                  y.begin() + ravel(c, out) * elem_bytes);
    }
    offset += shapes[i][size_t(axis)];
  }
  return y;
}

TEST_P(ConcatMatrix, ThreeInputsMatchCoordinateCopy) {
  SEEDED_RNG(rng);
  const auto [axis, elem_bytes] = GetParam();
  const Shape base = {2, 3, 4};
  const int64_t lens[3] = {1, 3, 2};
  std::vector<Shape> shapes;
  std::vector<Bytes> inputs;
  std::vector<const void*> pointers;
  ConcatParams p;
  p.elem_bytes = elem_bytes;
  p.num_inputs = 3;
  for (int i = 0; i < 3; ++i) {
    Shape s = base;
    s[size_t(axis)] = lens[i];
    shapes.push_back(s);
    inputs.push_back(rng.bytes(volume(s) * elem_bytes));
    p.axis_len[i] = lens[i];
  }
  for (const Bytes& in : inputs) pointers.push_back(in.data());
  p.outer = 1;
  for (int d = 0; d < axis; ++d) p.outer *= base[size_t(d)];
  p.inner = 1;
  for (int d = axis + 1; d < 3; ++d) p.inner *= base[size_t(d)];

  const Bytes want = concat_reference(shapes, inputs, axis, elem_bytes);
  for (unsigned char poison : kBytePoisons) {
    ByteOutput y(int64_t(want.size()), poison);
    cpu::concat(p, pointers.data(), y.data());
    EXPECT_TRUE(y.equals(want));
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, ConcatMatrix,
                         testing::Combine(testing::Values(0, 1, 2), testing::Values(1, 2, 4, 8)),
                         [](const testing::TestParamInfo<ConcatCase>& info) {
                           return "axis" + std::to_string(std::get<0>(info.param)) + "_" +
                                  std::to_string(std::get<1>(info.param)) + "bytes";
                         });

TEST(Concat, MaxInputsAndAnEmptyOne) {
  SEEDED_RNG(rng);
  const int64_t outer = 2, inner = 3, elem_bytes = 4;
  ConcatParams p;
  p.outer = outer;
  p.inner = inner;
  p.elem_bytes = elem_bytes;
  p.num_inputs = kMaxConcatInputs;
  std::vector<Shape> shapes;
  std::vector<Bytes> inputs;
  std::vector<const void*> pointers;
  for (int i = 0; i < kMaxConcatInputs; ++i) {
    const int64_t len = i == 5 ? 0 : 1 + i % 3;  // input 5 is empty and passed as null
    shapes.push_back({outer, len, inner});
    inputs.push_back(rng.bytes(outer * len * inner * elem_bytes));
    p.axis_len[i] = len;
  }
  for (const Bytes& in : inputs) pointers.push_back(in.empty() ? nullptr : in.data());
  const Bytes want = concat_reference(shapes, inputs, 1, elem_bytes);
  for (unsigned char poison : kBytePoisons) {
    ByteOutput y(int64_t(want.size()), poison);
    cpu::concat(p, pointers.data(), y.data());
    EXPECT_TRUE(y.equals(want));
  }
}

TEST(Copy, BytesArriveExactly) {
  SEEDED_RNG(rng);
  for (int64_t n : {1, 37, 4096}) {
    SCOPED_TRACE(std::to_string(n) + " bytes");
    const Bytes x = rng.bytes(n);
    for (unsigned char poison : kBytePoisons) {
      ByteOutput y(n, poison);
      cpu::copy({n}, x.data(), y.data());
      EXPECT_TRUE(y.equals(x));
    }
  }
}

TEST(Copy, InPlaceKeepsTheData) {
  SEEDED_RNG(rng);
  const Bytes x = rng.bytes(1000);
  Bytes buf = x;
  cpu::copy({int64_t(buf.size())}, buf.data(), buf.data());
  EXPECT_EQ(buf, x);
}

TEST(Copy, ZeroBytesWritesNothing) {
  const Bytes x = {1, 2, 3};
  for (unsigned char poison : kBytePoisons) {
    ByteOutput y(3, poison);
    cpu::copy({0}, x.data(), y.data());
    EXPECT_TRUE(y.equals(Bytes(3, poison)));
  }
}

}  // namespace
}  // namespace jetplan::kernels
