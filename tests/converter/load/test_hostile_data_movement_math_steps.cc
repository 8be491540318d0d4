// The data movement and math steps (Transpose, Slice, Gather, Pad, Broadcast, Unary, Elementwise,
// Where, Cast) in hand-built hostile plans: load must refuse each, naming the step.
#include "tests/converter/util/float_run_util.h"

namespace jetplan::converter::testing {
namespace {

// ---------------------------------------------------------------------------- hostile plans

using jetplan::testing::build_plan;
using jetplan::testing::PlanSpec;
using jetplan::testing::StepSpec;
using jetplan::testing::TensorSpec;

using ParamsFn = std::function<std::pair<fb::StepParams, flatbuffers::Offset<void>>(
    flatbuffers::FlatBufferBuilder&)>;

// A ParamsFn writing the table that `create` (a generated fb::Create...Params) makes of `args`.
template <typename Table, typename... Params, typename... Args>
ParamsFn params_fn(flatbuffers::Offset<Table> (*create)(flatbuffers::FlatBufferBuilder&, Params...),
                   Args... args) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    // A copy: make_pair binds a reference, and flatc's enum_value has no definition to bind.
    const fb::StepParams tag = fb::StepParamsTraits<Table>::enum_value;
    return std::make_pair(tag, create(b, args...).Union());
  };
}

// One step reading graph inputs `ins` and writing graph output `out` (all bindings).
std::vector<uint8_t> one_step_plan(fb::OpFamily op, const std::vector<TensorSpec>& ins,
                                   TensorSpec out, ParamsFn params) {
  PlanSpec p;
  for (size_t i = 0; i < ins.size(); ++i) {
    TensorSpec t = ins[i];
    t.storage = fb::Storage::Binding;
    t.binding = static_cast<int32_t>(i);
    p.tensors.push_back(t);
    p.inputs.push_back({t.name, static_cast<uint32_t>(i)});
  }
  out.storage = fb::Storage::Binding;
  out.binding = 0;
  p.tensors.push_back(out);
  p.outputs.push_back({out.name, static_cast<uint32_t>(ins.size())});
  StepSpec s;
  s.name = "hostile";
  s.op = op;
  for (size_t i = 0; i < ins.size(); ++i) s.inputs.push_back(static_cast<uint32_t>(i));
  s.outputs = {static_cast<uint32_t>(ins.size())};
  s.params = std::move(params);
  p.steps = {s};
  return build_plan(p);
}

TensorSpec tensor(const char* name, std::vector<int64_t> shape,
                  fb::DType dtype = fb::DType::Float32) {
  TensorSpec t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

// Loads `plan`: expects `status` and an error naming the step with `needle`.
void expect_refused(const std::vector<uint8_t>& plan, jp_status status, const std::string& needle) {
  jp_plan* p = nullptr;
  EXPECT_EQ(jp_plan_load_buffer(plan.data(), plan.size(), JP_LOAD_COPY, &p), status)
      << jp_last_error();
  EXPECT_EQ(p, nullptr);
  if (p != nullptr) jp_plan_destroy(p);
  EXPECT_THAT(jp_last_error(), HasSubstr("hostile"));
  EXPECT_THAT(jp_last_error(), HasSubstr(needle));
}

void expect_loads(const std::vector<uint8_t>& plan) {
  jp_plan* p = nullptr;
  EXPECT_EQ(jp_plan_load_buffer(plan.data(), plan.size(), JP_LOAD_COPY, &p), JP_OK)
      << jp_last_error();
  if (p != nullptr) jp_plan_destroy(p);
}

ParamsFn transpose_params(std::vector<int32_t> perm) {
  return [perm](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::TransposeParams,
                          fb::CreateTransposeParamsDirect(b, &perm).Union());
  };
}

