#include "converter/src/precision/int8_precision.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "converter/src/ir/error.h"
#include "converter/src/precision/explicit_qdq.h"
#include "converter/src/precision/int8_gemm.h"
#include "converter/src/precision/int8_saturate.h"
#include "converter/src/precision/int8_weights.h"

namespace jetplan::converter {
namespace {

constexpr float kQMax = 127.f;

// Steps next to INT8 steps that may run on Int8 (Int8Pass::mover_candidate): data movement,
// which keeps its input's scale; the Add, which requantizes; a float Binary or LayerNorm writing
// Int8.
enum class Mover : uint8_t { kNone, kMaxPool, kConcat, kResize, kMove, kAdd, kToInt8 };

bool positive_finite(float v) { return v > 0.f && std::isfinite(v); }

class Int8Pass {
 public:
  Int8Pass(PlanDraft* draft, const Int8Options& options) : d_(*draft), o_(options) {}

  Int8Summary run() {
    // GEMMs with constant weights become 1x1 convs first (int8_gemm.h), where their A and y
    // have scales and they are not excluded; from here on they are convs like any other.
    index_readers();
    for (std::string& name : gemms_as_convs(&d_, [&](const DraftStep& s, uint32_t a, uint32_t y) {
           return !excluded(s) && scale(a) != 0.f && scale(y) != 0.f;
         }))
      gemms_.insert(std::move(name));
    index_readers();
    std::vector<std::string> why(d_.steps.size());
    padded_.assign(d_.steps.size(), 0);
    for (size_t s = 0; s < d_.steps.size(); ++s) {
      candidate_[s] = eligible(s, &why[s]);
      const DraftStep& c = d_.steps[s];
      const int64_t cin = candidate_[s] ? d_.tensors[c.inputs[0]].shape[3] : 0;
      if (candidate_[s] && int8_padded_channels(c.op.groups, cin) != cin)
        padded_[s] = int8_padded_channels(c.op.groups, cin);
    }
    for (size_t s = 0; s < d_.steps.size(); ++s)
      if (d_.steps[s].op.family == fb::OpFamily::Conv && !candidate_[s])
        summary_.kept_fp16.push_back(cat("'", d_.steps[s].name, "': ", why[s]));
    // Data movement runs on Int8 where its tensors can be Int8 (decide_movers()), and those
    // tensors then share one scale (scale_classes()).
    decide_movers();
    for (size_t s = 0; s < d_.steps.size(); ++s) {
      summary_.int8_pools += mover_[s] == Mover::kMaxPool ? 1 : 0;
      summary_.int8_concats += mover_[s] == Mover::kConcat ? 1 : 0;
      summary_.int8_resizes += mover_[s] == Mover::kResize ? 1 : 0;
      summary_.int8_adds += mover_[s] == Mover::kAdd ? 1 : 0;
      const fb::OpFamily f = d_.steps[s].op.family;
      const bool to_int8 = mover_[s] == Mover::kToInt8;
      summary_.int8_binary_outputs += to_int8 && f == fb::OpFamily::Binary ? 1 : 0;
      summary_.int8_norm_outputs += to_int8 && f == fb::OpFamily::LayerNorm ? 1 : 0;
      summary_.int8_attention_outputs += to_int8 && f == fb::OpFamily::Attention ? 1 : 0;
    }
    input_twin_.assign(d_.tensors.size(), false);
    for (const DraftStep& w : d_.steps) {
      if (w.op.family != fb::OpFamily::Transpose || w.inputs.size() != 1 ||
          w.outputs.size() != 1 || d_.tensors[w.inputs[0]].storage != fb::Storage::Binding)
        continue;
      const uint32_t x = w.outputs[0];
      bool int8_readers_only = !readers_[x].empty();
      for (const auto& [step, k] : readers_[x]) int8_readers_only &= candidate_[step] && k == 0;
      input_twin_[x] = int8_readers_only;
      const std::vector<int> to_nhwc = {0, 2, 3, 1};
      if (int8_readers_only && w.op.perm == to_nhwc) nchw_source_[x] = w.inputs[0];
    }

    std::vector<DraftStep> steps = std::move(d_.steps);
    d_.steps.clear();
    for (size_t s = 0; s < steps.size(); ++s) {
      if (candidate_[s]) rewrite(steps[s], padded_[s]);
      // An Int8 Concat's Float inputs are quantized with the Concat's scale in front of it.
      if (mover_[s] == Mover::kConcat)
        for (uint32_t& i : steps[s].inputs) i = quantized(i);
      if (mover_[s] == Mover::kAdd) add_scales(steps[s]);
      if (mover_[s] == Mover::kToInt8) to_int8(steps[s]);
      d_.steps.push_back(std::move(steps[s]));
    }
    drop_unread_input_twins();
    for (uint32_t t = 0; t < int8_.size(); ++t) {
      if (!int8_[t]) continue;
      DraftTensor& tensor = d_.tensors[t];
      tensor.dtype = DataType::kInt8;
      tensor.size_bytes = tensor.size_bytes / 4;
      ++summary_.int8_tensors;
    }
    summary_.saturation_steps += saturate_explicit(&d_, o_.scales, int8_);
    return summary_;
  }

