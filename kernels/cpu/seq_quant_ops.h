// CPU reference kernels for recurrent and quantized ops, under the rules of cpu_kernels.h: plain
// loops, no allocation, no failure, deterministic. Pointers are borrowed for the call; optional
// ones may be null when the matching has_* flag is false. Outputs never alias inputs. Quantized
// tensors and zero points are passed as void* and read as params' DType (kInt8 or kUInt8).
#pragma once

#include <cstdint>

#include "kernels/params_quant.h"
#include "kernels/params_seq.h"

namespace jetplan::kernels::cpu {

// ---------------------------------------------------------------------------------- recurrent

// The activation of params_seq.h, in double (the recurrent kernel's working precision).
double apply_rnn_activation(const RnnActivation& act, double x);

// Bytes of scratch rnn() needs: the state of one batch entry and its gate pre-activations.
int64_t rnn_workspace_bytes(const RnnParams& p);

// RNN, LSTM or GRU per RnnParams; arguments in ONNX's input order, then the outputs. initial_c,
// peepholes and y_c are LSTM only (pass null otherwise). Accumulates and keeps the state in
// double; outputs are rounded to float once. workspace: rnn_workspace_bytes(p) bytes, aligned
// to 8, owned by the caller; its contents on entry do not matter and on return are garbage.
void rnn(const RnnParams& p, const float* x, const float* w, const float* r, const float* b,
         const int32_t* sequence_lens, const float* initial_h, const float* initial_c,
         const float* peepholes, float* y, float* y_h, float* y_c, void* workspace);

// -------------------------------------------------------------------------------- quantized

// Rounds half to even whatever the floating-point rounding mode; NaN gives 0.
double round_half_even(double v);

// saturate(round_half_even(v) + zero_point) into qtype's range (kInt8 or kUInt8).
int32_t quantize_value(double v, int32_t zero_point, DType qtype);

// x float32 -> y qtype; zero_point may be null when !has_zero_point.
void quantize_linear(const QuantizeLinearParams& p, const float* x, const float* scale,
                     const void* zero_point, void* y);
// x qtype -> y float32; zero_point may be null when !has_zero_point.
void dequantize_linear(const QuantizeLinearParams& p, const void* x, const float* scale,
                       const void* zero_point, float* y);
// y: count bytes; y_scale and y_zero_point: one element each.
void dynamic_quantize_linear(const DynamicQuantizeParams& p, const float* x, uint8_t* y,
                             float* y_scale, uint8_t* y_zero_point);

// Arguments in ONNX's input order, then y. Every scale and zero point is required.
void qlinear_matmul(const QLinearMatMulParams& p, const void* a, const float* a_scale,
                    const void* a_zero_point, const void* b, const float* b_scale,
                    const void* b_zero_point, const float* y_scale, const void* y_zero_point,
                    void* y);

// Arguments in ONNX's input order (bias last, null when !p.conv.has_bias), then y.
void qlinear_conv(const QLinearConvParams& p, const void* x, const float* x_scale,
                  const void* x_zero_point, const void* w, const float* w_scale,
                  const void* w_zero_point, const float* y_scale, const void* y_zero_point,
                  const int32_t* bias, void* y);

}  // namespace jetplan::kernels::cpu
