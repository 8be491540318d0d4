// Data movement between INT8 steps (converter/src/precision/int8_precision.h): Concats, max
// pools and Resizes move Int8 with one scale shared by the tensors they join, so a U-Net's skip
// connections, pools and upsampling need no quantize step; an Add of two Int8 tensors
// requantizes into Int8; a float Binary whose only readers are INT8 convs (a squeeze-excitation
// Mul) writes Int8 itself. Checked by numbers without a GPU:
// the INT8 reference plan (--target cpu --precision int8) runs the CPU twins.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <cmath>
#include <set>

#include "tests/converter/precision/int8_test_util.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/plan_runner.h"
#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

const std::vector<int64_t> kPads = {1, 1, 1, 1};

// conv3x3 (+ ReLU) from `x` to `y`, weights w_<name>, b_<name>.
void conv(ModelBuilder& m, const std::string& x, const std::string& y, const std::string& name,
          int64_t cin, int64_t cout, int64_t k, bool relu) {
  const float bound = 1.5f / std::sqrt(static_cast<float>(cin * k * k));
  m.random("w_" + name, {cout, cin, k, k}, -bound, bound).random("b_" + name, {cout}, -0.1f, 0.1f);
  auto& c = m.node("Conv", {x, "w_" + name, "b_" + name}, {relu ? y + "_pre" : y}, name);
  if (k == 3) attr(c, "pads", kPads);
  if (relu) m.node("Relu", {y + "_pre"}, {y}, name + "_relu");
}

