// The table of every CUDA kernel variant the embedded fatbins hold: what load checks a plan's
// Step.kernel and Step.launch against (a plan naming a kernel of another family, or launching a
// fixed-shape kernel with another block or too little shared memory, is refused), and what the
// converter's selectors (select.h) pick from. Host C++ only; rows live in <family>_variants.inc
// next to each .cu file and are gathered by variants.cc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/params.h"

namespace jetplan::kernels::cuda {

// The element types a variant reads and writes: `dtype` is input 0's, `out_dtype` output 0's
// (kAnyDType there: the same as `dtype`). kAnyDType in `dtype` for kernels that move bytes or
// read their types from the params. Load refuses a step whose tensors differ: a kernel
// writing wider elements than its output holds would write past it.
constexpr uint8_t kAnyDType = 0xff;

struct KernelVariant {
  const char* name;        // the extern "C" symbol
  uint16_t family;         // fb::OpFamily value
  uint8_t dtype;           // a DType value, or kAnyDType
  uint32_t block_threads;  // blockDim.x * y * z the kernel assumes; 0: any block up to 1024
  uint32_t shared_bytes;   // dynamic shared memory it needs at least (0: none)
  // The runtime clears the step's whole workspace before each launch (a memset node in the
  // graph): for kernels that count arrivals there (serial split-K). Otherwise it is garbage.
  bool zero_workspace = false;
  uint8_t out_dtype = kAnyDType;  // see above (Cast: the destination type)
  // The kernel's blocks wait for each other's results (through the workspace): the runtime
  // launches it cooperatively, so every block is resident at once, and load refuses a grid
  // larger than the GPU holds at once.
  bool cooperative = false;
};

// Null when no variant has that name.
const KernelVariant* find_kernel_variant(const char* name);
const KernelVariant* kernel_variants(size_t* count);

}  // namespace jetplan::kernels::cuda
