// Parameter structs of the tensor ops: data movement (Transpose, Slice, Gather, Pad, broadcast
// copy, Where), elementwise math beyond the float BinaryParams (unary math, integer arithmetic,
// comparisons, logic) and Cast. Same contract as params.h: plain data, fully resolved at plan
// load, shared by the CPU reference kernels and the CUDA kernels. Element counts, dims, strides
// and offsets are in elements; coordinates are row-major with the last dim fastest. Only the
// first `rank` entries of a per-dim array are read; rank 0 is one element.
//
// Kernels that only move elements take `elem_bytes` and never look at the values, so one kernel
// serves every dtype. Kernels that compute take a DType; the *_supported() functions below say
// which (op, dtype) pairs exist, and plan load refuses the others.
#pragma once

#include <cstdint>

#include "kernels/params.h"

namespace jetplan::kernels {

// y[c] = x[sum_d c[d] * x_strides[d]] over the dense output shape out_dims. For Transpose with
// permutation perm, out_dims[d] = x_dims[perm[d]] and x_strides[d] is the dense stride of x's dim
// perm[d]. Any strided view fits (the converter expresses DepthToSpace/SpaceToDepth as
// reshape + transpose of rank up to 6). Strides are >= 0; plan load checks that the largest
// offset, sum_d (out_dims[d] - 1) * x_strides[d], lies inside x.
struct TransposeParams {
  int32_t rank = 0;
  int64_t elem_bytes = 4;  // of x
  int64_t out_dims[kMaxRank] = {};
  int64_t x_strides[kMaxRank] = {};
  // x Float16 and y Float32: each element converted as it moves (a GPU plan's float32 output
  // written by its layout transpose: the output cast fused into it).
  bool half_to_float = false;
};

// y[c] = x[starts[d] + c[d] * steps[d] for each d], x dense with shape x_dims, y dense with shape
// out_dims. Starts are resolved (no negative or clamped values left): plan load checks that
// starts[d] and starts[d] + (out_dims[d] - 1) * steps[d] lie in [0, x_dims[d]) whenever
// out_dims[d] > 0. Steps are nonzero and may be negative. Split is one Slice per output.
struct SliceParams {
  int32_t rank = 0;
  int64_t elem_bytes = 4;
  int64_t x_dims[kMaxRank] = {};
  int64_t out_dims[kMaxRank] = {};
  int64_t starts[kMaxRank] = {};
  int64_t steps[kMaxRank] = {};
};

// ONNX Gather. data is viewed as [outer, axis_len, inner], the indices as a flat list of
// num_indices entries of index_dtype (kInt32 or kInt64), y as [outer, num_indices, inner]:
// y[o, j, i] = data[o, idx[j], i]. A negative index counts from the end (+ axis_len); an index
// still outside [0, axis_len) after that yields zero bytes in y. ONNX makes such an index an
// error, which a kernel cannot report at run time; zeros are deterministic and visible.
struct GatherParams {
  int64_t outer = 1;
  int64_t axis_len = 1;
  int64_t inner = 1;
  int64_t num_indices = 0;
  int64_t elem_bytes = 4;
  DType index_dtype = DType::kInt64;
};

// ONNX GatherElements: indices and y are dense with shape out_dims, data dense with shape
// data_dims (same rank; out_dims[d] <= data_dims[d] off the axis). y[c] = data[c with c[axis]
// replaced by idx[c]]. Negative and out-of-range indices behave as in GatherParams.
struct GatherElementsParams {
  int32_t rank = 0;
  int32_t axis = 0;
  int64_t elem_bytes = 4;
  DType index_dtype = DType::kInt64;
  int64_t data_dims[kMaxRank] = {};
  int64_t out_dims[kMaxRank] = {};
};

enum class PadMode : uint8_t {
  kConstant = 0,  // the value
  kReflect = 1,   // mirror without repeating the edge: 3 2 | 1 2 3 4 | 3 2
  kEdge = 2,      // repeat the edge: 1 1 | 1 2 3 4 | 4 4
  kWrap = 3,      // periodic: 3 4 | 1 2 3 4 | 1 2
};
constexpr int kPadModeCount = 4;

// ONNX Pad. x dense [x_dims], y dense [out_dims]; along dim d, pads_begin[d] elements come before
// x and out_dims[d] - x_dims[d] - pads_begin[d] after (the end pad is implied, as in ConvParams).
// Either pad may be negative: a negative pad crops x first, and the non-constant modes then
// extend the cropped tensor (as onnxruntime does). Reflect and wrap are periodic, so pads longer
// than the dim repeat the pattern (as numpy.pad does); reflect of a single element repeats it.
// A dim cropped to nothing cannot be extended by edge, reflect or wrap: plan load refuses that
// (the kernel would write the constant value there).
// `value` holds one element of the tensor's dtype in its first elem_bytes bytes, little endian
// as the tensor stores it, so the kernel stays dtype-agnostic.
struct PadParams {
  PadMode mode = PadMode::kConstant;
  int32_t rank = 0;
  int64_t elem_bytes = 4;
  int64_t x_dims[kMaxRank] = {};
  int64_t out_dims[kMaxRank] = {};
  int64_t pads_begin[kMaxRank] = {};
  unsigned char value[8] = {};
};

// Broadcast copy, for Expand and Tile: y[c] = x[sum_d (c[d] % x_dims[d]) * x_strides[d]] over the
// dense out_dims. Expand: x_dims[d] = 1 (or stride 0) where x is broadcast, x_dims[d] =
// out_dims[d] elsewhere. Tile: x_dims are x's dims and out_dims[d] = x_dims[d] * repeats[d].
// x_dims[d] >= 1 for every d; strides (>= 0) may describe any view of x, whose largest offset
// sum_d (x_dims[d] - 1) * x_strides[d] plan load checks against x.
struct BroadcastParams {
  int32_t rank = 0;
  int64_t elem_bytes = 4;
  int64_t out_dims[kMaxRank] = {};
  int64_t x_dims[kMaxRank] = {};
  int64_t x_strides[kMaxRank] = {};
};

// Unary math, y[i] = op(x[i]) for i in [0, count). y has the dtype unary_out_dtype(op, dtype).
// Activations with a kind in ActivationKind (Relu, Sigmoid, Tanh, erf-Gelu, ...) are not here.
enum class UnaryOp : uint8_t {
  kAbs = 0,
  kNeg,
  kExp,
  kLog,
  kSqrt,
  kReciprocal,
  kFloor,
  kCeil,
  kRound,  // half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kErf,
  kSign,      // -1, 0 (for either zero) or 1; NaN stays NaN
  kSoftsign,  // x / (1 + |x|); +-1 at +-inf
  kSoftplus,  // log(1 + exp(x))
  kMish,      // x * tanh(softplus(x)); -0 at -inf
  kGeluTanh,  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))); -0 at -inf
  kIsNaN,     // -> bool
  kIsInf,     // -> bool, either infinity (ONNX IsInf with both detect flags)
  kIsPosInf,  // -> bool, IsInf detect_negative = 0
  kIsNegInf,  // -> bool, IsInf detect_positive = 0
  kNot,       // bool -> bool
};
constexpr int kUnaryOpCount = 31;

