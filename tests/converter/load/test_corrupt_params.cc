// Converted plans corrupted (ConvTranspose, Resize, Reduce, the normalizations, ...): load must
// refuse every step whose output shape, params or workspace do not fit, naming the step.
#include <cmath>
#include <functional>
#include <type_traits>

#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

// ------------------------------------------------------------------- prepare: corrupt plans

// Copies n bytes from src to `bytes` at `at`, a pointer into `bytes` (bounds-checked). Not
// inlined: GCC 12 traces `at` back to the table it came from and warns of an overflow there.
[[gnu::noinline]] void write_at(std::vector<uint8_t>& bytes, const void* at, const void* src, size_t n) {
  const size_t offset = reinterpret_cast<uintptr_t>(at) - reinterpret_cast<uintptr_t>(bytes.data());
  for (size_t k = 0; k < n; ++k) bytes.at(offset + k) = static_cast<const uint8_t*>(src)[k];
}

// A copy of `plan` with the dims of `tensor`'s shape permuted by swapping dims a and b (same
// bytes, so only the step's own checks can notice).
std::vector<uint8_t> swap_dims(std::vector<uint8_t> bytes, uint32_t tensor, int a, int b) {
  const auto* shape = read_plan(bytes)->tensors()->Get(tensor)->shape();
  Shape dims(shape->begin(), shape->end());
  EXPECT_NE(dims[a], dims[b]) << "the swap would change nothing";
  std::swap(dims[a], dims[b]);
  write_at(bytes, shape->data(), dims.data(), dims.size() * sizeof(int64_t));
  return bytes;
}

// Overwrites a scalar field of a table of `bytes` (it must be stored: not at its default).
template <typename T, typename Table>
void poke(std::vector<uint8_t>& bytes, const Table* table, flatbuffers::voffset_t field, T v) {
  const uint8_t* at = reinterpret_cast<const flatbuffers::Table*>(table)->GetAddressOf(field);
  ASSERT_NE(at, nullptr) << "field not stored";
  ASSERT_TRUE(at >= bytes.data() && at + sizeof(T) <= bytes.data() + bytes.size())
      << "the table is not in this buffer";
  write_at(bytes, at, &v, sizeof(T));
}

template <typename T, typename Elem>
void poke_element(std::vector<uint8_t>& bytes, const flatbuffers::Vector<Elem>* v, uint32_t i,
                  T value) {
  ASSERT_NE(v, nullptr);
  ASSERT_LT(i, v->size());
  const Elem e = static_cast<Elem>(value);
  const uint8_t* at = reinterpret_cast<const uint8_t*>(v->data() + i);
  ASSERT_TRUE(at >= bytes.data() && at + sizeof(Elem) <= bytes.data() + bytes.size())
      << "the vector is not in this buffer";
  write_at(bytes, at, &e, sizeof(Elem));
}

// An edit of a plan's bytes at one of its steps (found in the buffer being edited, whose offsets
// it takes).
using Edit = std::function<void(std::vector<uint8_t>&, const fb::Step*)>;

// The edit that overwrites scalar `field` of the step (Table fb::Step) or of its params table.
template <typename Table, typename T>
Edit poke_field(flatbuffers::voffset_t field, T v) {
  return [=](std::vector<uint8_t>& b, const fb::Step* s) {
    if constexpr (std::is_same_v<Table, fb::Step>)
      poke(b, s, field, v);
    else
      poke(b, s->params_as<Table>(), field, v);
  };
}

void expect_refused(const std::vector<uint8_t>& bytes, const std::string& step,
                    jp_status status = JP_ERROR_INVALID_PLAN) {
  const auto [s, message] = load_error(bytes);
  EXPECT_EQ(s, status) << message;
  EXPECT_THAT(message, HasSubstr("step '" + step + "'"));
}

