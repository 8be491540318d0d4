#!/usr/bin/env python3
"""End-to-end tests of the quantized ops, models built with onnx.helper: QuantizeLinear and
DequantizeLinear per axis, QLinearMatMul, QLinearConv, MatMulInteger and ConvInteger. Each model
is converted with jetplan-convert and run with jetplan-run (--save-outputs), and each output is
compared with a numpy reimplementation of the ONNX equations: quantized and integer outputs must
be equal, float outputs within 1e-5 + 1e-4 * |want|.

Usage: quantized_models.py --convert PATH --run PATH --workdir DIR [--only CASE,...]
Exits 1 when a case failed.
"""

import os
import sys

import numpy as np
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import ModelCase, onnx_model, run_cases, tool_args, value_info  # noqa: E402

OPSET = 14


# ------------------------------------------------------------------------- numpy references

def saturate(v, dtype):
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)


def quantize_ref(x, scale, zp, qtype):
    # The quotient is rounded to float32 first, then half to even (ONNX's reference, ORT).
    q = np.rint((x.astype(np.float32) / scale.astype(np.float32)).astype(np.float64))
    return saturate(q + zp.astype(np.float64), qtype)


def requantize(acc, multiplier, zp, qtype):
    acc = ((acc.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.float64)  # int32 wrap
    return saturate(np.rint(acc * multiplier) + zp, qtype)


def qlinear_matmul_ref(a, a_s, a_zp, b, b_s, b_zp, y_s, y_zp):
    """a [.., M, K], b [.., K, N]; a_s/a_zp per tensor or per row, b_s/b_zp per tensor or
    column; y per tensor."""
    a_s = np.asarray(a_s, np.float64).reshape(-1, 1)
    a_zp = np.asarray(a_zp, np.int64).reshape(-1, 1)
    b_s = np.asarray(b_s, np.float64).reshape(1, -1)
    b_zp = np.asarray(b_zp, np.int64).reshape(1, -1)
    acc = np.matmul(a.astype(np.int64) - a_zp, b.astype(np.int64) - b_zp)
    mult = a_s * b_s / np.float64(np.float32(y_s))
    return requantize(acc, mult, np.int64(y_zp), y_zp.dtype)


def conv_accumulate(x, x_zp, w, w_zp, strides, pads, dilations, group):
    """The int64 sums of a 2-D integer convolution, NCHW: sum (x - x_zp) * (w - w_zp[oc]);
    padding contributes 0 (it is x_zp in the quantized domain)."""
    N, C, Hh, Ww = x.shape
    M, Cg, KH, KW = w.shape
    xs = np.zeros((N, C, Hh + pads[0] + pads[2], Ww + pads[1] + pads[3]), np.int64)
    xs[:, :, pads[0]:pads[0] + Hh, pads[1]:pads[1] + Ww] = x.astype(np.int64) - int(x_zp)
    OH = (xs.shape[2] - dilations[0] * (KH - 1) - 1) // strides[0] + 1
    OW = (xs.shape[3] - dilations[1] * (KW - 1) - 1) // strides[1] + 1
    wz = w.astype(np.int64) - np.asarray(w_zp, np.int64).reshape(-1, 1, 1, 1)
    acc = np.zeros((N, M, OH, OW), np.int64)
    per_group = M // group
    for m in range(M):
        g0 = (m // per_group) * Cg
        for oy in range(OH):
            for ox in range(OW):
                ys, xs0 = oy * strides[0], ox * strides[1]
                patch = xs[:, g0:g0 + Cg, ys:ys + dilations[0] * (KH - 1) + 1:dilations[0],
                           xs0:xs0 + dilations[1] * (KW - 1) + 1:dilations[1]]
                acc[:, m, oy, ox] = (patch * wz[m]).sum(axis=(1, 2, 3))
    return acc


def qlinear_conv_ref(x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp, bias, strides, pads, dilations,
                     group):
    acc = conv_accumulate(x, x_zp, w, w_zp, strides, pads, dilations, group)
    if bias is not None:
        acc += bias.astype(np.int64).reshape(1, -1, 1, 1)
    M = w.shape[0]
    ws = np.broadcast_to(np.asarray(w_s, np.float64).reshape(-1), (M,)).reshape(1, -1, 1, 1)
    mult = np.float64(np.float32(x_s)) * ws / np.float64(np.float32(y_s))
    return requantize(acc, mult, np.int64(y_zp), y_zp.dtype)


# ------------------------------------------------------------------------------ model cases

def quantized_case(name, nodes, feeds, expected, initializers, opset=OPSET):
    """The case of one graph of `nodes`: `feeds` (name -> array) its inputs, `initializers`
    (name -> array) its constants, `expected` (name -> array) its outputs."""
    model = onnx_model(name, nodes, [value_info(k, v) for k, v in feeds.items()],
                       [value_info(k, v) for k, v in expected.items()],
                       [numpy_helper.from_array(v, k) for k, v in initializers.items()], opset)
    return ModelCase(name, model, feeds, expected)


def onnx_cases():
    rng = np.random.default_rng(2024)
    cases = []

    # Q/DQ per axis: x -> int8 per channel of axis 1 -> float again.
    x = (rng.uniform(-1, 1, size=(2, 3, 4)) * 4.0).astype(np.float32)
    scale = np.array([0.02, 0.05, 0.1], np.float32)
    zp = np.array([-5, 0, 7], np.int8)
    nodes = [helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"], name="q", axis=1),
             helper.make_node("DequantizeLinear", ["q", "scale", "zp"], ["y"], name="dq",
                              axis=1)]
    q = quantize_ref(x, scale.reshape(1, 3, 1), zp.reshape(1, 3, 1), np.int8)
    y = ((q.astype(np.float32) - zp.reshape(1, 3, 1).astype(np.float32))
         * scale.reshape(1, 3, 1)).astype(np.float32)
    cases.append(quantized_case("quantize_dequantize_per_axis", nodes, {"x": x},
                                {"q": q, "y": y}, {"scale": scale, "zp": zp}))

    # QLinearMatMul, int8 A [2, 3, 5] with run-time scalars, B [5, 4] int8 per column.
    a = rng.integers(-128, 128, size=(2, 3, 5)).astype(np.int8)
    b = rng.integers(-128, 128, size=(5, 4)).astype(np.int8)
    a_s, a_zp = np.array(0.03, np.float32), np.array(3, np.int8)
    b_s = np.array([0.01, 0.02, 0.005, 0.04], np.float32)
    b_zp = np.array([0, -2, 1, 5], np.int8)
    y_s, y_zp = np.array(0.2, np.float32), np.array(-10, np.int8)
    nodes = [helper.make_node("QLinearMatMul", ["a", "a_s", "a_zp", "b", "b_s", "b_zp", "y_s",
                                                "y_zp"], ["y"], name="qmm")]
    y = qlinear_matmul_ref(a, a_s, a_zp, b, b_s, b_zp, y_s, y_zp)
    cases.append(quantized_case("qlinear_matmul_int8_per_column", nodes,
                                {"a": a, "a_s": a_s, "a_zp": a_zp}, {"y": y},
                                {"b": b, "b_s": b_s, "b_zp": b_zp, "y_s": y_s, "y_zp": y_zp},
                                opset=10))

    # QLinearConv: grouped, dilated, SAME_UPPER, per-channel int8 weights and an int32 bias.
    x = rng.integers(0, 256, size=(1, 4, 7, 6)).astype(np.uint8)
    w = rng.integers(-128, 128, size=(6, 2, 3, 3)).astype(np.int8)
    x_s, x_zp = np.array(0.04, np.float32), np.array(130, np.uint8)
    w_s = rng.uniform(0.002, 0.02, size=6).astype(np.float32)
    w_zp = np.zeros(6, np.int8)
    y_s, y_zp = np.array(0.3, np.float32), np.array(128, np.uint8)
    bias = rng.integers(-5000, 5000, size=6).astype(np.int32)
    node = helper.make_node("QLinearConv", ["x", "x_s", "x_zp", "w", "w_s", "w_zp", "y_s", "y_zp",
                                            "bias"], ["y"], name="qconv", group=2,
                            dilations=[2, 1], strides=[1, 2], auto_pad="SAME_UPPER")
    # SAME_UPPER with dilation 2 on 7 rows: span 5 -> pad 4 (2, 2); stride 2 on 6 columns:
    # out 3 -> needed 7 -> pad 1 (0, 1).
    y = qlinear_conv_ref(x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp, bias, strides=(1, 2),
                         pads=(2, 0, 2, 1), dilations=(2, 1), group=2)
    cases.append(quantized_case("qlinear_conv_grouped_per_channel", [node], {"x": x}, {"y": y},
                                {"x_s": x_s, "x_zp": x_zp, "w": w, "w_s": w_s, "w_zp": w_zp,
                                 "y_s": y_s, "y_zp": y_zp, "bias": bias}, opset=10))

    # MatMulInteger with run-time per-row zero points of A and a constant B; ConvInteger with
    # per-channel weight zero points and padding (which contributes nothing: it is x_zp).
    a = rng.integers(0, 256, size=(3, 6)).astype(np.uint8)
    a_zp = rng.integers(0, 256, size=(3,)).astype(np.uint8)
    b = rng.integers(-128, 128, size=(6, 2)).astype(np.int8)
    b_zp = np.array(-7, np.int8)
    y = ((a.astype(np.int32) - a_zp.reshape(3, 1))
         @ (b.astype(np.int32) - int(b_zp))).astype(np.int32)
    node = helper.make_node("MatMulInteger", ["a", "b", "a_zp", "b_zp"], ["y"], name="mmi")
    cases.append(quantized_case("matmul_integer_per_row", [node], {"a": a, "a_zp": a_zp},
                                {"y": y}, {"b": b, "b_zp": b_zp}, opset=10))
    x = rng.integers(-128, 128, size=(2, 3, 5, 5)).astype(np.int8)
    w = rng.integers(0, 256, size=(4, 3, 3, 3)).astype(np.uint8)
    x_zp, w_zp = np.array(-20, np.int8), rng.integers(0, 256, size=(4,)).astype(np.uint8)
    y = conv_accumulate(x, x_zp, w, w_zp, strides=(2, 1), pads=(1, 1, 1, 1), dilations=(1, 1),
                        group=1).astype(np.int32)
    node = helper.make_node("ConvInteger", ["x", "w", "x_zp", "w_zp"], ["y"], name="ci",
                            strides=[2, 1], pads=[1, 1, 1, 1])
    cases.append(quantized_case("conv_integer_per_channel", [node], {"x": x}, {"y": y},
                                {"w": w, "x_zp": x_zp, "w_zp": w_zp}, opset=10))
    return cases


def main():
    return run_cases("quantized models", tool_args(__doc__), onnx_cases())


if __name__ == "__main__":
    sys.exit(main())