TEST(TensorGroupHostilePlan, TransposePermMustBeAPermutationOfMatchingShape) {
  const auto x = tensor("x", {2, 3});
  expect_loads(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {3, 2}), transpose_params({1, 0})));
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {2, 2}), transpose_params({0, 0})),
                 JP_ERROR_INVALID_PLAN, "perm is not a permutation");
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {3, 2}), transpose_params({1, 2})),
                 JP_ERROR_INVALID_PLAN, "perm is not a permutation");
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {2, 3}), transpose_params({1, 0})),
                 JP_ERROR_INVALID_PLAN, "not the permuted input");
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {3, 2}), transpose_params({1})),
                 JP_ERROR_INVALID_PLAN, "same rank");
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {3, 2}, fb::DType::Int32),
                               transpose_params({1, 0})),
                 JP_ERROR_INVALID_PLAN, "is Int32 but input 'x' is Float32");
}

ParamsFn transpose_into(std::vector<int32_t> perm, int64_t block, int64_t stride, int64_t offset) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::TransposeParams,
                          fb::CreateTransposeParamsDirect(b, &perm, block, stride, offset).Union());
  };
}

// A Transpose writing its part of a Concat in place: its 6 elements in blocks that must lie
// inside y, y_block dividing them, blocks no closer than their length; offsets without a block
// are refused too.
TEST(TensorGroupHostilePlan, TransposeBlocksMustLieInsideTheirOutput) {
  const auto x = tensor("x", {2, 3});
  const auto y = tensor("y", {2, 5});  // two rows of 5: the result's 3 at [1, 4) of each
  expect_loads(one_step_plan(OpFamily::Transpose, {x}, y, transpose_into({0, 1}, 3, 5, 1)));
  expect_loads(one_step_plan(OpFamily::Transpose, {x}, y, transpose_into({0, 1}, 3, 5, 2)));
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, y, transpose_into({0, 1}, 3, 5, 3)),
                 JP_ERROR_INVALID_PLAN, "outside its output");
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, y, transpose_into({0, 1}, 4, 5, 0)),
                 JP_ERROR_INVALID_PLAN, "outside its output");  // 4 does not divide 6
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, y, transpose_into({0, 1}, 3, 2, 0)),
                 JP_ERROR_INVALID_PLAN, "outside its output");  // blocks overlap
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, y, transpose_into({0, 1}, -3, 5, 0)),
                 JP_ERROR_INVALID_PLAN, "outside its output");
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, y, transpose_into({0, 1}, 3, 5, -1)),
                 JP_ERROR_INVALID_PLAN, "outside its output");
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, y,
                               transpose_into({0, 1}, 3, int64_t{1} << 62, 0)),
                 JP_ERROR_INVALID_PLAN, "outside its output");
  expect_refused(one_step_plan(OpFamily::Transpose, {x}, tensor("y", {3, 2}),
                               transpose_into({1, 0}, 0, 0, 2)),
                 JP_ERROR_INVALID_PLAN, "y_block is 0");
}

// A Resize writing its part of a Concat along y_axis in place: x [2, 3, 2] resized x2 along
// dim 2 into y [2, 5, 4] from 1 or 2 of dim 1 (the result's 3 inside y's 5); refused where
// the result would leave y, the axis is resized or out of range, or an offset has no axis.
ParamsFn resize_into(int32_t axis, int64_t offset, double scale1 = 1.0) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    const std::vector<double> scale{1.0, scale1, 2.0}, length{2.0, 3.0 * scale1, 4.0};
    return std::make_pair(
        fb::StepParams::ResizeParams,
        fb::CreateResizeParamsDirect(b, fb::ResizeMode::Nearest, fb::ResizeCoord::Asymmetric,
                                     fb::ResizeNearest::Floor, &scale, &length, nullptr, nullptr,
                                     -0.75f, false, 0.f, axis, offset)
            .Union());
  };
}

