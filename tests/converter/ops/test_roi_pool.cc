// RoiAlign and MaxRoiPool (converter/src/ops/roi_pool.cc) end to end in process: opset 10's
// output_half_pixel and opset 16's half_pixel default, a run against hand-computed bins, the
// refusals (non-float X, int32 batch indices, rois of the wrong shape, a symbolic box count,
// unknown modes, pooled_shape), and GPU plans: rois stay Float32 and batch indices Int64, X is
// read NCHW, the kernel is selected and the plan loads without a device.
#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

// X [1, 1, 4, 4], rois [2, 4] and batch_indices [2] as graph inputs.
ModelBuilder roi_align_model(int opset, const std::string& mode, const std::string& ctm = "",
                             std::vector<int64_t> rois_dims = {2, 4},
                             int batch_elem = onnx::TensorProto::INT64,
                             int x_elem = onnx::TensorProto::FLOAT) {
  ModelBuilder m(opset);
  m.input("x", {1, 1, 4, 4}, x_elem)
      .input("rois", rois_dims, x_elem)
      .input("bi", {rois_dims.empty() ? 2 : rois_dims[0]}, batch_elem)
      .output("y", x_elem);
  auto& n = m.node("RoiAlign", {"x", "rois", "bi"}, {"y"}, "align");
  if (!mode.empty()) attr(n, "mode", mode);
  if (!ctm.empty()) attr(n, "coordinate_transformation_mode", ctm);
  attr(n, "sampling_ratio", int64_t{1});
  return m;
}

std::vector<PlanOutput> run_align(const std::vector<uint8_t>& plan, const std::vector<float>& x,
                                  const std::vector<float>& rois,
                                  const std::vector<int64_t>& batch) {
  return run_plan_inputs(plan, {{x.data(), x.size() * 4}, {rois.data(), rois.size() * 4},
                                {batch.data(), batch.size() * 8}});
}

TEST(RoiPool, RoiAlignOpsetsAndModes) {
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  const std::vector<float> rois = {0, 0, 3, 3, 0, 0, 3, 3};
  // One sample at (1.5, 1.5) (output_half_pixel: opset 10, or named) or at (1, 1) (half_pixel,
  // opset 16's default); a batch index past N gives zeros.
  for (const auto& [opset, mode, ctm, want] :
       {std::tuple{10, "avg", "", std::vector<float>{7.5f, 0}},
        std::tuple{10, "max", "", std::vector<float>{2.5f, 0}},
        std::tuple{16, "", "", std::vector<float>{5, 0}},
        std::tuple{16, "avg", "output_half_pixel", std::vector<float>{7.5f, 0}},
        std::tuple{22, "max", "half_pixel", std::vector<float>{5, 0}}}) {
    const std::vector<uint8_t> bytes = converted_plan(roi_align_model(opset, mode, ctm));
    const fb::Step* s = first_step(plan_of(bytes), OpFamily::RoiPool);
    ASSERT_NE(s, nullptr) << opset << " " << mode;
    EXPECT_EQ(s->params_as_RoiPoolParams()->sampling_ratio(), 1);
    const std::vector<PlanOutput> out = run_align(bytes, x, rois, {0, 1});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dims, (std::vector<int64_t>{2, 1, 1, 1}));
    EXPECT_THAT(out[0].as<float>(), ElementsAreArray(want)) << opset << " " << mode << " " << ctm;
  }
}

ModelBuilder max_roi_pool_model(std::vector<int64_t> pooled, std::vector<int64_t> rois_dims = {1, 5}) {
  ModelBuilder m(13);
  m.input("x", {1, 1, 4, 4}).input("rois", rois_dims).output("y");
  auto& n = m.node("MaxRoiPool", {"x", "rois"}, {"y"}, "pool");
  if (!pooled.empty()) attr(n, "pooled_shape", pooled);
  return m;
}

