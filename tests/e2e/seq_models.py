#!/usr/bin/env python3
"""End-to-end tests of the recurrent and quantized ops: models exported from torch (a 2-layer
LSTM, a GRU and a bidirectional GRU, random weights) and models built with onnx.helper for the
ONNX variants torch does not export (layout, reverse and bidirectional directions,
sequence_lens, initial states, peepholes, clip, input_forget, GRU linear_before_reset = 0,
RNN activations with alpha/beta, Q/DQ per axis, QLinearMatMul, QLinearConv). Each model is
converted with jetplan-convert and run with jetplan-run (--save-outputs), and each output is
compared with the reference: torch's own outputs for the exported models, a numpy
reimplementation of the ONNX equations (in float64) for the others.

Tolerance: float outputs |got - want| <= 1e-5 + 1e-4 * |want| (the CPU kernels keep the
recurrent state in double, torch in float32: a few float32 ulps apart over these lengths);
quantized outputs must be equal. The torch cases are skipped, visibly, when torch cannot be
imported.

Usage: seq_models.py --convert PATH --run PATH --workdir DIR [--only CASE,...]
Exits 1 when a case failed.
"""

import argparse
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import run_tool, sanitize  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
OPSET = 14


# ------------------------------------------------------------------------- numpy references

def activation(name, x, alpha, beta):
    n = name.lower()
    if n == "sigmoid":
        return 1.0 / (1.0 + np.exp(-x))
    if n == "tanh":
        return np.tanh(x)
    if n == "relu":
        return np.maximum(x, 0.0)
    if n == "leakyrelu":
        return np.where(x >= 0, x, alpha * x)
    if n == "thresholdedrelu":
        return np.where(x > alpha, x, 0.0)
    if n == "scaledtanh":
        return alpha * np.tanh(beta * x)
    if n == "hardsigmoid":
        return np.clip(alpha * x + beta, 0.0, 1.0)
    if n == "elu":
        return np.where(x >= 0, x, alpha * np.expm1(np.minimum(x, 0)))
    if n == "softsign":
        return x / (1.0 + np.abs(x))
    if n == "softplus":
        return np.log1p(np.exp(x))
    if n == "affine":
        return alpha * x + beta
    raise ValueError(name)


DEFAULT_ALPHA_BETA = {"leakyrelu": (0.01, 0.0), "thresholdedrelu": (1.0, 0.0),
                      "scaledtanh": (1.0, 1.0), "hardsigmoid": (0.2, 0.5), "elu": (1.0, 0.0),
                      "affine": (1.0, 0.0)}
TAKES = {"leakyrelu": (1, 0), "thresholdedrelu": (1, 0), "scaledtanh": (1, 1),
         "hardsigmoid": (1, 1), "elu": (1, 0), "affine": (1, 1)}


def resolve_activations(names, alphas, betas):
    """(name, alpha, beta) per function: the lists are consumed in order by the functions
    that take the parameter, the others keep the defaults (onnxruntime's reading)."""
    out, ia, ib = [], 0, 0
    for name in names:
        a, b = DEFAULT_ALPHA_BETA.get(name.lower(), (0.0, 0.0))
        ta, tb = TAKES.get(name.lower(), (0, 0))
        if ta and ia < len(alphas):
            a, ia = alphas[ia], ia + 1
        if tb and ib < len(betas):
            b, ib = betas[ib], ib + 1
        out.append((name, np.float64(np.float32(a)), np.float64(np.float32(b))))
    return out


