// The tensor group end to end (see test_group_tensor.cc): unary, elementwise and typed
// arithmetic, Einsum, and constant folding through the group's ops.
#include "tests/converter/group_tensor_util.h"

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
  // Gelu is an opset 20 op; libonnx 1.12 does not know it, so the model says opset 17 and the
  // node reaches the converter as an op without a schema.
  ModelBuilder m(17);
  m.input("x", {4}).output("tanh").output("erf");
  auto& t = m.node("Gelu", {"x"}, {"tanh"}, "gelu_tanh");
  attr(t, "approximate", std::string("tanh"));
  m.node("Gelu", {"x"}, {"erf"}, "gelu_erf");
  const Converted c = convert(m);
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Unary, OpFamily::Activation));
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

// ---------------------------------------------------------------------------- Einsum

struct EinsumCase {
  const char* equation;
  std::vector<int64_t> a, b;
  std::vector<OpFamily> ops;
};

// out[...] by brute force over the equation's indices (2 operands, no repeats).
std::vector<float> einsum_ref(const std::string& eq, const std::vector<int64_t>& as,
                              const std::vector<int64_t>& bs, const std::vector<float>& a,
                              const std::vector<float>& b, std::vector<int64_t>* out_shape) {
  const size_t comma = eq.find(','), arrow = eq.find("->");
  const std::string ta = eq.substr(0, comma), tb = eq.substr(comma + 1, arrow - comma - 1);
  const std::string to = eq.substr(arrow + 2);
  std::string letters = ta;
  for (char c : tb)
    if (letters.find(c) == std::string::npos) letters += c;
  std::map<char, int64_t> dim;
  for (size_t i = 0; i < ta.size(); ++i) dim[ta[i]] = as[i];
  for (size_t i = 0; i < tb.size(); ++i) dim[tb[i]] = bs[i];
  out_shape->clear();
  int64_t out_count = 1;
  for (char c : to) out_shape->push_back(dim[c]), out_count *= dim[c];
  std::vector<float> out(out_count, 0.f);
  std::map<char, int64_t> at;
  const auto flat = [&](const std::string& t) {
    int64_t f = 0;
    for (char c : t) f = f * dim[c] + at[c];
    return f;
  };
  std::function<void(size_t)> loop = [&](size_t i) {
    if (i == letters.size()) {
      out[flat(to)] += a[flat(ta)] * b[flat(tb)];
      return;
    }
    for (at[letters[i]] = 0; at[letters[i]] < dim[letters[i]]; ++at[letters[i]]) loop(i + 1);
  };
  loop(0);
  return out;
}

TEST(TensorGroup, EinsumAttentionPatternsBecomeGemms) {
  const EinsumCase cases[] = {
      {"bij,bjk->bik", {2, 3, 4}, {2, 4, 5}, {OpFamily::Gemm}},
      {"bhid,bhjd->bhij", {1, 2, 3, 4}, {1, 2, 5, 4}, {OpFamily::Gemm}},
      {"bhij,bhjd->bhid", {2, 2, 3, 5}, {2, 2, 5, 4}, {OpFamily::Gemm}},
      {"ij,jk->ik", {3, 4}, {4, 2}, {OpFamily::Gemm}},
      {"ij,jk->ki", {3, 4}, {4, 2}, {OpFamily::Gemm, OpFamily::Transpose}},
      {"bid,bjd->bji", {2, 3, 4}, {2, 5, 4}, {OpFamily::Gemm, OpFamily::Transpose}},
      {"ibd,jbd->bij", {3, 2, 4}, {5, 2, 4},
       {OpFamily::Transpose, OpFamily::Transpose, OpFamily::Gemm}},
  };
  for (const EinsumCase& k : cases) {
    ModelBuilder m(12);
    m.input("a", k.a).input("b", k.b).output("y");
    auto& e = m.node("Einsum", {"a", "b"}, {"y"}, "einsum");
    attr(e, "equation", std::string(k.equation));
    const size_t na = std::accumulate(k.a.begin(), k.a.end(), size_t{1}, std::multiplies<>());
    const size_t nb = std::accumulate(k.b.begin(), k.b.end(), size_t{1}, std::multiplies<>());
    std::vector<float> a(na), b(nb);
    for (size_t i = 0; i < na; ++i) a[i] = std::sin(0.7f * i);
    for (size_t i = 0; i < nb; ++i) b[i] = std::cos(0.3f * i);
    Converted c;
    const std::vector<float> y = run_f32(m, {a, b}, &c);
    std::vector<int64_t> shape;
    const std::vector<float> want = einsum_ref(k.equation, k.a, k.b, a, b, &shape);
    std::vector<OpFamily> ops = ops_of(c);
    ops.erase(std::remove(ops.begin(), ops.end(), OpFamily::Copy), ops.end());  // views
    EXPECT_EQ(ops, k.ops) << k.equation;
    ASSERT_EQ(y.size(), want.size()) << k.equation;
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << k.equation << " " << i;
  }
}