struct UnaryParams {
  UnaryOp op = UnaryOp::kAbs;
  DType dtype = DType::kFloat32;  // of x
  int64_t count = 0;
};

// Float32 takes every op but kNot; int32 and int64 take Abs, Neg and Sign (Abs and Neg of the
// most negative value give it back, as two's complement does); bool takes kNot.
constexpr bool unary_supported(UnaryOp op, DType t) {
  if (op == UnaryOp::kNot) return t == DType::kBool;
  if (t == DType::kFloat32) return true;
  if (t == DType::kInt32 || t == DType::kInt64)
    return op == UnaryOp::kAbs || op == UnaryOp::kNeg || op == UnaryOp::kSign;
  return false;
}

constexpr bool unary_is_predicate(UnaryOp op) {
  return op == UnaryOp::kIsNaN || op == UnaryOp::kIsInf || op == UnaryOp::kIsPosInf ||
         op == UnaryOp::kIsNegInf || op == UnaryOp::kNot;
}

constexpr DType unary_out_dtype(UnaryOp op, DType t) {
  return unary_is_predicate(op) ? DType::kBool : t;
}

// Two-input elementwise ops on any dtype the float BinaryParams does not cover.
enum class ElementwiseOp : uint8_t {
  kAdd = 0,  // integer ops wrap modulo 2^bits, as two's complement hardware does
  kSub,
  kMul,
  kDiv,   // integers truncate toward zero; x / 0 gives 0 (a kernel cannot trap), min / -1 min
  kMod,   // ONNX Mod fmod=0, integers: the result takes the sign of the divisor; x mod 0 gives 0
  kFMod,  // ONNX Mod fmod=1, C fmod: the sign of the dividend; int x fmod 0 is 0, float NaN
  kMax,
  kMin,
  kEqual,  // comparisons give bool; IEEE: NaN compares unequal and unordered to everything
  kLess,
  kLessOrEqual,
  kGreater,
  kGreaterOrEqual,
  kAnd,  // logic: bool in (any nonzero byte is true), bool out
  kOr,
  kXor,
  kPow,  // float64 only: the converter computes integer and mixed-type ONNX Pow here
};
constexpr int kElementwiseOpCount = 17;

