// Unary and elementwise math end to end (the Unary, Elementwise and Binary families): libm
// agreement, float16 and 8-bit integers through a wider dtype, comparisons, logic, Mod, the
// variadic Sum and Mean, and two-input arithmetic of every dtype.
#include "tests/converter/util/float_run_util.h"

namespace jetplan::converter::testing {
namespace {

// ---------------------------------------------------------------------------- math

TEST(TensorGroup, UnaryMathMatchesLibm) {
  const std::vector<float> x = {-0.75f, -0.25f, 0.f, 0.5f, 0.9f};
  struct Case {
    const char* op;
    double (*f)(double);
  };
  const Case cases[] = {{"Sin", [](double v) { return std::sin(v); }},
                        {"Atanh", [](double v) { return std::atanh(v); }},
                        {"Erf", [](double v) { return std::erf(v); }},
                        {"Softsign", [](double v) { return v / (1 + std::fabs(v)); }},
                        {"Softplus", [](double v) { return std::log1p(std::exp(v)); }},
                        {"Sign", [](double v) { return double((v > 0) - (v < 0)); }}};
  for (const Case& k : cases) {
    ModelBuilder m;
    m.input("x", {5}).output("y");
    m.node(k.op, {"x"}, {"y"}, "u");
    Converted c;
    const std::vector<float> y = run_f32(m, {x}, &c);
    EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Unary)) << k.op;
    ASSERT_EQ(y.size(), x.size()) << k.op;
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], k.f(x[i]), 1e-6) << k.op << " " << x[i];
  }
}

TEST(TensorGroup, RoundHalfToEvenAndPredicates) {
  ModelBuilder m;
  m.input("x", {5}).output("r").output("nan", onnx::TensorProto::BOOL)
      .output("inf", onnx::TensorProto::BOOL).output("not", onnx::TensorProto::BOOL);
  m.node("Round", {"x"}, {"r"}, "round");
  m.node("IsNaN", {"x"}, {"nan"}, "isnan");
  auto& inf = m.node("IsInf", {"x"}, {"inf"}, "isinf");
  attr(inf, "detect_negative", int64_t{0});
  m.node("Not", {"nan"}, {"not"}, "not");
  const auto out = run(convert(m).plan, {bytes_of(std::vector<float>{0.5f, 2.5f, -1.5f, NAN, -INFINITY})});
  ASSERT_EQ(out.size(), 4u);
  const std::vector<float> r = values_of<float>(out[0]);
  EXPECT_EQ(r[0], 0.f);
  EXPECT_EQ(r[1], 2.f);
  EXPECT_EQ(r[2], -2.f);
  EXPECT_TRUE(std::isnan(r[3]));
  EXPECT_THAT(out[1], ElementsAre(0, 0, 0, 1, 0));
  EXPECT_THAT(out[2], ElementsAre(0, 0, 0, 0, 0));  // detect_negative=0: -inf does not count
  EXPECT_THAT(out[3], ElementsAre(1, 1, 1, 0, 1));
}

TEST(TensorGroup, Float16MathRunsInFloat32BetweenCasts) {
  ModelBuilder m;
  m.input("x", {3}, onnx::TensorProto::FLOAT16).output("y", onnx::TensorProto::FLOAT16);
  m.node("Sqrt", {"x"}, {"y"}, "sqrt");
  const Converted c = convert(m);
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Cast, OpFamily::Unary, OpFamily::Cast));
  std::vector<uint16_t> x;
  for (float v : {4.f, 2.f, 0.25f}) x.push_back(kernels::half_from_float(v));
  const auto out = run(c.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<uint16_t> y = values_of<uint16_t>(out[0]);
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0], kernels::half_from_float(2.f));
  EXPECT_EQ(y[1], kernels::half_from_double(std::sqrt(2.0)));
  EXPECT_EQ(y[2], kernels::half_from_float(0.5f));
}

TEST(TensorGroup, UnaryOfAnUnsupportedDtypeGivesAReason) {
  ModelBuilder m;
  m.input("x", {3}, onnx::TensorProto::DOUBLE).input("i", {3}, onnx::TensorProto::INT32)
      .output("y", onnx::TensorProto::DOUBLE).output("z", onnx::TensorProto::INT32);
  m.node("Sin", {"x"}, {"y"}, "f64_sin");
  m.node("Abs", {"i"}, {"z"}, "i32_abs");  // supported: not in the error
  const std::string e = convert_error(m);
  EXPECT_THAT(e, HasSubstr("1 unsupported node: 'f64_sin' (Sin): Sin on float64 is not "
                           "supported (jetplan computes it in float32 or float16)"));
}

