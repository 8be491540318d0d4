// The Rnn family: RNN, LSTM and GRU (one Rnn step each; every direction, layout, optional input
// and ONNX activation).
#include <cctype>
#include <cmath>
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "kernels/kernels.h"

namespace jetplan::converter::ops {

namespace {

std::vector<float> attr_floats(const Node& node, const std::string& name) {
  auto it = node.attrs.find(name);
  if (it == node.attrs.end()) return {};
  if (it->second.kind != Attribute::Kind::kFloats)
    fail("node ", node_label(node), ": attribute '", name, "' must be a list of floats");
  return it->second.floats;
}

// ---------------------------------------------------------------------------- recurrent

struct ActivationName {
  const char* name;
  kernels::RnnActivationKind kind;
  bool takes_alpha, takes_beta;
};

// The activations ONNX allows in RNN, LSTM and GRU (kernels/kernels.h, RnnActivationKind).
constexpr ActivationName kRnnActivations[] = {
    {"Affine", kernels::RnnActivationKind::kAffine, true, true},
    {"Elu", kernels::RnnActivationKind::kElu, true, false},
    {"HardSigmoid", kernels::RnnActivationKind::kHardSigmoid, true, true},
    {"LeakyRelu", kernels::RnnActivationKind::kLeakyRelu, true, false},
    {"Relu", kernels::RnnActivationKind::kRelu, false, false},
    {"ScaledTanh", kernels::RnnActivationKind::kScaledTanh, true, true},
    {"Sigmoid", kernels::RnnActivationKind::kSigmoid, false, false},
    {"Softplus", kernels::RnnActivationKind::kSoftplus, false, false},
    {"Softsign", kernels::RnnActivationKind::kSoftsign, false, false},
    {"Tanh", kernels::RnnActivationKind::kTanh, false, false},
    {"ThresholdedRelu", kernels::RnnActivationKind::kThresholdedRelu, true, false},
};

bool same_name_ignoring_case(const std::string& a, const char* b) {
  size_t i = 0;
  for (; i < a.size() && b[i] != 0; ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return i == a.size() && b[i] == 0;
}

// The cell's functions for every direction, in the order of RnnParams.activations. Names match
// without regard to case (as onnxruntime); activation_alpha and activation_beta are consumed in
// list order by the functions that take them, the others get the standalone ops' defaults.
// Returns a reason when the node cannot be read; ConvertError when its attributes are wrong.
std::string rnn_activations(const Node& node, kernels::RnnCell cell, int64_t directions,
                            std::vector<fb::RnnActivation>* out) {
  const int per_direction = kernels::rnn_activation_count(cell);
  const size_t count = static_cast<size_t>(per_direction * directions);
  std::vector<std::string> names;
  auto it = node.attrs.find("activations");
  if (it == node.attrs.end()) {
    for (int64_t d = 0; d < directions; ++d)
      for (int k = 0; k < per_direction; ++k) {
        const kernels::RnnActivationKind kind = kernels::rnn_default_activation(cell, k);
        for (const ActivationName& a : kRnnActivations)
          if (a.kind == kind) names.push_back(a.name);
      }
  } else if (it->second.kind != Attribute::Kind::kStrings) {
    fail("node ", node_label(node), ": attribute 'activations' must be a list of strings");
  } else if (names = it->second.strings; names.size() != count) {
    fail("node ", node_label(node), ": 'activations' lists ", names.size(), " functions, ",
         node.op_type, " needs ", count, " (", per_direction, " per direction)");
  }
  const std::vector<float> alphas = attr_floats(node, "activation_alpha");
  const std::vector<float> betas = attr_floats(node, "activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  out->clear();
  for (const std::string& name : names) {
    const ActivationName* found = nullptr;
    for (const ActivationName& a : kRnnActivations)
      if (same_name_ignoring_case(name, a.name)) found = &a;
    if (found == nullptr)
      fail("node ", node_label(node), ": unknown activation '", name, "' (", node.op_type,
           " takes Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
           "HardSigmoid, Elu, Softsign, Softplus)");
    kernels::RnnActivation act = kernels::rnn_activation_defaults(found->kind);
    if (found->takes_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (found->takes_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    out->push_back(
        fb::RnnActivation(static_cast<fb::RnnActivationKind>(act.kind), act.alpha, act.beta));
  }
  return "";
}

int64_t attr_flag(const Node& node, const char* name) {
  const int64_t v = attr_int(node, name, 0);
  if (v != 0 && v != 1) fail("node ", node_label(node), ": ", name, " must be 0 or 1, not ", v);
  return v;
}

// RNN, LSTM, GRU (opsets 7 to 14; older models arrive upgraded to 7).
std::string check_rnn(Graph& g, Node& node) {
  const std::string& op = node.op_type;
  const kernels::RnnCell cell = op == "LSTM"  ? kernels::RnnCell::kLstm
                                : op == "GRU" ? kernels::RnnCell::kGru
                                              : kernels::RnnCell::kRnn;
  const bool lstm = cell == kernels::RnnCell::kLstm;
  const size_t max_inputs = lstm ? 8 : 6, max_outputs = lstm ? 3 : 2;
  if (node.inputs.size() > max_inputs || node.outputs.size() > max_outputs)
    fail("node ", node_label(node), ": ", node.inputs.size(), " inputs and ", node.outputs.size(),
         " outputs (", op, " has at most ", max_inputs, " and ", max_outputs, ")");
  const char* roles[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  for (size_t i = 0; i < max_inputs; ++i) {
    if (i == 4 || !has_input(node, i)) {
      if (i < 3) input(g, node, i);  // names the missing required input
      continue;
    }
    if (input(g, node, i).dtype != DataType::kFloat32)
      return not_float(input(g, node, i), roles[i]);
  }
  if (has_input(node, 4) && input(g, node, 4).dtype != DataType::kInt32)
    return cat("sequence_lens '", input(g, node, 4).name, "' is ",
               dtype_name(input(g, node, 4).dtype), " (ONNX requires int32)");

  RnnDesc& d = node.op.rnn;
  d = RnnDesc{};
  d.cell = static_cast<fb::RnnCell>(cell);
  const std::string direction = attr_string(node, "direction", "forward");
  if (direction == "forward")
    d.direction = fb::RnnDirection::Forward;
  else if (direction == "reverse")
    d.direction = fb::RnnDirection::Reverse;
  else if (direction == "bidirectional")
    d.direction = fb::RnnDirection::Bidirectional;
  else
    fail("node ", node_label(node), ": unknown direction '", direction,
         "' (forward, reverse or bidirectional)");
  d.batch_major = attr_flag(node, "layout") != 0;
  const int64_t D = d.direction == fb::RnnDirection::Bidirectional ? 2 : 1;
  const int64_t G = kernels::rnn_gate_count(cell);

  const Shape& x = input(g, node, 0).shape;
  const Shape& r = input(g, node, 2).shape;
  if (x.size() != 3)
    fail("node ", node_label(node), ": X ", shape_str(x), " must have rank 3 (",
         d.batch_major ? "[batch, seq_length, input_size]" : "[seq_length, batch, input_size]",
         ")");
  const int64_t S = d.batch_major ? x[1] : x[0], N = d.batch_major ? x[0] : x[1], I = x[2];
  const int64_t H = attr_int(node, "hidden_size", r.size() == 3 ? r[2] : 0);
  if (H < 1 || H > kMaxDim)
    fail("node ", node_label(node), ": hidden_size ", H, " must be positive (and below 2^40)");
  d.hidden_size = H;
  const Shape state = d.batch_major ? Shape{N, D, H} : Shape{D, N, H};
  const Shape expected[] = {x,   {D, G * H, I}, {D, G * H, H}, {D, 2 * G * H},
                            {N}, state,         state,         {D, 3 * H}};
  for (size_t i = 1; i < max_inputs; ++i) {
    if (!has_input(node, i)) continue;
    const Value& v = input(g, node, i);
    if (v.shape != expected[i])
      fail("node ", node_label(node), ": shape mismatch: ", roles[i], " '", v.name, "' is ",
           shape_str(v.shape), ", expected ", shape_str(expected[i]), " (hidden_size ", H, ", ", D,
           " direction", D == 2 ? "s" : "", ", X ", shape_str(x), ")");
  }

  if (std::string why = rnn_activations(node, cell, D, &d.activations); !why.empty()) return why;
  if (has_attr(node, "clip")) {
    d.has_clip = true;
    d.clip = attr_float(node, "clip", 0.f);
    if (!(d.clip >= 0.f) || !std::isfinite(d.clip))
      fail("node ", node_label(node), ": clip ", d.clip, " must be a non-negative number");
  }
  if (lstm) d.input_forget = attr_flag(node, "input_forget") != 0;
  if (cell == kernels::RnnCell::kGru)
    d.linear_before_reset = attr_flag(node, "linear_before_reset") != 0;

  d.has_bias = has_input(node, 3);
  d.has_sequence_lens = has_input(node, 4);
  d.has_initial_h = has_input(node, 5);
  d.has_initial_c = has_input(node, 6);
  d.has_peepholes = has_input(node, 7);
  // Outputs nothing reads are not computed: the step writes only those it lists.
  const Shape y = d.batch_major ? Shape{N, S, D, H} : Shape{S, D, N, H};
  bool* present[] = {&d.has_y, &d.has_y_h, &d.has_y_c};
  std::vector<bool> used(node.outputs.size(), false);
  bool any_used = false;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    used[i] = node.outputs[i] >= 0 && is_used(g, node.outputs[i]);
    any_used = any_used || used[i];
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] < 0) continue;
    if (!used[i] && any_used) {
      node.outputs[i] = -1;
      continue;
    }
    any_used = true;  // a node none of whose outputs is read keeps its first one
    *present[i] = true;
    set_output_typed(g, node, i, DataType::kFloat32, i == 0 ? y : state);
  }
  node.op.family = fb::OpFamily::Rnn;
  kernels::RnnParams k;
  k.cell = cell;
  k.hidden_size = H;
  node.op.workspace_bytes = static_cast<uint64_t>(kernels::cpu::rnn_workspace_bytes(k));
  return "";
}

constexpr const char* kRecurrentTypes = "float32 (sequence_lens int32)";

constexpr OpRow kRows[] = {
    {"GRU", check_rnn, kRecurrentTypes,
     "all directions, layouts, optional inputs and clip; linear_before_reset 0 and 1; every "
     "ONNX activation (with activation_alpha/beta)"},
    {"LSTM", check_rnn, kRecurrentTypes,
     "all directions, layouts, optional inputs (peepholes too) and clip; input_forget; every "
     "ONNX activation (with activation_alpha/beta)"},
    {"RNN", check_rnn, kRecurrentTypes,
     "all directions, layouts, optional inputs and clip; every ONNX activation (with "
     "activation_alpha/beta)"},
};

StepParamsOffset serialize_rnn(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const RnnDesc& d = s.op.rnn;
  const auto activations = fbb.CreateVectorOfStructs(d.activations);
  const auto p = fb::CreateRnnParams(
      fbb, d.cell, d.direction, d.batch_major, d.hidden_size, activations, d.clip, d.has_clip,
      d.input_forget, d.linear_before_reset, d.has_bias, d.has_sequence_lens, d.has_initial_h,
      d.has_initial_c, d.has_peepholes, d.has_y, d.has_y_h, d.has_y_c);
  return params(p);
}

}  // namespace

const FamilyRules rnn_rules = {serialize_rnn, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
