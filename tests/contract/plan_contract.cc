#include "tests/contract/plan_contract.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace jetplan::converter::testing {
namespace {

using Shape = std::vector<int64_t>;

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string str(const Shape& s) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  o << "]";
  return o.str();
}

Shape vec(const flatbuffers::Vector<int64_t>* v) {
  return v ? Shape(v->begin(), v->end()) : Shape();
}

bool broadcast(const Shape& a, const Shape& b, Shape* out) {
  const size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = std::max(da, db);
  }
  return true;
}

int64_t elem_size(fb::DType t) {
  switch (t) {
    case fb::DType::Float32: return 4;
    case fb::DType::Float16: return 2;
    case fb::DType::Int8: return 1;
    case fb::DType::UInt8: return 1;
    case fb::DType::Int32: return 4;
    case fb::DType::Int64: return 8;
    case fb::DType::Bool: return 1;
    case fb::DType::Float64: return 8;
    case fb::DType::Int16: return 2;
    case fb::DType::UInt16: return 2;
    case fb::DType::UInt32: return 4;
    case fb::DType::UInt64: return 8;
    case fb::DType::BFloat16: return 2;
  }
  return 0;
}

class Checker {
 public:
  Checker(const std::vector<uint8_t>& buf, const fb::Plan* plan) : buf_(buf), p_(plan) {}

  std::vector<std::string> run() {
    if (p_->schema_version() != 1) bad("schema_version ", p_->schema_version());
    if (!p_->target() || !p_->target()->name()) bad("no target");
    if (!p_->tensors() || !p_->steps() || !p_->inputs() || !p_->outputs()) {
      bad("missing tensors, steps or bindings");
      return problems_;
    }
    check_bindings();
    check_tensors();
    check_steps();
    check_liveness();
    return problems_;
  }

 private:
  template <typename... A>
  void bad(A&&... a) {
    std::ostringstream o;
    (o << ... << a);
    problems_.push_back(o.str());
  }

  const fb::Tensor* t(uint32_t i) const { return p_->tensors()->Get(i); }
  Shape shape(uint32_t i) const { return vec(t(i)->shape()); }
  uint32_t n_tensors() const { return p_->tensors()->size(); }

  void check_bindings() {
    for (const auto* list : {p_->inputs(), p_->outputs()}) {
      const bool is_input = list == p_->inputs();
      for (uint32_t i = 0; i < list->size(); ++i) {
        const auto* b = list->Get(i);
        if (!b->name()) bad("binding without a name");
        if (b->tensor() >= n_tensors()) {
          bad("binding ", i, " tensor out of range");
          continue;
        }
        const fb::Tensor* tt = t(b->tensor());
        if (tt->storage() != fb::Storage::Binding || tt->binding() != static_cast<int32_t>(i))
          bad(is_input ? "input " : "output ", i, " tensor is not Binding ", i);
        auto [it, fresh] = bound_.emplace(b->tensor(), is_input);
        if (!fresh) bad("tensor ", b->tensor(), " bound twice");
      }
    }
  }

  void check_tensors() {
    const auto* w = p_->weights();
    const uint64_t weights = w ? w->size() : 0;
    if (w && (w->data() - buf_.data()) % 256 != 0) bad("weights do not start at a multiple of 256");
    for (uint32_t i = 0; i < n_tensors(); ++i) {
      const fb::Tensor* tt = t(i);
      const Shape s = shape(i);
      if (!tt->name()) bad("tensor ", i, " has no name");
      for (int64_t d : s)
        if (d < 0) bad("tensor ", i, " has dim ", d);
      if (static_cast<int64_t>(tt->size_bytes()) != count(s) * elem_size(tt->dtype()))
        bad("tensor ", i, " size_bytes ", tt->size_bytes(), " for ", str(s));
      switch (tt->storage()) {
        case fb::Storage::Weight:
          if (tt->offset() % 256 || tt->offset() + tt->size_bytes() > weights)
            bad("weight tensor ", i, " at ", tt->offset(), "+", tt->size_bytes(), " of ", weights);
          break;
        case fb::Storage::Arena:
          if (tt->offset() % p_->arena_alignment() ||
              tt->offset() + tt->size_bytes() > p_->arena_bytes())
            bad("arena tensor ", i, " at ", tt->offset(), "+", tt->size_bytes(), " of ",
                p_->arena_bytes());
          break;
        case fb::Storage::Binding:
          if (!bound_.count(i)) bad("Binding tensor ", i, " is in no binding");
          break;
      }
      if (tt->view_of() != -1) {
        const int32_t v = tt->view_of();
        const fb::Tensor* of = v >= 0 && static_cast<uint32_t>(v) < n_tensors() ? t(v) : nullptr;
        if (tt->storage() != fb::Storage::Arena || of == nullptr ||
            of->storage() != fb::Storage::Arena || of->view_of() != -1 ||
            of->offset() != tt->offset() || of->size_bytes() < tt->size_bytes())
          bad("view ", i, " of tensor ", v);
      }
      const bool nchw = s.size() == 4 && tt->storage() != fb::Storage::Weight;
      if ((tt->layout() == fb::Layout::NCHW) != nchw) bad("tensor ", i, " layout");
    }
  }

