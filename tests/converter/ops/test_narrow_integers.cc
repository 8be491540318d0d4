// int16, uint16, uint32 and uint64 (schema revision: DType.Int16 .. UInt64): end to end through
// the converter and the CPU runtime where steps take them (data movement, Cast, integer
// arithmetic, comparisons, Pow's exponent), and refused by name everywhere else; GPU plans take
// them on the same steps.
#include <gmock/gmock.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "tests/converter/util/run_util.h"
#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::Not;

TEST(NarrowIntegers, ArithmeticComparisonsAndMovesOnTheCpu) {
  ModelBuilder m(13);
  m.input("a", {4}, onnx::TensorProto::UINT32)
      .input("b", {4}, onnx::TensorProto::UINT32)
      .input("s", {2, 2}, onnx::TensorProto::INT16)
      .output("max", onnx::TensorProto::UINT32)
      .output("mod", onnx::TensorProto::UINT32)
      .output("less", onnx::TensorProto::BOOL)
      .output("moved", onnx::TensorProto::INT16);
  m.node("Max", {"a", "b"}, {"max"}, "max_u32");
  m.node("Mod", {"a", "b"}, {"mod"}, "mod_u32");
  m.node("Less", {"a", "b"}, {"less"}, "less_u32");
  attr(m.node("Transpose", {"s"}, {"st"}, "transpose_i16"), "perm",
       std::vector<int64_t>{1, 0});
  attr(m.node("Concat", {"st", "s"}, {"moved"}, "concat_i16"), "axis", int64_t{0});
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  const uint32_t big = 0xfffffff0u;  // a signed reading would make it negative
  const auto out = run(c.plan, {bytes_of(std::vector<uint32_t>{7, big, 5, 0}),
                                bytes_of(std::vector<uint32_t>{3, 6, big, 9}),
                                bytes_of(std::vector<int16_t>{-32768, 1, 2, 32767})});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(values_of<uint32_t>(out[0]), ElementsAre(7, big, big, 9));
  EXPECT_THAT(values_of<uint32_t>(out[1]), ElementsAre(1, big % 6, 5, 0));
  EXPECT_THAT(out[2], ElementsAre(0, 0, 1, 1));
  EXPECT_THAT(values_of<int16_t>(out[3]), ElementsAre(-32768, 2, 1, 32767, -32768, 1, 2, 32767));
  bool found = false;
  for (const auto* t : *c.fb->tensors())
    if (t->name()->str() == "moved") {
      found = true;
      EXPECT_EQ(t->dtype(), fb::DType::Int16);
    }
  EXPECT_TRUE(found);
}

TEST(NarrowIntegers, PowWithAnUnsignedExponentAndCasts) {
  ModelBuilder m(15);
  m.input("x", {3}).input("e", {3}, onnx::TensorProto::UINT64)
      .output("p")
      .output("wide", onnx::TensorProto::UINT64)
      .output("back", onnx::TensorProto::UINT16);
  m.node("Pow", {"x", "e"}, {"p"}, "pow_f32_u64");
  attr(m.node("Cast", {"x"}, {"wide"}, "to_u64"), "to", int64_t{onnx::TensorProto::UINT64});
  attr(m.node("Cast", {"e"}, {"back"}, "to_u16"), "to", int64_t{onnx::TensorProto::UINT16});
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  const uint64_t top = std::numeric_limits<uint64_t>::max();
  const auto out = run(c.plan, {bytes_of(std::vector<float>{2.f, -3.f, 1e30f}),
                                bytes_of(std::vector<uint64_t>{10, 3, top})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(1024.f, -27.f, INFINITY));
  // Float to integer truncates and saturates (0 for a negative source, the max past the range).
  EXPECT_THAT(values_of<uint64_t>(out[1]), ElementsAre(2, 0, top));
  EXPECT_THAT(values_of<uint16_t>(out[2]), ElementsAre(10, 3, 65535));  // the low bits
}

TEST(NarrowIntegers, OtherOpsRefuseThemByNodeAndDtype) {
  // Abs and ArgMax refuse them in their own checks; the Einsum would be a Transpose, which
  // moves any dtype, but Einsum is not among the ops that take them (converter/src/ops/check.cc).
  ModelBuilder m(13);
  m.input("a", {2, 3}, onnx::TensorProto::UINT32)
      .input("b", {4}, onnx::TensorProto::INT16)
      .output("arg", onnx::TensorProto::INT64)
      .output("abs", onnx::TensorProto::INT16)
      .output("t", onnx::TensorProto::UINT32);
  m.node("ArgMax", {"a"}, {"arg"}, "argmax_u32");
  m.node("Abs", {"b"}, {"abs"}, "abs_i16");
  attr(m.node("Einsum", {"a"}, {"t"}, "einsum_u32"), "equation", std::string("ij->ji"));
  EXPECT_THAT(convert_error(m),
              AllOf(HasSubstr("3 unsupported nodes"),
                    HasSubstr("'argmax_u32' (ArgMax): input 'a' is uint32"),
                    HasSubstr("'abs_i16' (Abs): Abs on int16 is not supported"),
                    HasSubstr("'einsum_u32' (Einsum): Einsum on uint32 ('a') is not supported")));
}

// GPU plans take them on the steps that do (test_gpu_plan_invariant.cc loads such a plan without
// a device and test_gpu_plan_run.cc runs it against the CPU plan): the Max is an Elementwise
// step on its CUDA kernel.
TEST(NarrowIntegers, GpuPlansRunThemOnCudaKernels) {
  ModelBuilder m(13);
  m.input("a", {4}, onnx::TensorProto::UINT32).output("max", onnx::TensorProto::UINT32);
  m.node("Max", {"a", "a"}, {"max"}, "max_u32");
  ConvertOptions gpu;
  gpu.target = "h100";
  const ConvertResult r = convert_onnx(m.bytes(), "model.onnx", gpu);
  const fb::Plan* plan = plan_of(r);
  ASSERT_EQ(plan->steps()->size(), 1u);
  EXPECT_EQ(plan->steps()->Get(0)->kernel()->str(), "jp_elementwise_u32");
}

}  // namespace
}  // namespace jetplan::converter::testing
