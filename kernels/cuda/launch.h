// The contract between the CUDA kernels (kernels/cuda/*.cu), the runtime that launches them and
// the converter that selects them. Plain C++ (no CUDA headers): nvcc and the host compilers both
// include it, so the structs have one layout on both sides.
//
// A kernel variant is an `extern "C" __global__` function of exactly this signature:
//
//     extern "C" __global__ void jp_<family>_<variant>(jetplan::kernels::cuda::StepPointers ptrs,
//                                                      const jetplan::kernels::<Family>Params p);
//
// `p` is the family's parameter struct from kernels/<file>.h, exactly as plan load resolved it
// for the CPU twin (the same struct, so both backends agree on every shape), and `ptrs` the
// step's device pointers in the step's input and output order. The runtime builds both when a
// context is created and only launches after that (or replays a CUDA graph of the launches).
//
// Rules every variant keeps (plans are untrusted; tests/kernels/cuda checks them):
//   - Memory-safe for ANY grid: every global index is bounded by `p` (which load verified
//     against the tensor sizes). A grid the converter chose too small computes less, never
//     outside a tensor. A variant that assumes a block shape or dynamic shared memory size says
//     so in its KernelVariant row (variants.h), and load refuses launch configs that differ.
//   - Deterministic: no unordered atomics in reductions; same inputs, same bits.
//   - The workspace (ptrs.workspace, Step.workspace_bytes of the arena) holds garbage on entry,
//     except what the variant's row says the runtime clears (zero_workspace: all of it, or only
//     the split-K arrival counters at its end).
//   - Activation tensors of GPU plans are FP16 (storage) with FP32 arithmetic; 4-D tensors the
//     converter marked NHWC have shape [N, H, W, C] and the Conv/Pool/BatchNorm/ConvTranspose
//     params say channels_last (conv weights are then [Cout, KH, KW, Cin / groups], upsampling
//     ConvTranspose weights [KH, KW, Cout, Cin]).
#pragma once

#include <cstdint>

#include "kernels/tensor_limits.h"

namespace jetplan::kernels::cuda {

constexpr int kMaxStepInputs = kMaxConcatInputs;
constexpr int kMaxStepOutputs = 4;

// Device pointers of one step. Unused entries are null.
struct StepPointers {
  const void* in[kMaxStepInputs];
  void* out[kMaxStepOutputs];
  void* workspace;            // null when the step has none
  uint64_t workspace_bytes;   // its size: a kernel never touches more, whatever the plan says
};

}  // namespace jetplan::kernels::cuda
