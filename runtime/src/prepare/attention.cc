// Attention: softmax(scale * Q Kt + mask) V with Q, K, V and O read through strides (their
// *_axes, or Q, K and V through a view), the mask broadcast to [batch, heads, seq_q, seq_kv].
#include <cmath>

#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {
namespace {

// The extents (batch, heads, seq, head dim) of one operand and its strides, from its tensor and
// axes (absent: the tensor's own order). Rank 3 has no heads dim: heads 1. The head dim must be
// the tensor's last, so its elements are contiguous.
struct Operand {
  int64_t batch = 1, heads = 1, seq = 0, dim = 0;
  kernels::AttentionStrides strides;
};

Status read_operand(const PreparedStep& s, const TensorInfo& t,
                    const flatbuffers::Vector<uint8_t>* axes, Operand* out) {
  const int32_t rank = t.rank;
  int32_t order[4] = {0, 1, 2, 3};
  if (axes != nullptr) {
    if (static_cast<int32_t>(axes->size()) != rank)
      return invalid(s, "an operand's axes list differs from its rank");
    bool seen[4] = {false, false, false, false};
    for (int32_t i = 0; i < rank; ++i) {
      order[i] = axes->Get(i);
      if (order[i] >= rank || seen[order[i]])
        return invalid(s, "an operand's axes are not a permutation of its dims");
      seen[order[i]] = true;
    }
  }
  if (order[rank - 1] != rank - 1)
    return invalid(s, "the head dim must be each operand's last dim");
  int64_t dense[4] = {0, 0, 0, 0};
  dense[rank - 1] = 1;
  for (int32_t d = rank - 2; d >= 0; --d) dense[d] = dense[d + 1] * t.dims[d + 1];
  const int32_t b = order[0], sq = order[rank - 2];
  out->batch = t.dims[b];
  out->strides.batch = dense[b];
  if (rank == 4) {
    out->heads = t.dims[order[1]];
    out->strides.head = dense[order[1]];
  }
  out->seq = t.dims[sq];
  out->strides.seq = dense[sq];
  out->dim = t.dims[rank - 1];
  return JP_OK;
}

// An operand read through a view (AttentionParams.q_view ...): O's batch, heads and head dim,
// the view's sequence length and strides, every element it reaches inside tensor t.
Status read_view(const PreparedStep& s, const TensorInfo& t, const fb::AttentionView& view,
                 const Operand& o, Operand* out) {
  if (view.offset() < 0 || view.batch() < 0 || view.head() < 0 || view.seq() < 0 ||
      view.seq_len() < 1)
    return invalid(s, "an operand's view has a negative stride or offset, or no rows");
  *out = o;
  out->seq = view.seq_len();
  out->strides = {view.batch(), view.head(), view.seq(), view.offset()};
  if (o.batch == 0 || o.heads == 0 || o.dim == 0) return JP_OK;  // nothing is read
  // The last element reached: each term at most the tensor's element count (checked by
  // division first), so the sum stays far inside int64.
  const int64_t count = static_cast<int64_t>(t.elements);
  const auto fits = [count](int64_t extent, int64_t stride) {
    return extent <= 1 || stride == 0 || extent - 1 <= count / stride;
  };
  if (!fits(o.batch, view.batch()) || !fits(o.heads, view.head()) ||
      !fits(view.seq_len(), view.seq()) || view.offset() > count ||
      view.offset() + (o.batch - 1) * view.batch() + (o.heads - 1) * view.head() +
              (view.seq_len() - 1) * view.seq() + o.dim > count)
    return invalid(s, "an operand's view reaches past its tensor");
  return JP_OK;
}

// An INT8 plan's Attention into Int8 O: Q, K, V and the mask of one float dtype (Float32, or
// Float16 in CUDA plans), then the Float32 inverse of O's scale (kernels/attention.h
// attention_to_int8).
Status check_to_int8(const jp_plan& plan, const PreparedStep& s, uint32_t operands) {
  JP_RETURN_IF_ERROR(check_arity(s, "Attention", operands + 1, 1));
  const fb::DType q = input_at(plan, s, 0).dtype;
  const TensorInfo& inv = input_at(plan, s, operands);
  bool ok = q == fb::DType::Float32 || (q == fb::DType::Float16 && plan.backend == JP_BACKEND_CUDA);
  for (uint32_t i = 1; i < operands; ++i) ok = ok && input_at(plan, s, i).dtype == q;
  if (!ok || inv.dtype != fb::DType::Float32 || inv.elements != 1) {
    return fail(JP_ERROR_UNSUPPORTED,
                "step '%s': an Attention into Int8 takes Q, K, V and the mask of one float dtype "
                "(Q is %s) and one Float32 inverse scale",
                s.name, fb::EnumNameDType(q));
  }
  return JP_OK;
}

void run_attention_to_int8_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::AttentionParams& p = s.params.attention;
  kernels::cpu::attention_to_int8(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                                  in_f32(s, tensors, 2),
                                  p.has_mask ? in_f32(s, tensors, 3) : nullptr,
                                  *in_f32(s, tensors, p.inv_scale_input),
                                  static_cast<int8_t*>(out(s, tensors)));
}

}  // namespace

