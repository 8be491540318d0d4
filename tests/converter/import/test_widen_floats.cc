// Models stored in float16 and bfloat16 (import/widen_floats.h) run as the float32 graph they
// round: the same model written in float32, with the same (exactly representable) weights and
// inputs, gives the narrow model's outputs rounded once, bit for bit; the plan's bindings keep
// the narrow types; ops whose libonnx 1.12 schemas leave the narrow types out (Celu, Einsum)
// convert; GPU plans of such models load.
#include <gmock/gmock.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/bfloat16.h"
#include "kernels/cpu/half.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

constexpr int kF32 = onnx::TensorProto::FLOAT;
constexpr int kF16 = onnx::TensorProto::FLOAT16;
constexpr int kBF16 = onnx::TensorProto::BFLOAT16;

uint16_t to_narrow(int type, float f) {
  return type == kF16 ? kernels::half_from_float(f) : kernels::bfloat16_from_float(f);
}
float from_narrow(int type, uint16_t b) {
  return type == kF16 ? kernels::half_to_float(b) : kernels::bfloat16_to_float(b);
}

// Random values that `type` holds exactly (so the float32 model sees the same numbers).
std::vector<float> representable(int type, size_t n, uint32_t seed) {
  std::vector<float> v = random_floats(n, seed, -2.f, 2.f);
  for (float& x : v) x = from_narrow(type, to_narrow(type, x));
  return v;
}

// An initializer of `values` in `type` (raw_data; float32 or narrow).
void initializer(ModelBuilder& m, const std::string& name, int type,
                 const std::vector<int64_t>& dims, const std::vector<float>& values) {
  std::vector<uint8_t> bytes;
  for (float f : values) {
    if (type == kF32) {
      const auto* p = reinterpret_cast<const uint8_t*>(&f);
      bytes.insert(bytes.end(), p, p + 4);
    } else {
      const uint16_t h = to_narrow(type, f);
      bytes.push_back(uint8_t(h & 0xff));
      bytes.push_back(uint8_t(h >> 8));
    }
  }
  raw_initializer(m, name, type, dims, bytes);
}

std::vector<uint8_t> input_bytes(int type, const std::vector<float>& v) {
  if (type == kF32) return bytes_of(v);
  std::vector<uint16_t> h;
  for (float f : v) h.push_back(to_narrow(type, f));
  return bytes_of(h);
}

const std::vector<int64_t> kX = {1, 4, 5, 5}, kW = {3, 4, 3, 3};

