#!/usr/bin/env python3
"""End-to-end tests of the recurrent ops: models exported from torch (a 2-layer LSTM, a GRU and
a bidirectional GRU, random weights) and models built with onnx.helper for the ONNX variants
torch does not export (layout, reverse and bidirectional directions, sequence_lens, initial
states, peepholes, clip, input_forget, GRU linear_before_reset = 0, RNN activations with
alpha/beta). Each model is converted with jetplan-convert and run with jetplan-run
(--save-outputs), and each output is compared with the reference: torch's own outputs for the
exported models, a numpy reimplementation of the ONNX equations (in float64) for the others.

Tolerance: |got - want| <= 1e-5 + 1e-4 * |want| (the CPU kernels keep the recurrent state in
double, torch in float32: a few float32 ulps apart over these lengths). The torch cases are
skipped, visibly, when torch cannot be imported.

Usage: recurrent_models.py --convert PATH --run PATH --workdir DIR [--only CASE,...]
Exits 1 when a case failed.
"""

import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import ModelCase, onnx_model, run_cases, tool_args, value_info  # noqa: E402

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


# ------------------------------------------------------------------------------ model cases

def f32(rng, *shape, scale=1.0):
    return (rng.uniform(-1, 1, size=shape) * scale).astype(np.float32)


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
    model = onnx_model(name, [node], [value_info(k, v) for k, v in feeds.items()],
                       [value_info(k, v) for k, v in expected.items()], inits, OPSET)
    return ModelCase(name, model, feeds, expected)


def onnx_cases():
    """The ONNX RNN/LSTM/GRU variants against the numpy reference."""
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
        cases.append(ModelCase(name, onnx.load(path), {"x": x.numpy()},
                          {n: w.numpy() for n, w in zip(output_names, want)}))
    return cases


def main():
    tools = tool_args(__doc__)
    cases = onnx_cases()
    try:
        cases += torch_cases(tools.workdir)
    except ImportError as e:
        print(f"SKIP  torch_* (torch cannot be imported: {e})")
    return run_cases("recurrent models", tools, cases)


if __name__ == "__main__":
    sys.exit(main())
