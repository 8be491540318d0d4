#include "converter/src/precision/int8_gemm.h"

#include <cstring>
#include <map>
#include <utility>

namespace jetplan::converter {
namespace {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
};

class GemmsAsConvs {
 public:
  GemmsAsConvs(PlanDraft* draft,
               const std::function<bool(const DraftStep&, uint32_t, uint32_t)>& wanted)
      : d_(*draft), wanted_(wanted) {}

  std::vector<std::string> run() {
    const size_t count = d_.steps.size();
    std::vector<GemmShape> shape(count);
    std::vector<bool> conv(count, false);
    for (size_t s = 0; s < count; ++s) {
      const DraftStep& step = d_.steps[s];
      conv[s] = one_by_one(step, &shape[s]) && wanted_(step, step.inputs[0], step.outputs[0]);
    }
    // A converted step's y whose readers are all converted steps, each reading it as A or as
    // the residual: they read the conv's NHWC output itself, and y goes unused.
    std::vector<bool> direct(d_.tensors.size(), false), other_reader(d_.tensors.size(), false);
    for (size_t s = 0; s < count; ++s) {
      const DraftStep& step = d_.steps[s];
      for (size_t k = 0; k < step.inputs.size(); ++k) {
        const bool as_a_or_r = k == 0 || (step.op.has_residual && k + 1 == step.inputs.size());
        if (!conv[s] || !as_a_or_r) other_reader[step.inputs[k]] = true;
      }
    }
    for (size_t s = 0; s < count; ++s) {
      const uint32_t y = d_.steps[s].outputs.empty() ? 0 : d_.steps[s].outputs[0];
      if (conv[s]) direct[y] = !other_reader[y] && d_.tensors[y].storage == fb::Storage::Arena;
    }

    std::vector<DraftStep> steps = std::move(d_.steps);
    d_.steps.clear();
    std::vector<std::string> names;
    for (size_t s = 0; s < count; ++s) {
      if (!conv[s]) {
        d_.steps.push_back(std::move(steps[s]));
        continue;
      }
      names.push_back(steps[s].name);
      rewrite(std::move(steps[s]), shape[s], direct);
    }
    return names;
  }

 private:
  const DraftTensor& t(uint32_t i) const { return d_.tensors[i]; }

  // Whether a 1x1 conv computes Gemm step `s` (the forms in int8_gemm.h), and its M, N, K.
  bool one_by_one(const DraftStep& s, GemmShape* g) const {
    if (s.op.family != fb::OpFamily::Gemm || s.op.trans_a || s.op.alpha != 1.f ||
        s.outputs.size() != 1 || s.inputs.size() < 2)
      return false;
    const DraftTensor& a = t(s.inputs[0]);
    const DraftTensor& b = t(s.inputs[1]);
    const DraftTensor& y = t(s.outputs[0]);
    if (a.dtype != DataType::kFloat32 || b.dtype != DataType::kFloat32 ||
        y.dtype != DataType::kFloat32 || a.storage == fb::Storage::Weight ||
        b.storage != fb::Storage::Weight || y.storage != fb::Storage::Arena ||
        a.layout == fb::Layout::NHWC || y.layout == fb::Layout::NHWC || a.alias_of >= 0 ||
        y.alias_of >= 0 || a.shape.size() < 2 || b.shape.size() < 2)
      return false;
    g->k = a.shape.back();
    const int64_t kb = s.op.trans_b ? b.shape.back() : b.shape[b.shape.size() - 2];
    g->n = s.op.trans_b ? b.shape[b.shape.size() - 2] : b.shape.back();
    if (g->k <= 0 || g->n <= 0 || kb != g->k || shape_count(b.shape) != g->k * g->n ||
        g->k % 16 != 0)
      return false;
    g->m = shape_count(a.shape) / g->k;
    if (g->m < kInt8GemmMinRows || y.shape.back() != g->n || shape_count(y.shape) != g->m * g->n)
      return false;
    const bool has_c = s.inputs.size() - (s.op.has_residual ? 1 : 0) == 3;
    if (has_c) {  // one value per output column (or one for all), a constant
      const DraftTensor& c = t(s.inputs[2]);
      const int64_t cn = shape_count(c.shape);
      if (c.storage != fb::Storage::Weight || c.dtype != DataType::kFloat32 ||
          !(cn == 1 || (cn == g->n && c.shape.back() == g->n)))
        return false;
    }
    if (s.op.has_residual) {
      const DraftTensor& r = t(s.inputs.back());
      if (r.dtype != DataType::kFloat32 || r.layout == fb::Layout::NHWC ||
          shape_count(r.shape) != g->m * g->n || r.shape.back() != g->n)
        return false;
    }
    return true;
  }

  uint32_t add_tensor(DraftTensor n) {
    d_.tensors.push_back(std::move(n));
    return static_cast<uint32_t>(d_.tensors.size() - 1);
  }

