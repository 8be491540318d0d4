// The plan contract's rules for ConvTranspose, Rnn, QLinearMatMul and QLinearConv steps: a plan
// the converter made satisfies them, and the same plan with one step corrupted in place (a
// stride, hidden_size, an operand's dims) breaks them. Both readings of the contract must refuse
// it, naming the step: plan_contract.cc (the tests') and the runtime's loader.
#include <gmock/gmock.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/converter/util/run_util.h"
#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::IsEmpty;

// The converted plan (contract-clean) and its only step of `family`, mutable in place.
struct Corruptible {
  std::vector<uint8_t> plan;
  fb::Step* step = nullptr;
  fb::Plan* fb_plan = nullptr;
};

Corruptible convert_with(const ModelBuilder& m, fb::OpFamily family) {
  Corruptible c;
  c.plan = convert_onnx(m.bytes(), "model.onnx", {}).plan;
  EXPECT_THAT(plan_contract_problems(c.plan), IsEmpty());
  c.fb_plan = const_cast<fb::Plan*>(read_plan(c.plan));
  if (c.fb_plan == nullptr) return c;
  for (const auto* s : *c.fb_plan->steps())
    if (s->op() == family) c.step = const_cast<fb::Step*>(s);
  EXPECT_NE(c.step, nullptr) << "no " << fb::EnumNameOpFamily(family) << " step";
  return c;
}

// Dims of tensor `index`, mutable in place.
flatbuffers::Vector<int64_t>* dims_of(Corruptible& c, uint32_t index) {
  return const_cast<flatbuffers::Vector<int64_t>*>(c.fb_plan->tensors()->Get(index)->shape());
}

// The params table as a flatbuffers::Table (generated tables inherit it privately, at offset 0),
// whose scalar fields can be rewritten in place where the buffer stores them.
flatbuffers::Table* table_of(const void* params) {
  return reinterpret_cast<flatbuffers::Table*>(const_cast<void*>(params));
}

// The runtime's loader refuses the plan; its message.
std::string load_error(const std::vector<uint8_t>& plan) {
  jp_plan* p = nullptr;
  if (jp_plan_load_buffer(plan.data(), plan.size(), JP_LOAD_COPY, &p) == JP_OK) {
    jp_plan_destroy(p);
    ADD_FAILURE() << "the runtime loaded the corrupt plan";
    return "";
  }
  return jp_last_error();
}

std::string joined(const std::vector<std::string>& problems) {
  std::string all;
  for (const std::string& p : problems) all += p + "\n";
  return all;
}

// Both readings of the contract refuse the corrupted plan, naming step `step`: plan_contract.cc
// with the problem `contract`, the loader with a message holding `loader`.
void expect_refused(const Corruptible& c, const std::string& step, const std::string& contract,
                    const std::string& loader) {
  EXPECT_THAT(joined(plan_contract_problems(c.plan)), HasSubstr("step " + step + ": " + contract));
  EXPECT_THAT(load_error(c.plan), AllOf(HasSubstr("step '" + step + "'"), HasSubstr(loader)));
}

// Converts m, sets stride[dim] of its step of `family` (params P) to `stride` while the output
// stays, and expects the refusal as expect_refused does.
template <typename P>
void expect_stride_refused(const ModelBuilder& m, fb::OpFamily family, uint32_t dim,
                           int64_t stride, const std::string& step, const std::string& contract,
                           const std::string& loader) {
  Corruptible c = convert_with(m, family);
  ASSERT_NE(c.step, nullptr);
  const P* p = c.step->params_as<P>();
  ASSERT_NE(p, nullptr);
  ASSERT_NE(p->stride(), nullptr);
  const_cast<flatbuffers::Vector<int64_t>*>(p->stride())->Mutate(dim, stride);
  expect_refused(c, step, contract, loader);
}

TEST(PlanContract, ConvTransposeStrideThatDoesNotGiveTheOutputIsRefused) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 3, 3}).output("y");
  m.random("w", {2, 3, 2, 2});
  m.node("ConvTranspose", {"x", "w"}, {"y"}, "deconv");
  // y [1,3,4,4] stays.
  expect_stride_refused<fb::ConvTransposeParams>(
      m, fb::OpFamily::ConvTranspose, 0, 2, "deconv",
      "convtranspose output [1,3,4,4], the window gives [1,3,6,4]",
      "the transposed window gives another size");
}

// A forward `op` (GRU, LSTM) node `name` of hidden size 3 with `gates` gates over X [2, 1, 3],
// reading only Y_h, converted.
Corruptible convert_recurrent(const std::string& op, const std::string& name, int64_t gates) {
  ModelBuilder m(14);
  m.input("X", {2, 1, 3}).output("Y_h");
  m.random("W", {1, 3 * gates, 3}).random("R", {1, 3 * gates, 3});
  attr(m.node(op, {"X", "W", "R"}, {"", "Y_h"}, name), "hidden_size", int64_t{3});
  return convert_with(m, fb::OpFamily::Rnn);
}