TEST(TensorGroup, GeluBothForms) {
  // Gelu is an opset 20 op; libonnx 1.12 does not know it: the node reaches the converter as an
  // op without a schema, checked against its opset-20 definition (import/onnx_definitions.h).
  ModelBuilder m(20);
  m.model().set_ir_version(9);
  m.input("x", {4}).output("tanh").output("erf");
  auto& t = m.node("Gelu", {"x"}, {"tanh"}, "gelu_tanh");
  attr(t, "approximate", std::string("tanh"));
  m.node("Gelu", {"x"}, {"erf"}, "gelu_erf");
  const Converted c = convert(m);
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Activation, OpFamily::Activation));  // GeluTanh
  const std::vector<float> x = {-3.f, -0.5f, 0.25f, 2.f};
  const auto out = run(c.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 2u);
  const std::vector<float> tanh_form = values_of<float>(out[0]), erf_form = values_of<float>(out[1]);
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    EXPECT_NEAR(tanh_form[i], 0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v))),
                1e-6);
    EXPECT_NEAR(erf_form[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-6);
  }
}

TEST(TensorGroup, IsInfDetectingNothingGivesAReason) {
  ModelBuilder m;
  m.input("x", {2}).output("y", onnx::TensorProto::BOOL);
  auto& n = m.node("IsInf", {"x"}, {"y"}, "never");
  attr(n, "detect_positive", int64_t{0});
  attr(n, "detect_negative", int64_t{0});
  EXPECT_THAT(convert_error(m), HasSubstr("'never' (IsInf): detect_positive and detect_negative "
                                          "are both 0"));
}

