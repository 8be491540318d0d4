#include "runtime/src/op_families.h"

namespace jetplan::rt {
namespace {

using fb::OpFamily;
using fb::StepParams;

constexpr OpFamilyEntry kOpFamilies[] = {
    {OpFamily::Conv, StepParams::ConvParams, "Conv", prepare_conv, run_conv_cpu},
    {OpFamily::Pool, StepParams::PoolParams, "Pool", prepare_pool, run_pool_cpu},
    {OpFamily::Gemm, StepParams::GemmParams, "Gemm", prepare_gemm, run_gemm_cpu},
    {OpFamily::Binary, StepParams::BinaryParams, "Binary", prepare_binary, run_binary_cpu},
    {OpFamily::Activation, StepParams::ActivationParams, "Activation", prepare_activation,
     run_activation_cpu},
    {OpFamily::Softmax, StepParams::SoftmaxParams, "Softmax", prepare_softmax, run_softmax_cpu},
    {OpFamily::BatchNorm, StepParams::BatchNormParams, "BatchNorm", prepare_batch_norm,
     run_batch_norm_cpu},
    {OpFamily::Concat, StepParams::ConcatParams, "Concat", prepare_concat, run_concat_cpu},
    {OpFamily::Copy, StepParams::CopyParams, "Copy", prepare_copy, run_copy_cpu},
#include "runtime/src/families_nn.inc"
#include "runtime/src/families_tensor.inc"
#include "runtime/src/families_seq.inc"
    {OpFamily::Pointwise, StepParams::PointwiseParams, "Pointwise", prepare_pointwise,
     run_pointwise_cpu},
};

constexpr size_t kFamilyCount = sizeof(kOpFamilies) / sizeof(kOpFamilies[0]);
static_assert(kFamilyCount == static_cast<size_t>(OpFamily::MAX) + 1,
              "every OpFamily in schemas/plan.fbs needs a row in kOpFamilies");

constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < kFamilyCount; ++i) {
    if (static_cast<size_t>(kOpFamilies[i].op) != i) return false;
  }
  return true;
}
static_assert(rows_in_enum_order(), "kOpFamilies rows must follow the OpFamily enum order");

}  // namespace

Status prepare_unimplemented(const jp_plan&, const fb::Step& step, PreparedStep* s) {
  return fail(JP_ERROR_UNSUPPORTED, "step '%s': op family %s is not implemented in this runtime",
              s->name, fb::EnumNameOpFamily(step.op()));
}

void run_unimplemented(const PreparedStep&, void* const*, void*) {}

const OpFamilyEntry* find_op_family(fb::OpFamily op) {
  const auto index = static_cast<size_t>(op);
  return index < kFamilyCount ? &kOpFamilies[index] : nullptr;
}

}  // namespace jetplan::rt
