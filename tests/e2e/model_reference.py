"""The numpy reference of the ops make_models.py builds its models from, in two formulations:
A (vectorized: shift-and-accumulate convolution, padded windows) gives the expected outputs; B
(one output element at a time, padding by bounds checks) exists only for make_models.py
--self-check to compare A with. Written here on purpose (no jetplan code, no ONNX runtime): a
bug shared by the converter and its reference would otherwise pass unseen."""

import itertools
import math

import numpy as np

# --------------------------------------------------------------------------------------------
# numpy reference, formulation A (the one the expected outputs come from)
# --------------------------------------------------------------------------------------------

def resolve_pads(in_sp, kernel, strides, dilations, pads, auto_pad):
    """ONNX pads [b1..bn, e1..en] after auto_pad (SAME_UPPER puts the odd pixel at the end)."""
    n = len(in_sp)
    if auto_pad in (None, "NOTSET"):
        return list(pads) if pads is not None else [0] * (2 * n)
    if auto_pad == "VALID":
        return [0] * (2 * n)
    begin, end = [], []
    for i in range(n):
        out = -(-in_sp[i] // strides[i])
        total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in_sp[i])
        small, big = total // 2, total - total // 2
        if auto_pad == "SAME_UPPER":
            begin.append(small)
            end.append(big)
        elif auto_pad == "SAME_LOWER":
            begin.append(big)
            end.append(small)
        else:
            raise ValueError(auto_pad)
    return begin + end


def out_size(in_len, k, s, d, pb, pe):
    return (in_len + pb + pe - d * (k - 1) - 1) // s + 1


def conv_ref(x, w, b, strides, pads, dilations, group):
    """Shift-and-accumulate: for each kernel tap, a strided view of the padded input times the
    tap's [Cout, Cin] matrix."""
    nsp = x.ndim - 2
    n, c = x.shape[:2]
    m = w.shape[0]
    k = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + nsp]) for i in range(nsp)])
    osz = [out_size(x.shape[2 + i], k[i], strides[i], dilations[i], pads[i], pads[i + nsp])
           for i in range(nsp)]
    y = np.zeros((n, m) + tuple(osz), dtype=np.float64)
    cg, mg = c // group, m // group
    for g in range(group):
        xg = xp[:, g * cg:(g + 1) * cg]
        wg = w[g * mg:(g + 1) * mg]
        for tap in itertools.product(*[range(kk) for kk in k]):
            view = tuple(slice(tap[i] * dilations[i],
                               tap[i] * dilations[i] + strides[i] * (osz[i] - 1) + 1,
                               strides[i]) for i in range(nsp))
            patch = xg[(slice(None), slice(None)) + view]
            wt = wg[(slice(None), slice(None)) + tap]
            y[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...", patch, wt)
    if b is not None:
        y += b.reshape((1, m) + (1,) * nsp)
    return y


def pool_ref(x, kind, kernel, strides, pads, dilations=None, count_include_pad=0):
    """Loops over output positions; each window is a slice of the padded input, with a mask of
    which elements are real (not padding)."""
    nsp = x.ndim - 2
    dilations = dilations or [1] * nsp
    fill = -np.inf if kind == "max" else 0.0
    widths = [(0, 0), (0, 0)] + [(pads[i], pads[i + nsp]) for i in range(nsp)]
    xp = np.pad(x, widths, constant_values=fill)
    mask = np.pad(np.ones(x.shape[2:]), widths[2:], constant_values=0.0)
    osz = [out_size(x.shape[2 + i], kernel[i], strides[i], dilations[i], pads[i], pads[i + nsp])
           for i in range(nsp)]
    y = np.zeros(x.shape[:2] + tuple(osz))
    for o in itertools.product(*[range(s) for s in osz]):
        win = tuple(slice(o[i] * strides[i],
                          o[i] * strides[i] + dilations[i] * (kernel[i] - 1) + 1,
                          dilations[i]) for i in range(nsp))
        vals = xp[(slice(None), slice(None)) + win]
        axes = tuple(range(2, 2 + nsp))
        if kind == "max":
            y[(slice(None), slice(None)) + o] = vals.max(axis=axes)
        else:
            count = np.prod(kernel) if count_include_pad else mask[win].sum()
            y[(slice(None), slice(None)) + o] = vals.sum(axis=axes) / count
    return y


def softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_ref(x, axis):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def coerced_2d(fn, x, axis):
    """Opset < 13 Softmax/LogSoftmax: flatten to [prod(shape[:axis]), prod(shape[axis:])]."""
    axis = axis % x.ndim
    rows = int(np.prod(x.shape[:axis]))
    return fn(x.reshape(rows, -1), 1).reshape(x.shape)


def bn_ref(x, scale, bias, mean, var, eps):
    sh = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) * scale.reshape(sh) + \
        bias.reshape(sh)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


