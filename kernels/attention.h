// The Attention family: O = softmax(scale * Q Kt + mask) V for every batch and head, the softmax
// over the key positions. Parameters and CPU twin (kernels/cpu/attention.cc); CUDA kernels in
// kernels/cuda/attention.cu (flash-style: no score matrix in memory).
//
// Layout: every operand is addressed by element strides along (batch, head, sequence) with the
// head dim contiguous. The exporters write Q, K and V as one projection GEMM's output reshaped to
// [B, S, H, D] and then transposed to [B, H, S, D] (K to [B, H, D, S]); with strides the step
// reads the reshaped tensor itself and the Transposes disappear. A fused QKV projection's
// output ([S, B, 3E] or [B, S, 3E]) holds Q, K and V side by side: each operand is then that one
// tensor read from its own element offset (the Slices or Gathers that split it disappear too).
// Only the head dim must be contiguous: it is the dim of the 16-byte loads and of the mma's k
// (Q Kt) and n (P V); the kernels copy element by element where a row start is not 16-byte
// aligned.
#pragma once

#include <cstdint>

namespace jetplan::kernels {

// Element strides of one operand; element (b, h, s, d) is at offset + b * batch + h * head +
// s * seq + d of its tensor.
struct AttentionStrides {
  int64_t batch = 0, head = 0, seq = 0, offset = 0;
};

// Q [batch, heads, seq_q, head_dim], K and V [batch, heads, seq_kv, head_dim], O like Q (by
// strides, see above). The mask (has_mask) is additive: element (b, h, i, j) at b * mask_batch +
// h * mask_head + i * mask_q + j * mask_kv, strides 0 where it broadcasts; it may hold -inf.
// causal masks key j > query i (top-left aligned, PyTorch's is_causal). A row whose every score
// is -inf (masked out) yields zeros, not NaN.
struct AttentionParams {
  int64_t batch = 1, heads = 1, seq_q = 0, seq_kv = 0, head_dim = 0;
  float scale = 1.f;
  bool causal = false;
  bool has_mask = false;
  AttentionStrides q, k, v, o;
  int64_t mask_batch = 0, mask_head = 0, mask_q = 0, mask_kv = 0;
  // An INT8 plan's Attention writing Int8 for an INT8 output projection: the step's input index
  // of the Float32 inverse of O's scale (3, or 4 with a mask), 0 where O is float. Each output
  // is int8_quantize(value, inv_o) (kernels/int8_epilogue.h).
  int32_t inv_scale_input = 0;
};

// The head dims the CUDA kernels are built for (one variant per dim and query tile): what the
// converter fuses for GPU targets and the selector finds.
constexpr int64_t kAttentionHeadDims[] = {32, 64, 80, 96, 128};
constexpr bool attention_head_dim_on_gpu(int64_t head_dim) {
  for (int64_t d : kAttentionHeadDims)
    if (d == head_dim) return true;
  return false;
}

// The CUDA kernels' tiles (kernels/cuda/attention.cu): query rows per CTA (64 or 128, one warp
// per 16 rows), key rows per step of the online softmax, and the dynamic shared memory they
// need: the Q tile and one K and one V tile (two of each for the key-split _k2 kernels), rows
// padded by 8 halves (16 bytes: the 8 rows of an ldmatrix land in distinct banks).
constexpr int kAttentionKeyTile = 64;
constexpr uint32_t attention_shared_bytes(int head_dim, int query_tile, int key_split = 1) {
  return static_cast<uint32_t>((query_tile + 2 * key_split * kAttentionKeyTile) *
                               (head_dim + 8) * 2);
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// FP32 arithmetic: each score row is computed whole, its maximum subtracted before exp. The mask
// may be null without has_mask.
void attention(const AttentionParams& p, const float* q, const float* k, const float* v,
               const float* mask, float* o);

// The Int8 form (p.inv_scale_input): each output the float one would be, rounded by
// int8_quantize(value, inv_o). The CUDA kernels' FP16 probabilities and online softmax round
// differently, so their outputs are within a unit of these (GpuAttention's test).
void attention_to_int8(const AttentionParams& p, const float* q, const float* k, const float* v,
                       const float* mask, float inv_o, int8_t* o);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/attention.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS): FP16
// storage (FP32 accumulation and softmax), one per head dim (32, 64, 80, 96, 128) and query
// tile (64 rows: 128 threads; 128 rows: 256 threads; 64 rows with the keys split over two
// warps, _k2: 256 threads), dynamic shared memory as above; the _q8 rows write Int8
// (p.inv_scale_input).
#define JP_ATTENTION_ROW(X, F, d, m) \
  X(F, jp_attention_f16_d##d##_m##m, kF16, m * 2, kAny, attention_shared_bytes(d, m)) \
  X(F, jp_attention_q8_f16_d##d##_m##m, kF16, m * 2, kI8, attention_shared_bytes(d, m))
#define JP_ATTENTION_K2_ROW(X, F, d) \
  X(F, jp_attention_f16_d##d##_m64_k2, kF16, 256, kAny, attention_shared_bytes(d, 64, 2)) \
  X(F, jp_attention_q8_f16_d##d##_m64_k2, kF16, 256, kI8, attention_shared_bytes(d, 64, 2))
#define JP_CUDA_VARIANTS_attention(X, F) \
  JP_ATTENTION_ROW(X, F, 32, 64) \
  JP_ATTENTION_ROW(X, F, 64, 64) \
  JP_ATTENTION_ROW(X, F, 80, 64) \
  JP_ATTENTION_ROW(X, F, 96, 64) \
  JP_ATTENTION_ROW(X, F, 128, 64) \
  JP_ATTENTION_ROW(X, F, 32, 128) \
  JP_ATTENTION_ROW(X, F, 64, 128) \
  JP_ATTENTION_ROW(X, F, 80, 128) \
  JP_ATTENTION_ROW(X, F, 96, 128) \
  JP_ATTENTION_ROW(X, F, 128, 128) \
  JP_ATTENTION_K2_ROW(X, F, 32) \
  JP_ATTENTION_K2_ROW(X, F, 64) \
  JP_ATTENTION_K2_ROW(X, F, 80) \
  JP_ATTENTION_K2_ROW(X, F, 96) \
  JP_ATTENTION_K2_ROW(X, F, 128)
