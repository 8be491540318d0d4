// The tensor op group end to end: ONNX nodes -> check (reasons, errors naming the node) ->
// expansion -> plan -> the runtime's load-time checks -> CPU kernels, compared with values
// worked out here; constant folding of the same ops; and hand-built hostile plans that the
// runtime must refuse at load.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>

#include "converter/src/onnx_import.h"
#include "converter/src/support.h"
#include "converter/src/support_groups.h"
#include "kernels/cpu/half.h"
#include "tests/converter/run_util.h"
#include "tests/converter/test_util.h"
#include "tests/runtime/plan_builder.h"

namespace jetplan::converter::testing {
namespace {

using fb::OpFamily;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------- helpers

std::vector<float> iota_f(size_t n, float start = 0.f) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// Converts, runs with float inputs and returns output 0 as floats.
std::vector<float> run_f32(const ModelBuilder& m, const std::vector<std::vector<float>>& inputs,
                           Converted* c = nullptr) {
  Converted local = convert(m);
  std::vector<std::vector<uint8_t>> in;
  for (const auto& v : inputs) in.push_back(bytes_of(v));
  const auto out = run(local.plan, in);
  if (c != nullptr) *c = std::move(local);
  return out.empty() ? std::vector<float>{} : values_of<float>(out[0]);
}

std::vector<OpFamily> ops_of(const Converted& c) {
  return c.fb != nullptr ? step_ops(c.fb) : std::vector<OpFamily>{};
}

// ---------------------------------------------------------------------------- data movement

TEST(TensorGroup, TransposeRunsAnyPermutation) {
  ModelBuilder m;
  m.input("x", {2, 3, 4}).output("y");
  auto& t = m.node("Transpose", {"x"}, {"y"}, "t");
  attr(t, "perm", std::vector<int64_t>{2, 0, 1});
  Converted c;
  const std::vector<float> x = iota_f(24);
  const std::vector<float> y = run_f32(m, {x}, &c);
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Transpose));
  ASSERT_EQ(y.size(), 24u);
  // y[k, i, j] = x[i, j, k]
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(y[(k * 2 + i) * 3 + j], x[(i * 3 + j) * 4 + k]);
  ASSERT_NE(c.fb, nullptr);
  const auto* p = c.fb->steps()->Get(0)->params_as_TransposeParams();
  ASSERT_NE(p, nullptr);
  EXPECT_THAT(std::vector<int32_t>(p->perm()->begin(), p->perm()->end()), ElementsAre(2, 0, 1));
}

TEST(TensorGroup, TransposeOfInt64InputAndDefaultPerm) {
  ModelBuilder m;
  m.input("x", {2, 3}, onnx::TensorProto::INT64).output("y", onnx::TensorProto::INT64);
  m.node("Transpose", {"x"}, {"y"}, "t");
  const Converted c = convert(m);
  const std::vector<int64_t> x = {1, 2, 3, -4, 5, int64_t{1} << 40};
  const auto out = run(c.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<int64_t>(out[0]), ElementsAre(1, -4, 2, 5, 3, int64_t{1} << 40));
}

TEST(TensorGroup, IdentityTransposeIsRemoved) {
  ModelBuilder m;
  m.input("x", {2, 3}).output("y");
  auto& t = m.node("Transpose", {"x"}, {"t"}, "t");
  attr(t, "perm", std::vector<int64_t>{0, 1});
  m.node("Relu", {"t"}, {"y"}, "relu");
  EXPECT_THAT(ops_of(convert(m)), ElementsAre(OpFamily::Activation));
}

TEST(TensorGroup, SliceClampsAsOnnxSays) {
  ModelBuilder m;
  m.input("x", {3, 10}).output("y");
  // axis 1: from 100 (clamped to 9) down to -100 (before the start), step -3: 9 6 3 0;
  // axis 0: -2 .. end: rows 1, 2.
  m.initializer_i64("starts", {2}, {100, -2});
  m.initializer_i64("ends", {2}, {-100, INT64_MAX});
  m.initializer_i64("axes", {2}, {1, 0});
  m.initializer_i64("steps", {2}, {-3, 1});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "s");
  Converted c;
  const std::vector<float> y = run_f32(m, {iota_f(30)}, &c);
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Slice));
  EXPECT_THAT(y, ElementsAre(19, 16, 13, 10, 29, 26, 23, 20));
}

TEST(TensorGroup, SliceOpset9Attributes) {
  ModelBuilder m(9);
  m.input("x", {4, 5}).output("y");
  auto& s = m.node("Slice", {"x"}, {"y"}, "s");
  attr(s, "starts", std::vector<int64_t>{1, -3});
  attr(s, "ends", std::vector<int64_t>{3, 1000});
  EXPECT_THAT(run_f32(m, {iota_f(20)}), ElementsAre(7, 8, 9, 12, 13, 14));
}