TEST(TensorGroup, EinsumTransposeImplicitOutputAndRefusals) {
  ModelBuilder m(12);
  m.input("x", {2, 3}).output("y");
  auto& e = m.node("Einsum", {"x"}, {"y"}, "einsum_t");
  attr(e, "equation", std::string("ij->ji"));
  Converted c;
  EXPECT_THAT(run_f32(m, {iota_f(6)}, &c), ElementsAre(0, 3, 1, 4, 2, 5));
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Transpose));

  ModelBuilder i64(12);  // a permutation moves any dtype
  i64.input("x", {2, 1, 2}, onnx::TensorProto::INT64).output("y", onnx::TensorProto::INT64);
  auto& p = i64.node("Einsum", {"x"}, {"y"}, "einsum_i64");
  attr(p, "equation", std::string("abc -> cba"));
  const auto out = run(convert(i64).plan, {bytes_of(std::vector<int64_t>{1, 2, 3, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<int64_t>(out[0]), ElementsAre(1, 3, 2, 4));

  ModelBuilder implicit(12);  // "ij,jk" means "ij,jk->ik"
  implicit.input("a", {2, 2}).input("b", {2, 2}).output("y");
  auto& i = implicit.node("Einsum", {"a", "b"}, {"y"}, "mm");
  attr(i, "equation", std::string("ij,jk"));
  EXPECT_THAT(run_f32(implicit, {{1, 2, 3, 4}, {1, 0, 0, 2}}), ElementsAre(1, 4, 3, 8));

  ModelBuilder bad(12);
  bad.input("x", {3, 3}).output("d");
  bad.input("a32", {2}, onnx::TensorProto::INT32).input("b32", {2}, onnx::TensorProto::INT32)
      .output("p", onnx::TensorProto::INT32);
  auto& i32 = bad.node("Einsum", {"a32", "b32"}, {"p"}, "dot_i32");
  attr(i32, "equation", std::string("i,i"));
  auto& d = bad.node("Einsum", {"x", "x", "x"}, {"d"}, "three");
  attr(d, "equation", std::string("ij,jk,kl->il"));
  const std::string error = convert_error(bad);
  EXPECT_THAT(error, HasSubstr("'three' (Einsum): 3 operands (jetplan takes 1 or 2)"));
  EXPECT_THAT(error, HasSubstr("'dot_i32' (Einsum): Einsum with a sum or 2 operands of int32 is "
                               "not supported (float32 and float64)"));

  // Indices summed in one operand only ("ij,k->i": j of x, k of v) take the Mul + Reduce path.
  ModelBuilder sums(12);
  sums.input("x", {2, 3}).input("v", {2}).output("s");
  attr(sums.node("Einsum", {"x", "v"}, {"s"}, "rowsum"), "equation", std::string("ij,k->i"));
  Converted cs;
  EXPECT_THAT(run_f32(sums, {iota_f(6), {1, 2}}, &cs), ElementsAre(9, 36));  // (0+1+2)*3, 12*3
}

// ---------------------------------------------------------------------------- folding

TEST(TensorGroup, ConstantsFoldThroughTheGroupsOps) {
  // An exporter's constant path: int64 -> Cast -> Transpose -> Gather -> Slice -> Unsqueeze,
  // and a mask from Equal/Not/Where; all of it folds, leaving one Add.
  ModelBuilder m;
  m.input("x", {1, 2, 2}).output("y");
  m.initializer_i64("k", {2, 3}, {1, 2, 3, 4, 5, 6});
  auto& cast = m.node("Cast", {"k"}, {"kf"}, "cast");
  attr(cast, "to", int64_t{onnx::TensorProto::FLOAT});
  m.node("Transpose", {"kf"}, {"kt"}, "transpose");  // [[1,4],[2,5],[3,6]]
  m.initializer_i64("rows", {2}, {2, 0});
  m.node("Gather", {"kt", "rows"}, {"kg"}, "gather");  // [[3,6],[1,4]]
  m.initializer_i64("s0", {1}, {1});
  m.initializer_i64("e0", {1}, {-3});
  m.initializer_i64("ax", {1}, {1});
  m.initializer_i64("st", {1}, {-1});
  m.node("Slice", {"kg", "s0", "e0", "ax", "st"}, {"ks"}, "slice");  // [[6,3],[4,1]]
  m.initializer_i64("axes", {1}, {0});
  m.node("Unsqueeze", {"ks", "axes"}, {"ku"}, "unsqueeze");
  m.initializer("three", {}, {3.f});
  m.node("Equal", {"ku", "three"}, {"is3"}, "equal");
  m.node("Not", {"is3"}, {"not3"}, "not");
  m.initializer("zero", {}, {0.f});
  m.node("Where", {"not3", "ku", "zero"}, {"w"}, "where");  // [[6,0],[4,1]]
  m.node("Add", {"x", "w"}, {"y"}, "add");
  Converted c;
  EXPECT_THAT(run_f32(m, {{10, 20, 30, 40}}, &c), ElementsAre(16, 20, 34, 41));
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Binary));
}

