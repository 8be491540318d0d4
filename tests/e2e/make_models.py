#!/usr/bin/env python3
"""Builds the end-to-end test models and their expected outputs.

Every case is a small ONNX model made with onnx.helper, random float32 weights and inputs from a
seeded numpy RNG, and expected outputs from the numpy reference (model_reference.py, through
graph_builder.Graph). The reference is written here on purpose (no jetplan code, no ONNX
runtime): a bug shared by the converter and its reference would otherwise pass unseen.
`--self-check` compares the reference operators with a second, independent formulation
(per-element loops) and onnx shape inference with the shapes the reference produced.

Output layout, per case: DIR/<case>/model.onnx, input<i>.npy, expected<j>.npy, case.json (the
manifest that run_e2e.py reads: inputs, outputs, converter arguments, tolerance).

Usage: make_models.py --out DIR [--only CASE,...]  |  make_models.py --self-check
"""

import argparse
import math
import os
import sys

import numpy as np
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_builder import Graph  # noqa: E402
from model_reference import (ACTIVATIONS, bn_ref, coerced_2d, conv_naive, conv_ref,  # noqa: E402
                             log_softmax_ref, matmul_naive, pool_naive, pool_ref, resolve_pads,
                             softmax_ref)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------

def case_mini_resnet():
    g = Graph("mini_resnet", seed=101)
    x = g.input("image", [2, 3, 16, 16])
    y = g.relu(g.bn(g.conv(x, 8, 3, pads=[1, 1, 1, 1], name="stem_conv"), name="stem_bn"))
    y = g.maxpool(y, [3, 3], strides=[2, 2], pads=[1, 1, 1, 1], name="stem_pool")  # 8x8
    # Basic block, identity shortcut.
    z = g.relu(g.bn(g.conv(y, 8, 3, pads=[1, 1, 1, 1], bias=False, name="b1_conv1")))
    z = g.bn(g.conv(z, 8, 3, pads=[1, 1, 1, 1], bias=False, name="b1_conv2"))
    y = g.relu(g.binary("Add", z, y, name="b1_add"), name="b1_relu")
    # Basic block, strided, projection shortcut.
    z = g.relu(g.bn(g.conv(y, 16, 3, strides=[2, 2], pads=[1, 1, 1, 1], name="b2_conv1")))
    z = g.bn(g.conv(z, 16, 3, pads=[1, 1, 1, 1], name="b2_conv2"))
    s = g.bn(g.conv(y, 16, 1, strides=[2, 2], bias=False, name="b2_proj"))
    y = g.relu(g.binary("Add", s, z, name="b2_add"), name="b2_relu")  # residual on the left
    y = g.flatten(g.global_pool("GlobalAveragePool", y, name="gap"), name="flatten")
    y = g.softmax(g.dense(y, 10, name="fc"), axis=-1, name="probs")
    g.output(y, "probs")
    return g


def case_conv_variants():
    g = Graph("conv_variants", seed=102)
    x = g.input("x", [2, 8, 11, 13])
    grouped = g.conv(x, 6, 3, pads=[1, 1, 1, 1], group=2, name="grouped")
    dw = g.conv(grouped, 12, 3, strides=[2, 2], pads=[1, 0, 1, 2], group=6, name="depthwise_x2")
    g.output(g.relu(dw), "depthwise_relu")
    g.output(g.conv(x, 4, 3, dilations=[2, 3], pads=[2, 0, 1, 3], name="dilated_asym"),
             "dilated_asym")
    g.output(g.conv(x, 3, [4, 3], strides=[2, 2], auto_pad="SAME_UPPER", name="same_upper"),
             "same_upper")
    g.output(g.conv(x, 3, [2, 2], auto_pad="SAME_LOWER", name="same_lower"), "same_lower")
    g.output(g.conv(x, 3, [3, 5], strides=[1, 2], auto_pad="VALID", name="valid"), "valid")
    g.output(g.conv(x, 5, [1, 5], strides=[3, 1], pads=[0, 2, 0, 2], bias=False,
                    name="no_bias_1x5"), "no_bias_1x5")
    g.output(g.conv(x, 2, [2, 2], pads=[3, 3, 3, 3], name="pad_beyond_kernel"),
             "pad_beyond_kernel")
    g.output(g.conv(x, 2, [2, 2], strides=[3, 4], name="stride_beyond_kernel"),
             "stride_beyond_kernel")
    # Depthwise with multiplier 1 and a Relu6-style Clip (a common fusion target).
    dw1 = g.conv(x, 8, 3, pads=[1, 1, 1, 1], group=8, name="depthwise")
    lo, hi = g.const(np.array(0.0, np.float32)), g.const(np.array(0.6, np.float32))
    g.output(g.node("Clip", [dw1, lo, hi], np.clip(g.vals[dw1], 0.0, 0.6), name="relu6"),
             "depthwise_clip")
    return g