def recurrent_reference(cell, X, W, R, B=None, lens=None, h0=None, c0=None, P=None,
                        direction="forward", layout=0, clip=None, input_forget=0,
                        linear_before_reset=0, activations=None, alphas=(), betas=()):
    """Y, Y_h, Y_c of ONNX RNN/LSTM/GRU, computed in float64 from the spec's equations."""
    X = X.astype(np.float64)
    if layout:
        X = X.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    S, N, _ = X.shape
    D, GH, _ = W.shape
    H = R.shape[2]
    A = {"RNN": 1, "LSTM": 3, "GRU": 2}[cell]
    if activations is None:
        activations = ({"RNN": ["Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"],
                        "GRU": ["Sigmoid", "Tanh"]}[cell]) * D
    acts = resolve_activations(activations, list(alphas), list(betas))
    B = np.zeros((D, 2 * GH)) if B is None else B.astype(np.float64)
    lens = np.full(N, S) if lens is None else np.clip(lens, 0, S)
    h0 = np.zeros((D, N, H)) if h0 is None else h0.astype(np.float64)
    c0 = np.zeros((D, N, H)) if c0 is None else c0.astype(np.float64)
    P = np.zeros((D, 3 * H)) if P is None else P.astype(np.float64)
    Y, Yh, Yc = np.zeros((S, D, N, H)), np.zeros((D, N, H)), np.zeros((D, N, H))

    def cl(v):
        return v if clip is None else np.clip(v, -clip, clip)

    for d in range(D):
        f, g, hf = [(lambda v, a=a: activation(a[0], v, a[1], a[2]))
                    for a in acts[d * A:(d + 1) * A]] + [None] * (3 - A)
        Wd, Rd = W[d].astype(np.float64), R[d].astype(np.float64)
        Wb, Rb = B[d, :GH], B[d, GH:]
        backwards = direction == "reverse" or d == 1
        pi, po, pf = P[d, :H], P[d, H:2 * H], P[d, 2 * H:]
        for n in range(N):
            L = int(lens[n])
            h, c = h0[d, n].copy(), c0[d, n].copy()
            for s in range(L):
                t = L - 1 - s if backwards else s
                xw = Wd @ X[t, n] + Wb
                hr = Rd @ h + Rb
                if cell == "RNN":
                    h = f(cl(xw + hr))
                elif cell == "LSTM":
                    i = f(cl(xw[:H] + hr[:H] + pi * c))
                    ft = 1 - i if input_forget else f(cl(xw[2 * H:3 * H] + hr[2 * H:3 * H] + pf * c))
                    ct = g(cl(xw[3 * H:] + hr[3 * H:]))
                    c = ft * c + i * ct
                    o = f(cl(xw[H:2 * H] + hr[H:2 * H] + po * c))
                    h = o * hf(c)
                else:
                    z = f(cl(xw[:H] + hr[:H]))
                    r = f(cl(xw[H:2 * H] + hr[H:2 * H]))
                    if linear_before_reset:
                        cand = g(cl(xw[2 * H:] + r * hr[2 * H:]))
                    else:
                        cand = g(cl(xw[2 * H:] + Rd[2 * H:] @ (r * h) + Rb[2 * H:]))
                    h = (1 - z) * cand + z * h
                Y[t, d, n] = h
            if L > 0:
                Yh[d, n], Yc[d, n] = h, c
    if layout:
        Y, Yh, Yc = Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    return [a.astype(np.float32) for a in (Y, Yh, Yc)]


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

class Case:
    """A model, its inputs (name -> array) and the expected outputs (name -> array)."""

    def __init__(self, name, model, inputs, expected):
        self.name, self.model, self.inputs, self.expected = name, model, inputs, expected


def f32(rng, *shape, scale=1.0):
    return (rng.uniform(-1, 1, size=shape) * scale).astype(np.float32)


def onnx_model(name, nodes, inputs, outputs, initializers=(), opset=OPSET):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="jetplan-seq-e2e")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def value(name, arr):
    return helper.make_tensor_value_info(name, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype],
                                         list(arr.shape))


