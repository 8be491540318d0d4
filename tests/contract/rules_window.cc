// Contract rules of the sliding-window families (schemas/plan.fbs ConvParams, PoolParams,
// ConvTransposeParams): x [N, C, *in] with 1 to 3 spatial dims, every window array one entry
// per spatial dim, the output extents the window gives.
#include "tests/contract/step_contract.h"

namespace jetplan::converter::testing::contract {
namespace {

// Conv and ConvTranspose: Float32 inputs x, w, [bias], [residual] as the params `p` (of the
// table `table`) say; false (reported) when the params are missing or the count is off.
template <typename P>
bool conv_inputs(StepContract& c, const P* p, const char* table) {
  c.inputs_are(fb::DType::Float32);
  if (!p) {
    c.bad("step ", c.name, " lacks ", table);
    return false;
  }
  return c.input_count_is(2 + p->has_bias() + p->has_residual());
}

}  // namespace

// x [N, C, *in], w [Cout, Cin / groups, *kernel]; inputs x, w, [bias], [residual].
void contract_conv(StepContract& c) {
  const auto* p = c.step->params_as_ConvParams();
  if (!conv_inputs(c, p, "ConvParams")) return;
  const auto& in = c.in;
  const Shape& y = c.y;
  const Shape& x = in[0];
  const Shape& w = in[1];
  const Shape k = vec(p->kernel()), st = vec(p->stride()), dil = vec(p->dilation());
  const Shape pb = vec(p->pad_begin()), pe = vec(p->pad_end());
  const size_t sr = x.size() - 2;
  c.expect(x.size() >= 3 && x.size() <= 5 && w.size() == x.size(), "conv ranks");
  c.expect(k.size() == sr && st.size() == sr && dil.size() == sr && pb.size() == sr &&
               pe.size() == sr,
           "conv array sizes");
  c.expect(k == Shape(w.begin() + 2, w.end()), "kernel != weight dims");
  c.expect(w[1] * p->groups() == x[1] && w[0] % p->groups() == 0, "conv channels");
  c.expect(y == window_out(x, w[0], k, st, dil, pb, pe), "conv output " + str(y));
  if (p->has_bias()) c.expect(in[2] == Shape{w[0]}, "bias shape");
  if (p->has_residual()) c.expect(in.back() == y, "residual shape");
}

// Input x; y [N, C, *out]; a max pool may write its indices as a second output.
void contract_pool(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  const auto* p = c.step->params_as_PoolParams();
  if (!p || c.in.size() != 1) return c.bad("step ", c.name, " pool params/inputs");
  const Shape& x = c.in[0];
  const Shape& y = c.y;
  const Shape k = vec(p->kernel()), st = vec(p->stride()), dil = vec(p->dilation());
  const Shape pb = vec(p->pad_begin()), pe = vec(p->pad_end());
  const size_t sr = x.size() - 2;
  c.expect(k.size() == sr && st.size() == sr && dil.size() == sr && pb.size() == sr &&
               pe.size() == sr,
           "pool array sizes");
  c.expect(y == window_out(x, x[1], k, st, dil, pb, pe), "pool output " + str(y));
  // MaxPool's Indices: a second output, int64 of y's shape (CPU plans).
  if (c.step->outputs()->size() == 2)
    c.expect(p->kind() == fb::PoolKind::Max && c.cpu && c.shape(c.step->outputs()->Get(1)) == y &&
                 c.dtype_of(1) == fb::DType::Int64,
             "pool indices output");
  else
    c.expect(c.step->outputs()->size() == 1 && !p->indices_column_major(), "pool outputs");
}

// ONNX ConvTranspose: W [C, M / groups, k...]; each output extent is
// stride (in - 1) + output_padding + dilation (k - 1) + 1 - pad_begin - pad_end.
void contract_conv_transpose(StepContract& c) {
  const auto* p = c.step->params_as_ConvTransposeParams();
  if (!conv_inputs(c, p, "ConvTransposeParams")) return;
  const auto& in = c.in;
  const Shape& y = c.y;
  const Shape &x = in[0], &w = in[1];
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size() || y.size() != x.size())
    return c.bad("step ", c.name, ": convtranspose ranks");
  const size_t sr = x.size() - 2;
  const Shape k = vec(p->kernel()), st = vec(p->stride()), dil = vec(p->dilation());
  const Shape pb = vec(p->pad_begin()), pe = vec(p->pad_end());
  Shape op = vec(p->output_padding());
  if (op.empty()) op.assign(sr, 0);
  if (k.size() != sr || st.size() != sr || dil.size() != sr || pb.size() != sr ||
      pe.size() != sr || op.size() != sr)
    return c.bad("step ", c.name, ": convtranspose array sizes");
  const int64_t groups = p->groups();
  c.expect(k == Shape(w.begin() + 2, w.end()), "kernel != weight dims");
  c.expect(groups >= 1 && w[0] == x[1] && x[1] % groups == 0, "convtranspose channels");
  Shape want = {x[0], w[1] * groups};
  for (size_t i = 0; i < sr; ++i)
    want.push_back(st[i] * (x[i + 2] - 1) + op[i] + dil[i] * (k[i] - 1) + 1 - pb[i] - pe[i]);
  c.expect(y == want, "convtranspose output " + str(y) + ", the window gives " + str(want));
  if (p->has_bias()) c.expect(in[2] == Shape{y[1]}, "convtranspose bias shape");
  if (p->has_residual()) c.expect(in.back() == y, "convtranspose residual shape");
}