TEST(TensorGroup, SliceNegativeStartBeforeTheDimWithNegativeStep) {
  // ONNX clamps a negative-step start into [0, dim - 1]: -10 on a dim of 5 starts at 0.
  ModelBuilder m;
  m.input("x", {5}).output("y");
  m.initializer_i64("starts", {1}, {-10});
  m.initializer_i64("ends", {1}, {INT64_MIN});
  m.initializer_i64("steps", {1}, {-1});
  m.node("Slice", {"x", "starts", "ends", "", "steps"}, {"y"}, "s");
  EXPECT_THAT(run_f32(m, {iota_f(5)}), ElementsAre(0));
}

TEST(TensorGroup, SliceWithRunTimeStartsIsRefused) {
  ModelBuilder m;
  m.input("x", {4}).input("starts", {1}, onnx::TensorProto::INT64).output("y");
  m.initializer_i64("ends", {1}, {3});
  m.node("Slice", {"x", "starts", "ends"}, {"y"}, "s");
  EXPECT_THAT(convert_error(m), HasSubstr("'s' (Slice): its starts input 'starts' is computed at "
                                          "run time (jetplan needs it constant)"));
}

TEST(TensorGroup, SliceStepZeroNamesTheNode) {
  // Steps computed from a constant: ONNX shape inference does not see them, the folder does.
  ModelBuilder m;
  m.input("x", {4}).output("y");
  m.initializer_i64("starts", {1}, {0});
  m.initializer_i64("ends", {1}, {3});
  m.initializer_i64("axes", {1}, {0});
  m.initializer_i64("zero", {1}, {0});
  m.node("Identity", {"zero"}, {"steps"}, "steps");
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "zero_step");
  EXPECT_THAT(convert_error(m), HasSubstr("'zero_step' (Slice): Slice step 0 on axis 0"));
}

TEST(TensorGroup, EmptySliceIsRefusedWithAReason) {
  ModelBuilder m;
  m.input("x", {4}).output("y");
  m.initializer_i64("starts", {1}, {3});
  m.initializer_i64("ends", {1}, {1});
  m.node("Slice", {"x", "starts", "ends"}, {"y"}, "empty");
  EXPECT_THAT(convert_error(m), HasSubstr("'empty' (Slice): output 0 would be empty ([0]"));
}

TEST(TensorGroup, SplitBecomesOneSlicePerOutput) {
  for (int opset : {11, 13}) {
    ModelBuilder m(opset);
    m.input("x", {2, 6}).output("a").output("b").output("c");
    auto& s = m.node("Split", opset >= 13 ? std::vector<std::string>{"x", "split"}
                                          : std::vector<std::string>{"x"},
                     {"a", "b", "c"}, "split");
    attr(s, "axis", int64_t{-1});
    if (opset >= 13)
      m.initializer_i64("split", {3}, {1, 3, 2});
    else
      attr(s, "split", std::vector<int64_t>{1, 3, 2});
    const Converted c = convert(m);
    EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Slice, OpFamily::Slice, OpFamily::Slice));
    const auto out = run(c.plan, {bytes_of(iota_f(12))});
    ASSERT_EQ(out.size(), 3u) << "opset " << opset;
    EXPECT_THAT(values_of<float>(out[0]), ElementsAre(0, 6));
    EXPECT_THAT(values_of<float>(out[1]), ElementsAre(1, 2, 3, 7, 8, 9));
    EXPECT_THAT(values_of<float>(out[2]), ElementsAre(4, 5, 10, 11));
  }
}

TEST(TensorGroup, SplitIntoEqualPartsAndUnevenRefusal) {
  ModelBuilder m;
  m.input("x", {6}).output("a").output("b");
  m.node("Split", {"x"}, {"a", "b"}, "halves");
  const auto out = run(convert(m).plan, {bytes_of(iota_f(6))});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(values_of<float>(out[1]), ElementsAre(3, 4, 5));

  ModelBuilder bad;
  bad.input("x", {5}).output("a").output("b");
  bad.initializer_i64("two_twos", {2}, {2, 2});
  bad.node("Identity", {"two_twos"}, {"sizes"}, "sizes");
  bad.node("Split", {"x", "sizes"}, {"a", "b"}, "uneven");
  EXPECT_THAT(convert_error(bad),
              HasSubstr("'uneven' (Split): split [2,2] does not cut dim 5 into 2 outputs"));
}

TEST(TensorGroup, GatherWithConstantIndicesIncludingNegative) {
  ModelBuilder m;
  m.input("x", {3, 4}).output("y");
  m.initializer_i64("idx", {2, 2}, {3, -4, 0, -1});
  auto& g = m.node("Gather", {"x", "idx"}, {"y"}, "gather");
  attr(g, "axis", int64_t{1});
  Converted c;
  const std::vector<float> y = run_f32(m, {iota_f(12)}, &c);
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Gather));
  // y [3, 2, 2]: row r takes columns 3, 0, 0, 3.
  EXPECT_THAT(y, ElementsAre(3, 0, 0, 3, 7, 4, 4, 7, 11, 8, 8, 11));
}

