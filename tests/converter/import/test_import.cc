// Import: models that are not well-formed ONNX give one clear error, never a crash.
#include <gmock/gmock.h>

#include <cstdlib>
#include <typeinfo>

#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

ModelBuilder relu_model() {
  ModelBuilder m;
  m.input("x", {1, 4}).output("y");
  m.node("Relu", {"x"}, {"y"}, "relu");
  return m;
}

TEST(Import, GarbageBytesAreNotOnnx) {
  EXPECT_THAT(convert_error(std::string("this is not an ONNX model, just text\n")),
              HasSubstr("not an ONNX model"));
  std::string random(4096, '\0');
  uint32_t s = 7;
  for (char& c : random) c = static_cast<char>((s = s * 1664525u + 1013904223u) >> 24);
  EXPECT_THAT(convert_error(random), HasSubstr("not an ONNX model"));
}

TEST(Import, EmptyFile) { EXPECT_THAT(convert_error(std::string()), HasSubstr("empty")); }

TEST(Import, TruncatedProtobuf) {
  ModelBuilder m = relu_model();
  m.random("unused_weight", {64, 64});  // makes the cut land inside a long field
  const std::string bytes = m.bytes();
  for (double frac : {0.3, 0.5, 0.9}) {
    const std::string cut = bytes.substr(0, static_cast<size_t>(bytes.size() * frac));
    EXPECT_THAT(convert_error(cut), HasSubstr("not an ONNX model")) << "cut at " << frac;
  }
}

TEST(Import, CyclicGraphNamesTheCycle) {
  ModelBuilder m;
  m.input("x", {1, 4}).output("y");
  m.node("Add", {"x", "b_out"}, {"a_out"}, "a");
  m.node("Relu", {"a_out"}, {"b_out"}, "b");
  m.node("Relu", {"a_out"}, {"y"}, "c");
  EXPECT_EQ(convert_error(m), "cyclic graph: 'a' (Add) -> 'b' (Relu) -> 'a' (Add)");
}

TEST(Import, MissingInitializer) {
  ModelBuilder m;
  m.input("x", {1, 3, 8, 8}).output("y");
  m.node("Conv", {"x", "conv_w"}, {"y"}, "conv");
  EXPECT_THAT(convert_error(m),
              StartsWith("missing initializer: node 'conv' (Conv) reads 'conv_w'"));
}

TEST(Import, ValueProducedTwice) {
  ModelBuilder m;
  m.input("x", {1, 4}).output("y");
  m.node("Relu", {"x"}, {"y"}, "r1");
  m.node("Sigmoid", {"x"}, {"y"}, "r2");
  EXPECT_THAT(convert_error(m), HasSubstr("'y' is produced by node 'r2' (Sigmoid)"));
}

TEST(Import, UnsortedNodesAreSorted) {
  ModelBuilder m;
  m.input("x", {1, 4}).output("y");
  m.node("Sigmoid", {"t"}, {"y"}, "second");
  m.node("Tanh", {"x"}, {"t"}, "first");
  ConvertOptions separate;  // two steps, in order (fused, they would be one Pointwise step)
  separate.fuse = false;
  const ConvertResult r = convert_ok(m, separate);
  const fb::Plan* plan = read_plan(r.plan);
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(plan->steps()->size(), 2u);
  EXPECT_EQ(plan->steps()->Get(0)->name()->str(), "first");
  EXPECT_EQ(plan->steps()->Get(1)->name()->str(), "second");
}

TEST(Import, ShapeMismatchNamesTheNode) {
  ModelBuilder m;
  m.input("a", {1, 3}).input("b", {1, 4}).output("y");
  m.node("Add", {"a", "b"}, {"y"}, "bad_add");
  const std::string e = convert_error(m);
  EXPECT_THAT(e, HasSubstr("bad_add"));
  EXPECT_THAT(e, HasSubstr("shape inference failed"));
}

TEST(Import, ConvChannelMismatch) {
  ModelBuilder m;
  m.input("x", {1, 3, 8, 8}).output("y");
  m.random("w", {4, 2, 3, 3});
  m.node("Conv", {"x", "w"}, {"y"}, "conv");
  EXPECT_THAT(convert_error(m), HasSubstr("conv"));
}

TEST(Import, CheckerErrorsAreOneLine) {
  ModelBuilder m = relu_model();
  attr(*m.model().mutable_graph()->mutable_node(0), "no_such_attribute", int64_t{3});
  EXPECT_THAT(convert_error(m), StartsWith("invalid ONNX model: "));
}

// Opsets below 7 are upgraded with libonnx's version converter, not refused.
TEST(Import, OldOpsetIsUpgraded) {
  ModelBuilder m(6);
  m.input("x", {1, 4}).output("y");
  m.node("Relu", {"x"}, {"y"}, "relu");
  const ConvertResult r = convert_ok(m);
  EXPECT_FALSE(r.plan.empty());
}

TEST(Import, ExternalDataIsRefused) {
  ModelBuilder m;
  m.input("x", {1, 4}).output("y");
  auto* w = m.empty_initializer("w", onnx::TensorProto::FLOAT, {4});
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  m.node("Add", {"x", "w"}, {"y"}, "add");
  EXPECT_THAT(convert_error(m), HasSubstr("external"));
}