// One model with a step of every nn family whose output has distinct dims.
ModelBuilder every_family() {
  ModelBuilder m(17);
  m.input("x", {1, 2, 3, 4}).input("boxes", {1, 5, 4}).input("scores", {1, 2, 5});
  for (const char* o : {"ct", "rs", "rd", "tv", "in", "ln", "lrn"}) m.output(o);
  m.output("am", onnx::TensorProto::INT64).output("ti", onnx::TensorProto::INT64);
  m.output("sel", onnx::TensorProto::INT64);
  m.random("w", {2, 3, 2, 2}).random("s", {2}).random("b", {2}).random("ls", {4});
  m.initializer("scales", {4}, {1, 1, 2, 1.5f});
  m.initializer_i64("k", {1}, {2}).initializer_i64("max", {1}, {2});
  m.node("ConvTranspose", {"x", "w"}, {"ct"}, "ct");
  m.node("Resize", {"x", "", "scales"}, {"rs"}, "rs");
  attr(m.node("ReduceMax", {"x"}, {"rd"}, "rd"), "axes", std::vector<int64_t>{2});
  attr(m.node("ArgMax", {"x"}, {"am"}, "am"), "axis", int64_t{3});
  m.node("TopK", {"x", "k"}, {"tv", "ti"}, "tk");
  m.node("InstanceNormalization", {"x", "s", "b"}, {"in"}, "in");
  m.node("LayerNormalization", {"x", "ls"}, {"ln"}, "ln");
  attr(m.node("LRN", {"x"}, {"lrn"}, "lrn"), "size", int64_t{3});
  m.node("NonMaxSuppression", {"boxes", "scores", "max"}, {"sel"}, "nms");
  return m;
}

TEST(Prepare, WrongOutputShapeOfEveryFamilyIsRefused) {
  const std::vector<uint8_t> good = converted_plan(every_family());
  const fb::Plan* plan = plan_of(good);
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(load_error(good).first, JP_OK);
  for (const auto* s : *plan->steps()) {
    if (s->op() == OpFamily::Copy) continue;
    SCOPED_TRACE(s->name()->str());
    const uint32_t out = s->outputs()->Get(0);
    const Shape shape = tensor_shape(plan, out);
    // Two dims that differ: swapping them keeps the byte size.
    int a = -1, b = -1;
    for (int i = 0; i < static_cast<int>(shape.size()) && b < 0; ++i)
      for (int j = i + 1; j < static_cast<int>(shape.size()) && b < 0; ++j)
        if (shape[i] != shape[j]) a = i, b = j;
    ASSERT_GE(b, 0) << shape_str(shape);
    expect_refused(swap_dims(good, out, a, b), s->name()->str());
  }
}

TEST(Prepare, CorruptParamsAreRefused) {
  const std::vector<uint8_t> good = converted_plan(every_family());
  ASSERT_NE(plan_of(good), nullptr);
  const std::tuple<const char*, Edit, jp_status> edits[] = {
      {"ct",
       [](auto& b, auto* s) {
         poke_element(b, s->params_as_ConvTransposeParams()->stride(), 0, 2);
       },
       JP_ERROR_INVALID_PLAN},
      {"ct",
       [](auto& b, auto* s) {
         poke_element(b, s->params_as_ConvTransposeParams()->pad_begin(), 1, 1);
       },
       JP_ERROR_INVALID_PLAN},
      {"rs",
       [](auto& b, auto* s) { poke_element(b, s->params_as_ResizeParams()->scale(), 2, -2.0); },
       JP_ERROR_INVALID_PLAN},
      {"rs",
       [](auto& b, auto* s) {
         poke_element(b, s->params_as_ResizeParams()->resized_length(), 3, NAN);
       },
       JP_ERROR_INVALID_PLAN},
      {"rd", [](auto& b, auto* s) { poke_element(b, s->params_as_ReduceParams()->axes(), 0, 9); },
       JP_ERROR_INVALID_PLAN},
      {"rd", poke_field<fb::ReduceParams>(fb::ReduceParams::VT_OP, uint8_t{10}),
       JP_ERROR_UNSUPPORTED},
      {"am", poke_field<fb::ArgReduceParams>(fb::ArgReduceParams::VT_AXIS, int32_t{2}),
       JP_ERROR_INVALID_PLAN},
      {"tk", poke_field<fb::Step>(fb::Step::VT_WORKSPACE_BYTES, uint64_t{8}),
       JP_ERROR_INVALID_PLAN},
      {"tk", poke_field<fb::TopKParams>(fb::TopKParams::VT_AXIS, int32_t{7}),
       JP_ERROR_INVALID_PLAN},
      {"ln", poke_field<fb::LayerNormParams>(fb::LayerNormParams::VT_AXIS, int32_t{2}),
       JP_ERROR_INVALID_PLAN},
      {"lrn", poke_field<fb::LrnParams>(fb::LrnParams::VT_SIZE, int64_t{0}), JP_ERROR_INVALID_PLAN},
      {"nms", poke_field<fb::NmsParams>(fb::NmsParams::VT_MAX_OUTPUT_PER_CLASS, int64_t{3}),
       JP_ERROR_INVALID_PLAN},
      {"nms", poke_field<fb::Step>(fb::Step::VT_WORKSPACE_BYTES, uint64_t{16}),
       JP_ERROR_INVALID_PLAN},
  };
  for (const auto& [name, edit, status] : edits) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> bad = good;
    edit(bad, find_step(read_plan(bad), name));
    expect_refused(bad, name, status);
  }
}

