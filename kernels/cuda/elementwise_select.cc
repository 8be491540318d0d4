#include "kernels/cuda/select.h"
#include "kernels/elementwise.h"

namespace jetplan::kernels::cuda {
namespace {

// The comparison kernels, one per dtype they take.
struct CompareKernel {
  DType dtype;
  VariantId id;
};
constexpr CompareKernel kCompareKernels[] = {
    {DType::kFloat32, VariantId::jp_elementwise_cmp_f32},
    {DType::kFloat16, VariantId::jp_elementwise_cmp_f16},
    {DType::kFloat64, VariantId::jp_elementwise_cmp_f64},
    {DType::kInt8, VariantId::jp_elementwise_cmp_i8},
    {DType::kUInt8, VariantId::jp_elementwise_cmp_u8},
    {DType::kInt32, VariantId::jp_elementwise_cmp_i32},
    {DType::kInt64, VariantId::jp_elementwise_cmp_i64},
    {DType::kBool, VariantId::jp_elementwise_cmp_bool},
    {DType::kInt16, VariantId::jp_elementwise_cmp_i16},
    {DType::kUInt16, VariantId::jp_elementwise_cmp_u16},
    {DType::kUInt32, VariantId::jp_elementwise_cmp_u32},
    {DType::kUInt64, VariantId::jp_elementwise_cmp_u64},
};

// The integer arithmetic kernels, one per dtype.
constexpr CompareKernel kIntegerKernels[] = {
    {DType::kInt32, VariantId::jp_elementwise_i32},  {DType::kInt64, VariantId::jp_elementwise_i64},
    {DType::kInt16, VariantId::jp_elementwise_i16},  {DType::kUInt16, VariantId::jp_elementwise_u16},
    {DType::kUInt32, VariantId::jp_elementwise_u32}, {DType::kUInt64, VariantId::jp_elementwise_u64},
};

}  // namespace

// Elementwise: comparisons on every dtype (Float16 included), logic on Bool, integer arithmetic
// on Int16/Int32/Int64 and UInt16/UInt32/UInt64, Float64 arithmetic, FMod on Float32/Float16
// (elementwise_supported, with Float16 comparisons).
bool select_elementwise(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                        std::string* why) {
  const auto* p = static_cast<const ElementwiseParams*>(step.params);
  bool found = true;
  VariantId id = VariantId::jp_elementwise_i32;
  if (elementwise_is_logic(p->op)) {
    found = p->dtype == DType::kBool;
    id = VariantId::jp_elementwise_cmp_bool;
  } else if (elementwise_is_comparison(p->op)) {
    found = false;  // the other dtypes: CPU backend only
    for (const CompareKernel& k : kCompareKernels) {
      if (k.dtype == p->dtype) {
        id = k.id;
        found = true;
      }
    }
  } else if (p->dtype == DType::kFloat64) {
    id = p->op == ElementwiseOp::kFMod ? VariantId::jp_elementwise_fmod_f64
                                       : VariantId::jp_elementwise_f64;
    found = elementwise_supported(p->op, p->dtype);
  } else if (p->op == ElementwiseOp::kFMod && p->dtype == DType::kFloat32) {
    id = VariantId::jp_elementwise_fmod_f32;
  } else if (p->op == ElementwiseOp::kFMod && p->dtype == DType::kFloat16) {
    id = VariantId::jp_elementwise_fmod_f16;
  } else {
    found = false;
    for (const CompareKernel& k : kIntegerKernels) {
      if (k.dtype == p->dtype) {
        id = k.id;
        found = elementwise_supported(p->op, p->dtype);
      }
    }
  }
  if (!found) {
    *why = "no CUDA Elementwise kernel for this op and dtype (float arithmetic is Binary)";
    return false;
  }
  out->variant = &kernel_variant(id);
  launch_1d(count_elements(p->rank, p->out_dims), 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
