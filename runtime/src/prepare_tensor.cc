// Load-time preparation of the tensor families (see families_tensor.inc). As in prepare.cc, a
// plan is untrusted: every shape, dtype and attribute is checked against the step's tensors, so
// that the kernels (kernels/cpu/tensor_ops.h) never index outside a tensor whatever the plan
// says. Gather indices are data, not plan: the kernels handle bad ones at run time.
#include <cinttypes>
#include <cmath>
#include <cstring>

#include "kernels/cpu/bfloat16.h"
#include "kernels/cpu/half.h"
#include "runtime/src/op_families.h"

namespace jetplan::rt {
namespace {

using kernels::DType;

// kernels::DType numbers its values as fb::DType, so the conversion is a cast.
static_assert(static_cast<int>(DType::kFloat32) == static_cast<int>(fb::DType::Float32) &&
                  static_cast<int>(DType::kFloat16) == static_cast<int>(fb::DType::Float16) &&
                  static_cast<int>(DType::kInt8) == static_cast<int>(fb::DType::Int8) &&
                  static_cast<int>(DType::kUInt8) == static_cast<int>(fb::DType::UInt8) &&
                  static_cast<int>(DType::kInt32) == static_cast<int>(fb::DType::Int32) &&
                  static_cast<int>(DType::kInt64) == static_cast<int>(fb::DType::Int64) &&
                  static_cast<int>(DType::kBool) == static_cast<int>(fb::DType::Bool) &&
                  static_cast<int>(DType::kFloat64) == static_cast<int>(fb::DType::Float64) &&
                  static_cast<int>(DType::kInt16) == static_cast<int>(fb::DType::Int16) &&
                  static_cast<int>(DType::kUInt16) == static_cast<int>(fb::DType::UInt16) &&
                  static_cast<int>(DType::kUInt32) == static_cast<int>(fb::DType::UInt32) &&
                  static_cast<int>(DType::kUInt64) == static_cast<int>(fb::DType::UInt64) &&
                  static_cast<int>(DType::kBFloat16) == static_cast<int>(fb::DType::BFloat16) &&
                  kernels::kDTypeCount == static_cast<int>(fb::DType::MAX) + 1,
              "kernels::DType must mirror fb::DType");
static_assert(kernels::kPadModeCount == static_cast<int>(fb::PadMode::MAX) + 1 &&
                  kernels::kUnaryOpCount == static_cast<int>(fb::UnaryOp::MAX) + 1 &&
                  kernels::kElementwiseOpCount == static_cast<int>(fb::ElementwiseOp::MAX) + 1,
              "kernels/params_tensor.h enums must mirror schemas/plan.fbs");

// Offsets and pads are kept far below int64 overflow: tensors have at most 2^40 elements.
constexpr int64_t kMaxExtent = int64_t{1} << 40;

DType kernel_dtype(fb::DType t) { return static_cast<DType>(static_cast<int>(t)); }

const TensorInfo& input_at(const jp_plan& plan, const PreparedStep& s, uint32_t i) {
  return plan.tensors[s.inputs->Get(i)];
}

const TensorInfo& output_of(const jp_plan& plan, const PreparedStep& s) {
  return plan.tensors[s.outputs->Get(0)];
}

Status invalid(const PreparedStep& s, const char* what) {
  return fail(JP_ERROR_INVALID_PLAN, "step '%s': %s", s.name, what);
}

Status check_arity(const PreparedStep& s, const char* family, uint32_t inputs) {
  if (s.inputs->size() != inputs || s.outputs->size() != 1) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s' (%s) has %u inputs and %u outputs, expected %u and 1",
                s.name, family, s.inputs->size(), s.outputs->size(), inputs);
  }
  return JP_OK;
}

// Data movement keeps the dtype: the output's must be the input's.
Status check_same_dtype(const PreparedStep& s, const TensorInfo& x, const TensorInfo& y) {
  if (x.dtype != y.dtype) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': output '%s' is %s but input '%s' is %s", s.name,
                y.name, fb::EnumNameDType(y.dtype), x.name, fb::EnumNameDType(x.dtype));
  }
  return JP_OK;
}

bool same_shape(const TensorInfo& a, const TensorInfo& b) {
  if (a.rank != b.rank) return false;
  for (int32_t d = 0; d < a.rank; ++d) {
    if (a.dims[d] != b.dims[d]) return false;
  }
  return true;
}

