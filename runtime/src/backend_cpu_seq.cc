// CPU run functions of the seq families: each pulls its tensors from the pointer table in the
// order prepare_seq.cc verified and calls the reference kernel. No checks here.
#include "kernels/kernels.h"
#include "runtime/src/op_families.h"

namespace jetplan::rt {
namespace {

const void* in(const PreparedStep& s, void* const* tensors, uint32_t i) {
  return tensors[s.inputs->Get(i)];
}

const float* in_f32(const PreparedStep& s, void* const* tensors, uint32_t i) {
  return static_cast<const float*>(in(s, tensors, i));
}

void* out(const PreparedStep& s, void* const* tensors, uint32_t i) {
  return tensors[s.outputs->Get(i)];
}

}  // namespace

void run_rnn_cpu(const PreparedStep& s, void* const* tensors, void* workspace) {
  const kernels::RnnParams& p = s.params.rnn;
  // Optional tensors follow X, W, R (and Y, Y_h, Y_c) in ONNX order, present ones only.
  uint32_t next = 3;
  const float* b = p.has_bias ? in_f32(s, tensors, next++) : nullptr;
  const int32_t* lens =
      p.has_sequence_lens ? static_cast<const int32_t*>(in(s, tensors, next++)) : nullptr;
  const float* initial_h = p.has_initial_h ? in_f32(s, tensors, next++) : nullptr;
  const float* initial_c = p.has_initial_c ? in_f32(s, tensors, next++) : nullptr;
  const float* peepholes = p.has_peepholes ? in_f32(s, tensors, next++) : nullptr;
  next = 0;
  float* y = p.has_y ? static_cast<float*>(out(s, tensors, next++)) : nullptr;
  float* y_h = p.has_y_h ? static_cast<float*>(out(s, tensors, next++)) : nullptr;
  float* y_c = p.has_y_c ? static_cast<float*>(out(s, tensors, next++)) : nullptr;
  kernels::cpu::rnn(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1), in_f32(s, tensors, 2), b, lens,
                    initial_h, initial_c, peepholes, y, y_h, y_c, workspace);
}

void run_quantize_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::QuantizeLinearParams& p = s.params.quantize;
  kernels::cpu::quantize_linear(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                                p.has_zero_point ? in(s, tensors, 2) : nullptr, out(s, tensors, 0));
}

void run_dequantize_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::QuantizeLinearParams& p = s.params.quantize;
  kernels::cpu::dequantize_linear(p, in(s, tensors, 0), in_f32(s, tensors, 1),
                                  p.has_zero_point ? in(s, tensors, 2) : nullptr,
                                  static_cast<float*>(out(s, tensors, 0)));
}

void run_qlinear_matmul_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::qlinear_matmul(s.params.qlinear_matmul, in(s, tensors, 0), in_f32(s, tensors, 1),
                               in(s, tensors, 2), in(s, tensors, 3), in_f32(s, tensors, 4),
                               in(s, tensors, 5), in_f32(s, tensors, 6), in(s, tensors, 7),
                               out(s, tensors, 0));
}

void run_qlinear_conv_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::QLinearConvParams& p = s.params.qlinear_conv;
  const int32_t* bias = p.conv.has_bias ? static_cast<const int32_t*>(in(s, tensors, 8)) : nullptr;
  kernels::cpu::qlinear_conv(p, in(s, tensors, 0), in_f32(s, tensors, 1), in(s, tensors, 2),
                             in(s, tensors, 3), in_f32(s, tensors, 4), in(s, tensors, 5),
                             in_f32(s, tensors, 6), in(s, tensors, 7), bias, out(s, tensors, 0));
}

void run_dynamic_quantize_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::dynamic_quantize_linear(s.params.dynamic_quantize, in_f32(s, tensors, 0),
                                        static_cast<uint8_t*>(out(s, tensors, 0)),
                                        static_cast<float*>(out(s, tensors, 1)),
                                        static_cast<uint8_t*>(out(s, tensors, 2)));
}

}  // namespace jetplan::rt
