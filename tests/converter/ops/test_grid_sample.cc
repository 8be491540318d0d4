// GridSample (converter/src/ops/grid_sample.cc) end to end in process: both opsets' mode names,
// a run against hand-computed samples, the refusals (non-float X, more than 3 spatial dims,
// opset 16's 4-D rule (libonnx's shape inference says so first), a grid that does not fit, unknown modes), and GPU plans: the grid stays
// Float32 (a graph input read as given, a computed one cast back), X is read NCHW, the kernel
// is selected and the plan loads without a device.
#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

// X [1, 1, 2, 2] and grid [1, 1, 4, 2] as graph inputs.
ModelBuilder grid_sample_model(int opset, const std::string& mode, int elem = onnx::TensorProto::FLOAT,
                               std::vector<int64_t> x_dims = {1, 1, 2, 2},
                               std::vector<int64_t> grid_dims = {1, 1, 4, 2}) {
  ModelBuilder m(opset);
  m.input("x", x_dims, elem).input("grid", grid_dims).output("y", elem);
  auto& n = m.node("GridSample", {"x", "grid"}, {"y"}, "sample");
  if (!mode.empty()) attr(n, "mode", mode);
  attr(n, "align_corners", int64_t{1});
  return m;
}

TEST(GridSample, BothOpsetsSampleTheCorners) {
  // align_corners 1: (-1, -1) is x[0, 0], (1, -1) x[0, 1], (0, 0) the mean, (1, 1) x[1, 1].
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> grid = {-1, -1, 1, -1, 0, 0, 1, 1};
  for (const auto& [opset, mode, want] :
       {std::tuple{16, "bilinear", std::vector<float>{1, 2, 2.5f, 4}},
        std::tuple{20, "linear", std::vector<float>{1, 2, 2.5f, 4}},
        std::tuple{22, "nearest", std::vector<float>{1, 2, 1, 4}},  // 0.5 rounds to 0
        std::tuple{16, "", std::vector<float>{1, 2, 2.5f, 4}}}) {
    const std::vector<uint8_t> bytes = converted_plan(grid_sample_model(opset, mode));
    const fb::Step* s = first_step(plan_of(bytes), OpFamily::GridSample);
    ASSERT_NE(s, nullptr) << opset << " " << mode;
    EXPECT_TRUE(s->params_as_GridSampleParams()->align_corners());
    const std::vector<PlanOutput> out = run_plan(bytes, {x, grid});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_THAT(out[0].as<float>(), ElementsAreArray(want)) << opset << " " << mode;
  }
}

TEST(GridSample, Refusals) {
  EXPECT_THAT(convert_error(grid_sample_model(20, "linear", onnx::TensorProto::INT32)),
              HasSubstr("'sample' (GridSample): X 'x' is int32"));
  EXPECT_THAT(convert_error(grid_sample_model(20, "linear", onnx::TensorProto::FLOAT,
                                              {1, 1, 2, 2, 2, 2}, {1, 1, 1, 1, 4, 4})),
              HasSubstr("is not supported (1 to 3 spatial dims"));
  EXPECT_THAT(convert_error(grid_sample_model(16, "bilinear", onnx::TensorProto::FLOAT,
                                              {1, 1, 2, 2, 2}, {1, 1, 1, 4, 3})),
              HasSubstr("expected to have rank 4"));  // libonnx's opset 16 inference
  EXPECT_THAT(convert_error(grid_sample_model(20, "linear", onnx::TensorProto::FLOAT,
                                              {1, 1, 2, 2}, {1, 1, 4, 3})),
              HasSubstr("does not fit X"));
  EXPECT_THAT(convert_error(grid_sample_model(16, "linear")), HasSubstr("unknown mode 'linear'"));
  EXPECT_THAT(convert_error(grid_sample_model(20, "bicubic")), HasSubstr("unknown mode 'bicubic'"));
}

// A grid computed in the plan (Tanh of a graph input) and X the output of a Conv (NHWC in GPU
// plans): the grid reaches the step as Float32, X as an NCHW Float16 tensor.
TEST(GridSample, GpuPlansReadAFloat32GridAndNchwX) {
  ModelBuilder m(20);
  m.input("x", {1, 4, 8, 8}).input("g", {1, 5, 6, 2}).output("y");
  m.initializer("w", {4, 4, 1, 1}, ramp(16, 0.125f));
  m.node("Conv", {"x", "w"}, {"c"}, "conv");
  m.node("Tanh", {"g"}, {"grid"}, "tanh");
  attr(m.node("GridSample", {"c", "grid"}, {"y"}, "sample"), "mode", std::string("cubic"));
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  const ConvertResult r = convert_onnx(m.bytes(), "model.onnx", gpu);
  EXPECT_TRUE(loads_without_device(r.plan));
  const fb::Plan* plan = plan_of(r);
  const fb::Step* s = first_step(plan, OpFamily::GridSample);
  ASSERT_NE(s, nullptr);
  ASSERT_NE(s->kernel(), nullptr);
  EXPECT_EQ(s->kernel()->str(), "jp_grid_sample_f16");
  const fb::Tensor* x = plan->tensors()->Get(s->inputs()->Get(0));
  const fb::Tensor* grid = plan->tensors()->Get(s->inputs()->Get(1));
  EXPECT_EQ(x->dtype(), fb::DType::Float16);
  EXPECT_NE(x->layout(), fb::Layout::NHWC);
  EXPECT_EQ(grid->dtype(), fb::DType::Float32);
}

// A grid that is a graph input is read as given, with no Cast.
TEST(GridSample, GpuPlansReadAGridInputAsGiven) {
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  const ConvertResult r = convert_onnx(grid_sample_model(20, "nearest").bytes(), "model.onnx", gpu);
  EXPECT_TRUE(loads_without_device(r.plan));
  const fb::Plan* plan = plan_of(r);
  const fb::Step* s = first_step(plan, OpFamily::GridSample);
  ASSERT_NE(s, nullptr);
  const fb::Tensor* grid = plan->tensors()->Get(s->inputs()->Get(1));
  EXPECT_EQ(grid->dtype(), fb::DType::Float32);
  EXPECT_EQ(grid->storage(), fb::Storage::Binding);
}

}  // namespace
}  // namespace jetplan::converter::testing
