// The byte-moving ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Concat) of every plan
// dtype, end to end through the converter and the runtime.
#include <gmock/gmock.h>

#include <cstdint>
#include <vector>

#include "converter/src/import/onnx_import.h"
#include "converter/src/ops/check.h"
#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

// ---------------------------------------------------------------- data movement of any dtype

TEST(DataMovement, ShapeOnlyOpsAndConcatTakeEveryPlanDtype) {
  ModelBuilder m(13);
  m.input("i", {2, 3}, onnx::TensorProto::INT64)
      .input("b", {2, 1}, onnx::TensorProto::BOOL)
      .input("c", {2, 2}, onnx::TensorProto::BOOL)
      .input("u", {4}, onnx::TensorProto::UINT8)
      .output("r", onnx::TensorProto::INT64)
      .output("cat", onnx::TensorProto::BOOL)
      .output("id", onnx::TensorProto::UINT8);
  m.initializer_i64("shape", {2}, {3, 2});
  m.initializer_i64("axes", {1}, {0});
  m.node("Reshape", {"i", "shape"}, {"i32"}, "reshape_i64");
  m.node("Unsqueeze", {"i32", "axes"}, {"i132"}, "unsqueeze_i64");
  m.node("Flatten", {"i132"}, {"r"}, "flatten_i64");  // axis 1: [1, 6]
  attr(m.node("Concat", {"b", "c"}, {"cat"}, "concat_bool"), "axis", int64_t{1});
  m.node("Identity", {"u"}, {"id"}, "identity_u8");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  const auto out = run(c.plan, {bytes_of(std::vector<int64_t>{1, -2, 3, -4, 5, 1LL << 40}),
                                bytes_of(std::vector<uint8_t>{1, 0}),
                                bytes_of(std::vector<uint8_t>{0, 1, 1, 0}),
                                bytes_of(std::vector<uint8_t>{7, 0, 255, 9})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(values_of<int64_t>(out[0]), ElementsAre(1, -2, 3, -4, 5, 1LL << 40));
  EXPECT_THAT(out[1], ElementsAre(1, 0, 1, 0, 1, 0));  // rows [1 | 0 1] and [0 | 1 0]
  EXPECT_THAT(out[2], ElementsAre(7, 0, 255, 9));
  bool found = false;
  for (const auto* t : *c.fb->tensors()) {
    if (t->name()->str() != "r") continue;
    found = true;
    EXPECT_EQ(t->dtype(), fb::DType::Int64);
  }
  EXPECT_TRUE(found);
}

TEST(DataMovement, ConcatOfMixedDtypesNamesBoth) {
  // ONNX's checker refuses such a model; the check function is the converter's own line.
  ModelBuilder m(13);
  m.input("a", {2}).input("b", {2}).output("y");
  attr(m.node("Concat", {"a", "b"}, {"y"}, "cat"), "axis", int64_t{0});
  Graph g = import_onnx(m.bytes(), {});
  g.values[g.nodes[0].inputs[1]].dtype = DataType::kInt32;
  EXPECT_EQ(find_check("Concat")(g, g.nodes[0]), "inputs differ in dtype (float32 and int32)");
}
}  // namespace
}  // namespace jetplan::converter::testing
