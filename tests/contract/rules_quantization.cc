// Contract rules of the quantized families (schemas/plan.fbs QuantizeParams,
// DynamicQuantizeParams, QLinearMatMulParams, QLinearConvParams): 8-bit integer operands with
// float32 scales and zero points of their operand's dtype.
#include "tests/contract/step_contract.h"

namespace jetplan::converter::testing::contract {
namespace {

// Quantize: x, scale, [zero_point]; Dequantize: q, scale, [zero_point]; y of x's shape, or for
// a Quantize of the image form y [N, H, W, C'] of x [N, H, W, C] or [N, C, H, W], C' >= C.
void quantize_shape(StepContract& c) {
  const fb::QuantizeParams* p = c.step->params_as_QuantizeParams();
  c.expect(p != nullptr && c.in.size() >= 2, "quantize operands");
  if (p == nullptr || c.in.size() < 2) return;
  if (p->layout() == fb::QuantizeLayout::Same) {
    c.expect(c.in[0] == c.y, "quantize shape");
    return;
  }
  const Shape& x = c.in[0];
  const bool nchw = p->layout() == fb::QuantizeLayout::NchwToNhwcPadded;
  c.expect(c.step->op() == fb::OpFamily::Quantize && x.size() == 4 && c.y.size() == 4 &&
               c.y[0] == x[0] && c.y[1] == x[nchw ? 2 : 1] && c.y[2] == x[nchw ? 3 : 2] &&
               c.y[3] >= x[nchw ? 1 : 3],
           "padded quantize shape");
}

// QLinearMatMul and QLinearConv: inputs x/a, its scale and zero point, w/b, its scale and zero
// point, y's scale and zero point (ONNX order), [QLinearConv: int32 bias]; x, w and y are 8-bit
// integers, each zero point of its operand's dtype, the scales float32. False when the step is
// too malformed for its family's own rule to read (reported).
bool qlinear_operands(StepContract& c, bool has_params, size_t n_in) {
  if (!has_params) {
    c.bad("step ", c.name, " lacks its QLinear params");
    return false;
  }
  if (!c.input_count_is(n_in)) return false;
  const auto byte = [](fb::DType d) { return d == fb::DType::Int8 || d == fb::DType::UInt8; };
  c.expect(byte(c.in_dtype(0)) && byte(c.in_dtype(3)) && byte(c.dtype_of(0)),
           "qlinear operands and output are int8 or uint8");
  c.expect(c.in_dtype(2) == c.in_dtype(0) && c.in_dtype(5) == c.in_dtype(3) &&
               c.in_dtype(7) == c.dtype_of(0),
           "qlinear zero points have their operand's dtype");
  c.expect(c.in_dtype(1) == fb::DType::Float32 && c.in_dtype(4) == fb::DType::Float32 &&
               c.in_dtype(6) == fb::DType::Float32,
           "qlinear scales are float32");
  return true;
}

}  // namespace

void contract_quantize(StepContract& c) { quantize_shape(c); }

void contract_dequantize(StepContract& c) { quantize_shape(c); }

// Input x (float32); outputs y (uint8, x's shape), y_scale (float32) and y_zero_point (uint8),
// one element each.
void contract_dynamic_quantize(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  if (!c.step->params_as_DynamicQuantizeParams())
    return c.bad("step ", c.name, " lacks DynamicQuantizeParams");
  if (c.in.size() != 1 || c.step->outputs()->size() != 3)
    return c.bad("step ", c.name, " has ", c.in.size(), " inputs and ",
                 c.step->outputs()->size(), " outputs (1 and 3)");
  const fb::Tensor* scale = c.tensor(c.step->outputs()->Get(1));
  const fb::Tensor* zp = c.tensor(c.step->outputs()->Get(2));
  c.expect(c.y == c.in[0] && c.dtype_of(0) == fb::DType::UInt8, "y is x's shape, uint8");
  c.expect(scale->dtype() == fb::DType::Float32 && scale->size_bytes() == 4, "y_scale");
  c.expect(zp->dtype() == fb::DType::UInt8 && zp->size_bytes() == 1, "y_zero_point");
}

// a [.., M, K] x b [.., K, N]: y [batch, M, N], the batch dims broadcast.
void contract_qlinear_matmul(StepContract& c) {
  if (!qlinear_operands(c, c.step->params_as_QLinearMatMulParams() != nullptr, 8)) return;
  const Shape &a = c.in[0], &b = c.in[3];
  const Shape& y = c.y;
  if (a.size() < 2 || b.size() < 2 || y.size() < 2)
    return c.bad("step ", c.name, ": qlinear_matmul operands need rank >= 2");
  c.expect(b[b.size() - 2] == a.back(), "qlinear_matmul inner dims " + str(a) + " x " + str(b));
  Shape batch;
  const bool ok = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), &batch);
  batch.push_back(a[a.size() - 2]);
  batch.push_back(b.back());
  c.expect(ok && y == batch, "qlinear_matmul output " + str(y));
}

// x [N, C, *in], w [Cout, C / groups, *kernel]; y the window's output, as Conv's.
void contract_qlinear_conv(StepContract& c) {
  const auto* pc = c.step->params_as_QLinearConvParams();
  if (!qlinear_operands(c, pc != nullptr, pc && pc->has_bias() ? 9 : 8)) return;
  const Shape &a = c.in[0], &b = c.in[3];
  const Shape& y = c.y;
  if (a.size() < 3 || a.size() > 5 || b.size() != a.size())
    return c.bad("step ", c.name, ": qlinear_conv ranks");
  const size_t sr = a.size() - 2;
  const Shape k = vec(pc->kernel()), st = vec(pc->stride()), dil = vec(pc->dilation());
  const Shape pb = vec(pc->pad_begin()), pe = vec(pc->pad_end());
  if (k.size() != sr || st.size() != sr || dil.size() != sr || pb.size() != sr || pe.size() != sr)
    return c.bad("step ", c.name, ": qlinear_conv array sizes");
  c.expect(k == Shape(b.begin() + 2, b.end()), "kernel != weight dims");
  c.expect(pc->groups() >= 1 && b[1] * pc->groups() == a[1] && b[0] % pc->groups() == 0,
           "qlinear_conv channels");
  c.expect(y == window_out(a, b[0], k, st, dil, pb, pe), "qlinear_conv output " + str(y));
  if (pc->has_bias())
    c.expect(c.in[8] == Shape{b[0]} && c.in_dtype(8) == fb::DType::Int32, "qlinear_conv bias");
}

}  // namespace jetplan::converter::testing::contract