// Dense strides of `t` right-aligned to the output rank `rank` (>= t.rank), 0 where a dim of 1
// broadcasts; false when a dim neither is 1 nor equals the output's.
bool broadcast_strides(const TensorInfo& t, const TensorInfo& y, int32_t rank, int64_t* out) {
  if (t.rank > y.rank) return false;
  int64_t stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    const int32_t ti = i - (rank - t.rank);
    const int64_t dim = ti >= 0 ? t.dims[ti] : 1;
    const int64_t ydim = y.rank > 0 ? y.dims[i] : 1;
    if (dim != ydim && dim != 1) return false;
    out[i] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return true;
}

// The output shape must be exactly the numpy broadcast of the operands.
bool is_broadcast_of(const TensorInfo& y, int32_t rank, const TensorInfo* const* operands,
                     int count) {
  for (int32_t i = 0; i < rank; ++i) {
    int64_t widest = 1;
    for (int n = 0; n < count; ++n) {
      const int32_t ti = i - (rank - operands[n]->rank);
      const int64_t dim = ti >= 0 ? operands[n]->dims[ti] : 1;
      if (dim > widest) widest = dim;
    }
    if ((y.rank > 0 ? y.dims[i] : 1) != widest) return false;
  }
  return true;
}

// Right-aligns each operand to the output (rank 0 runs as rank 1 of one element) and fills the
// output dims; the shared shape rule of Elementwise and Where.
Status broadcast_operands(const PreparedStep& s, const TensorInfo& y,
                          const TensorInfo* const* operands, int64_t* const* strides, int count,
                          int32_t* rank, int64_t* out_dims) {
  *rank = y.rank > 0 ? y.rank : 1;
  for (int n = 0; n < count; ++n) {
    if (!broadcast_strides(*operands[n], y, *rank, strides[n])) {
      return invalid(s, "operands do not broadcast to the output shape");
    }
  }
  if (!is_broadcast_of(y, *rank, operands, count)) {
    return invalid(s, "output shape is not the broadcast of the operands");
  }
  for (int32_t i = 0; i < *rank; ++i) out_dims[i] = y.rank > 0 ? y.dims[i] : 1;
  return JP_OK;
}

// Pad's constant as one element of `dtype`. Integer and bool tensors need a value they hold
// exactly; floats round to nearest (float16 through kernels/cpu/half.h), bfloat16 as Cast
// makes it (through float32, truncated: kernels/cpu/bfloat16.h).
bool pad_value_bytes(double v, fb::DType dtype, unsigned char* out) {
  auto integral_in = [&](double lo, double hi) {
    return std::isfinite(v) && v == std::trunc(v) && v >= lo && v <= hi;
  };
  switch (dtype) {
    case fb::DType::Float32: {
      const float f = static_cast<float>(v);
      std::memcpy(out, &f, sizeof f);
      return true;
    }
    case fb::DType::Float16: {
      const uint16_t h = kernels::half_from_double(v);
      std::memcpy(out, &h, sizeof h);
      return true;
    }
    case fb::DType::Float64:
      std::memcpy(out, &v, sizeof v);
      return true;
    case fb::DType::Int8: {
      if (!integral_in(-128, 127)) return false;
      const int8_t i = static_cast<int8_t>(v);
      std::memcpy(out, &i, sizeof i);
      return true;
    }
    case fb::DType::UInt8:
    case fb::DType::Bool: {
      if (!integral_in(0, dtype == fb::DType::Bool ? 1 : 255)) return false;
      out[0] = static_cast<unsigned char>(v);
      return true;
    }
    case fb::DType::Int32: {
      if (!integral_in(-2147483648.0, 2147483647.0)) return false;
      const int32_t i = static_cast<int32_t>(v);
      std::memcpy(out, &i, sizeof i);
      return true;
    }
    case fb::DType::Int64: {
      // 2^63 is the first double past the range; every double below it converts exactly.
      if (!integral_in(-9223372036854775808.0, 9223372036854774784.0)) return false;
      const int64_t i = static_cast<int64_t>(v);
      std::memcpy(out, &i, sizeof i);
      return true;
    }
    case fb::DType::Int16: {
      if (!integral_in(-32768, 32767)) return false;
      const int16_t i = static_cast<int16_t>(v);
      std::memcpy(out, &i, sizeof i);
      return true;
    }
    case fb::DType::UInt16: {
      if (!integral_in(0, 65535)) return false;
      const uint16_t i = static_cast<uint16_t>(v);
      std::memcpy(out, &i, sizeof i);
      return true;
    }
    case fb::DType::UInt32: {
      if (!integral_in(0, 4294967295.0)) return false;
      const uint32_t i = static_cast<uint32_t>(v);
      std::memcpy(out, &i, sizeof i);
      return true;
    }
    case fb::DType::UInt64: {
      // 2^64 is the first double past the range.
      if (!integral_in(0, 18446744073709549568.0)) return false;
      const uint64_t i = static_cast<uint64_t>(v);
      std::memcpy(out, &i, sizeof i);
      return true;
    }
    case fb::DType::BFloat16: {
      const uint16_t b = kernels::bfloat16_from_float(static_cast<float>(v));
      std::memcpy(out, &b, sizeof b);
      return true;
    }
  }
  return false;
}

}  // namespace

