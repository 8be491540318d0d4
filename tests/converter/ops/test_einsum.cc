// Einsum end to end: attention patterns as Gemm steps, permutations, implicit outputs, refusals.
#include "tests/converter/util/float_run_util.h"

namespace jetplan::converter::testing {
namespace {

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
  EXPECT_THAT(convert_error(bad),
              AllOf(HasSubstr("'three' (Einsum): 3 operands (jetplan takes 1 or 2)"),
                    HasSubstr("'dot_i32' (Einsum): Einsum with a sum or 2 operands of int32 is "
                              "not supported (float32 and float64)")));

  // Indices summed in one operand only ("ij,k->i": j of x, k of v) take the Mul + Reduce path.
  ModelBuilder sums(12);
  sums.input("x", {2, 3}).input("v", {2}).output("s");
  attr(sums.node("Einsum", {"x", "v"}, {"s"}, "rowsum"), "equation", std::string("ij,k->i"));
  Converted cs;
  EXPECT_THAT(run_f32(sums, {iota_f(6), {1, 2}}, &cs), ElementsAre(9, 36));  // (0+1+2)*3, 12*3
}
}  // namespace
}  // namespace jetplan::converter::testing