def case_pooling():
    g = Graph("pooling", seed=103)
    x = g.input("x", [2, 3, 9, 10])
    p = [1, 1, 1, 1]
    g.output(g.avgpool(x, [3, 3], [2, 2], p, count_include_pad=0, name="avg_cip0"), "avg_cip0")
    g.output(g.avgpool(x, [3, 3], [2, 2], p, count_include_pad=1, name="avg_cip1"), "avg_cip1")
    pa = [0, 1, 1, 0]
    g.output(g.avgpool(x, [2, 3], [1, 2], pa, count_include_pad=0, name="avg_asym_cip0"),
             "avg_asym_cip0")
    g.output(g.avgpool(x, [2, 3], [1, 2], pa, count_include_pad=1, name="avg_asym_cip1"),
             "avg_asym_cip1")
    g.output(g.maxpool(x, [3, 3], [2, 2], p, name="max_pad"), "max_pad")
    g.output(g.maxpool(x, [2, 2], [1, 1], dilations=[2, 2], name="max_dilated"), "max_dilated")
    g.output(g.maxpool(x, [2, 4], [2, 3], [1, 0, 0, 2], name="max_asym"), "max_asym")
    g.output(g.global_pool("GlobalAveragePool", x, name="gap"), "gap")
    g.output(g.global_pool("GlobalMaxPool", x, name="gmp"), "gmp")
    # All values negative: padding must act as -inf for MaxPool, and not count for cip=0.
    neg = g.input("neg", [1, 2, 5, 5], data=-(np.abs(g.rng.standard_normal([1, 2, 5, 5])) + 0.1))
    g.output(g.maxpool(neg, [3, 3], [2, 2], [1, 1, 1, 1], name="max_pad_negative"),
             "max_pad_negative")
    g.output(g.global_pool("GlobalMaxPool", neg, name="gmp_negative"), "gmp_negative")
    g.output(g.avgpool(neg, [3, 3], [1, 1], [2, 2, 2, 2], count_include_pad=0,
                       name="avg_big_pad"), "avg_big_pad")
    return g


def case_matmul_broadcast():
    g = Graph("matmul_broadcast", seed=104)
    a = g.input("a", [2, 1, 4, 5])
    b = g.input("b", [3, 5, 6])
    c = g.input("c", [2, 3, 4, 2])
    g.output(g.matmul(a, b, name="batched"), "batched")  # [2,3,4,6]
    w = g.randn([5, 7], 0.5)
    bias = g.randn([7], 0.1, "b")
    g.output(g.binary("Add", g.matmul(a, w, name="by_weight"), bias, name="bias_add"),
             "by_weight_plus_bias")  # [2,1,4,7]
    left = g.randn([3, 4], 0.5)
    g.output(g.matmul(left, c, name="weight_on_left"), "weight_on_left")  # [2,3,3,2]
    g.output(g.matmul(g.input("m", [4, 5]), g.input("n", [5, 3]), name="plain"), "plain")
    return g


