#include "converter/src/lower/gpu_lower.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <utility>

#include "converter/src/ir/error.h"
#include "converter/src/ops/registry.h"
#include "kernels/cpu/half.h"

namespace jetplan::converter {
namespace {

// Channels last and back for any rank from 3 ([N, C, L] <-> [N, L, C], [N, C, D, H, W] <->
// [N, D, H, W, C]); Layout NHWC marks a channels-last tensor of any such rank.
Shape to_nhwc(const Shape& s) {
  Shape out{s[0]};
  out.insert(out.end(), s.begin() + 2, s.end());
  out.push_back(s[1]);
  return out;
}
Shape to_nchw(const Shape& s) {
  Shape out{s[0], s.back()};
  out.insert(out.end(), s.begin() + 1, s.end() - 1);
  return out;
}
class LayoutPass {
 public:
  LayoutPass(PlanDraft* d, bool float32) : d_(*d), float32_(float32) {}

  void run() {
    std::vector<DraftStep> steps = std::move(d_.steps);
    d_.steps.clear();
    for (DraftStep& s : steps) {
      after_.clear();
      lower_step(s);
      d_.steps.push_back(std::move(s));
      for (DraftStep& a : after_) d_.steps.push_back(std::move(a));
    }
  }

 private:
  DraftTensor& t(uint32_t i) { return d_.tensors[i]; }
  bool activation4d(uint32_t i) {
    return d_.tensors[i].shape.size() == 4 && d_.tensors[i].storage != fb::Storage::Weight;
  }
  // An activation of rank 3 to 5 (1 to 3 spatial dims), the ranks a Conv takes channels last.
  bool activation_nd(uint32_t i) {
    const size_t r = d_.tensors[i].shape.size();
    return r >= 3 && r <= 5 && d_.tensors[i].storage != fb::Storage::Weight;
  }
  bool nhwc(uint32_t i) { return d_.tensors[i].layout == fb::Layout::NHWC; }
  // The NCHW shape a tensor stands for.
  Shape logical(uint32_t i) { return nhwc(i) ? to_nchw(t(i).shape) : t(i).shape; }

  uint32_t add_tensor(uint32_t like, const std::string& suffix, Shape shape, fb::Layout layout) {
    DraftTensor n;
    n.name = t(like).name + suffix;
    n.dtype = t(like).dtype;
    n.shape = std::move(shape);
    n.layout = layout;
    n.size_bytes = t(like).size_bytes;
    d_.tensors.push_back(std::move(n));
    return static_cast<uint32_t>(d_.tensors.size() - 1);
  }

  DraftStep transpose(const std::string& name, uint32_t in, uint32_t out, bool into_nhwc) {
    DraftStep s = make_step(name, fb::OpFamily::Transpose, in, out);
    s.op.perm = channels_last_perm(t(in).shape.size(), into_nhwc);
    return s;
  }

  // The NHWC twin of an activation (a Transpose before the current step makes it).
  uint32_t as_nhwc(uint32_t i) {
    if (nhwc(i)) return i;
    if (auto it = nhwc_of_.find(i); it != nhwc_of_.end()) return it->second;
    const uint32_t n = add_tensor(i, ":nhwc", to_nhwc(t(i).shape), fb::Layout::NHWC);
    d_.steps.push_back(transpose(t(i).name + ":to_nhwc", i, n, true));
    nhwc_of_[i] = n;
    return n;
  }
  uint32_t as_nchw(uint32_t i) {
    if (!nhwc(i)) return i;
    if (auto it = nchw_of_.find(i); it != nchw_of_.end()) return it->second;
    const uint32_t n = add_tensor(i, ":nchw", to_nchw(t(i).shape), fb::Layout::NCHW);
    d_.steps.push_back(transpose(t(i).name + ":to_nchw", i, n, false));
    nchw_of_[i] = n;
    return n;
  }

