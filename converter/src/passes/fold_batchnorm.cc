// BatchNormalization after a Conv is an affine map per output channel, so it folds into the
// conv's weights and bias: with s = scale / sqrt(var + eps),
//   w'[c] = w[c] * s[c],   b'[c] = (b[c] - mean[c]) * s[c] + bn_bias[c].
// Computed in double and rounded once, so the folded conv matches conv + BN to float rounding.
#include <cmath>

#include "converter/src/passes/passes.h"

namespace jetplan::converter {
namespace {

bool is_const(const Graph& g, int v) { return v >= 0 && g.values[v].is_constant; }

bool foldable(const Graph& g, const Node& bn, const std::vector<std::vector<int>>& users) {
  const int y = bn.inputs[0];
  const Value& conv_out = g.values[y];
  if (conv_out.producer < 0 || conv_out.graph_output || users[y].size() != 1) return false;
  const Node& conv = g.nodes[conv_out.producer];
  if (conv.dead || conv.op.family != fb::OpFamily::Conv || conv.op.has_residual ||
      conv.op.act.kind != fb::ActivationKind::None)
    return false;
  if (!is_const(g, conv.inputs[1])) return false;
  if (conv.inputs.size() > 2 && conv.inputs[2] >= 0 && !is_const(g, conv.inputs[2])) return false;
  for (size_t i = 1; i <= 4; ++i)
    if (!is_const(g, bn.inputs[i])) return false;
  return true;
}

}  // namespace

void fold_batchnorm(Graph& g) {
  const std::vector<std::vector<int>> users = g.consumers();
  for (Node& bn : g.nodes) {
    if (bn.dead || !bn.op.resolved || bn.op.family != fb::OpFamily::BatchNorm) continue;
    if (!foldable(g, bn, users)) continue;
    Node& conv = g.nodes[g.values[bn.inputs[0]].producer];
    const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] >= 0;

    const std::vector<double> w = read_doubles(g.values[conv.inputs[1]]);
    const std::vector<double> scale = read_doubles(g.values[bn.inputs[1]]);
    const std::vector<double> shift = read_doubles(g.values[bn.inputs[2]]);
    const std::vector<double> mean = read_doubles(g.values[bn.inputs[3]]);
    const std::vector<double> var = read_doubles(g.values[bn.inputs[4]]);
    const std::vector<double> b =
        has_bias ? read_doubles(g.values[conv.inputs[2]]) : std::vector<double>(scale.size(), 0.0);
    const size_t channels = scale.size();
    const size_t per_channel = w.size() / channels;
    std::vector<double> new_w(w.size()), new_b(channels);
    for (size_t c = 0; c < channels; ++c) {
      const double s = scale[c] / std::sqrt(var[c] + static_cast<double>(bn.op.epsilon));
      for (size_t i = 0; i < per_channel; ++i)
        new_w[c * per_channel + i] = w[c * per_channel + i] * s;
      new_b[c] = (b[c] - mean[c]) * s + shift[c];
    }

    // New values: the originals may be shared with other nodes.
    Value weight;
    weight.name = g.values[conv.inputs[1]].name + "+" + bn.name;
    weight.dtype = DataType::kFloat32;
    weight.shape = g.values[conv.inputs[1]].shape;
    weight.shape_known = weight.is_constant = true;
    weight.data = write_doubles(DataType::kFloat32, new_w);
    Value bias;
    bias.name = (has_bias ? g.values[conv.inputs[2]].name : conv.name + ".bias") + "+" + bn.name;
    bias.dtype = DataType::kFloat32;
    bias.shape = {static_cast<int64_t>(channels)};
    bias.shape_known = bias.is_constant = true;
    bias.data = write_doubles(DataType::kFloat32, new_b);

    const int weight_id = g.add_value(std::move(weight));
    const int bias_id = g.add_value(std::move(bias));
    conv.inputs.resize(3);
    conv.inputs[1] = weight_id;
    conv.inputs[2] = bias_id;
    conv.outputs = {bn.outputs[0]};
    conv.name += "+" + bn.name;
    g.values[bn.outputs[0]].producer = g.values[bn.inputs[0]].producer;
    bn.dead = true;
  }
  g.compact();
}

}  // namespace jetplan::converter
