// The memory plan of the persistent (whole-grid, cooperative) Rnn kernel, jp_rnn_persist_* in
// kernels/cuda/rnn.cu: one function for the kernel (device) and its selector (host), so both
// size shared memory and the workspace alike.
//
// The grid splits the D * H hidden units of all directions into slices of U = ceil(D H / grid)
// consecutive units; a block owns its units' G gate rows of W and R, and their cell state.
// Shared memory, floats then elements of T (16-byte aligned):
//   c [N U], own h [N U], gx [N G U], gh [N G U], hs [D N H] (h_s staged), xs [D N I] (x_s),
//   the block's biases Wb and Rb [2, G U], the batch's sequence lengths [N] (int32),
//   then, when the launch gives enough (`cached_bytes`), the block's W rows [G U, I] and R rows
//   [G U, H] as T: otherwise those rows are read from global memory every step.
// Workspace (zeroed by the runtime before each launch: no tag is valid yet), tagged 64-bit
// words (a float and the step it belongs to, see rnn.cu): h [2, D, N, H] (double-buffered: h_s
// in half s % 2) and, for GRU without linear_before_reset, rh [2, D, N, H] (r (.) h_s).
#pragma once

#include <cstdint>

#include "kernels/rnn.h"

#ifdef __CUDACC__
#define JP_RNN_HD __host__ __device__
#else
#define JP_RNN_HD
#endif

namespace jetplan::kernels::cuda {

struct RnnPersistLayout {
  int64_t units = 0;            // U, per block
  uint64_t state_bytes = 0;     // c, gx, gh, hs, xs: the least a launch must give
  uint64_t cached_bytes = 0;    // state plus the weight rows: what caches them
  uint64_t h_offset = 0;        // workspace byte offsets
  uint64_t rh_offset = 0;
  uint64_t workspace_bytes = 0;
};

JP_RNN_HD inline RnnPersistLayout rnn_persist_layout(const RnnParams& p, uint32_t grid,
                                                     uint64_t element_bytes) {
  RnnPersistLayout l;
  const int64_t D = p.direction == RnnDirection::kBidirectional ? 2 : 1;
  const int64_t G = p.cell == RnnCell::kRnn ? 1 : p.cell == RnnCell::kLstm ? 4 : 3;
  const int64_t N = p.batch, H = p.hidden_size, I = p.input_size;
  const int64_t g = grid == 0 ? 1 : static_cast<int64_t>(grid);
  l.units = (D * H + g - 1) / g;
  const uint64_t U = static_cast<uint64_t>(l.units);
  const uint64_t floats = static_cast<uint64_t>(N) * U * (2 + 2 * static_cast<uint64_t>(G)) +
                          static_cast<uint64_t>(D * N) * static_cast<uint64_t>(H + I) +
                          2 * static_cast<uint64_t>(G) * U + static_cast<uint64_t>(N);
  l.state_bytes = (floats * 4 + 15) / 16 * 16;
  l.cached_bytes = l.state_bytes + static_cast<uint64_t>(G) * U *
                                       static_cast<uint64_t>(I + H) * element_bytes;
  const uint64_t h_bytes = static_cast<uint64_t>(D * N * H) * 8;
  l.h_offset = 0;
  l.rh_offset = 2 * h_bytes;
  const bool gru_reset = p.cell == RnnCell::kGru && !p.linear_before_reset;
  l.workspace_bytes = l.rh_offset + (gru_reset ? 2 * h_bytes : 0);
  return l;
}

}  // namespace jetplan::kernels::cuda