TEST(RoiPool, MaxRoiPoolRuns) {
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  const std::vector<uint8_t> bytes = converted_plan(max_roi_pool_model({2, 2}));
  const fb::Step* s = first_step(plan_of(bytes), OpFamily::RoiPool);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->params_as_RoiPoolParams()->mode(), fb::RoiPoolMode::Max);
  const std::vector<PlanOutput> out = run_plan(bytes, {x, {0, 0, 0, 3, 3}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(out[0].as<float>(), ElementsAreArray({5.f, 7.f, 13.f, 15.f}));
}

TEST(RoiPool, Refusals) {
  EXPECT_THAT(convert_error(roi_align_model(16, "avg", "", {2, 4}, onnx::TensorProto::INT64,
                                            onnx::TensorProto::DOUBLE)),
              HasSubstr("'align' (RoiAlign): X 'x' is float64"));
  EXPECT_THAT(convert_error(roi_align_model(16, "avg", "", {2, 4}, onnx::TensorProto::INT32)),
              AnyOf(HasSubstr("int32"), HasSubstr("batch_indices")));
  EXPECT_THAT(convert_error(roi_align_model(16, "avg", "", {2, 5})),
              AllOf(HasSubstr("'align'"), HasSubstr("is not [R, 4]")));
  EXPECT_THAT(convert_error(roi_align_model(16, "mean")), HasSubstr("unknown mode 'mean'"));
  EXPECT_THAT(convert_error(roi_align_model(16, "avg", "align_corners")),
              HasSubstr("unknown coordinate_transformation_mode 'align_corners'"));
  EXPECT_THAT(convert_error(max_roi_pool_model({2, 2}, {1, 4})),
              AllOf(HasSubstr("'pool'"), HasSubstr("is not [R, 5]")));
  EXPECT_THAT(convert_error(max_roi_pool_model({2})), HasSubstr("pooled_shape"));
  // A symbolic number of boxes (pinned with --shape it converts).
  ModelBuilder m(16);
  m.input("x", {1, 1, 4, 4}).input("rois", {-1, 4}).input("bi", {-1}, onnx::TensorProto::INT64);
  m.output("y");
  m.node("RoiAlign", {"x", "rois", "bi"}, {"y"}, "align");
  EXPECT_THAT(convert_error(m), HasSubstr("rois"));
}

// X the output of a Conv (NHWC in GPU plans) and rois computed in the plan (a Relu of a graph
// input): X reaches the step as an NCHW Float16 tensor, rois as Float32, batch indices Int64.
TEST(RoiPool, GpuPlansReadFloat32RoisAndNchwX) {
  for (const bool align : {true, false}) {
    ModelBuilder m(16);
    m.input("x", {1, 4, 8, 8}).input("r", {3, align ? 4 : 5});
    if (align) m.input("bi", {3}, onnx::TensorProto::INT64);
    m.output("y");
    m.initializer("w", {4, 4, 1, 1}, ramp(16, 0.125f));
    m.node("Conv", {"x", "w"}, {"c"}, "conv");
    m.node("Relu", {"r"}, {"rois"}, "relu");
    if (align) {
      attr(m.node("RoiAlign", {"c", "rois", "bi"}, {"y"}, "pool"), "output_height", int64_t{7});
    } else {
      attr(m.node("MaxRoiPool", {"c", "rois"}, {"y"}, "pool"), "pooled_shape",
           std::vector<int64_t>{7, 7});
    }
    ConvertOptions gpu;
    gpu.target = "orin-agx";
    const ConvertResult r = convert_onnx(m.bytes(), "model.onnx", gpu);
    EXPECT_TRUE(loads_without_device(r.plan)) << align;
    const fb::Plan* plan = plan_of(r);
    const fb::Step* s = first_step(plan, OpFamily::RoiPool);
    ASSERT_NE(s, nullptr);
    ASSERT_NE(s->kernel(), nullptr);
    EXPECT_EQ(s->kernel()->str(), "jp_roi_pool_f16");
    const fb::Tensor* x = plan->tensors()->Get(s->inputs()->Get(0));
    const fb::Tensor* rois = plan->tensors()->Get(s->inputs()->Get(1));
    EXPECT_EQ(x->dtype(), fb::DType::Float16);
    EXPECT_NE(x->layout(), fb::Layout::NHWC);
    EXPECT_EQ(rois->dtype(), fb::DType::Float32);
    if (align) {
      const fb::Tensor* bi = plan->tensors()->Get(s->inputs()->Get(2));
      EXPECT_EQ(bi->dtype(), fb::DType::Int64);
      EXPECT_EQ(bi->storage(), fb::Storage::Binding);
    }
  }
}

// Rois that are a graph input are read as given, with no Cast.
TEST(RoiPool, GpuPlansReadRoisInputAsGiven) {
  ConvertOptions gpu;
  gpu.target = "h100";
  const ConvertResult r = convert_onnx(roi_align_model(16, "max").bytes(), "model.onnx", gpu);
  EXPECT_TRUE(loads_without_device(r.plan));
  const fb::Plan* plan = plan_of(r);
  const fb::Step* s = first_step(plan, OpFamily::RoiPool);
  ASSERT_NE(s, nullptr);
  const fb::Tensor* rois = plan->tensors()->Get(s->inputs()->Get(1));
  EXPECT_EQ(rois->dtype(), fb::DType::Float32);
  EXPECT_EQ(rois->storage(), fb::Storage::Binding);
}

}  // namespace
}  // namespace jetplan::converter::testing
