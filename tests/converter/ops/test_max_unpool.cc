// MaxUnpool (converter/src/ops/max_unpool.cc) end to end in process: a MaxPool's values and
// indices unpooled to the default shape and to a larger output_shape (the default's elements at
// their own coordinates), the plan's result against the definition recomputed here from the
// input (the ONNX node tests check it against ONNX's reference too, tests/conformance), the refusals, and GPU plans (their kernel chosen).
#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

// x [1, 2, 4, 6] -> MaxPool 2x2 stride 2 (values p, indices i) -> MaxUnpool of both (and an
// output_shape when given).
ModelBuilder unpool_model(const std::vector<int64_t>& output_shape = {}) {
  ModelBuilder m(11);
  m.input("x", {1, 2, 4, 6}).output("y");
  auto& pool = m.node("MaxPool", {"x"}, {"p", "i"}, "pool");
  attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(pool, "strides", std::vector<int64_t>{2, 2});
  std::vector<std::string> inputs = {"p", "i"};
  if (!output_shape.empty()) {
    m.initializer_i64("shape", {int64_t(output_shape.size())}, output_shape);
    inputs.push_back("shape");
  }
  auto& unpool = m.node("MaxUnpool", inputs, {"y"}, "unpool");
  attr(unpool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(unpool, "strides", std::vector<int64_t>{2, 2});
  return m;
}

// What MaxUnpool of a 2x2/2 MaxPool of x [1, 2, 4, 6] gives in y [1, 2, h, w] (h >= 4, w >= 6):
// each window's largest value (the first of equal ones) at its own coordinates, zero elsewhere.
std::vector<float> unpooled(const std::vector<float>& x, int h, int w) {
  std::vector<float> y(size_t(2 * h * w), 0.f);
  for (int c = 0; c < 2; ++c)
    for (int oh = 0; oh < 2; ++oh)
      for (int ow = 0; ow < 3; ++ow) {
        int bh = -1, bw = -1;
        for (int kh = 0; kh < 2; ++kh)
          for (int kw = 0; kw < 2; ++kw) {
            const int ih = oh * 2 + kh, iw = ow * 2 + kw;
            if (bh < 0 || x[size_t((c * 4 + ih) * 6 + iw)] > x[size_t((c * 4 + bh) * 6 + bw)])
              bh = ih, bw = iw;
          }
        y[size_t((c * h + bh) * w + bw)] = x[size_t((c * 4 + bh) * 6 + bw)];
      }
  return y;
}

TEST(MaxUnpool, UnpoolsAMaxPoolToItsDefaultShapeAndToAnOutputShape) {
  std::vector<float> x(48);
  for (size_t k = 0; k < x.size(); ++k) x[k] = float((k * 37) % 48) - 20.f;  // distinct values
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{}, std::vector<int64_t>{1, 2, 5, 7}}) {
    const std::vector<uint8_t> bytes = converted_plan(unpool_model(shape));
    const fb::Plan* plan = plan_of(bytes);
    ASSERT_NE(plan, nullptr);
    const fb::Step* s = first_step(plan, OpFamily::MaxUnpool);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->inputs()->size(), 2u);  // x and indices; the shape is y's
    const std::vector<PlanOutput> out = run_plan(bytes, {x});
    ASSERT_EQ(out.size(), 1u);
    const auto* index_shape = s->params_as_MaxUnpoolParams()->index_shape();
    EXPECT_EQ(index_shape != nullptr && index_shape->size() > 0, !shape.empty());
    EXPECT_THAT(out[0].as<float>(),
                ElementsAreArray(shape.empty() ? unpooled(x, 4, 6) : unpooled(x, 5, 7)));
  }
}

TEST(MaxUnpool, Refusals) {
  ModelBuilder runtime_shape(11);
  runtime_shape.input("x", {1, 1, 2, 2}).input("i", {1, 1, 2, 2}, onnx::TensorProto::INT64);
  runtime_shape.input("s", {4}, onnx::TensorProto::INT64).output("y");
  attr(runtime_shape.node("MaxUnpool", {"x", "i", "s"}, {"y"}, "unpool"), "kernel_shape",
       std::vector<int64_t>{2, 2});
  EXPECT_THAT(convert_error(runtime_shape),
              HasSubstr("'unpool' (MaxUnpool): its output_shape input is computed at run time"));
  ModelBuilder int32_indices(11);
  int32_indices.input("x", {1, 1, 2, 2}).input("i", {1, 1, 2, 2}, onnx::TensorProto::INT32);
  int32_indices.output("y");
  attr(int32_indices.node("MaxUnpool", {"x", "i"}, {"y"}, "unpool"), "kernel_shape",
       std::vector<int64_t>{2, 2});
  EXPECT_THAT(convert_error(int32_indices), HasSubstr("unpool"));
  ModelBuilder no_kernel(11);
  no_kernel.input("x", {1, 1, 2, 2}).input("i", {1, 1, 2, 2}, onnx::TensorProto::INT64);
  no_kernel.output("y");
  no_kernel.node("MaxUnpool", {"x", "i"}, {"y"}, "unpool");
  EXPECT_THAT(convert_error(no_kernel), HasSubstr("kernel_shape"));
  EXPECT_THAT(convert_error(unpool_model({1, 2, 3, 7})),
              HasSubstr("does not hold the default output [1,2,4,6] (it may only be larger)"));
}

TEST(MaxUnpool, GpuPlansSelectItsKernel) {
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  for (auto precision : {ConvertOptions::Precision::kFp16, ConvertOptions::Precision::kFp32}) {
    gpu.precision = precision;
    ConvertResult r;
    try {
      r = convert_onnx(unpool_model().bytes(), "model.onnx", gpu);
    } catch (const ConvertError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    const fb::Plan* plan = plan_of(r.plan);
    ASSERT_NE(plan, nullptr);
    const fb::Step* s = first_step(plan, OpFamily::MaxUnpool);
    ASSERT_NE(s, nullptr);
    ASSERT_NE(s->kernel(), nullptr);
    EXPECT_EQ(s->kernel()->str(), precision == ConvertOptions::Precision::kFp16
                                      ? "jp_max_unpool_b2"
                                      : "jp_max_unpool_b4");
    EXPECT_GT(s->workspace_bytes(), 0u);
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
