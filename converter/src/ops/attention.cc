// The Attention family. No ONNX op resolves to one step of it: fuse_attention (passes/) replaces
// the exporters' MatMul, scale, mask Add, Softmax, MatMul chains by its steps, and the ONNX
// Attention op (opsets 23 to 25) is decomposed into such a chain first (its definition is that
// graph), so it fuses where the chain does and runs as its primitive steps where not (softcap,
// a head dim the GPU kernels do not take).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

StepParamsOffset serialize_attention(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const AttentionDesc& a = s.op.attention;
  const auto axes = [&fbb](const std::vector<uint8_t>& v) {
    return v.empty() ? flatbuffers::Offset<flatbuffers::Vector<uint8_t>>() : fbb.CreateVector(v);
  };
  const auto view = [&fbb](const AttentionViewDesc& d) {
    return d.seq_len == 0 ? flatbuffers::Offset<fb::AttentionView>()
                          : fb::CreateAttentionView(fbb, d.offset, d.batch, d.head, d.seq,
                                                    d.seq_len);
  };
  const auto q = axes(a.q_axes), k = axes(a.k_axes), v = axes(a.v_axes), o = axes(a.o_axes);
  const auto qv = view(a.q_view), kv = view(a.k_view), vv = view(a.v_view);
  return params(
      fb::CreateAttentionParams(fbb, a.scale, a.causal, a.has_mask, q, k, v, o, qv, kv, vv));
}

// The additive bias of is_causal and the sliding window (opset 25) as a constant [Sq, Skv]: key j
// is seen by query i when j <= i + offset (causal) and i + offset - left <= j <= i + offset +
// right (each bound where >= 0); offset is the past length (bottom-right alignment, as ONNX).
std::vector<float> position_bias(int64_t sq, int64_t skv, int64_t offset, bool causal,
                                 int64_t left, int64_t right) {
  std::vector<float> bias(static_cast<size_t>(sq * skv), 0.f);
  for (int64_t i = 0; i < sq; ++i)
    for (int64_t j = 0; j < skv; ++j) {
      const int64_t diff = i + offset - j;
      if ((causal && diff < 0) || (left >= 0 && diff > left) || (right >= 0 && -diff > right))
        bias[static_cast<size_t>(i * skv + j)] = -std::numeric_limits<float>::infinity();
    }
  return bias;
}

}  // namespace

