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

}  // namespace

bool select_cast(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                 std::string* why) {
  const auto* p = static_cast<const CastParams*>(step.params);
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
    if (row == nullptr || (p->to != DType::kFloat16 && p->to != DType::kFloat32 &&
                           (p->to != DType::kBool || p->from == DType::kBool))) {
      *why =
          "the CUDA Cast kernels convert Float32 <-> Float16, integers or Bool to either "
          "float, and floats or integers to Bool, only";
      return false;
    }
    out->variant = &kernel_variant(row[to]);
    launch_1d(static_cast<uint64_t>(p->count), 256, target.sm_count * 8, out);
    return true;
  }
  // Four elements per thread on the vector path.
  launch_1d((static_cast<uint64_t>(p->count) + 3) / 4, 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