void max_pool(ModelBuilder& m, const std::string& x, const std::string& y, const std::string& name) {
  auto& p = m.node("MaxPool", {x}, {y}, name);
  attr(p, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(p, "strides", std::vector<int64_t>{2, 2});
}

// A small U-Net: two encoder levels with max pools, a nearest and a bilinear (half_pixel, as
// torch's Upsample with align_corners=False) upsampling, skip connections joined by Concat, and
// a head whose two branches meet in a Concat each conv writes in place.
ModelBuilder unet() {
  ModelBuilder m;
  m.input("x", {1, 16, 16, 16}).output("y");
  m.initializer("up", {4}, {1.f, 1.f, 2.f, 2.f});
  conv(m, "x", "e1", "enc1", 16, 16, 3, true);                // [1, 16, 16, 16]
  max_pool(m, "e1", "p1", "pool1");
  conv(m, "p1", "e2", "enc2", 16, 32, 3, true);               // [1, 32, 8, 8]
  max_pool(m, "e2", "p2", "pool2");
  conv(m, "p2", "mid", "mid", 32, 32, 3, true);               // [1, 32, 4, 4]
  attr(m.node("Resize", {"mid", "", "up"}, {"u2"}, "up2"), "mode", std::string("nearest"));
  attr(m.node("Concat", {"u2", "e2"}, {"c2"}, "cat2"), "axis", int64_t{1});
  conv(m, "c2", "d2", "dec2", 64, 32, 3, true);               // [1, 32, 8, 8]
  auto& up1 = m.node("Resize", {"d2", "", "up"}, {"u1r"}, "up1");
  attr(up1, "mode", std::string("linear"));
  conv(m, "u1r", "u1", "up1_conv", 32, 16, 1, false);         // [1, 16, 16, 16]
  attr(m.node("Concat", {"u1", "e1"}, {"c1"}, "cat1"), "axis", int64_t{1});
  conv(m, "c1", "d1", "dec1", 32, 16, 3, true);
  conv(m, "d1", "ha", "head_a", 16, 16, 1, true);
  conv(m, "d1", "hb", "head_b", 16, 16, 3, true);
  attr(m.node("Concat", {"ha", "hb"}, {"h"}, "head_cat"), "axis", int64_t{1});
  conv(m, "h", "y", "head", 32, 3, 1, false);
  return m;
}

// The dtype of every step's input 0 of `family`.
std::vector<fb::DType> input_dtypes(const fb::Plan* p, fb::OpFamily family) {
  std::vector<fb::DType> dtypes;
  for (const auto* s : *p->steps())
    if (s->op() == family) dtypes.push_back(p->tensors()->Get(s->inputs()->Get(0))->dtype());
  return dtypes;
}

TEST(Int8DataMovement, UNetConcatsPoolsAndResizesMoveInt8WithOneScale) {
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({1, 16, 16, 16}, 1300, &held_out);
  // Before: Concats and Resizes in float, as the pass left them (a quantize step after each).
  ConvertOptions before = options;
  before.int8_exclude = {"cat1", "cat2", "head_cat", "up1", "up2"};
  const ConvertResult old = convert_int8(unet(), before);
  const ConvertResult r = convert_int8(unet(), options);
  ASSERT_FALSE(r.plan.empty());
  const std::string line = format_summary("p", r.summary);
  EXPECT_EQ(r.summary.int8_steps, 9u) << line;  // every conv
  EXPECT_EQ(r.summary.int8_concats, 3u) << line;
  EXPECT_EQ(r.summary.int8_pools, 2u) << line;
  EXPECT_EQ(r.summary.int8_resizes, 2u) << line;  // nearest and linear
  EXPECT_EQ(r.summary.quantize_steps, 1u) << line;  // x only
  EXPECT_THAT(line, ::testing::HasSubstr("3 concats on Int8, 2 resizes on Int8"));
  EXPECT_EQ(old.summary.int8_concats, 0u);
  EXPECT_LT(r.summary.quantize_steps, old.summary.quantize_steps)
      << line << "\nbefore: " << format_summary("p", old.summary);
  EXPECT_EQ(old.summary.int8_pools, 0u);  // e1 and e2 are read by a float Concat then

  const fb::Plan* p = fb::GetPlan(r.plan.data());
  for (fb::DType d : input_dtypes(p, fb::OpFamily::Concat)) EXPECT_EQ(d, fb::DType::Int8);
  for (fb::DType d : input_dtypes(p, fb::OpFamily::Pool)) EXPECT_EQ(d, fb::DType::Int8);
  for (fb::DType d : input_dtypes(p, fb::OpFamily::Resize)) EXPECT_EQ(d, fb::DType::Int8);
  // Transposes: x's and y's layout, and the two copies of the skips (e1, e2: read by a pool
  // too) into their Concats, whose other inputs (the Resize u2, the conv u1) write theirs in
  // place: in Int8, in the Concats' one scale.
  size_t layout = 0, copies = 0;
  for (const auto* s : *p->steps()) {
    if (s->op() != fb::OpFamily::Transpose) continue;
    const bool copy = s->params_as_TransposeParams()->y_block() != 0;
    layout += !copy;
    copies += copy;
    if (copy) {
      EXPECT_EQ(p->tensors()->Get(s->inputs()->Get(0))->dtype(), fb::DType::Int8);
    }
  }
  EXPECT_LE(layout, 2u);
  EXPECT_EQ(copies, 2u);
  for (const auto* s : *p->steps()) {
    if (s->op() == fb::OpFamily::Resize && s->params_as_ResizeParams()->y_axis() >= 0) {
      EXPECT_EQ(p->tensors()->Get(s->outputs()->Get(0))->dtype(), fb::DType::Int8);
    }
  }
  // The head's Concat is written in place by its two convs (Int8 into channel slices), with
  // the same y_scale; every Concat's inputs and output share theirs, so nothing requantizes.
  std::set<float> head_scales;
  size_t in_place = 0;
  for (const auto* s : *p->steps()) {
    if (s->op() != fb::OpFamily::Conv || s->name()->str().find("+head_cat") == std::string::npos)
      continue;
    ++in_place;
    EXPECT_EQ(p->tensors()->Get(s->outputs()->Get(0))->dtype(), fb::DType::Int8);
    head_scales.insert(s->params_as_ConvParams()->y_scale());
  }
  EXPECT_EQ(in_place, 2u);
  EXPECT_EQ(head_scales.size(), 1u);
  EXPECT_GT(*head_scales.begin(), 0.f);

  const std::vector<uint8_t> fp32 = convert_ok(unet()).plan;
  for (const auto& x : held_out) {
    const auto want = float_outputs(run_plan(fp32, {x}))[0];
    const auto got = float_outputs(run_plan(r.plan, {x}))[0];
    for (float v : got) ASSERT_FALSE(std::isnan(v));
    EXPECT_GT(snr_db(got, want), 30.0);  // 36-38 dB measured
  }
  // The plan loads (the runtime's dtype checks of every step) and converts byte-identically.
  jp_plan* loaded = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(r.plan.data(), r.plan.size(), JP_LOAD_NO_DEVICE, &loaded), JP_OK)
      << jp_last_error();
  jp_plan_destroy(loaded);
  EXPECT_EQ(convert_int8(unet(), options).plan, r.plan);
  // For a GPU: the plan passes the converter's own load check with every kernel selected.
  options.target = "h100";
  const ConvertResult gpu = convert_int8(unet(), options);
  EXPECT_EQ(gpu.summary.int8_concats, 3u);
  EXPECT_EQ(gpu.summary.int8_resizes, 2u);
  size_t i8_resizes = 0;
  for (const auto* s : *fb::GetPlan(gpu.plan.data())->steps())
    i8_resizes += s->op() == fb::OpFamily::Resize && s->kernel()->str() == "jp_resize_hw_i8";
  EXPECT_EQ(i8_resizes, 2u);
}