def recurrent_case(name, cell, rng, S, N, I, H, direction="forward", layout=0, with_b=True,
                   lens=None, initial=False, peepholes=False, attrs=None, outputs=("Y", "Y_h")):
    """One RNN/LSTM/GRU node; X, sequence_lens and the initial states are graph inputs, the
    weights initializers."""
    attrs = dict(attrs or {})
    D = 2 if direction == "bidirectional" else 1
    G = {"RNN": 1, "LSTM": 4, "GRU": 3}[cell]
    X = f32(rng, *((N, S, I) if layout else (S, N, I)))
    W, R = f32(rng, D, G * H, I), f32(rng, D, G * H, H)
    B = f32(rng, D, 2 * G * H) if with_b else None
    state = (N, D, H) if layout else (D, N, H)
    h0 = f32(rng, *state) if initial else None
    c0 = f32(rng, *state) if initial and cell == "LSTM" else None
    P = f32(rng, D, 3 * H) if peepholes else None
    feeds, inits = {"X": X}, [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R")]
    node_inputs = ["X", "W", "R"]
    node_inputs.append("B" if with_b else "")
    if with_b:
        inits.append(numpy_helper.from_array(B, "B"))
    if lens is not None:
        lens = np.asarray(lens, np.int32)
        feeds["lens"] = lens
    node_inputs.append("lens" if lens is not None else "")
    node_inputs.append("h0" if initial else "")
    if initial:
        feeds["h0"] = h0
    if cell == "LSTM":
        node_inputs.append("c0" if initial else "")
        if initial:
            feeds["c0"] = c0
        node_inputs.append("P" if peepholes else "")
        if peepholes:
            inits.append(numpy_helper.from_array(P, "P"))
    while node_inputs and node_inputs[-1] == "":
        node_inputs.pop()
    all_outputs = ["Y", "Y_h", "Y_c"][:3 if cell == "LSTM" else 2]
    node_outputs = [o if o in outputs else "" for o in all_outputs]
    while node_outputs[-1] == "":
        node_outputs.pop()
    node = helper.make_node(cell, node_inputs, node_outputs, name=name, hidden_size=H,
                            direction=direction, layout=layout, **attrs)
    ref = recurrent_reference(
        cell, X, W, R, B, lens, h0, c0, P, direction=direction, layout=layout,
        clip=attrs.get("clip"), input_forget=attrs.get("input_forget", 0),
        linear_before_reset=attrs.get("linear_before_reset", 0),
        activations=attrs.get("activations"), alphas=attrs.get("activation_alpha", ()),
        betas=attrs.get("activation_beta", ()))
    expected = {o: ref[all_outputs.index(o)] for o in outputs}
    model = onnx_model(name, [node], [value(k, v) for k, v in feeds.items()],
                       [value(k, v) for k, v in expected.items()], inits)
    return Case(name, model, feeds, expected)


def onnx_cases():
    rng = np.random.default_rng(2024)
    cases = [
        recurrent_case("lstm_bidirectional_batch_major", "LSTM", rng, S=5, N=3, I=4, H=6,
                       direction="bidirectional", layout=1, lens=[5, 2, 0], initial=True,
                       peepholes=True, outputs=("Y", "Y_h", "Y_c")),
        recurrent_case("lstm_reverse_clip_input_forget", "LSTM", rng, S=4, N=2, I=3, H=5,
                       direction="reverse", lens=[4, 3], initial=True,
                       attrs={"clip": 0.7, "input_forget": 1}, outputs=("Y", "Y_c")),
        recurrent_case("gru_reset_after_matmul", "GRU", rng, S=6, N=2, I=3, H=4,
                       direction="bidirectional", initial=True,
                       attrs={"linear_before_reset": 0}),
        recurrent_case("gru_reverse_linear_before_reset", "GRU", rng, S=3, N=4, I=5, H=3,
                       direction="reverse", layout=1, lens=[1, 3, 2, 0],
                       attrs={"linear_before_reset": 1}, outputs=("Y_h",)),
        recurrent_case("rnn_no_bias", "RNN", rng, S=7, N=1, I=2, H=8, with_b=False,
                       outputs=("Y",)),
        recurrent_case("rnn_activations_alpha_beta", "RNN", rng, S=4, N=2, I=3, H=4,
                       direction="bidirectional",
                       attrs={"activations": ["LeakyRelu", "ScaledTanh"],
                              "activation_alpha": [0.2, 0.9], "activation_beta": [1.5]}),
        recurrent_case("lstm_activations", "LSTM", rng, S=3, N=2, I=2, H=3,
                       attrs={"activations": ["HardSigmoid", "Softsign", "Affine"],
                              "activation_alpha": [0.3, 0.5], "activation_beta": [0.4, 0.1]}),
    ]

    # Q/DQ per axis: x -> int8 per channel of axis 1 -> float again.
    x = f32(rng, 2, 3, 4, scale=4.0)
    scale = np.array([0.02, 0.05, 0.1], np.float32)
    zp = np.array([-5, 0, 7], np.int8)
    nodes = [helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"], name="q", axis=1),
             helper.make_node("DequantizeLinear", ["q", "scale", "zp"], ["y"], name="dq",
                              axis=1)]
    q = quantize_ref(x, scale.reshape(1, 3, 1), zp.reshape(1, 3, 1), np.int8)
    y = ((q.astype(np.float32) - zp.reshape(1, 3, 1).astype(np.float32))
         * scale.reshape(1, 3, 1)).astype(np.float32)
    cases.append(Case("quantize_dequantize_per_axis",
                      onnx_model("qdq", nodes, [value("x", x)], [value("q", q), value("y", y)],
                                 [numpy_helper.from_array(scale, "scale"),
                                  numpy_helper.from_array(zp, "zp")]),
                      {"x": x}, {"q": q, "y": y}))

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
    cases.append(Case("qlinear_matmul_int8_per_column",
                      onnx_model("qmm", nodes, [value("a", a), value("a_s", a_s),
                                                value("a_zp", a_zp)], [value("y", y)],
                                 [numpy_helper.from_array(v, n) for n, v in
                                  (("b", b), ("b_s", b_s), ("b_zp", b_zp), ("y_s", y_s),
                                   ("y_zp", y_zp))], opset=10),
                      {"a": a, "a_s": a_s, "a_zp": a_zp}, {"y": y}))

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
    cases.append(Case("qlinear_conv_grouped_per_channel",
                      onnx_model("qconv", [node], [value("x", x)], [value("y", y)],
                                 [numpy_helper.from_array(v, n) for n, v in
                                  (("x_s", x_s), ("x_zp", x_zp), ("w", w), ("w_s", w_s),
                                   ("w_zp", w_zp), ("y_s", y_s), ("y_zp", y_zp),
                                   ("bias", bias))], opset=10),
                      {"x": x}, {"y": y}))
    # MatMulInteger with run-time per-row zero points of A and a constant B; ConvInteger with
    # per-channel weight zero points and padding (which contributes nothing: it is x_zp).
    a = rng.integers(0, 256, size=(3, 6)).astype(np.uint8)
    a_zp = rng.integers(0, 256, size=(3,)).astype(np.uint8)
    b = rng.integers(-128, 128, size=(6, 2)).astype(np.int8)
    b_zp = np.array(-7, np.int8)
    y = ((a.astype(np.int32) - a_zp.reshape(3, 1)) @ (b.astype(np.int32) - int(b_zp))).astype(np.int32)
    node = helper.make_node("MatMulInteger", ["a", "b", "a_zp", "b_zp"], ["y"], name="mmi")
    cases.append(Case("matmul_integer_per_row",
                      onnx_model("mmi", [node], [value("a", a), value("a_zp", a_zp)],
                                 [value("y", y)], [numpy_helper.from_array(b, "b"),
                                                   numpy_helper.from_array(b_zp, "b_zp")],
                                 opset=10),
                      {"a": a, "a_zp": a_zp}, {"y": y}))
    x = rng.integers(-128, 128, size=(2, 3, 5, 5)).astype(np.int8)
    w = rng.integers(0, 256, size=(4, 3, 3, 3)).astype(np.uint8)
    x_zp, w_zp = np.array(-20, np.int8), rng.integers(0, 256, size=(4,)).astype(np.uint8)
    y = conv_accumulate(x, x_zp, w, w_zp, strides=(2, 1), pads=(1, 1, 1, 1), dilations=(1, 1),
                        group=1).astype(np.int32)
    node = helper.make_node("ConvInteger", ["x", "w", "x_zp", "w_zp"], ["y"], name="ci",
                            strides=[2, 1], pads=[1, 1, 1, 1])
    cases.append(Case("conv_integer_per_channel",
                      onnx_model("ci", [node], [value("x", x)], [value("y", y)],
                                 [numpy_helper.from_array(v, n) for n, v in
                                  (("w", w), ("x_zp", x_zp), ("w_zp", w_zp))], opset=10),
                      {"x": x}, {"y": y}))
    return cases


def torch_cases(workdir):
    """The torch models, exported with random weights; torch's outputs are the reference."""
    import warnings

    import torch  # noqa: E402  (absent on some build machines: the caller reports the skip)

    warnings.filterwarnings("ignore")  # the exporter's advice on batch sizes and shape inference

    torch.manual_seed(7)

    class Lstm2(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(input_size=6, hidden_size=10, num_layers=2)

        def forward(self, x):
            return self.lstm(x)[0]

    class Gru(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = torch.nn.GRU(input_size=5, hidden_size=7)

        def forward(self, x):
            y, h = self.gru(x)
            return y, h

    class GruBidirectional(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = torch.nn.GRU(input_size=4, hidden_size=6, bidirectional=True)

        def forward(self, x):
            return self.gru(x)[1]

    class RnnRelu(torch.nn.Module):  # exported with activations = ["Relu"]
        def __init__(self):
            super().__init__()
            self.rnn = torch.nn.RNN(input_size=3, hidden_size=5, nonlinearity="relu")

        def forward(self, x):
            return self.rnn(x)[0]

    specs = [("torch_lstm_2_layers", Lstm2(), (9, 3, 6), ["y"]),
             ("torch_rnn_relu", RnnRelu(), (4, 2, 3), ["y"]),
             ("torch_gru", Gru(), (8, 2, 5), ["y", "h_n"]),
             ("torch_gru_bidirectional_state", GruBidirectional(), (5, 3, 4), ["h_n"])]
    cases = []
    for name, module, shape, output_names in specs:
        module.eval()
        x = torch.rand(*shape) * 2 - 1
        with torch.no_grad():
            want = module(x)
        want = want if isinstance(want, tuple) else (want,)
        path = os.path.join(workdir, name + ".export.onnx")
        torch.onnx.export(module, (x,), path, opset_version=OPSET, input_names=["x"],
                          output_names=output_names)
        cases.append(Case(name, onnx.load(path), {"x": x.numpy()},
                          {n: w.numpy() for n, w in zip(output_names, want)}))
    return cases


# ---------------------------------------------------------------------------------- running

def compare(name, got, want):
    if got.shape != want.shape:
        return f"{name}: shape {list(got.shape)}, expected {list(want.shape)}"
    if got.dtype != want.dtype:
        return f"{name}: dtype {got.dtype}, expected {want.dtype}"
    if want.dtype.kind == "f":
        if not np.all(np.isfinite(got)):
            return f"{name}: NaN or Inf in the output"
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
        bad = err > ATOL + RTOL * np.abs(want.astype(np.float64))
        if bad.any():
            i = int(np.argmax(np.where(bad, err, -1)))
            return (f"{name}: {int(bad.sum())} of {bad.size} off, worst at "
                    f"{np.unravel_index(i, want.shape)}: {got.flat[i]!r} vs {want.flat[i]!r}")
        return None
    if not np.array_equal(got, want):
        return f"{name}: {int((got != want).sum())} of {want.size} elements differ"
    return None


def run_case(case, convert, run, workdir):
    """(status, detail): PASS, FAIL or SKIP."""
    d = os.path.join(workdir, case.name)
    os.makedirs(d, exist_ok=True)
    model_path, plan = os.path.join(d, "model.onnx"), os.path.join(d, "model.jplan")
    onnx.save(case.model, model_path)
    res = run_tool([convert, model_path, "-o", plan])
    if res.returncode != 0 or res.timed_out:
        return "FAIL", f"jetplan-convert ({res.describe()}): {res.first_error()}"
    args = [run, plan, "--warmup", "0", "--iterations", "1", "--save-outputs",
            os.path.join(d, "out")]
    for name, arr in case.inputs.items():
        npy = os.path.join(d, sanitize(name) + ".in.npy")
        np.save(npy, np.array(arr, order="C"))  # keeps 0-d arrays 0-d
        args += ["--input", f"{name}={npy}"]
    res = run_tool(args)
    if res.returncode != 0 or res.timed_out:
        return "FAIL", f"jetplan-run ({res.describe()}): {res.first_error()}"
    problems = []
    for name, want in case.expected.items():
        got_path = os.path.join(d, "out", sanitize(name) + ".npy")
        if not os.path.exists(got_path):
            problems.append(f"{name}: not written")
            continue
        why = compare(name, np.load(got_path), np.asarray(want))
        if why:
            problems.append(why)
    return ("FAIL", "; ".join(problems)) if problems else ("PASS", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--convert", required=True, help="path of jetplan-convert")
    ap.add_argument("--run", required=True, help="path of jetplan-run")
    ap.add_argument("--workdir", required=True, help="scratch directory (emptied first)")
    ap.add_argument("--only", help="comma-separated case names (default: all)")
    args = ap.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)

    cases = onnx_cases()
    try:
        cases += torch_cases(args.workdir)
    except ImportError as e:
        print(f"SKIP  torch_* (torch cannot be imported: {e})")
    only = set(args.only.split(",")) if args.only else None
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for case in cases:
        if only and case.name not in only:
            continue
        status, detail = run_case(case, args.convert, args.run, args.workdir)
        counts[status] += 1
        print(f"{status:<5} {case.name}" + (f": {detail}" if detail else ""))
        sys.stdout.flush()
    print(f"seq_models: {counts['PASS']} pass, {counts['FAIL']} fail, {counts['SKIP']} skipped")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
