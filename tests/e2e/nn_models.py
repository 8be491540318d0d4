#!/usr/bin/env python3
"""End-to-end tests of the nn op families: small ONNX models (ConvTranspose, Resize/Upsample, the
Reduce* ops, ArgMax/ArgMin, TopK, Instance/Layer normalization, LRN, NonMaxSuppression, pools
with ceil_mode) converted with jetplan-convert, run with jetplan-run, and every output compared
with a numpy reference written here, independently of jetplan's kernels.

The references are separable formulations where the kernels work per element (Resize applies
one interpolation matrix per dim; ConvTranspose scatters each kernel tap), so that a shared
misreading of ONNX is less likely. Float outputs pass with |got - want| <= atol + rtol * |want|
(rtol 1e-4, atol 1e-5); integer outputs (indices, NMS selections) must be equal, shape included
(NonMaxSuppression's rows are the run-time count jetplan-run reports).

Usage: nn_models.py --convert PATH --run PATH --workdir DIR [--only CASE,...] [--self-check]
"""

import argparse
import math
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import run_tool, sanitize  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5


# --------------------------------------------------------------------------------------------
# numpy references
# --------------------------------------------------------------------------------------------

def conv_transpose_ref(x, w, b, strides, pad_begin, out_sp, dilations, group):
    """x [N, C, *in], w [C, M/group, *k]: every input position scatters w's taps to
    o = i * stride - pad_begin + k * dilation; positions outside out_sp are dropped."""
    n, c = x.shape[:2]
    m_per = w.shape[1]
    c_per = c // group
    y = np.zeros((n, m_per * group) + tuple(out_sp))
    in_sp = x.shape[2:]
    for g in range(group):
        xs = x[:, g * c_per:(g + 1) * c_per].astype(np.float64)
        ws = w[g * c_per:(g + 1) * c_per].astype(np.float64)
        for tap in np.ndindex(*w.shape[2:]):
            # contribution of this tap: [N, M, *in]
            contrib = np.einsum("nc...,cm->nm...", xs, ws[(slice(None), slice(None)) + tap])
            src, dst = [], []
            for d, i_len in enumerate(in_sp):
                o = np.arange(i_len) * strides[d] - pad_begin[d] + tap[d] * dilations[d]
                keep = (o >= 0) & (o < out_sp[d])
                src.append(np.nonzero(keep)[0])
                dst.append(o[keep])
            part = contrib[np.ix_(range(n), range(m_per), *src)]
            y[np.ix_(range(n), range(g * m_per, (g + 1) * m_per), *dst)] += part
    if b is not None:
        y += b.reshape((1, -1) + (1,) * len(out_sp))
    return y


