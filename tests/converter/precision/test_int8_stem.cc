// INT8 convs whose input channels are not a multiple of 8 (an RGB stem): the INT8 pass pads
// their input to 8k channels with a Quantize step of the image form (kernels/quantize.h) and
// their weights with zeros (int8_padded_channels), so the stem, and the max pool after it, run
// on Int8. Where the input is a graph input, the step reads the NCHW input itself and its
// layout Transpose goes. Checked by numbers on CPU INT8 plans (SNR against FP32 on held-out
// inputs) and, deviceless, by the kernels GPU plans choose.
#include <gmock/gmock.h>

#include <algorithm>

#include "tests/converter/precision/int8_test_util.h"

namespace jetplan::converter::testing {
namespace {

// x [1, 3, 16, 16] -> stem conv 3x3 stride 2 (16) + ReLU -> max pool 2x2 -> conv 3x3 (16)
// -> global average pool: a classifier's stem.
ModelBuilder rgb_stem() {
  ModelBuilder m;
  m.input("x", {1, 3, 16, 16}).output("y");
  m.random("w1", {16, 3, 3, 3}, -0.4f, 0.4f).random("b1", {16}, -0.1f, 0.1f);
  m.random("w2", {16, 16, 3, 3}, -0.15f, 0.15f);
  const auto pads = std::vector<int64_t>{1, 1, 1, 1};
  auto& stem = m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "stem");
  attr(stem, "pads", pads);
  attr(stem, "strides", std::vector<int64_t>{2, 2});
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto& pool = m.node("MaxPool", {"r1"}, {"p1"}, "pool");
  attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(pool, "strides", std::vector<int64_t>{2, 2});
  attr(m.node("Conv", {"p1", "w2"}, {"c2"}, "conv2"), "pads", pads);
  m.node("GlobalAveragePool", {"c2"}, {"y"}, "gap");
  return m;
}

const fb::Tensor* tensor_of(const fb::Plan* p, uint32_t i) { return p->tensors()->Get(i); }

std::vector<int64_t> dims(const fb::Tensor* t) { return {t->shape()->begin(), t->shape()->end()}; }

TEST(Int8Stem, RgbStemRunsInInt8FromTheNchwInput) {
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({1, 3, 16, 16}, 90, &held_out);
  const ConvertResult r = convert_int8(rgb_stem(), options);
  ASSERT_FALSE(r.plan.empty());
  EXPECT_EQ(r.summary.int8_steps, 2u) << format_summary("p", r.summary);
  EXPECT_THAT(r.summary.kept_fp16, ::testing::IsEmpty());
  EXPECT_EQ(r.summary.quantize_steps, 1u);
  EXPECT_EQ(r.summary.padded_inputs, 1u);
  EXPECT_EQ(r.summary.int8_pools, 1u);

  // The first step quantizes the NCHW binding into [1, 16, 16, 8] Int8; no Transpose reads x;
  // the stem's Int8 weight is [16, 3, 3, 8] with zeros in channels 3..7.
  const fb::Plan* p = fb::GetPlan(r.plan.data());
  const fb::Step* q = p->steps()->Get(0);
  ASSERT_EQ(q->op(), fb::OpFamily::Quantize);
  ASSERT_NE(q->params_as_QuantizeParams(), nullptr);
  EXPECT_EQ(q->params_as_QuantizeParams()->layout(), fb::QuantizeLayout::NchwToNhwcPadded);
  EXPECT_EQ(tensor_of(p, q->inputs()->Get(0))->storage(), fb::Storage::Binding);
  const fb::Tensor* xq = tensor_of(p, q->outputs()->Get(0));
  EXPECT_EQ(dims(xq), (std::vector<int64_t>{1, 16, 16, 8}));
  EXPECT_EQ(xq->dtype(), fb::DType::Int8);
  for (const fb::Step* s : *p->steps())  // the output's layout Transpose stays
    EXPECT_FALSE(s->op() == fb::OpFamily::Transpose &&
                 tensor_of(p, s->inputs()->Get(0))->storage() == fb::Storage::Binding);
  const fb::Step* stem = p->steps()->Get(1);
  ASSERT_EQ(stem->op(), fb::OpFamily::Conv);
  EXPECT_EQ(stem->inputs()->Get(0), q->outputs()->Get(0));
  const fb::Tensor* w = tensor_of(p, stem->inputs()->Get(1));
  ASSERT_EQ(dims(w), (std::vector<int64_t>{16, 3, 3, 8}));
  ASSERT_EQ(w->dtype(), fb::DType::Int8);
  const uint8_t* wq = p->weights()->data() + w->offset();
  int nonzero_real = 0;
  for (int64_t i = 0; i < 16 * 3 * 3 * 8; ++i) {
    if (i % 8 >= 3) ASSERT_EQ(wq[i], 0) << "padded weight byte " << i;
    else nonzero_real += wq[i] != 0;
  }
  EXPECT_GT(nonzero_real, 16 * 9 * 3 / 2) << "the real channels hold the weights";
  expect_int8_close(r.plan, rgb_stem(), held_out);

  // A GPU plan (deviceless): the image-form quantize kernel, the 8-channel INT8 tile, the Int8
  // max pool.
  options.target = "h100";
  const ConvertResult gpu = convert_int8(rgb_stem(), options);
  ASSERT_FALSE(gpu.plan.empty());
  const std::vector<std::string> kernels = step_kernels(gpu.plan);
  ASSERT_GE(kernels.size(), 3u);
  EXPECT_EQ(kernels[0], "jp_quantize_image_f32_i8");
  EXPECT_THAT(kernels[1], ::testing::HasSubstr("_c8_i8"));
  EXPECT_EQ(kernels[2], "jp_pool_max_i8");

  // Excluded, the stem stays float behind its layout Transpose.
  options.target = "cpu";
  options.int8_exclude = {"stem"};
  const ConvertResult kept = convert_int8(rgb_stem(), options);
  EXPECT_EQ(kept.summary.padded_inputs, 0u);
  ASSERT_EQ(kept.summary.kept_fp16.size(), 1u);
  EXPECT_EQ(fb::GetPlan(kept.plan.data())->steps()->Get(0)->op(), fb::OpFamily::Transpose);
}

// x [1, 8, 10, 10] -> 1x1 conv to 3 channels + ReLU -> 3x3 conv (3 -> 16) -> global average
// pool: a 3-channel activation in the middle of the network.
ModelBuilder narrow_middle() {
  ModelBuilder m;
  m.input("x", {1, 8, 10, 10}).output("y");
  m.random("w1", {3, 8, 1, 1}, -0.5f, 0.5f).random("b1", {3}, 0.f, 0.2f);
  m.random("w2", {16, 3, 3, 3}, -0.4f, 0.4f);
  m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "squeeze");
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  attr(m.node("Conv", {"r1", "w2"}, {"c2"}, "widen"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("GlobalAveragePool", {"c2"}, {"y"}, "gap");
  return m;
}

// A 3-channel activation read by an INT8 conv: its producer writes float (no INT8 kernel reads
// 3 channels), and a Quantize step of the NHWC form pads it, from Float16 on the GPU.
TEST(Int8Stem, ThreeChannelActivationIsPaddedFromNhwc) {
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({1, 8, 10, 10}, 95, &held_out);
  const ConvertResult r = convert_int8(narrow_middle(), options);
  ASSERT_FALSE(r.plan.empty());
  EXPECT_EQ(r.summary.int8_steps, 2u) << format_summary("p", r.summary);
  EXPECT_EQ(r.summary.padded_inputs, 1u);
  EXPECT_EQ(r.summary.quantize_steps, 2u);  // x, and the padded r1
  const fb::Plan* p = fb::GetPlan(r.plan.data());
  size_t nhwc_padded = 0;
  for (const fb::Step* s : *p->steps()) {
    if (s->op() != fb::OpFamily::Quantize) continue;
    const fb::QuantizeLayout layout = s->params_as_QuantizeParams()->layout();
    if (layout != fb::QuantizeLayout::NhwcPadded) continue;
    ++nhwc_padded;
    EXPECT_EQ(dims(tensor_of(p, s->outputs()->Get(0))), (std::vector<int64_t>{1, 10, 10, 8}));
  }
  EXPECT_EQ(nhwc_padded, 1u);
  expect_int8_close(r.plan, narrow_middle(), held_out);

  options.target = "h100";
  const ConvertResult gpu = convert_int8(narrow_middle(), options);
  ASSERT_FALSE(gpu.plan.empty());
  const std::vector<std::string> kernels = step_kernels(gpu.plan);
  EXPECT_THAT(kernels, ::testing::Contains("jp_quantize_image_f16_i8"))
      << ::testing::PrintToString(kernels);
}

}  // namespace
}  // namespace jetplan::converter::testing
