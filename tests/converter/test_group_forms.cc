// Op forms that joined the coverage after their ops: float64 arithmetic, Pow of integer and
// mixed types, Clip of integers, MaxPool of 8-bit integers and its Indices output, Dropout's
// mask, and Einsum outside float32; end to end through the converter and the runtime (CPU
// backend), checked against values worked out here.
#include <gmock/gmock.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "converter/src/onnx_import.h"
#include "converter/src/support.h"
#include "tests/converter/run_util.h"
#include "tests/converter/test_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::vector<fb::OpFamily> families(const fb::Plan* plan) {
  std::vector<fb::OpFamily> out;
  for (const auto* s : *plan->steps()) out.push_back(s->op());
  return out;
}

// ------------------------------------------------------------------------- float64 arithmetic

TEST(Float64Arith, AddSubMulDivMaxMinBroadcastInFloat64) {
  ModelBuilder m(13);
  m.input("a", {2, 3}, onnx::TensorProto::DOUBLE).input("b", {3}, onnx::TensorProto::DOUBLE);
  const char* ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  for (const char* op : ops) {
    m.output(std::string("y_") + op, onnx::TensorProto::DOUBLE);
    m.node(op, {"a", "b"}, {std::string("y_") + op}, op);
  }
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  for (fb::OpFamily f : families(c.fb)) EXPECT_EQ(f, fb::OpFamily::Elementwise);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Values a float32 computation would round: 0.1 + 0.2 is 0.30000000000000004 in float64.
  const std::vector<double> a = {0.1, 1e300, -3.0, 1.0 / 3.0, nan, 7.0};
  const std::vector<double> b = {0.2, 1e10, 0.0};
  const auto out = run(c.plan, {bytes_of(a), bytes_of(b)});
  ASSERT_EQ(out.size(), 6u);
  for (int k = 0; k < 6; ++k) {
    const std::vector<double> got = values_of<double>(out[k]);
    ASSERT_EQ(got.size(), 6u);
    for (int i = 0; i < 6; ++i) {
      const double x = a[i], y = b[i % 3];
      const double want = k == 0   ? x + y
                          : k == 1 ? x - y
                          : k == 2 ? x * y
                          : k == 3 ? x / y
                          : k == 4 ? ((x > y || x != x) ? x : y)
                                   : ((x < y || x != x) ? x : y);
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got[i])) << ops[k] << " element " << i;
      else
        EXPECT_EQ(got[i], want) << ops[k] << " element " << i;  // bit-exact float64
    }
  }
}

TEST(Float64Arith, SumOfThreeFloat64InputsIsAChainOfAdds) {
  ModelBuilder m(13);
  m.input("a", {2}, onnx::TensorProto::DOUBLE)
      .input("b", {2}, onnx::TensorProto::DOUBLE)
      .input("c", {1}, onnx::TensorProto::DOUBLE)
      .output("y", onnx::TensorProto::DOUBLE);
  m.node("Sum", {"a", "b", "c"}, {"y"}, "sum");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  const auto out = run(c.plan, {bytes_of(std::vector<double>{0.1, 1e16}),
                                bytes_of(std::vector<double>{0.2, 1.0}),
                                bytes_of(std::vector<double>{0.3})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<double>(out[0]), ElementsAre((0.1 + 0.2) + 0.3, (1e16 + 1.0) + 0.3));
}

// ----------------------------------------------------------------------------------------- Pow

TEST(TypedPow, IntegerAndMixedTypesRunInFloat64AndTakeTheBaseType) {
  ModelBuilder m(13);
  m.input("xi", {4}, onnx::TensorProto::INT64)
      .input("yi", {4}, onnx::TensorProto::INT64)
      .input("xf", {4})
      .input("yi32", {4}, onnx::TensorProto::INT32)
      .input("x32", {4}, onnx::TensorProto::INT32)
      .output("ii", onnx::TensorProto::INT64)
      .output("fi", onnx::TensorProto::FLOAT)
      .output("if", onnx::TensorProto::INT32);
  m.node("Pow", {"xi", "yi"}, {"ii"}, "pow_ii");
  m.node("Pow", {"xf", "yi32"}, {"fi"}, "pow_fi");
  m.node("Pow", {"x32", "xf"}, {"if"}, "pow_if");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  int pows = 0;
  for (const auto* s : *c.fb->steps())
    if (s->op() == fb::OpFamily::Elementwise) {
      EXPECT_EQ(s->params_as_ElementwiseParams()->op(), fb::ElementwiseOp::Pow);
      ++pows;
    }
  EXPECT_EQ(pows, 3);
  const auto out = run(c.plan, {bytes_of(std::vector<int64_t>{3, -2, 10, 7}),
                                bytes_of(std::vector<int64_t>{6, 3, 15, 0}),
                                bytes_of(std::vector<float>{1.5f, -2.f, 0.5f, 2.f}),
                                bytes_of(std::vector<int32_t>{2, 3, -1, 10}),
                                bytes_of(std::vector<int32_t>{4, 9, 16, 2})});
  ASSERT_EQ(out.size(), 3u);
  // 10^15 needs more than float32's 24-bit mantissa: exact only in float64.
  EXPECT_THAT(values_of<int64_t>(out[0]), ElementsAre(729, -8, 1000000000000000LL, 1));
  EXPECT_THAT(values_of<float>(out[1]), ElementsAre(2.25f, -8.f, 2.f, 1024.f));
  // int32 ^ float32, truncated toward zero: 4^1.5 = 8, 9^-2 = 0.012.. -> 0, 16^0.5 = 4, 2^2 = 4.
  EXPECT_THAT(values_of<int32_t>(out[2]), ElementsAre(8, 0, 4, 4));
}

TEST(TypedPow, Float32PowStaysABinaryStepAndBoolIsRefused) {
  ModelBuilder m(13);
  m.input("x", {3}).input("y", {1}).output("z");
  m.node("Pow", {"x", "y"}, {"z"}, "pow");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  EXPECT_THAT(families(c.fb), ElementsAre(fb::OpFamily::Binary));

  // ONNX's shape inference refuses a bool exponent; the check function is the converter's own.
  ModelBuilder b(13);
  b.input("x", {3}).input("y", {3}, onnx::TensorProto::INT32).output("z");
  b.node("Pow", {"x", "y"}, {"z"}, "pow_bool");
  Graph g = import_onnx(b.bytes(), {});
  g.values[g.nodes[0].inputs[1]].dtype = DataType::kBool;
  EXPECT_THAT(find_check("Pow")(g, g.nodes[0]), HasSubstr("is bool (Pow takes numbers)"));
}

}  // namespace
}  // namespace jetplan::converter::testing