Status prepare_attention(const jp_plan& plan, const fb::AttentionParams& p, PreparedStep* s) {
  const uint32_t operands = p.has_mask() ? 4 : 3;
  const bool to_int8 = s->outputs->size() > 0 && output_at(plan, *s, 0).dtype == fb::DType::Int8;
  if (to_int8)
    JP_RETURN_IF_ERROR(check_to_int8(plan, *s, operands));
  else
    JP_RETURN_IF_ERROR(check_float_inputs(plan, *s, "Attention", operands));
  const TensorInfo& o = output_at(plan, *s, 0);
  if (o.rank != 3 && o.rank != 4) return invalid(*s, "Q, K, V and O must be 3-D or 4-D");
  Operand oo;
  JP_RETURN_IF_ERROR(read_operand(*s, o, p.o_axes(), &oo));
  // Q, K and V: through their view, else of O's rank through their axes.
  const fb::AttentionView* views[3] = {p.q_view(), p.k_view(), p.v_view()};
  const flatbuffers::Vector<uint8_t>* axes[3] = {p.q_axes(), p.k_axes(), p.v_axes()};
  Operand in[3];
  for (int i = 0; i < 3; ++i) {
    const TensorInfo& t = input_at(plan, *s, i);
    if (views[i] != nullptr) {
      if (axes[i] != nullptr) return invalid(*s, "an operand has both axes and a view");
      JP_RETURN_IF_ERROR(read_view(*s, t, *views[i], oo, &in[i]));
      continue;
    }
    if (t.rank != o.rank) return invalid(*s, "Q, K, V and O must have one rank");
    JP_RETURN_IF_ERROR(read_operand(*s, t, axes[i], &in[i]));
  }
  const Operand &oq = in[0], &ok = in[1], &ov = in[2];
  const auto same = [](const Operand& a, const Operand& b) {
    return a.batch == b.batch && a.heads == b.heads && a.dim == b.dim;
  };
  if (!same(oq, ok) || !same(oq, ov) || !same(oq, oo))
    return invalid(*s, "Q, K, V and O must agree on batch, heads and head dim");
  if (ok.seq != ov.seq) return invalid(*s, "K and V must have one sequence length");
  if (oo.seq != oq.seq) return invalid(*s, "O must have Q's sequence length");
  if (!std::isfinite(p.scale())) return invalid(*s, "scale must be finite");
  kernels::AttentionParams& a = fresh_params(&s->params.attention);
  a.batch = oq.batch;
  a.heads = oq.heads;
  a.seq_q = oq.seq;
  a.seq_kv = ok.seq;
  a.head_dim = oq.dim;
  a.scale = p.scale();
  a.causal = p.causal();
  a.has_mask = p.has_mask();
  a.q = oq.strides;
  a.k = ok.strides;
  a.v = ov.strides;
  a.o = oo.strides;
  if (to_int8) {
    a.inv_scale_input = static_cast<int32_t>(operands);
    s->run_cpu = run_attention_to_int8_cpu;
  }
  if (!p.has_mask()) return JP_OK;
  // The mask right-aligned against [batch, heads, seq_q, seq_kv] (rank 3: no heads).
  const TensorInfo& m = input_at(plan, *s, 3);
  const int32_t full = o.rank;
  const int64_t want4[4] = {a.batch, a.heads, a.seq_q, a.seq_kv};
  const int64_t want3[3] = {a.batch, a.seq_q, a.seq_kv};
  const int64_t* target = full == 4 ? want4 : want3;
  if (m.rank > full) return invalid(*s, "the mask has more dims than Q");
  int64_t strides[4] = {0, 0, 0, 0};
  int64_t dense = 1;
  for (int32_t d = m.rank - 1; d >= 0; --d) {
    const int32_t at = full - m.rank + d;
    if (m.dims[d] != 1 && m.dims[d] != target[at])
      return invalid(*s, "the mask does not broadcast to [batch, heads, seq_q, seq_kv]");
    strides[at] = m.dims[d] == 1 ? 0 : dense;
    dense *= m.dims[d];
  }
  a.mask_batch = strides[0];
  if (full == 4) {
    a.mask_head = strides[1];
    a.mask_q = strides[2];
    a.mask_kv = strides[3];
  } else {
    a.mask_q = strides[1];
    a.mask_kv = strides[2];
  }
  return JP_OK;
}

void run_attention_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::AttentionParams& p = s.params.attention;
  kernels::cpu::attention(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1), in_f32(s, tensors, 2),
                          p.has_mask ? in_f32(s, tensors, 3) : nullptr, out_f32(s, tensors));
}

}  // namespace jetplan::rt