def resize_matrix(in_len, out_len, scale, length, mode, coord, nearest, a=-0.75,
                  exclude_outside=False, roi=(0.0, 1.0)):
    """One dim of Resize as an (out_len, in_len) matrix, plus a mask of output positions that
    tf_crop_and_resize puts outside the input (they take the extrapolation value)."""
    mat = np.zeros((out_len, in_len))
    outside = np.zeros(out_len, bool)
    for x in range(out_len):
        if coord == "half_pixel":
            c = (x + 0.5) / scale - 0.5
        elif coord == "pytorch_half_pixel":
            c = (x + 0.5) / scale - 0.5 if length > 1 else 0.0
        elif coord == "align_corners":
            c = x * (in_len - 1) / (length - 1) if length > 1 else 0.0
        elif coord == "asymmetric":
            c = x / scale
        elif coord == "tf_crop_and_resize":
            start, end = roi
            c = (x * (end - start) * (in_len - 1) / (length - 1) if length > 1
                 else (end - start) * (in_len - 1) / 2) + start * (in_len - 1)
            if c < 0 or c > in_len - 1:
                outside[x] = True
                continue
        else:
            raise ValueError(coord)
        clamp = lambda i: min(max(i, 0), in_len - 1)  # noqa: E731
        if mode == "nearest":
            frac = c - math.floor(c)
            up = {"round_prefer_floor": frac > 0.5, "round_prefer_ceil": frac >= 0.5,
                  "floor": False, "ceil": frac > 0}[nearest]
            mat[x, clamp(math.floor(c) + (1 if up else 0))] = 1.0
        elif mode == "linear":
            i0 = math.floor(c)
            r = c - i0
            mat[x, clamp(i0)] += 1 - r
            mat[x, clamp(i0 + 1)] += r
        else:  # cubic, Keys kernel
            i0 = math.floor(c)
            r = c - i0

            def k(t):
                t = abs(t)
                if t <= 1:
                    return (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1
                if t < 2:
                    return a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a
                return 0.0
            taps = [(i0 - 1 + j, k(r + 1 - j)) for j in range(4)]
            if exclude_outside:
                taps = [(i, wt) for i, wt in taps if 0 <= i < in_len]
                total = sum(wt for _, wt in taps)
                taps = [(i, wt / total) for i, wt in taps]
            for i, wt in taps:
                mat[x, clamp(i)] += wt
    return mat, outside


def resize_ref(x, out_shape, scales, lengths, mode, coord="half_pixel",
               nearest="round_prefer_floor", a=-0.75, exclude_outside=False, rois=None,
               extrapolation=0.0):
    y = x.astype(np.float64)
    mask = np.zeros(out_shape, bool)
    for d in range(x.ndim):
        roi = rois[d] if rois else (0.0, 1.0)
        mat, outside = resize_matrix(x.shape[d], out_shape[d], scales[d], lengths[d], mode, coord,
                                     nearest, a, exclude_outside, roi)
        y = np.moveaxis(np.tensordot(mat, np.moveaxis(y, d, 0), axes=1), 0, d)
        shape = [1] * x.ndim
        shape[d] = out_shape[d]
        mask |= outside.reshape(shape)
    y[mask] = extrapolation
    return y


def scales_resize(x, scales, mode, **kw):
    """Resize with a float `scales` input: out = floor(in * scale), resized length in * scale."""
    s32 = np.asarray(scales, np.float32)
    out = [int(math.floor(np.float32(n) * s)) for n, s in zip(x.shape, s32)]
    s64 = [float(s) for s in s32]
    return resize_ref(x, out, s64, [n * s for n, s in zip(x.shape, s64)], mode, **kw)


def sizes_resize(x, sizes, mode, **kw):
    return resize_ref(x, list(sizes), [o / n for o, n in zip(sizes, x.shape)],
                      [float(o) for o in sizes], mode, **kw)


def reduce_ref(op, x, axes, keepdims):
    x = x.astype(np.float64)
    ax = tuple(axes)
    fn = {
        "ReduceSum": lambda: np.sum(x, ax, keepdims=True),
        "ReduceMean": lambda: np.mean(x, ax, keepdims=True),
        "ReduceMax": lambda: np.max(x, ax, keepdims=True),
        "ReduceMin": lambda: np.min(x, ax, keepdims=True),
        "ReduceProd": lambda: np.prod(x, ax, keepdims=True),
        "ReduceL1": lambda: np.sum(np.abs(x), ax, keepdims=True),
        "ReduceL2": lambda: np.sqrt(np.sum(x * x, ax, keepdims=True)),
        "ReduceSumSquare": lambda: np.sum(x * x, ax, keepdims=True),
        "ReduceLogSum": lambda: np.log(np.sum(x, ax, keepdims=True)),
        "ReduceLogSumExp": lambda: np.log(np.sum(np.exp(x), ax, keepdims=True)),
    }[op]()
    return fn if keepdims else np.squeeze(fn, axis=ax)


def arg_ref(kind, x, axis, keepdims, last):
    f = np.argmax if kind == "ArgMax" else np.argmin
    if last:
        flipped = np.flip(x, axis)
        i = x.shape[axis] - 1 - f(flipped, axis=axis)
    else:
        i = f(x, axis=axis)
    return np.expand_dims(i, axis) if keepdims else i


def topk_ref(x, k, axis, largest):
    key = -x if largest else x
    order = np.argsort(key, axis=axis, kind="stable")  # ties: lower index first
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis), idx.astype(np.int64)


def instance_norm_ref(x, s, b, eps):
    ax = tuple(range(2, x.ndim))
    x = x.astype(np.float64)
    mean = x.mean(ax, keepdims=True)
    var = ((x - mean) ** 2).mean(ax, keepdims=True)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean) / np.sqrt(var + eps) * s.reshape(shape) + b.reshape(shape)