Status prepare_transpose(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::TransposeParams& p = *step.params_as_TransposeParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "Transpose", 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_of(plan, *s);
  // Float16 to Float32 converts as it moves; every other pair of types must be the same.
  const bool half_to_float = x.dtype == fb::DType::Float16 && y.dtype == fb::DType::Float32;
  if (!half_to_float) JP_RETURN_IF_ERROR(check_same_dtype(*s, x, y));
  const uint32_t perm_size = p.perm() ? p.perm()->size() : 0;
  if (perm_size != static_cast<uint32_t>(x.rank) || y.rank != x.rank) {
    return invalid(*s, "perm, input and output must have the same rank");
  }
  int64_t dense[kMaxRank];
  int64_t stride = 1;
  for (int32_t d = x.rank - 1; d >= 0; --d) {
    dense[d] = stride;
    stride *= x.dims[d];
  }
  kernels::TransposeParams& k = s->params.transpose;
  k = kernels::TransposeParams{};
  k.rank = x.rank;
  k.elem_bytes = static_cast<int64_t>(dtype_size(x.dtype));
  k.half_to_float = half_to_float;
  bool seen[kMaxRank] = {};
  for (int32_t d = 0; d < x.rank; ++d) {
    const int32_t from = p.perm()->Get(static_cast<uint32_t>(d));
    if (from < 0 || from >= x.rank || seen[from]) return invalid(*s, "perm is not a permutation");
    seen[from] = true;
    if (y.dims[d] != x.dims[from]) return invalid(*s, "output shape is not the permuted input's");
    k.out_dims[d] = y.dims[d];
    k.x_strides[d] = dense[from];
  }
  return JP_OK;
}

Status prepare_slice(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::SliceParams& p = *step.params_as_SliceParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "Slice", 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_of(plan, *s);
  JP_RETURN_IF_ERROR(check_same_dtype(*s, x, y));
  const auto rank = static_cast<uint32_t>(x.rank);
  if (y.rank != x.rank || p.starts() == nullptr || p.steps() == nullptr ||
      p.starts()->size() != rank || p.steps()->size() != rank) {
    return invalid(*s, "starts, steps, input and output must have the same rank");
  }
  kernels::SliceParams& k = s->params.slice;
  k = kernels::SliceParams{};
  k.rank = x.rank;
  k.elem_bytes = static_cast<int64_t>(dtype_size(x.dtype));
  for (uint32_t d = 0; d < rank; ++d) {
    const int64_t start = p.starts()->Get(d), step_d = p.steps()->Get(d);
    // The first and the last element read must lie in x's dim; the output is never empty.
    int64_t span = 0, last = 0;
    if (step_d == 0 || start < 0 || start >= x.dims[d] ||
        __builtin_mul_overflow(y.dims[d] - 1, step_d, &span) ||
        __builtin_add_overflow(start, span, &last) || last < 0 || last >= x.dims[d]) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "step '%s': dim %u: start %" PRId64 ", step %" PRId64 " and %" PRId64
                  " outputs read outside the input's %" PRId64,
                  s->name, d, start, step_d, y.dims[d], x.dims[d]);
    }
    k.x_dims[d] = x.dims[d];
    k.out_dims[d] = y.dims[d];
    k.starts[d] = start;
    k.steps[d] = step_d;
  }
  return JP_OK;
}