def case_gemm_bn():
    g = Graph("gemm_bn", seed=105)
    x = g.input("x", [4, 6])
    xt = g.input("xt", [6, 4])
    w1, c1 = g.randn([5, 6], 0.4), g.randn([5], 0.1, "b")
    g.output(g.gemm(x, w1, c1, trans_b=1, alpha=0.7, beta=1.3, name="gemm_tb"), "gemm_tb")
    w2, c2 = g.randn([6, 3], 0.4), g.randn([4, 1], 0.1, "b")
    g.output(g.gemm(xt, w2, c2, trans_a=1, beta=0.5, name="gemm_ta_col_bias"),
             "gemm_ta_col_bias")
    g.output(g.gemm(x, g.randn([6, 2], 0.4), name="gemm_no_c"), "gemm_no_c")
    g.output(g.gemm(xt, g.randn([3, 6], 0.4), g.const(np.array(0.25, np.float32), "b"),
                    trans_a=1, trans_b=1, name="gemm_ta_tb_scalar_c"), "gemm_ta_tb_scalar_c")
    g.output(g.gemm(x, g.randn([6, 3], 0.4), g.randn([4, 3], 0.1, "b"), name="gemm_full_c"),
             "gemm_full_c")
    # BatchNormalization that cannot fold into a Conv: on a graph input and after an Add.
    f = g.input("feat", [2, 3, 4, 4])
    g.output(g.bn(f, eps=1e-3, name="bn_input"), "bn_input")
    s = g.binary("Add", f, g.randn([3, 1, 1], 0.5), name="pre_bn_add")
    g.output(g.bn(s, name="bn_after_add"), "bn_after_add")
    g.output(g.bn(x, name="bn_2d"), "bn_2d")
    return g


def case_inception():
    g = Graph("inception", seed=106)
    x = g.input("x", [1, 8, 12, 12])
    b1 = g.relu(g.conv(x, 4, 1, name="b1x1"))
    b2 = g.relu(g.conv(g.relu(g.conv(x, 6, 1, name="b3x3_reduce")), 8, 3, pads=[1, 1, 1, 1],
                       name="b3x3"))
    b3 = g.relu(g.conv(g.relu(g.conv(x, 2, 1, name="b5x5_reduce")), 4, 5, pads=[2, 2, 2, 2],
                       name="b5x5"))
    b4 = g.relu(g.conv(g.maxpool(x, [3, 3], [1, 1], [1, 1, 1, 1], name="pool"), 4, 1,
                       name="pool_proj"))
    g.output(g.concat([b1, b2, b3, b4], axis=1, name="concat_channels"), "mixed")
    g.output(g.concat([b1, b4, b1], axis=-1, name="concat_width"), "concat_width")
    return g


def case_shape_chain():
    g = Graph("shape_chain", seed=107)
    x = g.input("x", [2, 4, 3, 3])
    y = g.conv(x, 4, 1, name="conv")
    shp = g.node("Shape", [y], np.array(g.vals[y].shape, np.int64), name="shape")
    idx = g.const(np.array(0, np.int64), "index")
    batch = g.node("Gather", [shp, idx], np.array(g.vals[shp][0], np.int64), name="gather",
                   axis=0)
    axes = g.const(np.array([0], np.int64), "axes")
    batch1 = g.node("Unsqueeze", [batch, axes], g.vals[batch].reshape(1), name="unsqueeze_dim")
    minus1 = g.node("Constant", [], np.array([-1], np.int64), name="minus_one",
                    value=numpy_helper.from_array(np.array([-1], np.int64)))
    target = g.node("Concat", [batch1, minus1], np.array([2, -1], np.int64), name="new_shape",
                    axis=0)
    flat = g.reshape(y, target, name="reshape")  # [2, 36]
    logits = g.binary("Add", g.matmul(flat, g.randn([36, 5], 0.2), name="fc"),
                      g.randn([5], 0.1, "b"), name="fc_bias")
    g.output(g.softmax(logits, axis=1, name="softmax"), "probs")
    # Pure data-movement ops.
    u = g.node("Unsqueeze", [x, g.const(np.array([1], np.int64), "axes")],
               g.vals[x][:, None], name="unsqueeze")
    s = g.node("Squeeze", [u, g.const(np.array([1], np.int64), "axes")], g.vals[x],
               name="squeeze")
    i = g.node("Identity", [s], g.vals[x], name="identity")
    d = g.node("Dropout", [i], g.vals[x], name="dropout")
    g.output(g.flatten(d, axis=2, name="flatten_axis2"), "flat_axis2")  # [8, 9]
    g.output(g.reshape(x, g.const(np.array([0, -1, 3], np.int64), "shape"), name="reshape_0"),
             "reshape_keep_dim")  # [2, 12, 3]
    ones = g.node("Unsqueeze", [x, g.const(np.array([0, 3], np.int64), "axes")],
                  g.vals[x].reshape(1, 2, 4, 1, 3, 3), name="unsqueeze_two")
    g.output(g.node("Squeeze", [ones], g.vals[x], name="squeeze_all"), "squeeze_all")
    g.output(g.flatten(x, axis=0, name="flatten_axis0"), "flat_axis0")  # [1, 72]
    g.output(g.flatten(x, axis=-1, name="flatten_axis_m1"), "flat_axis_m1")  # [24, 3]
    return g


