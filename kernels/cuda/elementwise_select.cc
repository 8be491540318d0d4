#include "kernels/cuda/select.h"
#include "kernels/params_tensor.h"

namespace jetplan::kernels::cuda {
namespace {

uint64_t dense(int32_t rank, const int64_t* dims) {
  uint64_t n = 1;
  for (int32_t d = 0; d < rank; ++d) n *= static_cast<uint64_t>(dims[d]);
  return n;
}

bool byte_mover(const char* name, int64_t elem_bytes, uint64_t work, const TargetInfo& target,
                LaunchChoice* out, std::string* why) {
  if (elem_bytes < 1 || elem_bytes > 8) {
    *why = "the CUDA byte-moving kernels take elements of 1 to 8 bytes";
    return false;
  }
  out->variant = find_kernel_variant(name);
  launch_1d(work, 256, target.sm_count * 8, out);
  return true;
}

}  // namespace

// Elementwise: comparisons on every dtype (Float16 included), logic on Bool, integer arithmetic
// on Int32/Int64, FMod on Float32/Float64 (elementwise_supported, with Float16 comparisons).
bool select_elementwise(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                        std::string* why) {
  const auto* p = static_cast<const ElementwiseParams*>(step.params);
  const char* name = nullptr;
  if (elementwise_is_logic(p->op)) {
    if (p->dtype == DType::kBool) name = "jp_elementwise_cmp_bool";
  } else if (elementwise_is_comparison(p->op)) {
    switch (p->dtype) {
      case DType::kFloat32: name = "jp_elementwise_cmp_f32"; break;
      case DType::kFloat16: name = "jp_elementwise_cmp_f16"; break;
      case DType::kFloat64: name = "jp_elementwise_cmp_f64"; break;
      case DType::kInt8: name = "jp_elementwise_cmp_i8"; break;
      case DType::kUInt8: name = "jp_elementwise_cmp_u8"; break;
      case DType::kInt32: name = "jp_elementwise_cmp_i32"; break;
      case DType::kInt64: name = "jp_elementwise_cmp_i64"; break;
      case DType::kBool: name = "jp_elementwise_cmp_bool"; break;
      case DType::kInt16:
      case DType::kUInt16:
      case DType::kUInt32:
      case DType::kUInt64:
      case DType::kBFloat16: break;  // CPU backend only
    }
  } else if (p->dtype == DType::kInt32) {
    name = "jp_elementwise_i32";
  } else if (p->dtype == DType::kInt64) {
    name = "jp_elementwise_i64";
  } else if (p->op == ElementwiseOp::kFMod && p->dtype == DType::kFloat32) {
    name = "jp_elementwise_fmod_f32";
  } else if (p->op == ElementwiseOp::kFMod && p->dtype == DType::kFloat64) {
    name = "jp_elementwise_fmod_f64";
  }
  if (name == nullptr) {
    *why = "no CUDA Elementwise kernel for this op and dtype (float arithmetic is Binary)";
    return false;
  }
  out->variant = find_kernel_variant(name);
  launch_1d(dense(p->rank, p->out_dims), 256, target.sm_count * 8, out);
  return true;
}

bool select_where(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                  std::string* why) {
  const auto* p = static_cast<const WhereParams*>(step.params);
  return byte_mover("jp_where", p->elem_bytes, dense(p->rank, p->out_dims), target, out, why);
}

bool select_broadcast(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                      std::string* why) {
  const auto* p = static_cast<const BroadcastParams*>(step.params);
  return byte_mover("jp_broadcast", p->elem_bytes, dense(p->rank, p->out_dims), target, out, why);
}

bool select_pad(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                std::string* why) {
  const auto* p = static_cast<const PadParams*>(step.params);
  return byte_mover("jp_pad", p->elem_bytes, dense(p->rank, p->out_dims), target, out, why);
}

}  // namespace jetplan::kernels::cuda
