// Prepare and CPU run functions of the seq families (rows in families_seq.inc): the recurrent
// cells (RNN, LSTM, GRU) and the quantized ops (QuantizeLinear, DequantizeLinear,
// QLinearMatMul, QLinearConv, DynamicQuantizeLinear). Prepare is in prepare_seq.cc, run in backend_cpu_seq.cc.
#pragma once

#include "runtime/src/plan.h"

namespace jetplan::rt {

Status prepare_rnn(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_quantize(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_dequantize(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_qlinear_matmul(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_qlinear_conv(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_dynamic_quantize(const jp_plan&, const fb::Step&, PreparedStep*);

void run_rnn_cpu(const PreparedStep&, void* const*, void*);
void run_quantize_cpu(const PreparedStep&, void* const*, void*);
void run_dequantize_cpu(const PreparedStep&, void* const*, void*);
void run_qlinear_matmul_cpu(const PreparedStep&, void* const*, void*);
void run_qlinear_conv_cpu(const PreparedStep&, void* const*, void*);
void run_dynamic_quantize_cpu(const PreparedStep&, void* const*, void*);

}  // namespace jetplan::rt