TEST(TensorGroup, GatherEmbeddingWithRunTimeIndices) {
  ModelBuilder m;
  m.input("ids", {3}, onnx::TensorProto::INT64).output("y");
  m.initializer("table", {4, 2}, {0, 1, 10, 11, 20, 21, 30, 31});
  m.node("Gather", {"table", "ids"}, {"y"}, "embed");
  const Converted c = convert(m);
  // 7 is out of range: the kernel writes zeros (a run-time index cannot fail the run).
  const auto out = run(c.plan, {bytes_of(std::vector<int64_t>{2, -1, 7})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(20, 21, 30, 31, 0, 0));
}

TEST(TensorGroup, GatherConstantIndexOutOfRangeNamesTheNode) {
  ModelBuilder m;
  m.input("x", {3}).output("y");
  m.initializer_i64("idx", {1}, {3});
  m.node("Gather", {"x", "idx"}, {"y"}, "oob");
  EXPECT_THAT(convert_error(m),
              HasSubstr("node 'oob' (Gather): index 3 is out of range for dim 3"));
}

TEST(TensorGroup, GatherElements) {
  ModelBuilder m;
  m.input("x", {2, 3}).output("y");
  m.initializer_i64("idx", {2, 2}, {2, 0, -1, 1});
  auto& g = m.node("GatherElements", {"x", "idx"}, {"y"}, "ge");
  attr(g, "axis", int64_t{1});
  EXPECT_THAT(run_f32(m, {iota_f(6)}), ElementsAre(2, 0, 5, 4));
}

TEST(TensorGroup, PadModes) {
  struct Case {
    const char* mode;
    std::vector<float> want;
  };
  // x = [1 2 3], pads 2 before, 1 after.
  const Case cases[] = {{"constant", {7, 7, 1, 2, 3, 7}},
                        {"reflect", {3, 2, 1, 2, 3, 2}},
                        {"edge", {1, 1, 1, 2, 3, 3}}};
  for (const Case& k : cases) {
    ModelBuilder m;
    m.input("x", {1, 3}).output("y");
    m.initializer_i64("pads", {4}, {0, 2, 0, 1});
    m.initializer("value", {}, {7.f});
    auto& p = m.node("Pad", {"x", "pads", "value"}, {"y"}, "pad");
    attr(p, "mode", std::string(k.mode));
    EXPECT_EQ(run_f32(m, {{1, 2, 3}}), k.want) << k.mode;
  }
}

TEST(TensorGroup, PadOpset2AttributesWithCrop) {
  ModelBuilder m(7);
  m.input("x", {4}).output("y");
  auto& p = m.node("Pad", {"x"}, {"y"}, "pad");
  attr(p, "pads", std::vector<int64_t>{-1, 2});
  attr(p, "value", 5.f);
  EXPECT_THAT(run_f32(m, {{1, 2, 3, 4}}), ElementsAre(2, 3, 4, 5, 5));
}

TEST(TensorGroup, PadInt32WithAFractionalValueNamesTheNode) {
  ModelBuilder m;
  m.input("x", {2}, onnx::TensorProto::INT32).output("y", onnx::TensorProto::INT32);
  m.initializer_i64("pads", {2}, {1, 0});
  raw_initializer(m, "v", onnx::TensorProto::INT32, {}, bytes_of(std::vector<int32_t>{9}));
  m.node("Pad", {"x", "pads", "v"}, {"y"}, "pad");
  const auto out = run(convert(m).plan, {bytes_of(std::vector<int32_t>{-1, 1})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<int32_t>(out[0]), ElementsAre(9, -1, 1));

  ModelBuilder bad;
  bad.input("x", {2}).output("y");
  auto& p = bad.node("Pad", {"x"}, {"y"}, "bad_mode");
  attr(p, "mode", std::string("mirror"));
  bad.initializer_i64("pads", {2}, {1, 0});
  p.add_input("pads");
  EXPECT_THAT(convert_error(bad), HasSubstr("'bad_mode' (Pad): unknown pad mode 'mirror'"));
}

TEST(TensorGroup, ExpandAndTile) {
  ModelBuilder m;
  m.input("x", {3, 1}).output("e").output("t");
  m.initializer_i64("shape", {3}, {2, 1, 2});
  m.node("Expand", {"x", "shape"}, {"e"}, "expand");
  m.initializer_i64("repeats", {2}, {2, 3});
  m.node("Tile", {"x", "repeats"}, {"t"}, "tile");
  const Converted c = convert(m);
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Broadcast, OpFamily::Broadcast));
  const auto out = run(c.plan, {bytes_of(std::vector<float>{1, 2, 3})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
  EXPECT_THAT(values_of<float>(out[1]),
              ElementsAre(1, 1, 1, 2, 2, 2, 3, 3, 3, 1, 1, 1, 2, 2, 2, 3, 3, 3));
}

// numpy's reference: reshape, transpose, reshape.
std::vector<float> depth_to_space_ref(const std::vector<float>& x, int64_t n, int64_t c,
                                      int64_t h, int64_t w, int64_t b, bool crd) {
  std::vector<float> y(x.size());
  const int64_t oc = c / (b * b);
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < oc; ++ic)
      for (int64_t oh = 0; oh < h * b; ++oh)
        for (int64_t ow = 0; ow < w * b; ++ow) {
          const int64_t bh = oh % b, bw = ow % b;
          const int64_t src_c = crd ? ic * b * b + bh * b + bw : (bh * b + bw) * oc + ic;
          y[((in * oc + ic) * h * b + oh) * w * b + ow] =
              x[((in * c + src_c) * h + oh / b) * w + ow / b];
        }
  return y;
}

TEST(TensorGroup, DepthToSpaceBothModesAndSpaceToDepthInverts) {
  for (const char* mode : {"DCR", "CRD"}) {
    ModelBuilder m;
    m.input("x", {1, 8, 2, 3}).output("y").output("back");
    auto& d = m.node("DepthToSpace", {"x"}, {"y"}, "d2s");
    attr(d, "blocksize", int64_t{2});
    attr(d, "mode", std::string(mode));
    auto& s = m.node("SpaceToDepth", {"y"}, {"back"}, "s2d");
    attr(s, "blocksize", int64_t{2});
    const Converted c = convert(m);
    const std::vector<float> x = iota_f(48);
    const auto out = run(c.plan, {bytes_of(x)});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(values_of<float>(out[0]),
              depth_to_space_ref(x, 1, 8, 2, 3, 2, std::string(mode) == "CRD"))
        << mode;
    if (std::string(mode) == "DCR") {
      EXPECT_EQ(values_of<float>(out[1]), x);  // the inverse
    }
    EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Copy, OpFamily::Transpose, OpFamily::Copy,
                                       OpFamily::Copy, OpFamily::Transpose, OpFamily::Copy));
  }
}

