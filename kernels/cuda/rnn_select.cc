#include <algorithm>

#include "kernels/cuda/rnn_layout.h"
#include "kernels/cuda/select.h"
#include "kernels/rnn.h"

namespace jetplan::kernels::cuda {

namespace {

// The persistent kernel: one block per SM at most (every block must be resident), the D H
// hidden units split evenly over them, the blocks' weight rows cached in shared memory when
// they fit. False when the target's SM count is unknown or the staged state does not fit.
bool select_rnn_persist(const RnnParams& p, bool f16, const TargetInfo& target, uint64_t limit,
                        LaunchChoice* out) {
  const uint64_t units =
      static_cast<uint64_t>(rnn_num_directions(p)) * static_cast<uint64_t>(p.hidden_size);
  if (target.sm_count == 0 || units == 0 || p.batch < 1) return false;
  const uint64_t eb = f16 ? 2 : 4;
  uint32_t grid = static_cast<uint32_t>(std::min<uint64_t>(target.sm_count, units));
  const RnnPersistLayout first = rnn_persist_layout(p, grid, eb);
  // No block without units: as many blocks as slices of `units` each.
  grid = ceil_div_u32(units, static_cast<uint64_t>(first.units));
  const RnnPersistLayout l = rnn_persist_layout(p, grid, eb);
  // Steps are tagged with 32-bit counts (rnn.cu).
  if (l.state_bytes > limit || p.seq_length >= (int64_t{1} << 31) - 2) return false;
  out->variant =
      &kernel_variant(f16 ? VariantId::jp_rnn_persist_f16 : VariantId::jp_rnn_persist_f32);
  out->block[0] = 256;
  out->grid[0] = grid;
  out->shared_bytes =
      static_cast<uint32_t>(l.cached_bytes <= limit ? l.cached_bytes : l.state_bytes);
  out->workspace_bytes = l.workspace_bytes;
  return true;
}

}  // namespace

// Rnn (RNN, LSTM, GRU, every option of RnnParams): Float16 storage or Float32.
// - Where the target's SM count is known and the batch's state fits in shared memory, the
//   persistent kernel: one cooperative grid steps through time together, each block owning a
//   slice of the hidden units (rnn_layout.h).
// - Otherwise one 256-thread block per (direction, batch entry) with the state in dynamic shared
//   memory, so hidden and input sizes are bounded by the target's shared memory per block:
//   (3 H + 2 G H + I) * 4 bytes (G gates).
bool select_rnn(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                std::string* why) {
  const auto* p = static_cast<const RnnParams*>(step.params);
  bool f16 = false;
  if (!float_storage(step, "Rnn", &f16, why)) return false;
  const uint64_t G = static_cast<uint64_t>(rnn_gate_count(p->cell));
  const uint64_t H = static_cast<uint64_t>(p->hidden_size);
  const uint64_t I = static_cast<uint64_t>(p->input_size);
  const uint64_t shared = (3 * H + 2 * G * H + I) * sizeof(float);
  const uint64_t limit = target.max_shared_per_block != 0 ? target.max_shared_per_block : 48 * 1024;
  // The runtime's prepare_rnn asks every Rnn step for the CPU twin's rnn_workspace_bytes
  // (10 H doubles), so the plan carries at least that much.
  const uint64_t twin_workspace = 10 * H * sizeof(double);
  if (G != 0 && H != 0 && I != 0 && select_rnn_persist(*p, f16, target, limit, out)) {
    out->workspace_bytes = std::max(out->workspace_bytes, twin_workspace);
    return true;
  }
  if (G == 0 || H == 0 || I == 0 || shared > limit) {
    *why =
        "the CUDA Rnn kernel keeps a recurrence's state in shared memory, and this hidden and "
        "input size need more than the target has per block";
    return false;
  }
  out->variant = &kernel_variant(f16 ? VariantId::jp_rnn_f16 : VariantId::jp_rnn_f32);
  const uint64_t pairs =
      static_cast<uint64_t>(rnn_num_directions(*p)) * static_cast<uint64_t>(p->batch);
  out->block[0] = 256;
  out->grid[0] = pairs == 0 ? 1 : ceil_div_u32(pairs, 1);  // saturates
  if (out->grid[0] > 65535u) out->grid[0] = 65535u;        // the kernel strides over the rest
  out->shared_bytes = static_cast<uint32_t>(shared);
  out->workspace_bytes = twin_workspace;  // the kernel needs none
  return true;
}

}  // namespace jetplan::kernels::cuda