TEST(TensorGroupHostilePlan, ResizeBlocksMustLieInsideTheirOutput) {
  const auto x = tensor("x", {2, 3, 2});
  const auto y = tensor("y", {2, 5, 4});
  expect_loads(one_step_plan(OpFamily::Resize, {x}, y, resize_into(1, 1)));
  expect_loads(one_step_plan(OpFamily::Resize, {x}, y, resize_into(1, 2)));
  expect_refused(one_step_plan(OpFamily::Resize, {x}, y, resize_into(1, 3)),
                 JP_ERROR_INVALID_PLAN, "outside y");
  expect_refused(one_step_plan(OpFamily::Resize, {x}, y, resize_into(1, -1)),
                 JP_ERROR_INVALID_PLAN, "outside y");
  expect_refused(one_step_plan(OpFamily::Resize, {x}, y, resize_into(1, int64_t{1} << 62)),
                 JP_ERROR_INVALID_PLAN, "outside y");
  expect_refused(one_step_plan(OpFamily::Resize, {x}, y, resize_into(1, 0, 2.0)),
                 JP_ERROR_INVALID_PLAN, "y_axis is resized");
  expect_refused(one_step_plan(OpFamily::Resize, {x}, y, resize_into(3, 0)),
                 JP_ERROR_INVALID_PLAN, "y_axis is out of range");
  expect_refused(one_step_plan(OpFamily::Resize, {x}, y, resize_into(-2, 0)),
                 JP_ERROR_INVALID_PLAN, "y_axis is out of range");
  expect_refused(one_step_plan(OpFamily::Resize, {x}, tensor("y", {2, 3, 4}), resize_into(-1, 1)),
                 JP_ERROR_INVALID_PLAN, "without it");
  // Dims other than y_axis must still be what the scales give.
  expect_refused(one_step_plan(OpFamily::Resize, {x}, tensor("y", {2, 5, 5}), resize_into(1, 1)),
                 JP_ERROR_INVALID_PLAN, "which scale");
}

// An NHWC upsampling ConvTranspose (x [1, 2, 3, 4] 2x2 stride 2 to 5 channels) writing its
// channels of a Concat's y in place: loads where [offset, offset + 5) lies within y's channels;
// refused past them, at a negative offset, or into an NCHW y.
ParamsFn conv_transpose_into(int64_t offset) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    const std::vector<int64_t> two{2, 2};
    const fb::Activation act(fb::ActivationKind::None, 0.f, 0.f);
    return std::make_pair(fb::StepParams::ConvTransposeParams,
                          fb::CreateConvTransposeParamsDirect(b, 1, &two, &two, nullptr, nullptr,
                                                              nullptr, nullptr, false, false,
                                                              &act, offset)
                              .Union());
  };
}

TEST(TensorGroupHostilePlan, ConvTransposeChannelSlicesMustLieInsideTheirOutput) {
  auto nhwc = [](TensorSpec t) {
    t.layout = fb::Layout::NHWC;
    return t;
  };
  const auto x = nhwc(tensor("x", {1, 2, 3, 4})), w = nhwc(tensor("w", {2, 2, 5, 4}));
  const auto y = nhwc(tensor("y", {1, 4, 6, 8}));  // 8 channels: the step's 5 from 0 to 3
  expect_loads(one_step_plan(OpFamily::ConvTranspose, {x, w}, nhwc(tensor("y", {1, 4, 6, 5})),
                             conv_transpose_into(0)));
  expect_loads(one_step_plan(OpFamily::ConvTranspose, {x, w}, y, conv_transpose_into(0)));
  expect_loads(one_step_plan(OpFamily::ConvTranspose, {x, w}, y, conv_transpose_into(3)));
  for (int64_t bad : {int64_t{4}, int64_t{-1}, int64_t{1} << 62})
    expect_refused(one_step_plan(OpFamily::ConvTranspose, {x, w}, y, conv_transpose_into(bad)),
                   JP_ERROR_INVALID_PLAN, "lie within the output's channels");
  expect_refused(one_step_plan(OpFamily::ConvTranspose, {x, w}, tensor("y", {1, 8, 4, 6}),
                               conv_transpose_into(2)),
                 JP_ERROR_INVALID_PLAN, "must be NHWC");
}

ParamsFn slice_params(std::vector<int64_t> starts, std::vector<int64_t> steps) {
  return [starts, steps](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::SliceParams,
                          fb::CreateSliceParamsDirect(b, &starts, &steps).Union());
  };
}

