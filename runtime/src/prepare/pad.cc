// Pad: constant, edge, reflect or wrap padding (negative pads crop) of a tensor of any dtype.
#include <cmath>
#include <cstring>

#include "kernels/cpu/bfloat16.h"
#include "kernels/cpu/half.h"
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {
namespace {

// Offsets and pads are kept far below int64 overflow: tensors have at most 2^40 elements.
constexpr int64_t kMaxExtent = int64_t{1} << 40;

// One element of type T, as its bytes.
template <typename T>
bool store(T value, unsigned char* out) {
  std::memcpy(out, &value, sizeof value);
  return true;
}

// `v` as a T when it is a whole number within [lo, hi] (T's range; the bounds are doubles).
template <typename T>
bool store_integral(double v, double lo, double hi, unsigned char* out) {
  if (!(std::isfinite(v) && v == std::trunc(v) && v >= lo && v <= hi)) return false;
  return store(static_cast<T>(v), out);
}

// Pad's constant as one element of `dtype`. Integer and bool tensors need a value they hold
// exactly; floats round to nearest (float16 through kernels/cpu/half.h), bfloat16 as Cast
// makes it (through float32, rounded to nearest even: kernels/cpu/bfloat16.h).
bool pad_value_bytes(double v, fb::DType dtype, unsigned char* out) {
  switch (dtype) {
    case fb::DType::Float32:
      return store(static_cast<float>(v), out);
    case fb::DType::Float16:
      return store(kernels::half_from_double(v), out);
    case fb::DType::Float64:
      return store(v, out);
    case fb::DType::Int8:
      return store_integral<int8_t>(v, -128, 127, out);
    case fb::DType::UInt8:
    case fb::DType::Bool:
      return store_integral<uint8_t>(v, 0, dtype == fb::DType::Bool ? 1 : 255, out);
    case fb::DType::Int32:
      return store_integral<int32_t>(v, -2147483648.0, 2147483647.0, out);
    case fb::DType::Int64:
      // 2^63 is the first double past the range; every double below it converts exactly.
      return store_integral<int64_t>(v, -9223372036854775808.0, 9223372036854774784.0, out);
    case fb::DType::Int16:
      return store_integral<int16_t>(v, -32768, 32767, out);
    case fb::DType::UInt16:
      return store_integral<uint16_t>(v, 0, 65535, out);
    case fb::DType::UInt32:
      return store_integral<uint32_t>(v, 0, 4294967295.0, out);
    case fb::DType::UInt64:
      // 2^64 is the first double past the range.
      return store_integral<uint64_t>(v, 0, 18446744073709549568.0, out);
    case fb::DType::BFloat16:
      return store(kernels::bfloat16_from_float(static_cast<float>(v)), out);
  }
  return false;
}

}  // namespace

Status prepare_pad(const jp_plan& plan, const fb::PadParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_moves_one(plan, *s, "Pad"));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_enum<kernels::kPadModeCount>(*s, p.mode(), "pad mode"));
  if (y.rank != x.rank || p.pads_begin() == nullptr ||
      p.pads_begin()->size() != static_cast<uint32_t>(x.rank)) {
    return invalid(*s, "pads_begin, input and output must have the same rank");
  }
  kernels::PadParams& k = fresh_params(&s->params.pad);
  k.mode = static_cast<kernels::PadMode>(p.mode());
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

void run_pad_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::pad(s.params.pad, in(s, tensors, 0), out(s, tensors));
}

}  // namespace jetplan::rt