  // The step's output `k` becomes NHWC. A binding keeps its NCHW shape: the step writes a new
  // tensor and a Transpose after it fills the binding.
  void output_nhwc(DraftStep& s, size_t k) {
    const uint32_t o = s.outputs[k];
    if (t(o).storage == fb::Storage::Binding) {
      const uint32_t n = add_tensor(o, ":nhwc", to_nhwc(t(o).shape), fb::Layout::NHWC);
      s.outputs[k] = n;
      after_.push_back(transpose(t(o).name + ":to_nchw", n, o, false));
      nhwc_of_[o] = n;
      return;
    }
    t(o).shape = to_nhwc(t(o).shape);
    t(o).layout = fb::Layout::NHWC;
  }

  // A weight tensor's data permuted into channels last at conversion: [A, B, *rest] ->
  // [A, *rest, B] (any dtype), a new weight named `name` of `layout`.
  uint32_t permuted_constant(uint32_t w, const std::string& name, fb::Layout layout) {
    const Shape& s = t(w).shape;
    const size_t elem = dtype_size(t(w).dtype);
    const std::vector<uint8_t>& src = *t(w).data;
    std::vector<uint8_t>& dst = d_.owned_data.emplace_back(src.size());
    const int64_t co = s[0], ci = s[1];
    int64_t kvol = 1;
    for (size_t d = 2; d < s.size(); ++d) kvol *= s[d];
    for (int64_t o = 0; o < co; ++o)
      for (int64_t c = 0; c < ci; ++c)
        for (int64_t k = 0; k < kvol; ++k)
          std::memcpy(&dst[static_cast<size_t>((o * kvol + k) * ci + c) * elem],
                      &src[static_cast<size_t>((o * ci + c) * kvol + k) * elem], elem);
    DraftTensor n = t(w);
    n.name = name;
    n.shape = to_nhwc(s);
    n.layout = layout;
    n.data = &dst;
    d_.tensors.push_back(std::move(n));
    return static_cast<uint32_t>(d_.tensors.size() - 1);
  }

  // Conv weights [Cout, Cin/g, *kernel] -> [Cout, *kernel, Cin/g]: permuted at conversion when
  // constant; a run-time weight (a graph input, or computed) through a Transpose step before
  // the conv, since that permutation is the one into channels last (gpu_precision then makes
  // the Transpose write the Float16 the conv kernels read; a float32 graph input it reads as
  // is, jp_transpose_f2h).
  uint32_t conv_weight(uint32_t w) {
    if (t(w).storage != fb::Storage::Weight) return as_nhwc(w);
    if (auto it = weight_of_.find(w); it != weight_of_.end()) return it->second;
    weight_of_[w] = permuted_constant(w, t(w).name + ":ohwi", t(w).layout);
    return weight_of_[w];
  }

  // A conv's x in channels last. A constant x (a Conv whose weight alone is computed at run
  // time: the constant folding left it, as ONNX's causal-conv tests with their input frozen) is
  // permuted at conversion like a weight, rather than by a Transpose step on every run.
  uint32_t conv_input(uint32_t x) {
    if (t(x).storage != fb::Storage::Weight) return as_nhwc(x);
    if (auto it = nhwc_of_.find(x); it != nhwc_of_.end()) return it->second;
    nhwc_of_[x] = permuted_constant(x, t(x).name + ":nhwc", fb::Layout::NHWC);
    return nhwc_of_[x];
  }

  // A ConvTranspose the CUDA upsampling GEMM takes (kernels/conv_transpose.h
  // conv_transpose_upsamples): 2-D, kernel == stride, no pads, no output padding, dilation 1,
  // groups 1.
  static bool upsampling(const OpDesc& op) {
    if (op.kernel.size() != 2 || op.groups != 1) return false;
    for (size_t d = 0; d < 2; ++d)
      if (op.stride.size() != 2 || op.stride[d] != op.kernel[d] || op.dilation.size() != 2 ||
          op.dilation[d] != 1 || op.pad_begin.size() != 2 || op.pad_begin[d] != 0 ||
          op.pad_end.size() != 2 || op.pad_end[d] != 0 ||
          (!op.output_padding.empty() && op.output_padding[d] != 0))
        return false;
    return true;
  }