def case_broadcast_binary():
    g = Graph("broadcast_binary", seed=108)
    a = g.input("a", [2, 3, 4, 5])
    b = g.input("b", [3, 1, 5])
    c = g.input("c", [4, 1])
    den = g.rng.uniform(0.5, 2.0, [1, 3, 1, 1]) * g.rng.choice([-1.0, 1.0], [1, 3, 1, 1])
    d = g.input("den", [1, 3, 1, 1], data=den)
    pos = g.input("pos", [3, 4, 5], data=g.rng.uniform(0.5, 2.0, [3, 4, 5]))
    g.output(g.binary("Add", a, b, name="add"), "add")
    g.output(g.binary("Sub", c, a, name="sub_left_small"), "sub_left_small")
    g.output(g.binary("Mul", a, g.const(np.array(1.5, np.float32), "scalar"), name="mul_scalar"),
             "mul_scalar")
    g.output(g.binary("Div", a, d, name="div"), "div")
    g.output(g.binary("Max", a, b, name="max"), "max")
    g.output(g.binary("Min", c, a, name="min"), "min")
    expo = g.const(np.array([0.5, 1.0, 2.0, 3.0, -1.5], np.float32), "exponent")
    g.output(g.binary("Pow", pos, expo, name="pow"), "pow")
    g.output(g.binary("Add", b, c, name="both_broadcast"), "both_broadcast")  # [3,4,5]
    g.output(g.relu(g.binary("Sub", a, g.randn([1, 1, 1, 5], 0.5), name="sub_const"),
                    name="sub_relu"), "sub_relu")
    return g


def case_softmax_opset11():
    g = Graph("softmax_opset11", seed=109, opset=11)
    x = g.input("x", [2, 3, 4, 5])
    g.output(g.softmax(x, name="softmax_default"), "softmax_default")  # axis 1, coerced to 2-D
    g.output(g.softmax(x, axis=2, name="softmax_axis2"), "softmax_axis2")
    g.output(g.softmax(x, axis=-1, name="softmax_last"), "softmax_last")
    g.output(g.softmax(x, log=True, name="log_softmax_default"), "log_softmax_default")
    return g


def case_two_in_two_out():
    g = Graph("two_in_two_out", seed=110)
    a = g.input("input:0", [1, 4, 6, 6])
    b = g.input("aux input", [1, 4, 6, 6])
    y = g.relu(g.binary("Add", g.conv(a, 4, 3, pads=[1, 1, 1, 1], name="conv"), b,
                        name="residual"), name="relu")
    g.output(y, "out/main:0")
    g.output(g.act("Sigmoid", g.binary("Mul", a, b, name="mul"), name="gate"), "out.aux-1")
    return g


def case_conv1d():
    g = Graph("conv1d", seed=111)
    x = g.input("signal", [2, 4, 20])
    y = g.relu(g.conv(x, 6, 5, strides=[2], pads=[1, 2], name="conv_s2"))
    y = g.maxpool(y, [3], [1], [1, 1], name="pool")
    y = g.conv(y, 6, 3, dilations=[3], pads=[3, 3], name="conv_dil3")
    g.output(g.avgpool(y, [2], [2], name="avg"), "avg")
    g.output(g.global_pool("GlobalAveragePool", y, name="gap"), "gap")
    g.output(g.conv(x, 8, 3, pads=[0, 2], group=4, name="grouped"), "grouped")
    return g


def case_conv3d():
    g = Graph("conv3d", seed=112)
    x = g.input("volume", [1, 2, 5, 6, 7])
    y = g.relu(g.bn(g.conv(x, 4, 3, strides=[1, 2, 2], pads=[1] * 6, name="conv")))
    y = g.maxpool(y, [2, 2, 2], [2, 2, 2], name="pool")
    g.output(g.conv(y, 3, 1, name="conv1x1"), "head")
    g.output(g.avgpool(x, [2, 2, 2], [1, 1, 1], [0, 1, 1, 1, 0, 0], count_include_pad=0,
                       name="avg"), "avg")
    g.output(g.conv(x, 2, [1, 2, 3], dilations=[1, 2, 1], group=2, name="dw3d"), "dw3d")
    return g


