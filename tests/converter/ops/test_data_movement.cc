// The data movement ops end to end (Transpose, Slice, Split, Gather, GatherElements, Pad, Expand,
// Tile, DepthToSpace, SpaceToDepth, Where, Cast): ONNX nodes -> check (reasons, errors naming the
// node) -> expansion -> plan -> the runtime's load-time checks -> CPU kernels, compared with
// values worked out here. The math ops: test_math.cc; hostile plans: load/.
#include "tests/converter/util/float_run_util.h"

namespace jetplan::converter::testing {
namespace {

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

TEST(TensorGroup, EmptySliceIsAnEmptyOutputNoStepWrites) {
  ModelBuilder m;
  m.input("x", {4}).output("y");
  m.initializer_i64("starts", {1}, {3});
  m.initializer_i64("ends", {1}, {1});
  m.node("Slice", {"x", "starts", "ends"}, {"y"}, "empty");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  EXPECT_EQ(c.fb->steps()->size(), 0u);
  const auto out = run(c.plan, {bytes_of(std::vector<float>{1, 2, 3, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].empty());
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

}  // namespace
}  // namespace jetplan::converter::testing