TEST(TensorGroup, ConstantsFoldThroughPadTileSplitAndMath) {
  ModelBuilder m;
  m.input("x", {6}).output("y");
  m.initializer("c", {2}, {0.25f, 4.f});
  m.initializer_i64("pads", {2}, {1, 0});
  auto& pad = m.node("Pad", {"c", "pads"}, {"p"}, "pad");  // [0.25, 0.25, 4] (edge)
  attr(pad, "mode", std::string("edge"));
  m.initializer_i64("reps", {1}, {2});
  m.node("Tile", {"p", "reps"}, {"t"}, "tile");  // 6 values
  m.node("Sqrt", {"t"}, {"r"}, "sqrt");           // [.5, .5, 2, .5, .5, 2]
  m.node("Split", {"r"}, {"r1", "r2"}, "split");
  m.node("Sum", {"r1", "r2", "r1"}, {"s"}, "sum");  // [1.5, 1.5, 6]
  m.initializer_i64("reps2", {1}, {2});
  m.node("Tile", {"s", "reps2"}, {"s2"}, "tile2");
  m.node("Mul", {"x", "s2"}, {"y"}, "mul");
  Converted c;
  EXPECT_THAT(run_f32(m, {{1, 1, 1, 2, 2, 2}}, &c), ElementsAre(1.5, 1.5, 6, 3, 3, 12));
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Binary));
}

TEST(TensorGroup, FoldedMaxPropagatesNanAsTheKernelDoes) {
  ModelBuilder m;
  m.input("x", {2}).output("y");
  m.initializer("a", {2}, {NAN, 1.f});
  m.initializer("b", {2}, {0.f, 2.f});
  m.node("Max", {"a", "b"}, {"mx"}, "max");
  m.node("Add", {"x", "mx"}, {"y"}, "add");
  Converted c;
  const std::vector<float> y = run_f32(m, {{1, 1}}, &c);
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Binary));
  ASSERT_EQ(y.size(), 2u);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 3.f);
}

}  // namespace
}  // namespace jetplan::converter::testing
