// Kernel selection: for one step, which variant (variants.h) runs it on a target and with which
// launch configuration. The converter calls this once per step of a GPU plan; nothing chooses at
// run time. Host C++ only (no CUDA), so plans are built on machines without a GPU.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/variants.h"

namespace jetplan::kernels {
struct ConvParams;
}

namespace jetplan::kernels::cuda {

// What selection knows of the device (targets/<name>.json).
struct TargetInfo {
  std::string name;             // "h100", "orin-agx", ...
  uint32_t sm_arch = 0;         // 87 for sm_87
  uint32_t sm_count = 0;
  uint32_t max_shared_per_block = 0;  // opt-in maximum, bytes
  uint32_t shared_per_sm = 0;         // bytes
  uint32_t l2_bytes = 0;
  double dram_gbps = 0;         // GB/s
  double fp16_tensor_tflops = 0;  // dense FP16 tensor-core peak (FP32 accumulate)
  // Whether kernels of this arch only (rows with sm_only, such as sm_90's wgmma tiles) may be
  // picked; false keeps to the kernels every arch has (jetplan-convert --portable-kernels: the
  // Ampere-class path Orin runs, timed on a development GPU).
  bool arch_kernels = true;
};

// One step as plan load prepared it: the family's parameter struct and the element types.
struct StepDesc {
  uint16_t family = 0;       // fb::OpFamily value
  const void* params = nullptr;  // the family's kernels::*Params
  DType dtype = DType::kFloat32;  // of the step's data tensors (see variants.h)
  int num_inputs = 0;
  int num_outputs = 0;
  DType input_dtypes[kMaxStepInputs] = {};
  DType output_dtypes[kMaxStepOutputs] = {};
};

struct LaunchChoice {
  const KernelVariant* variant = nullptr;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t shared_bytes = 0;
  uint32_t split_k = 1;          // Conv/Gemm: K slices (1: none)
  uint64_t workspace_bytes = 0;  // scratch the step needs in the arena
};

// Picks the variant and launch for `step` on `target`. False with `why` set ("no CUDA kernel for
// Softmax over Float32", ...) when none fits; never throws.
bool select_kernel(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string* why);

// True when the op family (fb::OpFamily value) has CUDA kernels at all: the converter reports
// every step of a family without one before it loads a plan (whose Float16 steps the CPU
// prepare of such a family would refuse first).
bool has_selector(uint16_t family);

// True when the family has a selector and a kernel variant that reads `dtype` (its input 0's
// dtype, or kAnyDType: byte movers and kernels that read their types from the params): the
// variants select_kernel picks from. What `jetplan-convert --list-ops` shows as GPU support;
// a selector may still refuse a step of such a dtype for its form, naming why.
bool has_kernel_for(uint16_t family, DType dtype);

// Family selectors: select_<file> in kernels/cuda/<file>_select.cc for every CUDA row of
// kernels/op_families.def, dispatched by select_kernel.
using SelectFn = bool (*)(const StepDesc&, const TargetInfo&, LaunchChoice*, std::string*);
#define JP_DECLARE_SELECTOR_CUDA(file) \
  bool select_##file(const StepDesc&, const TargetInfo&, LaunchChoice*, std::string*);
#define JP_DECLARE_SELECTOR_CPU_ONLY(file)
#define JP_OP_FAMILY(Name, file, Params, Backends) JP_DECLARE_SELECTOR_##Backends(file)
#include "kernels/op_families.def"
#undef JP_OP_FAMILY
#undef JP_DECLARE_SELECTOR_CUDA
#undef JP_DECLARE_SELECTOR_CPU_ONLY

// Helpers for selectors.
using VariantId = KernelVariantId;
uint32_t ceil_div_u32(uint64_t a, uint64_t b);  // saturates at UINT32_MAX
// A 1-D launch of `threads`-thread blocks covering `work` items, capped at `max_blocks` blocks
// (kernels then stride over the rest).
void launch_1d(uint64_t work, uint32_t threads, uint32_t max_blocks, LaunchChoice* out);
// The byte-moving kernels (Where, Broadcast, Pad): elements of 1 to 8 bytes, a 1-D launch over
// `work` elements. False with `why` set for other element sizes.
bool select_byte_mover(KernelVariantId id, int64_t elem_bytes, uint64_t work,
                       const TargetInfo& target, LaunchChoice* out, std::string* why);
// The kernels that store Float16 or Float32: true with *f16 set for those step dtypes; false
// with `why` set to "the CUDA <kernels> kernels take Float16 or Float32" otherwise.
bool float_storage(const StepDesc& step, const char* kernels, bool* f16, std::string* why);
// Sets the variant of a Float16/Float32 pair (f16_id when f16, else f32_id) and its launch_1d;
// returns true (a selector's last word).
bool launch_float_pair(bool f16, KernelVariantId f16_id, KernelVariantId f32_id, uint64_t work,
                       uint32_t threads, uint32_t max_blocks, LaunchChoice* out);
// float_storage's check of the step, then launch_float_pair for its storage.
bool select_float_pair(const StepDesc& step, const char* kernels, KernelVariantId f16_id,
                       KernelVariantId f32_id, uint64_t work, uint32_t threads, uint32_t max_blocks,
                       LaunchChoice* out, std::string* why);
// Conv (conv_select.cc): the variant (jp_conv_dw<K>_* of p's window and types) and launch of
// the tiled depthwise kernels; false where they do not take p (conv_dw_tiled_fits).
bool launch_conv_dw_tiled(const ConvParams& p, const TargetInfo& target, LaunchChoice* out);
// Conv: the variant and launch of the stem kernels (jp_conv_stem_n{32,64}_f16: N tiles of 32
// channels for Cout <= 32, else 64; CTAs striding over the tiles, as many as the SMs hold);
// false where they do not take p (conv_stem_fits) or their shared memory passes the target's.
bool launch_conv_stem(const ConvParams& p, const TargetInfo& target, LaunchChoice* out);
// Conv: the launch of jp_conv_igemm_f32 (the FP32 implicit GEMM, Float32 convs of groups 1:
// 64x64 tiles, 256 threads); false where it does not take p (select_conv then takes the direct
// kernel).
bool launch_conv_igemm_f32(const ConvParams& p, LaunchChoice* out);
// Elements of a dense shape (1 for rank 0).
uint64_t count_elements(int32_t rank, const int64_t* dims);
// select_byte_mover over the dense output of a step whose params P give elem_bytes, rank and
// out_dims (Where, Broadcast, Pad).
template <typename P>
bool select_dense_byte_mover(KernelVariantId id, const StepDesc& step, const TargetInfo& target,
                             LaunchChoice* out, std::string* why) {
  const auto* p = static_cast<const P*>(step.params);
  return select_byte_mover(id, p->elem_bytes, count_elements(p->rank, p->out_dims), target, out,
                           why);
}

}  // namespace jetplan::kernels::cuda