 private:
  DraftTensor& t(uint32_t i) { return d_.tensors[i]; }

  void index_readers() {
    readers_.assign(d_.tensors.size(), {});
    writer_.assign(d_.tensors.size(), -1);
    candidate_.assign(d_.steps.size(), false);
    mover_.assign(d_.steps.size(), Mover::kNone);
    mover_input_.assign(d_.steps.size(), 0);
    class_of_.clear();
    view_input_.assign(d_.steps.size(), -1);
    int8_.assign(d_.tensors.size(), false);
    for (size_t s = 0; s < d_.steps.size(); ++s) {
      for (size_t k = 0; k < d_.steps[s].inputs.size(); ++k)
        readers_[d_.steps[s].inputs[k]].push_back({s, k});
      for (uint32_t o : d_.steps[s].outputs) writer_[o] = static_cast<int>(s);
      const DraftStep& v = d_.steps[s];
      if (v.inputs.size() == 1 && v.outputs.size() == 1 &&
          d_.tensors[v.inputs[0]].dtype == d_.tensors[v.outputs[0]].dtype &&
          (v.op.family == fb::OpFamily::Copy || v.op.family == fb::OpFamily::Transpose))
        view_input_[s] = v.inputs[0];
    }
  }


  // An activation tensor's scale. Tensors joined by Int8 data movement (decide_movers()) share
  // their class's (scale_classes()). Otherwise the model's own (explicit quantization), else its
  // calibrated amax / 127; 0 where it has neither. An Int8 max pool's or resize's output has
  // its input's: it moves (or, linear, interpolates) the input's integers in the same units.
  // A view without a range of its own (a Reshape's output: the calibration's FP32 plan reads it
  // in place of its input) has its input's, the same values; so has a Transpose's output (the
  // layout transposes gpu_layout adds, a channel shuffle's permutation): it moves the same
  // values.
  float scale(uint32_t i) const {
    if (const auto c = class_of_.find(i); c != class_of_.end()) return class_scale_[c->second];
    return own_scale(i);
  }
  float own_scale(uint32_t i) const {
    const int w = writer_[i];
    if (w >= 0 && (mover_[static_cast<size_t>(w)] == Mover::kMaxPool ||
                   mover_[static_cast<size_t>(w)] == Mover::kResize ||
                   mover_[static_cast<size_t>(w)] == Mover::kMove))
      return own_scale(mover_input_[static_cast<size_t>(w)]);
    const float named = named_scale(d_.tensors[i].name);
    if (named != 0.f || w < 0 || view_input_[static_cast<size_t>(w)] < 0) return named;
    return own_scale(static_cast<uint32_t>(view_input_[static_cast<size_t>(w)]));
  }
  float named_scale(const std::string& tensor_name) const {
    const std::string name = draft_graph_name(tensor_name);
    if (const auto it = o_.scales.find(name); it != o_.scales.end())
      return positive_finite(it->second) ? it->second : 0.f;
    const auto it = o_.amax.find(name);
    return it == o_.amax.end() || !positive_finite(it->second) ? 0.f : it->second / kQMax;
  }