// An Add no conv epilogue takes (both operands have other readers): a = conv1(x), b = conv2(a),
// s = relu(a + b), then concat(s, b) -> conv3. The Add runs on Int8 with its own output scale
// (binary_add_int8, requantized), so nothing between the convs is quantized again.
ModelBuilder add_block() {
  ModelBuilder m;
  m.input("x", {1, 16, 10, 10}).output("y");
  conv(m, "x", "a", "conv1", 16, 16, 3, true);
  conv(m, "a", "b", "conv2", 16, 16, 3, true);
  m.node("Add", {"a", "b"}, {"s_pre"}, "add");
  m.node("Relu", {"s_pre"}, {"s"}, "add_relu");
  attr(m.node("Concat", {"s", "b"}, {"c"}, "cat"), "axis", int64_t{1});
  conv(m, "c", "y", "conv3", 32, 8, 1, false);
  return m;
}

TEST(Int8DataMovement, UnfusedAddRunsOnInt8WithItsOwnScale) {
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({1, 16, 10, 10}, 1400, &held_out);
  ConvertOptions before = options;
  before.int8_exclude = {"add"};
  const ConvertResult old = convert_int8(add_block(), before);
  const ConvertResult r = convert_int8(add_block(), options);
  ASSERT_FALSE(r.plan.empty());
  const std::string line = format_summary("p", r.summary);
  EXPECT_EQ(r.summary.int8_adds, 1u) << line;
  EXPECT_EQ(r.summary.int8_concats, 1u) << line;
  EXPECT_EQ(r.summary.quantize_steps, 1u) << line;  // x only
  EXPECT_LT(r.summary.quantize_steps, old.summary.quantize_steps) << format_summary("p", old.summary);
  EXPECT_THAT(line, ::testing::HasSubstr("1 adds on Int8"));
  const fb::Plan* p = fb::GetPlan(r.plan.data());
  size_t adds = 0;
  for (const auto* s : *p->steps()) {
    if (s->op() != fb::OpFamily::Binary) continue;
    ++adds;
    ASSERT_EQ(s->inputs()->size(), 3u);
    EXPECT_EQ(p->tensors()->Get(s->inputs()->Get(0))->dtype(), fb::DType::Int8);
    EXPECT_EQ(p->tensors()->Get(s->inputs()->Get(1))->dtype(), fb::DType::Int8);
    EXPECT_EQ(p->tensors()->Get(s->outputs()->Get(0))->dtype(), fb::DType::Int8);
    EXPECT_EQ(p->tensors()->Get(s->inputs()->Get(2))->dtype(), fb::DType::Float32);
  }
  EXPECT_EQ(adds, 1u);
  const std::vector<uint8_t> fp32 = convert_ok(add_block()).plan;
  for (const auto& x : held_out) {
    const auto want = float_outputs(run_plan(fp32, {x}))[0];
    const auto got = float_outputs(run_plan(r.plan, {x}))[0];
    for (float v : got) ASSERT_FALSE(std::isnan(v));
    EXPECT_GT(snr_db(got, want), 30.0);
  }
  options.target = "h100";
  const ConvertResult gpu = convert_int8(add_block(), options);
  size_t i8_adds = 0;
  for (const auto* s : *fb::GetPlan(gpu.plan.data())->steps())
    i8_adds += s->op() == fb::OpFamily::Binary && s->kernel()->str() == "jp_binary_add_i8";
  EXPECT_EQ(i8_adds, 1u);
}