namespace {

// The sizes of an Attention node's inputs (past keys not counted in skv).
struct AttentionForm {
  size_t rank = 4;
  int64_t batch = 0, hq = 0, hkv = 0, sq = 0, skv = 0, d = 0, dv = 0;
  bool qk_output = false;  // qk_matmul_output (mode 0) is read
};

// Reads and checks `node`'s shapes and attributes into *f: "" or the reason jetplan does not run
// it (every such form named at once); ConvertError for an invalid node.
std::string read_attention(const Graph& g, const Node& node, AttentionForm* f) {
  if (std::string r = float_inputs(g, node, {0, 1, 2, 4, 5}); !r.empty()) return r;
  const Shape q = input(g, node, 0).shape, k = input(g, node, 1).shape,
              v = input(g, node, 2).shape;
  const size_t rank = q.size();
  if ((rank != 3 && rank != 4) || k.size() != rank || v.size() != rank)
    fail("node ", node_label(node), ": Q, K and V must all have rank 3 or all rank 4 (they are ",
         shape_str(q), ", ", shape_str(k), ", ", shape_str(v), ")");
  const auto bad = [&](const std::string& what) {
    fail("node ", node_label(node), ": ", what, " (Q ", shape_str(q), ", K ", shape_str(k),
         ", V ", shape_str(v), ")");
  };
  std::vector<std::string> refused;
  if (has_input(node, 6))
    refused.push_back("the nonpad_kv_seqlen input (padded key/value caches)");
  // qk_matmul_output: written for mode 0 (scale * Q Kt) without softcap; the other modes and
  // softcap's form are not (ONNX's text and its reference differ on which value each is).
  f->qk_output = node.outputs.size() > 3 && is_used(g, node.outputs[3]);
  const int64_t qk_mode = attr_int(node, "qk_matmul_output_mode", 0);
  if (f->qk_output && (qk_mode != 0 || attr_float(node, "softcap", 0.f) > 0.f))
    refused.push_back(cat("the qk_matmul_output output (output 3) of qk_matmul_output_mode ",
                          qk_mode, qk_mode == 0 ? " with softcap" : ""));
  if (has_input(node, 3)) {
    const DataType m = input(g, node, 3).dtype;
    if (m != DataType::kFloat32 && m != DataType::kBool)
      refused.push_back(
          cat("an attn_mask of ", dtype_name(m), " (jetplan takes bool and float32)"));
  }
  if (has_input(node, 4) != has_input(node, 5))
    fail("node ", node_label(node), ": past_key and past_value come together or not at all");
  if (has_input(node, 4) && input(g, node, 4).shape.size() != 4) bad("past_key must have rank 4");
  if (!refused.empty()) {
    std::string list;
    for (const std::string& r : refused) list += (list.empty() ? "" : "; ") + r;
    return cat(list, " ", refused.size() == 1 ? "is" : "are", " not supported");
  }
  f->rank = rank;
  f->batch = q[0];
  if (rank == 3) {
    f->hq = attr_int(node, "q_num_heads", 0);
    f->hkv = attr_int(node, "kv_num_heads", 0);
    if (f->hq <= 0 || f->hkv <= 0) bad("3-D inputs need q_num_heads and kv_num_heads above 0");
    if (q[2] % f->hq != 0 || k[2] % f->hkv != 0 || v[2] % f->hkv != 0)
      bad("the hidden sizes are not multiples of the head counts");
    f->sq = q[1];
    f->skv = k[1];
    f->d = q[2] / f->hq;
    f->dv = v[2] / f->hkv;
    if (k[2] / f->hkv != f->d) bad("Q and K have different head sizes");
  } else {
    f->hq = q[1];
    f->hkv = k[1];
    f->sq = q[2];
    f->skv = k[2];
    f->d = q[3];
    f->dv = v[3];
    if (k[3] != f->d) bad("Q and K have different head sizes");
    for (const char* a : {"q_num_heads", "kv_num_heads"})
      if (node.attrs.count(a) && attr_int(node, a, 0) != (a[0] == 'q' ? f->hq : f->hkv))
        bad(cat(a, " differs from the inputs' head count"));
  }
  if (k[0] != f->batch || v[0] != f->batch || v[rank - 2] != k[rank - 2] ||
      (rank == 4 && v[1] != f->hkv))
    bad("K and V do not match Q's batch or each other's sequence and heads");
  if (f->hkv <= 0 || f->hq % f->hkv != 0) bad("q heads are not a multiple of kv heads");
  return "";
}

// The additive bias of the scores [.., Sq, Skv]: the mask (bool: false masks; padded with masked
// keys to Skv when shorter, as ONNX does) plus the causal and window bias; -1 when none.
int attention_bias(Graph& g, const Node& node, OnnxNodes& b, int64_t sq, int64_t skv,
                   int64_t past_len) {
  int bias = -1;
  if (has_input(node, 3)) {
    bias = node.inputs[3];
    const Value& m = g.values[bias];
    const bool boolean = m.dtype == DataType::kBool;
    if (m.shape.empty() || m.shape.back() > skv)
      fail("node ", node_label(node), ": attn_mask ", shape_str(m.shape),
           " is longer than the keys (", skv, ")");
    if (m.shape.back() < skv) {
      std::vector<int64_t> pads(m.shape.size() * 2, 0);
      pads.back() = skv - m.shape.back();
      const int pad_value =
          boolean ? b.constant("mask_pad_value", DataType::kBool, {}, {0})
                  : b.scalar("mask_pad_value", -std::numeric_limits<float>::infinity());
      bias = b.add("Pad", "mask_padded", {bias, b.ints("mask_pads", pads), pad_value});
    }
    if (boolean)
      bias = b.add("Where", "mask_bias",
                   {bias, b.scalar("mask_zero", 0.f),
                    b.scalar("mask_neg_inf", -std::numeric_limits<float>::infinity())});
  }
  const bool causal = attr_int(node, "is_causal", 0) != 0;
  const int64_t left = attr_int(node, "left_window_size", -1),
                right = attr_int(node, "right_window_size", -1);
  if (causal || left >= 0 || right >= 0) {
    const int pos = b.floats("position_bias", {sq, skv},
                             position_bias(sq, skv, past_len, causal, left, right));
    bias = bias < 0 ? pos : b.add("Add", "mask_and_position", {bias, pos});
  }
  return bias;
}

}  // namespace