TEST(PlanContract, RnnHiddenSizeThatDoesNotFitTheWeightsIsRefused) {
  Corruptible c = convert_recurrent("GRU", "gru", 3);
  ASSERT_NE(c.step, nullptr);
  ASSERT_TRUE(table_of(c.step->params_as_RnnParams())
                  ->SetField<int64_t>(fb::RnnParams::VT_HIDDEN_SIZE, 2, 0));
  expect_refused(c, "gru", "rnn W [1,9,3], expected [1,6,3]", "must be [1,6,3]");
}

TEST(PlanContract, RnnWithTheWrongNumberOfActivationsIsRefused) {
  Corruptible c = convert_recurrent("LSTM", "lstm", 4);
  ASSERT_NE(c.step, nullptr);
  // An LSTM step relabeled as a plain RNN: 1 gate and 1 activation per direction, W's rows 4 H.
  ASSERT_TRUE(table_of(c.step->params_as_RnnParams())
                  ->SetField<uint8_t>(fb::RnnParams::VT_CELL, uint8_t(fb::RnnCell::Rnn), 0));
  const std::string problems = joined(plan_contract_problems(c.plan));
  EXPECT_THAT(problems, HasSubstr("step lstm: rnn W [1,12,3], expected [1,3,3]"));
  EXPECT_THAT(problems, HasSubstr("step lstm: rnn activations: 1 expected"));
  EXPECT_THAT(load_error(c.plan), HasSubstr("step 'lstm'"));
}

void quantized_initializer(ModelBuilder& m, const std::string& name, int type,
                           const std::vector<int64_t>& dims, uint8_t fill) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  raw_initializer(m, name, type, dims, std::vector<uint8_t>(size_t(n), fill));
}

// An opset-13 model from the uint8 input `x` of `dims` to the uint8 output y, with the scale s
// (0.1) and the uint8 zero point zp (3) that its QLinear node reads.
ModelBuilder uint8_model(const std::string& x, const std::vector<int64_t>& dims) {
  ModelBuilder m(13);
  m.input(x, dims, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::UINT8);
  m.initializer("s", {}, {0.1f});
  quantized_initializer(m, "zp", onnx::TensorProto::UINT8, {}, 3);
  return m;
}

TEST(PlanContract, QLinearMatMulWithMismatchedInnerDimsIsRefused) {
  ModelBuilder m = uint8_model("a", {2, 4});
  quantized_initializer(m, "b", onnx::TensorProto::UINT8, {4, 3}, 7);
  m.node("QLinearMatMul", {"a", "s", "zp", "b", "s", "zp", "s", "zp"}, {"y"}, "qmm");
  Corruptible c = convert_with(m, fb::OpFamily::QLinearMatMul);
  ASSERT_NE(c.step, nullptr);
  // b [4, 3] read as [3, 4]: the same bytes, the product no longer defined.
  auto* dims = dims_of(c, c.step->inputs()->Get(3));
  ASSERT_EQ(dims->size(), 2u);
  dims->Mutate(0, 3);
  dims->Mutate(1, 4);
  expect_refused(c, "qmm", "qlinear_matmul inner dims [2,4] x [3,4]",
                 "inner dimensions of A and B differ");
}

TEST(PlanContract, QLinearConvStrideThatDoesNotGiveTheOutputIsRefused) {
  ModelBuilder m = uint8_model("x", {1, 2, 5, 5});
  quantized_initializer(m, "wzp", onnx::TensorProto::INT8, {}, 0);
  quantized_initializer(m, "w", onnx::TensorProto::INT8, {3, 2, 3, 3}, 1);
  m.node("QLinearConv", {"x", "s", "zp", "w", "s", "wzp", "s", "zp"}, {"y"}, "qconv");
  // y [1,3,3,3] stays.
  expect_stride_refused<fb::QLinearConvParams>(m, fb::OpFamily::QLinearConv, 1, 2, "qconv",
                                               "qlinear_conv output [1,3,3,3]",
                                               "spatial dim 1 is 3, the window gives 2");
}

TEST(PlanContract, QLinearConvWithAFloatOperandIsRefused) {
  ModelBuilder m = uint8_model("x", {1, 1, 3, 3});
  quantized_initializer(m, "w", onnx::TensorProto::UINT8, {1, 1, 1, 1}, 2);
  m.node("QLinearConv", {"x", "s", "zp", "w", "s", "zp", "s", "zp"}, {"y"}, "qconv");
  Corruptible c = convert_with(m, fb::OpFamily::QLinearConv);
  ASSERT_NE(c.step, nullptr);
  // The weight's scale (float32) where the weight goes: the dtypes no longer fit.
  auto* inputs = const_cast<flatbuffers::Vector<uint32_t>*>(c.step->inputs());
  inputs->Mutate(3, inputs->Get(1));
  expect_refused(c, "qconv", "qlinear operands and output are int8 or uint8", "");
}

}  // namespace
}  // namespace jetplan::converter::testing