def layer_norm_ref(x, s, b, axis, eps):
    ax = tuple(range(axis % x.ndim, x.ndim))
    x = x.astype(np.float64)
    mean = x.mean(ax, keepdims=True)
    inv = 1.0 / np.sqrt(((x - mean) ** 2).mean(ax, keepdims=True) + eps)
    y = (x - mean) * inv * s + (b if b is not None else 0.0)
    return y, mean, inv


def lrn_ref(x, size, alpha, beta, bias):
    c = x.shape[1]
    x = x.astype(np.float64)
    sq = np.zeros_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - (size - 1) // 2), min(c - 1, ch + int(math.ceil((size - 1) / 2)))
        sq[:, ch] = (x[:, lo:hi + 1] ** 2).sum(axis=1)
    return x / (bias + alpha / size * sq) ** beta


def nms_ref(boxes, scores, max_out, iou, score_th, center):
    def corners(bx):
        if center:
            xc, yc, w, h = bx
            return yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2
        y1, x1, y2, x2 = bx
        return min(y1, y2), min(x1, x2), max(y1, y2), max(x1, x2)

    def iou_of(p, q):
        a, b = corners(p), corners(q)
        ih = min(a[2], b[2]) - max(a[0], b[0])
        iw = min(a[3], b[3]) - max(a[1], b[1])
        if ih <= 0 or iw <= 0:
            return 0.0
        inter = ih * iw
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
        return inter / union if union > 0 else 0.0

    rows = []
    for bi in range(boxes.shape[0]):
        for ci in range(scores.shape[1]):
            s = scores[bi, ci]
            cand = [i for i in range(len(s)) if score_th is None or s[i] > score_th]
            cand.sort(key=lambda i: (-s[i], i))
            kept = []
            for i in cand:
                if len(kept) >= max_out:
                    break
                if all(iou_of(boxes[bi, i].astype(np.float64), boxes[bi, j].astype(np.float64))
                       <= iou for j in kept):
                    kept.append(i)
            rows += [[bi, ci, i] for i in kept]
    return np.array(rows, np.int64).reshape(-1, 3)