  bool excluded(const DraftStep& s) const {
    if (o_.exclude.count(s.name) != 0) return true;
    // A fused step is named after its nodes joined by '+'.
    size_t start = 0;
    while (start <= s.name.size()) {
      const size_t end = std::min(s.name.find('+', start), s.name.size());
      if (o_.exclude.count(s.name.substr(start, end - start)) != 0) return true;
      start = end + 1;
    }
    return false;
  }

  // A Conv the INT8 kernels take (2-D NHWC, of a channel form int8_conv_form_refusal takes,
  // constant weights and bias) whose input and output have scales, and not a conv on one pixel
  // an image at fewer than kInt8GemmMinRows images unless the model gives its input a scale
  // (Q/DQ models are honoured as given); `why` says what stops one that is not.
  bool eligible(size_t si, std::string* why) const {
    const DraftStep& s = d_.steps[si];
    if (s.op.family != fb::OpFamily::Conv) return false;
    const DraftTensor& x = d_.tensors[s.inputs[0]];
    const DraftTensor& w = d_.tensors[s.inputs[1]];
    const DraftTensor& y = d_.tensors[s.outputs[0]];
    const bool bias = s.inputs.size() - (s.op.has_residual ? 1 : 0) == 3;
    if (excluded(s)) *why = "excluded (--int8-exclude)";
    else if (x.layout != fb::Layout::NHWC || s.op.kernel.size() != 2 || x.shape.size() != 4 ||
             y.shape.size() != 4)
      *why = "not a 2-D NHWC conv";
    else if (const char* no = int8_conv_form_refusal(s.op.groups, x.shape[3], y.shape[3]))
      *why = no;
    else if (x.dtype != DataType::kFloat32 || w.storage != fb::Storage::Weight ||
             w.dtype != DataType::kFloat32 ||
             (bias && d_.tensors[s.inputs[2]].storage != fb::Storage::Weight))
      *why = "weights or bias computed at run time";
    else if (y.storage != fb::Storage::Arena || s.op.y_channel_offset != 0)
      *why = "writes a graph output";
    else if (y.shape.size() == 4 && y.shape[1] * y.shape[2] == 1 &&
             y.shape[0] < kInt8GemmMinRows && o_.scales.count(draft_graph_name(x.name)) == 0)
      *why = cat("one output pixel an image and fewer than ", kInt8GemmMinRows,
                 " images (a squeeze-excitation or head conv on a pooled vector): latency-bound, "
                 "where INT8 gains nothing and would cost a quantize step");
    else if (scale(s.inputs[0]) == 0.f || scale(s.outputs[0]) == 0.f)
      *why = "input or output has no scale (not calibrated, or no positive finite range)";
    else
      return true;
    return false;
  }