// A squeeze-excitation block as EfficientNet's: a = conv1(x), gate = sigmoid(se2(relu(se1(
// avgpool(a))))), m = a * gate, y = conv2(m). a has float readers (the pool and the Mul), the SE
// convs on one pixel stay FP16, and m's only reader is an INT8 conv: the Mul writes Int8 with m's
// own scale (binary_to_int8), where it wrote Float16 and a quantize step followed.
ModelBuilder se_block() {
  ModelBuilder m;
  m.input("x", {1, 16, 8, 8}).output("y");
  conv(m, "x", "a", "conv1", 16, 32, 3, true);
  m.node("GlobalAveragePool", {"a"}, {"g"}, "squeeze");
  conv(m, "g", "s1", "se1", 32, 8, 1, true);
  conv(m, "s1", "s2", "se2", 8, 32, 1, false);
  m.node("Sigmoid", {"s2"}, {"gate"}, "gate");
  m.node("Mul", {"a", "gate"}, {"m"}, "excite");
  conv(m, "m", "y", "conv2", 32, 16, 1, false);
  return m;
}

TEST(Int8DataMovement, SqueezeExcitationMulWritesInt8ForItsInt8Reader) {
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({1, 16, 8, 8}, 1500, &held_out);
  ConvertOptions before = options;
  before.int8_exclude = {"excite"};
  const ConvertResult old = convert_int8(se_block(), before);
  ConvertOptions reported = options;
  reported.int8_report = true;
  const ConvertResult r = convert_int8(se_block(), reported);
  ASSERT_FALSE(r.plan.empty());
  const std::string line = format_summary("p", r.summary);
  EXPECT_EQ(r.summary.int8_binary_outputs, 1u) << line;
  EXPECT_EQ(old.summary.int8_binary_outputs, 0u);
  EXPECT_EQ(r.summary.quantize_steps, 1u) << line;  // x only
  EXPECT_EQ(old.summary.quantize_steps, 2u) << format_summary("p", old.summary);  // x and m
  EXPECT_THAT(line, ::testing::HasSubstr("2 convs in INT8"));
  EXPECT_THAT(line, ::testing::HasSubstr("1 float Binary steps writing Int8"));
  // The report lists the Mul with its output's scale, as an INT8 step --int8-exclude can name.
  EXPECT_THAT(r.int8_report_table, ::testing::ContainsRegex("excite +Mul->Int8"));
  const fb::Plan* p = fb::GetPlan(r.plan.data());
  size_t muls = 0;
  for (const auto* s : *p->steps()) {
    if (s->op() != fb::OpFamily::Binary) continue;
    ++muls;
    ASSERT_EQ(s->inputs()->size(), 3u);
    EXPECT_EQ(p->tensors()->Get(s->inputs()->Get(0))->dtype(), fb::DType::Float32);
    EXPECT_EQ(p->tensors()->Get(s->inputs()->Get(1))->dtype(), fb::DType::Float32);
    EXPECT_EQ(p->tensors()->Get(s->outputs()->Get(0))->dtype(), fb::DType::Int8);
    EXPECT_EQ(p->tensors()->Get(s->inputs()->Get(2))->dtype(), fb::DType::Float32);
  }
  EXPECT_EQ(muls, 1u);
  const std::vector<uint8_t> fp32 = convert_ok(se_block()).plan;
  for (const auto& x : held_out) {
    const auto want = float_outputs(run_plan(fp32, {x}))[0];
    const auto got = float_outputs(run_plan(r.plan, {x}))[0];
    const auto got_old = float_outputs(run_plan(old.plan, {x}))[0];
    for (float v : got) ASSERT_FALSE(std::isnan(v));
    EXPECT_GT(snr_db(got, want), 30.0);
    // The same rounding of m as the quantize step's (one multiply by the inverse scale), so
    // the same outputs but for values at a rounding tie.
    EXPECT_GT(snr_db(got, got_old), 50.0);
  }
  options.target = "h100";
  const ConvertResult gpu = convert_int8(se_block(), options);
  EXPECT_EQ(gpu.summary.quantize_steps, 1u);
  size_t q8 = 0;
  const fb::Plan* g = fb::GetPlan(gpu.plan.data());
  for (const auto* s : *g->steps()) {
    if (s->op() != fb::OpFamily::Binary) continue;
    q8 += s->kernel()->str() == "jp_binary_q8_f16";
    EXPECT_EQ(g->tensors()->Get(s->inputs()->Get(0))->dtype(), fb::DType::Float16);
  }
  EXPECT_EQ(q8, 1u);
}