def pool_ceil_ref(x, kind, k, s, pads):
    """2-D pool with ceil_mode=1: windows past the end are partial; a window may not start in
    the end padding. Average divides by the positions inside x (count_include_pad=0)."""
    n, c, h, w = x.shape
    out = []
    for d, size in enumerate((h, w)):
        span = size + pads[d] + pads[d + 2] - k[d]
        o = -(-span // s[d]) + 1
        if (o - 1) * s[d] >= size + pads[d]:
            o -= 1
        out.append(o)
    y = np.zeros((n, c, out[0], out[1]))
    for i in range(out[0]):
        for j in range(out[1]):
            r0, c0 = i * s[0] - pads[0], j * s[1] - pads[1]
            win = x[:, :, max(r0, 0):min(r0 + k[0], h), max(c0, 0):min(c0 + k[1], w)]
            y[:, :, i, j] = win.max(axis=(2, 3)) if kind == "max" else win.mean(axis=(2, 3))
    return y


# --------------------------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------------------------

class Case:
    def __init__(self, name, opset, seed):
        self.name, self.opset = name, opset
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inputs, self.outputs, self.inits = [], [], [], []
        self.feeds, self.expected = {}, {}

    def input(self, name, arr):
        arr = np.asarray(arr, np.float32)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, arr.shape))
        self.feeds[name] = arr
        return arr

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(self, op, ins, outs, **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, name=outs[0] + "_node", **attrs))

    def output(self, name, want, rows_at_run_time=False):
        """A graph output declared with the reference's shape (the converter checks it against
        its own), or with a symbolic leading dim where the row count is known at run time."""
        want = np.asarray(want)
        dtype = TensorProto.INT64 if want.dtype.kind in "iu" else TensorProto.FLOAT
        shape = ["rows"] + list(want.shape[1:]) if rows_at_run_time else list(want.shape)
        self.outputs.append(helper.make_tensor_value_info(name, dtype, shape))
        self.expected[name] = want.astype(np.int64 if dtype == TensorProto.INT64 else np.float32)

    def model(self):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                              producer_name="jetplan-nn-tests")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def case_decoder():
    """ConvTranspose (groups, bias, pads, output_padding; output_shape; SAME_UPPER) feeding the
    norms and a nearest Resize."""
    c = Case("decoder", 13, 201)
    x = c.input("x", c.rng.standard_normal((2, 4, 5, 6)))
    w = (c.rng.standard_normal((4, 3, 3, 2)) * 0.5).astype(np.float32)
    b = c.rng.standard_normal(6).astype(np.float32)
    c.const("w", w)
    c.const("b", b)
    c.node("ConvTranspose", ["x", "w", "b"], ["up"], group=2, strides=[2, 3], pads=[1, 0, 0, 1],
           output_padding=[1, 2])
    out_sp = [2 * 4 + 1 + 3 - 1, 3 * 5 + 2 + 2 - 1]
    up = conv_transpose_ref(x, w, b, [2, 3], [1, 0], out_sp, [1, 1], 2)
    c.output("up", up)
    # output_shape asks for one row more than the full convolution: pad_begin 0, pad_end -1.
    w2 = (c.rng.standard_normal((4, 2, 2, 2)) * 0.5).astype(np.float32)
    c.const("w2", w2)
    c.node("ConvTranspose", ["x", "w2"], ["shaped"], strides=[2, 2], output_shape=[11, 12])
    c.output("shaped", conv_transpose_ref(x, w2, None, [2, 2], [0, 0], [11, 12], [1, 1], 1))
    c.node("ConvTranspose", ["x", "w2"], ["same"], strides=[2, 2], dilations=[2, 1],
           auto_pad="SAME_UPPER")
    # full 2*4+2+1 = 11 rows, 12 cols; SAME gives 10 x 12: pad_begin floor(1/2) = 0.
    c.output("same", conv_transpose_ref(x, w2, None, [2, 2], [0, 0], [10, 12], [2, 1], 1))
    s = c.rng.uniform(0.5, 1.5, 6).astype(np.float32)
    sh = c.rng.standard_normal(6).astype(np.float32)
    c.const("s", s)
    c.const("sh", sh)
    c.node("InstanceNormalization", ["up", "s", "sh"], ["inorm"], epsilon=1e-3)
    inorm = instance_norm_ref(up.astype(np.float32), s, sh, 1e-3)
    c.output("inorm", inorm)
    c.node("LRN", ["inorm"], ["lrn"], size=3, alpha=2e-2, beta=0.6, bias=1.5)
    c.output("lrn", lrn_ref(inorm.astype(np.float32), 3, 2e-2, 0.6, 1.5))
    c.const("scales", np.array([1, 1, 2, 1.5], np.float32))
    c.node("Resize", ["inorm", "", "scales"], ["big"], mode="nearest")
    c.output("big", scales_resize(inorm.astype(np.float32), [1, 1, 2, 1.5], "nearest"))
    return c


def case_resize_modes():
    c = Case("resize_modes", 13, 202)
    x = c.input("x", c.rng.standard_normal((1, 2, 5, 7)))
    specs = [
        ("linear_half", dict(scales=[1, 1, 1.7, 0.6]), dict(mode="linear")),
        ("linear_pytorch", dict(sizes=[1, 2, 9, 1]),
         dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel")),
        ("cubic_corners", dict(scales=[1, 1, 2.0, 1.5]),
         dict(mode="cubic", coordinate_transformation_mode="align_corners")),
        ("cubic_exclude", dict(sizes=[1, 2, 3, 11]),
         dict(mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1)),
        ("nearest_ceil_asym", dict(scales=[1, 1, 2.5, 0.75]),
         dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="ceil")),
        ("nearest_floor_corners", dict(sizes=[1, 2, 8, 4]),
         dict(mode="nearest", coordinate_transformation_mode="align_corners",
              nearest_mode="floor")),
        ("crop", dict(sizes=[1, 2, 4, 4], roi=[0, 0, 0.2, -0.1, 1, 1, 0.9, 1.2]),
         dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
              extrapolation_value=-3.0)),
    ]
    for name, inputs, attrs in specs:
        ins = ["x", "", "", ""]
        if "roi" in inputs:
            ins[1] = c.const(name + "_roi", np.array(inputs["roi"], np.float32))
        if "scales" in inputs:
            ins[2] = c.const(name + "_scales", np.array(inputs["scales"], np.float32))
        else:
            ins[3] = c.const(name + "_sizes", np.array(inputs["sizes"], np.int64))
        while ins[-1] == "":
            ins.pop()
        c.node("Resize", ins, [name], **attrs)
        kw = dict(coord=attrs.get("coordinate_transformation_mode", "half_pixel"),
                  nearest=attrs.get("nearest_mode", "round_prefer_floor"),
                  a=attrs.get("cubic_coeff_a", -0.75),
                  exclude_outside=bool(attrs.get("exclude_outside", 0)),
                  extrapolation=attrs.get("extrapolation_value", 0.0))
        if "roi" in inputs:
            r = inputs["roi"]
            kw["rois"] = [(r[d], r[d + 4]) for d in range(4)]
        if "scales" in inputs:
            want = scales_resize(x, inputs["scales"], attrs["mode"], **kw)
        else:
            want = sizes_resize(x, inputs["sizes"], attrs["mode"], **kw)
        c.output(name, want)
    return c