def case_activations():
    g = Graph("activations", seed=113, opset=14)  # HardSwish is opset 14
    x = g.input("x", [2, 3, 4, 5], data=np.random.default_rng(113).standard_normal([2, 3, 4, 5])
                * 3.0)
    for op, attrs in [("Sigmoid", {}), ("Tanh", {}), ("LeakyRelu", dict(alpha=0.1)),
                      ("HardSigmoid", dict(alpha=0.3, beta=0.4)), ("HardSwish", {}),
                      ("Elu", dict(alpha=0.8)), ("Relu", {})]:
        g.output(g.act(op, x, name=op.lower(), **attrs), op.lower())
    lo, hi = g.const(np.array(-0.5, np.float32)), g.const(np.array(0.7, np.float32))
    g.output(g.node("Clip", [x, lo, hi], np.clip(g.vals[x], -0.5, 0.7), name="clip"), "clip")
    g.output(g.node("Clip", [x, "", hi], np.minimum(g.vals[x], 0.7), name="clip_max_only"),
             "clip_max_only")
    g.output(g.softmax(x, axis=1, name="softmax_axis1"), "softmax_axis1")
    g.output(g.softmax(x, axis=-2, log=True, name="log_softmax_axis_m2"), "log_softmax_axis_m2")
    # Activations after a Conv (fusable into its epilogue).
    c = g.conv(x, 4, 3, pads=[1, 1, 1, 1], name="conv")
    g.output(g.act("LeakyRelu", c, name="conv_leaky", alpha=0.2), "conv_leaky")
    c2 = g.conv(x, 4, 1, name="conv2")
    g.output(g.act("Sigmoid", c2, name="conv_sigmoid"), "conv_sigmoid")
    return g


def case_dynamic_batch():
    g = Graph("dynamic_batch", seed=114)
    x = g.input("x", [2, 3, 8, 8], dims=["batch", 3, 8, 8])
    y = g.relu(g.conv(x, 4, 3, pads=[1, 1, 1, 1], name="conv"))
    y = g.flatten(g.global_pool("GlobalAveragePool", y, name="gap"), name="flatten")
    g.output(g.dense(y, 3, name="fc"), "logits")
    g.symbolic_batch = "batch"
    g.convert_args = ["--shape", "x:2x3x8x8"]
    return g


def case_fusion_edges():
    """Patterns next to the fusions (BN folding, conv + bias + residual + activation) that must not
    be fused, or only with care: shared intermediates, activation before the add, broadcast or
    non-add 'residuals', the residual on the left, a tensor added to itself."""
    g = Graph("fusion_edges", seed=115)
    x = g.input("x", [1, 4, 6, 6])
    p1 = [1, 1, 1, 1]
    c1 = g.conv(x, 4, 3, pads=p1, name="shared_conv")
    g.output(c1, "conv_also_output")  # read by a Relu, an Add and the graph
    g.output(g.relu(c1, name="relu_of_shared"), "relu_of_shared")
    c2 = g.conv(x, 4, 3, pads=p1, name="conv_relu_first")
    g.output(g.binary("Add", g.relu(c2, name="relu_before_add"), x, name="add_after_relu"),
             "relu_then_add")
    c3 = g.conv(x, 4, 1, name="conv_bcast")
    g.output(g.relu(g.binary("Add", c3, g.randn([1, 4, 1, 1], 0.5), name="add_bcast"),
                    name="relu_bcast"), "add_broadcast_const")
    c4 = g.conv(x, 4, 1, name="conv_sub")
    g.output(g.relu(g.binary("Sub", c4, x, name="sub_residual"), name="relu_sub"),
             "sub_not_add")
    c5 = g.conv(x, 4, 1, name="conv_sub_left")
    g.output(g.binary("Sub", x, c5, name="sub_left"), "sub_left")
    b6 = g.bn(g.conv(x, 4, 3, pads=p1, bias=False, name="conv_bn_shared"), name="bn_shared")
    g.output(b6, "bn_shared")
    g.output(g.relu(g.binary("Add", x, b6, name="residual_left"), name="relu_left"),
             "residual_left")
    c7 = g.conv(x, 4, 1, name="conv_self")
    g.output(g.relu(g.binary("Add", c7, c7, name="add_self"), name="relu_self"), "add_self")
    c8 = g.conv(x, 4, 3, pads=p1, name="conv_res_shared")
    g.output(g.relu(g.binary("Add", c8, c1, name="add_conv_conv"), name="relu_conv_conv"),
             "residual_is_shared_conv")
    g.output(g.dense(g.flatten(c8, name="flatten_spatial"), 5, name="fc"), "flatten_gemm")
    c9 = g.conv(x, 4, 1, name="conv_mul")
    g.output(g.relu(g.binary("Mul", c9, g.const(np.array(-2.0, np.float32), "k"),
                             name="mul_const"), name="relu_mul"), "mul_not_fused")
    c10 = g.conv(x, 4, 1, name="conv_relu_relu")
    g.output(g.relu(g.relu(c10, name="relu_a"), name="relu_b"), "relu_relu")
    g.output(g.bn(g.bn(g.conv(x, 4, 1, name="conv_bn_bn"), name="bn_a"), name="bn_b"), "bn_bn")
    for op, k in (("Div", g.uniform([1, 4, 1, 1], 0.5, 2.0, "k")),
                  ("Max", g.const(np.array(0.3, np.float32), "k")),
                  ("Min", g.randn([4, 1, 1], 0.5, "k"))):
        c = g.conv(x, 4, 1, name=f"conv_{op.lower()}")
        g.output(g.binary(op, c, k, name=f"{op.lower()}_const"), f"{op.lower()}_not_fused")
    c11 = g.conv(x, 4, 3, pads=p1, name="conv_add_sigmoid")
    g.output(g.act("Sigmoid", g.binary("Add", c11, x, name="add_sig"), name="sigmoid_after_add"),
             "add_then_sigmoid")
    return g


