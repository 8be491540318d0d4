// The support check (converter/src/ops/check.cc and the op rows): every unsupported node in one
// error, with a reason each; the ONNX variants jetplan accepts (attribute and input forms,
// auto_pad, old opsets).
#include <gmock/gmock.h>

#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::Not;

TEST(Support, AllUnsupportedNodesInOneError) {
  ModelBuilder m;
  m.input("x", {1, 2, 8, 8}).input("lo", {}).output("y");
  m.node("Relu", {"x"}, {"r"}, "fine_relu");
  m.node("RandomNormalLike", {"r"}, {"s"}, "n1");  // an ONNX op jetplan lacks
  m.node("Clip", {"s", "lo"}, {"p"}, "n2");  // a bound computed at run time
  auto& avg = m.node("AveragePool", {"p"}, {"a"}, "n3");
  attr(avg, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(avg, "strides", std::vector<int64_t>{2, 2});
  attr(avg, "ceil_mode", int64_t{1});  // supported: must not be listed
  m.node("Foo", {"a"}, {"f"}, "n4", "com.example");
  m.node("Relu", {"f"}, {"y"}, "after_unknown");
  m.model().add_opset_import()->set_domain("com.example");
  m.model().mutable_opset_import(1)->set_version(1);

  const std::string e = convert_error(m);
  EXPECT_EQ(e,
            "3 unsupported nodes: 'n1' (RandomNormalLike): no such op in jetplan (random "
            "sampling: a plan's outputs are a function of its inputs; feed random tensors as "
            "inputs instead); "
            "'n2' (Clip): its min input is computed at run time (jetplan needs a constant "
            "scalar); "
            "'n4' (Foo): no such op in jetplan (domain 'com.example')");
  EXPECT_THAT(e, Not(HasSubstr("fine_relu")));
  EXPECT_THAT(e, Not(HasSubstr("after_unknown")));
}

TEST(Support, UnknownOpOfTheDefaultDomain) {
  ModelBuilder m;
  m.input("x", {1, 4}).output("y");
  m.node("Frobnicate", {"x"}, {"t"}, "n1");
  m.node("Relu", {"t"}, {"u"}, "r");
  m.node("Frobnicate", {"u"}, {"y"}, "");
  EXPECT_EQ(convert_error(m),
            "2 unsupported nodes: 'n1' (Frobnicate): no such op in jetplan; "
            "'Frobnicate_2' (Frobnicate): no such op in jetplan");
}

TEST(Support, OpOfADomainTheModelDoesNotImport) {
  ModelBuilder m;
  m.input("x", {1, 4}).output("y");
  m.node("Bar", {"x"}, {"t"}, "bar", "com.other");
  m.node("Relu", {"t"}, {"y"}, "relu");
  EXPECT_EQ(convert_error(m),
            "1 unsupported node: 'bar' (Bar): no such op in jetplan (domain 'com.other')");
}

TEST(Support, NonFloatGraphInput) {
  ModelBuilder m;
  m.input("ids", {1, 4}, onnx::TensorProto::COMPLEX64).output("y", onnx::TensorProto::COMPLEX64);
  m.node("Identity", {"ids"}, {"y"}, "identity");
  EXPECT_THAT(convert_error(m),
              AllOf(HasSubstr("graph input 'ids': complex64 is not supported"),
                    HasSubstr("graph output 'y': complex64 is not supported")));
}

TEST(Support, RankAbove8) {
  ModelBuilder m;
  m.input("x", {1, 1, 1, 1, 1, 1, 1, 2, 3}).input("v", {2, 3}).output("y").output("z");
  m.node("Relu", {"x"}, {"y"}, "relu_rank9");
  m.initializer_i64("axes", {7}, {0, 1, 2, 3, 4, 5, 6});
  m.node("Unsqueeze", {"v", "axes"}, {"z"}, "unsqueeze_to_9");
  EXPECT_EQ(convert_error(m),
            "1 unsupported graph input, 2 unsupported nodes: graph input 'x': rank 9 is not "
            "supported (jetplan handles up to 8); 'relu_rank9' (Relu): output 'y' has rank 9 "
            "(jetplan handles up to 8); 'unsqueeze_to_9' (Unsqueeze): output 'z' has rank 9 "
            "(jetplan handles up to 8)");
}

TEST(Support, FoldOnlyOpOnRunTimeData) {
  ModelBuilder m;
  m.input("x", {4, 3}).input("n", {1}, onnx::TensorProto::INT64).output("y");
  m.node("ConstantOfShape", {"n"}, {"z"}, "zeros");
  m.node("Add", {"x", "z"}, {"y"}, "add");
  EXPECT_THAT(convert_error(m),
              HasSubstr("'zeros' (ConstantOfShape): jetplan folds ConstantOfShape on constants "
                        "only; input 'n' is computed at run time"));
}

TEST(Support, ReshapeWithRunTimeShape) {
  ModelBuilder m;
  m.input("x", {2, 6}).input("s", {2}, onnx::TensorProto::INT64).output("y");
  m.node("Reshape", {"x", "s"}, {"y"}, "reshape");
  EXPECT_THAT(convert_error(m),
              HasSubstr("'reshape' (Reshape): its shape input is computed at run time"));
}

TEST(Support, ClipBoundsMustBeConstant) {
  ModelBuilder m;
  m.input("x", {2, 6}).input("lo", {}).output("y");
  m.node("Clip", {"x", "lo"}, {"y"}, "clip");
  EXPECT_THAT(convert_error(m), HasSubstr("'clip' (Clip): its min input is computed at run time"));
}

TEST(Support, ClipOpset6Attributes) {
  ModelBuilder m(7);
  m.input("x", {2, 6}).output("y");
  auto& clip = m.node("Clip", {"x"}, {"y"}, "clip");
  attr(clip, "min", -0.5f);
  attr(clip, "max", 2.f);
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = read_plan(r.plan);
  const auto* act = plan->steps()->Get(0)->params_as_ActivationParams()->activation();
  EXPECT_EQ(act->kind(), fb::ActivationKind::Clip);
  EXPECT_FLOAT_EQ(act->alpha(), -0.5f);
  EXPECT_FLOAT_EQ(act->beta(), 2.f);
}

TEST(Support, CeilModeAcceptedWhereItChangesNothing) {
  ModelBuilder m;
  m.input("x", {1, 2, 8, 8}).output("y");
  auto& pool = m.node("MaxPool", {"x"}, {"y"}, "pool");
  attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(pool, "strides", std::vector<int64_t>{2, 2});
  attr(pool, "ceil_mode", int64_t{1});
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = read_plan(r.plan);
  EXPECT_EQ(tensor_shape(plan, plan->outputs()->Get(0)->tensor()), (Shape{1, 2, 4, 4}));
}

TEST(Support, AutoPadResolvedToExplicitPads) {
  struct Case {
    const char* auto_pad;
    std::vector<int64_t> begin, end;
  };
  // x 11x13, kernel 4x3, stride 2: out 6x7, total pad 3 and 2.
  for (const Case& c : {Case{"SAME_UPPER", {1, 1}, {2, 1}}, Case{"SAME_LOWER", {2, 1}, {1, 1}},
                        Case{"VALID", {0, 0}, {0, 0}}}) {
    ModelBuilder m;
    m.input("x", {1, 2, 11, 13}).output("y");
    m.random("w", {3, 2, 4, 3});
    auto& conv = m.node("Conv", {"x", "w"}, {"y"}, "conv");
    attr(conv, "strides", std::vector<int64_t>{2, 2});
    attr(conv, "auto_pad", std::string(c.auto_pad));
    const ConvertResult r = convert_ok(m);
    const fb::Plan* plan = read_plan(r.plan);
    ASSERT_NE(plan, nullptr);
    const auto* p = plan->steps()->Get(0)->params_as_ConvParams();
    EXPECT_EQ(Shape(p->pad_begin()->begin(), p->pad_begin()->end()), c.begin) << c.auto_pad;
    EXPECT_EQ(Shape(p->pad_end()->begin(), p->pad_end()->end()), c.end) << c.auto_pad;
  }
}

TEST(Support, ConvSpatialRanks) {
  for (const Shape& x : {Shape{2, 4, 9}, Shape{1, 4, 5, 6}, Shape{1, 4, 3, 5, 6}}) {
    ModelBuilder m;
    m.input("x", x).output("y");
    Shape w = {6, 2};
    w.insert(w.end(), x.size() - 2, 3);
    m.random("w", w);
    m.random("b", {6});
    auto& conv = m.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
    attr(conv, "group", int64_t{2});
    attr(conv, "pads", std::vector<int64_t>(2 * (x.size() - 2), 1));
    convert_ok(m);
  }
  ModelBuilder m;
  m.input("x", {1, 2, 2, 2, 2, 2}).output("y");
  m.random("w", {1, 2, 1, 1, 1, 1});
  m.node("Conv", {"x", "w"}, {"y"}, "conv4d");
  EXPECT_THAT(convert_error(m), HasSubstr("'conv4d' (Conv): input rank 6"));
}

TEST(Support, DropoutInTrainingMode) {
  ModelBuilder m;
  m.input("x", {2, 6}).input("train", {}, onnx::TensorProto::BOOL).output("y");
  m.node("Dropout", {"x", "", "train"}, {"y"}, "drop");
  EXPECT_THAT(convert_error(m),
              HasSubstr("'drop' (Dropout): its training_mode input is computed at run time"));
}

TEST(Support, BatchNormTrainingOutputs) {
  ModelBuilder m(9);
  m.input("x", {2, 3, 4, 4}).output("y").output("mean_out");
  for (const char* p : {"s", "b", "m", "v"}) m.random(p, {3}, 0.5f, 1.5f);
  m.node("BatchNormalization", {"x", "s", "b", "m", "v"},
         {"y", "mean_out", "var_out", "saved_mean", "saved_var"}, "bn");
  EXPECT_THAT(convert_error(m), HasSubstr("'bn' (BatchNormalization): its training output"));
}

}  // namespace
}  // namespace jetplan::converter::testing