def case_upsample_opset9():
    c = Case("upsample_opset9", 9, 203)
    x = c.input("x", c.rng.standard_normal((1, 3, 3, 4)))
    c.const("scales", np.array([1, 1, 3, 2], np.float32))
    c.node("Upsample", ["x", "scales"], ["nearest"])
    c.output("nearest", scales_resize(x, [1, 1, 3, 2], "nearest", coord="asymmetric",
                                      nearest="floor"))
    c.node("Upsample", ["x", "scales"], ["linear"], mode="linear")
    c.output("linear", scales_resize(x, [1, 1, 3, 2], "linear", coord="asymmetric"))
    return c


def case_reductions():
    c = Case("reductions", 13, 204)
    x = c.input("x", c.rng.uniform(0.2, 2.0, (2, 3, 4, 5)))
    ops = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
           "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]
    for i, op in enumerate(ops):
        axes = [[1], [-1, 0], [2, 3], [0, 1, 3]][i % 4]
        keep = i % 2
        name = f"{op}_{keep}"
        if op == "ReduceSum":  # axes input since opset 13
            c.node(op, ["x", c.const(name + "_axes", np.array(axes, np.int64))], [name],
                   keepdims=keep)
        else:
            c.node(op, ["x"], [name], axes=axes, keepdims=keep)
        c.output(name, reduce_ref(op, x, [a % 4 for a in axes], keep))
    c.node("ReduceMean", ["x"], ["mean_all"], keepdims=0)
    c.output("mean_all", reduce_ref("ReduceMean", x, [0, 1, 2, 3], 0))
    # Arg* with ties (integers), first and last index.
    t = c.input("t", c.rng.integers(0, 3, (3, 4, 5)))
    for kind in ("ArgMax", "ArgMin"):
        for last in (0, 1):
            name = f"{kind}_{last}"
            c.node(kind, ["t"], [name], axis=1, keepdims=last, select_last_index=last)
            c.output(name, arg_ref(kind, t, 1, last, last))
    c.node("ArgMax", ["x"], ["argmax_neg"], axis=-1, keepdims=0)
    c.output("argmax_neg", arg_ref("ArgMax", x, 3, 0, 0))
    # TopK along a middle and the last axis, largest and smallest, with ties.
    c.const("k3", np.array([3], np.int64))
    c.node("TopK", ["t", "k3"], ["top_v", "top_i"], axis=1)
    v, i = topk_ref(t, 3, 1, True)
    c.output("top_v", v)
    c.output("top_i", i)
    c.const("k2", np.array([2], np.int64))
    c.node("TopK", ["x", "k2"], ["low_v", "low_i"], axis=-1, largest=0)
    v, i = topk_ref(x, 2, 3, False)
    c.output("low_v", v)
    c.output("low_i", i)
    return c