  // Which data movement may run on Int8, before its tensors are decided (decide_movers()):
  //   kMaxPool  a MaxPool, channels_last (max_pool_int8)
  //   kConcat   a Concat (a byte copy once its inputs and output share one scale)
  //   kResize   a nearest or linear Resize (resize_int8), not tf_crop_and_resize (whose
  //             extrapolation value has no Int8 form)
  //   kMove     a Copy or a Transpose: the same values moved (or viewed), as a ViT's batch-first
  //             Transpose or the [M, 1, 1, K] view an INT8 GEMM reads of a LayerNorm's output
  //   kAdd      an Add of two tensors of its output's shape (a residual Add no conv epilogue
  //             took), with no activation or a piecewise-linear one (binary_add_int8: the
  //             GPU's bits); it requantizes, so its tensors keep their own scales
  //   kToInt8   a float Binary (Add, Sub, Mul, Div, Max, Min, PRelu, with no activation or a
  //             piecewise-linear one) whose output only INT8 steps read, as a squeeze-
  //             excitation Mul in front of an INT8 conv: it writes Int8 with its output's own
  //             scale (binary_to_int8) instead of Float16 and a quantize step; its inputs stay
  //             float. An Add that cannot take Int8 inputs falls back to this. So do a
  //             LayerNorm without statistics outputs (layer_norm_to_int8: ln_1 and ln_2) and a
  //             fused Attention (attention_to_int8) in front of INT8 GEMMs
  // none of them excluded, and for data movement, where the model gives its tensors scales,
  // one scale (moving the integers as they are keeps every given scale only then; TensorRT
  // asks the same of Q/DQ models).
  Mover mover_candidate(size_t si) {
    const DraftStep& s = d_.steps[si];
    mover_input_[si] = s.inputs.empty() ? 0 : s.inputs[0];
    if (s.inputs.empty() || s.outputs.size() != 1 || excluded(s)) return Mover::kNone;
    Mover kind = Mover::kNone;
    if (s.op.family == fb::OpFamily::Pool && s.op.pool_kind == fb::PoolKind::Max &&
        s.inputs.size() == 1 && d_.tensors[s.inputs[0]].layout == fb::Layout::NHWC)
      kind = Mover::kMaxPool;
    else if (s.op.family == fb::OpFamily::Concat)
      kind = Mover::kConcat;
    else if (add_candidate(s))
      return Mover::kAdd;
    else if (to_int8_candidate(s))
      return Mover::kToInt8;
    else if (s.op.family == fb::OpFamily::Resize && s.inputs.size() == 1 &&
             (s.op.resize.mode == fb::ResizeMode::Nearest ||
              s.op.resize.mode == fb::ResizeMode::Linear) &&
             s.op.resize.coord != fb::ResizeCoord::TfCropAndResize)
      kind = Mover::kResize;
    else if (s.inputs.size() == 1 && (s.op.family == fb::OpFamily::Copy ||
                                      s.op.family == fb::OpFamily::Transpose))
      kind = Mover::kMove;
    std::set<float> given;
    for (const std::vector<uint32_t>* list : {&s.inputs, &s.outputs})
      for (uint32_t i : *list)
        if (const auto it = o_.scales.find(draft_graph_name(d_.tensors[i].name)); it != o_.scales.end())
          given.insert(it->second);
    return given.size() <= 1 ? kind : Mover::kNone;
  }

  // Decides the Int8 data movement and the Int8 tensors together: every candidate to start
  // with, then those whose tensors cannot be Int8 are dropped until none changes (each round
  // only drops, so this ends). A pool or resize needs its input and output Int8; a Concat its
  // output and at least one input (a Float input is quantized in front of it: smaller than
  // quantizing the Concat's output for its readers, and its Int8 inputs stay Int8 for their
  // other readers, as a U-Net's skip connections and pools). Where the model gives the tensors
  // of one scale class two scales, the class's movers are dropped too.
  void decide_movers() {
    for (size_t s = 0; s < d_.steps.size(); ++s) mover_[s] = mover_candidate(s);
    for (bool changed = true; changed;) {
      changed = false;
      class_of_.clear();
      for (uint32_t t = 0; t < d_.tensors.size(); ++t) int8_[t] = stays_int8(t);
      for (size_t s = 0; s < d_.steps.size(); ++s) {
        if (mover_[s] == Mover::kNone || mover_ok(d_.steps[s], mover_[s])) continue;
        const bool float_inputs = mover_[s] == Mover::kAdd && to_int8_candidate(d_.steps[s]);
        mover_[s] = float_inputs ? Mover::kToInt8 : Mover::kNone;
        changed = true;
      }
      if (!changed) changed = !scale_classes();
    }
  }

  bool add_candidate(const DraftStep& s) const {
    if (s.op.family != fb::OpFamily::Binary || s.op.binary != fb::BinaryOp::Add ||
        s.inputs.size() != 2)
      return false;
    if (!linear_act(s.op.act.kind)) return false;
    const Shape& y = d_.tensors[s.outputs[0]].shape;
    return d_.tensors[s.inputs[0]].shape == y && d_.tensors[s.inputs[1]].shape == y;
  }

