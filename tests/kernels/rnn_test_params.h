// The RnnParams the Rnn tests start from, shared by the CPU twin's tests (tests/kernels/cpu/
// test_rnn.cc) and the CUDA kernels' (tests/kernels/cuda/test_rnn.cc).
#pragma once

#include <cstdint>

#include "kernels/rnn.h"

namespace jetplan::kernels {

// One cell and direction over [S, N, I] inputs with hidden size H, sequence-major, every
// activation function the cell's ONNX default (alpha and beta included), every optional input
// and output off: each test switches on what it feeds and reads.
inline RnnParams rnn_test_params(RnnCell cell, RnnDirection dir, int64_t S, int64_t N, int64_t I,
                                 int64_t H) {
  RnnParams p;
  p.cell = cell;
  p.direction = dir;
  p.seq_length = S, p.batch = N, p.input_size = I, p.hidden_size = H;
  for (auto& per_dir : p.activations)
    for (int k = 0; k < kMaxRnnActivations; ++k)
      per_dir[k] = rnn_activation_defaults(rnn_default_activation(cell, k));
  return p;
}

}  // namespace jetplan::kernels
