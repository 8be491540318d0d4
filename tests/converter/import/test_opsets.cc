// Import of every opset from 1 to 17 (1-6 through libonnx's version converter and the adapters
// jetplan adds; the later ones: test_newer_opsets.cc), and the opset imports and IR versions
// refused.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>
#include <onnx/shape_inference/implementation.h>

#include <cmath>
#include <string>
#include <vector>

#include "converter/src/import/onnx_import.h"
#include "converter/src/import/onnx_schemas.h"
#include "tests/converter/util/old_model_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::AllOf;
using ::testing::Not;

// ---- opsets ----

TEST(ImportOpset, EveryOpsetFrom1To17Converts) {
  for (int opset = 1; opset <= 17; ++opset) {
    ModelBuilder m = opset < 7 ? old_model(opset) : ModelBuilder(opset);
    m.input("x", {2, 3}).input("z", {2, 3}).output("y");
    m.node("Add", {"x", "z"}, {"s"}, "add");
    m.node("Relu", {"s"}, {"y"}, "relu");
    const ConvertResult r = convert_ok(m);
    if (r.plan.empty()) {
      ADD_FAILURE() << "opset " << opset;
      continue;
    }
    const std::vector<float> x = ramp(6), z = ramp(6, 0.05f, -0.3f);
    std::vector<float> want(6);
    for (int i = 0; i < 6; ++i) want[i] = std::max(0.f, x[i] + z[i]);
    SCOPED_TRACE("opset " + std::to_string(opset));
    expect_near(run_plan(r, {x, z}), want);
  }
}

TEST(ImportOpset, Opset6BroadcastWithAxisKeepsItsMeaning) {
  // Before opset 7, B [3] with axis=1 lines up with dim 1 of A [2,3,4,5]; numpy broadcasting
  // would line it up with the last dim. The upgrade inserts the Unsqueeze that keeps it.
  ModelBuilder m = old_model(6);
  m.input("x", {2, 3, 4, 5}).output("y");
  weight(m, "b", {3}, {10.f, 20.f, 30.f});
  auto& add = m.node("Add", {"x", "b"}, {"y"}, "add");
  attr(add, "broadcast", int64_t{1});
  attr(add, "axis", int64_t{1});
  const ConvertResult r = convert_ok(m);
  const std::vector<float> x = ramp(120);
  std::vector<float> want(120);
  for (int i = 0; i < 120; ++i) want[i] = x[i] + 10.f * static_cast<float>(1 + (i / 20) % 3);
  expect_near(run_plan(r, {x}), want);
}

TEST(ImportOpset, Opset6GemmWithBroadcastBias) {
  ModelBuilder m = old_model(6);
  m.input("a", {2, 3}).output("y");
  weight(m, "w", {3, 4}, ramp(12, 0.2f, -1.f));
  weight(m, "c", {4}, {1.f, 2.f, 3.f, 4.f});
  auto& gemm = m.node("Gemm", {"a", "w", "c"}, {"y"}, "gemm");
  attr(gemm, "broadcast", int64_t{1});
  const ConvertResult r = convert_ok(m);
  const std::vector<float> a = ramp(6), w = ramp(12, 0.2f, -1.f);
  std::vector<float> want(8);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      float s = static_cast<float>(j + 1);
      for (int k = 0; k < 3; ++k) s += a[i * 3 + k] * w[k * 4 + j];
      want[i * 4 + j] = s;
    }
  expect_near(run_plan(r, {a}), want);
}

TEST(ImportOpset, Opset6SoftmaxOnAMiddleAxisKeepsItsMeaning) {
  // Opset < 13: softmax over the flattened dims from `axis` on: each of the 2 rows of 12.
  ModelBuilder m = old_model(6);
  m.input("x", {2, 3, 4}).output("y");
  attr(m.node("Softmax", {"x"}, {"y"}, "softmax"), "axis", int64_t{1});
  const ConvertResult r = convert_ok(m);
  const std::vector<float> x = ramp(24, 0.3f, -2.f);
  std::vector<float> want(24);
  for (int row = 0; row < 2; ++row) {
    double sum = 0;
    for (int i = 0; i < 12; ++i) sum += std::exp(x[row * 12 + i]);
    for (int i = 0; i < 12; ++i)
      want[row * 12 + i] = static_cast<float>(std::exp(x[row * 12 + i]) / sum);
  }
  expect_near(run_plan(r, {x}), want);
}

