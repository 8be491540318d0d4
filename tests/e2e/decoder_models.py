#!/usr/bin/env python3
"""End-to-end tests of a decoder's ops: upsampling (ConvTranspose, Resize, Upsample) and the
norms between them (InstanceNormalization, LRN). Small ONNX models are converted with
jetplan-convert, run with jetplan-run, and every output compared with a numpy reference written
here, independently of jetplan's kernels.

The references are separable formulations where the kernels work per element (Resize applies
one interpolation matrix per dim; ConvTranspose scatters each kernel tap), so that a shared
misreading of ONNX is less likely. Float outputs pass with |got - want| <= atol + rtol * |want|
(rtol 1e-4, atol 1e-5).

Usage: decoder_models.py --convert PATH --run PATH --workdir DIR [--only CASE,...] [--self-check]
"""

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (ReferenceCase, main_with_self_check, self_check_models,  # noqa: E402
                        self_checker)


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

def instance_norm_ref(x, s, b, eps):
    ax = tuple(range(2, x.ndim))
    x = x.astype(np.float64)
    mean = x.mean(ax, keepdims=True)
    var = ((x - mean) ** 2).mean(ax, keepdims=True)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean) / np.sqrt(var + eps) * s.reshape(shape) + b.reshape(shape)

def lrn_ref(x, size, alpha, beta, bias):
    c = x.shape[1]
    x = x.astype(np.float64)
    sq = np.zeros_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - (size - 1) // 2), min(c - 1, ch + int(math.ceil((size - 1) / 2)))
        sq[:, ch] = (x[:, lo:hi + 1] ** 2).sum(axis=1)
    return x / (bias + alpha / size * sq) ** beta


# --------------------------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------------------------

def case_decoder():
    """ConvTranspose (groups, bias, pads, output_padding; output_shape; SAME_UPPER) feeding the
    norms and a nearest Resize."""
    c = ReferenceCase("decoder", 13, 201)
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
    c = ReferenceCase("resize_modes", 13, 202)
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
    c = ReferenceCase("upsample_opset9", 9, 203)
    x = c.input("x", c.rng.standard_normal((1, 3, 3, 4)))
    c.const("scales", np.array([1, 1, 3, 2], np.float32))
    c.node("Upsample", ["x", "scales"], ["nearest"])
    c.output("nearest", scales_resize(x, [1, 1, 3, 2], "nearest", coord="asymmetric",
                                      nearest="floor"))
    c.node("Upsample", ["x", "scales"], ["linear"], mode="linear")
    c.output("linear", scales_resize(x, [1, 1, 3, 2], "linear", coord="asymmetric"))
    return c


CASES = [case_decoder, case_resize_modes, case_upsample_opset9]


def self_check():
    """The references against definitions that need no cleverness."""
    rng = np.random.default_rng(7)
    check, failures = self_checker()

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
    return self_check_models(CASES, failures())


def main():
    return main_with_self_check(__doc__, "decoder models", CASES, self_check, iterations=2)


if __name__ == "__main__":
    sys.exit(main())
