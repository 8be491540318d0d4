// bfloat16 (schema revision: DType.BFloat16): end to end through the converter and the CPU
// runtime where steps take it (Cast, CastLike, data movement; a constant cast at conversion);
// its math runs in float32 (import/widen_floats.h); GPU plans take it on the same steps. Float32 to bfloat16 rounds to nearest even (kernels/cpu/bfloat16.h).
#include <gmock/gmock.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "tests/converter/util/run_util.h"
#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::Not;

float float_of_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint32_t bits_of(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

fb::DType plan_dtype_of(const fb::Plan* plan, const std::string& name) {
  for (const auto* t : *plan->tensors())
    if (t->name()->str() == name) return t->dtype();
  ADD_FAILURE() << "no plan tensor '" << name << "'";
  return fb::DType::Float32;
}

TEST(BFloat16, CastsAndMovesOnTheCpu) {
  ModelBuilder m(15);
  m.input("x", {2, 3})
      .input("like", {1}, onnx::TensorProto::BFLOAT16)
      .output("moved", onnx::TensorProto::BFLOAT16)
      .output("back")
      .output("cast_like", onnx::TensorProto::BFLOAT16);
  attr(m.node("Cast", {"x"}, {"b"}, "to_bf16"), "to", int64_t{onnx::TensorProto::BFLOAT16});
  attr(m.node("Transpose", {"b"}, {"bt"}, "transpose_bf16"), "perm", std::vector<int64_t>{1, 0});
  m.initializer_i64("shape", {1}, {6});
  m.node("Reshape", {"bt", "shape"}, {"flat"}, "reshape_bf16");
  m.initializer_i64("starts", {1}, {1});
  m.initializer_i64("ends", {1}, {5});
  m.node("Slice", {"flat", "starts", "ends"}, {"mid"}, "slice_bf16");
  attr(m.node("Concat", {"mid", "flat"}, {"moved"}, "concat_bf16"), "axis", int64_t{0});
  attr(m.node("Cast", {"b"}, {"back"}, "to_f32"), "to", int64_t{onnx::TensorProto::FLOAT});
  m.node("CastLike", {"x", "like"}, {"cast_like"}, "cast_like_bf16");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  EXPECT_EQ(plan_dtype_of(c.fb, "b"), fb::DType::BFloat16);
  EXPECT_EQ(plan_dtype_of(c.fb, "moved"), fb::DType::BFloat16);
  EXPECT_EQ(plan_dtype_of(c.fb, "like"), fb::DType::BFloat16);
  // A tie that rounding to even takes up (0x3f818000: 0x3f82; truncation 0x3f81), -259 (a tie:
  // -260), a NaN whose payload lies in the dropped half alone, the largest float (past the last
  // tie: infinity), -inf, 3.
  const std::vector<float> x = {float_of_bits(0x3f818000u), -259.f, float_of_bits(0x7f800001u),
                                std::numeric_limits<float>::max(), -INFINITY, 3.f};
  const std::vector<uint16_t> b = {0x3f82, 0xc382, 0x7fc0, 0x7f80, 0xff80, 0x4040};
  const auto out = run(c.plan, {bytes_of(x), bytes_of(std::vector<uint16_t>{0x3f80})});
  ASSERT_EQ(out.size(), 3u);
  // Transposed [3, 2]: b0 b3 b1 b4 b2 b5; then its elements 1..4, then all six.
  EXPECT_THAT(values_of<uint16_t>(out[0]),
              ElementsAre(b[3], b[1], b[4], b[2], b[0], b[3], b[1], b[4], b[2], b[5]));
  std::vector<uint32_t> back;
  for (float f : values_of<float>(out[1])) back.push_back(bits_of(f));
  EXPECT_THAT(back, ElementsAre(0x3f820000u, 0xc3820000u, 0x7fc00000u, 0x7f800000u, 0xff800000u,
                                0x40400000u));
  EXPECT_EQ(values_of<uint16_t>(out[2]), b);
}

TEST(BFloat16, PadWithABFloat16Constant) {
  // The constant travels in the plan as a double (decoded from the initializer) and is made a
  // bfloat16 again at load: the same bits. Gather moves elements by their size.
  ModelBuilder m(13);
  m.input("x", {3}, onnx::TensorProto::BFLOAT16).output("y", onnx::TensorProto::BFLOAT16);
  m.initializer_i64("pads", {2}, {1, 2});
  raw_initializer(m, "value", onnx::TensorProto::BFLOAT16, {},
                  bytes_of(std::vector<uint16_t>{0xc0b0}));
  m.node("Pad", {"x", "pads", "value"}, {"p"}, "pad_bf16");
  m.initializer_i64("idx", {3}, {5, 0, 1});
  attr(m.node("Gather", {"p", "idx"}, {"y"}, "gather_bf16"), "axis", int64_t{0});
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  const auto out = run(c.plan, {bytes_of(std::vector<uint16_t>{0x3f81, 0x7fc1, 0x0001})});
  ASSERT_EQ(out.size(), 1u);
  // Padded: -5.5, x0, x1, x2, -5.5, -5.5; gathered 5, 0, 1.
  EXPECT_THAT(values_of<uint16_t>(out[0]), ElementsAre(0xc0b0, 0xc0b0, 0x3f81));
}

TEST(BFloat16, ConstantsCastAtConversion) {
  // A bfloat16 initializer cast to float32 folds (the Cast kernel at conversion): only the Add
  // runs, on the decoded values.
  ModelBuilder m(13);
  m.input("x", {3}).output("y");
  raw_initializer(m, "w", onnx::TensorProto::BFLOAT16, {3},
                  bytes_of(std::vector<uint16_t>{0x3f81, 0xc0b0, 0x0001}));
  attr(m.node("Cast", {"w"}, {"wf"}, "w_to_f32"), "to", int64_t{onnx::TensorProto::FLOAT});
  m.node("Add", {"x", "wf"}, {"y"}, "add");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  EXPECT_EQ(find_step(c.fb, "w_to_f32"), nullptr);
  const auto out = run(c.plan, {bytes_of(std::vector<float>{1.f, 0.5f, 0.f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(2.0078125f, -5.f, std::ldexp(1.f, -133)));
}

TEST(BFloat16, OtherOpsComputeItInFloat32) {
  // A bfloat16 model's math runs as its float32 graph (import/widen_floats.h), rounded to
  // bfloat16 at the outputs: twice the largest bfloat16 is infinity there as in bfloat16.
  ModelBuilder m(13);
  m.input("a", {4}, onnx::TensorProto::BFLOAT16)
      .output("r", onnx::TensorProto::BFLOAT16)
      .output("s", onnx::TensorProto::BFLOAT16)
      .output("e", onnx::TensorProto::BOOL)
      .output("t", onnx::TensorProto::BFLOAT16);
  m.node("Relu", {"a"}, {"r"}, "relu_bf16");
  m.node("Add", {"a", "a"}, {"s"}, "add_bf16");
  m.node("Equal", {"a", "a"}, {"e"}, "equal_bf16");
  m.node("Max", {"a"}, {"t"}, "max_bf16");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  EXPECT_EQ(plan_dtype_of(c.fb, "a"), fb::DType::BFloat16);
  EXPECT_EQ(plan_dtype_of(c.fb, "s"), fb::DType::BFloat16);
  // 1.5, -2.25, the largest bfloat16, 2^-7.
  const std::vector<uint16_t> a = {0x3fc0, 0xc010, 0x7f7f, 0x3c00};
  const auto out = run(c.plan, {bytes_of(a)});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(values_of<uint16_t>(out[0]), ElementsAre(0x3fc0, 0x0000, 0x7f7f, 0x3c00));
  EXPECT_THAT(values_of<uint16_t>(out[1]), ElementsAre(0x4040, 0xc090, 0x7f80, 0x3c80));
  EXPECT_THAT(out[2], ElementsAre(1, 1, 1, 1));
  EXPECT_EQ(values_of<uint16_t>(out[3]), a);
}

// GPU plans take it through Cast (the generic CUDA cast kernel, float32 as float16 there).
TEST(BFloat16, GpuPlansCastItOnTheGenericKernel) {
  ModelBuilder m(13);
  m.input("x", {4}).output("b", onnx::TensorProto::BFLOAT16);
  attr(m.node("Cast", {"x"}, {"b"}, "to_bf16"), "to", int64_t{onnx::TensorProto::BFLOAT16});
  ConvertOptions gpu;
  gpu.target = "h100";
  const ConvertResult r = convert_onnx(m.bytes(), "model.onnx", gpu);
  const fb::Plan* plan = plan_of(r);
  bool generic = false;
  for (const fb::Step* s : *plan->steps())
    generic = generic || (s->kernel() != nullptr && s->kernel()->str() == "jp_cast_any");
  EXPECT_TRUE(generic);
}

}  // namespace
}  // namespace jetplan::converter::testing
