#include "kernels/cast.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {
namespace {

// The integer and Bool sources' variants, to Float16, Float32 and Bool (Bool to Bool: none, the
// row's third entry is never read).
struct IntegerCast {
  DType from;
  VariantId to[3];
};
constexpr IntegerCast kIntegerCasts[] = {
    {DType::kInt64,
     {VariantId::jp_cast_i64_f16, VariantId::jp_cast_i64_f32, VariantId::jp_cast_i64_b8}},
    {DType::kInt32,
     {VariantId::jp_cast_i32_f16, VariantId::jp_cast_i32_f32, VariantId::jp_cast_i32_b8}},
    {DType::kInt8,
     {VariantId::jp_cast_i8_f16, VariantId::jp_cast_i8_f32, VariantId::jp_cast_i8_b8}},
    {DType::kUInt8,
     {VariantId::jp_cast_u8_f16, VariantId::jp_cast_u8_f32, VariantId::jp_cast_u8_b8}},
    {DType::kBool,
     {VariantId::jp_cast_b8_f16, VariantId::jp_cast_b8_f32, VariantId::jp_cast_b8_f16}},
};

// The casts to an integer, from their rows (kernels/cast.h JP_CUDA_CASTS_TO_INTEGER).
struct ToInteger {
  DType from, to;
  VariantId id;
};
constexpr DType kF16 = DType::kFloat16, kF32 = DType::kFloat32, kI64 = DType::kInt64,
                kI32 = DType::kInt32, kI8 = DType::kInt8, kU8 = DType::kUInt8,
                kBool = DType::kBool;
#define JP_CAST_TO_INTEGER_ROW(F, symbol, from, threads, to) {from, to, VariantId::symbol},
constexpr ToInteger kToInteger[] = {JP_CUDA_CASTS_TO_INTEGER(JP_CAST_TO_INTEGER_ROW, Cast)};
#undef JP_CAST_TO_INTEGER_ROW

}  // namespace

bool select_cast(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                 std::string* /*why: every pair has a kernel*/) {
  const auto* p = static_cast<const CastParams*>(step.params);
  for (const ToInteger& c : kToInteger) {
    if (c.from != p->from || c.to != p->to) continue;
    out->variant = &kernel_variant(c.id);  // one element per thread
    launch_1d(static_cast<uint64_t>(p->count), 256, target.sm_count * 8, out);
    return true;
  }
  if (p->from == DType::kFloat32 && p->to == DType::kFloat16) {
    out->variant = &kernel_variant(VariantId::jp_cast_f32_f16);
  } else if (p->from == DType::kFloat16 && p->to == DType::kFloat32) {
    out->variant = &kernel_variant(VariantId::jp_cast_f16_f32);
  } else if ((p->from == DType::kFloat16 || p->from == DType::kFloat32) && p->to == DType::kBool) {
    out->variant = &kernel_variant(p->from == DType::kFloat16 ? VariantId::jp_cast_f16_b8
                                                              : VariantId::jp_cast_f32_b8);
    launch_1d(static_cast<uint64_t>(p->count), 256, target.sm_count * 8, out);
    return true;
  } else {
    // Integers and Bool to a float, integers to Bool: one element per thread.
    const VariantId* row = nullptr;
    for (const IntegerCast& c : kIntegerCasts) row = c.from == p->from ? c.to : row;
    const int to = p->to == DType::kFloat16 ? 0 : p->to == DType::kFloat32 ? 1 : 2;
    // Every other pair (Float64, BFloat16, Int16, UInt16, UInt32, UInt64 at either end): the
    // generic kernel, a load and a store switched on the step's dtypes.
    const bool typed = row != nullptr && (p->to == DType::kFloat16 || p->to == DType::kFloat32 ||
                                          (p->to == DType::kBool && p->from != DType::kBool));
    out->variant = &kernel_variant(typed ? row[to] : VariantId::jp_cast_any);
    launch_1d(static_cast<uint64_t>(p->count), 256, target.sm_count * 8, out);
    return true;
  }
  // Four elements per thread on the vector path.
  launch_1d((static_cast<uint64_t>(p->count) + 3) / 4, 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