def case_layer_norm():
    c = Case("layer_norm", 17, 205)
    x = c.input("x", c.rng.standard_normal((2, 3, 8)) * 2 + 1)
    s = c.rng.uniform(0.5, 1.5, 8).astype(np.float32)
    b = c.rng.standard_normal(8).astype(np.float32)
    c.const("s", s)
    c.const("b", b)
    c.node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], epsilon=1e-4)
    y, mean, inv = layer_norm_ref(x, s, b, -1, 1e-4)
    c.output("y", y)
    c.output("mean", mean)
    c.output("inv", inv)
    s2 = c.rng.uniform(0.5, 1.5, (1, 8)).astype(np.float32)  # broadcast over dim 1
    c.const("s2", s2)
    c.node("LayerNormalization", ["x", "s2"], ["y1", "", "inv1"], axis=1)
    y1, _, inv1 = layer_norm_ref(x, s2, None, 1, 1e-5)
    c.output("y1", y1)
    c.output("inv1", inv1)
    return c


def case_nms():
    """Overlapping boxes, so that the run-time row count is below the capacity (checked)."""
    c = Case("nms", 11, 206)
    centers = c.rng.uniform(0, 5, (2, 12, 2))
    sizes = c.rng.uniform(2, 6, (2, 12, 2))
    boxes = np.concatenate([centers - sizes / 2, centers + sizes / 2], axis=2)
    boxes = boxes[:, :, [1, 0, 3, 2]]  # [y1, x1, y2, x2]
    boxes[:, ::3] = boxes[:, ::3][:, :, [2, 3, 0, 1]]  # some with flipped corners
    bx = c.input("boxes", boxes)
    sc = c.input("scores", c.rng.uniform(0, 1, (2, 3, 12)))
    c.const("max", np.array([5], np.int64))
    c.const("iou", np.array([0.3], np.float32))
    c.const("score", np.array([0.25], np.float32))
    c.node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "score"], ["selected"])
    want = nms_ref(bx, sc, 5, np.float32(0.3), np.float32(0.25), False)
    c.output("selected", want, True)
    cbx = c.input("center_boxes", np.concatenate([centers, sizes], axis=2))
    c.node("NonMaxSuppression", ["center_boxes", "scores", "max"], ["selected_center"],
           center_point_box=1)
    want_center = nms_ref(cbx, sc, 5, 0.0, None, True)
    c.output("selected_center", want_center, True)
    capacity = 2 * 3 * 5
    assert 0 < len(want) < capacity and 0 < len(want_center) < capacity, "boxes too sparse"
    return c


def case_pool_ceil():
    c = Case("pool_ceil", 13, 207)
    x = c.input("x", c.rng.standard_normal((1, 2, 7, 8)))
    c.node("MaxPool", ["x"], ["max"], kernel_shape=[3, 2], strides=[2, 3], pads=[1, 0, 0, 0],
           ceil_mode=1)
    c.output("max", pool_ceil_ref(x, "max", [3, 2], [2, 3], [1, 0, 0, 0]))
    c.node("AveragePool", ["x"], ["avg"], kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1)
    c.output("avg", pool_ceil_ref(x, "avg", [2, 3], [2, 2], [0, 0, 0, 0]))
    return c


CASES = [case_decoder, case_resize_modes, case_upsample_opset9, case_reductions, case_layer_norm,
         case_nms, case_pool_ceil]


# --------------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------------

def compare(name, got, want):
    if got.shape != want.shape:
        return [f"output {name!r}: shape {list(got.shape)}, expected {list(want.shape)}"]
    if want.dtype == np.int64:
        if got.dtype != np.int64:
            return [f"output {name!r}: dtype {got.dtype}, expected int64"]
        bad = got != want
        if bad.any():
            return [f"output {name!r}: {int(bad.sum())}/{bad.size} elements differ, first at "
                    f"{list(np.argwhere(bad)[0])}"]
        return []
    if got.dtype != np.float32:
        return [f"output {name!r}: dtype {got.dtype}, expected float32"]
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not np.isfinite(g).all():
        return [f"output {name!r}: non-finite values"]
    over = np.abs(g - w) > ATOL + RTOL * np.abs(w)
    if over.any():
        i = tuple(np.argwhere(over)[0])
        return [f"output {name!r}: {int(over.sum())}/{over.size} elements off, first at "
                f"{list(i)}: got {g[i]:.7g}, expected {w[i]:.7g}"]
    return []


