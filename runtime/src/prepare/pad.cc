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

static_assert(kernels::kPadModeCount == static_cast<int>(fb::PadMode::MAX) + 1,
              "kernels::PadMode must mirror fb::PadMode");

// Offsets and pads are kept far below int64 overflow: tensors have at most 2^40 elements.
constexpr int64_t kMaxExtent = int64_t{1} << 40;

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

Status prepare_pad(const jp_plan& plan, const fb::PadParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "Pad", 1, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
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

void run_pad_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::pad(s.params.pad, in(s, tensors, 0), out(s, tensors));
}

}  // namespace jetplan::rt