TEST(TensorGroupHostilePlan, SliceMustReadInsideTheInput) {
  const auto x = tensor("x", {10});
  expect_loads(one_step_plan(OpFamily::Slice, {x}, tensor("y", {4}), slice_params({9}, {-3})));
  expect_refused(one_step_plan(OpFamily::Slice, {x}, tensor("y", {5}), slice_params({9}, {-3})),
                 JP_ERROR_INVALID_PLAN, "read outside the input");
  expect_refused(one_step_plan(OpFamily::Slice, {x}, tensor("y", {1}), slice_params({10}, {1})),
                 JP_ERROR_INVALID_PLAN, "read outside the input");
  expect_refused(one_step_plan(OpFamily::Slice, {x}, tensor("y", {2}), slice_params({0}, {0})),
                 JP_ERROR_INVALID_PLAN, "read outside the input");
  expect_refused(one_step_plan(OpFamily::Slice, {x}, tensor("y", {3}),
                               slice_params({1}, {INT64_MAX})),
                 JP_ERROR_INVALID_PLAN, "read outside the input");  // overflows int64
  expect_refused(one_step_plan(OpFamily::Slice, {x}, tensor("y", {3}), slice_params({0, 0}, {1, 1})),
                 JP_ERROR_INVALID_PLAN, "same rank");
}

TEST(TensorGroupHostilePlan, GatherOutputShapeAndIndexTypeAreChecked) {
  const auto data = tensor("data", {4, 3});
  const auto idx = tensor("idx", {2, 5}, fb::DType::Int64);
  expect_loads(one_step_plan(OpFamily::Gather, {data, idx}, tensor("y", {2, 5, 3}), params_fn(fb::CreateGatherParams, 0)));
  expect_refused(one_step_plan(OpFamily::Gather, {data, idx}, tensor("y", {2, 5, 4}), params_fn(fb::CreateGatherParams, 0)),
                 JP_ERROR_INVALID_PLAN, "output shape is not data's");
  expect_refused(one_step_plan(OpFamily::Gather, {data, idx}, tensor("y", {10, 3}), params_fn(fb::CreateGatherParams, 0)),
                 JP_ERROR_INVALID_PLAN, "output shape is not data's");
  expect_refused(one_step_plan(OpFamily::Gather, {data, idx}, tensor("y", {2, 5, 3}), params_fn(fb::CreateGatherParams, 2)),
                 JP_ERROR_INVALID_PLAN, "axis is out of range");
  expect_refused(one_step_plan(OpFamily::Gather, {data, tensor("idx", {2, 5})},
                               tensor("y", {2, 5, 3}), params_fn(fb::CreateGatherParams, 0)),
                 JP_ERROR_INVALID_PLAN, "indices must be Int32 or Int64");
}

TEST(TensorGroupHostilePlan, GatherElementsIndicesMustFitOffTheAxis) {
  const ParamsFn params = params_fn(fb::CreateGatherElementsParams, 0);
  const auto data = tensor("data", {4, 3});
  expect_loads(one_step_plan(OpFamily::GatherElements, {data, tensor("i", {6, 3}, fb::DType::Int32)},
                             tensor("y", {6, 3}), params));
  expect_refused(one_step_plan(OpFamily::GatherElements,
                               {data, tensor("i", {2, 4}, fb::DType::Int32)}, tensor("y", {2, 4}),
                               params),
                 JP_ERROR_INVALID_PLAN, "larger than data off the axis");
  expect_refused(one_step_plan(OpFamily::GatherElements,
                               {data, tensor("i", {2, 3}, fb::DType::Int32)}, tensor("y", {3, 2}),
                               params),
                 JP_ERROR_INVALID_PLAN, "one shape");
}

ParamsFn pad_params(fb::PadMode mode, std::vector<int64_t> begin, double value) {
  return [mode, begin, value](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::PadParams,
                          fb::CreatePadParamsDirect(b, mode, &begin, value).Union());
  };
}