// y[i] = op(a[i . a_strides], b[i . b_strides]) over the dense out_dims, the stride convention of
// BinaryParams (0 broadcasts). a and b have `dtype`; y has elementwise_out_dtype(op, dtype).
struct ElementwiseParams {
  ElementwiseOp op = ElementwiseOp::kAdd;
  DType dtype = DType::kInt32;
  int32_t rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t a_strides[kMaxRank] = {};
  int64_t b_strides[kMaxRank] = {};
};

constexpr bool elementwise_is_comparison(ElementwiseOp op) {
  return op == ElementwiseOp::kEqual || op == ElementwiseOp::kLess ||
         op == ElementwiseOp::kLessOrEqual || op == ElementwiseOp::kGreater ||
         op == ElementwiseOp::kGreaterOrEqual;
}

constexpr bool elementwise_is_logic(ElementwiseOp op) {
  return op == ElementwiseOp::kAnd || op == ElementwiseOp::kOr || op == ElementwiseOp::kXor;
}

// Arithmetic: int32 and int64 (float32 arithmetic is BinaryParams), and int16, uint16, uint32,
// uint64 (CPU only); float64 (Add, Sub, Mul, Div, FMod, Max and Min as the float BinaryOps do,
// NaN propagating, and Pow); kFMod on float32 too. kMod is integers only and kPow float64 only.
// Comparisons: every dtype but bfloat16 (no op at all). Logic: bool. The CUDA kernels have no
// float64 arithmetic but FMod (the runtime refuses it in CUDA plans) and nothing of int16,
// uint16, uint32 or uint64 (plan load refuses those dtypes in CUDA plans).
constexpr bool elementwise_supported(ElementwiseOp op, DType t) {
  if (t == DType::kBFloat16) return false;  // bfloat16 reaches Cast and data movement only
  if (elementwise_is_comparison(op)) return true;
  if (elementwise_is_logic(op)) return t == DType::kBool;
  if (op == ElementwiseOp::kPow) return t == DType::kFloat64;
  if (t == DType::kInt32 || t == DType::kInt64 || t == DType::kInt16 || t == DType::kUInt16 ||
      t == DType::kUInt32 || t == DType::kUInt64)
    return true;
  if (t == DType::kFloat64) return op != ElementwiseOp::kMod;
  return op == ElementwiseOp::kFMod && t == DType::kFloat32;
}

constexpr DType elementwise_out_dtype(ElementwiseOp op, DType t) {
  return elementwise_is_comparison(op) || elementwise_is_logic(op) ? DType::kBool : t;
}

// ONNX Where: out[i] = cond[i . cond_strides] ? x[i . x_strides] : y[i . y_strides] over the
// dense out_dims (stride 0 broadcasts). cond is bool (any nonzero byte is true); x, y and out
// have elements of elem_bytes.
struct WhereParams {
  int32_t rank = 0;
  int64_t elem_bytes = 4;
  int64_t out_dims[kMaxRank] = {};
  int64_t cond_strides[kMaxRank] = {};
  int64_t x_strides[kMaxRank] = {};
  int64_t y_strides[kMaxRank] = {};
};

// ONNX Cast of `count` elements between any two DTypes:
// - float to float rounds to nearest even (float16 per IEEE 754 binary16, overflow to infinity);
// - float to integer truncates toward zero and saturates at the target's range (ONNX leaves
//   out-of-range values to the implementation); NaN gives 0;
// - integer to integer keeps the low bits (two's complement wrap, as numpy and C do);
// - integer to float rounds to nearest even;
// - anything to bool is (x != 0), so NaN gives true; bool to anything is 0 or 1;
// - to bfloat16 goes through float32 (rounded to nearest even), which is then truncated to its
//   upper 16 bits (toward zero, as ONNX's conformance data expects; NaN stays NaN): see
//   kernels/cpu/bfloat16.h. From bfloat16 is exact to float32, then as from float32;
// - to the same dtype copies the bits (NaN payloads included).
// CPU only for bfloat16 (plan load refuses the dtype in CUDA plans).
struct CastParams {
  DType from = DType::kFloat32;
  DType to = DType::kFloat32;
  int64_t count = 0;
};

}  // namespace jetplan::kernels
