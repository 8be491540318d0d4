#include <string>

#include "kernels/cuda/select.h"
#include "kernels/params_tensor.h"

namespace jetplan::kernels::cuda {

bool select_cast(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                 std::string* why) {
  const auto* p = static_cast<const CastParams*>(step.params);
  if (p->from == DType::kFloat32 && p->to == DType::kFloat16) {
    out->variant = find_kernel_variant("jp_cast_f32_f16");
  } else if (p->from == DType::kFloat16 && p->to == DType::kFloat32) {
    out->variant = find_kernel_variant("jp_cast_f16_f32");
  } else if ((p->from == DType::kFloat16 || p->from == DType::kFloat32) &&
             p->to == DType::kBool) {
    out->variant = find_kernel_variant(p->from == DType::kFloat16 ? "jp_cast_f16_b8"
                                                                   : "jp_cast_f32_b8");
    launch_1d(static_cast<uint64_t>(p->count), 256, target.sm_count * 8, out);
    return true;
  } else {
    // Integers and Bool to a float, integers to Bool: one element per thread.
    const char* from = p->from == DType::kInt64   ? "i64"
                       : p->from == DType::kInt32 ? "i32"
                       : p->from == DType::kInt8  ? "i8"
                       : p->from == DType::kUInt8 ? "u8"
                       : p->from == DType::kBool  ? "b8"
                                                  : nullptr;
    const char* to = p->to == DType::kFloat16   ? "f16"
                     : p->to == DType::kFloat32 ? "f32"
                     : p->to == DType::kBool && p->from != DType::kBool ? "b8"
                                                                        : nullptr;
    if (from == nullptr || to == nullptr) {
      *why = "the CUDA Cast kernels convert Float32 <-> Float16, integers or Bool to either "
             "float, and floats or integers to Bool, only";
      return false;
    }
    out->variant = find_kernel_variant((std::string("jp_cast_") + from + "_" + to).c_str());
    if (out->variant == nullptr) {
      *why = "internal: cast variant missing from the table";
      return false;
    }
    launch_1d(static_cast<uint64_t>(p->count), 256, target.sm_count * 8, out);
    return true;
  }
  // Four elements per thread on the vector path.
  launch_1d((static_cast<uint64_t>(p->count) + 3) / 4, 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