  uint32_t add_weight(const std::string& name, Shape shape, std::vector<uint8_t> bytes) {
    DraftTensor n;
    n.name = name;
    n.dtype = DataType::kFloat32;
    n.shape = std::move(shape);
    n.storage = fb::Storage::Weight;
    n.size_bytes = bytes.size();
    n.data = &d_.owned_data.emplace_back(std::move(bytes));
    return add_tensor(std::move(n));
  }

  // Arena tensor `of`'s bytes as NHWC pixels [rows, 1, 1, channels], named "<name>:nhwc".
  DraftTensor nhwc_twin(uint32_t of, int64_t rows, int64_t channels) const {
    DraftTensor n = t(of);
    n.name += ":nhwc";
    n.shape = {rows, 1, 1, channels};
    n.layout = fb::Layout::NHWC;
    n.storage = fb::Storage::Arena;
    n.binding = -1;
    n.output_binding = false;
    n.data = nullptr;
    return n;
  }

  void copy_step(const std::string& name, uint32_t from, uint32_t to) {
    DraftStep c;
    c.name = name;
    c.op.resolved = true;
    c.op.family = fb::OpFamily::Copy;
    c.inputs = {from};
    c.outputs = {to};
    d_.steps.push_back(std::move(c));
  }

  // The NHWC view a conv reads of `x` (shared by every converted reader): a converted step's
  // output where x is one, else a Copy of x added now, in front of its first such reader.
  uint32_t view(uint32_t x, int64_t channels) {
    if (auto it = view_of_.find(x); it != view_of_.end()) return it->second;
    const uint32_t v = add_tensor(nhwc_twin(x, shape_count(t(x).shape) / channels, channels));
    copy_step(t(x).name + ":as_nhwc", x, v);
    view_of_[x] = v;
    return v;
  }

  // B as the conv's [N, 1, 1, K] filters (B^T, or B itself under trans_b), named after B with
  // the conv weight's suffix so that a model's own weight scales (explicit Q/DQ) still find it.
  uint32_t filters(const DraftStep& s, const GemmShape& g) {
    const DraftTensor& b = t(s.inputs[1]);
    const float* src = reinterpret_cast<const float*>(b.data->data());
    std::vector<float> w(static_cast<size_t>(g.n * g.k));
    for (int64_t o = 0; o < g.n; ++o)
      for (int64_t c = 0; c < g.k; ++c)
        w[static_cast<size_t>(o * g.k + c)] =
            s.op.trans_b ? src[o * g.k + c] : src[c * g.n + o];
    std::vector<uint8_t> bytes(w.size() * sizeof(float));
    std::memcpy(bytes.data(), w.data(), bytes.size());
    return add_weight(b.name + ":ohwi", {g.n, 1, 1, g.k}, std::move(bytes));
  }

  // beta * C, one value per output channel.
  uint32_t bias(const DraftStep& s, const GemmShape& g) {
    const DraftTensor& c = t(s.inputs[2]);
    const float* src = reinterpret_cast<const float*>(c.data->data());
    const bool one = shape_count(c.shape) == 1;
    std::vector<float> v(static_cast<size_t>(g.n));
    for (int64_t o = 0; o < g.n; ++o) v[static_cast<size_t>(o)] = s.op.beta * src[one ? 0 : o];
    std::vector<uint8_t> bytes(v.size() * sizeof(float));
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return add_weight(s.name + ":conv_bias", {g.n}, std::move(bytes));
  }

  void rewrite(DraftStep s, const GemmShape& g, const std::vector<bool>& direct) {
    const uint32_t y = s.outputs[0];
    const bool has_c = s.inputs.size() - (s.op.has_residual ? 1 : 0) == 3;
    std::vector<uint32_t> inputs = {view(s.inputs[0], g.k), filters(s, g)};
    if (has_c) inputs.push_back(bias(s, g));
    if (s.op.has_residual) inputs.push_back(view(s.inputs.back(), g.n));
    const uint32_t yv = add_tensor(nhwc_twin(y, g.m, g.n));
    view_of_[y] = yv;
    OpDesc& op = s.op;
    op.family = fb::OpFamily::Conv;
    op.kernel = {1, 1};
    op.stride = {1, 1};
    op.dilation = {1, 1};
    op.pad_begin = {0, 0};
    op.pad_end = {0, 0};
    op.groups = 1;
    op.trans_a = op.trans_b = false;
    op.alpha = op.beta = 1.f;
    s.inputs = std::move(inputs);
    s.outputs = {yv};
    const std::string name = s.name;
    d_.steps.push_back(std::move(s));
    if (!direct[y]) copy_step(name + ":from_nhwc", yv, y);
  }

  PlanDraft& d_;
  const std::function<bool(const DraftStep&, uint32_t, uint32_t)>& wanted_;
  std::map<uint32_t, uint32_t> view_of_;
};

}  // namespace

std::vector<std::string> gemms_as_convs(
    PlanDraft* draft, const std::function<bool(const DraftStep&, uint32_t, uint32_t)>& wanted) {
  return GemmsAsConvs(draft, wanted).run();
}

}  // namespace jetplan::converter
