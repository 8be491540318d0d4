// Contract rules of the normalizing families (schemas/plan.fbs SoftmaxParams, BatchNormParams,
// InstanceNormParams, LayerNormParams, GroupNormParams, LrnParams): float32 only, the output of
// the data input's shape.
#include "tests/contract/step_contract.h"

namespace jetplan::converter::testing::contract {
namespace {

// InstanceNorm, GroupNorm and Lrn: x [N, C, ...] first, y of its shape.
void normalization_shape(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  c.expect(!c.in.empty() && c.in[0] == c.y && c.in[0].size() >= 2, "normalization shape");
}

}  // namespace

void contract_softmax(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  const auto* p = c.step->params_as_SoftmaxParams();
  const int64_t r = static_cast<int64_t>(c.y.size());
  c.expect(p && c.in.size() == 1 && c.in[0] == c.y && p->axis() >= -r && p->axis() < r,
           "softmax");
}

// Inputs x, scale, bias, mean, var; the four parameters [C] for x [N, C, ...].
void contract_batch_norm(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  const auto& in = c.in;
  if (!c.step->params_as_BatchNormParams() || in.size() != 5)
    return c.bad("step ", c.name, " bn");
  c.expect(in[0].size() >= 2 && in[0] == c.y, "bn shapes");
  for (size_t i = 1; i < 5; ++i) c.expect(in[i] == Shape{in[0][1]}, "bn parameter shape");
}

void contract_instance_norm(StepContract& c) { normalization_shape(c); }

void contract_group_norm(StepContract& c) { normalization_shape(c); }

void contract_lrn(StepContract& c) { normalization_shape(c); }

void contract_layer_norm(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  const auto* p = c.step->params_as_LayerNormParams();
  c.expect(p && c.in.size() >= 2 && c.in[0] == c.y, "layernorm shape");
  // RMSNormalization: no mean to write, no bias in ONNX's op.
  if (p && p->rms()) c.expect(!p->has_mean() && !p->has_bias(), "rms layernorm has mean or bias");
}

}  // namespace jetplan::converter::testing::contract
