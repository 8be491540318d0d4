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