TEST(TensorGroup, DepthToSpaceChannelsNotDivisibleNamesTheNode) {
  ModelBuilder m;
  m.input("x", {1, 6, 2, 2}).output("y");
  auto& d = m.node("DepthToSpace", {"x"}, {"y"}, "bad_d2s");
  attr(d, "blocksize", int64_t{2});
  EXPECT_THAT(convert_error(m), HasSubstr("'bad_d2s' (DepthToSpace): channels 6 are not a "
                                          "multiple of blocksize^2 4"));
}

TEST(TensorGroup, WhereOfAComparisonAndCasts) {
  // y = Where(x > 0, x, -x) as int32 via float16: |x| rounded to half, then truncated.
  ModelBuilder m;
  m.input("x", {4}).output("y", onnx::TensorProto::INT32).output("mask", onnx::TensorProto::BOOL);
  m.initializer("zero", {}, {0.f});
  m.node("Greater", {"x", "zero"}, {"mask"}, "gt");
  m.node("Neg", {"x"}, {"neg"}, "neg");
  m.node("Where", {"mask", "x", "neg"}, {"abs"}, "where");
  auto& c1 = m.node("Cast", {"abs"}, {"half"}, "to_half");
  attr(c1, "to", int64_t{onnx::TensorProto::FLOAT16});
  auto& c2 = m.node("Cast", {"half"}, {"y"}, "to_int");
  attr(c2, "to", int64_t{onnx::TensorProto::INT32});
  const Converted c = convert(m);
  EXPECT_THAT(ops_of(c), ElementsAre(OpFamily::Elementwise, OpFamily::Unary, OpFamily::Where,
                                     OpFamily::Cast, OpFamily::Cast));
  const auto out = run(c.plan, {bytes_of(std::vector<float>{-2.9f, 0.f, 3.5f, -70000.f})});
  ASSERT_EQ(out.size(), 2u);
  // 70000 overflows float16 to infinity; the cast to int32 saturates.
  EXPECT_THAT(values_of<int32_t>(out[0]), ElementsAre(2, 0, 3, INT32_MAX));
  EXPECT_THAT(out[1], ElementsAre(0, 0, 1, 0));
}