// A workspace that shares bytes with a tensor of its own step would let the kernel overwrite
// the indices it still reads.
TEST(Prepare, WorkspaceOverlappingTheStepsTensorsIsRefused) {
  ModelBuilder m(11);
  m.input("x", {2, 64}).output("y").output("i", onnx::TensorProto::INT64);
  m.initializer_i64("k", {1}, {4});
  m.node("TopK", {"x", "k"}, {"v", "i"}, "tk");
  m.node("Relu", {"v"}, {"y"}, "relu");
  const std::vector<uint8_t> good = converted_plan(m);
  const fb::Plan* plan = plan_of(good);
  ASSERT_NE(plan, nullptr);
  const fb::Step* s = find_step(plan, "tk");
  ASSERT_NE(s, nullptr);
  const fb::Tensor* values = plan->tensors()->Get(s->outputs()->Get(0));
  ASSERT_EQ(values->storage(), fb::Storage::Arena);
  ASSERT_NE(values->offset(), s->workspace_offset());
  // Point the workspace at the values (or the values at the workspace: one of them is stored).
  std::vector<uint8_t> bad = good;
  const fb::Plan* edited = read_plan(bad);
  const fb::Step* bad_step = find_step(edited, "tk");
  if (values->offset() != 0)
    poke(bad, edited->tensors()->Get(s->outputs()->Get(0)), fb::Tensor::VT_OFFSET,
         s->workspace_offset());
  else
    poke(bad, bad_step, fb::Step::VT_WORKSPACE_OFFSET, uint64_t{0});
  expect_refused(bad, "tk");
}