def run_case(tools, work, case):
    d = os.path.join(work, case.name)
    os.makedirs(d)
    model = os.path.join(d, "model.onnx")
    onnx.save(case.model(), model)
    plan = os.path.join(d, "model.jplan")
    res = run_tool([tools.convert, model, "-o", plan])
    if res.returncode != 0 or res.timed_out:
        return [f"jetplan-convert failed ({res.describe()}): {res.first_error()}"]
    args = [tools.run, plan, "--warmup", "0", "--iterations", "2",
            "--save-outputs", os.path.join(d, "out")]
    for name, arr in case.feeds.items():
        f = os.path.join(d, sanitize(name) + ".in.npy")
        np.save(f, arr)
        args += ["--input", f"{name}={f}"]
    res = run_tool(args)
    if res.returncode != 0 or res.timed_out:
        return [f"jetplan-run failed ({res.describe()}): {res.first_error()}"]
    problems = []
    for name, want in case.expected.items():
        path = os.path.join(d, "out", sanitize(name) + ".npy")
        if not os.path.exists(path):
            problems.append(f"output {name!r} was not written")
            continue
        problems += compare(name, np.load(path), want)
    return problems


def self_check():
    """The references against definitions that need no cleverness."""
    rng = np.random.default_rng(7)
    failures = 0

    def check(what, ok):
        nonlocal failures
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        failures += not ok

    # ConvTranspose is the adjoint of a convolution: <convT(x), y> == <x, conv(y)>.
    x = rng.standard_normal((1, 2, 4, 3))
    w = rng.standard_normal((2, 3, 3, 2))
    up = conv_transpose_ref(x, w, None, [2, 1], [1, 0], [8, 4], [1, 2], 1)
    y = rng.standard_normal(up.shape)
    conv = np.zeros_like(x)
    for ci, i0, i1 in np.ndindex(2, 4, 3):
        for m, k0, k1 in np.ndindex(3, 3, 2):
            o0, o1 = i0 * 2 - 1 + k0, i1 + 2 * k1
            if 0 <= o0 < 8 and 0 <= o1 < 4:
                conv[0, ci, i0, i1] += y[0, m, o0, o1] * w[ci, m, k0, k1]
    check("conv_transpose adjoint", np.isclose((up * y).sum(), (x * conv).sum()))
    # Resize: align_corners linear keeps the corners; an identity scale changes nothing.
    x = rng.standard_normal((1, 1, 4, 5))
    r = sizes_resize(x, [1, 1, 7, 9], "linear", coord="align_corners")
    check("resize corners", np.allclose(r[..., [0, -1], :][..., [0, -1]],
                                        x[..., [0, -1], :][..., [0, -1]]))
    for mode in ("nearest", "linear", "cubic"):
        check(f"resize identity {mode}", np.allclose(scales_resize(x, [1, 1, 1, 1], mode), x))
    # Cubic weights sum to one.
    m, _ = resize_matrix(5, 9, 1.8, 9.0, "cubic", "half_pixel", None)
    check("cubic rows sum to 1", np.allclose(m.sum(axis=1), 1))
    # NMS of disjoint boxes keeps them all, by score.
    b = np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5]]], np.float32)
    s = np.array([[[0.2, 0.9, 0.5]]], np.float32)
    check("nms disjoint", nms_ref(b, s, 5, 0.5, None, False).tolist() ==
          [[0, 0, 1], [0, 0, 2], [0, 0, 0]])
    for f in CASES:
        f().model()
        print(f"ok   model {f.__name__[5:]} passes the onnx checker")
    print(f"self-check: {failures} failure(s)")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--convert")
    ap.add_argument("--run")
    ap.add_argument("--workdir")
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--self-check", action="store_true")
    args = ap.parse_args()
    if args.self_check:
        return self_check()
    if not (args.convert and args.run and args.workdir):
        ap.error("--convert, --run and --workdir are required")
    args.convert, args.run = os.path.abspath(args.convert), os.path.abspath(args.run)
    work = os.path.abspath(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    only = set(args.only.split(",")) if args.only else None
    failed, passed = [], 0
    if self_check() != 0:
        failed.append("self-check")
    for f in CASES:
        case = f()
        if only and case.name not in only:
            continue
        problems = run_case(args, work, case)
        if problems:
            failed.append(case.name)
            print(f"FAIL  {case.name}")
            for p in problems:
                print(f"        {p}")
        else:
            passed += 1
            print(f"PASS  {case.name} ({len(case.expected)} outputs)")
    print(f"nn models: {passed}/{passed + len(failed)} passed"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
