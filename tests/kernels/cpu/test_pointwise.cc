// The Pointwise program kernel (kernels/cpu/pointwise.cc) against a plain reference that
// runs the program op by op over whole tensors, in double: each input broadcast to the output
// shape, then one full intermediate tensor per instruction. Fresh random inputs, poisoned
// outputs. Tolerance: FP32 arithmetic against double over chains of up to 16 ops:
// |got - want| <= 1e-4 * |want| + 1e-5.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/kernels.h"
#include "kernels/cpu/half.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/reference_formulas.h"
#include "tests/kernels/pointwise_case.h"

namespace jetplan::kernels {
namespace {

using pointwise_case::Case;
using test_util::Shape;

double unary_ref(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::kAbs: return std::fabs(x);
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kCos: return std::cos(x);
    case UnaryOp::kErf: return std::erf(x);
    case UnaryOp::kSin: return std::sin(x);
    case UnaryOp::kAtan: return std::atan(x);
    case UnaryOp::kSoftsign: return x / (1.0 + std::fabs(x));
    case UnaryOp::kExp: return std::exp(x);
    default: break;
  }
  ADD_FAILURE() << "unary op " << static_cast<int>(op) << " has no reference here";
  return NAN;
}

// The program, op by op over whole tensors of the output's shape.
std::vector<double> reference(const Case& c, const std::vector<std::vector<float>>& in) {
  const Shape out = pointwise_case::out_shape(c);
  const int64_t n = test_util::volume(out);
  std::vector<std::vector<double>> reg;
  for (const PointwiseInstr& i : c.program) {
    std::vector<double> r(static_cast<size_t>(n));
    for (int64_t e = 0; e < n; ++e) {
      const size_t at = static_cast<size_t>(e);
      switch (i.kind) {
        case PointwiseInstrKind::kLoad:
          r[at] = in[i.op][static_cast<size_t>(
              test_util::broadcast_index(test_util::unravel(e, out), c.inputs[i.op]))];
          break;
        case PointwiseInstrKind::kBinary:
          r[at] = test_util::binary_ref(static_cast<BinaryOp>(i.op), reg[i.a][at], reg[i.b][at]);
          break;
        case PointwiseInstrKind::kUnary:
          r[at] = unary_ref(static_cast<UnaryOp>(i.op), reg[i.a][at]);
          break;
        case PointwiseInstrKind::kActivation:
          r[at] = test_util::activation_ref(i.act, reg[i.a][at]);
          break;
      }
    }
    reg.push_back(std::move(r));
  }
  return reg.back();
}

constexpr test_util::Tolerance kTol{1e-4, 1e-5};

void check_case(test_util::SeededRng& rng, const Case& c) {
  SCOPED_TRACE(std::string(c.what) + " out " + test_util::shape_str(pointwise_case::out_shape(c)));
  const std::vector<std::vector<float>> in = pointwise_case::random_inputs(rng, c);
  const PointwiseParams p = pointwise_case::params_of(c);
  const void* ptrs[kMaxPointwiseInputs] = {};
  for (size_t k = 0; k < in.size(); ++k) ptrs[k] = in[k].data();
  test_util::Output y(test_util::volume(pointwise_case::out_shape(c)));
  cpu::pointwise_chain(p, DType::kFloat32, ptrs, y.data());
  EXPECT_TRUE(test_util::all_close(y, reference(c, in), kTol));
}

TEST(CpuPointwiseChain, ConverterChainsMatchOpByOp) {
  SEEDED_RNG(rng);
  check_case(rng, pointwise_case::gelu_chain({2, 3, 5, 7}));
  check_case(rng, pointwise_case::gelu_chain({1, 1}));
  check_case(rng, pointwise_case::gelu_chain({}));  // a scalar: rank 0
  check_case(rng, pointwise_case::sigmoid_gate(1, 16, 7, 7));
  check_case(rng, pointwise_case::sigmoid_gate(8, 3, 5, 1));
  check_case(rng, pointwise_case::channel_affine(2, 5, 3, 3));
}

TEST(CpuPointwiseChain, RandomProgramsMatchOpByOp) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 60; ++trial) {
    const Shape out = rng.shape(static_cast<size_t>(rng.integer(1, 5)), 1, 6);
    const int inputs = static_cast<int>(rng.integer(1, kMaxPointwiseInputs));
    const int instrs = static_cast<int>(rng.integer(inputs, kMaxPointwiseInstrs));
    check_case(rng, pointwise_case::random_chain(rng, out, inputs, instrs));
  }
}

// Float16 storage: the inputs read as half, FP32 arithmetic, one rounding at the store; the
// FP32 kernel on the same (half-representable) values rounded once must give the same bits.
TEST(CpuPointwiseChain, Float16StorageRoundsOnceAtTheStore) {
  SEEDED_RNG(rng);
  const Case c = pointwise_case::channel_affine(2, 4, 3, 5);
  std::vector<std::vector<float>> in = pointwise_case::random_inputs(rng, c);
  std::vector<std::vector<uint16_t>> half(in.size());
  const void* p32[kMaxPointwiseInputs] = {};
  const void* p16[kMaxPointwiseInputs] = {};
  for (size_t k = 0; k < in.size(); ++k) {
    for (float& v : in[k]) v = half_to_float(half_from_float(v));
    for (float v : in[k]) half[k].push_back(half_from_float(v));
    p32[k] = in[k].data();
    p16[k] = half[k].data();
  }
  const PointwiseParams p = pointwise_case::params_of(c);
  const int64_t n = test_util::volume(pointwise_case::out_shape(c));
  std::vector<float> y32(static_cast<size_t>(n));
  std::vector<uint16_t> y16(static_cast<size_t>(n) + 4, 0x7e5a);
  cpu::pointwise_chain(p, DType::kFloat32, p32, y32.data());
  cpu::pointwise_chain(p, DType::kFloat16, p16, y16.data());
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y16[static_cast<size_t>(i)], half_from_float(y32[static_cast<size_t>(i)])) << i;
  for (size_t i = static_cast<size_t>(n); i < y16.size(); ++i) EXPECT_EQ(y16[i], 0x7e5a);
}

// The registers the eight-element CUDA kernel keeps in shared memory: those some instruction
// other than the next one reads.
TEST(CpuPointwiseChain, SpilledRegistersAreThoseReadLater) {
  // load y, load s, y * s, load x, (y * s) + x: y and y * s are read two instructions on.
  EXPECT_EQ(pointwise_spilled(pointwise_case::params_of(pointwise_case::layer_scale(1, 2, 2, 8))),
            (1u << 0) | (1u << 2));
  // erf-GELU: x (by the Div and the last-but-one Mul), erf(x / c) + 1's first operand, and the
  // product before the final Mul.
  EXPECT_EQ(pointwise_spilled(pointwise_case::params_of(pointwise_case::gelu_chain({4}))),
            (1u << 0) | (1u << 3) | (1u << 6));
  // A chain in which every register feeds only the next instruction needs no slot.
  pointwise_case::Case chain{"chain", {{8}}, {pointwise_case::load(0),
                             pointwise_case::un(UnaryOp::kAbs, 0),
                             pointwise_case::un(UnaryOp::kNeg, 1)}, {-1.f}, {1.f}};
  EXPECT_EQ(pointwise_spilled(pointwise_case::params_of(chain)), 0u);
}

}  // namespace
}  // namespace jetplan::kernels