TEST(TensorGroup, ComparisonsAndLogicBroadcast) {
  ModelBuilder m;
  m.input("a", {2, 2}, onnx::TensorProto::INT64).input("b", {2}, onnx::TensorProto::INT64)
      .output("y", onnx::TensorProto::BOOL);
  m.node("LessOrEqual", {"a", "b"}, {"le"}, "le");
  m.node("Equal", {"a", "b"}, {"eq"}, "eq");
  m.node("Xor", {"le", "eq"}, {"y"}, "xor");  // a < b
  const Converted c = convert(m);
  EXPECT_THAT(ops_of(c),
              ElementsAre(OpFamily::Elementwise, OpFamily::Elementwise, OpFamily::Elementwise));
  const auto out =
      run(c.plan, {bytes_of(std::vector<int64_t>{1, 5, 3, -2}), bytes_of(std::vector<int64_t>{3, 5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0], ElementsAre(1, 0, 0, 1));
}

TEST(TensorGroup, ModIntegerSignsAndInt8Promotion) {
  ModelBuilder m;
  m.input("a", {4}, onnx::TensorProto::INT8).input("b", {4}, onnx::TensorProto::INT8)
      .output("mod", onnx::TensorProto::INT8).output("fmod", onnx::TensorProto::INT8);
  m.node("Mod", {"a", "b"}, {"mod"}, "mod");
  auto& f = m.node("Mod", {"a", "b"}, {"fmod"}, "fmod");
  attr(f, "fmod", int64_t{1});
  const Converted c = convert(m);
  const auto out = run(c.plan, {bytes_of(std::vector<int8_t>{7, -7, 7, -128}),
                                bytes_of(std::vector<int8_t>{3, 3, -3, 7})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(values_of<int8_t>(out[0]), ElementsAre(1, 2, -2, 5));   // sign of the divisor
  EXPECT_THAT(values_of<int8_t>(out[1]), ElementsAre(1, -1, 1, -2));  // sign of the dividend
}

TEST(TensorGroup, FloatModWithoutFmodNamesTheNode) {
  ModelBuilder m;
  m.input("a", {2}).input("b", {2}).output("y");
  m.node("Mod", {"a", "b"}, {"y"}, "float_mod");
  EXPECT_THAT(convert_error(m), HasSubstr("'float_mod' (Mod): Mod of float32 needs fmod=1"));
}

TEST(TensorGroup, SumAndMeanOverThreeInputs) {
  ModelBuilder m;
  m.input("a", {2, 2}).input("b", {2}).input("c", {1}).output("sum").output("mean");
  m.node("Sum", {"a", "b", "c"}, {"sum"}, "sum");
  m.node("Mean", {"a", "b", "c"}, {"mean"}, "mean");
  const Converted c = convert(m);
  // Sum: two Adds; Mean: two Adds and a Div by 3.
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Binary, OpFamily::Binary, OpFamily::Binary,
                                     OpFamily::Binary, OpFamily::Binary));
  const auto out = run(c.plan, {bytes_of(std::vector<float>{1, 2, 3, 4}),
                                bytes_of(std::vector<float>{10, -20}), bytes_of(std::vector<float>{4})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(15, -14, 17, -12));
  EXPECT_THAT(values_of<float>(out[1]), ElementsAre(5, -14.f / 3, 17.f / 3, -4));
}

TEST(TensorGroup, SumOfOneInputIsRemovedAndFollowingActivationsStaySeparate) {
  ModelBuilder m;
  m.input("a", {3}).input("b", {3}).output("y");
  m.node("Sum", {"a"}, {"s1"}, "sum1");
  m.node("Sum", {"s1", "b", "a"}, {"s3"}, "sum3");
  m.node("Relu", {"s3"}, {"y"}, "relu");
  Converted c;
  EXPECT_THAT(run_f32(m, {{1, -5, 2}, {1, 1, 1}}, &c), ElementsAre(3, 0, 5));
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Binary, OpFamily::Binary, OpFamily::Activation));
}

TEST(TensorGroup, TypedArithmeticOfEveryDtype) {
  // Add/Sub/Mul/Div/Max/Min of every dtype and Max/Min of more than 2 inputs have their rows in
  // the Elementwise family (check_arith), which hands float32 with 2 inputs to the Binary
  // family's check_binary.
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    fb::OpFamily family = fb::OpFamily::Copy;
    ASSERT_NE(ops::find_op_row(op, &family), nullptr) << op;
    EXPECT_EQ(family, OpFamily::Elementwise) << op;
  }
  ModelBuilder m(14);
  m.input("a", {3}, onnx::TensorProto::UINT8).input("b", {3}, onnx::TensorProto::UINT8)
      .input("x64", {3}, onnx::TensorProto::DOUBLE).input("f", {3})
      .output("y", onnx::TensorProto::UINT8).output("z", onnx::TensorProto::DOUBLE).output("m");
  m.node("Add", {"a", "b"}, {"y"}, "add_u8");
  raw_initializer(m, "e", onnx::TensorProto::DOUBLE, {1}, bytes_of(std::vector<double>{2}));
  m.node("Max", {"x64", "e"}, {"z"}, "max_f64");  // NaN propagates, as for float32
  m.initializer("g", {1}, {0.5f});
  m.node("Min", {"f", "g", "f"}, {"m"}, "min3");
  const auto out = run(convert(m).plan, {bytes_of(std::vector<uint8_t>{200, 1, 255}),
                                         bytes_of(std::vector<uint8_t>{100, 2, 1}),
                                         bytes_of(std::vector<double>{1, 5, NAN}),
                                         bytes_of(std::vector<float>{1, 0, -1})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(out[0], ElementsAre(44, 3, 0));  // wraps modulo 256
  const std::vector<double> z = values_of<double>(out[1]);
  ASSERT_EQ(z.size(), 3u);
  EXPECT_EQ(z[0], 2);
  EXPECT_EQ(z[1], 5);
  EXPECT_TRUE(std::isnan(z[2]));
  EXPECT_THAT(values_of<float>(out[2]), ElementsAre(0.5, 0, -1));
}

TEST(TensorGroup, TypedArithmeticChecks) {
  // The check function itself, whichever table owns the op type now.
  ModelBuilder m(14);
  m.input("a", {3}, onnx::TensorProto::DOUBLE).input("b", {3}, onnx::TensorProto::DOUBLE)
      .output("y", onnx::TensorProto::DOUBLE);
  m.node("Mul", {"a", "b"}, {"y"}, "mul_f64");
  Graph g = import_onnx(m.bytes(), {});
  Node& node = g.nodes[0];
  const CheckFn check = find_check("Mul");
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(check(g, node), "");  // float64: an Elementwise step (CPU backend)
  EXPECT_EQ(node.op.family, OpFamily::Elementwise);
  EXPECT_EQ(node.op.expand, Expansion::kNone);
  ModelBuilder i8(14);
  i8.input("a", {2, 1}, onnx::TensorProto::INT8).input("b", {3}, onnx::TensorProto::INT8)
      .output("y", onnx::TensorProto::INT8);
  i8.node("Div", {"a", "b"}, {"y"}, "div_i8");
  Graph g8 = import_onnx(i8.bytes(), {});
  EXPECT_EQ(find_check("Div")(g8, g8.nodes[0]), "");
  EXPECT_EQ(g8.nodes[0].op.family, OpFamily::Elementwise);
  EXPECT_EQ(g8.nodes[0].op.expand, Expansion::kPromote);
  EXPECT_EQ(g8.values[g8.nodes[0].outputs[0]].shape, (Shape{2, 3}));
}
}  // namespace
}  // namespace jetplan::converter::testing