TEST(TensorGroup, CastLikeAndCastToTheSameType) {
  ModelBuilder m;
  m.input("x", {3}).input("like", {1}, onnx::TensorProto::INT64).output("y", onnx::TensorProto::INT64);
  m.node("CastLike", {"x", "like"}, {"y"}, "castlike");
  const Converted c = convert(m);
  const auto out =
      run(c.plan, {bytes_of(std::vector<float>{-1.5f, 2.9f, NAN}), bytes_of(std::vector<int64_t>{0})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<int64_t>(out[0]), ElementsAre(-1, 2, 0));

  ModelBuilder same;
  same.input("x", {3}).output("y");
  auto& k = same.node("Cast", {"x"}, {"t"}, "noop");
  attr(k, "to", int64_t{onnx::TensorProto::FLOAT});
  same.node("Relu", {"t"}, {"y"}, "relu");
  EXPECT_THAT(ops_of(convert(same)), ElementsAre(OpFamily::Activation));
}

TEST(TensorGroup, CastToStringIsRefusedWithAReason) {
  ModelBuilder m;
  m.input("x", {3}).output("y", onnx::TensorProto::STRING);
  auto& k = m.node("Cast", {"x"}, {"y"}, "to_string");
  attr(k, "to", int64_t{onnx::TensorProto::STRING});
  EXPECT_THAT(convert_error(m), HasSubstr("'to_string' (Cast): cast to string is not supported"));
}

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
  // Add/Sub/Mul/Div/Max/Min of every dtype and Max/Min of more than 2 inputs are this group's
  // (check_arith), which hands float32 with 2 inputs to the core's check_binary.
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
    EXPECT_EQ(find_check(op), find_check_tensor(op)) << op;
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
  const CheckFn check = find_check_tensor("Mul");
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(check(g, node), "");  // float64: an Elementwise step (CPU backend)
  EXPECT_EQ(node.op.family, OpFamily::Elementwise);
  EXPECT_EQ(node.op.tensor.expand, TensorExpand::kNone);
  ModelBuilder i8(14);
  i8.input("a", {2, 1}, onnx::TensorProto::INT8).input("b", {3}, onnx::TensorProto::INT8)
      .output("y", onnx::TensorProto::INT8);
  i8.node("Div", {"a", "b"}, {"y"}, "div_i8");
  Graph g8 = import_onnx(i8.bytes(), {});
  EXPECT_EQ(find_check_tensor("Div")(g8, g8.nodes[0]), "");
  EXPECT_EQ(g8.nodes[0].op.family, OpFamily::Elementwise);
  EXPECT_EQ(g8.nodes[0].op.tensor.expand, TensorExpand::kPromote);
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
  auto& d = bad.node("Einsum", {"x"}, {"d"}, "diag");
  attr(d, "equation", std::string("ii->i"));
  const std::string error = convert_error(bad);
  EXPECT_THAT(error, HasSubstr("'diag' (Einsum): index 'i' repeats in operand 'ii' (a diagonal)"));
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

// ---------------------------------------------------------------------------- hostile plans

using jetplan::testing::build_plan;
using jetplan::testing::PlanSpec;
using jetplan::testing::StepSpec;
using jetplan::testing::TensorSpec;

using ParamsFn = std::function<std::pair<fb::StepParams, flatbuffers::Offset<void>>(
    flatbuffers::FlatBufferBuilder&)>;

// One step reading graph inputs `ins` and writing graph output `out` (all bindings).
std::vector<uint8_t> one_step_plan(fb::OpFamily op, const std::vector<TensorSpec>& ins,
                                   TensorSpec out, ParamsFn params) {
  PlanSpec p;
  for (size_t i = 0; i < ins.size(); ++i) {
    TensorSpec t = ins[i];
    t.storage = fb::Storage::Binding;
    t.binding = static_cast<int32_t>(i);
    p.tensors.push_back(t);
    p.inputs.push_back({t.name, static_cast<uint32_t>(i)});
  }
  out.storage = fb::Storage::Binding;
  out.binding = 0;
  p.tensors.push_back(out);
  p.outputs.push_back({out.name, static_cast<uint32_t>(ins.size())});
  StepSpec s;
  s.name = "hostile";
  s.op = op;
  for (size_t i = 0; i < ins.size(); ++i) s.inputs.push_back(static_cast<uint32_t>(i));
  s.outputs = {static_cast<uint32_t>(ins.size())};
  s.params = std::move(params);
  p.steps = {s};
  return build_plan(p);
}

TensorSpec tensor(const char* name, std::vector<int64_t> shape,
                  fb::DType dtype = fb::DType::Float32) {
  TensorSpec t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

// Loads `plan`: expects `status` and an error naming the step with `needle`.
void expect_refused(const std::vector<uint8_t>& plan, jp_status status, const std::string& needle) {
  jp_plan* p = nullptr;
  EXPECT_EQ(jp_plan_load_buffer(plan.data(), plan.size(), JP_LOAD_COPY, &p), status)
      << jp_last_error();
  EXPECT_EQ(p, nullptr);
  if (p != nullptr) jp_plan_destroy(p);
  EXPECT_THAT(jp_last_error(), HasSubstr("hostile"));
  EXPECT_THAT(jp_last_error(), HasSubstr(needle));
}

void expect_loads(const std::vector<uint8_t>& plan) {
  jp_plan* p = nullptr;
  EXPECT_EQ(jp_plan_load_buffer(plan.data(), plan.size(), JP_LOAD_COPY, &p), JP_OK)
      << jp_last_error();
  if (p != nullptr) jp_plan_destroy(p);
}

ParamsFn transpose_params(std::vector<int32_t> perm) {
  return [perm](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::TransposeParams,
                          fb::CreateTransposeParamsDirect(b, &perm).Union());
  };
}

TEST(TensorGroupHostilePlan, TransposePermMustBeAPermutationOfMatchingShape) {
  const auto x = tensor("x", {2, 3});
  expect_loads(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {3, 2}), transpose_params({1, 0})));
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {2, 2}), transpose_params({0, 0})),
                 JP_ERROR_INVALID_PLAN, "perm is not a permutation");
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {3, 2}), transpose_params({1, 2})),
                 JP_ERROR_INVALID_PLAN, "perm is not a permutation");
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {2, 3}), transpose_params({1, 0})),
                 JP_ERROR_INVALID_PLAN, "not the permuted input");
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {3, 2}), transpose_params({1})),
                 JP_ERROR_INVALID_PLAN, "same rank");
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {3, 2}, fb::DType::Int32),
                               transpose_params({1, 0})),
                 JP_ERROR_INVALID_PLAN, "is Int32 but input 'x' is Float32");
}

