// Parameter structs shared by the CPU reference kernels (kernels/cpu) and the CUDA kernels
// (kernels/cuda). They are plain data, fully resolved at plan load: every size is concrete, so a
// kernel does no shape arithmetic beyond indexing. Tensors are dense, row-major, in the layout
// each struct states. Pointers are never stored here; kernels take them as arguments.
#pragma once

#include <cstdint>

namespace jetplan::kernels {

constexpr int kMaxRank = 8;
constexpr int kMaxSpatial = 3;
constexpr int kMaxConcatInputs = 64;

// Element types, numbered as fb::DType in schemas/plan.fbs (the runtime static_asserts this).
enum class DType : uint8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kInt8 = 2,
  kUInt8 = 3,
  kInt32 = 4,
  kInt64 = 5,
  kBool = 6,  // one byte, 0 or 1
  kFloat64 = 7,
  kInt16 = 8,
  kUInt16 = 9,
  kUInt32 = 10,
  kUInt64 = 11,
  kBFloat16 = 12,  // the upper 16 bits of a float32 (CPU only: data movement and Cast)
};
constexpr int kDTypeCount = 13;

constexpr int64_t dtype_bytes(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kFloat16: return 2;
    case DType::kInt8: return 1;
    case DType::kUInt8: return 1;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
    case DType::kFloat64: return 8;
    case DType::kInt16: return 2;
    case DType::kUInt16: return 2;
    case DType::kUInt32: return 4;
    case DType::kUInt64: return 8;
    case DType::kBFloat16: return 2;
  }
  return 0;
}

enum class ActivationKind : uint8_t {
  kNone = 0,
  kRelu = 1,
  kClip = 2,         // clamp(x, alpha, beta)
  kLeakyRelu = 3,    // x < 0 ? alpha * x : x
  kSigmoid = 4,
  kTanh = 5,
  kHardSigmoid = 6,  // max(0, min(1, alpha * x + beta))
  kHardSwish = 7,    // x * max(0, min(1, x / 6 + 1 / 2))
  kSilu = 8,         // x * sigmoid(x)
  kGelu = 9,         // 0.5 * x * (1 + erf(x / sqrt(2)))
  kElu = 10,         // x < 0 ? alpha * (exp(x) - 1) : x
  kSelu = 11,        // x > 0 ? beta * x : beta * alpha * (exp(x) - 1)
};
constexpr int kActivationKindCount = 12;

struct Activation {
  ActivationKind kind = ActivationKind::kNone;
  float alpha = 0.f;
  float beta = 0.f;
};

// y = act(conv(x, w) + bias + residual)
// x [batch, in_channels, *in_size], w [out_channels, in_channels / groups, *kernel],
// bias [out_channels] (optional), residual and y [batch, out_channels, *out_size].
// channels_last: x [batch, *in_size, in_channels], w [out_channels, *kernel, in_channels / groups],
// residual and y [batch, *out_size, out_channels] (NHWC; GPU plans).
// Padding at the end of each dim is implied by out_size.
struct ConvParams {
  int32_t spatial_rank = 2;  // 1..kMaxSpatial
  int64_t batch = 1;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t groups = 1;
  int64_t in_size[kMaxSpatial] = {1, 1, 1};
  int64_t out_size[kMaxSpatial] = {1, 1, 1};
  int64_t kernel[kMaxSpatial] = {1, 1, 1};
  int64_t stride[kMaxSpatial] = {1, 1, 1};
  int64_t dilation[kMaxSpatial] = {1, 1, 1};
  int64_t pad_begin[kMaxSpatial] = {0, 0, 0};
  bool has_bias = false;
  bool has_residual = false;
  Activation act;
  bool channels_last = false;
  // channels_last only: y holds y_channels >= out_channels channels per pixel and this conv
  // writes [y_channel_offset, +out_channels) of them (a Concat along channels written in
  // place). 0: y_channels = out_channels, the dense output.
  int64_t y_channels = 0;
  int64_t y_channel_offset = 0;
};

enum class PoolKind : uint8_t { kMax = 0, kAverage = 1 };

// x [batch, channels, *in_size], y [batch, channels, *out_size]; channels_last: x [batch,
// *in_size, channels], y [batch, *out_size, channels]. Window positions in the padding
// are skipped by max; average divides by the whole window when count_include_pad (padding that
// lies past the end of the input beyond pad_end never counts), else by the positions inside x.
// A window wholly in the padding gives 0 (plan load refuses pads that allow one).
struct PoolParams {
  PoolKind kind = PoolKind::kMax;
  int32_t spatial_rank = 2;
  int64_t batch = 1;
  int64_t channels = 0;
  int64_t in_size[kMaxSpatial] = {1, 1, 1};
  int64_t out_size[kMaxSpatial] = {1, 1, 1};
  int64_t kernel[kMaxSpatial] = {1, 1, 1};
  int64_t stride[kMaxSpatial] = {1, 1, 1};
  int64_t dilation[kMaxSpatial] = {1, 1, 1};
  int64_t pad_begin[kMaxSpatial] = {0, 0, 0};
  int64_t pad_end[kMaxSpatial] = {0, 0, 0};
  bool count_include_pad = false;
  bool channels_last = false;
  // Max pools' indices (CPU): the offset within the (n, c) plane is column-major (the last
  // spatial dim slowest, ONNX MaxPool storage_order 1) rather than row-major.
  bool indices_column_major = false;
};