  // Piecewise-linear activations only: the GPU and the CPU twin then round the same real value.
  static bool linear_act(fb::ActivationKind act) {
    return act == fb::ActivationKind::None || act == fb::ActivationKind::Relu ||
           act == fb::ActivationKind::Clip || act == fb::ActivationKind::LeakyRelu;
  }

  bool to_int8_candidate(const DraftStep& s) const {
    if (s.outputs.size() != 1 || !linear_act(s.op.act.kind) || excluded(s)) return false;
    const bool binary = s.op.family == fb::OpFamily::Binary && s.inputs.size() == 2 &&
                        s.op.binary != fb::BinaryOp::Pow;
    const bool norm = s.op.family == fb::OpFamily::LayerNorm && !s.inputs.empty();
    const bool attention = s.op.family == fb::OpFamily::Attention && s.inputs.size() >= 3;
    if (!binary && !norm && !attention) return false;
    // Its float inputs become Float16 in a GPU plan (the kernels read one dtype): activations
    // and weights, not graph inputs or tensors kept in Float32.
    for (uint32_t i : s.inputs) {
      const DraftTensor& x = d_.tensors[i];
      if (x.dtype != DataType::kFloat32 || x.storage == fb::Storage::Binding || x.keep_float32)
        return false;
    }
    return true;
  }

  bool mover_ok(const DraftStep& s, Mover kind) const {
    if (!int8_[s.outputs[0]]) return false;
    if (kind == Mover::kToInt8)  // the runtime needs 1 / y's scale finite
      return std::isfinite(1.f / own_scale(s.outputs[0]));
    if (kind == Mover::kAdd)  // the runtime needs 1 / y's scale finite
      return int8_[s.inputs[0]] && int8_[s.inputs[1]] &&
             std::isfinite(1.f / own_scale(s.outputs[0]));
    if (kind != Mover::kConcat) return int8_[s.inputs[0]];
    bool any = false;
    for (uint32_t i : s.inputs) {
      any = any || int8_[i];
      const DraftTensor& x = d_.tensors[i];
      if (!int8_[i] && (x.storage == fb::Storage::Weight || x.dtype != DataType::kFloat32 ||
                        own_scale(i) == 0.f))
        return false;
    }
    return any;
  }

  // Not a mover whose tensors share one scale: none, or one that requantizes into its output's.
  static bool no_scale_class(Mover m) {
    return m == Mover::kNone || m == Mover::kAdd || m == Mover::kToInt8;
  }

  // The tensors each Int8 mover joins share one scale, so the movers copy integers and never
  // requantize: an INT8 conv writing one of them (a Concat's input, a pool's input) writes with
  // it, a quantize step in front of a Concat quantizes with it. A class's scale is the largest
  // of its tensors' own scales, so no calibrated range clips: a Concat's output holds all its
  // inputs' values, so its range bounds theirs and the inputs of smaller range only get a
  // coarser step, where the smallest scale would saturate the others (a pool's or resize's
  // output never leaves its input's range, so its own range counts as its input's). A scale
  // the model gives wins. False (and the class's movers dropped) where the model gives one
  // class two scales.
  bool scale_classes() {
    std::vector<uint32_t> root(d_.tensors.size());
    for (uint32_t t = 0; t < root.size(); ++t) root[t] = t;
    auto find = [&](uint32_t t) {
      while (root[t] != t) t = root[t] = root[root[t]];
      return t;
    };
    for (size_t s = 0; s < d_.steps.size(); ++s) {
      if (no_scale_class(mover_[s])) continue;
      for (uint32_t i : d_.steps[s].inputs) root[find(i)] = find(d_.steps[s].outputs[0]);
    }
    std::map<uint32_t, size_t> index;  // class root -> class
    std::vector<std::set<float>> given;
    class_scale_.clear();
    for (size_t s = 0; s < d_.steps.size(); ++s) {
      if (no_scale_class(mover_[s])) continue;
      for (const std::vector<uint32_t>* list : {&d_.steps[s].inputs, &d_.steps[s].outputs})
        for (uint32_t i : *list) {
          const auto [it, fresh] = index.emplace(find(i), class_scale_.size());
          if (fresh) {
            class_scale_.push_back(0.f);
            given.emplace_back();
          }
          class_of_[i] = it->second;
          class_scale_[it->second] = std::max(class_scale_[it->second], own_scale(i));
          if (const auto g = o_.scales.find(draft_graph_name(d_.tensors[i].name)); g != o_.scales.end())
            given[it->second].insert(g->second);
        }
    }
    for (size_t c = 0; c < class_scale_.size(); ++c)
      if (given[c].size() == 1) class_scale_[c] = *given[c].begin();
    bool agree = true;
    for (size_t s = 0; s < d_.steps.size(); ++s) {
      if (no_scale_class(mover_[s]) || given[class_of_[d_.steps[s].outputs[0]]].size() <= 1)
        continue;
      mover_[s] = Mover::kNone;
      agree = false;
    }
    if (!agree) class_of_.clear();
    return agree;
  }

