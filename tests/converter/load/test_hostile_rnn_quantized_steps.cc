// Rnn and the quantized steps in hand-built hostile plans: load must refuse each, naming the
// step.
#include "tests/converter/util/quantized_util.h"

namespace jetplan::converter::testing {
namespace {

// ------------------------------------------------------------------ hostile plans at load

struct Tensor {
  std::vector<int64_t> shape;
  fb::DType dtype = fb::DType::Float32;
};

using ParamsFn = std::function<std::pair<fb::StepParams, flatbuffers::Offset<void>>(
    flatbuffers::FlatBufferBuilder&)>;

struct HostileStep {
  fb::OpFamily op;
  ParamsFn params;
  std::vector<Tensor> inputs, outputs;
  uint64_t workspace_bytes = 0;
};

int64_t dtype_bytes(fb::DType t) { return kernels::dtype_bytes(static_cast<kernels::DType>(t)); }

// A plan of one step whose inputs are graph inputs and outputs graph outputs; load's verdict
// and message.
std::pair<jp_status, std::string> load_step(const HostileStep& h) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  std::vector<flatbuffers::Offset<fb::BindingDesc>> ins, outs;
  std::vector<uint32_t> in_ids, out_ids;
  auto add = [&](const Tensor& t, bool output, size_t index) {
    int64_t bytes = dtype_bytes(t.dtype);
    for (int64_t d : t.shape) bytes *= d;
    const std::string name = (output ? "out" : "in") + std::to_string(index);
    const uint32_t id = static_cast<uint32_t>(tensors.size());
    tensors.push_back(fb::CreateTensorDirect(b, name.c_str(), &t.shape, t.dtype, fb::Layout::Any,
                                             fb::Storage::Binding, 0, static_cast<uint64_t>(bytes),
                                             static_cast<int32_t>(index)));
    (output ? outs : ins).push_back(fb::CreateBindingDescDirect(b, name.c_str(), id));
    (output ? out_ids : in_ids).push_back(id);
  };
  for (size_t i = 0; i < h.inputs.size(); ++i) add(h.inputs[i], false, i);
  for (size_t i = 0; i < h.outputs.size(); ++i) add(h.outputs[i], true, i);
  const auto [type, params] = h.params(b);
  const fb::LaunchConfig launch{};
  const auto step = fb::CreateStepDirect(b, "hostile", h.op, type, params, &in_ids, &out_ids, "",
                                         &launch, 0, h.workspace_bytes);
  const std::vector<flatbuffers::Offset<fb::Step>> steps = {step};
  const auto target = fb::CreateTargetDirect(b, "cpu", fb::Backend::CPU, 0);
  const uint64_t arena = (h.workspace_bytes + 255) / 256 * 256;
  const auto plan =
      fb::CreatePlanDirect(b, JP_SCHEMA_VERSION, target, &ins, &outs, &tensors, &steps, arena, 256);
  fb::FinishPlanBuffer(b, plan);
  jp_plan* loaded = nullptr;
  const jp_status status =
      jp_plan_load_buffer(b.GetBufferPointer(), b.GetSize(), JP_LOAD_COPY, &loaded);
  const std::string message = status == JP_OK ? "" : jp_last_error();
  if (status == JP_OK) {
    // A plan that loads must also run: the kernel stays inside every tensor it was given.
    jp_context* ctx = nullptr;
    EXPECT_EQ(jp_context_create(loaded, nullptr, &ctx), JP_OK);
    EXPECT_EQ(jp_context_run(ctx), JP_OK);
    jp_context_destroy(ctx);
  }
  jp_plan_destroy(loaded);
  return {status, message};
}

struct RnnSpec {
  fb::RnnCell cell = fb::RnnCell::Lstm;
  fb::RnnDirection direction = fb::RnnDirection::Forward;
  int64_t hidden_size = 4;
  std::vector<fb::RnnActivation> activations = {{fb::RnnActivationKind::Sigmoid, 0.f, 0.f},
                                                {fb::RnnActivationKind::Tanh, 0.f, 0.f},
                                                {fb::RnnActivationKind::Tanh, 0.f, 0.f}};
  float clip = 0.f;
  bool has_clip = false, has_bias = false, has_sequence_lens = false, has_y_c = false;
  bool no_table = false;
};

ParamsFn rnn_params(const RnnSpec& r) {
  return [r](flatbuffers::FlatBufferBuilder& b)
             -> std::pair<fb::StepParams, flatbuffers::Offset<void>> {
    if (r.no_table) return {fb::StepParams::RnnParams, 0};
    const auto p = fb::CreateRnnParamsDirect(
        b, r.cell, r.direction, false, r.hidden_size, &r.activations, r.clip, r.has_clip, false,
        false, r.has_bias, r.has_sequence_lens, false, false, false, false, true, r.has_y_c);
    return {fb::StepParams::RnnParams, p.Union()};
  };
}

// LSTM, X [S=2, N=1, I=3], H = 4: inputs X, W, R; output Y_h.
HostileStep lstm_step(const RnnSpec& spec = {}) {
  kernels::RnnParams k;
  k.hidden_size = 4;
  return {fb::OpFamily::Rnn,
          rnn_params(spec),
          {{{2, 1, 3}}, {{1, 16, 3}}, {{1, 16, 4}}},
          {{{1, 1, 4}}},
          static_cast<uint64_t>(kernels::cpu::rnn_workspace_bytes(k))};
}

void expect_refused(const HostileStep& h, const char* mentions, const std::string& what) {
  const auto [status, message] = load_step(h);
  EXPECT_NE(status, JP_OK) << what;
  EXPECT_THAT(message, HasSubstr("'hostile'")) << what;
  EXPECT_THAT(message, HasSubstr(mentions)) << what;
}

TEST(SeqLoad, ValidHandBuiltStepsLoadAndRun) {
  EXPECT_EQ(load_step(lstm_step()).first, JP_OK) << jp_last_error();
}

TEST(SeqLoad, HostileRnnStepsAreRefused) {
  {
    RnnSpec s;
    s.hidden_size = 5;  // W [1, 16, 3] holds 4 gates of 4
    expect_refused(lstm_step(s), "W 'in1' must be [1,20,3]", "hidden_size vs W");
  }
  {
    RnnSpec s;
    s.hidden_size = 1000;  // larger than W's rows
    expect_refused(lstm_step(s), "hidden_size 1000 does not fit W", "huge hidden_size");
  }
  {
    HostileStep h = lstm_step();
    h.inputs[2] = {{1, 16, 5}};
    expect_refused(h, "R 'in2' must be [1,16,4]", "R");
  }
  {
    HostileStep h = lstm_step();
    h.outputs[0] = {{1, 2, 4}};
    expect_refused(h, "Y_h 'out0' must be [1,1,4]", "Y_h");
  }
  {
    HostileStep h = lstm_step();
    h.workspace_bytes = 64;
    expect_refused(h, "workspace of 64 bytes, the recurrence needs 320", "workspace");
  }
  {
    RnnSpec s;
    s.activations.pop_back();
    expect_refused(lstm_step(s), "2 activations, expected 3", "activation count");
  }
  {
    RnnSpec s;
    s.activations[1] = fb::RnnActivation(static_cast<fb::RnnActivationKind>(99), 0.f, 0.f);
    expect_refused(lstm_step(s), "unknown recurrent activation 99", "activation kind");
  }
  {
    RnnSpec s;
    s.cell = static_cast<fb::RnnCell>(7);
    expect_refused(lstm_step(s), "unknown recurrent cell 7", "cell");
  }
  {
    RnnSpec s;
    s.direction = static_cast<fb::RnnDirection>(3);
    expect_refused(lstm_step(s), "unknown direction 3", "direction");
  }
  {
    RnnSpec s;
    s.cell = fb::RnnCell::Gru;
    s.has_y_c = true;
    expect_refused(lstm_step(s), "belong to LSTM only", "Y_c on a GRU");
  }
  {
    RnnSpec s;
    s.has_bias = true;  // but no B among the inputs
    expect_refused(lstm_step(s), "has 3 inputs and 1 outputs; its params say 4 and 1", "arity");
  }
  {
    RnnSpec s;
    s.has_sequence_lens = true;
    HostileStep h = lstm_step(s);
    h.inputs.push_back({{1}, fb::DType::Float32});
    expect_refused(h, "sequence_lens 'in3' is Float32, expected Int32", "lens dtype");
  }
  {
    HostileStep h = lstm_step();
    h.inputs[1].dtype = fb::DType::Float16;
    h.inputs[1].shape = {1, 16, 3};
    expect_refused(h, "W 'in1' is Float16, expected Float32", "W dtype");
  }
  {
    RnnSpec s;
    s.has_clip = true;
    s.clip = std::nanf("");
    expect_refused(lstm_step(s), "clip must be a finite non-negative number", "clip");
  }
  {
    RnnSpec s;
    s.no_table = true;
    expect_refused(lstm_step(s), "has no params table", "no table");
  }
}

ParamsFn quantize_params(int32_t axis, bool per_axis, bool has_zp,
                         fb::QuantizeLayout layout = fb::QuantizeLayout::Same) {
  return [=](flatbuffers::FlatBufferBuilder& b)
             -> std::pair<fb::StepParams, flatbuffers::Offset<void>> {
    return {fb::StepParams::QuantizeParams,
            fb::CreateQuantizeParams(b, axis, per_axis, has_zp, layout).Union()};
  };
}

// Quantize x [2, 3] per axis 1 into uint8.
HostileStep quantize_step(int32_t axis = 1) {
  return {fb::OpFamily::Quantize,
          quantize_params(axis, true, true),
          {{{2, 3}}, {{3}}, {{3}, fb::DType::UInt8}},
          {{{2, 3}, fb::DType::UInt8}}};
}

TEST(SeqLoad, HostileQuantizeStepsAreRefused) {
  EXPECT_EQ(load_step(quantize_step()).first, JP_OK) << jp_last_error();
  EXPECT_EQ(load_step(quantize_step(-1)).first, JP_OK) << jp_last_error();
  expect_refused(quantize_step(2), "the quantization axis is out of range", "axis 2");
  expect_refused(quantize_step(-3), "the quantization axis is out of range", "axis -3");
  {
    HostileStep h = quantize_step(0);  // 2 channels on axis 0, 3 scales
    expect_refused(h, "scale 'in1' has 3 elements, expected 2", "scale count");
  }
  {
    HostileStep h = quantize_step();
    h.inputs[2].dtype = fb::DType::Int8;
    expect_refused(h, "zero point 'in2' is Int8, expected UInt8", "zp dtype");
  }
  {
    HostileStep h = quantize_step();
    h.outputs[0].dtype = fb::DType::Int32;
    expect_refused(h, "output 'out0' is Int32, expected Int8 or UInt8", "output dtype");
  }
  {
    HostileStep h = quantize_step();
    h.outputs[0].shape = {3, 2};
    expect_refused(h, "input and output shapes differ", "shape");
  }
  {
    HostileStep h = quantize_step();
    h.op = fb::OpFamily::Dequantize;  // x float32 is no quantized input
    expect_refused(h, "output 'out0' is UInt8, expected Float32", "dequantize dtypes");
  }
  {
    HostileStep h = quantize_step();
    h.params = quantize_params(1, false, true);  // per-tensor with 3 scales
    expect_refused(h, "scale 'in1' has 3 elements, expected 1", "per-tensor count");
  }
}

// The image form: x [2, 3, 4, 5] (NCHW) quantized into y [2, 4, 5, 8] Int8, channels padded.
HostileStep quantize_image_step(fb::QuantizeLayout layout = fb::QuantizeLayout::NchwToNhwcPadded) {
  return {fb::OpFamily::Quantize,
          quantize_params(1, false, false, layout),
          {{{2, 3, 4, 5}}, {{1}}},
          {{{2, 4, 5, 8}, fb::DType::Int8}}};
}

TEST(SeqLoad, HostilePaddedQuantizeStepsAreRefused) {
  EXPECT_EQ(load_step(quantize_image_step()).first, JP_OK) << jp_last_error();
  {
    HostileStep h = quantize_image_step(fb::QuantizeLayout::NhwcPadded);
    h.inputs[0].shape = {2, 4, 5, 3};
    EXPECT_EQ(load_step(h).first, JP_OK) << jp_last_error();
    h.inputs[0].shape = {2, 3, 4, 5};  // read as NHWC: 3 x 4 pixels of 5 channels, not 4 x 5
    expect_refused(h, "output is not the input's NHWC form with at least its channels", "nhwc");
  }
  {
    HostileStep h = quantize_image_step();
    h.outputs[0].shape = {2, 4, 5, 2};  // fewer channels than x
    expect_refused(h, "output is not the NCHW input's NHWC form with at least its channels",
                   "channels");
  }
  {
    HostileStep h = quantize_image_step();
    h.outputs[0].shape = {2, 5, 4, 8};  // H and W swapped
    expect_refused(h, "output is not the NCHW input's NHWC form", "spatial");
  }
  {
    HostileStep h = quantize_image_step();
    h.params = quantize_params(1, true, false, fb::QuantizeLayout::NchwToNhwcPadded);
    expect_refused(h, "the padded (image) quantization is per tensor only", "per axis");
  }
  {
    HostileStep h = quantize_image_step();
    h.inputs[0].shape = {2, 3, 20};
    h.outputs[0].shape = {2, 20, 8};
    expect_refused(h, "needs 4-D input and output", "rank");
  }
  {
    HostileStep h = quantize_image_step();
    h.params = quantize_params(1, false, false, static_cast<fb::QuantizeLayout>(7));
    expect_refused(h, "the quantization layout is not one this runtime knows", "layout");
  }
  {
    HostileStep h = quantize_image_step();
    h.op = fb::OpFamily::Dequantize;
    h.inputs[0].dtype = fb::DType::Int8;
    h.outputs[0].dtype = fb::DType::Float32;
    expect_refused(h, "a padded (image) quantization layout on a Dequantize step", "dequantize");
  }
}

ParamsFn qmatmul_params() {
  return [](flatbuffers::FlatBufferBuilder& b)
             -> std::pair<fb::StepParams, flatbuffers::Offset<void>> {
    return {fb::StepParams::QLinearMatMulParams, fb::CreateQLinearMatMulParams(b).Union()};
  };
}

// `h` with the scale (input `scale`) and zero point (the input after it) of n elements.
HostileStep with_quant_pair(HostileStep h, size_t scale, int64_t n) {
  h.inputs[scale].shape = {n};
  h.inputs[scale + 1].shape = {n};
  return h;
}

// a [2, 4] x b [4, 3], b per column.
HostileStep qmatmul_step() {
  const fb::DType u8 = fb::DType::UInt8;
  return {fb::OpFamily::QLinearMatMul,
          qmatmul_params(),
          {{{2, 4}, u8}, {{1}}, {{1}, u8}, {{4, 3}, u8}, {{3}}, {{3}, u8}, {{1}}, {{1}, u8}},
          {{{2, 3}, u8}}};
}

TEST(SeqLoad, HostileQLinearMatMulStepsAreRefused) {
  EXPECT_EQ(load_step(qmatmul_step()).first, JP_OK) << jp_last_error();
  {
    HostileStep h = qmatmul_step();
    h.inputs[3].shape = {5, 3};
    expect_refused(h, "inner dimensions of A and B differ", "K");
  }
  {
    HostileStep h = qmatmul_step();
    h.outputs[0].shape = {2, 4};
    expect_refused(h, "output is not [.., M, N]", "y");
  }
  {
    HostileStep h = qmatmul_step();
    h.inputs[1].shape = {2};  // per row, but its zero point is per tensor
    expect_refused(h, "A scale 'in1' and zero point 'in2' need 1 or 2 elements", "a_scale");
  }
  expect_refused(with_quant_pair(qmatmul_step(), 4, 4),
                 "B scale 'in4' and zero point 'in5' need 1 or 3 elements", "b_scale");
  expect_refused(with_quant_pair(qmatmul_step(), 6, 3),
                 "output scale 'in6' and zero point 'in7' need 1 or 1", "y_scale");
  {
    HostileStep h = qmatmul_step();
    h.inputs[5].dtype = fb::DType::Int8;
    expect_refused(h, "B zero point 'in5' is Int8, expected UInt8", "b_zp dtype");
  }
  {
    HostileStep h = qmatmul_step();
    h.inputs[0].shape = {2, 2, 4};  // batch 2 against an output of batch 3
    h.outputs[0].shape = {3, 2, 3};
    expect_refused(h, "batch dims of A or B neither match the output nor are all 1", "batch");
  }
  {
    HostileStep h = qmatmul_step();
    h.inputs.pop_back();
    expect_refused(h, "has 7 inputs and 1 outputs; its params say 8 and 1", "arity");
  }
}

struct QConvSpec {
  int64_t groups = 1;
  std::vector<int64_t> kernel = {3, 3}, stride = {2, 2}, pads = {1, 1};
  bool has_bias = true;
};

ParamsFn qconv_params(const QConvSpec& c) {
  return [c](flatbuffers::FlatBufferBuilder& b)
             -> std::pair<fb::StepParams, flatbuffers::Offset<void>> {
    return {fb::StepParams::QLinearConvParams,
            fb::CreateQLinearConvParamsDirect(b, c.groups, &c.kernel, &c.stride, nullptr, &c.pads,
                                              &c.pads, c.has_bias)
                .Union()};
  };
}

// x [1, 2, 5, 5] uint8, w [3, 2, 3, 3] int8 per channel, pads 1, stride 2, y [1, 3, 3, 3].
HostileStep qconv_step(const QConvSpec& c = {}) {
  const fb::DType u8 = fb::DType::UInt8, i8 = fb::DType::Int8;
  return {fb::OpFamily::QLinearConv,
          qconv_params(c),
          {{{1, 2, 5, 5}, u8},
           {{1}},
           {{1}, u8},
           {{3, 2, 3, 3}, i8},
           {{3}},
           {{3}, i8},
           {{1}},
           {{1}, u8},
           {{3}, fb::DType::Int32}},
          {{{1, 3, 3, 3}, u8}}};
}

TEST(SeqLoad, HostileQLinearConvStepsAreRefused) {
  EXPECT_EQ(load_step(qconv_step()).first, JP_OK) << jp_last_error();
  {
    HostileStep h = qconv_step();
    h.outputs[0].shape = {1, 3, 4, 4};
    expect_refused(h, "spatial dim 0 is 4, the window gives 3", "output size");
  }
  {
    HostileStep h = qconv_step();
    h.inputs[8].dtype = fb::DType::Float32;
    expect_refused(h, "bias 'in8' is Float32, expected Int32", "bias dtype");
  }
  {
    HostileStep h = qconv_step();
    h.inputs[8].shape = {2};
    expect_refused(h, "bias 'in8' has 2 elements, expected 3", "bias count");
  }
  {
    QConvSpec c;
    c.groups = 0;
    expect_refused(qconv_step(c), "weight channels do not match", "groups 0");
  }
  {
    QConvSpec c;
    c.groups = 2;  // 3 output channels do not split in 2 groups
    HostileStep h = qconv_step(c);
    h.inputs[3].shape = {3, 1, 3, 3};
    expect_refused(h, "weight channels do not match", "groups 2");
  }
  {
    QConvSpec c;
    c.kernel = {2, 2};
    expect_refused(qconv_step(c), "weight and kernel size differ", "kernel");
  }
  {
    QConvSpec c;
    c.stride = {0, 2};
    expect_refused(qconv_step(c), "stride[0] = 0 is out of range", "stride");
  }
  {
    QConvSpec c;
    c.pads = {-1, 1};
    expect_refused(qconv_step(c), "pad_begin[0] = -1 is out of range", "pads");
  }
  {
    QConvSpec c;
    c.kernel = {3, 3, 3, 3};
    expect_refused(qconv_step(c), "kernel must have 1 to 3 spatial dims", "rank");
  }
  expect_refused(with_quant_pair(qconv_step(), 1, 2),
                 "input scale 'in1' and zero point 'in2' need 1 or 1", "x_scale");
  {
    HostileStep h = qconv_step();
    h.inputs[5].shape = {2};
    expect_refused(h, "weight scale 'in4' and zero point 'in5' need 1 or 3", "w_zp");
  }
  {
    QConvSpec c;
    c.has_bias = false;  // yet 9 inputs
    expect_refused(qconv_step(c), "has 9 inputs and 1 outputs; its params say 8 and 1", "arity");
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
