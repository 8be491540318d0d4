// The table of every CUDA kernel variant the embedded fatbins hold: what load checks a plan's
// Step.kernel and Step.launch against (a plan naming a kernel of another family, or launching a
// fixed-shape kernel with another block or too little shared memory, is refused), and what the
// converter's selectors (select.h) pick from. Host C++ only. The rows live with their family:
// JP_CUDA_VARIANTS_<file> in kernels/<file>.h for every CUDA row of kernels/op_families.def;
// variants.cc gathers them, and KernelVariantId below names each row at compile time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/kernels.h"

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
  // What the runtime clears of the step's workspace before each launch (a memset node in the
  // graph), for kernels that count arrivals there: kZeroAll the whole workspace, kZeroCounters
  // only its last grid_x * grid_y * 4 bytes (the conv igemm's serial split-K: one arrival
  // counter a tile after the partial tiles, which each CTA writes whole before it counts; see
  // workspace_clear_range). kZeroNone (0): the workspace is garbage. The igemm's counters sit
  // right after the partials, so they are the workspace's last bytes only in a workspace of the
  // size the selection gives (launch_igemm); a plan with another size (edited by hand) stays in
  // bounds but may leave tiles unwritten.
  uint8_t zero_workspace = 0;
  uint8_t out_dtype = kAnyDType;  // see above (Cast: the destination type)
  // The kernel's blocks wait for each other's results (through the workspace): the runtime
  // launches it cooperatively, so every block is resident at once, and load refuses a grid
  // larger than the GPU holds at once.
  bool cooperative = false;
  // The kernel may be launched early (programmatic dependent launch, sm_90+): before its first
  // access to any step tensor or workspace it waits for the previous kernel on the stream to
  // finish (pdl_wait(), kernels/cuda/device_math.cuh; before it only weights, which no step
  // writes, may be read), and then lets the next kernel launch (pdl_trigger()). Every step
  // kernel does (the JP_STEP_KERNEL macros and each extern "C" kernel call both first thing;
  // the conv igemm loads its first weight tiles before the wait), so rows default to true;
  // cooperative ones are launched the plain way. On other GPUs both calls compile to nothing.
  bool early_launch = true;
  // Nonzero: the kernel runs only on GPUs of exactly this SM arch (Hopper's wgmma tiles: 90);
  // elsewhere its body is empty. Selectors pick it for such targets only; load refuses it on
  // any other GPU.
  uint8_t sm_only = 0;
};

constexpr uint8_t kZeroNone = 0, kZeroAll = 1, kZeroCounters = 2;

// The bytes [*offset, *offset + *count) of a workspace of `bytes` that the runtime clears before
// a launch of `v` with `grid` (count 0: none).
inline void workspace_clear_range(const KernelVariant& v, const uint32_t grid[3], uint64_t bytes,
                                  uint64_t* offset, uint64_t* count) {
  *offset = 0;
  *count = v.zero_workspace == kZeroNone ? 0 : bytes;
  if (v.zero_workspace == kZeroCounters) {
    const uint64_t counters = uint64_t(grid[0]) * grid[1] * 4;
    *count = counters < bytes ? counters : bytes;
    *offset = bytes - *count;
  }
}

// Null when no variant has that name.
const KernelVariant* find_kernel_variant(const char* name);
const KernelVariant* kernel_variants(size_t* count);

// The columns of a family's JP_CUDA_VARIANTS_<file>(X, F) rows, X(F, symbol, dtype,
// block_threads[, out_dtype[, shared_bytes[, zero_workspace[, cooperative[, early_launch[,
// sm_only]]]]]]):
// F is the family (passed through), symbol the extern "C" kernel name as a bare identifier (its
// string is #symbol), the rest KernelVariant's fields; dtypes are written kF32, kF16, kF64, kI8,
// kU8, kI16, kU16, kI32, kU32, kI64, kU64, kBool or kAny. The trailing columns, which most rows leave at KernelVariant's
// defaults (kAny, 0, kZeroNone, false, true, 0), may be left out. JP_CUDA_VARIANT_ROWS(X) lists every family's rows in op_families.def order.
#define JP_CUDA_VARIANT_ROWS_CUDA(Name, file, X) JP_CUDA_VARIANTS_##file(X, Name)
#define JP_CUDA_VARIANT_ROWS_CPU_ONLY(Name, file, X)

// Every variant by its symbol, for the selectors: KernelVariantId::jp_conv_direct_f16 names a row
// that exists (a misspelt one does not compile), and kernel_variant() returns it.
enum class KernelVariantId : uint16_t {
#define JP_CUDA_VARIANT_ID(F, symbol, ...) symbol,
#define JP_OP_FAMILY(Name, file, Params, Backends) \
  JP_CUDA_VARIANT_ROWS_##Backends(Name, file, JP_CUDA_VARIANT_ID)
#include "kernels/op_families.def"
#undef JP_OP_FAMILY
#undef JP_CUDA_VARIANT_ID
};

const KernelVariant& kernel_variant(KernelVariantId id);

}  // namespace jetplan::kernels::cuda
