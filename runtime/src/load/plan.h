// A loaded, verified plan: the FlatBuffer plus tables resolved from it at load (tensor shapes and
// storage, bindings, and every step's kernel parameters), so that run does no parsing and no
// checking. Everything here is immutable after jp_plan_load_* returns.
#pragma once

#include <cstdint>

#include "jetplan/jetplan.h"
#include "jetplan/plan_generated.h"
#include "kernels/kernels.h"
#include "runtime/src/api/memory.h"
#include "runtime/src/api/status.h"

namespace jetplan::rt {

constexpr int kMaxRank = kernels::kMaxRank;
constexpr uint64_t kWeightAlignment = 256;

struct TensorInfo {
  const char* name;  // into the plan buffer (FlatBuffers strings are NUL-terminated)
  fb::Storage storage;
  fb::DType dtype;
  // NHWC: a 3- to 5-D tensor stored channels-last, dims [N, *spatial, C] (GPU plans); the
  // families that read spatial layouts (Conv, Pool, BatchNorm) follow it, the others ignore it.
  fb::Layout layout;
  int32_t rank;
  int64_t dims[kMaxRank];
  uint64_t elements;
  uint64_t offset;    // into the arena or the weights, by storage
  uint64_t bytes;
  int32_t binding;    // Binding storage: index into inputs or outputs (is_output says which)
  int32_t view_of;    // Arena: the tensor whose bytes this view reads (no step writes it); -1
  bool is_output;
};

// The kernel parameter struct of each family: kernels::<Params> for the .def's Params column,
// except that QuantizeLinear and DequantizeLinear share kernels::QuantizeLinearParams.
namespace family_params {
using namespace kernels;  // NOLINT: every kernels::<Params> by the .def's name
using QuantizeParams = kernels::QuantizeLinearParams;
}  // namespace family_params

// Kernel parameters of one step, resolved at load: one member per family, named by its file
// stem (kernels/op_families.def). The member in use is named by the step's op (Quantize and
// Dequantize both use `quantize`).
union KernelParams {
  KernelParams() : copy() {}
#define JP_OP_FAMILY(Name, file, Params, Backends) family_params::Params file;
#include "kernels/op_families.def"
#undef JP_OP_FAMILY
};

struct PreparedStep;
// tensors: one pointer per plan tensor, resolved when the context was created; workspace: the
// step's scratch in the arena (null when the step has none).
using RunCpuFn = void (*)(const PreparedStep& step, void* const* tensors, void* workspace);

struct PreparedStep {
  fb::OpFamily op;
  RunCpuFn run_cpu;                              // the family's CPU kernel, chosen at load
  const char* name;                              // into the plan buffer
  const flatbuffers::Vector<uint32_t>* inputs;   // verified tensor indices
  const flatbuffers::Vector<uint32_t>* outputs;
  uint64_t workspace_offset;  // verified inside the arena
  uint64_t workspace_bytes;   // verified >= what the kernel needs
  KernelParams params;
  bool skipped;  // every output empty: never prepared, never run (check_empty_tensors)
};

struct BindingInfo {
  const char* name;
  uint32_t tensor;
  int32_t count_tensor;  // -1, or an Int64 [1] arena tensor holding the run-time leading extent
};

size_t dtype_size(fb::DType dtype);

struct CudaPlan;  // backend_cuda.cc: the plan's device side
void destroy_cuda_plan(CudaPlan* cuda);

}  // namespace jetplan::rt

struct jp_plan {
  void* owned = nullptr;             // our copy of the plan bytes (null when borrowed)
  const uint8_t* data = nullptr;
  size_t size = 0;
  const jetplan::fb::Plan* fb = nullptr;
  jp_backend backend = JP_BACKEND_CPU;
  const uint8_t* weights = nullptr;  // 256-byte aligned, may be null when there are none
  uint64_t weights_bytes = 0;
  uint64_t arena_bytes = 0;
  uint64_t arena_alignment = 256;
  jetplan::rt::Array<jetplan::rt::TensorInfo> tensors;
  jetplan::rt::Array<jetplan::rt::BindingInfo> inputs;
  jetplan::rt::Array<jetplan::rt::BindingInfo> outputs;
  jetplan::rt::Array<jetplan::rt::PreparedStep> steps;
  // CUDA plans loaded with a device: kernels, launch configs and the weights in GPU memory.
  jetplan::rt::CudaPlan* cuda = nullptr;

  ~jp_plan() {
    if (cuda != nullptr) jetplan::rt::destroy_cuda_plan(cuda);
    jetplan::rt::deallocate(owned);
  }
};

namespace jetplan::rt {

// Verifies `plan->data/size` (set by the caller) and fills the rest of `plan`. On failure the
// plan is left for the caller to destroy.
[[nodiscard]] Status load_plan(jp_plan* plan);

}  // namespace jetplan::rt
