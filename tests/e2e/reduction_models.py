#!/usr/bin/env python3
"""End-to-end tests of the ops that reduce or select along axes or windows: the Reduce* ops,
ArgMax/ArgMin, TopK, LayerNormalization (its mean and inverse deviation outputs),
NonMaxSuppression and pools with ceil_mode. Small ONNX models are converted with
jetplan-convert, run with jetplan-run, and every output compared with a numpy reference written
here, independently of jetplan's kernels.

Float outputs pass with |got - want| <= atol + rtol * |want| (rtol 1e-4, atol 1e-5); integer
outputs (indices, NMS selections) must be equal, shape included (NonMaxSuppression's rows are
the run-time count jetplan-run reports).

Usage: reduction_models.py --convert PATH --run PATH --workdir DIR [--only CASE,...]
       [--self-check]
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (ReferenceCase, main_with_self_check, self_check_models,  # noqa: E402
                        self_checker)


# --------------------------------------------------------------------------------------------
# numpy references
# --------------------------------------------------------------------------------------------

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

def layer_norm_ref(x, s, b, axis, eps):
    ax = tuple(range(axis % x.ndim, x.ndim))
    x = x.astype(np.float64)
    mean = x.mean(ax, keepdims=True)
    inv = 1.0 / np.sqrt(((x - mean) ** 2).mean(ax, keepdims=True) + eps)
    y = (x - mean) * inv * s + (b if b is not None else 0.0)
    return y, mean, inv

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

def case_reductions():
    c = ReferenceCase("reductions", 13, 204)
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
    c = ReferenceCase("layer_norm", 17, 205)
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
    c = ReferenceCase("nms", 11, 206)
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
    c = ReferenceCase("pool_ceil", 13, 207)
    x = c.input("x", c.rng.standard_normal((1, 2, 7, 8)))
    c.node("MaxPool", ["x"], ["max"], kernel_shape=[3, 2], strides=[2, 3], pads=[1, 0, 0, 0],
           ceil_mode=1)
    c.output("max", pool_ceil_ref(x, "max", [3, 2], [2, 3], [1, 0, 0, 0]))
    c.node("AveragePool", ["x"], ["avg"], kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1)
    c.output("avg", pool_ceil_ref(x, "avg", [2, 3], [2, 2], [0, 0, 0, 0]))
    return c


CASES = [case_reductions, case_layer_norm, case_nms, case_pool_ceil]


def self_check():
    """The references against definitions that need no cleverness."""
    check, failures = self_checker()
    # NMS of disjoint boxes keeps them all, by score.
    b = np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5]]], np.float32)
    s = np.array([[[0.2, 0.9, 0.5]]], np.float32)
    check("nms disjoint", nms_ref(b, s, 5, 0.5, None, False).tolist() ==
          [[0, 0, 1], [0, 0, 2], [0, 0, 0]])
    return self_check_models(CASES, failures())


def main():
    return main_with_self_check(__doc__, "reduction models", CASES, self_check, iterations=2)


if __name__ == "__main__":
    sys.exit(main())