  // ConvTranspose weights [Cin, Cout, KH, KW] -> [KH, KW, Cout, Cin]: the upsampling GEMM's B
  // matrix [KH * KW * Cout, Cin] (data permuted, any dtype).
  uint32_t upsample_weight(uint32_t w) {
    if (auto it = upsample_weight_of_.find(w); it != upsample_weight_of_.end()) return it->second;
    const Shape& s = t(w).shape;
    const size_t elem = dtype_size(t(w).dtype);
    const std::vector<uint8_t>& src = *t(w).data;
    std::vector<uint8_t>& dst = d_.owned_data.emplace_back(src.size());
    const int64_t ci = s[0], co = s[1], kvol = s[2] * s[3];
    for (int64_t c = 0; c < ci; ++c)
      for (int64_t o = 0; o < co; ++o)
        for (int64_t k = 0; k < kvol; ++k)
          std::memcpy(&dst[static_cast<size_t>((k * co + o) * ci + c) * elem],
                      &src[static_cast<size_t>((c * co + o) * kvol + k) * elem], elem);
    DraftTensor n = t(w);
    n.name += ":hwoi";
    n.shape = {s[2], s[3], co, ci};
    n.data = &dst;
    d_.tensors.push_back(std::move(n));
    upsample_weight_of_[w] = static_cast<uint32_t>(d_.tensors.size() - 1);
    return upsample_weight_of_[w];
  }

  // A model's own layout Transpose (ConvNeXt's permutes around its channels-last LayerNorm and
  // MLP, a speech encoder's around a LayerNorm over channels) becomes a byte Copy, a view once
  // alias_views runs: into channels last of an activation stored NHWC (or with an NHWC twin),
  // its output holds that storage's bytes; back to channels first of a plain [N, *spatial, C]
  // activation, its output is NHWC with the input's bytes.
  bool layout_transpose(DraftStep& s) {
    if (s.op.family != fb::OpFamily::Transpose || s.inputs.size() != 1 || s.outputs.size() != 1)
      return false;
    const uint32_t i = s.inputs[0], o = s.outputs[0];
    if (!activation_nd(i) || t(o).storage == fb::Storage::Binding) return false;
    const size_t r = t(i).shape.size();
    if (s.op.perm == channels_last_perm(r, true) && (nhwc(i) || nhwc_of_.count(i) != 0)) {
      s.inputs[0] = as_nhwc(i);
    } else if (s.op.perm == channels_last_perm(r, false) && !nhwc(i) &&
               t(i).storage == fb::Storage::Arena) {
      output_nhwc(s, 0);
    } else {
      return false;
    }
    s.op.family = fb::OpFamily::Copy;
    s.op.perm.clear();
    return true;
  }