// An Attention step fused from heads stored [B, S, H, D] (every operand read through its axes):
// axes that are no permutation or move the head dim, a NaN scale, a mask its flag does not
// announce and an output of other extents are refused, naming the step.
TEST(Prepare, CorruptAttentionStepsAreRefused) {
  ModelBuilder m(17);
  m.input("q", {2, 6, 2, 8}).input("k", {2, 6, 2, 8}).input("v", {2, 6, 2, 8});
  m.input("mask", {2, 1, 1, 6}).output("y");
  m.initializer("c", {}, {0.3f});
  for (const char* n : {"q", "k", "v"})
    attr(m.node("Transpose", {n}, {std::string(n) + "t"}, std::string(n) + "_transpose"), "perm",
         *n == 'k' ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
  m.node("MatMul", {"qt", "kt"}, {"s"}, "qk");
  m.node("Mul", {"s", "c"}, {"ss"}, "scale");
  m.node("Add", {"ss", "mask"}, {"sm"}, "mask_add");
  attr(m.node("Softmax", {"sm"}, {"p"}, "softmax"), "axis", int64_t{-1});
  m.node("MatMul", {"p", "vt"}, {"o"}, "pv");
  attr(m.node("Transpose", {"o"}, {"y"}, "o_transpose"), "perm", std::vector<int64_t>{0, 2, 1, 3});
  const std::vector<uint8_t> good = converted_plan(m);
  ASSERT_EQ(load_error(good).first, JP_OK);
  const fb::Step* step = nullptr;
  for (const fb::Step* s : *read_plan(good)->steps())
    if (s->op() == OpFamily::Attention) step = s;
  ASSERT_NE(step, nullptr);
  const std::string name = step->name()->str();
  // Q's axes {0, 2, 1, 3} with entry i set to v (and entry j to w).
  const auto axes = [](uint32_t i, uint8_t v, uint32_t j, uint8_t w) -> Edit {
    return [=](std::vector<uint8_t>& b, const fb::Step* s) {
      poke_element(b, s->params_as_AttentionParams()->q_axes(), i, v);
      poke_element(b, s->params_as_AttentionParams()->q_axes(), j, w);
    };
  };
  const std::pair<const char*, Edit> edits[] = {
      {"axes repeat a dim", axes(3, 1, 3, 1)},
      {"head dim not last", axes(2, 3, 3, 1)},
      {"NaN scale", poke_field<fb::AttentionParams>(fb::AttentionParams::VT_SCALE, NAN)},
      {"mask not announced", poke_field<fb::AttentionParams>(fb::AttentionParams::VT_HAS_MASK,
                                                             uint8_t{0})},
  };
  for (const auto& [what, edit] : edits) {
    SCOPED_TRACE(what);
    std::vector<uint8_t> bad = good;
    edit(bad, find_step(read_plan(bad), name));
    expect_refused(bad, name);
  }
  const uint32_t y = step->outputs()->Get(0);
  expect_refused(swap_dims(good, y, 1, 2), name);  // [2, 2, 6, 8]: 6 heads of 2 tokens
}

// Q, K and V split out of one [B, S, 3E] tensor read as views of it (fuse_attention): a view
// reaching one row past the tensor, a negative stride, no rows, or strides so large that the
// bound check would overflow are refused, naming the step.
TEST(Prepare, AttentionViewsPastTheirTensorAreRefused) {
  ModelBuilder m(17);
  m.input("qkv", {2, 6, 48}).output("y");
  m.initializer_i64("split", {3}, {16, 16, 16}).initializer_i64("heads", {4}, {2, 6, 2, 8});
  attr(m.node("Split", {"qkv", "split"}, {"q0", "k0", "v0"}, "split"), "axis", int64_t{2});
  for (const char* n : {"q", "k", "v"}) {
    const std::string s = n;
    m.node("Reshape", {s + "0", "heads"}, {s + "h"}, s + "_heads");
    attr(m.node("Transpose", {s + "h"}, {s + "t"}, s + "_transpose"), "perm",
         *n == 'k' ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
  }
  m.node("MatMul", {"qt", "kt"}, {"s"}, "qk");
  attr(m.node("Softmax", {"s"}, {"p"}, "softmax"), "axis", int64_t{-1});
  m.node("MatMul", {"p", "vt"}, {"y"}, "pv");
  const std::vector<uint8_t> good = converted_plan(m);
  ASSERT_EQ(load_error(good).first, JP_OK);
  ASSERT_THAT(step_ops(read_plan(good)), ElementsAre(OpFamily::Attention));
  const fb::Step* step = read_plan(good)->steps()->Get(0);
  const std::string name = step->name()->str();
  ASSERT_NE(step->params_as_AttentionParams()->k_view(), nullptr);
  // K's view: offset 16, strides (288, 8, 48), 6 rows: its last element is 559 of 576.
  const auto k_view = [](flatbuffers::voffset_t field, int64_t v) -> Edit {
    return [=](std::vector<uint8_t>& b, const fb::Step* s) {
      poke(b, s->params_as_AttentionParams()->k_view(), field, v);
    };
  };
  const std::pair<const char*, Edit> edits[] = {
      {"one row past", k_view(fb::AttentionView::VT_SEQ_LEN, 7)},
      {"offset past", k_view(fb::AttentionView::VT_OFFSET, 577)},
      {"negative stride", k_view(fb::AttentionView::VT_SEQ, -48)},
      {"no rows", k_view(fb::AttentionView::VT_SEQ_LEN, 0)},
      {"overflowing stride", k_view(fb::AttentionView::VT_BATCH, int64_t{1} << 62)},
  };
  for (const auto& [what, edit] : edits) {
    SCOPED_TRACE(what);
    std::vector<uint8_t> bad = good;
    edit(bad, find_step(read_plan(bad), name));
    expect_refused(bad, name);
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