TEST(ImportOpset, Opset5BatchNormWithConsumedInputs) {
  ModelBuilder m = old_model(5);
  m.input("x", {1, 2, 2, 2}).output("y");
  weight(m, "s", {2}, {1.5f, 0.5f});
  weight(m, "b", {2}, {0.1f, -0.2f});
  weight(m, "mean", {2}, {0.3f, -0.4f});
  weight(m, "var", {2}, {0.8f, 1.2f});
  auto& bn = m.node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"}, "bn");
  attr(bn, "consumed_inputs", std::vector<int64_t>{0, 0, 0, 1, 1});
  attr(bn, "is_test", int64_t{1});
  attr(bn, "epsilon", 1e-5f);
  const ConvertResult r = convert_ok(m);
  const std::vector<float> x = ramp(8);
  const float s[] = {1.5f, 0.5f}, b[] = {0.1f, -0.2f}, mean[] = {0.3f, -0.4f}, var[] = {0.8f, 1.2f};
  std::vector<float> want(8);
  for (int i = 0; i < 8; ++i) {
    const int c = i / 4;
    want[i] = s[c] * (x[i] - mean[c]) / std::sqrt(var[c] + 1e-5f) + b[c];
  }
  expect_near(run_plan(r, {x}), want);
}

TEST(ImportOpset, TrainingBatchNormIsRefusedNamingTheNode) {
  ModelBuilder m = old_model(6);
  m.input("x", {1, 2, 2, 2}).output("y");
  for (const char* n : {"s", "b", "mean", "var"}) weight(m, n, {2}, {1.f, 1.f});
  attr(m.node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"}, "bn_train"), "is_test",
       int64_t{0});
  EXPECT_THAT(convert_error(m),
              AllOf(StartsWith("cannot upgrade the opset-6 model to opset 13: "),
                    HasSubstr("'bn_train' (BatchNormalization), from opset 6 to 7")));
}

TEST(ImportOpset, BlockedUpgradeNamesEveryNode) {
  // Tile changed its inputs at opset 6 and libonnx has no adapter for it.
  ModelBuilder m = old_model(5);
  m.input("x", {2, 3}).output("y1").output("y2");
  m.input("tiles", {}, onnx::TensorProto::INT64).input("axis", {}, onnx::TensorProto::INT64);
  m.initializer_i64("tiles", {}, {2});
  m.initializer_i64("axis", {}, {0});
  m.node("Tile", {"x", "tiles", "axis"}, {"y1"}, "tile_a");
  m.node("Tile", {"x", "tiles", "axis"}, {"y2"}, "tile_b");
  EXPECT_EQ(convert_error(m),
            "cannot upgrade the opset-5 model to opset 7 or later (libonnx 1.12's version "
            "converter lacks the op change; re-export the model with a newer opset): "
            "'tile_a' (Tile): no adapter from opset 5 to 6; 'tile_b' (Tile): no adapter from "
            "opset 5 to 6");
}

TEST(ImportOpset, OpsUnknownAtTheOldOpsetAreListed) {
  ModelBuilder m = old_model(6);
  m.input("c", {2}, onnx::TensorProto::BOOL).input("x", {2}).output("y").output("z");
  m.node("Where", {"c", "x", "x"}, {"y"}, "where_is_opset_9");
  m.node("NoSuchOp", {"x"}, {"z"}, "no_such");
  EXPECT_EQ(convert_error(m),
            "cannot upgrade the opset-6 model to opset 13: 2 nodes of an op ONNX does not define "
            "at opset 6: 'where_is_opset_9' (Where); 'no_such' (NoSuchOp)");
}

TEST(ImportOpset, AdaptersGetTheShapesTheyRead) {
  // libonnx's Gemm 6->7 adapter indexes A's and B's dims: an A of another rank is refused by
  // name instead of read out of bounds.
  ModelBuilder m = old_model(6);
  m.input("a", {3}).output("y");
  weight(m, "w", {3, 4}, ramp(12));
  weight(m, "c", {4}, ramp(4));
  m.node("Gemm", {"a", "w", "c"}, {"y"}, "gemm1d");
  EXPECT_THAT(convert_error(m), HasSubstr("'gemm1d' (Gemm) input 'a': rank 1 (Gemm takes rank 2)"));

  // A broadcast axis that puts B's dims outside A's.
  ModelBuilder add = old_model(6);
  add.input("x", {2, 3}).output("y");
  weight(add, "b", {3}, {1.f, 2.f, 3.f});
  auto& node = add.node("Add", {"x", "b"}, {"y"}, "add_axis");
  attr(node, "broadcast", int64_t{1});
  attr(node, "axis", int64_t{0});
  EXPECT_THAT(convert_error(add), HasSubstr("'add_axis' (Add), from opset 6 to 7: B's dims"));
}