  // An activation is stored as Int8 when an INT8 conv (or Int8 data movement, or a Binary into
  // Int8) writes it and every reader is an INT8 conv taking it as input or residual, or Int8
  // data movement (not a Binary into Int8: it reads float).
  bool stays_int8(uint32_t i) const {
    const DraftTensor& tensor = d_.tensors[i];
    if (tensor.storage != fb::Storage::Arena || tensor.alias_of >= 0 || writer_[i] < 0 ||
        readers_[i].empty())
      return false;
    const size_t w = static_cast<size_t>(writer_[i]);
    if ((!candidate_[w] && mover_[w] == Mover::kNone) || own_scale(i) == 0.f) return false;
    for (const auto& [step, k] : readers_[i]) {
      const DraftStep& r = d_.steps[step];
      if (mover_[step] == Mover::kToInt8) return false;
      if (mover_[step] != Mover::kNone) continue;
      const bool residual = r.op.has_residual && k + 1 == r.inputs.size();
      if (!candidate_[step] || (k != 0 && !residual)) return false;
      if (k == 0 && padded_[step] != 0) return false;  // it reads its own padded Quantize step
    }
    return true;
  }

  uint32_t add_weight(const std::string& name, DataType dtype, Shape shape,
                      std::vector<uint8_t> bytes, bool keep_float32) {
    DraftTensor n;
    n.name = name;
    n.dtype = dtype;
    n.shape = std::move(shape);
    n.storage = fb::Storage::Weight;
    n.size_bytes = bytes.size();
    n.keep_float32 = keep_float32;
    n.data = &d_.owned_data.emplace_back(std::move(bytes));
    d_.tensors.push_back(std::move(n));
    return static_cast<uint32_t>(d_.tensors.size() - 1);
  }