ACTIVATIONS = {
    "Relu": lambda x, a: np.maximum(x, 0.0),
    "Sigmoid": lambda x, a: sigmoid(x),
    "Tanh": lambda x, a: np.tanh(x),
    "LeakyRelu": lambda x, a: np.where(x >= 0, x, a.get("alpha", 0.01) * x),
    "HardSigmoid": lambda x, a: np.clip(a.get("alpha", 0.2) * x + a.get("beta", 0.5), 0.0, 1.0),
    "HardSwish": lambda x, a: x * np.clip(x / 6.0 + 0.5, 0.0, 1.0),
    "Elu": lambda x, a: np.where(x > 0, x, a.get("alpha", 1.0) * (np.exp(x) - 1.0)),
}

BINARY = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
    "Max": np.maximum, "Min": np.minimum, "Pow": np.power,
}


# --------------------------------------------------------------------------------------------
# numpy reference, formulation B (self-check only): one output element at a time, padding by
# bounds checks instead of np.pad
# --------------------------------------------------------------------------------------------

def conv_naive(x, w, b, strides, pads, dilations, group):
    nsp = x.ndim - 2
    n, c = x.shape[:2]
    m = w.shape[0]
    k = w.shape[2:]
    osz = [out_size(x.shape[2 + i], k[i], strides[i], dilations[i], pads[i], pads[i + nsp])
           for i in range(nsp)]
    cg, mg = c // group, m // group
    y = np.zeros((n, m) + tuple(osz))
    for ni in range(n):
        for mi in range(m):
            g = mi // mg
            for o in itertools.product(*[range(s) for s in osz]):
                acc = 0.0 if b is None else b[mi]
                for ci in range(cg):
                    for tap in itertools.product(*[range(kk) for kk in k]):
                        pos = [o[i] * strides[i] - pads[i] + tap[i] * dilations[i]
                               for i in range(nsp)]
                        if all(0 <= pos[i] < x.shape[2 + i] for i in range(nsp)):
                            acc += x[(ni, g * cg + ci) + tuple(pos)] * w[(mi, ci) + tap]
                y[(ni, mi) + o] = acc
    return y


def pool_naive(x, kind, kernel, strides, pads, dilations=None, count_include_pad=0):
    nsp = x.ndim - 2
    dilations = dilations or [1] * nsp
    osz = [out_size(x.shape[2 + i], kernel[i], strides[i], dilations[i], pads[i], pads[i + nsp])
           for i in range(nsp)]
    y = np.zeros(x.shape[:2] + tuple(osz))
    for ni, ci in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*[range(s) for s in osz]):
            vals = []
            for tap in itertools.product(*[range(kk) for kk in kernel]):
                pos = [o[i] * strides[i] - pads[i] + tap[i] * dilations[i] for i in range(nsp)]
                if all(0 <= pos[i] < x.shape[2 + i] for i in range(nsp)):
                    vals.append(x[(ni, ci) + tuple(pos)])
            if kind == "max":
                y[(ni, ci) + o] = max(vals)
            else:
                y[(ni, ci) + o] = sum(vals) / (math.prod(kernel) if count_include_pad
                                               else len(vals))
    return y


def matmul_naive(a, b):
    """ONNX MatMul for rank >= 2 by explicit broadcasting of the batch dims."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    y = np.zeros(batch + (a.shape[-2], b.shape[-1]))
    ab = np.broadcast_to(a, batch + a.shape[-2:])
    bb = np.broadcast_to(b, batch + b.shape[-2:])
    for idx in itertools.product(*[range(s) for s in batch]):
        for i in range(a.shape[-2]):
            for j in range(b.shape[-1]):
                y[idx + (i, j)] = sum(ab[idx + (i, kk)] * bb[idx + (kk, j)]
                                      for kk in range(a.shape[-1]))
    return y