  void lower_step(DraftStep& s) {
    const OpDesc& op = s.op;
    if (layout_transpose(s)) return;
    switch (ops::family_rules(op.family).nhwc) {
      case ops::NhwcRule::kConv:
        // Every conv: the CUDA conv kernels take channels_last tensors only, whatever is
        // constant (kernels/cuda/conv_select.cc).
        if (op.kernel.size() + 2 != t(s.inputs[0]).shape.size()) break;
        s.inputs[0] = conv_input(s.inputs[0]);
        s.inputs[1] = conv_weight(s.inputs[1]);
        if (op.has_residual) s.inputs.back() = as_nhwc(s.inputs.back());
        output_nhwc(s, 0);
        return;
      case ops::NhwcRule::kPerPixel:
        if (!activation4d(s.inputs[0]) || s.outputs.size() != 1) break;
        s.inputs[0] = as_nhwc(s.inputs[0]);
        output_nhwc(s, 0);
        return;
      case ops::NhwcRule::kFollowsInput:
        if (!nhwc(s.inputs[0])) break;
        output_nhwc(s, 0);
        return;
      case ops::NhwcRule::kBinary:
        if (binary_nhwc(s)) return;
        break;
      case ops::NhwcRule::kPointwise:
        if (operands_nhwc(s)) return;
        break;
      case ops::NhwcRule::kConcat: {
        if (t(s.outputs[0]).shape.size() != 4 || op.axis != 1) break;
        bool any = false, all = true;
        for (uint32_t i : s.inputs) {
          any |= nhwc(i);
          all &= activation4d(i);
        }
        if (!any || !all) break;
        for (uint32_t& i : s.inputs) i = as_nhwc(i);
        s.op.axis = 3;
        output_nhwc(s, 0);
        return;
      }
      case ops::NhwcRule::kCopy: {
        // [N, 1, 1, C] NHWC holds the bytes of [N, C, 1, 1] NCHW (any rank whose spatial dims
        // are all 1): a byte copy reads it as is.
        const uint32_t i = s.inputs[0];
        const Shape& shape = t(i).shape;
        if (nhwc(i) && std::all_of(shape.begin() + 1, shape.end() - 1,
                                   [](int64_t d) { return d == 1; }))
          return;
        break;
      }
      case ops::NhwcRule::kResize:
        if (resize_nhwc(s)) return;
        break;
      case ops::NhwcRule::kUpsample:
        if (float32_ || !upsampling(op) || !activation4d(s.inputs[0]) ||
            t(s.inputs[1]).storage != fb::Storage::Weight)
          break;
        s.inputs[0] = as_nhwc(s.inputs[0]);
        s.inputs[1] = upsample_weight(s.inputs[1]);
        if (op.has_residual) s.inputs.back() = as_nhwc(s.inputs.back());
        output_nhwc(s, 0);
        return;
      case ops::NhwcRule::kNchwOnly:
        break;
    }
    for (uint32_t& i : s.inputs) i = as_nchw(i);
  }

  // A Resize of an NHWC activation that keeps N and C runs NHWC: the kernels resize every dim by
  // its own entries of the per-dim lists, so these move with their dims. A kept dim (scale 1,
  // resized length its extent) maps each output coordinate to itself exactly in the coordinate
  // modes allowed here, one tap of weight 1, so the sum over the other dims' taps, and every
  // output bit, is the NCHW step's (tf_crop_and_resize moves a kept dim by its roi, and
  // tf_half_pixel_for_nn by half a pixel).
  bool resize_nhwc(DraftStep& s) {
    ResizeDesc& r = s.op.resize;
    const uint32_t x = s.inputs[0];
    if (s.inputs.size() != 1 || s.outputs.size() != 1 || !activation4d(x) || !nhwc(x) ||
        r.scale.size() != 4 || r.resized_length.size() != 4 || r.roi_start.size() != 4 ||
        r.roi_end.size() != 4 || r.coord == fb::ResizeCoord::TfCropAndResize ||
        r.coord == fb::ResizeCoord::TfHalfPixelForNn)
      return false;
    const Shape in = logical(x);
    for (size_t d : {0, 1})
      if (r.scale[d] != 1.0 || r.resized_length[d] != static_cast<double>(in[d])) return false;
    for (std::vector<double>* list : {&r.scale, &r.resized_length, &r.roi_start, &r.roi_end}) {
      const std::vector<double> v = *list;
      *list = {v[0], v[2], v[3], v[1]};
    }
    output_nhwc(s, 0);
    return true;
  }

  // Binary over an NHWC operand of the output's shape: NHWC when the other operand allows.
  bool binary_nhwc(DraftStep& s) { return s.inputs.size() == 2 && operands_nhwc(s); }