namespace {

// What Gather and GatherElements share: inputs data (rank >= 1) and indices (Int32 or Int64),
// an output of data's dtype, and the axis attribute (negative counts from the end) resolved to a
// dim of data.
struct GatherOperands {
  const TensorInfo* data;
  const TensorInfo* indices;
  const TensorInfo* y;
  int32_t axis;
};

Status read_gather_operands(const jp_plan& plan, PreparedStep* s, const char* family,
                            int32_t axis, GatherOperands* out) {
  JP_RETURN_IF_ERROR(check_arity(*s, family, 2));
  const TensorInfo& data = input_at(plan, *s, 0);
  const TensorInfo& indices = input_at(plan, *s, 1);
  const TensorInfo& y = output_of(plan, *s);
  JP_RETURN_IF_ERROR(check_same_dtype(*s, data, y));
  if (indices.dtype != fb::DType::Int32 && indices.dtype != fb::DType::Int64) {
    return invalid(*s, "indices must be Int32 or Int64");
  }
  if (data.rank < 1) return invalid(*s, "data must have rank >= 1");
  if (axis < 0) axis += data.rank;
  if (axis < 0 || axis >= data.rank) return invalid(*s, "axis is out of range");
  *out = {&data, &indices, &y, axis};
  return JP_OK;
}

}  // namespace

Status prepare_gather(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  GatherOperands g;
  JP_RETURN_IF_ERROR(
      read_gather_operands(plan, s, "Gather", step.params_as_GatherParams()->axis(), &g));
  const TensorInfo &data = *g.data, &indices = *g.indices, &y = *g.y;
  const int32_t axis = g.axis;
  // y = data's dims before the axis, then the indices' dims, then data's dims after the axis.
  if (y.rank != data.rank - 1 + indices.rank) {
    return invalid(*s, "output shape is not data's with the axis replaced by the indices' shape");
  }
  for (int32_t d = 0; d < y.rank; ++d) {
    const int64_t want = d < axis                  ? data.dims[d]
                         : d < axis + indices.rank ? indices.dims[d - axis]
                                                   : data.dims[d - indices.rank + 1];
    if (y.dims[d] != want) {
      return invalid(*s, "output shape is not data's with the axis replaced by the indices' shape");
    }
  }
  kernels::GatherParams& k = s->params.gather;
  k = kernels::GatherParams{};
  for (int32_t d = 0; d < axis; ++d) k.outer *= data.dims[d];
  k.axis_len = data.dims[axis];
  for (int32_t d = axis + 1; d < data.rank; ++d) k.inner *= data.dims[d];
  k.num_indices = static_cast<int64_t>(indices.elements);
  k.elem_bytes = static_cast<int64_t>(dtype_size(data.dtype));
  k.index_dtype = kernel_dtype(indices.dtype);
  return JP_OK;
}

Status prepare_gather_elements(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  GatherOperands g;
  JP_RETURN_IF_ERROR(read_gather_operands(plan, s, "GatherElements",
                                          step.params_as_GatherElementsParams()->axis(), &g));
  const TensorInfo &data = *g.data, &indices = *g.indices, &y = *g.y;
  if (!same_shape(indices, y) || y.rank != data.rank) {
    return invalid(*s, "indices and output must have one shape, of data's rank (>= 1)");
  }
  kernels::GatherElementsParams& k = s->params.gather_elements;
  k = kernels::GatherElementsParams{};
  k.rank = data.rank;
  k.axis = g.axis;
  k.elem_bytes = static_cast<int64_t>(dtype_size(data.dtype));
  k.index_dtype = kernel_dtype(indices.dtype);
  for (int32_t d = 0; d < data.rank; ++d) {
    if (d != g.axis && y.dims[d] > data.dims[d]) {
      return invalid(*s, "indices are larger than data off the axis");
    }
    k.data_dims[d] = data.dims[d];
    k.out_dims[d] = y.dims[d];
  }
  return JP_OK;
}