TEST(TensorGroupHostilePlan, PadCropsAndValuesAreChecked) {
  const auto x = tensor("x", {4});
  expect_loads(one_step_plan(OpFamily::Pad, {x}, tensor("y", {9}), pad_params(fb::PadMode::Reflect, {5}, 0)));
  // begin -3 and end -2 crop all 4 elements away: nothing to reflect from.
  expect_refused(one_step_plan(OpFamily::Pad, {x}, tensor("y", {1}),
                               pad_params(fb::PadMode::Reflect, {-5}, 0)),
                 JP_ERROR_INVALID_PLAN, "crop a dim to nothing");
  expect_loads(one_step_plan(OpFamily::Pad, {x}, tensor("y", {1}),
                             pad_params(fb::PadMode::Constant, {-5}, 0)));
  expect_refused(one_step_plan(OpFamily::Pad, {tensor("x", {4}, fb::DType::Int32)},
                               tensor("y", {5}, fb::DType::Int32),
                               pad_params(fb::PadMode::Constant, {1}, 0.5)),
                 JP_ERROR_INVALID_PLAN, "pad value 0.5 does not fit Int32");
  expect_refused(one_step_plan(OpFamily::Pad, {x}, tensor("y", {5}),
                               pad_params(static_cast<fb::PadMode>(9), {1}, 0)),
                 JP_ERROR_UNSUPPORTED, "unknown pad mode 9");
  expect_refused(one_step_plan(OpFamily::Pad, {x}, tensor("y", {5}),
                               pad_params(fb::PadMode::Edge, {INT64_MIN}, 0)),
                 JP_ERROR_INVALID_PLAN, "out of range");
}

TEST(TensorGroupHostilePlan, BroadcastShapesAreChecked) {
  const auto x = tensor("x", {2, 3});
  expect_loads(one_step_plan(OpFamily::Broadcast, {x}, tensor("y", {4, 2, 3}), params_fn(fb::CreateBroadcastParams, false)));
  expect_loads(one_step_plan(OpFamily::Broadcast, {x}, tensor("y", {4, 9}), params_fn(fb::CreateBroadcastParams, true)));
  expect_refused(one_step_plan(OpFamily::Broadcast, {x}, tensor("y", {2, 4}), params_fn(fb::CreateBroadcastParams, false)),
                 JP_ERROR_INVALID_PLAN, "does not broadcast");
  expect_refused(one_step_plan(OpFamily::Broadcast, {x}, tensor("y", {3}), params_fn(fb::CreateBroadcastParams, false)),
                 JP_ERROR_INVALID_PLAN, "rank is above");
  expect_refused(one_step_plan(OpFamily::Broadcast, {x}, tensor("y", {4, 4}), params_fn(fb::CreateBroadcastParams, true)),
                 JP_ERROR_INVALID_PLAN, "not multiples");
  expect_refused(one_step_plan(OpFamily::Broadcast, {x}, tensor("y", {2, 2, 3}), params_fn(fb::CreateBroadcastParams, true)),
                 JP_ERROR_INVALID_PLAN, "ranks differ");
}