// Q, K, V of rank 4 ([batch, heads, seq, head dim]) or 3 ([batch, seq, heads * head dim] with
// q_num_heads and kv_num_heads): S = scale * Q Kt (softcap: c * tanh(S / c)), plus the mask and
// the causal and window bias, softmax over the keys, times V. Grouped-query attention repeats
// each K and V head for its group of Q heads (Expand); past_key and past_value are concatenated
// before the new keys (present_key and present_value are those), and qk_matmul_output (mode 0)
// is the scaled scores. The 3-D form keeps its heads as [batch, seq, heads, head dim] views read
// through the Transposes, which fuse_attention folds into the fused step's axes.
std::string decompose_attention(Graph& g, const Node& node, std::vector<Node>* out) {
  AttentionForm f;
  if (std::string r = read_attention(g, node, &f); !r.empty()) return r;
  const size_t rank = f.rank;
  const int64_t batch = f.batch, hq = f.hq, hkv = f.hkv, sq = f.sq, d = f.d, dv = f.dv;
  int64_t skv = f.skv;
  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  // The heads: [B, S, H, D] for the 3-D form (heads at dim 2), [B, H, S, D] for the 4-D;
  // head_dim: where K's and V's heads are.
  int qh = node.inputs[0], kh = node.inputs[1], vh = node.inputs[2];
  int head_dim = 1;
  if (rank == 3) {
    qh = b.add("Reshape", "q_heads", {qh, b.ints("q_heads_shape", {batch, sq, hq, d})});
    kh = b.add("Reshape", "k_heads", {kh, b.ints("k_heads_shape", {batch, skv, hkv, d})});
    vh = b.add("Reshape", "v_heads", {vh, b.ints("v_heads_shape", {batch, skv, hkv, dv})});
    head_dim = 2;
  }
  // The key/value cache: [B, Hkv, S, D] tensors, so the 3-D form's heads move there first.
  const bool past = has_input(node, 4);
  const bool present = (node.outputs.size() > 1 && is_used(g, node.outputs[1])) ||
                       (node.outputs.size() > 2 && is_used(g, node.outputs[2]));
  int64_t past_len = 0;
  if (past || present) {
    if (rank == 3) {
      kh = b.add("Transpose", "k_bhsd", {kh}, {{"perm", A::ints_attr({0, 2, 1, 3})}});
      vh = b.add("Transpose", "v_bhsd", {vh}, {{"perm", A::ints_attr({0, 2, 1, 3})}});
      head_dim = 1;
    }
    if (past) {
      past_len = input(g, node, 4).shape[2];
      kh = b.add("Concat", "present_key", {node.inputs[4], kh}, {{"axis", A::int_attr(2)}});
      vh = b.add("Concat", "present_value", {node.inputs[5], vh}, {{"axis", A::int_attr(2)}});
      skv += past_len;
    }
    for (size_t o : {1, 2})
      if (node.outputs.size() > o && node.outputs[o] >= 0)
        b.add("Identity", o == 1 ? "present_key_out" : "present_value_out", {o == 1 ? kh : vh}, {},
              node.outputs[o]);
  }
  // Grouped-query attention: K and V heads repeated for each group ([h0, h0, h1, h1, ...]).
  if (hq != hkv) {
    const int64_t group = hq / hkv;
    for (int* t : {&kh, &vh}) {
      const std::string n = t == &kh ? "k" : "v";
      // [B, Skv, Hkv, 1, D] (3-D form) or [B, Hkv, 1, Skv, D], the 1 expanded to the group.
      const int64_t size = t == &kh ? d : dv;
      const Shape grouped = head_dim == 2 ? Shape{batch, skv, hkv, 1, size}
                                          : Shape{batch, hkv, 1, skv, size};
      Shape repeat(5, 1);
      repeat[static_cast<size_t>(head_dim) + 1] = group;
      Shape merged = grouped;
      merged[static_cast<size_t>(head_dim)] = hq;
      merged.erase(merged.begin() + head_dim + 1);
      const int u = b.add("Reshape", n + "_groups", {*t, b.ints(n + "_groups_shape", grouped)});
      const int e = b.add("Expand", n + "_repeat", {u, b.ints(n + "_repeat_shape", repeat)});
      *t = b.add("Reshape", n + "_repeated", {e, b.ints(n + "_repeated_shape", merged)});
    }
  }
  // Q [B, Hq, Sq, D], Kt [B, Hq, D, Skv], V [B, Hq, Skv, Dv].
  // (K and V may be [B, H, S, D] in the 3-D form already: the cache moved them.)
  const int q4 = rank == 3
                     ? b.add("Transpose", "q_bhsd", {qh}, {{"perm", A::ints_attr({0, 2, 1, 3})}})
                     : qh;
  int kt = 0, v4 = vh;
  if (head_dim == 2) {
    kt = b.add("Transpose", "k_bhds", {kh}, {{"perm", A::ints_attr({0, 2, 3, 1})}});
    v4 = b.add("Transpose", "v_bhsd", {vh}, {{"perm", A::ints_attr({0, 2, 1, 3})}});
  } else {
    kt = b.add("Transpose", "k_bhds", {kh}, {{"perm", A::ints_attr({0, 1, 3, 2})}});
  }
  int s = b.add("MatMul", "qk", {q4, kt});
  const float scale = node.attrs.count("scale") ? attr_float(node, "scale", 1.f)
                                                : static_cast<float>(1.0 / std::sqrt(double(d)));
  if (scale != 1.f) s = b.add("Mul", "scale", {s, b.scalar("scale_value", scale)});
  if (f.qk_output) b.add("Identity", "qk_matmul_output", {s}, {}, node.outputs[3]);
  const float softcap = attr_float(node, "softcap", 0.f);
  if (softcap > 0.f) {
    const int c = b.scalar("softcap_value", softcap);
    s = b.add("Div", "softcap_div", {s, c});
    s = b.add("Tanh", "softcap_tanh", {s});
    s = b.add("Mul", "softcap_mul", {s, c});
  }
  const int bias = attention_bias(g, node, b, sq, skv, past_len);
  if (bias >= 0) s = b.add("Add", "masked", {s, bias});
  // A query with every key masked attends to nothing: 0, as ONNX's Attention gives it.
  const int p = b.add("Softmax", "softmax", {s},
                      {{"axis", A::int_attr(-1)}, {kSoftmaxMaskedRowsZero, A::int_attr(1)}});
  if (rank == 4) {
    b.add("MatMul", "pv", {p, v4}, {}, node.outputs[0]);
    return "";
  }
  const int o = b.add("MatMul", "pv", {p, v4});
  const int t = b.add("Transpose", "o_bshd", {o}, {{"perm", A::ints_attr({0, 2, 1, 3})}});
  b.add("Reshape", "o", {t, b.ints("o_shape", {batch, sq, hq * dv})}, {}, node.outputs[0]);
  return "";
}

namespace {

constexpr OpRow kRows[] = {
    {"Attention", nullptr, "float32 (attn_mask: bool or float32)",
     "runs as its MatMul, scale, mask, Softmax, MatMul graph, fused into one Attention step "
     "where fuse_attention matches it; 3-D and 4-D inputs, grouped-query heads, scale, softcap, "
     "is_causal, sliding windows, broadcast masks, past_key/past_value and present outputs; "
     "the qk_matmul_output output of mode 0 without softcap; refused: nonpad_kv_seqlen, "
     "qk_matmul_output of the other modes or with softcap",
     25, decompose_attention},
};

}  // namespace

const FamilyRules attention_rules = {serialize_attention, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