ParamsFn slice_params(std::vector<int64_t> starts, std::vector<int64_t> steps) {
  return [starts, steps](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::SliceParams,
                          fb::CreateSliceParamsDirect(b, &starts, &steps).Union());
  };
}

TEST(TensorGroupHostilePlan, SliceMustReadInsideTheInput) {
  const auto x = tensor("x", {10});
  expect_loads(one_step_plan(OpFamily::Slice, {x}, tensor("y", {4}), slice_params({9}, {-3})));
  expect_refused(one_step_plan(OpFamily::Slice, {x}, tensor("y", {5}), slice_params({9}, {-3})),
                 JP_ERROR_INVALID_PLAN, "read outside the input");
  expect_refused(one_step_plan(OpFamily::Slice, {x}, tensor("y", {1}), slice_params({10}, {1})),
                 JP_ERROR_INVALID_PLAN, "read outside the input");
  expect_refused(one_step_plan(OpFamily::Slice, {x}, tensor("y", {2}), slice_params({0}, {0})),
                 JP_ERROR_INVALID_PLAN, "read outside the input");
  expect_refused(one_step_plan(OpFamily::Slice, {x}, tensor("y", {3}),
                               slice_params({1}, {INT64_MAX})),
                 JP_ERROR_INVALID_PLAN, "read outside the input");  // overflows int64
  expect_refused(one_step_plan(OpFamily::Slice, {x}, tensor("y", {3}), slice_params({0, 0}, {1, 1})),
                 JP_ERROR_INVALID_PLAN, "same rank");
}

ParamsFn gather_params(int32_t axis) {
  return [axis](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::GatherParams, fb::CreateGatherParams(b, axis).Union());
  };
}

TEST(TensorGroupHostilePlan, GatherOutputShapeAndIndexTypeAreChecked) {
  const auto data = tensor("data", {4, 3});
  const auto idx = tensor("idx", {2, 5}, fb::DType::Int64);
  expect_loads(one_step_plan(OpFamily::Gather, {data, idx}, tensor("y", {2, 5, 3}), gather_params(0)));
  expect_refused(one_step_plan(OpFamily::Gather, {data, idx}, tensor("y", {2, 5, 4}), gather_params(0)),
                 JP_ERROR_INVALID_PLAN, "output shape is not data's");
  expect_refused(one_step_plan(OpFamily::Gather, {data, idx}, tensor("y", {10, 3}), gather_params(0)),
                 JP_ERROR_INVALID_PLAN, "output shape is not data's");
  expect_refused(one_step_plan(OpFamily::Gather, {data, idx}, tensor("y", {2, 5, 3}), gather_params(2)),
                 JP_ERROR_INVALID_PLAN, "axis is out of range");
  expect_refused(one_step_plan(OpFamily::Gather, {data, tensor("idx", {2, 5})},
                               tensor("y", {2, 5, 3}), gather_params(0)),
                 JP_ERROR_INVALID_PLAN, "indices must be Int32 or Int64");
}