  // The Int8 twin of Float32 activation x: a Quantize step (added now, in front of the first
  // INT8 conv that reads x) with x's scale. With cp, x [N, H, W, C] with its channels padded to
  // cp, for an INT8 conv whose Cin is not a multiple of 8 (an RGB stem): a Quantize step of the
  // image form (kernels/quantize.h), the padding 0; where x is a graph input's NHWC twin, the
  // step reads the NCHW input itself, so the twin's Transpose goes (drop_unread_input_twins()).
  uint32_t quantized(uint32_t x, int64_t cp = 0) {
    if (int8_[x] && cp == 0) return x;
    if (auto it = quantized_.find({x, cp}); it != quantized_.end()) return it->second;
    const auto nchw = cp != 0 ? nchw_source_.find(x) : nchw_source_.end();
    if (nchw == nchw_source_.end() && input_twin_[x]) t(x).keep_float32 = true;
    const float x_scale = scale(x);
    std::vector<uint8_t> bytes(4);
    std::memcpy(bytes.data(), &x_scale, 4);
    const std::string suffix = cp != 0 ? cat(":i8c", cp) : std::string(":i8");
    const uint32_t s =
        add_weight(t(x).name + suffix + "_scale", DataType::kFloat32, {1}, bytes, true);
    DraftTensor q = t(x);
    q.name += suffix;
    q.dtype = DataType::kInt8;
    if (cp != 0) q.shape[3] = cp;
    q.size_bytes = static_cast<uint64_t>(shape_count(q.shape));
    q.storage = fb::Storage::Arena;
    q.binding = -1;
    q.output_binding = false;
    q.alias_of = -1;
    d_.tensors.push_back(std::move(q));
    const uint32_t qi = static_cast<uint32_t>(d_.tensors.size() - 1);
    DraftStep step;
    step.name = t(x).name + ":to_" + suffix.substr(1);
    step.op.resolved = true;
    step.op.family = fb::OpFamily::Quantize;
    if (cp != 0)
      step.op.quant.layout = nchw != nchw_source_.end() ? fb::QuantizeLayout::NchwToNhwcPadded
                                                        : fb::QuantizeLayout::NhwcPadded;
    step.inputs = {nchw != nchw_source_.end() ? nchw->second : x, s};
    step.outputs = {qi};
    d_.steps.push_back(std::move(step));
    quantized_[{x, cp}] = qi;
    ++summary_.quantize_steps;
    summary_.padded_inputs += cp != 0 ? 1 : 0;
    return qi;
  }

  // Removes the Transposes into graph inputs' NHWC twins that no step reads any more (their INT8
  // convs read a Quantize step of the NCHW input, quantized()).
  void drop_unread_input_twins() {
    std::vector<bool> read(d_.tensors.size(), false);
    for (const DraftStep& s : d_.steps)
      for (uint32_t i : s.inputs) read[i] = true;
    std::vector<DraftStep> kept;
    for (DraftStep& s : d_.steps) {
      const bool twin = s.op.family == fb::OpFamily::Transpose && s.outputs.size() == 1 &&
                        nchw_source_.count(s.outputs[0]) != 0 && !read[s.outputs[0]];
      if (!twin) kept.push_back(std::move(s));
    }
    d_.steps = std::move(kept);
  }

  // An Int8 Add's third input: the Float32 scales a's, b's and 1 / y's (binary_add_int8).
  void add_scales(DraftStep& s) {
    const float scales[3] = {scale(s.inputs[0]), scale(s.inputs[1]), 1.f / scale(s.outputs[0])};
    std::vector<uint8_t> bytes(sizeof scales);
    std::memcpy(bytes.data(), scales, sizeof scales);
    s.inputs.push_back(
        add_weight(s.name + ":i8_scales", DataType::kFloat32, {3}, std::move(bytes), true));
  }

  // A float step into Int8's last input: the Float32 inverse of its output's scale (binary_,
  // layer_norm_, attention_to_int8); it joins the report's INT8 steps and --int8-max-error's.
  void to_int8(DraftStep& s) {
    const float inv = 1.f / scale(s.outputs[0]);
    std::vector<uint8_t> bytes(4);
    std::memcpy(bytes.data(), &inv, 4);
    s.inputs.push_back(add_weight(s.name + ":i8_inv_scale", DataType::kFloat32, {1},
                                  std::move(bytes), true));
    std::string op = s.op.family == fb::OpFamily::LayerNorm
                         ? std::string(s.op.rms ? "RMSNorm" : "LayerNorm")
                     : s.op.family == fb::OpFamily::Attention
                         ? std::string("Attention")
                         : std::string(fb::EnumNameBinaryOp(s.op.binary));
    if (s.op.act.kind != fb::ActivationKind::None)
      op = op + "+" + fb::EnumNameActivationKind(s.op.act.kind);
    summary_.steps.push_back({s.name, t(s.outputs[0]).name, scale(s.outputs[0]), op + "->Int8"});
  }