// Conv (bias) -> Celu -> Mul by a Constant node's 0.5 -> Cast to the model's type -> y (of
// `type`); and z = Cast(Celu's output) to float32. `type` float32 gives the reference model (of
// the same weights: float16 values).
ModelBuilder conv_model(int type) {
  ModelBuilder m(17);
  m.input("x", kX, type).output("y", type).output("z", kF32);
  initializer(m, "w", type, kW, representable(kF16, 3 * 4 * 9, 7));
  initializer(m, "b", type, {3}, representable(kF16, 3, 8));
  auto& conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  attr(m.node("Celu", {"c"}, {"e"}, "celu"), "alpha", 1.5f);
  auto& half = m.node("Constant", {}, {"half"}, "half");
  auto* a = add_attr(half, "value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(type);
  if (type == kF32)
    a->mutable_t()->add_float_data(0.5f);
  else
    a->mutable_t()->add_int32_data(to_narrow(type, 0.5f));
  m.node("Mul", {"e", "half"}, {"p"}, "mul");
  attr(m.node("Cast", {"p"}, {"y"}, "cast_y"), "to", int64_t(type));
  attr(m.node("Cast", {"e"}, {"z"}, "cast_z"), "to", int64_t(kF32));
  return m;
}

fb::DType binding_dtype(const fb::Plan* plan, bool output, uint32_t k) {
  const auto* list = output ? plan->outputs() : plan->inputs();
  return plan->tensors()->Get(list->Get(k)->tensor())->dtype();
}

TEST(WidenFloats, Float16ModelIsItsFloat32ModelRoundedOnce) {
  const ConvertResult narrow = convert_ok(conv_model(kF16));
  const ConvertResult wide = convert_ok(conv_model(kF32));
  ASSERT_FALSE(narrow.plan.empty());
  ASSERT_FALSE(wide.plan.empty());
  const fb::Plan* plan = plan_of(narrow);
  EXPECT_EQ(binding_dtype(plan, false, 0), fb::DType::Float16);
  EXPECT_EQ(binding_dtype(plan, true, 0), fb::DType::Float16);
  EXPECT_EQ(binding_dtype(plan, true, 1), fb::DType::Float32);
  EXPECT_EQ(plan->inputs()->Get(0)->name()->str(), "x");
  EXPECT_EQ(plan->outputs()->Get(0)->name()->str(), "y");
  EXPECT_EQ(count_steps(plan, fb::OpFamily::Conv), 1u);
  const std::vector<float> x = representable(kF16, 4 * 25, 9);
  const auto got = run(narrow.plan, {input_bytes(kF16, x)});
  const auto want = run(wide.plan, {input_bytes(kF32, x)});
  ASSERT_EQ(got.size(), 2u);
  ASSERT_EQ(want.size(), 2u);
  const std::vector<uint16_t> y = values_of<uint16_t>(got[0]);
  const std::vector<float> y32 = values_of<float>(want[0]);
  ASSERT_EQ(y.size(), 3u * 25);
  ASSERT_EQ(y32.size(), y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    ASSERT_FALSE(std::isnan(y32[i]));
    EXPECT_EQ(y[i], kernels::half_from_float(y32[i])) << "y " << i;
  }
  EXPECT_EQ(got[1], want[1]);  // z: float32 both, the same computation
}

// Einsum of bfloat16 (no bfloat16 in libonnx 1.12's Einsum schema) against its float32 model.
TEST(WidenFloats, BFloat16EinsumIsItsFloat32ModelRoundedOnce) {
  auto model = [](int type) {
    ModelBuilder m(17);
    m.input("a", {2, 3}, type).output("y", type);
    initializer(m, "b", type, {3, 4}, representable(kBF16, 12, 11));
    attr(m.node("Einsum", {"a", "b"}, {"y"}, "einsum"), "equation", std::string("ij,jk->ik"));
    return m;
  };
  const ConvertResult narrow = convert_ok(model(kBF16));
  const ConvertResult wide = convert_ok(model(kF32));
  ASSERT_FALSE(narrow.plan.empty());
  ASSERT_FALSE(wide.plan.empty());
  EXPECT_EQ(binding_dtype(plan_of(narrow), false, 0), fb::DType::BFloat16);
  EXPECT_EQ(binding_dtype(plan_of(narrow), true, 0), fb::DType::BFloat16);
  const std::vector<float> a = representable(kBF16, 6, 12);
  const std::vector<uint16_t> y = values_of<uint16_t>(run(narrow.plan, {input_bytes(kBF16, a)})[0]);
  const std::vector<float> y32 = values_of<float>(run(wide.plan, {input_bytes(kF32, a)})[0]);
  ASSERT_EQ(y.size(), 8u);
  ASSERT_EQ(y32.size(), 8u);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], kernels::bfloat16_from_float(y32[i])) << i;
}

// An input that is also an output passes through; a constant output stays the constant, of its
// type, while a reader of it computes on its float32 value.
TEST(WidenFloats, PassThroughAndConstantOutputsKeepTheirBits) {
  ModelBuilder m(17);
  m.input("a", {4}, kF16).output("a", kF16).output("c", kF16).output("s", kF16);
  const std::vector<float> c = {1.5f, -2.25f, 65504.f, 0.000061035156f};  // half's max, min normal
  initializer(m, "c", kF16, {4}, c);
  m.node("Add", {"a", "c"}, {"s"}, "add");
  const ConvertResult r = convert_ok(m);
  ASSERT_FALSE(r.plan.empty());
  const fb::Plan* plan = plan_of(r);
  for (uint32_t k = 0; k < 3; ++k) EXPECT_EQ(binding_dtype(plan, true, k), fb::DType::Float16) << k;
  const std::vector<float> a = {0.5f, 0.25f, -1.f, 2.f};
  const std::vector<uint8_t> in = input_bytes(kF16, a);
  const auto out = run(r.plan, {in});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], in);
  EXPECT_EQ(out[1], input_bytes(kF16, c));
  const std::vector<uint16_t> s = values_of<uint16_t>(out[2]);
  ASSERT_EQ(s.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(s[i], kernels::half_from_float(a[i] + c[i])) << i;
}

// A GPU plan of a float16 model: float16 bindings, the conv in the plan, and the runtime's load
// and prepare checks pass without a device.
TEST(WidenFloats, Float16ModelConvertsForTheGpu) {
  ConvertOptions options;
  options.target = "h100";
  const ConvertResult r = convert_onnx(conv_model(kF16).bytes(), "model.onnx", options);
  ASSERT_FALSE(r.plan.empty());
  const fb::Plan* plan = plan_of(r);
  EXPECT_EQ(binding_dtype(plan, false, 0), fb::DType::Float16);
  EXPECT_EQ(binding_dtype(plan, true, 0), fb::DType::Float16);
  EXPECT_EQ(count_steps(plan, fb::OpFamily::Conv), 1u);
  EXPECT_TRUE(loads_without_device(r.plan));
}