// For i in [0, batch): y[i] (M x N) = act(alpha * opA(A[i]) * opB(B[i]) + beta * C + R[i])
// A[i] starts at a + i * a_batch_stride and is [M, K] row-major, or [K, M] when trans_a;
// B[i] starts at b + i * b_batch_stride and is [K, N], or [N, K] when trans_b (stride 0
// broadcasts one matrix to every batch). y is [batch, M, N] dense.
// C (optional) element (i, m, n) is c[i * c_stride_batch + m * c_stride_m + n * c_stride_n];
// zero strides broadcast. R (optional, has_residual) is dense like y: element (i, m, n) is
// r[(i * M + m) * N + n]; it is added once, after beta * C and before the activation.
struct GemmParams {
  int64_t batch = 1;
  int64_t M = 0, N = 0, K = 0;
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.f;
  float beta = 1.f;
  int64_t a_batch_stride = 0;
  int64_t b_batch_stride = 0;
  bool has_c = false;
  int64_t c_stride_batch = 0, c_stride_m = 0, c_stride_n = 0;
  bool has_residual = false;
  Activation act;
};

// kPRelu: a < 0 ? a * b : a, b the slope.
enum class BinaryOp : uint8_t { kAdd = 0, kSub, kMul, kDiv, kMax, kMin, kPow, kPRelu };
constexpr int kBinaryOpCount = 8;

// y[i] = act(op(a[i . a_strides], b[i . b_strides])) over the dense output shape out_dims;
// a stride of 0 broadcasts that dim. Only the first `rank` entries are read; rank 0 is one
// element. Max and Min propagate NaN from either side, as numpy.maximum/minimum do.
struct BinaryParams {
  BinaryOp op = BinaryOp::kAdd;
  int32_t rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t a_strides[kMaxRank] = {};
  int64_t b_strides[kMaxRank] = {};
  Activation act;
};

// A chain of float elementwise ops run as one program per output element (OpFamily Pointwise):
// instruction i computes register i from a step input or earlier registers; the last register
// is y[i]. Step input k is read at sum_d coord_d * in_strides[k][d] over the dense output shape
// out_dims (stride 0 broadcasts that dim). Arithmetic is FP32 whatever the storage.
constexpr int kMaxPointwiseInputs = 8;
constexpr int kMaxPointwiseInstrs = 16;

enum class PointwiseInstrKind : uint8_t { kLoad = 0, kBinary = 1, kUnary = 2, kActivation = 3 };
constexpr int kPointwiseInstrKindCount = 4;

struct PointwiseInstr {
  PointwiseInstrKind kind = PointwiseInstrKind::kLoad;
  uint8_t op = 0;  // kLoad: input index; kBinary: BinaryOp; kUnary: UnaryOp (float math)
  uint8_t a = 0;   // source register (kBinary, kUnary, kActivation), < this instruction's index
  uint8_t b = 0;   // second source register (kBinary)
  Activation act;  // kActivation
};

struct PointwiseParams {
  int32_t rank = 0;  // of out_dims; 0 is one element
  int32_t num_inputs = 0;
  int32_t num_instrs = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t in_strides[kMaxPointwiseInputs][kMaxRank] = {};
  PointwiseInstr program[kMaxPointwiseInstrs] = {};
};

// y[i] = act(x[i]) for i in [0, count).
struct ActivationParams {
  int64_t count = 0;
  Activation act;
};

// x and y [outer, axis, inner]; softmax (or log-softmax) along the middle dim.
struct SoftmaxParams {
  int64_t outer = 1;
  int64_t axis = 1;
  int64_t inner = 1;
  bool log = false;
};

// x and y [batch, channels, spatial] ([batch, spatial, channels] when channels_last);
// per-channel scale, bias, mean, var. y = scale * (x - mean) / sqrt(var + epsilon) + bias
struct BatchNormParams {
  int64_t batch = 1;
  int64_t channels = 0;
  int64_t spatial = 1;
  float epsilon = 1e-5f;
  bool channels_last = false;
};

// Inputs viewed as [outer, axis_len[i], inner] elements of elem_bytes each, written side by side
// into y [outer, sum(axis_len), inner]. An input with axis_len 0 may be null.
struct ConcatParams {
  int64_t outer = 1;
  int64_t inner = 1;
  int64_t elem_bytes = 4;
  int32_t num_inputs = 0;
  int64_t axis_len[kMaxConcatInputs] = {};
};

// A byte copy (Reshape, Flatten, Identity); source and destination may overlap.
struct CopyParams {
  int64_t bytes = 0;
};

}  // namespace jetplan::kernels
