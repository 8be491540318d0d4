// One Attention test case, shared by the CPU twin test (against a double-precision reference
// that works on dense copies) and the GPU test (against the twin): the shapes, where Q, K, V and
// O live in their buffers (the layouts the converter produces), the mask, and fresh random data.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels::attention_test {

enum class Layout {
  kBHSD,       // Q, K, V and O dense [B, H, S, D] (after the exporters' Transposes)
  kBSHD,       // dense [B, S, H, D] (projection outputs reshaped; O as the out-projection reads)
  kPackedQKV,  // Q, K and V in one [B, S, 3, H, D] buffer (a fused QKV GEMM), O [B, S, H, D]
  kPaddedRows  // [B, H, S, D] with rows D + 3 apart: rows not 16-byte aligned
};
enum class Mask {
  kNone,
  kPadding,  // [B, 1, 1, Sk]: 0, or -inf past each batch entry's own key count (ragged)
  kBias,     // [H, Sq, Sk] random (Swin's relative position bias), shared by every batch entry
  kFull      // [B, H, Sq, Sk] random, some -inf, one query row wholly masked
};

struct Case {
  int64_t batch, heads, seq_q, seq_kv, head_dim;
  Layout layout;
  Mask mask;
  bool causal;
  std::string str() const {
    return "B" + std::to_string(batch) + " H" + std::to_string(heads) + " Sq" +
           std::to_string(seq_q) + " Sk" + std::to_string(seq_kv) + " D" +
           std::to_string(head_dim) + " layout " + std::to_string(int(layout)) + " mask " +
           std::to_string(int(mask)) + (causal ? " causal" : "");
  }
};

// The case's buffers (float; the GPU test rounds them to FP16) and params: Q, K and V are the
// one buffer `qkv` (every layout: the packed one needs it), each read from its params offset,
// qkv_offset[0..2]; kernels are handed `qkv` itself for all three.
struct Data {
  AttentionParams p;
  std::vector<float> qkv, mask;
  int64_t qkv_offset[3] = {0, 0, 0};
  int64_t out_elements = 0;
};

inline AttentionStrides strides_of(Layout layout, int64_t heads, int64_t seq, int64_t d) {
  switch (layout) {
    case Layout::kBHSD: return {heads * seq * d, seq * d, d};
    case Layout::kBSHD: return {seq * heads * d, d, heads * d};
    case Layout::kPackedQKV: return {seq * 3 * heads * d, d, 3 * heads * d};
    case Layout::kPaddedRows: return {heads * seq * (d + 3), seq * (d + 3), d + 3};
  }
  return {};
}

inline Data make_data(const Case& c, test_util::SeededRng& rng) {
  Data out;
  AttentionParams& p = out.p;
  p.batch = c.batch;
  p.heads = c.heads;
  p.seq_q = c.seq_q;
  p.seq_kv = c.seq_kv;
  p.head_dim = c.head_dim;
  p.scale = 1.f / std::sqrt(static_cast<float>(c.head_dim));
  p.causal = c.causal;
  p.has_mask = c.mask != Mask::kNone;
  const int64_t B = c.batch, H = c.heads, D = c.head_dim;
  if (c.layout == Layout::kPackedQKV) {
    // Sq == Sk: self-attention over one token sequence.
    p.q = p.k = p.v = strides_of(Layout::kPackedQKV, H, c.seq_q, D);
    out.qkv_offset[1] = H * D;
    out.qkv_offset[2] = 2 * H * D;
    out.qkv = rng.uniform(B * c.seq_q * 3 * H * D, -1.f, 1.f);
    p.o = strides_of(Layout::kBSHD, H, c.seq_q, D);
  } else {
    p.q = strides_of(c.layout, H, c.seq_q, D);
    p.k = p.v = strides_of(c.layout, H, c.seq_kv, D);
    const int64_t nq = B * p.q.batch, nk = B * p.k.batch;
    out.qkv_offset[1] = nq;
    out.qkv_offset[2] = nq + nk;
    out.qkv = rng.uniform(nq + 2 * nk, -1.f, 1.f);
    p.o = strides_of(c.layout == Layout::kPaddedRows ? Layout::kBHSD : c.layout, H, c.seq_q, D);
  }
  p.q.offset = out.qkv_offset[0];
  p.k.offset = out.qkv_offset[1];
  p.v.offset = out.qkv_offset[2];
  // Scores of a few units: the softmax is neither flat nor one-hot.
  for (float& x : out.qkv) x *= 2.f;
  out.out_elements = B * p.o.batch;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  switch (c.mask) {
    case Mask::kNone: break;
    case Mask::kPadding:
      out.mask.assign(B * c.seq_kv, 0.f);
      for (int64_t b = 0; b < B; ++b) {
        const int64_t keep = 1 + (c.seq_kv - 1) * (b + 1) / (B + 1);  // ragged, at least 1
        for (int64_t j = keep; j < c.seq_kv; ++j) out.mask[b * c.seq_kv + j] = neg_inf;
      }
      p.mask_batch = c.seq_kv;
      p.mask_kv = 1;
      break;
    case Mask::kBias:
      out.mask = rng.uniform(H * c.seq_q * c.seq_kv, -2.f, 2.f);
      p.mask_head = c.seq_q * c.seq_kv;
      p.mask_q = c.seq_kv;
      p.mask_kv = 1;
      break;
    case Mask::kFull:
      out.mask = rng.uniform(B * H * c.seq_q * c.seq_kv, -2.f, 2.f);
      for (size_t i = 0; i < out.mask.size(); i += 7) out.mask[i] = neg_inf;
      for (int64_t j = 0; j < c.seq_kv; ++j) out.mask[(c.seq_q / 2) * c.seq_kv + j] = neg_inf;
      p.mask_batch = H * c.seq_q * c.seq_kv;
      p.mask_head = c.seq_q * c.seq_kv;
      p.mask_q = c.seq_kv;
      p.mask_kv = 1;
      break;
  }
  return out;
}

}  // namespace jetplan::kernels::attention_test
