// Constant folding through the data movement and math ops (Pad, Tile, Split, Max with NaN, ...),
// folded values checked against the steps that would compute them.
#include "tests/converter/util/float_run_util.h"

namespace jetplan::converter::testing {
namespace {

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

// The Reduce ops fold on constants: float32 through the Reduce family's CPU twin (the same values
// as the step that would compute them, here the run of the unfolded reduction of the input), int64
// and bool in int64 (the element count of a shape, an any() of a mask).
TEST(TensorGroup, ReductionsFoldOnConstants) {
  const std::vector<float> c = {0.5f, -2.f, 3.f, 1.25f, -0.75f, 4.f};
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"}) {
    // The reduction over axis 1 (kept) of `from` into `to`; ReduceSum's axes an input at 13.
    const auto reduce = [&](ModelBuilder& m, const std::string& from, const std::string& to) {
      auto& r = m.node(op, {from}, {to}, "reduce");
      if (std::string(op) == "ReduceSum") {
        m.initializer_i64("axes", {1}, {1});
        r.add_input("axes");
      } else {
        attr(r, "axes", std::vector<int64_t>{1});
      }
    };
    // y = x + Reduce(c) against the step itself: Reduce(x) of x = c.
    ModelBuilder folded(13);
    folded.input("x", {2, 1}).output("y");
    folded.initializer("c", {2, 3}, c);
    reduce(folded, "c", "r");
    folded.node("Add", {"x", "r"}, {"y"}, "add");
    Converted cf;
    const std::vector<float> got = run_f32(folded, {{0, 0}}, &cf);
    EXPECT_THAT(ops_of(cf), ElementsAre(OpFamily::Binary)) << op;
    ModelBuilder step(13);
    step.input("c", {2, 3}).output("y");
    reduce(step, "c", "y");
    EXPECT_EQ(got, run_f32(step, {c})) << op;
  }
  // int64 over a Shape (keepdims 0) and bool (ReduceMax of opset 20: any) feed a Reshape's shape.
  ModelBuilder m(20);
  m.model().set_ir_version(9);
  m.input("x", {2, 3}).output("y");
  m.node("Shape", {"x"}, {"dims"}, "dims");
  attr(m.node("ReduceProd", {"dims"}, {"count"}, "count"), "keepdims", int64_t{1});
  raw_initializer(m, "mask", onnx::TensorProto::BOOL, {3}, {0, 1, 0});
  m.node("ReduceMax", {"mask"}, {"any"}, "any");
  auto& cast = m.node("Cast", {"any"}, {"any64"}, "any64");
  attr(cast, "to", int64_t{onnx::TensorProto::INT64});
  m.node("Mul", {"count", "any64"}, {"shape"}, "shape");  // [6]
  m.node("Reshape", {"x", "shape"}, {"y"}, "flat");
  Converted c6;
  EXPECT_THAT(run_f32(m, {{1, 2, 3, 4, 5, 6}}, &c6), ElementsAre(1, 2, 3, 4, 5, 6));
  ASSERT_NE(c6.fb, nullptr);
  ASSERT_NE(c6.fb->outputs()->Get(0), nullptr);
  const auto* y = c6.fb->tensors()->Get(c6.fb->outputs()->Get(0)->tensor());
  EXPECT_THAT(std::vector<int64_t>(y->shape()->begin(), y->shape()->end()), ElementsAre(6));
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