TEST(ImportOpset, OtherDomainsInOldModelsAreReportedQuietly) {
  ModelBuilder m = old_model(6);
  m.input("x", {1, 4}).output("y").output("z");
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node("Frobnicate", {"r"}, {"y"}, "frob", "com.example");
  m.node("ConstantFill", {"r"}, {"z"}, "fill");  // experimental in opset 1, gone since
  ::testing::internal::CaptureStderr();
  const std::string e = convert_error(m);
  const std::string stderr_text = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(e,
            "cannot upgrade the opset-6 model to opset 13: 1 node of an op ONNX does not define "
            "at opset 6: 'fill' (ConstantFill); 1 node of another domain, which libonnx 1.12's "
            "version converter cannot carry (and jetplan has no ops of): 'frob' (Frobnicate) of "
            "domain 'com.example'");
  EXPECT_EQ(stderr_text, "") << "libonnx's converter warnings must not reach stderr";
}

TEST(ImportOpset, OpsetImportsThatAreNotOpsets) {
  ModelBuilder zero(13);
  zero.model().mutable_opset_import(0)->set_version(0);
  zero.input("x", {1, 4}).output("y");
  zero.node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_THAT(convert_error(zero), HasSubstr("imports opset 0 of domain 'ai.onnx'"));

  ModelBuilder twice(13);
  auto* o = twice.model().add_opset_import();
  o->set_domain("ai.onnx");
  o->set_version(11);
  twice.input("x", {1, 4}).output("y");
  twice.node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_THAT(convert_error(twice), HasSubstr("imports domain 'ai.onnx' twice (opset 13 and 11)"));

  ModelBuilder none(13);
  none.model().mutable_opset_import(0)->set_domain("com.example");
  none.input("x", {1, 4}).output("y");
  none.node("Relu", {"x"}, {"y"}, "relu", "com.example");
  EXPECT_THAT(convert_error(none), HasSubstr("imports no opset of the default ONNX domain"));
}

TEST(ImportOpset, IrVersions) {
  for (int64_t ir : {3, 8, 9, 10, 13, 14}) {
    ModelBuilder m(13);
    m.model().set_ir_version(ir);
    m.input("x", {1, 4}).output("y");
    m.node("Relu", {"x"}, {"y"}, "relu");
    SCOPED_TRACE("IR version " + std::to_string(ir));
    convert_ok(m);
  }
  ModelBuilder future(13);
  future.model().set_ir_version(15);
  future.input("x", {1, 4}).output("y");
  future.node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_THAT(convert_error(future), StartsWith("IR version 15 is newer than jetplan-convert"));
}

// ---- the adapters jetplan adds to libonnx's version converter ----

// The model as upgrade_opset leaves it (after the inference the import runs first).
onnx::ModelProto upgraded(ModelBuilder& m, int from, int* reached = nullptr) {
  onnx::ModelProto model = m.model();
  onnx::shape_inference::InferShapes(model);
  const int to = upgrade_opset(&model, from);
  if (reached) *reached = to;
  return model;
}

const onnx::NodeProto* find_node(const onnx::ModelProto& m, const std::string& op) {
  for (const auto& n : m.graph().node())
    if (n.op_type() == op) return &n;
  return nullptr;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

TEST(UpgradeAdapters, PadPaddingsOfOpset1) {
  ModelBuilder m = old_model(1);
  m.input("x", {1, 1, 2, 2}).output("y");
  attr(m.node("Pad", {"x"}, {"y"}, "pad"), "paddings",
       std::vector<int64_t>{0, 0, 1, 1, 0, 0, 1, 1});
  int reached = 0;
  const onnx::ModelProto u = upgraded(m, 1, &reached);
  EXPECT_EQ(reached, kUpgradeOpset);
  const onnx::NodeProto* pad = find_node(u, "Pad");
  ASSERT_NE(pad, nullptr);
  EXPECT_EQ(find_attr(*pad, "paddings"), nullptr);
  EXPECT_GE(pad->input_size(), 2);  // pads are an input since opset 11

  // ... and the converter reads the upgraded Pad (or names the Pad check's reason).
  try {
    const ConvertResult r = convert_onnx(m.bytes(), "model.onnx", {});
    std::vector<float> want(16, 0.f);
    want[5] = 1.f, want[6] = 2.f, want[9] = 3.f, want[10] = 4.f;
    expect_near(run_plan(r, {{1.f, 2.f, 3.f, 4.f}}), want);
  } catch (const ConvertError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("'pad' (Pad)"), Not(HasSubstr("upgrade"))));
  }
}