def case_gemm_fusion_edges():
    """MatMul/Gemm followed by adds that may become Gemm's C, and ops that must not."""
    g = Graph("gemm_fusion_edges", seed=118)
    a = g.input("a", [2, 3, 4, 5])
    x = g.input("x", [4, 5])
    full = g.input("full", [2, 3, 4, 6])
    col = g.input("col", [4, 1])
    w = g.randn([5, 6], 0.5)

    def mm(inp, name):
        return g.matmul(inp, w, name=name)

    g.output(g.relu(g.binary("Add", mm(a, "mm_bias"), g.randn([6], 0.1, "b"), name="add_bias"),
                    name="relu_bias"), "batched_bias_relu")
    g.output(g.binary("Add", mm(a, "mm_mid"), g.randn([3, 1, 6], 0.5, "c"), name="add_mid"),
             "batched_add_middle_broadcast")
    g.output(g.binary("Add", full, mm(a, "mm_full"), name="add_full"), "batched_add_full_left")
    g.output(g.binary("Sub", mm(a, "mm_sub"), g.randn([6], 0.5, "c"), name="sub_bias"),
             "batched_sub_not_add")
    g.output(g.binary("Mul", mm(x, "mm_mul"), g.randn([6], 0.5, "c"), name="mul_bias"),
             "mul_not_add")
    g.output(g.binary("Add", mm(x, "mm_col"), col, name="add_col"), "add_column_input")
    gem = g.gemm(x, g.randn([6, 5], 0.5), g.randn([6], 0.1, "b"), trans_b=1, alpha=0.5,
                 name="gemm_has_c")
    g.output(g.binary("Add", gem, g.randn([4, 6], 0.5, "c"), name="add_after_c"),
             "gemm_with_c_then_add")
    gem2 = g.gemm(x, w, alpha=2.0, name="gemm_alpha")
    g.output(g.act("Tanh", g.binary("Add", gem2, g.randn([1, 6], 0.5, "c"), name="add_alpha"),
                   name="tanh_alpha"), "gemm_alpha_add_tanh")
    return g


def case_graph_io_edges():
    """Outputs that are inputs, constants, or also read inside the graph."""
    g = Graph("graph_io_edges", seed=116)
    x = g.input("x", [1, 3, 4, 4])
    y = g.input("y", [1, 3, 4, 4])
    g.output(x, "x_passthrough")
    r = g.relu(g.binary("Add", x, y, name="add"), name="r")
    g.output(r)  # under its own name
    g.output(r, "r_again")
    g.output(g.binary("Mul", r, x, name="r_times_x"), "r_times_x")
    g.output(g.randn([2, 3], 1.0, "constant"), "constant_out")
    g.output(g.binary("Mul", x, g.input("scalar", []), name="times_scalar_input"),
             "times_scalar_input")
    g.output(g.concat([x, y, x], axis=0, name="concat_batch"), "concat_batch")
    g.output(g.concat([g.randn([1, 2, 4, 4], 1.0, "c"), y], axis=-3, name="concat_const"),
             "concat_const")
    g.output(y)  # a graph input that is also a graph output, no node in between
    g.output(g.randn([3], 1.0, "bare_constant"))  # an initializer as a graph output
    return g


