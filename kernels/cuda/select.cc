#include "kernels/cuda/select.h"

#include <algorithm>
#include <limits>

namespace jetplan::kernels::cuda {
namespace {

// One row per fb::OpFamily value (schemas/plan.fbs order); null: no CUDA kernel yet.
constexpr int kFamilies = 36;
const SelectFn kSelectors[kFamilies] = {
    /* Conv */ select_conv,
    /* Pool */ select_pool,
    /* Gemm */ select_gemm,
    /* Binary */ select_pointwise,
    /* Activation */ select_pointwise,
    /* Softmax */ select_softmax,
    /* BatchNorm */ select_batch_norm,
    /* Concat */ select_concat,
    /* Copy */ select_copy,
    /* ConvTranspose */ select_conv_transpose,
    /* Resize */ select_resize,
    /* Reduce */ select_reduce,
    /* ArgReduce */ nullptr,
    /* TopK */ nullptr,
    /* InstanceNorm */ nullptr,
    /* LayerNorm */ select_layer_norm,
    /* GroupNorm */ nullptr,
    /* Lrn */ nullptr,
    /* Nms */ nullptr,
    /* Transpose */ select_transpose,
    /* Slice */ select_slice,
    /* Gather */ select_gather,
    /* GatherElements */ nullptr,
    /* Pad */ select_pad,
    /* Broadcast */ select_broadcast,
    /* Unary */ select_unary,
    /* Elementwise */ select_elementwise,
    /* Where */ select_where,
    /* Cast */ select_cast,
    /* Rnn */ select_rnn,
    /* Quantize */ nullptr,
    /* Dequantize */ nullptr,
    /* QLinearMatMul */ nullptr,
    /* QLinearConv */ nullptr,
    /* DynamicQuantize */ nullptr,
    /* Pointwise */ select_pointwise_chain,
};

}  // namespace

uint32_t ceil_div_u32(uint64_t a, uint64_t b) {
  const uint64_t q = (a + b - 1) / b;
  return q > std::numeric_limits<uint32_t>::max() ? std::numeric_limits<uint32_t>::max()
                                                   : static_cast<uint32_t>(q);
}

void launch_1d(uint64_t work, uint32_t threads, uint32_t max_blocks, LaunchChoice* out) {
  out->block[0] = threads;
  out->block[1] = out->block[2] = 1;
  out->grid[0] = std::max<uint32_t>(1, std::min(ceil_div_u32(work, threads), max_blocks));
  out->grid[1] = out->grid[2] = 1;
}

bool has_selector(uint16_t family) {
  return family < kFamilies && kSelectors[family] != nullptr;
}

bool select_kernel(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string* why) {
  *out = LaunchChoice{};
  if (!has_selector(step.family)) {
    *why = "no CUDA kernel for this op family yet";
    return false;
  }
  if (!kSelectors[step.family](step, target, out, why)) return false;
  if (out->variant == nullptr || out->variant->family != step.family) {
    *why = "internal: the selector returned no variant of the step's family";
    return false;
  }
  return true;
}

}  // namespace jetplan::kernels::cuda
