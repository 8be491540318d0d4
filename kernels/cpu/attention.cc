#include "kernels/attention.h"

#include <cmath>
#include <limits>

#include "kernels/int8_epilogue.h"

namespace jetplan::kernels::cpu {

namespace {

// The score of query row qr (position i) against key j, mask and causality applied. The twin
// computes each score twice (for the row maximum, then for the weights) rather than keep a row
// of them: it allocates nothing.
float score(const AttentionParams& p, const float* qr, const float* kb, const float* mb,
            int64_t i, int64_t j) {
  if (p.causal && j > i) return -std::numeric_limits<float>::infinity();
  const float* kr = kb + j * p.k.seq;
  float dot = 0.f;
  for (int64_t d = 0; d < p.head_dim; ++d) dot += qr[d] * kr[d];
  float s = p.scale * dot;
  if (mb != nullptr) s += mb[i * p.mask_q + j * p.mask_kv];
  return s;
}

}  // namespace

namespace {

// Every output row of O, head dims [d0, d1): row(b, h, i) says where to accumulate them (d1 - d0
// floats), done(b, h, i, row) is called once it holds their values.
template <typename Row, typename Done>
void attention_rows(const AttentionParams& p, const float* q, const float* k, const float* v,
                    const float* mask, int64_t d0, int64_t d1, Row row, Done done) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  q += p.q.offset;
  k += p.k.offset;
  v += p.v.offset;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h) {
      const float* qb = q + b * p.q.batch + h * p.q.head;
      const float* kb = k + b * p.k.batch + h * p.k.head;
      const float* vb = v + b * p.v.batch + h * p.v.head;
      const float* mb = p.has_mask ? mask + b * p.mask_batch + h * p.mask_head : nullptr;
      for (int64_t i = 0; i < p.seq_q; ++i) {
        const float* qr = qb + i * p.q.seq;
        float* orow = row(b, h, i);
        float max = neg_inf;
        for (int64_t j = 0; j < p.seq_kv; ++j) {
          const float s = score(p, qr, kb, mb, i, j);
          if (!(s <= max)) max = s;  // a NaN score wins, so it reaches the output
        }
        const int64_t dims = d1 - d0;
        for (int64_t d = 0; d < dims; ++d) orow[d] = 0.f;
        if (max != neg_inf) {  // else every key masked out: zeros
          float sum = 0.f;
          for (int64_t j = 0; j < p.seq_kv; ++j) {
            const float w = std::exp(score(p, qr, kb, mb, i, j) - max);
            sum += w;
            const float* vr = vb + j * p.v.seq + d0;
            for (int64_t d = 0; d < dims; ++d) orow[d] += w * vr[d];
          }
          for (int64_t d = 0; d < dims; ++d) orow[d] /= sum;
        }
        done(b, h, i, orow);
      }
    }
}

}  // namespace

void attention(const AttentionParams& p, const float* q, const float* k, const float* v,
               const float* mask, float* o) {
  o += p.o.offset;
  attention_rows(
      p, q, k, v, mask, 0, p.head_dim,
      [&](int64_t b, int64_t h, int64_t i) {
        return o + b * p.o.batch + h * p.o.head + i * p.o.seq;
      },
      [](int64_t, int64_t, int64_t, const float*) {});
}

// The float values of up to kChunk head dims at a time in a stack row (no allocation); head
// dims past it (above 128) take another pass over the keys.
void attention_to_int8(const AttentionParams& p, const float* q, const float* k, const float* v,
                       const float* mask, float inv_o, int8_t* o) {
  constexpr int64_t kChunk = 128;
  float scratch[kChunk];
  o += p.o.offset;
  for (int64_t d0 = 0; d0 < p.head_dim; d0 += kChunk) {
    const int64_t d1 = d0 + kChunk < p.head_dim ? d0 + kChunk : p.head_dim;
    attention_rows(
        p, q, k, v, mask, d0, d1, [&](int64_t, int64_t, int64_t) { return scratch; },
        [&](int64_t b, int64_t h, int64_t i, const float* row) {
          int8_t* orow = o + b * p.o.batch + h * p.o.head + i * p.o.seq + d0;
          for (int64_t d = 0; d < d1 - d0; ++d) orow[d] = int8_quantize(row[d], inv_o);
        });
  }
}

}  // namespace jetplan::kernels::cpu