  void rewrite(DraftStep& s, int64_t cp) {
    const uint32_t x = s.inputs[0], w = s.inputs[1], y = s.outputs[0];
    const bool has_bias = s.inputs.size() - (s.op.has_residual ? 1 : 0) == 3;
    const int64_t oc = t(w).shape[0];
    std::vector<uint8_t> wq, padded_w;
    const auto given = o_.weight_scales.find(draft_graph_name(t(w).name));
    DraftTensor wf = t(w);  // the OHWI weight, its input channels padded with zeros if need be
    if (cp != 0) wf = pad_input_channels(t(w), cp, &padded_w);
    const std::vector<float> w_scales = quantize_conv_weights(
        wf, given == o_.weight_scales.end() ? nullptr : &given->second, &wq);
    const float x_scale = scale(x);
    std::vector<float> epi(static_cast<size_t>(2 * oc), 0.f);
    for (int64_t o = 0; o < oc; ++o) {
      epi[static_cast<size_t>(o)] = x_scale * w_scales[static_cast<size_t>(o)];
      if (has_bias)
        epi[static_cast<size_t>(oc + o)] =
            reinterpret_cast<const float*>(t(s.inputs[2]).data->data())[o];
    }
    std::vector<uint8_t> epi_bytes(epi.size() * 4);
    std::memcpy(epi_bytes.data(), epi.data(), epi_bytes.size());
    const uint32_t xq = quantized(x, cp);
    const uint32_t wi =
        add_weight(t(w).name + ":i8", DataType::kInt8, wf.shape, std::move(wq), false);
    const uint32_t ei = add_weight(s.name + ":i8_epilogue", DataType::kFloat32, {2, oc},
                                   std::move(epi_bytes), true);
    std::vector<uint32_t> inputs = {xq, wi, ei};
    if (s.op.has_residual) {
      const uint32_t r = s.inputs.back();
      inputs.push_back(r);
      if (int8_[r]) s.op.residual_scale = scale(r);
    }
    s.inputs = std::move(inputs);
    if (int8_[y]) s.op.y_scale = scale(y);
    const bool gemm = gemms_.count(s.name) != 0;
    summary_.int8_gemms += gemm ? 1 : 0;
    std::string op = gemm ? "Gemm" : "Conv";
    if (s.op.has_residual) op += "+Add";
    if (s.op.act.kind != fb::ActivationKind::None)
      op = op + "+" + fb::EnumNameActivationKind(s.op.act.kind);
    summary_.steps.push_back({s.name, t(y).name, s.op.y_scale, std::move(op)});
  }

  PlanDraft& d_;
  const Int8Options& o_;
  std::vector<std::vector<std::pair<size_t, size_t>>> readers_;  // per tensor: (step, input)
  std::vector<int> writer_;
  std::vector<bool> candidate_, int8_;
  std::vector<Mover> mover_;           // per step: data movement that runs on Int8
  // Per tensor: a graph input's layout twin that only INT8 convs read. It stays Float32 in a
  // GPU plan: the quantize step then rounds the input's own values, not their FP16 roundings
  // (which move a value near a rounding tie by one unit, and the error on through every conv).
  std::vector<bool> input_twin_;
  std::vector<uint32_t> mover_input_;  // per step: input 0 (for own_scale(), while steps move)
  // The scale classes of the tensors Int8 movers join (scale_classes()): tensor -> class.
  std::map<uint32_t, size_t> class_of_;
  std::vector<float> class_scale_;
  std::vector<int64_t> view_input_;    // per step: a Copy's or Transpose's input, else -1
  std::map<std::pair<uint32_t, int64_t>, uint32_t> quantized_;  // (x, cp) -> its Int8 twin
  std::set<std::string> gemms_;  // the steps that were Gemm steps (gemms_as_convs)
  // Per step: the padded input channels of an INT8 conv whose Cin is not a multiple of 8, else 0.
  std::vector<int64_t> padded_;
  std::map<uint32_t, uint32_t> nchw_source_;  // input twin -> its NCHW graph input (quantized())
  Int8Summary summary_;
};

}  // namespace

Int8Summary int8_precision(PlanDraft* draft, const Int8Options& options) {
  return Int8Pass(draft, options).run();
}

}  // namespace jetplan::converter
