// Op forms that joined the coverage after their ops: float64 arithmetic, Pow of integer and
// mixed types, Clip of integers, MaxPool of 8-bit integers and its Indices output, Dropout's
// mask, and Einsum outside float32; end to end through the converter and the runtime (CPU
// backend), checked against values worked out here.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "converter/src/import/onnx_import.h"
#include "converter/src/ops/check.h"
#include "tests/converter/util/run_util.h"
#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

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

TEST(TypedPow, IntegerBasesRunInFloat64AndTakeTheBaseType) {
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
  int pows = 0, float_pows = 0;
  for (const auto* s : *c.fb->steps()) {
    if (s->op() == fb::OpFamily::Elementwise) {
      EXPECT_EQ(s->params_as_ElementwiseParams()->op(), fb::ElementwiseOp::Pow);
      ++pows;
    }
    // A float32 base: a float32 Binary Pow, the int32 exponent cast to float32 first.
    if (s->op() == fb::OpFamily::Binary && s->params_as_BinaryParams()->op() == fb::BinaryOp::Pow)
      ++float_pows;
  }
  EXPECT_EQ(pows, 2);
  EXPECT_EQ(float_pows, 1);
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

// x ** 2 with an integer constant exponent, as exporters write RMSNorm: one float32 Binary step
// (the exponent folded to float32), so GPU plans take it.
TEST(TypedPow, Float32BaseWithAnIntegerConstantExponentIsOneBinaryStep) {
  ModelBuilder m(13);
  m.input("x", {4}).output("z");
  m.initializer_i64("two", {}, {2});
  m.node("Pow", {"x", "two"}, {"z"}, "pow");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  EXPECT_THAT(families(c.fb), ElementsAre(fb::OpFamily::Binary));
  const auto out = run(c.plan, {bytes_of(std::vector<float>{1.5f, -3.f, 0.f, 1e3f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(2.25f, 9.f, 0.f, 1e6f));
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  EXPECT_NO_THROW(convert_onnx(m.bytes(), "model.onnx", gpu));
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

// ------------------------------------------------------------------------- float64 Reduce

TEST(Float64Reduce, LogSumExpWithoutKeepdimsInDouble) {
  ModelBuilder m(13);
  m.input("x", {2, 3}, onnx::TensorProto::DOUBLE).output("y", onnx::TensorProto::DOUBLE);
  auto& n = m.node("ReduceLogSumExp", {"x"}, {"y"}, "lse");
  attr(n, "axes", std::vector<int64_t>{1});
  attr(n, "keepdims", int64_t{0});
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  // Large values: exp overflows without the max shift; the result needs float64's precision.
  const std::vector<double> x = {1000.0, 1000.0 + 1e-9, 999.0, -1.0, 0.5, 2.0};
  const auto out = run(c.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<double> y = values_of<double>(out[0]);
  ASSERT_EQ(y.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const double* row = x.data() + 3 * r;
    const double mx = std::max({row[0], row[1], row[2]});
    const double want =
        mx + std::log(std::exp(row[0] - mx) + std::exp(row[1] - mx) + std::exp(row[2] - mx));
    EXPECT_NEAR(y[r], want, 1e-12 * std::fabs(want)) << r;
  }
}

// ----------------------------------------------------------------------------------- Einsum

// out[...] over the equation's indices by brute force, in double.
std::vector<double> einsum_brute(const std::string& a, const std::string& b,
                                 const std::string& out, const std::vector<int64_t>& as,
                                 const std::vector<int64_t>& bs, const std::vector<double>& x,
                                 const std::vector<double>& y) {
  std::string letters;
  int64_t dim[128] = {};
  for (size_t d = 0; d < a.size(); ++d) dim[int(a[d])] = as[d];
  for (size_t d = 0; d < b.size(); ++d) dim[int(b[d])] = bs[d];
  for (char c : a + b + out)
    if (letters.find(c) == std::string::npos) letters += c;
  int64_t total = 1, out_count = 1;
  for (char c : letters) total *= dim[int(c)];
  for (char c : out) out_count *= dim[int(c)];
  std::vector<double> z(size_t(out_count), 0.0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t at[128] = {}, rest = i;
    for (size_t k = letters.size(); k-- > 0;) {
      at[int(letters[k])] = rest % dim[int(letters[k])];
      rest /= dim[int(letters[k])];
    }
    const auto offset = [&](const std::string& t) {
      int64_t o = 0;
      for (char c : t) o = o * dim[int(c)] + at[int(c)];
      return o;
    };
    z[size_t(offset(out))] += x[size_t(offset(a))] * (b.empty() ? 1.0 : y[size_t(offset(b))]);
  }
  return z;
}

// An Einsum, and its equation with '...' spelled out for einsum_brute.
struct EinsumCase {
  const char* equation;
  std::string a, b, out;
  std::vector<int64_t> as, bs;
  onnx::TensorProto::DataType type = onnx::TensorProto::DOUBLE;
};

// The Einsum of `t` converted and run on x (and y where it has a second operand), of t.type,
// with x[i] = x_at(i) and y[i] = 0.25 (i % 5) - 0.5; the output and einsum_brute's, as doubles.
void run_einsum(const EinsumCase& t, double (*x_at)(int64_t), std::vector<double>* got,
                std::vector<double>* want) {
  ModelBuilder m(12);
  m.input("x", t.as, t.type);
  std::vector<std::string> inputs = {"x"};
  if (!t.b.empty()) {
    m.input("y", t.bs, t.type);
    inputs.push_back("y");
  }
  m.output("z", t.type);
  attr(m.node("Einsum", inputs, {"z"}, "einsum"), "equation", std::string(t.equation));
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  std::vector<double> x, y;
  int64_t na = 1, nb = 1;
  for (int64_t d : t.as) na *= d;
  for (int64_t d : t.bs) nb *= d;
  for (int64_t i = 0; i < na; ++i) x.push_back(x_at(i));
  for (int64_t i = 0; t.b.size() && i < nb; ++i) y.push_back(0.25 * double(i % 5) - 0.5);
  const bool f64 = t.type == onnx::TensorProto::DOUBLE;
  const auto encode = [&](const std::vector<double>& v) {
    if (f64) return bytes_of(v);
    return bytes_of(std::vector<float>(v.begin(), v.end()));  // exact: few bits each
  };
  std::vector<std::vector<uint8_t>> in = {encode(x)};
  if (!t.b.empty()) in.push_back(encode(y));
  const auto out = run(c.plan, in);
  ASSERT_EQ(out.size(), 1u);
  if (f64) {
    *got = values_of<double>(out[0]);
  } else {
    for (float v : values_of<float>(out[0])) got->push_back(v);
  }
  *want = einsum_brute(t.a, t.b, t.out, t.as, t.bs, x, y);
  ASSERT_EQ(got->size(), want->size());
}

TEST(EinsumForms, Float64AttentionProductsAndSumsMatchBruteForce) {
  const EinsumCase cases[] = {
      {"bhid,bhjd->bhij", "bhid", "bhjd", "bhij", {2, 2, 3, 4}, {2, 2, 5, 4}},  // scores
      {"bhij,bhjd->bhid", "bhij", "bhjd", "bhid", {1, 2, 3, 5}, {1, 2, 5, 4}},  // context
      {"bij, bjk -> bik", "bij", "bjk", "bik", {5, 2, 3}, {5, 3, 4}},
      {"i,i", "i", "i", "", {5}, {5}},  // implicit scalar output
      {"ij->i", "ij", "", "i", {3, 4}, {}},
  };
  for (const EinsumCase& t : cases) {
    SCOPED_TRACE(t.equation);
    std::vector<double> got, want;
    run_einsum(
        t, [](int64_t i) { return 0.1 * double(i % 7) - 0.3 + 1e-10 * double(i); }, &got, &want);
    for (size_t i = 0; i < want.size() && i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-14) << i;
  }
}

TEST(EinsumForms, DiagonalsAndEllipsesMatchBruteForce) {
  // A repeated index within an operand takes its diagonal first (transpose, view, strided
  // Slice), whatever follows: nothing, a sum, a product; '...' stands for the leading dims.
  const auto f64 = onnx::TensorProto::DOUBLE, f32 = onnx::TensorProto::FLOAT;
  const EinsumCase cases[] = {
      {"...ii ->...i", "Zii", "", "Zi", {3, 5, 5}, {}, f64},  // ONNX's batch diagonal
      {"ii->i", "ii", "", "i", {4, 4}, {}, f64},
      {"ii", "ii", "", "", {4, 4}, {}, f64},                   // implicit: the trace
      {"iji->ji", "iji", "", "ji", {3, 2, 3}, {}, f64},         // apart, and transposed
      {"iii->i", "iii", "", "i", {3, 3, 3}, {}, f64},           // three times
      {"jiij->ij", "jiij", "", "ij", {2, 3, 3, 2}, {}, f64},    // two indices repeat
      {"bii,bij->bj", "bii", "bij", "bj", {2, 3, 3}, {2, 3, 4}, f64},
      {"...ij,...jk->...ik", "Zij", "Zjk", "Zik", {2, 3, 4}, {2, 4, 5}, f64},
      {"bjj,bjk->bk", "bjj", "bjk", "bk", {2, 3, 3}, {2, 3, 4}, f32},  // Gemm after the diagonal
      {"i...i", "iZi", "", "Z", {3, 2, 3}, {}, f64},             // implicit with '...'
  };
  for (const EinsumCase& t : cases) {
    SCOPED_TRACE(t.equation);
    std::vector<double> got, want;
    run_einsum(
        t, [](int64_t i) { return 0.5 * double(i % 11) - 2.0 + 0.125 * double(i); }, &got, &want);
    for (size_t i = 0; i < want.size() && i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], (t.type == f64 ? 1e-13 : 1e-5) * (1 + std::fabs(want[i])))
          << i;
  }
}

TEST(EinsumForms, ADiagonalAloneMovesAnyDtypeAndRepeatedExtentsMustAgree) {
  ModelBuilder m(12);
  m.input("x", {3, 3}, onnx::TensorProto::INT32).output("d", onnx::TensorProto::INT32);
  attr(m.node("Einsum", {"x"}, {"d"}, "diag_i32"), "equation", std::string("ii->i"));
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  EXPECT_THAT(families(c.fb), ::testing::Contains(fb::OpFamily::Slice));
  const auto out = run(c.plan, {bytes_of(std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<int32_t>(out[0]), ElementsAre(1, 5, 9));

  ModelBuilder bad(12);
  bad.input("x", {3, 4}, onnx::TensorProto::DOUBLE).output("d", onnx::TensorProto::DOUBLE);
  attr(bad.node("Einsum", {"x"}, {"d"}, "not_square"), "equation", std::string("ii->i"));
  EXPECT_THAT(convert_error(bad),
              AllOf(HasSubstr("'not_square'"),
                    HasSubstr("index 'i' has extents 3 and 4")));
}

TEST(EinsumForms, Float32SumIsAReduceAndIntegersAreRefused) {
  ModelBuilder m(12);
  m.input("x", {3, 4}).output("y");
  attr(m.node("Einsum", {"x"}, {"y"}, "rowsum"), "equation", std::string("ij->i"));
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  EXPECT_THAT(families(c.fb), ::testing::Contains(fb::OpFamily::Reduce));
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = float(i);
  const auto out = run(c.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(6.f, 22.f, 38.f));

  ModelBuilder i(12);
  i.input("x", {3, 4}, onnx::TensorProto::INT32).input("w", {4}, onnx::TensorProto::INT32)
      .output("y", onnx::TensorProto::INT32);
  attr(i.node("Einsum", {"x", "w"}, {"y"}, "matvec_i32"), "equation", std::string("ij,j->i"));
  Graph g = import_onnx(i.bytes(), {});
  EXPECT_EQ(find_check("Einsum")(g, g.nodes[0]),
            "Einsum with a sum or 2 operands of int32 is not supported (float32 and float64)");
}

// ------------------------------------------------------------------------ Clip, MaxPool bytes

TEST(ByteForms, Int8ClipAndUint8MaxPoolRunInFloat32BetweenCasts) {
  ModelBuilder m(13);
  m.input("x", {6}, onnx::TensorProto::INT8)
      .input("u", {1, 1, 3, 3}, onnx::TensorProto::UINT8)
      .output("y", onnx::TensorProto::INT8)
      .output("p", onnx::TensorProto::UINT8);
  raw_initializer(m, "lo", onnx::TensorProto::INT8, {}, {static_cast<uint8_t>(-5)});
  raw_initializer(m, "hi", onnx::TensorProto::INT8, {}, {100});
  m.node("Clip", {"x", "lo", "hi"}, {"y"}, "clip_i8");
  auto& pool = m.node("MaxPool", {"u"}, {"p"}, "pool_u8");
  attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(pool, "pads", std::vector<int64_t>{1, 1, 0, 0});
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  const auto f = families(c.fb);
  EXPECT_EQ(std::count(f.begin(), f.end(), fb::OpFamily::Cast), 4);
  const auto out = run(c.plan, {bytes_of(std::vector<int8_t>{-128, -6, -5, 0, 100, 127}),
                                bytes_of(std::vector<uint8_t>{0, 255, 3, 4, 5, 6, 7, 8, 254})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(values_of<int8_t>(out[0]), ElementsAre(-5, -5, -5, 0, 100, 100));
  // 3x3 padded at the top and left, 2x2 windows of stride 1: a 3x3 output.
  EXPECT_THAT(out[1], ElementsAre(0, 255, 255, 4, 255, 255, 7, 8, 254));
}

// Wider integers do not all fit a float32 exactly: their Clip stays refused.
TEST(ByteForms, Int32ClipIsRefused) {
  ModelBuilder m(13);
  m.input("x", {3}, onnx::TensorProto::INT32).output("y", onnx::TensorProto::INT32);
  m.node("Clip", {"x"}, {"y"}, "clip_i32");
  Graph g = import_onnx(m.bytes(), {});
  EXPECT_EQ(find_check("Clip")(g, g.nodes[0]),
            "input 'x' is int32 (jetplan computes float32 only)");
}

// ------------------------------------------------------------------------- MaxPool Indices

TEST(MaxPoolIndices, TheIndicesOutputHoldsFlatNchwOffsets) {
  ModelBuilder m(12);
  m.input("x", {1, 2, 2, 3}).output("y").output("i", onnx::TensorProto::INT64);
  auto& pool = m.node("MaxPool", {"x"}, {"y", "i"}, "pool");
  attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(pool, "strides", std::vector<int64_t>{1, 1});
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  ASSERT_EQ(c.fb->steps()->size(), 1u);
  EXPECT_EQ(c.fb->steps()->Get(0)->outputs()->size(), 2u);
  // Channel 0 [[1 5 2] [4 3 9]], channel 1 [[7 7 0] [7 1 8]]: ties keep the first.
  const std::vector<float> x = {1, 5, 2, 4, 3, 9, 7, 7, 0, 7, 1, 8};
  const auto out = run(c.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(5, 9, 7, 8));
  EXPECT_THAT(values_of<int64_t>(out[1]), ElementsAre(1, 5, 6, 11));
}

TEST(MaxPoolIndices, StorageOrder1GivesColumnMajorOffsets) {
  ModelBuilder m(12);
  m.input("x", {1, 1, 2, 3}).output("y").output("i", onnx::TensorProto::INT64);
  auto& pool = m.node("MaxPool", {"x"}, {"y", "i"}, "pool");
  attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(pool, "storage_order", int64_t{1});
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  EXPECT_TRUE(c.fb->steps()->Get(0)->params_as_PoolParams()->indices_column_major());
  // [[1 5 2] [4 3 9]]: 5 at (h 0, w 1) is 1 * 2 + 0, 9 at (1, 2) is 2 * 2 + 1.
  const auto out = run(c.plan, {bytes_of(std::vector<float>{1, 5, 2, 4, 3, 9})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(5, 9));
  EXPECT_THAT(values_of<int64_t>(out[1]), ElementsAre(2, 5));
}

// GPU targets take the indices output too: the pool stays NCHW, its generic kernel writes the
// Int64 indices (PoolParams.write_indices), and the plan loads.
TEST(MaxPoolIndices, AGpuTargetWritesTheIndicesOutput) {
  ModelBuilder m(12);
  m.input("x", {1, 1, 2, 2}).output("y").output("i", onnx::TensorProto::INT64);
  attr(m.node("MaxPool", {"x"}, {"y", "i"}, "pool"), "kernel_shape", std::vector<int64_t>{2, 2});
  ConvertOptions options;
  options.target = "orin-agx";
  const ConvertResult r = convert_onnx(m.bytes(), "model.onnx", options);
  const fb::Plan* plan = fb::GetPlan(r.plan.data());
  const fb::Step* pool = nullptr;
  for (const auto* s : *plan->steps())
    if (s->op() == fb::OpFamily::Pool) pool = s;
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->outputs()->size(), 2u);
  EXPECT_THAT(pool->kernel()->str(), ::testing::StartsWith("jp_pool_f"));
  EXPECT_EQ(plan->tensors()->Get(pool->outputs()->Get(1))->dtype(), fb::DType::Int64);
  EXPECT_TRUE(loads_without_device(r.plan));
}

// ------------------------------------------------------------------------------ Dropout mask

TEST(DropoutMask, TheMaskIsAConstantOfTruesAndRatioZeroTrainingIsInference) {
  ModelBuilder m(13);
  m.input("x", {2, 3}).output("y").output("mask", onnx::TensorProto::BOOL).output("y2").output(
      "mask2", onnx::TensorProto::BOOL);
  m.node("Dropout", {"x"}, {"y", "mask"}, "drop");
  m.initializer("r0", {}, {0.f});
  raw_initializer(m, "on", onnx::TensorProto::BOOL, {}, {1});
  m.node("Dropout", {"x", "r0", "on"}, {"y2", "mask2"}, "drop_train_r0");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  const std::vector<float> x = {1, -2, 3, 4, 5, 6};
  const auto out = run(c.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAreArray(x));
  EXPECT_THAT(out[1], ElementsAre(1, 1, 1, 1, 1, 1));
  EXPECT_THAT(values_of<float>(out[2]), ElementsAreArray(x));
  EXPECT_THAT(out[3], ElementsAre(1, 1, 1, 1, 1, 1));

  ModelBuilder t(13);
  t.input("x", {2}).output("y");
  t.initializer("r", {}, {0.5f});
  raw_initializer(t, "on", onnx::TensorProto::BOOL, {}, {1});
  t.node("Dropout", {"x", "r", "on"}, {"y"}, "drop_train");
  Graph g = import_onnx(t.bytes(), {});
  EXPECT_EQ(find_check("Dropout")(g, g.nodes[0]),
            "training_mode is on with a nonzero ratio (jetplan runs inference only)");
}

// ------------------------------------------------------------------ opset 18, GroupNormalization

TEST(Opset18, Opset18ReadsTheOpsItRedefined) {
  ModelBuilder m(18);  // ReduceMean's axes are an input at opset 18 (test_newer_opsets.cc: more)
  m.input("x", {2, 4}).output("y");
  m.initializer_i64("axes", {1}, {1});
  m.node("ReduceMean", {"x", "axes"}, {"y"}, "mean");
  const auto out = run(convert(m).plan, {bytes_of(std::vector<float>{1, -2, 3, -4, 0, 2, 4, 6})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(-0.5f, 3.f));
}

// GroupNormalization of opset 18 (scale and bias per group) against the formula in double:
// per (n, group), the mean and biased variance over the group's channels and spatial elements.
TEST(Opset18, GroupNormalizationMatchesAHandwrittenReference) {
  const int64_t N = 2, C = 6, H = 2, W = 3, G = 3;
  const float eps = 1e-3f;
  ModelBuilder m(18);
  m.input("x", {N, C, H, W}).output("y");
  const std::vector<float> scale = {0.5f, -2.f, 1.5f}, bias = {0.f, 1.f, -0.25f};
  m.initializer("scale", {G}, scale).initializer("bias", {G}, bias);
  auto& n = m.node("GroupNormalization", {"x", "scale", "bias"}, {"y"}, "gn");
  attr(n, "num_groups", G);
  attr(n, "epsilon", eps);
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  EXPECT_THAT(families(c.fb), ElementsAre(fb::OpFamily::GroupNorm));
  std::vector<float> x(size_t(N * C * H * W));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 37) % 19) * 0.3f - 2.f + 0.01f * float(i);
  const auto out = run(c.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<float> y = values_of<float>(out[0]);
  ASSERT_EQ(y.size(), x.size());
  const int64_t per_group = (C / G) * H * W;
  for (int64_t b = 0; b < N; ++b)
    for (int64_t grp = 0; grp < G; ++grp) {
      const int64_t base = (b * C + grp * (C / G)) * H * W;  // a group's elements are contiguous
      double mean = 0, var = 0;
      for (int64_t i = 0; i < per_group; ++i) mean += x[size_t(base + i)];
      mean /= double(per_group);
      for (int64_t i = 0; i < per_group; ++i)
        var += (x[size_t(base + i)] - mean) * (x[size_t(base + i)] - mean);
      var /= double(per_group);
      for (int64_t i = 0; i < per_group; ++i) {
        const double want =
            scale[size_t(grp)] * (x[size_t(base + i)] - mean) / std::sqrt(var + eps) +
            bias[size_t(grp)];
        EXPECT_NEAR(y[size_t(base + i)], want, 1e-5 * (1 + std::fabs(want)))
            << "n " << b << " group " << grp << " element " << i;
      }
    }
}

TEST(Opset18, GroupNormalizationBelowOpset18IsRefusedByName) {
  ModelBuilder m(17);
  m.input("x", {1, 4, 2}).output("y");
  m.initializer("s", {2}, {1, 1}).initializer("b", {2}, {0, 0});
  attr(m.node("GroupNormalization", {"x", "s", "b"}, {"y"}, "gn"), "num_groups", int64_t{2});
  EXPECT_THAT(convert_error(m), HasSubstr("'gn' (GroupNormalization): GroupNormalization is not "
                                          "an op of opset 17 (ONNX adds it at opset 18)"));
}

}  // namespace
}  // namespace jetplan::converter::testing