  // A broadcasting elementwise step (Binary, Pointwise) runs NHWC when one operand is an NHWC
  // tensor of the output's shape (rank 3 to 5) and every other one is an activation of the
  // output's shape or per channel ([N or 1, C, 1, 1], read as [N or 1, 1, 1, C]), or a constant
  // per channel or scalar (as [1, 1, 1, C]); shown for rank 4. All operands are checked before
  // any Transpose is added.
  bool operands_nhwc(DraftStep& s) {
    const Shape out = t(s.outputs[0]).shape;
    const size_t r = out.size();
    if (r < 3 || r > 5) return false;
    auto ones_past_channel = [](const Shape& sh) {
      return std::all_of(sh.begin() + 2, sh.end(), [](int64_t d) { return d == 1; });
    };
    bool anchored = false;
    std::vector<int64_t> channels(s.inputs.size(), 0);  // > 1: a per-channel constant
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      const uint32_t b = s.inputs[k];
      anchored |= nhwc(b) && logical(b) == out;
      if (activation_nd(b) && t(b).shape.size() == r) {
        const Shape lb = logical(b);
        const bool per_channel =
            (lb[0] == 1 || lb[0] == out[0]) && lb[1] == out[1] && ones_past_channel(lb);
        if (lb != out && !per_channel) return false;
      } else if (t(b).storage == fb::Storage::Weight) {
        if (t(b).shape.size() > r) return false;
        Shape sr(r - t(b).shape.size(), 1);
        sr.insert(sr.end(), t(b).shape.begin(), t(b).shape.end());
        if (sr[0] != 1 || !ones_past_channel(sr)) return false;
        channels[k] = sr[1];
      } else {
        return false;
      }
    }
    if (!anchored) return false;
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      const uint32_t b = s.inputs[k];
      if (activation_nd(b)) {
        s.inputs[k] = as_nhwc(b);
      } else if (channels[k] > 1) {
        s.inputs[k] = channel_constant(b, channels[k], r);
      }
    }
    output_nhwc(s, 0);
    return true;
  }

  // A per-channel constant as [1, 1, 1, C] (rank r): the same bytes, another shape.
  uint32_t channel_constant(uint32_t b, int64_t c, size_t r) {
    if (auto it = channel_of_.find({b, r}); it != channel_of_.end()) return it->second;
    DraftTensor n = t(b);
    n.name += ":nhwc";
    n.shape = Shape(r, 1);
    n.shape.back() = c;
    d_.tensors.push_back(std::move(n));
    channel_of_[{b, r}] = static_cast<uint32_t>(d_.tensors.size() - 1);
    return channel_of_[{b, r}];
  }

  PlanDraft& d_;
  const bool float32_;  // a Float32 plan: ConvTranspose stays NCHW (its NHWC kernels are FP16)
  std::vector<DraftStep> after_;  // steps that follow the current one
  std::map<uint32_t, uint32_t> nhwc_of_, nchw_of_, weight_of_, upsample_weight_of_;
  std::map<std::pair<uint32_t, size_t>, uint32_t> channel_of_;  // by constant and rank
};

}  // namespace

void gpu_layout(PlanDraft* draft, bool float32) { LayoutPass(draft, float32).run(); }

std::vector<int32_t> channels_last_perm(size_t r, bool into_nhwc) {
  std::vector<int32_t> perm{0};
  if (!into_nhwc) perm.push_back(static_cast<int32_t>(r - 1));
  for (size_t d = into_nhwc ? 2 : 1; d < (into_nhwc ? r : r - 1); ++d)
    perm.push_back(static_cast<int32_t>(d));
  if (into_nhwc) perm.push_back(1);
  return perm;
}

DraftStep make_step(const std::string& name, fb::OpFamily family, uint32_t in, uint32_t out) {
  DraftStep s;
  s.name = name;
  s.op.resolved = true;
  s.op.family = family;
  s.inputs = {in};
  s.outputs = {out};
  return s;
}

}  // namespace jetplan::converter