TEST(Import, RawDataOfTheWrongSize) {
  ModelBuilder m;
  m.input("x", {1, 4}).output("y");
  auto* w = m.empty_initializer("w", onnx::TensorProto::FLOAT, {4});
  w->set_raw_data(std::string(12, '\0'));
  m.node("Add", {"x", "w"}, {"y"}, "add");
  EXPECT_THAT(convert_error(m), HasSubstr("initializer 'w': raw_data holds 12 bytes"));
}

TEST(Import, SymbolicDimNeedsShape) {
  ModelBuilder m;
  m.input("x", {-1, 4}).output("y");
  m.node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_THAT(convert_error(m),
              HasSubstr("input 'x' has a symbolic dim 'N' at index 0 [N,4]; pin it with "
                        "--shape, e.g. --shape x:1x4"));

  ConvertOptions pinned;
  pinned.input_shapes["x"] = {3, 4};
  const ConvertResult r = convert_ok(m, pinned);
  const fb::Plan* plan = read_plan(r.plan);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(tensor_shape(plan, plan->inputs()->Get(0)->tensor()), (Shape{3, 4}));
  EXPECT_EQ(tensor_shape(plan, plan->outputs()->Get(0)->tensor()), (Shape{3, 4}));
}

TEST(Import, ShapeOptionErrors) {
  ModelBuilder m;
  m.input("x", {-1, 4}).output("y");
  m.node("Relu", {"x"}, {"y"}, "relu");
  ConvertOptions unknown;
  unknown.input_shapes["nope"] = {1, 4};
  EXPECT_THAT(convert_error(m, unknown),
              HasSubstr("--shape names 'nope', which is not a graph input (graph inputs: x)"));
  ConvertOptions rank;
  rank.input_shapes["x"] = {1, 4, 1};
  EXPECT_THAT(convert_error(m, rank), HasSubstr("input 'x' has rank 2"));
  ConvertOptions fixed;
  fixed.input_shapes["x"] = {2, 5};
  EXPECT_THAT(convert_error(m, fixed), HasSubstr("dim 1 of input 'x' is fixed at 4"));
}

TEST(Import, InitializerListedAsInputIsAWeight) {
  ModelBuilder m;
  m.input("x", {1, 4}).input("w", {1, 4}).output("y");
  m.initializer("w", {1, 4}, {1, 2, 3, 4});
  m.node("Add", {"x", "w"}, {"y"}, "add");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = read_plan(r.plan);
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(plan->inputs()->size(), 1u);
  EXPECT_EQ(plan->inputs()->Get(0)->name()->str(), "x");
}

}  // namespace
}  // namespace jetplan::converter::testing

namespace jetplan::converter::testing {
namespace {

// Damaged models must end in a ConvertError (or, where the damage is harmless, a plan that
// satisfies the contract), never in a crash or another exception. JETPLAN_FUZZ_TRIALS (per
// opset) and JETPLAN_FUZZ_SEED widen the search; tests/run_tests.sh runs this under ASan/UBSan.
void damage_and_convert(int opset, uint32_t seed) {
  ModelBuilder m(opset);
  m.input("x", {1, 3, 8, 8}).output("y").output("p");
  m.random("w", {4, 3, 3, 3}).random("b", {4});
  for (const char* n : {"s", "sh", "mu", "var"}) m.random(n, {4}, 0.5f, 1.5f);
  attr(m.node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("BatchNormalization", {"c", "s", "sh", "mu", "var"}, {"bn"}, "bn");
  m.node("Relu", {"bn"}, {"r"}, "relu");
  auto& pool = m.node("MaxPool", {"r"}, {"pooled"}, "pool");
  attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(pool, "strides", std::vector<int64_t>{2, 2});
  m.node("Shape", {"pooled"}, {"shape"}, "shape");
  m.initializer_i64("zero", {1}, {0});
  attr(m.node("Gather", {"shape", "zero"}, {"batch"}, "gather"), "axis", int64_t{0});
  m.initializer_i64("minus_one", {1}, {-1});
  attr(m.node("Concat", {"batch", "minus_one"}, {"target"}, "concat"), "axis", int64_t{0});
  m.node("Reshape", {"pooled", "target"}, {"flat"}, "reshape");
  m.random("fc_w", {5, 64}).random("fc_b", {5});
  attr(m.node("Gemm", {"flat", "fc_w", "fc_b"}, {"y"}, "fc"), "transB", int64_t{1});
  attr(m.node("Softmax", {"y"}, {"p"}, "softmax"), "axis", int64_t{1});
  const std::string good = m.bytes();
  convert_ok(m);

  expect_damaged_copies_convert_or_fail(good, 500, seed, cat("opset ", opset, " "), true);
}

TEST(Import, DamagedModelsNeverCrash) {
  const char* env = std::getenv("JETPLAN_FUZZ_SEED");
  const uint32_t seed = env ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10)) : 12345;
  for (int opset : {11, 13, 17}) damage_and_convert(opset, seed + static_cast<uint32_t>(opset));
}

}  // namespace
}  // namespace jetplan::converter::testing