def case_small_convnet():
    """A less tiny network (48x48, up to 32 channels): bigger arena, more reuse."""
    g = Graph("small_convnet", seed=117)
    x = g.input("x", [1, 3, 48, 48])
    y = g.relu(g.bn(g.conv(x, 16, 3, strides=[2, 2], pads=[1, 1, 1, 1], bias=False)))
    y = g.relu(g.bn(g.conv(y, 16, 3, pads=[1, 1, 1, 1], group=16, bias=False)))  # depthwise
    y = g.relu(g.bn(g.conv(y, 32, 1, bias=False)))
    skip = y
    y = g.relu(g.bn(g.conv(y, 32, 3, pads=[1, 1, 1, 1], bias=False)))
    y = g.bn(g.conv(y, 32, 3, pads=[1, 1, 1, 1], bias=False))
    y = g.relu(g.binary("Add", y, skip))
    y = g.avgpool(y, [2, 2], [2, 2])
    y = g.act("HardSigmoid", g.conv(y, 32, 3, strides=[2, 2], pads=[1, 1, 1, 1]))
    y = g.flatten(g.global_pool("GlobalMaxPool", y))
    g.output(g.softmax(g.dense(y, 10), name="probs"), "probs")
    return g


CASES = [case_mini_resnet, case_conv_variants, case_pooling, case_matmul_broadcast, case_gemm_bn,
         case_inception, case_shape_chain, case_broadcast_binary, case_softmax_opset11,
         case_two_in_two_out, case_conv1d, case_conv3d, case_activations, case_dynamic_batch,
         case_fusion_edges, case_gemm_fusion_edges, case_graph_io_edges, case_small_convnet]


def case_names():
    return [f.__name__[len("case_"):] for f in CASES]


def generate(out_dir, only=None):
    made = []
    for f in CASES:
        name = f.__name__[len("case_"):]
        if only and name not in only:
            continue
        made.append(f().save(out_dir))
    return made


# --------------------------------------------------------------------------------------------
# Self-check
# --------------------------------------------------------------------------------------------