  // One output or more (TopK, Split, the recurrent cells, DynamicQuantize write several).
  bool io_ok(const fb::Step* s) {
    if (!s->inputs() || !s->outputs() || s->outputs()->size() == 0) return false;
    for (uint32_t i : *s->inputs())
      if (i >= n_tensors()) return false;
    for (uint32_t o : *s->outputs())
      if (o >= n_tensors()) return false;
    return true;
  }

  void check_steps() {
    std::vector<int> writer(n_tensors(), -1);
    for (uint32_t k = 0; k < p_->steps()->size(); ++k) {
      const fb::Step* s = p_->steps()->Get(k);
      const std::string name = s->name() ? s->name()->str() : "";
      if (name.empty()) bad("step ", k, " has no name");
      if (s->kernel() && s->kernel()->size() != 0) bad("step ", name, " names a kernel");
      // A workspace (TopK, Nms, Rnn) is arena bytes at an aligned offset; no workspace, offset 0.
      if (s->workspace_bytes() == 0 ? s->workspace_offset() != 0
                                    : s->workspace_offset() % p_->arena_alignment() != 0 ||
                                          s->workspace_offset() + s->workspace_bytes() >
                                              p_->arena_bytes())
        bad("step ", name, " workspace");
      if (const auto* l = s->launch())
        if (l->grid_x() || l->grid_y() || l->grid_z() || l->block_x() || l->block_y() ||
            l->block_z() || l->shared_bytes() || l->split_k())
          bad("step ", name, " launch not zero");
      if (!io_ok(s)) {
        bad("step ", name, " inputs/outputs out of range");
        continue;
      }
      for (uint32_t i : *s->inputs()) {
        const fb::Tensor* in = t(i);
        if (in->storage() == fb::Storage::Arena && writer[bytes_of(i)] < 0)
          bad("step ", name, " reads arena tensor ", i, " before any step writes it");
        if (in->storage() == fb::Storage::Binding && !bound_.at(i) && writer[i] < 0)
          bad("step ", name, " reads output ", i, " before it is written");
      }
      for (uint32_t out : *s->outputs()) {
        if (t(out)->storage() == fb::Storage::Weight ||
            (t(out)->storage() == fb::Storage::Binding && bound_.at(out)))
          bad("step ", name, " writes a weight or an input");
        if (t(out)->view_of() != -1) bad("step ", name, " writes view ", out);
        if (writer[out] >= 0) bad("tensor ", out, " written twice");
        writer[out] = static_cast<int>(k);
      }
      check_family(s, name);
      for (uint32_t i : *s->inputs()) touch(i, k);
      for (uint32_t out : *s->outputs()) touch(out, k);
    }
    for (uint32_t i = 0; i < n_tensors(); ++i)
      if (bound_.count(i) && !bound_.at(i) && writer[i] < 0 && t(i)->size_bytes() != 0)
        bad("output tensor ", i, " never written");  // an empty one has nothing to write
  }

  // The tensor whose bytes `i` reads: its view_of for a view (checked in check_tensors).
  uint32_t bytes_of(uint32_t i) {
    const int32_t v = t(i)->view_of();
    return v >= 0 && static_cast<uint32_t>(v) < n_tensors() ? static_cast<uint32_t>(v) : i;
  }

  // A view keeps the tensor it reads live.
  void touch(uint32_t i, uint32_t step) {
    if (t(i)->storage() != fb::Storage::Arena) return;
    i = bytes_of(i);
    auto [it, fresh] = live_.emplace(i, std::pair<uint32_t, uint32_t>{step, step});
    if (!fresh) it->second.second = step;
  }

  void check_liveness() {
    for (auto a = live_.begin(); a != live_.end(); ++a)
      for (auto b = std::next(a); b != live_.end(); ++b) {
        const bool same_time =
            a->second.first <= b->second.second && b->second.first <= a->second.second;
        const fb::Tensor *ta = t(a->first), *tb = t(b->first);
        const bool same_bytes = ta->offset() < tb->offset() + tb->size_bytes() &&
                                tb->offset() < ta->offset() + ta->size_bytes();
        if (same_time && same_bytes)
          bad("arena tensors ", a->first, " and ", b->first, " are live together and overlap");
      }
  }

  // Families whose kernels compute float32 only: every input is float32.
  static bool float32_only(fb::OpFamily op) {
    switch (op) {
      case fb::OpFamily::Conv:
      case fb::OpFamily::Pool:
      case fb::OpFamily::Gemm:
      case fb::OpFamily::Binary:
      case fb::OpFamily::Activation:
      case fb::OpFamily::Softmax:
      case fb::OpFamily::BatchNorm:
      case fb::OpFamily::ConvTranspose:
      case fb::OpFamily::Resize:
      case fb::OpFamily::Reduce:
      case fb::OpFamily::ArgReduce:
      case fb::OpFamily::TopK:
      case fb::OpFamily::InstanceNorm:
      case fb::OpFamily::LayerNorm:
      case fb::OpFamily::GroupNorm:
      case fb::OpFamily::Lrn:
      case fb::OpFamily::Nms:
      case fb::OpFamily::DynamicQuantize:
      case fb::OpFamily::Pointwise:
        return true;
      default:
        return false;  // data movement and typed math (any dtype), seq and quantized families
    }
  }

