// Control flow that folds (fold/control_flow.h) and --freeze (import/freeze.h), in process: the
// cases tests/e2e/control_flow_models.py does not check against ONNX Runtime (names inside
// nested subgraphs, outer references read before their producer, the limits, every error).
#include "tests/converter/util/float_run_util.h"

namespace jetplan::converter::testing {
namespace {

// A subgraph for an If branch or a Loop/Scan body: `inputs` and `outputs` are float32 of no
// declared shape unless given as {name, elem_type}.
struct Body {
  onnx::GraphProto g;

  explicit Body(const std::string& name) { g.set_name(name); }
  Body& input(const std::string& name, int elem = onnx::TensorProto::FLOAT) {
    auto* vi = g.add_input();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
    return *this;
  }
  Body& output(const std::string& name, int elem = onnx::TensorProto::FLOAT) {
    auto* vi = g.add_output();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& in,
                        const std::vector<std::string>& out) {
    auto* n = g.add_node();
    n->set_op_type(op);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return *n;
  }
};

void graph_attr(onnx::NodeProto& n, const std::string& name, const Body& body) {
  auto* a = add_attr(n, name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = body.g;
}

void bool_initializer(ModelBuilder& m, const std::string& name, bool v) {
  raw_initializer(m, name, onnx::TensorProto::BOOL, {}, {static_cast<uint8_t>(v)});
}

// y = Loop(M = trips, cond = true, v0 = x) with `body` (trips < 0: no trip count).
ModelBuilder loop_model(int64_t trips, const Body& body) {
  ModelBuilder m;
  m.input("x", {3}).output("y");
  if (trips >= 0) m.initializer_i64("trips", {}, {trips});
  bool_initializer(m, "go", true);
  graph_attr(m.node("Loop", {trips >= 0 ? "trips" : "", "go", "x"}, {"y"}, "loop"), "body", body);
  return m;
}

TEST(ControlFlow, IfOnAConstantNodeBecomesItsBranch) {
  ModelBuilder m;
  m.input("x", {4}).output("y");
  m.initializer("c", {4}, {1, 2, 3, 4});
  auto& cond = m.node("Constant", {}, {"cond"}, "cond");
  auto* t = add_attr(cond, "value");
  t->set_type(onnx::AttributeProto::TENSOR);
  t->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
  t->mutable_t()->add_int32_data(0);
  Body then("then"), other("else");
  then.node("Add", {"x", "c"}, {"a"});
  then.output("a");
  other.node("Sub", {"x", "c"}, {"b"});
  other.output("b");
  auto& n = m.node("If", {"cond"}, {"y"}, "choose");
  graph_attr(n, "then_branch", then);
  graph_attr(n, "else_branch", other);
  Converted c;
  EXPECT_THAT(run_f32(m, {{10, 20, 30, 40}}, &c), ElementsAre(9, 18, 27, 36));
  ASSERT_NE(c.fb, nullptr);
  ASSERT_EQ(c.fb->steps()->size(), 1u);
  EXPECT_THAT(c.fb->steps()->Get(0)->name()->str(), HasSubstr("choose/else/"));
}

// y = If(cond) then -x else Relu(x), the If named `name`.
void add_neg_or_relu_if(ModelBuilder& m, const std::string& cond, const std::string& name) {
  Body then("then"), other("else");
  then.node("Neg", {"x"}, {"a"});
  then.output("a");
  other.node("Relu", {"x"}, {"b"});
  other.output("b");
  auto& n = m.node("If", {cond}, {"y"}, name);
  graph_attr(n, "then_branch", then);
  graph_attr(n, "else_branch", other);
}

// torchvision's `if boxes.numel() == 0`: Shape -> ReduceProd -> Equal on a static shape folds (the
// Reduce ops fold on constants, integers included), and so does the If.
TEST(ControlFlow, IfOnTheElementCountOfAStaticShapeFolds) {
  for (const char* reduce : {"ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin"}) {
    ModelBuilder m(13);
    m.input("x", {2, 3}).output("y");
    m.initializer_i64("zero", {}, {0});
    m.node("Shape", {"x"}, {"dims"}, "dims");
    attr(m.node(reduce, {"dims"}, {"count"}, "count"), "keepdims", int64_t{0});
    m.node("Equal", {"count", "zero"}, {"empty"}, "empty");
    add_neg_or_relu_if(m, "empty", "if_empty");
    Converted c;
    EXPECT_THAT(run_f32(m, {{-1, 2, -3, 4, -5, 6}}, &c), ElementsAre(0, 2, 0, 4, 0, 6)) << reduce;
    ASSERT_NE(c.fb, nullptr);
    EXPECT_EQ(c.fb->steps()->size(), 1u) << reduce;
  }
}

// A condition no graph input reaches but a node that does not fold (TopK of a constant): the
// error names that node, not the comparison after it.
TEST(ControlFlow, AConditionThatDoesNotFoldNamesTheNodeThatStopsIt) {
  ModelBuilder m(13);
  m.input("x", {3}).output("y");
  m.initializer("c", {3}, {3, 1, 2});
  m.initializer_i64("k", {1}, {2});
  m.initializer("z", {}, {0});
  m.node("TopK", {"c", "k"}, {"v", "i"}, "topk");
  attr(m.node("ReduceSum", {"v"}, {"s"}, "sum"), "keepdims", int64_t{0});
  m.node("Greater", {"s", "z"}, {"cond"}, "gt");
  add_neg_or_relu_if(m, "cond", "branch");
  EXPECT_THAT(convert_error(m), HasSubstr("its condition 'cond' is computed at run time by node "
                                          "'topk' (TopK), which jetplan does not fold"));
}

TEST(ControlFlow, OuterReferenceToAValueLaterInTheFileSortsFirst) {
  // The branch reads 'h', which a node after the If in the file computes: the If waits for it.
  ModelBuilder m;
  m.input("x", {3}).output("y");
  bool_initializer(m, "yes", true);
  Body then("then"), other("else");
  then.node("Neg", {"h"}, {"a"});
  then.output("a");
  other.node("Identity", {"h"}, {"b"});
  other.output("b");
  auto& n = m.node("If", {"yes"}, {"y"}, "choose");
  graph_attr(n, "then_branch", then);
  graph_attr(n, "else_branch", other);
  m.node("Relu", {"x"}, {"h"}, "relu");
  EXPECT_THAT(run_f32(m, {{-1, 2, -3}}), ElementsAre(0, -2, 0));
}

TEST(ControlFlow, IfInALoopBodyReadsTheBodysValuesOfEachIteration) {
  // Per iteration: w = 2 v; v = i == 0 ? w + 10 : w + v. The branches read w (the body's own,
  // renamed per iteration) and v (the body's input, bound to the previous iteration's value).
  Body body("body");
  body.input("i", onnx::TensorProto::INT64).input("cond", onnx::TensorProto::BOOL).input("v");
  body.output("cond_out", onnx::TensorProto::BOOL).output("v_out");
  body.node("Identity", {"cond"}, {"cond_out"});
  attr(body.node("Constant", {}, {"two"}), "value_float", 2.f);
  body.node("Mul", {"v", "two"}, {"w"});
  auto& zero = body.node("Constant", {}, {"zero"});
  attr_i64_tensor(zero, "value", {}, {0});
  body.node("Equal", {"i", "zero"}, {"first"});
  Body then("then"), other("else");
  attr(then.node("Constant", {}, {"ten"}), "value_float", 10.f);
  then.node("Add", {"w", "ten"}, {"a"});
  then.output("a");
  other.node("Add", {"w", "v"}, {"b"});
  other.output("b");
  auto& n = body.node("If", {"first"}, {"v_out"});
  n.set_name("inner");
  graph_attr(n, "then_branch", then);
  graph_attr(n, "else_branch", other);
  // x -> 2x + 10 -> 3 (2x + 10) -> 9 (2x + 10)
  EXPECT_THAT(run_f32(loop_model(3, body), {{0, 1, -5}}), ElementsAre(90, 108, 0));
}

TEST(ControlFlow, LoopWithoutTripCountEndsWhenItsConditionFolds) {
  // while (i < 3) v += 1, with the condition computed from the iteration number: 4 iterations.
  Body body("body");
  body.input("i", onnx::TensorProto::INT64).input("cond", onnx::TensorProto::BOOL).input("v");
  body.output("more", onnx::TensorProto::BOOL).output("v_out");
  auto& three = body.node("Constant", {}, {"three"});
  attr_i64_tensor(three, "value", {}, {3});
  body.node("Less", {"i", "three"}, {"more"});
  attr(body.node("Constant", {}, {"one"}), "value_float", 1.f);
  body.node("Add", {"v", "one"}, {"v_out"});
  EXPECT_THAT(run_f32(loop_model(-1, body), {{0, 1, 2}}), ElementsAre(4, 5, 6));
}

Body add_one_body(const std::string& cond_op) {
  Body body("body");
  body.input("i", onnx::TensorProto::INT64).input("cond", onnx::TensorProto::BOOL).input("v");
  body.output("cond_out", onnx::TensorProto::BOOL).output("v_out");
  if (cond_op == "ReduceMax") {  // a run-time early exit: stop once any element is positive
    auto& r = body.node("ReduceMax", {"v"}, {"top"});
    attr(r, "keepdims", int64_t{0});
    attr(body.node("Constant", {}, {"zero"}), "value_float", 0.f);
    body.node("Less", {"top", "zero"}, {"cond_out"});
  } else {
    body.node(cond_op, {"cond"}, {"cond_out"});
  }
  body.node("Neg", {"v"}, {"v_out"});
  return body;
}

TEST(ControlFlow, LoopLimitsAreRefusedNamingTheNode) {
  EXPECT_THAT(convert_error(loop_model(65, add_one_body("Identity"))),
              AllOf(HasSubstr("'loop' (Loop)"), HasSubstr("trip count is 65"),
                    HasSubstr("more than the 64")));
  EXPECT_THAT(convert_error(loop_model(4, add_one_body("ReduceMax"))),
              AllOf(HasSubstr("'loop' (Loop)"), HasSubstr("early exit")));
  EXPECT_THAT(convert_error(loop_model(-1, add_one_body("Identity"))),
              AllOf(HasSubstr("'loop' (Loop)"), HasSubstr("still true after 64 iterations")));
  // 64 iterations unroll: v negated 64 times is v.
  EXPECT_THAT(run_f32(loop_model(64, add_one_body("Identity")), {{1, -2, 3}}),
              ElementsAre(1, -2, 3));
}

TEST(ControlFlow, EveryIfThatDoesNotFoldIsNamedInOneError) {
  ModelBuilder m;
  m.input("x", {2}).input("a", {1}).input("b", {1}).output("y").output("z");
  m.initializer("zero", {1}, {0.f});
  m.node("Greater", {"a", "zero"}, {"ca"}, "ga");
  m.node("Add", {"a", "b"}, {"ab"}, "add");
  m.node("Less", {"ab", "zero"}, {"cb"}, "lb");
  Body then("then"), other("else");
  then.node("Relu", {"x"}, {"r"});
  then.output("r");
  other.node("Neg", {"x"}, {"s"});
  other.output("s");
  for (const auto& [cond, out] : {std::pair{"ca", "y"}, std::pair{"cb", "z"}}) {
    auto& n = m.node("If", {cond}, {out}, std::string("if_") + out);
    graph_attr(n, "then_branch", then);
    graph_attr(n, "else_branch", other);
  }
  const std::string error = convert_error(m);
  EXPECT_THAT(error, AllOf(HasSubstr("2 control-flow nodes"), HasSubstr("'if_y' (If)"),
                           HasSubstr("'if_z' (If)"), HasSubstr("from graph input 'a';"),
                           HasSubstr("from graph inputs 'a', 'b'"),
                           HasSubstr("--freeze a=VALUE --freeze b=VALUE")));
  ConvertOptions frozen;
  frozen.freeze = {{"a", "1"}, {"b", "[3]"}};
  Converted c;
  c.plan = convert_ok(m, frozen).plan;
  const auto out = run(c.plan, {bytes_of(std::vector<float>{-1, 2})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(0, 2));  // a > 0: Relu
  EXPECT_THAT(values_of<float>(out[1]), ElementsAre(1, -2));  // a + b >= 0: Neg
}

TEST(ControlFlow, AnIfThatDoesNotFoldButNothingReadsIsDropped) {
  ModelBuilder m;
  m.input("x", {2}).input("a", {1}).output("y");
  m.initializer("zero", {1}, {0.f});
  m.node("Greater", {"a", "zero"}, {"c"}, "gt");
  Body then("then"), other("else");
  then.node("Relu", {"x"}, {"r"});
  then.output("r");
  other.node("Neg", {"x"}, {"s"});
  other.output("s");
  auto& n = m.node("If", {"c"}, {"unread"}, "dead_if");
  graph_attr(n, "then_branch", then);
  graph_attr(n, "else_branch", other);
  m.node("Abs", {"x"}, {"y"}, "abs");
  const ConvertResult r = convert_ok(m);
  const auto out = run(r.plan, {bytes_of(std::vector<float>{-1, 2}), bytes_of(std::vector<float>{5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(1, 2));
}

TEST(Freeze, LiteralsOfEachElementTypeAndTheInputLeavesThePlan) {
  // y = x * Cast(h) + Cast(n) where flag, else -x.
  ModelBuilder m;
  m.input("x", {2}).input("h", {1}, onnx::TensorProto::FLOAT16);
  m.input("n", {}, onnx::TensorProto::UINT8).input("flag", {-1}, onnx::TensorProto::BOOL);
  m.output("y");
  auto& ch = m.node("Cast", {"h"}, {"hf"}, "ch");
  attr(ch, "to", int64_t{onnx::TensorProto::FLOAT});
  auto& cn = m.node("Cast", {"n"}, {"nf"}, "cn");
  attr(cn, "to", int64_t{onnx::TensorProto::FLOAT});
  m.node("Mul", {"x", "hf"}, {"xh"}, "mul");
  m.node("Add", {"xh", "nf"}, {"s"}, "add");
  m.node("Neg", {"x"}, {"nx"}, "neg");
  m.node("Where", {"flag", "s", "nx"}, {"y"}, "where");
  ConvertOptions o;
  o.freeze = {{"h", "0.5"}, {"n", "255"}, {"flag", "true"}};
  const ConvertResult r = convert_ok(m, o);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(plan->inputs()->size(), 1u);
  EXPECT_EQ(plan->inputs()->Get(0)->name()->str(), "x");
  const auto out = run(r.plan, {bytes_of(std::vector<float>{2, -4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(256, 253));
  o.freeze["flag"] = "0";
  const auto neg = run(convert_ok(m, o).plan, {bytes_of(std::vector<float>{2, -4})});
  EXPECT_THAT(values_of<float>(neg.at(0)), ElementsAre(-2, 4));
}

TEST(Freeze, BadValuesAreOptionErrorsNamingTheInput) {
  ModelBuilder m;
  m.input("x", {2}).input("n", {}, onnx::TensorProto::UINT8).input("f", {2});
  m.output("y");
  m.node("Add", {"x", "f"}, {"y"}, "add");
  const std::vector<std::pair<std::map<std::string, std::string>, std::vector<const char*>>>
      cases = {
          {{{"nope", "1"}}, {"'nope'", "not a graph input", "graph inputs: x, n, f"}},
          {{{"n", "256"}}, {"--freeze n", "'256'", "out of the range of uint8"}},
          {{{"n", "-1"}}, {"--freeze n", "not a non-negative integer"}},
          {{{"n", "[1,"}}, {"--freeze n", "does not close"}},
          {{{"f", "[1,x]"}}, {"--freeze f", "element 1", "'x' is not a number"}},
          {{{"f", "[1,2,3]"}}, {"--freeze f", "[2]", "[3]"}},
          {{{"f", "1e39"}}, {"--freeze f", "out of the range of float32"}},
          {{{"f", "/nonexistent/f.npy"}}, {"--freeze f", "cannot open '/nonexistent/f.npy'"}},
      };
  for (const auto& [freeze, parts] : cases) {
    ConvertOptions o;
    o.freeze = freeze;
    try {
      convert_onnx(m.bytes(), "model.onnx", o);
      ADD_FAILURE() << "converted with --freeze " << freeze.begin()->second;
    } catch (const OptionError& e) {
      for (const char* part : parts) EXPECT_THAT(e.what(), HasSubstr(part));
    } catch (const ConvertError& e) {
      ADD_FAILURE() << "not an OptionError: " << e.what();
    }
  }
  ConvertOptions both;
  both.freeze = {{"f", "[1,2]"}};
  both.input_shapes = {{"f", {2}}};
  EXPECT_THAT(convert_error(m, both), HasSubstr("both --shape and --freeze"));
}

}  // namespace
}  // namespace jetplan::converter::testing