Status prepare_pad(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::PadParams& p = *step.params_as_PadParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "Pad", 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_of(plan, *s);
  JP_RETURN_IF_ERROR(check_same_dtype(*s, x, y));
  const int mode = static_cast<int>(p.mode());
  if (mode < 0 || mode >= kernels::kPadModeCount) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown pad mode %d", s->name, mode);
  }
  if (y.rank != x.rank || p.pads_begin() == nullptr ||
      p.pads_begin()->size() != static_cast<uint32_t>(x.rank)) {
    return invalid(*s, "pads_begin, input and output must have the same rank");
  }
  kernels::PadParams& k = s->params.pad;
  k = kernels::PadParams{};
  k.mode = static_cast<kernels::PadMode>(mode);
  k.rank = x.rank;
  k.elem_bytes = static_cast<int64_t>(dtype_size(x.dtype));
  for (int32_t d = 0; d < x.rank; ++d) {
    const int64_t begin = p.pads_begin()->Get(static_cast<uint32_t>(d));
    if (begin < -kMaxExtent || begin > kMaxExtent) return invalid(*s, "a pad is out of range");
    const int64_t end = y.dims[d] - x.dims[d] - begin;
    const int64_t kept = x.dims[d] - (begin < 0 ? -begin : 0) - (end < 0 ? -end : 0);
    // Edge, reflect and wrap extend what is left of x after the crop; nothing left, nothing to
    // extend from.
    if (k.mode != kernels::PadMode::kConstant && kept <= 0) {
      return invalid(*s, "negative pads crop a dim to nothing, which this mode cannot extend");
    }
    k.x_dims[d] = x.dims[d];
    k.out_dims[d] = y.dims[d];
    k.pads_begin[d] = begin;
  }
  if (!pad_value_bytes(p.value(), x.dtype, k.value)) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': pad value %g does not fit %s", s->name,
                p.value(), fb::EnumNameDType(x.dtype));
  }
  return JP_OK;
}

Status prepare_broadcast(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::BroadcastParams& p = *step.params_as_BroadcastParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "Broadcast", 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_of(plan, *s);
  JP_RETURN_IF_ERROR(check_same_dtype(*s, x, y));
  kernels::BroadcastParams& k = s->params.broadcast;
  k = kernels::BroadcastParams{};
  k.rank = y.rank;
  k.elem_bytes = static_cast<int64_t>(dtype_size(x.dtype));
  if (p.tile()) {
    // Tile: y repeats x whole along each dim.
    if (x.rank != y.rank) return invalid(*s, "Tile input and output ranks differ");
    for (int32_t d = 0; d < y.rank; ++d) {
      if (y.dims[d] % x.dims[d] != 0) {
        return invalid(*s, "Tile output dims are not multiples of the input's");
      }
    }
  }
  // Expand: x right-aligned to y, each dim 1 (broadcast) or y's. Tile got equal ranks above.
  if (x.rank > y.rank) return invalid(*s, "input rank is above the output's");
  int64_t stride = 1;
  for (int32_t d = y.rank - 1; d >= 0; --d) {
    const int32_t xd = d - (y.rank - x.rank);
    const int64_t dim = xd >= 0 ? x.dims[xd] : 1;
    if (!p.tile() && dim != 1 && dim != y.dims[d]) {
      return invalid(*s, "input does not broadcast to the output shape");
    }
    k.out_dims[d] = y.dims[d];
    k.x_dims[d] = dim;
    k.x_strides[d] = stride;
    stride *= dim;
  }
  return JP_OK;
}

Status prepare_unary(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::UnaryParams& p = *step.params_as_UnaryParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "Unary", 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_of(plan, *s);
  const int op = static_cast<int>(p.op());
  if (op < 0 || op >= kernels::kUnaryOpCount) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown unary op %d", s->name, op);
  }
  const auto kop = static_cast<kernels::UnaryOp>(op);
  // CUDA plans store floats as Float16 and compute in FP32: every op of Float32 then.
  const bool gpu_half = plan.backend == JP_BACKEND_CUDA && x.dtype == fb::DType::Float16 &&
                        kernels::unary_supported(kop, kernels::DType::kFloat32);
  if (!gpu_half && !kernels::unary_supported(kop, kernel_dtype(x.dtype))) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unary %s on %s is not supported", s->name,
                fb::EnumNameUnaryOp(p.op()), fb::EnumNameDType(x.dtype));
  }
  if (kernel_dtype(y.dtype) != kernels::unary_out_dtype(kop, kernel_dtype(x.dtype))) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': output '%s' of unary %s has the wrong dtype %s",
                s->name, y.name, fb::EnumNameUnaryOp(p.op()), fb::EnumNameDType(y.dtype));
  }
  if (!same_shape(x, y)) return invalid(*s, "input and output shapes differ");
  kernels::UnaryParams& k = s->params.unary;
  k = kernels::UnaryParams{};
  k.op = kop;
  k.dtype = kernel_dtype(x.dtype);
  k.count = static_cast<int64_t>(x.elements);
  return JP_OK;
}

