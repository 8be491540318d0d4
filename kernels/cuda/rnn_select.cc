#include "kernels/cuda/select.h"
#include "kernels/params_seq.h"

namespace jetplan::kernels::cuda {

// Rnn (RNN, LSTM, GRU, every option of RnnParams): Float16 storage or Float32, one 256-thread
// block per (direction, batch entry) with the state in dynamic shared memory, so hidden and
// input sizes are bounded by the target's shared memory per block:
// (3 H + 2 G H + I) * 4 bytes (G gates).
bool select_rnn(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                std::string* why) {
  const auto* p = static_cast<const RnnParams*>(step.params);
  const bool f16 = step.dtype == DType::kFloat16;
  if (!f16 && step.dtype != DType::kFloat32) {
    *why = "the CUDA Rnn kernels take Float16 or Float32";
    return false;
  }
  const uint64_t G = static_cast<uint64_t>(rnn_gate_count(p->cell));
  const uint64_t H = static_cast<uint64_t>(p->hidden_size);
  const uint64_t I = static_cast<uint64_t>(p->input_size);
  const uint64_t shared = (3 * H + 2 * G * H + I) * sizeof(float);
  const uint64_t limit = target.max_shared_per_block != 0 ? target.max_shared_per_block : 48 * 1024;
  if (G == 0 || H == 0 || I == 0 || shared > limit) {
    *why = "the CUDA Rnn kernel keeps a recurrence's state in shared memory, and this hidden and "
           "input size need more than the target has per block";
    return false;
  }
  out->variant = find_kernel_variant(f16 ? "jp_rnn_f16" : "jp_rnn_f32");
  const uint64_t pairs =
      static_cast<uint64_t>(rnn_num_directions(*p)) * static_cast<uint64_t>(p->batch);
  out->block[0] = 256;
  out->grid[0] = pairs == 0 ? 1 : ceil_div_u32(pairs, 1);  // saturates
  if (out->grid[0] > 65535u) out->grid[0] = 65535u;  // the kernel strides over the rest
  out->shared_bytes = static_cast<uint32_t>(shared);
  // The kernel needs none; the runtime's prepare_rnn asks every Rnn step for the CPU twin's
  // rnn_workspace_bytes (10 H doubles), so the plan carries that much.
  out->workspace_bytes = 10 * H * sizeof(double);
  return true;
}

}  // namespace jetplan::kernels::cuda
