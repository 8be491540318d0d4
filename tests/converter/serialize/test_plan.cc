// The written plan: metadata, determinism, weight alignment, bindings, memory placement and
// the shape rewrites (MatMul vectors and batch broadcast, opset 11 softmax).
#include <gmock/gmock.h>

#include <set>

#include "converter/src/memory/memory_plan.h"
#include "converter/src/serialize/sha256.h"
#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

using fb::OpFamily;

// A small network that touches most op families.
ModelBuilder small_net() {
  ModelBuilder m;
  m.input("image", {1, 3, 12, 12}).output("probs").output("features");
  m.random("w1", {8, 3, 3, 3}).random("b1", {8}).random("w2", {8, 8, 3, 3});
  for (const char* p : {"s", "sh", "mu"}) m.random(p, {8}, -0.5f, 0.5f);
  m.random("var", {8}, 0.5f, 1.5f).random("fc_w", {10, 8}).random("fc_b", {10});
  auto& c1 = m.node("Conv", {"image", "w1", "b1"}, {"c1"}, "conv1");
  attr(c1, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto& pool = m.node("MaxPool", {"r1"}, {"p1"}, "pool");
  attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(pool, "strides", std::vector<int64_t>{2, 2});
  auto& c2 = m.node("Conv", {"p1", "w2"}, {"c2"}, "conv2");
  attr(c2, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("BatchNormalization", {"c2", "s", "sh", "mu", "var"}, {"bn2"}, "bn2");
  m.node("Add", {"bn2", "p1"}, {"res"}, "add");
  m.node("Relu", {"res"}, {"features"}, "relu2");
  m.node("GlobalAveragePool", {"features"}, {"gap"}, "gap");
  m.node("Flatten", {"gap"}, {"flat"}, "flatten");
  auto& fc = m.node("Gemm", {"flat", "fc_w", "fc_b"}, {"logits"}, "fc");
  attr(fc, "transB", int64_t{1});
  m.node("Softmax", {"logits"}, {"probs"}, "softmax");
  return m;
}

TEST(Plan, SmallNetworkSatisfiesTheContract) {
  for (bool fuse : {true, false}) {
    ConvertOptions options;
    options.fuse = fuse;
    const ConvertResult r = convert_ok(small_net(), options);
    const fb::Plan* plan = plan_of(r);
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(r.summary.steps, plan->steps()->size());
    EXPECT_EQ(r.summary.tensors, plan->tensors()->size());
    EXPECT_EQ(r.summary.arena_bytes, plan->arena_bytes());
    EXPECT_LE(r.summary.arena_lower_bound, r.summary.arena_bytes);
    // Fused: conv1+relu1, pool, conv2+bn2+add+relu2, gap, fc, softmax (Flatten is a view);
    // unfused: each node its own step, BatchNorm too. Either way one tensor is a view.
    EXPECT_EQ(plan->steps()->size(), fuse ? 6u : 10u);
    int views = 0;
    for (const fb::Tensor* t : *plan->tensors()) views += t->view_of() != -1;
    EXPECT_EQ(views, 1);
  }
}

TEST(Plan, ByteIdenticalForIdenticalInputs) {
  const std::string bytes = small_net().bytes();
  const ConvertResult a = convert_onnx(bytes, "model.onnx", {});
  const ConvertResult b = convert_onnx(bytes, "model.onnx", {});
  EXPECT_EQ(a.plan, b.plan);
}

TEST(Plan, WeightsAlignedTo256) {
  const ConvertResult r = convert_ok(small_net());
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan->weights(), nullptr);
  EXPECT_EQ((plan->weights()->data() - r.plan.data()) % 256, 0);
  size_t weights = 0;
  for (const auto* t : *plan->tensors()) {
    if (t->storage() != fb::Storage::Weight) continue;
    ++weights;
    EXPECT_EQ(t->offset() % 256, 0u) << t->name()->str();
    EXPECT_LE(t->offset() + t->size_bytes(), plan->weights()->size());
  }
  EXPECT_GT(weights, 5u);
}

TEST(Plan, Metadata) {
  const std::string bytes = small_net().bytes();
  ConvertOptions options;
  options.input_shapes["image"] = {1, 3, 12, 12};
  const ConvertResult r = convert_onnx(bytes, "net.onnx", options);
  const fb::Plan* plan = plan_of(r);
  EXPECT_EQ(plan->schema_version(), 1u);
  EXPECT_EQ(plan->target()->name()->str(), "cpu");
  EXPECT_EQ(plan->target()->backend(), fb::Backend::CPU);
  EXPECT_EQ(plan->target()->sm_arch(), 0u);
  EXPECT_EQ(plan->arena_alignment(), 256u);
  const fb::Metadata* meta = plan->metadata();
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ(meta->converter_version()->str(), "0.1.0");
  EXPECT_EQ(meta->source_sha256()->str(), sha256_hex(bytes.data(), bytes.size()));
  EXPECT_EQ(meta->source_name()->str(), "net.onnx");
  std::vector<std::pair<std::string, std::string>> kv;
  for (const auto* o : *meta->options()) kv.emplace_back(o->key()->str(), o->value()->str());
  EXPECT_THAT(kv, ElementsAre(std::pair<std::string, std::string>{"fuse", "1"},
                              std::pair<std::string, std::string>{"shape.image", "1x3x12x12"},
                              std::pair<std::string, std::string>{"target", "cpu"}));
  EXPECT_NE(meta->options()->LookupByKey("target"), nullptr);
}

TEST(Plan, UnknownTarget) {
  ConvertOptions options;
  options.target = "mars";
  // The known names, then every folder searched (the source tree's among them, for a test
  // binary in the build tree).
  const std::string error = convert_error(small_net(), options);
  EXPECT_THAT(error, StartsWith("unknown target 'mars' (known: cpu, a6000, h100, h200, orin-agx, "
                                "orin-nano, orin-nx, rtx3090, rtx4090, thor); no mars.json in "));
  EXPECT_THAT(error, HasSubstr(JETPLAN_SOURCE_DIR "/targets"));
}

TEST(Plan, ArenaIsTheMemoryPlannersAndValid) {
  const ConvertResult r = convert_ok(small_net());
  const fb::Plan* plan = plan_of(r);
  // Rebuild the requests from the plan: each arena tensor from its first to last step, reads
  // of its views included; views have no bytes of their own.
  std::vector<BufferRequest> requests;
  std::vector<uint64_t> offsets;
  auto bytes_of = [&](uint32_t i) {
    const int32_t v = plan->tensors()->Get(i)->view_of();
    return v >= 0 ? static_cast<uint32_t>(v) : i;
  };
  for (uint32_t i = 0; i < plan->tensors()->size(); ++i) {
    const fb::Tensor* t = plan->tensors()->Get(i);
    if (t->storage() != fb::Storage::Arena || t->view_of() != -1) continue;
    BufferRequest req{t->size_bytes(), -1, -1};
    for (uint32_t s = 0; s < plan->steps()->size(); ++s) {
      const fb::Step* step = plan->steps()->Get(s);
      bool touches = step->outputs()->Get(0) == i;
      for (uint32_t in : *step->inputs()) touches = touches || bytes_of(in) == i;
      if (!touches) continue;
      if (req.first_step < 0) req.first_step = static_cast<int32_t>(s);
      req.last_step = static_cast<int32_t>(s);
    }
    requests.push_back(req);
    offsets.push_back(t->offset());
  }
  ASSERT_FALSE(requests.empty());
  const ArenaPlan replanned = plan_arena(requests, 256);
  EXPECT_EQ(replanned.offsets, offsets);
  EXPECT_EQ(replanned.arena_bytes, plan->arena_bytes());
  ArenaPlan as_written{offsets, plan->arena_bytes(), 0};
  EXPECT_TRUE(arena_plan_is_valid(requests, as_written, 256));
}

TEST(Plan, OutputsThatAreInputsConstantsOrRepeated) {
  ModelBuilder m;
  m.input("x", {2, 3}).output("x").output("k").output("y").output("y");
  m.initializer("k", {3}, {1, 2, 3});
  m.node("Relu", {"x"}, {"y"}, "relu");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_EQ(plan->outputs()->size(), 4u);
  std::set<uint32_t> tensors;
  for (uint32_t i = 0; i < 4; ++i) {
    const auto* b = plan->outputs()->Get(i);
    tensors.insert(b->tensor());
    EXPECT_EQ(plan->tensors()->Get(b->tensor())->binding(), static_cast<int32_t>(i));
  }
  EXPECT_EQ(tensors.size(), 4u);
  EXPECT_EQ(plan->outputs()->Get(0)->name()->str(), "x");
  EXPECT_EQ(plan->outputs()->Get(3)->name()->str(), "y");
  // relu, then copies for x, k and the second y.
  EXPECT_THAT(step_ops(plan),
              ElementsAre(OpFamily::Activation, OpFamily::Copy, OpFamily::Copy, OpFamily::Copy));
}

TEST(Plan, Opset11SoftmaxOverFlattenedDims) {
  ModelBuilder m(11);
  m.input("x", {2, 3, 4, 5}).output("y1").output("y2").output("y3");
  m.node("Softmax", {"x"}, {"y1"}, "default_axis");  // axis 1: softmax over 60 values
  auto& last = m.node("Softmax", {"x"}, {"y2"}, "last_axis");
  attr(last, "axis", int64_t{3});
  m.node("Flatten", {"x"}, {"x2"}, "flatten");  // [2,60]
  attr(m.node("Unsqueeze", {"x2"}, {"x3"}, "unsqueeze"), "axes", std::vector<int64_t>{2, 3});
  m.node("LogSoftmax", {"x3"}, {"y3"}, "one_wide_dim");  // [2,60,1,1], axis 1
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  const fb::Step* view = find_step(plan, "default_axis");
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(tensor_shape(plan, view->inputs()->Get(0)), (Shape{2, 60}));
  EXPECT_EQ(view->params_as_SoftmaxParams()->axis(), 1);
  EXPECT_NE(find_step(plan, "default_axis:2d"), nullptr);
  EXPECT_NE(find_step(plan, "default_axis:nd"), nullptr);
  EXPECT_EQ(find_step(plan, "last_axis")->params_as_SoftmaxParams()->axis(), 3);
  const fb::Step* one = find_step(plan, "one_wide_dim");
  EXPECT_EQ(tensor_shape(plan, one->inputs()->Get(0)), (Shape{2, 60, 1, 1}));
  EXPECT_EQ(one->params_as_SoftmaxParams()->axis(), 1);
  EXPECT_TRUE(one->params_as_SoftmaxParams()->log());
}

TEST(Plan, MatMulVectorsAndBatchBroadcast) {
  ModelBuilder m;
  m.input("v", {5}).input("a", {2, 1, 4, 5}).input("b", {3, 5, 6}).output("mv").output("ab");
  m.random("w", {5, 7});
  m.node("MatMul", {"v", "w"}, {"mv"}, "vector_times_matrix");  // [7]
  m.node("MatMul", {"a", "b"}, {"ab"}, "batched");              // [2,3,4,6]
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  const fb::Step* mv = find_step(plan, "vector_times_matrix");
  ASSERT_NE(mv, nullptr);
  EXPECT_EQ(tensor_shape(plan, mv->inputs()->Get(0)), (Shape{1, 5}));
  EXPECT_EQ(tensor_shape(plan, mv->outputs()->Get(0)), (Shape{1, 7}));
  const fb::Step* ab = find_step(plan, "batched");
  ASSERT_NE(ab, nullptr);
  // Both operands broadcast partially ([2,1] and [3] against [2,3]): each is materialized.
  EXPECT_EQ(tensor_shape(plan, ab->inputs()->Get(0)), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(tensor_shape(plan, ab->inputs()->Get(1)), (Shape{2, 3, 5, 6}));
  const fb::Step* broadcast_a = find_step(plan, "batched:A:broadcast");
  ASSERT_NE(broadcast_a, nullptr);
  EXPECT_EQ(broadcast_a->params_as_BinaryParams()->op(), fb::BinaryOp::Mul);
  EXPECT_EQ(tensor_shape(plan, broadcast_a->inputs()->Get(1)), (Shape{1, 3, 1, 1}));
  EXPECT_THAT(weight_values(plan, broadcast_a->inputs()->Get(1)), ElementsAre(1.f, 1.f, 1.f));
  const fb::Step* view_b = find_step(plan, "batched:B");
  ASSERT_NE(view_b, nullptr);
  EXPECT_EQ(view_b->op(), OpFamily::Copy);  // [3,5,6] -> [1,3,5,6]
  const fb::Step* broadcast_b = find_step(plan, "batched:B:broadcast");
  ASSERT_NE(broadcast_b, nullptr);
  EXPECT_EQ(tensor_shape(plan, broadcast_b->inputs()->Get(1)), (Shape{2, 1, 1, 1}));
}

}  // namespace
}  // namespace jetplan::converter::testing