Status prepare_elementwise(const jp_plan& plan, const fb::Step& step, PreparedStep* s) {
  const fb::ElementwiseParams& p = *step.params_as_ElementwiseParams();
  JP_RETURN_IF_ERROR(check_arity(*s, "Elementwise", 2));
  const TensorInfo& a = input_at(plan, *s, 0);
  const TensorInfo& b = input_at(plan, *s, 1);
  const TensorInfo& y = output_of(plan, *s);
  const int op = static_cast<int>(p.op());
  if (op < 0 || op >= kernels::kElementwiseOpCount) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown elementwise op %d", s->name, op);
  }
  const auto kop = static_cast<kernels::ElementwiseOp>(op);
  if (a.dtype != b.dtype) return invalid(*s, "operands differ in dtype");
  if (!kernels::elementwise_supported(kop, kernel_dtype(a.dtype))) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': elementwise %s on %s is not supported",
                s->name, fb::EnumNameElementwiseOp(p.op()), fb::EnumNameDType(a.dtype));
  }
  // The CUDA kernels compute float64 comparisons and FMod only (kernels/params_tensor.h).
  if (plan.backend == JP_BACKEND_CUDA && a.dtype == fb::DType::Float64 &&
      !kernels::elementwise_is_comparison(kop) && kop != kernels::ElementwiseOp::kFMod) {
    return fail(JP_ERROR_UNSUPPORTED,
                "step '%s': elementwise %s on Float64 runs on the CPU backend only", s->name,
                fb::EnumNameElementwiseOp(p.op()));
  }
  if (kernel_dtype(y.dtype) != kernels::elementwise_out_dtype(kop, kernel_dtype(a.dtype))) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': output '%s' of elementwise %s has the wrong dtype %s", s->name,
                y.name, fb::EnumNameElementwiseOp(p.op()), fb::EnumNameDType(y.dtype));
  }
  kernels::ElementwiseParams& k = s->params.elementwise;
  k = kernels::ElementwiseParams{};
  k.op = kop;
  k.dtype = kernel_dtype(a.dtype);
  const TensorInfo* operands[] = {&a, &b};
  int64_t* strides[] = {k.a_strides, k.b_strides};
  return broadcast_operands(*s, y, operands, strides, 2, &k.rank, k.out_dims);
}

Status prepare_where(const jp_plan& plan, const fb::Step&, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "Where", 3));
  const TensorInfo& cond = input_at(plan, *s, 0);
  const TensorInfo& x = input_at(plan, *s, 1);
  const TensorInfo& y = input_at(plan, *s, 2);
  const TensorInfo& out = output_of(plan, *s);
  if (cond.dtype != fb::DType::Bool) return invalid(*s, "the condition must be Bool");
  JP_RETURN_IF_ERROR(check_same_dtype(*s, x, out));
  JP_RETURN_IF_ERROR(check_same_dtype(*s, y, out));
  kernels::WhereParams& k = s->params.where;
  k = kernels::WhereParams{};
  k.elem_bytes = static_cast<int64_t>(dtype_size(out.dtype));
  const TensorInfo* operands[] = {&cond, &x, &y};
  int64_t* strides[] = {k.cond_strides, k.x_strides, k.y_strides};
  return broadcast_operands(*s, out, operands, strides, 3, &k.rank, k.out_dims);
}

Status prepare_cast(const jp_plan& plan, const fb::Step&, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "Cast", 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_of(plan, *s);
  if (!same_shape(x, y)) return invalid(*s, "input and output shapes differ");
  kernels::CastParams& k = s->params.cast;
  k = kernels::CastParams{};
  k.from = kernel_dtype(x.dtype);
  k.to = kernel_dtype(y.dtype);
  k.count = static_cast<int64_t>(x.elements);
  return JP_OK;
}

}  // namespace jetplan::rt
