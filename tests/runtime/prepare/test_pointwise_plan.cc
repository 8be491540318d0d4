// Pointwise steps (a fused chain of float elementwise ops) at load: a good program runs on the
// CPU backend and computes its formula; malformed ones (registers read before they are written,
// inputs out of range, too many instructions or inputs, unknown ops, predicates, shapes that do
// not broadcast) are refused with a message naming the step and the fault, never run.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tests/runtime/load_checks.h"
#include "tests/runtime/plan_builder.h"

namespace jetplan::testing {
namespace {

using Instr = fb::PointwiseInstr;
using Kind = fb::PointwiseInstrKind;

Instr load(int k) { return Instr(Kind::Load, static_cast<uint8_t>(k), 0, 0, fb::Activation()); }
Instr mul(int a, int b) {
  return Instr(Kind::Binary, static_cast<uint8_t>(fb::BinaryOp::Mul), static_cast<uint8_t>(a),
               static_cast<uint8_t>(b), fb::Activation());
}
Instr leaky(int a) {
  return Instr(Kind::Activation, 0, static_cast<uint8_t>(a), 0,
               fb::Activation(fb::ActivationKind::LeakyRelu, 0.1f, 0.f));
}

// x [2, 3, 4] (input) * s [3, 1] (weight, per middle index) -> LeakyRelu -> y [2, 3, 4].
PlanSpec pointwise_plan(std::vector<Instr> program, std::vector<int64_t> s_shape = {3, 1}) {
  PlanSpec p;
  p.tensors = {
      {"x", {2, 3, 4}, fb::Storage::Binding, 0, 0},
      {"s", s_shape, fb::Storage::Weight, 0},
      {"y", {2, 3, 4}, fb::Storage::Binding, 0, 0},
  };
  p.inputs = {{"x", 0}};
  p.outputs = {{"y", 2}};
  const float s[3] = {2.f, -0.5f, 1.5f};
  p.weights.assign(256, 0);
  std::memcpy(p.weights.data(), s, sizeof(s));
  StepSpec step = step_spec("chain", fb::OpFamily::Pointwise, {0, 1}, {2});
  step.params = [program](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::PointwiseParams,
                          fb::CreatePointwiseParams(b, b.CreateVectorOfStructs(program)).Union());
  };
  p.steps = {step};
  return p;
}

std::vector<Instr> good_program() { return {load(0), load(1), mul(0, 1), leaky(2)}; }

void expect_refused(const PlanSpec& spec, const std::string& needle) {
  jetplan::testing::expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, needle);
  const std::string msg = jp_last_error();
  EXPECT_NE(msg.find("step 'chain' (Pointwise)"), std::string::npos) << msg;
}

TEST(PointwisePlan, RunsItsProgram) {
  const std::vector<uint8_t> bytes = build_plan(pointwise_plan(good_program()));
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK)
      << jp_last_error();
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<float> x(24);
  for (float& v : x) v = dist(rng);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
  ASSERT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
  const void* data = nullptr;
  size_t size = 0;
  ASSERT_EQ(jp_context_get_output(ctx, 0, &data, &size), JP_OK);
  ASSERT_EQ(size, 24u * 4);
  const float* y = static_cast<const float*>(data);
  const float s[3] = {2.f, -0.5f, 1.5f};
  for (int i = 0; i < 24; ++i) {
    const float v = x[i] * s[(i / 4) % 3];
    EXPECT_FLOAT_EQ(y[i], v < 0.f ? 0.1f * v : v) << i;
  }
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

TEST(PointwisePlan, RefusesMalformedPrograms) {
  // A register read before it is written (the Mul at 2 reads register 2, itself).
  expect_refused(pointwise_plan({load(0), load(1), mul(0, 2)}),
                 "instruction 2 reads a register not written before it (2)");
  expect_refused(pointwise_plan({load(0), leaky(5)}),
                 "instruction 1 reads a register not written before it (5)");
  // A load of step input 2 (the step has 2).
  expect_refused(pointwise_plan({load(0), load(2), mul(0, 1)}),
                 "instruction 1 loads a step input out of range (2)");
  // 17 instructions.
  std::vector<Instr> long_program = {load(0)};
  for (int i = 1; i < 17; ++i) long_program.push_back(leaky(i - 1));
  expect_refused(pointwise_plan(long_program), "the program has 17 instructions, expected 1..16");
  expect_refused(pointwise_plan({}), "the program has 0 instructions");
  // Unknown kind, binary op and activation; a predicate is no float math.
  expect_refused(pointwise_plan({load(0), Instr(static_cast<Kind>(9), 0, 0, 0, fb::Activation())}),
                 "instruction 1 has an unknown kind (9)");
  expect_refused(pointwise_plan({load(0), Instr(Kind::Binary, 40, 0, 0, fb::Activation())}),
                 "instruction 1 has an unknown binary op (40)");
  expect_refused(
      pointwise_plan({load(0), Instr(Kind::Activation, 0, 0, 0,
                                     fb::Activation(static_cast<fb::ActivationKind>(77), 0, 0))}),
      "instruction 1 has an unknown activation (77)");
  expect_refused(pointwise_plan({load(0), Instr(Kind::Unary,
                                                static_cast<uint8_t>(fb::UnaryOp::IsNaN), 0, 0,
                                                fb::Activation())}),
                 "instruction 1 has a unary op that is no float math");
  // An input that does not broadcast to the output.
  expect_refused(pointwise_plan(good_program(), {2, 1}), "input 's' does not broadcast");
}

TEST(PointwisePlan, RefusesTooManyInputs) {
  PlanSpec spec = pointwise_plan(good_program());
  spec.steps[0].inputs = {0, 1, 0, 1, 0, 1, 0, 1, 0};
  expect_refused(spec, "has 9 inputs and 1 outputs, expected 1..8");
}

}  // namespace
}  // namespace jetplan::testing