TEST(TensorGroupHostilePlan, UnaryAndElementwiseDtypePairs) {
  auto unary = [](fb::UnaryOp op) { return params_fn(fb::CreateUnaryParams, op); };
  auto elementwise = [](fb::ElementwiseOp op) { return params_fn(fb::CreateElementwiseParams, op); };
  const auto f = tensor("x", {3});
  expect_refused(one_step_plan(OpFamily::Unary, {f}, tensor("y", {3}, fb::DType::Bool),
                               unary(fb::UnaryOp::Not)),
                 JP_ERROR_UNSUPPORTED, "unary Not on Float32 is not supported");
  expect_refused(one_step_plan(OpFamily::Unary, {f}, tensor("y", {3}), unary(fb::UnaryOp::IsNaN)),
                 JP_ERROR_INVALID_PLAN, "wrong dtype Float32");
  expect_refused(one_step_plan(OpFamily::Unary, {f}, tensor("y", {4}), unary(fb::UnaryOp::Sin)),
                 JP_ERROR_INVALID_PLAN, "shapes differ");
  expect_refused(one_step_plan(OpFamily::Unary, {f}, tensor("y", {3}), unary(static_cast<fb::UnaryOp>(99))),
                 JP_ERROR_UNSUPPORTED, "unknown unary op 99");
  expect_refused(one_step_plan(OpFamily::Elementwise, {f, tensor("b", {3})}, tensor("y", {3}),
                               elementwise(fb::ElementwiseOp::Add)),
                 JP_ERROR_UNSUPPORTED, "elementwise Add on Float32 is not supported");
  const auto i32 = fb::DType::Int32;
  // a [2, 3] int32 `op` b into an int32 y.
  const auto int32_step = [&](TensorSpec b, std::vector<int64_t> y,
                              fb::ElementwiseOp op = fb::ElementwiseOp::Add) {
    return one_step_plan(OpFamily::Elementwise, {tensor("a", {2, 3}, i32), b}, tensor("y", y, i32),
                         elementwise(op));
  };
  expect_loads(int32_step(tensor("b", {3}, i32), {2, 3}));
  expect_refused(int32_step(tensor("b", {3}, fb::DType::Int64), {2, 3}), JP_ERROR_INVALID_PLAN,
                 "differ in dtype");
  expect_refused(int32_step(tensor("b", {2}, i32), {2, 3}), JP_ERROR_INVALID_PLAN,
                 "do not broadcast");
  expect_refused(int32_step(tensor("b", {3}, i32), {4, 3}), JP_ERROR_INVALID_PLAN,
                 "do not broadcast");
  expect_refused(int32_step(tensor("b", {3}, i32), {2, 3}, fb::ElementwiseOp::Less),
                 JP_ERROR_INVALID_PLAN, "wrong dtype Int32");
}

TEST(TensorGroupHostilePlan, WhereAndCast) {
  const ParamsFn where = params_fn(fb::CreateWhereParams);
  const ParamsFn cast = params_fn(fb::CreateCastParams);
  const auto cond = tensor("c", {2, 1}, fb::DType::Bool);
  expect_loads(one_step_plan(OpFamily::Where, {cond, tensor("x", {3}), tensor("z", {1})},
                             tensor("y", {2, 3}), where));
  expect_refused(one_step_plan(OpFamily::Where, {tensor("c", {2, 1}), tensor("x", {3}), tensor("z", {1})},
                               tensor("y", {2, 3}), where),
                 JP_ERROR_INVALID_PLAN, "condition must be Bool");
  expect_refused(one_step_plan(OpFamily::Where, {cond, tensor("x", {3}), tensor("z", {1})},
                               tensor("y", {2, 4}), where),
                 JP_ERROR_INVALID_PLAN, "do not broadcast");
  expect_refused(one_step_plan(OpFamily::Where, {cond, tensor("x", {3}), tensor("z", {1})},
                               tensor("y", {3, 3}), where),
                 JP_ERROR_INVALID_PLAN, "do not broadcast");
  expect_loads(one_step_plan(OpFamily::Cast, {tensor("x", {3})}, tensor("y", {3}, fb::DType::Float16), cast));
  expect_refused(one_step_plan(OpFamily::Cast, {tensor("x", {3})}, tensor("y", {1, 3}, fb::DType::Int8), cast),
                 JP_ERROR_INVALID_PLAN, "shapes differ");
}

TEST(TensorGroupHostilePlan, GatherWithHostileIndicesWritesZerosAtRunTime) {
  // A valid plan fed indices far out of range: the kernel must not read outside data.
  const std::vector<uint8_t> bytes = one_step_plan(
      OpFamily::Gather, {tensor("data", {3, 2}), tensor("idx", {4}, fb::DType::Int32)},
      tensor("y", {4, 2}), params_fn(fb::CreateGatherParams, 0));
  const auto out = run(bytes, {bytes_of(std::vector<float>{1, 2, 3, 4, 5, 6}),
                               bytes_of(std::vector<int32_t>{INT32_MIN, -3, 3, INT32_MAX})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(0, 0, 1, 2, 0, 0, 0, 0));
}

}  // namespace
}  // namespace jetplan::converter::testing