// DeformConv: x [N, C, H, W], w [Cout, C / group, KH, KW], offset [N, offset_group * KH * KW *
// 2, OH, OW], then b [Cout] and mask [N, offset_group * KH * KW, OH, OW] as the flags say; y [N,
// Cout, OH, OW] of the window arithmetic; one float dtype.
void contract_deform_conv(StepContract& c) {
  const auto* p = c.step->params_as_DeformConvParams();
  const size_t inputs = 3 + (p && p->has_bias() ? 1 : 0) + (p && p->has_mask() ? 1 : 0);
  const auto two = [](const flatbuffers::Vector<int64_t>* v) { return v && v->size() == 2; };
  if (!p || c.in.size() != inputs || !two(p->kernel()) || !two(p->stride()) ||
      !two(p->dilation()) || !two(p->pad_begin()) || !two(p->pad_end()))
    return c.bad("step ", c.name, " deform_conv");
  const Shape &x = c.in[0], &w = c.in[1], &off = c.in[2];
  if (x.size() != 4 || w.size() != 4 || c.y.size() != 4) return c.bad("step ", c.name, " deform_conv rank");
  const int64_t G = p->group(), OG = p->offset_group();
  bool ok = G >= 1 && OG >= 1 && x[1] % G == 0 && w[0] % G == 0 && x[1] % OG == 0 &&
            w[1] == x[1] / G && w[2] == p->kernel()->Get(0) && w[3] == p->kernel()->Get(1);
  for (uint32_t d = 0; ok && d < 2; ++d) {
    const int64_t k = p->kernel()->Get(d), s = p->stride()->Get(d), dl = p->dilation()->Get(d);
    ok = s >= 1 && dl >= 1 &&
         c.y[2 + d] ==
             (x[2 + d] + p->pad_begin()->Get(d) + p->pad_end()->Get(d) - dl * (k - 1) - 1) / s + 1;
  }
  const int64_t taps = w[2] * w[3];
  ok = ok && c.y[0] == x[0] && c.y[1] == w[0] && off == Shape{x[0], OG * taps * 2, c.y[2], c.y[3]};
  if (p->has_bias()) ok = ok && c.in[3] == Shape{w[0]};
  if (p->has_mask()) ok = ok && c.in[inputs - 1] == Shape{x[0], OG * taps, c.y[2], c.y[3]};
  const fb::DType t = c.in_dtype(0);
  for (size_t i = 1; i < inputs; ++i) ok = ok && c.in_dtype(uint32_t(i)) == t;
  c.expect(ok && c.dtype_of(0) == t && (t == fb::DType::Float32 || t == fb::DType::Float16),
           "deform_conv shapes " + str(c.y));
}

}  // namespace jetplan::converter::testing::contract