TEST(UpgradeAdapters, CastTypeNameOfOpset5) {
  ModelBuilder m = old_model(5);
  m.input("x", {2}).output("y", onnx::TensorProto::DOUBLE);
  attr(m.node("Cast", {"x"}, {"y"}, "cast"), "to", std::string("DOUBLE"));
  const onnx::ModelProto u = upgraded(m, 5);
  const onnx::NodeProto* cast = find_node(u, "Cast");
  ASSERT_NE(cast, nullptr);
  const onnx::AttributeProto* to = find_attr(*cast, "to");
  ASSERT_NE(to, nullptr);
  EXPECT_EQ(to->type(), onnx::AttributeProto::INT);
  EXPECT_EQ(to->i(), onnx::TensorProto::DOUBLE);

  ModelBuilder bad = old_model(5);
  bad.input("x", {2}).output("y");
  attr(bad.node("Cast", {"x"}, {"y"}, "cast_bad"), "to", std::string("QUATERNION"));
  EXPECT_THAT(convert_error(bad), HasSubstr("'cast_bad' (Cast), from opset 5 to 6"));
}

TEST(UpgradeAdapters, LpPoolSplitAndRecurrentOps) {
  ModelBuilder m = old_model(1);
  m.input("x", {1, 2, 4, 4}).output("p").output("s1").output("s2");
  auto& pool = m.node("LpPool", {"x"}, {"p"}, "lp");
  attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(pool, "p", 2.f);
  m.node("Split", {"x"}, {"s1", "s2"}, "split");
  const onnx::ModelProto u = upgraded(m, 1);
  const onnx::AttributeProto* p = find_attr(*find_node(u, "LpPool"), "p");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->type(), onnx::AttributeProto::INT);
  EXPECT_EQ(p->i(), 2);

  ModelBuilder split_input = old_model(1);
  split_input.input("x", {4}).input("sizes", {2}, onnx::TensorProto::INT64).output("a").output("b");
  split_input.initializer_i64("sizes", {2}, {1, 3});
  split_input.node("Split", {"x", "sizes"}, {"a", "b"}, "split2");
  EXPECT_THAT(convert_error(split_input), HasSubstr("'split2' (Split), from opset 1 to 2"));

  ModelBuilder lstm = old_model(6);
  lstm.input("x", {3, 1, 2}).output("y");
  weight(lstm, "w", {1, 16, 2}, ramp(32));
  weight(lstm, "r", {1, 16, 4}, ramp(64));
  auto& node = lstm.node("LSTM", {"x", "w", "r"}, {"y"}, "lstm");
  attr(node, "hidden_size", int64_t{4});
  attr(node, "output_sequence", int64_t{1});
  const onnx::ModelProto lu = upgraded(lstm, 6);
  EXPECT_EQ(find_attr(*find_node(lu, "LSTM"), "output_sequence"), nullptr);
}

TEST(UpgradeAdapters, HardmaxKeepsItsFlatteningAxis) {
  // libonnx 1.12 calls Hardmax 12 and 13 compatible; on a middle axis they are not.
  ModelBuilder m = old_model(6);
  m.input("x", {2, 3, 4}).output("y");
  attr(m.node("Hardmax", {"x"}, {"y"}, "hardmax"), "axis", int64_t{1});
  const onnx::ModelProto u = upgraded(m, 6);
  EXPECT_NE(find_node(u, "Flatten"), nullptr);
  EXPECT_NE(find_node(u, "Reshape"), nullptr);
}

TEST(UpgradeAdapters, ComparisonsBroadcastLikeAdd) {
  ModelBuilder m = old_model(6);
  m.input("a", {2, 3, 4}).input("b", {3}).output("y", onnx::TensorProto::BOOL);
  auto& eq = m.node("Greater", {"a", "b"}, {"y"}, "greater");
  attr(eq, "broadcast", int64_t{1});
  attr(eq, "axis", int64_t{1});
  const onnx::ModelProto u = upgraded(m, 6);
  const onnx::NodeProto* g = find_node(u, "Greater");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(find_attr(*g, "broadcast"), nullptr);
  EXPECT_NE(find_node(u, "Unsqueeze"), nullptr);
}

}  // namespace
}  // namespace jetplan::converter::testing