// A Cast to float16 inside a float32 model still rounds (70000 overflows to infinity), and a
// Cast of its result to an integer reads the float16 value as it is (no Cast back between).
TEST(WidenFloats, CastToFloat16InsideAFloat32ModelStillRounds) {
  ModelBuilder m(17);
  m.input("x", {3}).output("y").output("i", onnx::TensorProto::INT32);
  attr(m.node("Cast", {"x"}, {"h"}, "down"), "to", int64_t(kF16));
  m.node("Relu", {"h"}, {"y"}, "relu");
  attr(m.node("Cast", {"h"}, {"i"}, "to_int"), "to", int64_t(onnx::TensorProto::INT32));
  const ConvertResult r = convert_ok(m);
  ASSERT_FALSE(r.plan.empty());
  const fb::Plan* plan = plan_of(r);
  // down, its Cast back to float32 (read by relu), relu, to_int.
  EXPECT_THAT(step_ops(plan), ElementsAre(fb::OpFamily::Cast, fb::OpFamily::Cast,
                                          fb::OpFamily::Activation, fb::OpFamily::Cast));
  const std::vector<float> x = {1.0001f, 70000.f, 3.3e-8f};
  const auto out = run(r.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 2u);
  std::vector<float> want;
  for (float f : x) want.push_back(kernels::half_to_float(kernels::half_from_float(f)));
  EXPECT_EQ(want[1], INFINITY);
  EXPECT_EQ(values_of<float>(out[0]), want);
  EXPECT_THAT(values_of<int32_t>(out[1]), ElementsAre(1, INT32_MAX, 0));
}

// A CastLike to a float16 initializer rounds as that Cast does.
TEST(WidenFloats, CastLikeOfAFloat16InitializerRounds) {
  ModelBuilder m(17);
  m.input("x", {2}).output("y");
  initializer(m, "like", kF16, {1}, {1.f});
  m.node("CastLike", {"x", "like"}, {"h"}, "like");
  m.node("Relu", {"h"}, {"y"}, "relu");
  const ConvertResult r = convert_ok(m);
  ASSERT_FALSE(r.plan.empty());
  const auto out = run(r.plan, {bytes_of(std::vector<float>{1.0001f, 3.14159f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<float>(out[0]),
              ElementsAre(1.f, kernels::half_to_float(kernels::half_from_float(3.14159f))));
}

// An If branch of a float16 model reads the model's float16 input by name: it reads its float32
// twin, as the main graph's nodes do, and the If folds to that branch.
TEST(WidenFloats, SubgraphsReadTheFloat32TwinsOfNarrowValues) {
  ModelBuilder m(13);
  m.input("x", {3}, kF16).output("y", kF16);
  raw_initializer(m, "go", onnx::TensorProto::BOOL, {}, {1});
  auto& n = m.node("If", {"go"}, {"y"}, "branch");
  for (const char* which : {"then_branch", "else_branch"}) {
    auto* a = add_attr(n, which);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name(which);
    auto* node = g->add_node();
    node->set_op_type(std::string(which) == "then_branch" ? "Relu" : "Neg");
    node->add_input("x");
    node->add_output(std::string(which) + "_out");
    auto* out = g->add_output();
    out->set_name(std::string(which) + "_out");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(kF16);
  }
  const ConvertResult r = convert_ok(m);
  ASSERT_FALSE(r.plan.empty());
  const std::vector<float> x = {-1.5f, 0.25f, 2.f};
  const auto out = run(r.plan, {input_bytes(kF16, x)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], input_bytes(kF16, {0.f, 0.25f, 2.f}));
}

// Narrow data that does not hold its dims' elements is refused naming the tensor in its type.
TEST(WidenFloats, MalformedNarrowDataIsNamed) {
  ModelBuilder odd(17);
  odd.input("x", {3}, kF16).output("y", kF16);
  raw_initializer(odd, "w", kF16, {3}, {0x00, 0x3c, 0x00, 0x3c, 0x00});
  odd.node("Add", {"x", "w"}, {"y"}, "add");
  EXPECT_THAT(convert_error(odd), HasSubstr("tensor 'w': raw_data holds 5 bytes, but [3] float16 needs 6"));
  ModelBuilder few(17);
  few.input("x", {3}, kBF16).output("y", kBF16);
  auto* t = few.empty_initializer("w", kBF16, {3});
  t->add_int32_data(0x3f80);
  t->add_int32_data(0x3f80);
  few.node("Add", {"x", "w"}, {"y"}, "add");
  EXPECT_THAT(convert_error(few), HasSubstr("tensor 'w' holds 2 values, but [3] bfloat16 needs 3"));
}

}  // namespace
}  // namespace jetplan::converter::testing
