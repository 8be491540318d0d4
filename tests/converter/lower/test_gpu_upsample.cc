// The U-Net's and FPN's upsampling in GPU plans, without a GPU: a ConvTranspose of the
// upsampling form (2x2 stride 2) runs NHWC between NHWC convs with no Transpose around it
// (weights as [KH, KW, Cout, Cin]), checked by numbers on the CPU twins against the NCHW plan,
// and the h200 and orin-agx plans take the tensor-core GEMM for it and the row-tile kernel for
// the bilinear Resize (each plan passes the deviceless load the converter runs on it).
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "tests/converter/lower/gpu_plan_models.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/gpu_pipeline.h"
#include "tests/converter/util/plan_runner.h"

namespace jetplan::converter::testing {
namespace {

const fb::Step* step_named(const fb::Plan* plan, const std::string& name) {
  for (const auto* s : *plan->steps())
    if (s->name()->str() == name) return s;
  return nullptr;
}

TEST(GpuUpsample, NhwcOnCpuTwinsMatchesTheNchwPlan) {
  const ModelBuilder m = gpu_unet_decoder();
  std::vector<float> input(2 * 3 * 12 * 10);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (float& v : input) v = dist(rng);
  const auto want = float_outputs(run_plan(convert_ok(m).plan, {input}));
  const std::vector<uint8_t> nhwc = nhwc_cpu_plan(m.bytes(), GpuPipeline{true, true});
  const fb::Plan* plan = fb::GetPlan(nhwc.data());
  // Fused, the upsampling step is "up+up_relu" or so: find it by family and form.
  const fb::Step* up = nullptr;
  const fb::Step* up3 = nullptr;
  size_t transposes = 0, copies = 0;
  for (const auto* s : *plan->steps()) {
    EXPECT_NE(s->op(), fb::OpFamily::Concat) << s->name()->str();
    EXPECT_NE(s->op(), fb::OpFamily::Activation) << s->name()->str();
    if (s->op() == fb::OpFamily::Transpose) {
      const bool copy = s->params_as_TransposeParams()->y_block() != 0;
      transposes += !copy;
      copies += copy;
    }
    if (s->op() != fb::OpFamily::ConvTranspose) continue;
    (s->params_as_ConvTransposeParams()->pad_begin()->Get(0) == 0 ? up : up3) = s;
  }
  ASSERT_NE(up, nullptr);
  ASSERT_NE(up3, nullptr);
  const auto* tensors = plan->tensors();
  EXPECT_EQ(tensors->Get(up->inputs()->Get(0))->layout(), fb::Layout::NHWC);
  EXPECT_EQ(tensors->Get(up->outputs()->Get(0))->layout(), fb::Layout::NHWC);
  const auto* w = tensors->Get(up->inputs()->Get(1))->shape();
  EXPECT_EQ(std::vector<int64_t>(w->begin(), w->end()), (std::vector<int64_t>{2, 2, 8, 16}));
  // The 3x3 one stays NCHW: its input is transposed back.
  EXPECT_EQ(tensors->Get(up3->inputs()->Get(0))->layout(), fb::Layout::NCHW);
  // x in, y out, and r2 back to NCHW for the 3x3 ConvTranspose: none around the upsampling.
  EXPECT_EQ(transposes, 3u);
  // The upsampling (its Relu fused) writes channels [0, 8) of the Concat's output in place; r1,
  // which the pool reads too, is copied into [8, 16) (an identity Transpose).
  const auto* up_params = up->params_as_ConvTransposeParams();
  EXPECT_EQ(up_params->activation()->kind(), fb::ActivationKind::Relu);
  EXPECT_EQ(up_params->y_channel_offset(), 0);
  EXPECT_EQ(tensors->Get(up->outputs()->Get(0))->shape()->Get(3), 16);
  EXPECT_EQ(copies, 1u);
  const auto got = float_outputs(run_plan(nhwc, {input}));
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(got[o].size(), want[o].size()) << o;
    for (size_t i = 0; i < want[o].size(); ++i)
      ASSERT_NEAR(got[o][i], want[o][i], 1e-4f + 1e-4f * std::fabs(want[o][i]))
          << "output " << o << " element " << i;
  }
}

TEST(GpuUpsample, GpuPlansTakeTheGemmAndTheRowTileResize) {
  for (const std::string target : {"h200", "orin-agx"}) {
    ConvertOptions o;
    o.target = target;
    o.select_kernels = true;
    // convert_onnx writes GPU plans through write_gpu_plan: the runtime's deviceless load.
    const ConvertResult r = convert_onnx(gpu_unet_decoder().bytes(), "model.onnx", o);
    const fb::Plan* plan = plan_of(r);
    size_t upsample = 0, transposes = 0;
    for (const auto* s : *plan->steps()) {
      const std::string kernel = s->kernel()->str();
      transposes += s->op() == fb::OpFamily::Transpose &&
                    s->params_as_TransposeParams()->y_block() == 0;
      if (s->op() == fb::OpFamily::ConvTranspose) {
        const bool form = s->params_as_ConvTransposeParams()->pad_begin()->Get(0) == 0;
        upsample += form;
        if (form) {
          EXPECT_THAT(kernel, ::testing::StartsWith("jp_conv_transpose_upsample_igemm_"))
              << target;
        } else {
          EXPECT_EQ(kernel, "jp_conv_transpose_f16") << target;
        }
      }
      if (s->op() == fb::OpFamily::Resize) {
        EXPECT_EQ(kernel, "jp_resize_hw_f16") << target;
      }
    }
    EXPECT_EQ(upsample, 1u) << target;
    // x in, y out (or its output cast), r2 to NCHW for the 3x3 ConvTranspose.
    EXPECT_LE(transposes, 3u) << target;
    ASSERT_NE(step_named(plan, "resize"), nullptr) << target;
  }
}

// Load refuses an NHWC ConvTranspose outside the upsampling form, naming the step: the plan of
// the NHWC pipeline with one ConvTranspose's pad_end and output_padding both set to 1 (the
// window still gives the output's extent, so only the NHWC check can notice).
TEST(GpuUpsample, LoadRefusesAnNhwcConvTransposeOfAnotherForm) {
  ModelBuilder m(13);
  m.input("x", {1, 4, 5, 6}).output("y");
  m.random("w1", {8, 4, 1, 1}).random("wt", {8, 3, 2, 2});
  m.node("Conv", {"x", "w1"}, {"c"}, "conv");
  attr(m.node("ConvTranspose", {"c", "wt"}, {"y"}, "up"), "strides", std::vector<int64_t>{2, 2});
  std::vector<uint8_t> bytes = nhwc_cpu_plan(m.bytes(), GpuPipeline{});
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK)
      << jp_last_error();
  jp_plan_destroy(plan);
  const fb::Step* up = step_named(fb::GetPlan(bytes.data()), "up");
  ASSERT_NE(up, nullptr);
  const auto* p = up->params_as_ConvTransposeParams();
  ASSERT_EQ(fb::GetPlan(bytes.data())->tensors()->Get(up->inputs()->Get(0))->layout(),
            fb::Layout::NHWC);
  for (const flatbuffers::Vector<int64_t>* v : {p->pad_end(), p->output_padding()}) {
    ASSERT_NE(v, nullptr);
    const int64_t one = 1;
    std::memcpy(bytes.data() + (reinterpret_cast<const uint8_t*>(v->data()) - bytes.data()),
                &one, sizeof one);
  }
  ASSERT_NE(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK);
  EXPECT_THAT(std::string(jp_last_error()),
              ::testing::AllOf(::testing::HasSubstr("step 'up'"),
                               ::testing::HasSubstr("kernel == stride")));
}

}  // namespace
}  // namespace jetplan::converter::testing