def self_check():
    rng = np.random.default_rng(7)
    failures = 0

    def check(what, a, b):
        nonlocal failures
        ok = a.shape == b.shape and np.allclose(a, b, rtol=1e-10, atol=1e-12)
        err = float(np.max(np.abs(a - b))) if a.shape == b.shape and a.size else 0.0
        print(f"{'ok  ' if ok else 'FAIL'} {what}: shape {a.shape} vs {b.shape}, max err {err:.2e}")
        failures += not ok

    conv_cases = [
        # (x shape, cout, kernel, strides, pads, dilations, group)
        ((2, 4, 7, 8), 6, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1),
        ((1, 4, 9, 7), 4, [3, 2], [2, 1], [0, 1, 2, 0], [1, 2], 2),
        ((1, 6, 8, 8), 12, [3, 3], [2, 2], [1, 0, 1, 2], [1, 1], 6),
        ((1, 3, 10, 9), 2, [3, 3], [1, 3], [2, 0, 1, 3], [2, 3], 1),
        ((2, 4, 15), 6, [5], [2], [1, 2], [1], 2),
        ((1, 2, 4, 5, 6), 4, [3, 2, 3], [1, 2, 2], [1, 0, 1, 1, 1, 0], [1, 1, 2], 2),
    ]
    for xs, m, k, s, p, d, grp in conv_cases:
        x = rng.standard_normal(xs)
        w = rng.standard_normal((m, xs[1] // grp) + tuple(k))
        b = rng.standard_normal(m)
        check(f"conv x{xs} k{k} s{s} p{p} d{d} g{grp}", conv_ref(x, w, b, s, p, d, grp),
              conv_naive(x, w, b, s, p, d, grp))

    for in_sp, k, s, d, mode, expect in [
            ([11, 13], [4, 3], [2, 2], [1, 1], "SAME_UPPER", [1, 1, 2, 1]),
            ([11, 13], [2, 2], [1, 1], [1, 1], "SAME_LOWER", [1, 1, 0, 0]),
            ([10], [3], [1], [2], "SAME_UPPER", [2, 2]),
            ([7, 7], [3, 3], [1, 1], [1, 1], "VALID", [0, 0, 0, 0])]:
        got = resolve_pads(in_sp, k, s, d, None, mode)
        ok = got == expect
        print(f"{'ok  ' if ok else 'FAIL'} auto_pad {mode} in {in_sp} k {k} s {s}: {got}")
        failures += not ok

    pool_cases = [
        ((2, 3, 9, 10), [3, 3], [2, 2], [1, 1, 1, 1], None),
        ((1, 2, 9, 10), [2, 3], [1, 2], [0, 1, 1, 0], None),
        ((1, 2, 9, 10), [2, 2], [1, 1], [0, 0, 0, 0], [2, 2]),
        ((1, 2, 9, 10), [2, 4], [2, 3], [1, 0, 0, 2], None),
        ((2, 3, 11), [3], [2], [1, 1], None),
        ((1, 2, 5, 6, 7), [2, 2, 2], [1, 1, 1], [0, 1, 1, 1, 0, 0], None),
    ]
    for xs, k, s, p, d in pool_cases:
        x = rng.standard_normal(xs)
        check(f"maxpool x{xs} k{k} s{s} p{p} d{d}", pool_ref(x, "max", k, s, p, d),
              pool_naive(x, "max", k, s, p, d))
        if d is None:
            for cip in (0, 1):
                check(f"avgpool x{xs} k{k} s{s} p{p} cip{cip}",
                      pool_ref(x, "avg", k, s, p, None, cip),
                      pool_naive(x, "avg", k, s, p, None, cip))

    for sa, sb in [((2, 1, 4, 5), (3, 5, 6)), ((3, 4), (2, 3, 4, 2)), ((4, 5), (5, 3))]:
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)
        check(f"matmul {sa} x {sb}", np.matmul(a, b), matmul_naive(a, b))

    # Softmax: rows sum to one; the opset-11 coercion equals a softmax over the flattened tail.
    x = rng.standard_normal((2, 3, 4, 5))
    s = coerced_2d(softmax_ref, x, 1)
    check("softmax opset 11 sums", s.reshape(2, -1).sum(axis=1), np.ones(2))
    e = np.exp(x.reshape(2, -1))
    check("softmax opset 11 vs exp/sum", s, (e / e.sum(axis=1, keepdims=True)).reshape(x.shape))
    check("log_softmax vs log(softmax)", log_softmax_ref(x, 2), np.log(softmax_ref(x, 2)))

    # BatchNorm against its definition per channel.
    xb = rng.standard_normal((2, 3, 4))
    sc, bi, mu, va = (rng.uniform(0.5, 1.5, 3) for _ in range(4))
    ref = np.stack([(xb[:, c] - mu[c]) / math.sqrt(va[c] + 1e-5) * sc[c] + bi[c]
                    for c in range(3)], axis=1)
    check("batchnorm", bn_ref(xb, sc, bi, mu, va, 1e-5), ref)

    # Activations at known points.
    pts = np.array([-3.0, -0.5, 0.0, 0.5, 3.0])
    check("hardswish", ACTIVATIONS["HardSwish"](pts, {}),
          np.array([0.0, -0.5 * 2.5 / 6, 0.0, 0.5 * 3.5 / 6, 3.0]))
    check("hardsigmoid", ACTIVATIONS["HardSigmoid"](pts, dict(alpha=0.3, beta=0.4)),
          np.array([0.0, 0.25, 0.4, 0.55, 1.0]))

    # Every model builds, passes the onnx checker and shape inference agrees with the reference.
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for d in generate(tmp):
            print(f"ok   model {os.path.basename(d)} (checker + inferred shapes)")

    print(f"self-check: {failures} failure(s)")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--self-check", action="store_true")
    ap.add_argument("--list", action="store_true", help="print the case names")
    args = ap.parse_args()
    if args.list:
        print("\n".join(case_names()))
        return 0
    if args.self_check:
        return self_check()
    if not args.out:
        ap.error("--out is required")
    only = set(args.only.split(",")) if args.only else None
    for d in generate(args.out, only):
        print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