TEST(TensorGroupHostilePlan, GatherElementsIndicesMustFitOffTheAxis) {
  auto params = [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::GatherElementsParams,
                          fb::CreateGatherElementsParams(b, 0).Union());
  };
  const auto data = tensor("data", {4, 3});
  expect_loads(one_step_plan(OpFamily::GatherElements, {data, tensor("i", {6, 3}, fb::DType::Int32)},
                             tensor("y", {6, 3}), params));
  expect_refused(one_step_plan(OpFamily::GatherElements,
                               {data, tensor("i", {2, 4}, fb::DType::Int32)}, tensor("y", {2, 4}),
                               params),
                 JP_ERROR_INVALID_PLAN, "larger than data off the axis");
  expect_refused(one_step_plan(OpFamily::GatherElements,
                               {data, tensor("i", {2, 3}, fb::DType::Int32)}, tensor("y", {3, 2}),
                               params),
                 JP_ERROR_INVALID_PLAN, "one shape");
}

ParamsFn pad_params(fb::PadMode mode, std::vector<int64_t> begin, double value) {
  return [mode, begin, value](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::PadParams,
                          fb::CreatePadParamsDirect(b, mode, &begin, value).Union());
  };
}

TEST(TensorGroupHostilePlan, PadCropsAndValuesAreChecked) {
  const auto x = tensor("x", {4});
  expect_loads(one_step_plan(OpFamily::Pad, {x}, tensor("y", {9}), pad_params(fb::PadMode::Reflect, {5}, 0)));
  // begin -3 and end -2 crop all 4 elements away: nothing to reflect from.
  expect_refused(one_step_plan(OpFamily::Pad, {x}, tensor("y", {1}),
                               pad_params(fb::PadMode::Reflect, {-5}, 0)),
                 JP_ERROR_INVALID_PLAN, "crop a dim to nothing");
  expect_loads(one_step_plan(OpFamily::Pad, {x}, tensor("y", {1}),
                             pad_params(fb::PadMode::Constant, {-5}, 0)));
  expect_refused(one_step_plan(OpFamily::Pad, {tensor("x", {4}, fb::DType::Int32)},
                               tensor("y", {5}, fb::DType::Int32),
                               pad_params(fb::PadMode::Constant, {1}, 0.5)),
                 JP_ERROR_INVALID_PLAN, "pad value 0.5 does not fit Int32");
  expect_refused(one_step_plan(OpFamily::Pad, {x}, tensor("y", {5}),
                               pad_params(static_cast<fb::PadMode>(9), {1}, 0)),
                 JP_ERROR_UNSUPPORTED, "unknown pad mode 9");
  expect_refused(one_step_plan(OpFamily::Pad, {x}, tensor("y", {5}),
                               pad_params(fb::PadMode::Edge, {INT64_MIN}, 0)),
                 JP_ERROR_INVALID_PLAN, "out of range");
}

ParamsFn broadcast_params(bool tile) {
  return [tile](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::BroadcastParams, fb::CreateBroadcastParams(b, tile).Union());
  };
}

TEST(TensorGroupHostilePlan, BroadcastShapesAreChecked) {
  const auto x = tensor("x", {2, 3});
  expect_loads(one_step_plan(OpFamily::Broadcast, {x}, tensor("y", {4, 2, 3}), broadcast_params(false)));
  expect_loads(one_step_plan(OpFamily::Broadcast, {x}, tensor("y", {4, 9}), broadcast_params(true)));
  expect_refused(one_step_plan(OpFamily::Broadcast, {x}, tensor("y", {2, 4}), broadcast_params(false)),
                 JP_ERROR_INVALID_PLAN, "does not broadcast");
  expect_refused(one_step_plan(OpFamily::Broadcast, {x}, tensor("y", {3}), broadcast_params(false)),
                 JP_ERROR_INVALID_PLAN, "rank is above");
  expect_refused(one_step_plan(OpFamily::Broadcast, {x}, tensor("y", {4, 4}), broadcast_params(true)),
                 JP_ERROR_INVALID_PLAN, "not multiples");
  expect_refused(one_step_plan(OpFamily::Broadcast, {x}, tensor("y", {2, 2, 3}), broadcast_params(true)),
                 JP_ERROR_INVALID_PLAN, "ranks differ");
}

