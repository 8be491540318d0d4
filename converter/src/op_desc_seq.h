// Attributes of the seq op families (see op_desc_groups.h): the recurrent cells (Rnn) and the
// quantized ops (Quantize, Dequantize, QLinearMatMul, QLinearConv). Set by
// support_group_seq.cc, written by serialize_group_seq.cc. QLinearConv's window lives in
// OpDesc's common conv fields (kernel, stride, dilation, pads, groups).
#pragma once

#include <cstdint>
#include <vector>

#include "jetplan/plan_generated.h"

namespace jetplan::converter {

struct SeqDesc {
  // Rnn (ONNX RNN, LSTM, GRU). The has_* flags say which optional inputs and outputs the step
  // has (omitted ones are absent from its lists).
  fb::RnnCell cell = fb::RnnCell::Lstm;
  fb::RnnDirection direction = fb::RnnDirection::Forward;
  bool batch_major = false;  // ONNX layout = 1
  int64_t hidden_size = 0;
  std::vector<fb::RnnActivation> activations;  // per direction, the cell's functions
  bool has_clip = false;
  float clip = 0.f;
  bool input_forget = false;
  bool linear_before_reset = false;
  bool has_bias = false;  // Rnn: B; QLinearConv: the int32 bias
  bool has_sequence_lens = false;
  bool has_initial_h = false;
  bool has_initial_c = false;
  bool has_peepholes = false;
  bool has_y = false;
  bool has_y_h = false;
  bool has_y_c = false;

  // Quantize, Dequantize: axis of x (non-negative) when per_axis.
  int32_t axis = 1;
  bool per_axis = false;
  bool has_zero_point = false;

  // QLinearMatMul with a 1-D operand: expand_seq views it as a matrix ([1, K] / [K, 1]) and
  // the step's [.., M, N] output as ONNX's.
  bool a_vector = false;
  bool b_vector = false;

  // MatMulInteger and ConvInteger resolve to a placeholder (family Dequantize) that expand_seq
  // replaces by Dequantize (or folded constants), a float32 Gemm or Conv, and a Cast to int32.
  enum class Integer : uint8_t { kNone, kMatMul, kConv };
  Integer integer = Integer::kNone;
};

}  // namespace jetplan::converter