// ShuffleNet's channel shuffle between two convs (Reshape [N, 2, C/2, H, W], Transpose of the two
// groups, Reshape back): a Transpose moves the same values, so the conv after it reads its
// input's scale through the shuffle and runs in INT8 too (it was kept in float: "no scale").
// Against the same model without the shuffle, its second conv's input channels permuted to
// match: the same integers meet the same weights, so the INT8 outputs agree bit for bit.
TEST(Int8DataMovement, ConvAfterAChannelShuffleRunsInInt8) {
  constexpr int64_t kC = 16, kHalf = kC / 2;
  std::vector<float> w = random_floats(kC * kC * 9, 31, -0.12f, 0.12f), w_direct(w.size());
  for (int64_t o = 0; o < kC; ++o)
    for (int64_t g = 0; g < 2; ++g)
      for (int64_t i = 0; i < kHalf; ++i)
        for (int64_t k = 0; k < 9; ++k)  // shuffled channel i * 2 + g holds channel g * 8 + i
          w_direct[size_t((o * kC + g * kHalf + i) * 9 + k)] = w[size_t((o * kC + i * 2 + g) * 9 + k)];
  const std::vector<float> b = random_floats(kC, 32, -0.1f, 0.1f);
  const auto model = [&](bool shuffle) {
    ModelBuilder m;
    m.input("x", {1, kC, 8, 8}).output("y");
    conv(m, "x", "a", "before", kC, kC, 3, true);
    std::string in = "a";
    if (shuffle) {
      m.initializer_i64("groups", {5}, {1, 2, kHalf, 8, 8});
      m.node("Reshape", {"a", "groups"}, {"g"}, "split_groups");
      attr(m.node("Transpose", {"g"}, {"t"}, "shuffle"), "perm", std::vector<int64_t>{0, 2, 1, 3, 4});
      m.initializer_i64("flat", {4}, {1, kC, 8, 8});
      m.node("Reshape", {"t", "flat"}, {"s"}, "join_groups");
      in = "s";
    }
    m.initializer("w_after", {kC, kC, 3, 3}, shuffle ? w : w_direct).initializer("b_after", {kC}, b);
    attr(m.node("Conv", {in, "w_after", "b_after"}, {"y"}, "after"), "pads", kPads);
    return m;
  };
  std::vector<std::vector<float>> held_out;
  const ConvertOptions options = int8_cpu_options({1, kC, 8, 8}, 2900, &held_out);
  const ConvertResult r = convert_int8(model(true), options);
  const ConvertResult direct = convert_int8(model(false), options);
  ASSERT_FALSE(r.plan.empty());
  ASSERT_FALSE(direct.plan.empty());
  EXPECT_EQ(r.summary.int8_steps, 2u);
  EXPECT_TRUE(r.summary.kept_fp16.empty());
  EXPECT_EQ(direct.summary.int8_steps, 2u);
  for (const auto& x : held_out) {
    const auto got = float_outputs(run_plan(r.plan, {x}))[0];
    const auto want = float_outputs(run_plan(direct.plan, {x}))[0];
    ASSERT_EQ(got.size(), want.size());
    for (float v : got) ASSERT_FALSE(std::isnan(v));
    EXPECT_EQ(got, want);
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