TEST(TensorGroupHostilePlan, UnaryAndElementwiseDtypePairs) {
  auto unary = [](fb::UnaryOp op) -> ParamsFn {
    return [op](flatbuffers::FlatBufferBuilder& b) {
      return std::make_pair(fb::StepParams::UnaryParams, fb::CreateUnaryParams(b, op).Union());
    };
  };
  auto elementwise = [](fb::ElementwiseOp op) -> ParamsFn {
    return [op](flatbuffers::FlatBufferBuilder& b) {
      return std::make_pair(fb::StepParams::ElementwiseParams,
                            fb::CreateElementwiseParams(b, op).Union());
    };
  };
  const auto f = tensor("x", {3});
  expect_refused(one_step_plan(OpFamily::Unary, {f}, tensor("y", {3}, fb::DType::Bool),
                               unary(fb::UnaryOp::Not)),
                 JP_ERROR_UNSUPPORTED, "unary Not on Float32 is not supported");
  expect_refused(one_step_plan(OpFamily::Unary, {f}, tensor("y", {3}), unary(fb::UnaryOp::IsNaN)),
                 JP_ERROR_INVALID_PLAN, "wrong dtype Float32");
  expect_refused(one_step_plan(OpFamily::Unary, {f}, tensor("y", {4}), unary(fb::UnaryOp::Sin)),
                 JP_ERROR_INVALID_PLAN, "shapes differ");
  expect_refused(one_step_plan(OpFamily::Unary, {f}, tensor("y", {3}), unary(static_cast<fb::UnaryOp>(99))),
                 JP_ERROR_UNSUPPORTED, "unknown unary op 99");
  expect_refused(one_step_plan(OpFamily::Elementwise, {f, tensor("b", {3})}, tensor("y", {3}),
                               elementwise(fb::ElementwiseOp::Add)),
                 JP_ERROR_UNSUPPORTED, "elementwise Add on Float32 is not supported");
  const auto i = tensor("a", {2, 3}, fb::DType::Int32);
  expect_loads(one_step_plan(OpFamily::Elementwise, {i, tensor("b", {3}, fb::DType::Int32)},
                             tensor("y", {2, 3}, fb::DType::Int32), elementwise(fb::ElementwiseOp::Add)));
  expect_refused(one_step_plan(OpFamily::Elementwise, {i, tensor("b", {3}, fb::DType::Int64)},
                               tensor("y", {2, 3}, fb::DType::Int32), elementwise(fb::ElementwiseOp::Add)),
                 JP_ERROR_INVALID_PLAN, "differ in dtype");
  expect_refused(one_step_plan(OpFamily::Elementwise, {i, tensor("b", {2}, fb::DType::Int32)},
                               tensor("y", {2, 3}, fb::DType::Int32), elementwise(fb::ElementwiseOp::Add)),
                 JP_ERROR_INVALID_PLAN, "do not broadcast");
  expect_refused(one_step_plan(OpFamily::Elementwise, {i, tensor("b", {3}, fb::DType::Int32)},
                               tensor("y", {4, 3}, fb::DType::Int32), elementwise(fb::ElementwiseOp::Add)),
                 JP_ERROR_INVALID_PLAN, "do not broadcast");
  expect_refused(one_step_plan(OpFamily::Elementwise, {i, tensor("b", {3}, fb::DType::Int32)},
                               tensor("y", {2, 3}, fb::DType::Int32), elementwise(fb::ElementwiseOp::Less)),
                 JP_ERROR_INVALID_PLAN, "wrong dtype Int32");
}

TEST(TensorGroupHostilePlan, WhereAndCast) {
  auto where = [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::WhereParams, fb::CreateWhereParams(b).Union());
  };
  auto cast = [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::CastParams, fb::CreateCastParams(b).Union());
  };
  const auto cond = tensor("c", {2, 1}, fb::DType::Bool);
  expect_loads(one_step_plan(OpFamily::Where, {cond, tensor("x", {3}), tensor("z", {1})},
                             tensor("y", {2, 3}), where));
  expect_refused(one_step_plan(OpFamily::Where, {tensor("c", {2, 1}), tensor("x", {3}), tensor("z", {1})},
                               tensor("y", {2, 3}), where),
                 JP_ERROR_INVALID_PLAN, "condition must be Bool");
  expect_refused(one_step_plan(OpFamily::Where, {cond, tensor("x", {3}), tensor("z", {1})},
                               tensor("y", {2, 4}), where),
                 JP_ERROR_INVALID_PLAN, "do not broadcast");
  expect_refused(one_step_plan(OpFamily::Where, {cond, tensor("x", {3}), tensor("z", {1})},
                               tensor("y", {3, 3}), where),
                 JP_ERROR_INVALID_PLAN, "do not broadcast");
  expect_loads(one_step_plan(OpFamily::Cast, {tensor("x", {3})}, tensor("y", {3}, fb::DType::Float16), cast));
  expect_refused(one_step_plan(OpFamily::Cast, {tensor("x", {3})}, tensor("y", {1, 3}, fb::DType::Int8), cast),
                 JP_ERROR_INVALID_PLAN, "shapes differ");
}

TEST(TensorGroupHostilePlan, GatherWithHostileIndicesWritesZerosAtRunTime) {
  // A valid plan fed indices far out of range: the kernel must not read outside data.
  const std::vector<uint8_t> bytes = one_step_plan(
      OpFamily::Gather, {tensor("data", {3, 2}), tensor("idx", {4}, fb::DType::Int32)},
      tensor("y", {4, 2}), gather_params(0));
  const auto out = run(bytes, {bytes_of(std::vector<float>{1, 2, 3, 4, 5, 6}),
                               bytes_of(std::vector<int32_t>{INT32_MIN, -3, 3, INT32_MAX})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(0, 0, 1, 2, 0, 0, 0, 0));
}

}  // namespace
}  // namespace jetplan::converter::testing