  Shape window_out(const Shape& x, int64_t channels, const Shape& k, const Shape& st,
                   const Shape& dil, const Shape& pb, const Shape& pe) {
    Shape out = {x[0], channels};
    for (size_t i = 0; i + 2 < x.size(); ++i)
      out.push_back((x[i + 2] + pb[i] + pe[i] - dil[i] * (k[i] - 1) - 1) / st[i] + 1);
    return out;
  }

  void check_family(const fb::Step* s, const std::string& name) {
    std::vector<Shape> in;
    for (uint32_t i : *s->inputs()) in.push_back(shape(i));
    const uint32_t out_index = s->outputs()->Get(0);
    const Shape y = shape(out_index);
    auto expect = [&](bool ok, const std::string& what) {
      if (!ok) bad("step ", name, ": ", what);
    };
    // Reduce also takes float64 in CPU plans, every input and output alike.
    const bool cpu = p_->target() && p_->target()->backend() == fb::Backend::CPU;
    const bool f64_reduce = cpu && s->op() == fb::OpFamily::Reduce &&
                            t(out_index)->dtype() == fb::DType::Float64;
    if (float32_only(s->op()))
      for (uint32_t i : *s->inputs())
        if (t(i)->dtype() != (f64_reduce ? fb::DType::Float64 : fb::DType::Float32))
          bad("step ", name, " reads a non-float32 tensor");
    const auto dtype_of = [&](uint32_t output) { return t(s->outputs()->Get(output))->dtype(); };
    const auto in_dtype = [&](uint32_t input) { return t(s->inputs()->Get(input))->dtype(); };
    switch (s->op()) {
      case fb::OpFamily::Conv: {
        const auto* p = s->params_as_ConvParams();
        if (!p) return bad("step ", name, " lacks ConvParams");
        const size_t n_in = 2 + p->has_bias() + p->has_residual();
        if (in.size() != n_in) return bad("step ", name, " has ", in.size(), " inputs");
        const Shape& x = in[0];
        const Shape& w = in[1];
        const Shape k = vec(p->kernel()), st = vec(p->stride()), dil = vec(p->dilation());
        const Shape pb = vec(p->pad_begin()), pe = vec(p->pad_end());
        const size_t sr = x.size() - 2;
        expect(x.size() >= 3 && x.size() <= 5 && w.size() == x.size(), "conv ranks");
        expect(k.size() == sr && st.size() == sr && dil.size() == sr && pb.size() == sr &&
                   pe.size() == sr,
               "conv array sizes");
        expect(k == Shape(w.begin() + 2, w.end()), "kernel != weight dims");
        expect(w[1] * p->groups() == x[1] && w[0] % p->groups() == 0, "conv channels");
        expect(y == window_out(x, w[0], k, st, dil, pb, pe), "conv output " + str(y));
        if (p->has_bias()) expect(in[2] == Shape{w[0]}, "bias shape");
        if (p->has_residual()) expect(in.back() == y, "residual shape");
        return;
      }
      case fb::OpFamily::Pool: {
        const auto* p = s->params_as_PoolParams();
        if (!p || in.size() != 1) return bad("step ", name, " pool params/inputs");
        const Shape& x = in[0];
        const Shape k = vec(p->kernel()), st = vec(p->stride()), dil = vec(p->dilation());
        const Shape pb = vec(p->pad_begin()), pe = vec(p->pad_end());
        const size_t sr = x.size() - 2;
        expect(k.size() == sr && st.size() == sr && dil.size() == sr && pb.size() == sr &&
                   pe.size() == sr,
               "pool array sizes");
        expect(y == window_out(x, x[1], k, st, dil, pb, pe), "pool output " + str(y));
        // MaxPool's Indices: a second output, int64 of y's shape (CPU plans).
        if (s->outputs()->size() == 2)
          expect(p->kind() == fb::PoolKind::Max && cpu && shape(s->outputs()->Get(1)) == y &&
                     dtype_of(1) == fb::DType::Int64,
                 "pool indices output");
        else
          expect(s->outputs()->size() == 1 && !p->indices_column_major(), "pool outputs");
        return;
      }
      case fb::OpFamily::Gemm: {
        const auto* p = s->params_as_GemmParams();
        if (!p || in.size() != 2u + p->has_c() + p->has_residual())
          return bad("step ", name, " gemm params/inputs");
        const Shape &a = in[0], &b = in[1];
        if (a.size() < 2 || b.size() < 2) return bad("step ", name, " gemm rank");
        const int64_t m = p->trans_a() ? a.back() : a[a.size() - 2];
        const int64_t ka = p->trans_a() ? a[a.size() - 2] : a.back();
        const int64_t kb = p->trans_b() ? b.back() : b[b.size() - 2];
        const int64_t n = p->trans_b() ? b[b.size() - 2] : b.back();
        expect(ka == kb, "gemm K");
        expect(y.size() >= 2 && y[y.size() - 2] == m && y.back() == n, "gemm output " + str(y));
        const Shape batch(y.begin(), y.end() - 2);
        for (const Shape* op : {&a, &b}) {
          const Shape ob(op->begin(), op->end() - 2);
          expect(ob == batch || count(ob) == 1, "gemm batch " + str(*op) + " vs " + str(y));
        }
        Shape c_out;
        if (p->has_c()) expect(broadcast(in[2], y, &c_out) && c_out == y, "gemm C broadcast");
        if (p->has_residual()) expect(in.back() == y, "gemm residual shape " + str(in.back()));
        return;
      }
      case fb::OpFamily::Binary: {
        Shape out;
        if (!s->params_as_BinaryParams() || in.size() != 2) return bad("step ", name, " binary");
        expect(broadcast(in[0], in[1], &out) && out == y && y.size() <= 8, "binary output");
        return;
      }
      case fb::OpFamily::Activation:
        expect(s->params_as_ActivationParams() && in.size() == 1 && in[0] == y, "activation");
        return;
      case fb::OpFamily::Pointwise: {
        // 1..8 inputs, each broadcasting to the output; 1..16 instructions, each reading
        // registers written before it and loading inputs that exist.
        const auto* p = s->params_as_PointwiseParams();
        if (!p || !p->program() || in.empty() || in.size() > 8 || p->program()->size() == 0 ||
            p->program()->size() > 16)
          return bad("step ", name, " pointwise params");
        for (const Shape& x : in) {
          Shape out;
          expect(broadcast(x, y, &out) && out == y, "pointwise input " + str(x) + " vs " + str(y));
        }
        for (uint32_t i = 0; i < p->program()->size(); ++i) {
          const fb::PointwiseInstr* ins = p->program()->Get(i);
          const bool load = ins->kind() == fb::PointwiseInstrKind::Load;
          const bool two = ins->kind() == fb::PointwiseInstrKind::Binary;
          expect(load ? ins->op() < in.size() : ins->a() < i && (!two || ins->b() < i),
                 "pointwise instruction " + std::to_string(i));
        }
        return;
      }
      case fb::OpFamily::Softmax: {
        const auto* p = s->params_as_SoftmaxParams();
        const int64_t r = static_cast<int64_t>(y.size());
        expect(p && in.size() == 1 && in[0] == y && p->axis() >= -r && p->axis() < r, "softmax");
        return;
      }
      case fb::OpFamily::BatchNorm: {
        if (!s->params_as_BatchNormParams() || in.size() != 5) return bad("step ", name, " bn");
        expect(in[0].size() >= 2 && in[0] == y, "bn shapes");
        for (size_t i = 1; i < 5; ++i) expect(in[i] == Shape{in[0][1]}, "bn parameter shape");
        return;
      }
      case fb::OpFamily::Concat: {
        const auto* p = s->params_as_ConcatParams();
        if (!p || in.empty() || in.size() > 64) return bad("step ", name, " concat");
        const int64_t r = static_cast<int64_t>(y.size());
        const int64_t axis = p->axis() < 0 ? p->axis() + r : p->axis();
        int64_t sum = 0;
        for (const Shape& x : in) {
          bool same = x.size() == y.size();
          for (int64_t d = 0; same && d < r; ++d) same = d == axis || x[d] == y[d];
          expect(same, "concat input " + str(x));
          if (same) sum += x[axis];
        }
        expect(sum == y[axis], "concat axis sum");
        return;
      }
      case fb::OpFamily::Copy:
        expect(s->params_as_CopyParams() && in.size() == 1 &&
                   t(s->inputs()->Get(0))->size_bytes() == t(out_index)->size_bytes(),
               "copy sizes");
        return;
      case fb::OpFamily::DynamicQuantize: {
        if (!s->params_as_DynamicQuantizeParams())
          return bad("step ", name, " lacks DynamicQuantizeParams");
        if (in.size() != 1 || s->outputs()->size() != 3)
          return bad("step ", name, " has ", in.size(), " inputs and ", s->outputs()->size(),
                     " outputs (1 and 3)");
        const fb::Tensor* scale = t(s->outputs()->Get(1));
        const fb::Tensor* zp = t(s->outputs()->Get(2));
        expect(y == in[0] && t(out_index)->dtype() == fb::DType::UInt8, "y is x's shape, uint8");
        expect(scale->dtype() == fb::DType::Float32 && scale->size_bytes() == 4, "y_scale");
        expect(zp->dtype() == fb::DType::UInt8 && zp->size_bytes() == 1, "y_zero_point");
        return;
      }
      case fb::OpFamily::Unary: {
        const auto* p = s->params_as_UnaryParams();
        if (!p || in.size() != 1) return bad("step ", name, " unary");
        const bool predicate = p->op() >= fb::UnaryOp::IsNaN;  // IsNaN .. Not give bool
        expect(in[0] == y, "unary shape");
        expect(dtype_of(0) == (predicate ? fb::DType::Bool : in_dtype(0)), "unary dtype");
        return;
      }
      case fb::OpFamily::Elementwise: {
        const auto* p = s->params_as_ElementwiseParams();
        Shape out;
        if (!p || in.size() != 2) return bad("step ", name, " elementwise");
        expect(broadcast(in[0], in[1], &out) && out == y, "elementwise output " + str(y));
        expect(in_dtype(0) == in_dtype(1), "elementwise operands differ in dtype");
        const bool to_bool = p->op() >= fb::ElementwiseOp::Equal &&  // comparisons and logic
                             p->op() <= fb::ElementwiseOp::Xor;
        expect(dtype_of(0) == (to_bool ? fb::DType::Bool : in_dtype(0)), "elementwise dtype");
        return;
      }
      case fb::OpFamily::Where: {
        Shape xy, out;
        if (!s->params_as_WhereParams() || in.size() != 3) return bad("step ", name, " where");
        expect(broadcast(in[1], in[2], &xy) && broadcast(in[0], xy, &out) && out == y,
               "where output " + str(y));
        expect(in_dtype(0) == fb::DType::Bool && in_dtype(1) == in_dtype(2) &&
                   dtype_of(0) == in_dtype(1),
               "where dtypes");
        return;
      }
      case fb::OpFamily::Cast:
        expect(s->params_as_CastParams() && in.size() == 1 && in[0] == y, "cast shape");
        return;
      case fb::OpFamily::Transpose: {
        const auto* p = s->params_as_TransposeParams();
        if (!p || !p->perm() || in.size() != 1) return bad("step ", name, " transpose");
        const Shape& x = in[0];
        std::vector<bool> seen(x.size(), false);
        bool ok = p->perm()->size() == x.size() && y.size() == x.size();
        for (uint32_t d = 0; ok && d < p->perm()->size(); ++d) {
          const int32_t from = p->perm()->Get(d);
          ok = from >= 0 && static_cast<size_t>(from) < x.size() && !seen[from] &&
               y[d] == x[from];
          if (ok) seen[from] = true;
        }
        expect(ok && dtype_of(0) == in_dtype(0), "transpose perm/output " + str(y));
        return;
      }
      case fb::OpFamily::Quantize:
      case fb::OpFamily::Dequantize:
        expect(s->params_as_QuantizeParams() && in.size() >= 2 && in[0] == y, "quantize shape");
        return;
      case fb::OpFamily::InstanceNorm:
      case fb::OpFamily::GroupNorm:
      case fb::OpFamily::Lrn:
        expect(!in.empty() && in[0] == y && in[0].size() >= 2, "normalization shape");
        return;
      case fb::OpFamily::LayerNorm:
        expect(s->params_as_LayerNormParams() && in.size() >= 2 && in[0] == y, "layernorm shape");
        return;
      case fb::OpFamily::Reduce: {
        const auto* p = s->params_as_ReduceParams();
        if (!p || !p->axes() || in.size() != 1) return bad("step ", name, " reduce");
        Shape want = in[0];
        for (int32_t a : *p->axes())
          if (a >= 0 && static_cast<size_t>(a) < want.size()) want[a] = 1;
        expect(y == want, "reduce output " + str(y) + ", the reduced dims kept as 1");
        return;
      }
      case fb::OpFamily::ArgReduce: {
        const auto* p = s->params_as_ArgReduceParams();
        if (!p || in.size() != 1) return bad("step ", name, " argreduce");
        Shape want = in[0];
        if (p->axis() >= 0 && static_cast<size_t>(p->axis()) < want.size()) want[p->axis()] = 1;
        expect(y == want && dtype_of(0) == fb::DType::Int64, "argreduce output " + str(y));
        return;
      }
      case fb::OpFamily::TopK: {
        const auto* p = s->params_as_TopKParams();
        if (!p || in.size() != 1 || s->outputs()->size() != 2) return bad("step ", name, " topk");
        const Shape& x = in[0];
        const Shape indices = shape(s->outputs()->Get(1));
        bool ok = p->axis() >= 0 && static_cast<size_t>(p->axis()) < x.size() &&
                  y.size() == x.size() && indices == y;
        for (size_t d = 0; ok && d < x.size(); ++d)
          ok = static_cast<int32_t>(d) == p->axis() ? y[d] >= 1 && y[d] <= x[d] : y[d] == x[d];
        expect(ok && dtype_of(1) == fb::DType::Int64 && s->workspace_bytes() > 0,
               "topk outputs " + str(y));
        return;
      }
      case fb::OpFamily::Slice: {
        // Every element read lies inside x: starts[d] + c * steps[d] for c in [0, y[d]).
        const auto* p = s->params_as_SliceParams();
        if (!p || in.size() != 1) return bad("step ", name, " slice");
        const Shape& x = in[0];
        const Shape st = vec(p->starts()), sp = vec(p->steps());
        bool ok = st.size() == x.size() && sp.size() == x.size() && y.size() == x.size();
        for (size_t d = 0; ok && d < x.size(); ++d) {
          const int64_t last = st[d] + (y[d] - 1) * sp[d];
          ok = sp[d] != 0 && st[d] >= 0 && st[d] < x[d] && last >= 0 && last < x[d];
        }
        expect(ok && dtype_of(0) == in_dtype(0), "slice reads outside x " + str(x));
        return;
      }
      case fb::OpFamily::Gather: {
        const auto* p = s->params_as_GatherParams();
        if (!p || in.size() != 2) return bad("step ", name, " gather");
        const Shape& data = in[0];
        const int64_t axis = p->axis();
        if (axis < 0 || axis >= static_cast<int64_t>(data.size()))
          return bad("step ", name, " gather axis ", axis);
        Shape want(data.begin(), data.begin() + axis);
        want.insert(want.end(), in[1].begin(), in[1].end());
        want.insert(want.end(), data.begin() + axis + 1, data.end());
        expect(y == want && dtype_of(0) == in_dtype(0), "gather output " + str(y));
        expect(in_dtype(1) == fb::DType::Int32 || in_dtype(1) == fb::DType::Int64,
               "gather indices dtype");
        return;
      }
      case fb::OpFamily::GatherElements: {
        const auto* p = s->params_as_GatherElementsParams();
        if (!p || in.size() != 2) return bad("step ", name, " gather elements");
        expect(y == in[1] && in[0].size() == y.size() && p->axis() >= 0 &&
                   p->axis() < static_cast<int32_t>(y.size()) && dtype_of(0) == in_dtype(0),
               "gather elements output " + str(y));
        return;
      }
      case fb::OpFamily::Pad: {
        const auto* p = s->params_as_PadParams();
        if (!p || in.size() != 1) return bad("step ", name, " pad");
        const Shape& x = in[0];
        const Shape begin = vec(p->pads_begin());
        bool ok = begin.size() == x.size() && y.size() == x.size();
        // The end pad is implied by y; either may be negative (a crop), not past x.
        for (size_t d = 0; ok && d < x.size(); ++d) ok = -begin[d] < x[d] && y[d] >= 1;
        expect(ok && dtype_of(0) == in_dtype(0), "pad output " + str(y));
        return;
      }
      case fb::OpFamily::Broadcast: {
        const auto* p = s->params_as_BroadcastParams();
        if (!p || in.size() != 1) return bad("step ", name, " broadcast");
        const Shape& x = in[0];
        Shape out;
        bool ok = dtype_of(0) == in_dtype(0);
        if (p->tile()) {
          ok = ok && x.size() == y.size();
          for (size_t d = 0; ok && d < x.size(); ++d) ok = y[d] % x[d] == 0;
        } else {
          ok = ok && broadcast(x, y, &out) && out == y;
        }
        expect(ok, std::string(p->tile() ? "tile" : "expand") + " output " + str(y));
        return;
      }
      case fb::OpFamily::Resize: {
        const auto* p = s->params_as_ResizeParams();
        if (!p || in.size() != 1) return bad("step ", name, " resize");
        expect(y.size() == in[0].size() && p->scale() && p->scale()->size() == y.size(),
               "resize rank and scales");
        return;
      }
      case fb::OpFamily::Nms: {
        // Outputs: the selection [capacity, 3] and its run-time row count [1], both int64.
        if (!s->params_as_NmsParams() || in.size() != 2 || s->outputs()->size() != 2)
          return bad("step ", name, " nms inputs/outputs");
        const Shape &boxes = in[0], &scores = in[1];
        const bool shapes = boxes.size() == 3 && boxes[2] == 4 && scores.size() == 3 &&
                            scores[0] == boxes[0] && scores[2] == boxes[1];
        expect(shapes, "nms boxes " + str(boxes) + " and scores " + str(scores));
        expect(y.size() == 2 && y[1] == 3 && dtype_of(0) == fb::DType::Int64 &&
                   shape(s->outputs()->Get(1)) == Shape{1} && dtype_of(1) == fb::DType::Int64,
               "nms outputs");
        expect(s->workspace_bytes() > 0, "nms workspace");
        return;
      }
      case fb::OpFamily::ConvTranspose: {
        // ONNX ConvTranspose: W [C, M / groups, k...]; each output extent is
        // stride (in - 1) + output_padding + dilation (k - 1) + 1 - pad_begin - pad_end.
        const auto* p = s->params_as_ConvTransposeParams();
        if (!p) return bad("step ", name, " lacks ConvTransposeParams");
        const size_t n_in = 2 + p->has_bias() + p->has_residual();
        if (in.size() != n_in) return bad("step ", name, " has ", in.size(), " inputs");
        const Shape &x = in[0], &w = in[1];
        if (x.size() < 3 || x.size() > 5 || w.size() != x.size() || y.size() != x.size())
          return bad("step ", name, ": convtranspose ranks");
        const size_t sr = x.size() - 2;
        const Shape k = vec(p->kernel()), st = vec(p->stride()), dil = vec(p->dilation());
        const Shape pb = vec(p->pad_begin()), pe = vec(p->pad_end());
        Shape op = vec(p->output_padding());
        if (op.empty()) op.assign(sr, 0);
        if (k.size() != sr || st.size() != sr || dil.size() != sr || pb.size() != sr ||
            pe.size() != sr || op.size() != sr)
          return bad("step ", name, ": convtranspose array sizes");
        const int64_t groups = p->groups();
        expect(k == Shape(w.begin() + 2, w.end()), "kernel != weight dims");
        expect(groups >= 1 && w[0] == x[1] && x[1] % groups == 0, "convtranspose channels");
        Shape want = {x[0], w[1] * groups};
        for (size_t i = 0; i < sr; ++i)
          want.push_back(st[i] * (x[i + 2] - 1) + op[i] + dil[i] * (k[i] - 1) + 1 - pb[i] - pe[i]);
        expect(y == want, "convtranspose output " + str(y) + ", the window gives " + str(want));
        if (p->has_bias()) expect(in[2] == Shape{y[1]}, "convtranspose bias shape");
        if (p->has_residual()) expect(in.back() == y, "convtranspose residual shape");
        return;
      }
      case fb::OpFamily::Rnn: {
        // ONNX RNN/LSTM/GRU with G gates and A activations per direction: X [S, N, I]
        // ([N, S, I] batch-major), W [D, G H, I], R [D, G H, H], B [D, 2 G H], sequence_lens
        // [N] int32, initial_h/initial_c/Y_h/Y_c [D, N, H] ([N, D, H]), P [D, 3 H],
        // Y [S, D, N, H] ([N, S, D, H]); float32 throughout; a workspace.
        const auto* p = s->params_as_RnnParams();
        if (!p) return bad("step ", name, " lacks RnnParams");
        const bool lstm = p->cell() == fb::RnnCell::Lstm, gru = p->cell() == fb::RnnCell::Gru;
        const int64_t G = lstm ? 4 : gru ? 3 : 1, A = lstm ? 3 : gru ? 2 : 1;
        const int64_t D = p->direction() == fb::RnnDirection::Bidirectional ? 2 : 1;
        const size_t n_in = 3u + p->has_bias() + p->has_sequence_lens() + p->has_initial_h() +
                            p->has_initial_c() + p->has_peepholes();
        const size_t n_out = 0u + p->has_y() + p->has_y_h() + p->has_y_c();
        if (in.size() != n_in || s->outputs()->size() != n_out || n_out == 0)
          return bad("step ", name, ": rnn has ", in.size(), " inputs and ", s->outputs()->size(),
                     " outputs, its flags say ", n_in, " and ", n_out);
        if (!lstm && (p->has_initial_c() || p->has_peepholes() || p->has_y_c()))
          return bad("step ", name, ": rnn initial_c, P or Y_c outside LSTM");
        const Shape& x = in[0];
        if (x.size() != 3) return bad("step ", name, ": rnn X rank ", x.size());
        const bool bm = p->batch_major();
        const int64_t S = bm ? x[1] : x[0], N = bm ? x[0] : x[1], I = x[2];
        const int64_t H = p->hidden_size();
        const Shape state = bm ? Shape{N, D, H} : Shape{D, N, H};
        std::vector<std::pair<const char*, Shape>> want_in = {
            {"W", {D, G * H, I}}, {"R", {D, G * H, H}}};
        if (p->has_bias()) want_in.push_back({"B", {D, 2 * G * H}});
        if (p->has_sequence_lens()) want_in.push_back({"sequence_lens", {N}});
        if (p->has_initial_h()) want_in.push_back({"initial_h", state});
        if (p->has_initial_c()) want_in.push_back({"initial_c", state});
        if (p->has_peepholes()) want_in.push_back({"P", {D, 3 * H}});
        for (size_t i = 0; i < want_in.size(); ++i)
          expect(in[i + 1] == want_in[i].second, std::string("rnn ") + want_in[i].first + " " +
                                                     str(in[i + 1]) + ", expected " +
                                                     str(want_in[i].second));
        std::vector<std::pair<const char*, Shape>> want_out;
        if (p->has_y()) want_out.push_back({"Y", bm ? Shape{N, S, D, H} : Shape{S, D, N, H}});
        if (p->has_y_h()) want_out.push_back({"Y_h", state});
        if (p->has_y_c()) want_out.push_back({"Y_c", state});
        for (size_t i = 0; i < want_out.size(); ++i) {
          const Shape got = shape(s->outputs()->Get(static_cast<uint32_t>(i)));
          expect(got == want_out[i].second, std::string("rnn ") + want_out[i].first + " " +
                                                str(got) + ", expected " +
                                                str(want_out[i].second));
          expect(dtype_of(static_cast<uint32_t>(i)) == fb::DType::Float32, "rnn output dtype");
        }
        for (size_t i = 0; i < in.size(); ++i) {
          const bool lens = p->has_sequence_lens() && i == 3u + p->has_bias();
          expect(in_dtype(static_cast<uint32_t>(i)) ==
                     (lens ? fb::DType::Int32 : fb::DType::Float32),
                 "rnn input dtype");
        }
        expect(p->activations() && p->activations()->size() == static_cast<uint32_t>(D * A),
               "rnn activations: " + std::to_string(D * A) + " expected");
        expect(s->workspace_bytes() > 0, "rnn workspace");
        return;
      }
      case fb::OpFamily::QLinearMatMul:
      case fb::OpFamily::QLinearConv: {
        // Inputs x/a, its scale and zero point, w/b, its scale and zero point, y's scale and
        // zero point (ONNX order), [QLinearConv: int32 bias]; x, w and y are 8-bit integers,
        // each zero point of its operand's dtype, the scales float32.
        const bool conv = s->op() == fb::OpFamily::QLinearConv;
        const auto* pc = s->params_as_QLinearConvParams();
        if (conv ? !pc : !s->params_as_QLinearMatMulParams())
          return bad("step ", name, " lacks its QLinear params");
        const size_t n_in = conv && pc->has_bias() ? 9 : 8;
        if (in.size() != n_in) return bad("step ", name, " has ", in.size(), " inputs");
        const auto byte = [](fb::DType d) { return d == fb::DType::Int8 || d == fb::DType::UInt8; };
        expect(byte(in_dtype(0)) && byte(in_dtype(3)) && byte(dtype_of(0)),
               "qlinear operands and output are int8 or uint8");
        expect(in_dtype(2) == in_dtype(0) && in_dtype(5) == in_dtype(3) &&
                   in_dtype(7) == dtype_of(0),
               "qlinear zero points have their operand's dtype");
        expect(in_dtype(1) == fb::DType::Float32 && in_dtype(4) == fb::DType::Float32 &&
                   in_dtype(6) == fb::DType::Float32,
               "qlinear scales are float32");
        const Shape &a = in[0], &b = in[3];
        if (!conv) {
          if (a.size() < 2 || b.size() < 2 || y.size() < 2)
            return bad("step ", name, ": qlinear_matmul operands need rank >= 2");
          expect(b[b.size() - 2] == a.back(), "qlinear_matmul inner dims " + str(a) + " x " +
                                                  str(b));
          Shape batch;
          const bool ok = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2),
                                    &batch);
          batch.push_back(a[a.size() - 2]);
          batch.push_back(b.back());
          expect(ok && y == batch, "qlinear_matmul output " + str(y));
          return;
        }
        if (a.size() < 3 || a.size() > 5 || b.size() != a.size())
          return bad("step ", name, ": qlinear_conv ranks");
        const size_t sr = a.size() - 2;
        const Shape k = vec(pc->kernel()), st = vec(pc->stride()), dil = vec(pc->dilation());
        const Shape pb = vec(pc->pad_begin()), pe = vec(pc->pad_end());
        if (k.size() != sr || st.size() != sr || dil.size() != sr || pb.size() != sr ||
            pe.size() != sr)
          return bad("step ", name, ": qlinear_conv array sizes");
        expect(k == Shape(b.begin() + 2, b.end()), "kernel != weight dims");
        expect(pc->groups() >= 1 && b[1] * pc->groups() == a[1] && b[0] % pc->groups() == 0,
               "qlinear_conv channels");
        expect(y == window_out(a, b[0], k, st, dil, pb, pe), "qlinear_conv output " + str(y));
        if (pc->has_bias())
          expect(in[8] == Shape{b[0]} && in_dtype(8) == fb::DType::Int32, "qlinear_conv bias");
        return;
      }
      default:  // families the converter does not emit yet have no check here
        bad("step ", name, ": op family ", fb::EnumNameOpFamily(s->op()), " is not checked");
        return;
    }
  }

  const std::vector<uint8_t>& buf_;
  const fb::Plan* p_;
  std::vector<std::string> problems_;
  std::map<uint32_t, bool> bound_;  // tensor -> is an input binding
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> live_;
};

}  // namespace

const fb::Plan* read_plan(const std::vector<uint8_t>& buffer) {
  flatbuffers::Verifier verifier(buffer.data(), buffer.size());
  if (!fb::VerifyPlanBuffer(verifier)) return nullptr;
  return fb::GetPlan(buffer.data());
}

std::vector<int64_t> tensor_shape(const fb::Plan* plan, uint32_t index) {
  return vec(plan->tensors()->Get(index)->shape());
}

std::vector<std::string> plan_contract_problems(const std::vector<uint8_t>& buffer) {
  const fb::Plan* plan = read_plan(buffer);
  if (plan == nullptr) return {"the buffer does not verify as a Plan"};
  return Checker(buffer, plan).run();
}

}  // namespace jetplan::converter::testing
