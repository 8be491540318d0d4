#!/usr/bin/env python3
"""Ops that jetplan runs as other ops (issue 14): GatherND (converter/src/ops/gather.cc: index
arithmetic and a Gather), OneHot and EyeLike (where.cc), LpPool and GlobalLpPool (pool.cc),
MeanVarianceNormalization (reduce.cc), AffineGrid (gemm.cc), Col2Im (conv_transpose.cc), Det
(binary.cc),
against ONNX Runtime: models built with onnx.helper (fixed seeds), converted with
jetplan-convert, run with jetplan-run (CPU plan) and compared with ONNX Runtime on the same
inputs (gathers, one-hot rows and identity patterns bit for bit, the pools within e2e_common's
float tolerance); each also converted for --target orin-agx, which the converter writes only
after the runtime's deviceless load accepts the plan.
  tuples_2d       GatherND: data [3, 4, 5] float, run-time indices [2, 6, 2] with negatives.
  batch_dims_1    GatherND: data [2, 3, 4, 5], indices [2, 7, 1], batch_dims 1.
  full_int32      GatherND: int32 data [2, 3, 4], index tuples of all three dims: [2, 3] -> [2].
  scalar_out      GatherND: data [4, 5], indices [2]: a scalar output.
  batch_dims_2    GatherND: data [2, 3, 4, 5], indices [2, 3, 4, 1], batch_dims 2.
  constant_idx    GatherND: constant indices (negatives too) folded into one row list: the plan
                  holds no index arithmetic (2 steps: a Copy of the input's view and the Gather).
  one_hot_axis1   OneHot: int64 indices [3, 4] from -7 to 6 (out of range too), depth 5, axis 1,
                  values a run-time input.
  one_hot_float   OneHot: float32 indices [6] (integral; one out of range), float32 depth and
                  values constant.
  lp_pool_p1/p2/p3  LpPool 2-D: p 1 with strides and pads, p 2 with dilations, p 3 SAME_UPPER.
  global_lp_pool  GlobalLpPool p 3 on [2, 3, 4, 5, 6].
  mvn_axes_1_3    MeanVarianceNormalization over axes 1 and 3 of [2, 3, 4, 5].
  affine_grid_2d  AffineGrid: theta [2, 2, 3], size [2, 3, 5, 7]; affine_grid_3d_align: theta
                  [2, 3, 4], size [2, 1, 3, 4, 5], align_corners 1.
  eye_like        EyeLike [4, 6], k 2, dtype int32 from a float input.
  col2im_2d       Col2Im: image [7, 8], block [3, 2], strides [2, 3] (a row left over: output
                  padding), dilations [1, 2], pads [1, 0, 0, 1], 3 channels, batch 2.
  col2im_3d       Col2Im: image [4, 5, 6], block [2, 3, 2], stride 2 along the last dim.
  det_4x4, det_3x3, det_1x1  Det of [2, 3, 4, 4], [3, 3] (a scalar out) and [5, 1, 1] matrices.
  out_of_range    GatherND: a constant index past its dim: exit 1, the error names the node.
  det_5x5         Det of 5x5 matrices: exit 1, the error names the node and the limit.
    decomposed_ops_onnxruntime.py --convert BIN/jetplan-convert --run BIN/jetplan-run --workdir DIR
With --gpu-run the models are also converted for --gpu-target (default h100) and run there: bit
for bit where the CPU is (the float data are values float16 holds exactly), the pools within
3e-2 + 3e-2 |want| (float16 storage), as are MVN and AffineGrid.
"""
import os
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (ATOL, RTOL, Suite, check_error, gpu_problems, gpu_run_args, run_model,  # noqa: E402
                        run_tool, tool_args)

F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64


def indices_for(rng, data_shape, index_shape, batch_dims):
    k = index_shape[-1]
    dims = np.array(data_shape[batch_dims:batch_dims + k])
    raw = rng.integers(0, 2 * dims, size=index_shape)  # [0, 2d): shift half to [-d, 0)
    return np.where(raw >= dims, raw - 2 * dims, raw).astype(np.int64)


def model(name, data, index_shape, batch_dims, constant=None, elem=F):
    attrs = {"batch_dims": batch_dims} if batch_dims else {}
    inputs = [helper.make_tensor_value_info("data", elem, list(data.shape))]
    inits = []
    if constant is None:
        inputs.append(helper.make_tensor_value_info("indices", I64, index_shape))
    else:
        inits.append(numpy_helper.from_array(constant, "indices"))
    node = helper.make_node("GatherND", ["data", "indices"], ["y"], name=name, **attrs)
    graph = helper.make_graph([node], name, inputs,
                              [helper.make_tensor_value_info("y", elem, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def cases(rng):
    def floats(shape):  # values float16 holds exactly, so the GPU run compares bit for bit too
        return (rng.integers(-512, 512, size=shape) / 8).astype(np.float32)

    out = []
    for name, shape, index_shape, b, elem in (
            ("tuples_2d", (3, 4, 5), [2, 6, 2], 0, F),
            ("batch_dims_1", (2, 3, 4, 5), [2, 7, 1], 1, F),
            ("full_int32", (2, 3, 4), [2, 3], 0, I32),
            ("scalar_out", (4, 5), [2], 0, F),
            ("batch_dims_2", (2, 3, 4, 5), [2, 3, 4, 1], 2, F)):
        data = floats(shape) if elem == F else rng.integers(-1000, 1000, shape).astype(np.int32)
        idx = indices_for(rng, shape, index_shape, b)
        out.append((name, model(name, data, index_shape, b, elem=elem),
                    {"data": data, "indices": idx}))
    data = floats((3, 4, 5))
    idx = indices_for(rng, (3, 4, 5), [5, 2], 0)
    out.append(("constant_idx", model("constant_idx", data, [5, 2], 0, constant=idx),
                {"data": data}))
    # OneHot: depth a constant, values a run-time input or a constant.
    idx = rng.integers(-7, 7, size=(3, 4)).astype(np.int64)
    vals = np.array([-1.5, 2.25], np.float32)
    out.append(("one_hot_axis1", graph_model(
        "one_hot_axis1", [helper.make_node("OneHot", ["i", "depth", "v"], ["y"], axis=1)],
        [vi("i", I64, [3, 4]), vi("v", F, [2])], [const("depth", np.array([5], np.int64))]),
        {"i": idx, "v": vals}))
    # Integral values: ONNX Runtime versions disagree on a fractional index (1.32 truncates as
    # numpy and jetplan do, 1.30 does not).
    fidx = np.array([0.0, 2.0, -1.0, 4.0, -3.0, 3.0], np.float32)
    out.append(("one_hot_float", graph_model(
        "one_hot_float", [helper.make_node("OneHot", ["i", "depth", "v"], ["y"])],
        [vi("i", F, [6])], [const("depth", np.array(4.0, np.float32)),
                            const("v", np.array([7, -9], np.float32))]),
        {"i": fidx}))
    x = rng.normal(size=(2, 3, 9, 10)).astype(np.float32)
    for name, attrs in (("lp_pool_p1", dict(p=1, kernel_shape=[3, 2], strides=[2, 2],
                                           pads=[1, 0, 1, 1])),
                        ("lp_pool_p2", dict(kernel_shape=[3, 3], dilations=[2, 2])),
                        ("lp_pool_p3", dict(p=3, kernel_shape=[2, 3], auto_pad="SAME_UPPER"))):
        out.append((name, graph_model(name, [helper.make_node("LpPool", ["x"], ["y"], **attrs)],
                                      [vi("x", F, list(x.shape))], [], opset=18), {"x": x}))
    x5 = rng.normal(size=(2, 3, 4, 5, 6)).astype(np.float32)
    out.append(("global_lp_pool", graph_model(
        "global_lp_pool", [helper.make_node("GlobalLpPool", ["x"], ["y"], p=3)],
        [vi("x", F, list(x5.shape))], []), {"x": x5}))
    xm = rng.normal(size=(2, 3, 4, 5)).astype(np.float32) * 3 + 1
    out.append(("mvn_axes_1_3", graph_model(
        "mvn_axes_1_3", [helper.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[1, 3])],
        [vi("x", F, list(xm.shape))], []), {"x": xm}))
    for name, size, align in (("affine_grid_2d", [2, 3, 5, 7], 0),
                              ("affine_grid_3d_align", [2, 1, 3, 4, 5], 1)):
        spatial = len(size) - 2
        theta = rng.normal(size=(2, spatial, spatial + 1)).astype(np.float32)
        out.append((name, graph_model(
            name, [helper.make_node("AffineGrid", ["theta", "size"], ["y"], align_corners=align)],
            [vi("theta", F, list(theta.shape))], [const("size", np.array(size, np.int64))],
            opset=20), {"theta": theta}))
    for name, img, blk, attrs in (
            ("col2im_2d", [7, 8], [3, 2], dict(strides=[2, 3], dilations=[1, 2], pads=[1, 0, 0, 1])),
            ("col2im_3d", [4, 5, 6], [2, 3, 2], dict(strides=[1, 1, 2]))):
        r, st = len(img), attrs.get("strides", [1] * len(img))
        dl, pd = attrs.get("dilations", [1] * r), attrs.get("pads", [0] * (2 * r))
        count = int(np.prod([(img[i] + pd[i] + pd[i + r] - dl[i] * (blk[i] - 1) - 1) // st[i] + 1
                             for i in range(r)]))
        cols = rng.normal(size=(2, 3 * int(np.prod(blk)), count)).astype(np.float32)
        out.append((name, graph_model(
            name, [helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs)],
            [vi("x", F, list(cols.shape))],
            [const("image", np.array(img, np.int64)), const("block", np.array(blk, np.int64))],
            opset=18), {"x": cols}))
    for name, shape in (("det_4x4", (2, 3, 4, 4)), ("det_3x3", (3, 3)), ("det_1x1", (5, 1, 1))):
        n = shape[-1]
        mats = (3 * np.eye(n) + rng.normal(size=shape) * 0.5).astype(np.float32)
        out.append((name, graph_model(name, [helper.make_node("Det", ["x"], ["y"])],
                                      [vi("x", F, list(shape))], [], opset=11), {"x": mats}))
    e = rng.normal(size=(4, 6)).astype(np.float32)
    out.append(("eye_like", graph_model(
        "eye_like", [helper.make_node("EyeLike", ["x"], ["y"], k=2, dtype=I32)],
        [vi("x", F, [4, 6])], [], out_elem=I32), {"x": e}))
    return out


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def graph_model(name, nodes, inputs, inits, out_elem=F, opset=13):
    graph = helper.make_graph(nodes, name, inputs, [vi("y", out_elem, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def main():
    gpu_target = gpu_run_args()
    tools = tool_args(__doc__)
    suite = Suite()
    rng = np.random.default_rng(2024)
    for name, m, feeds in cases(rng):
        work = os.path.join(tools.workdir, name)
        expected = dict(zip(["y"], ort.InferenceSession(
            m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)))
        # Constant indices fold to one row list: a Copy of the input binding's view and the
        # Gather, no index arithmetic.
        problems = run_model(tools, work, m, feeds, expected,
                             steps=2 if name == "constant_idx" else None)
        gpu_plan = os.path.join(work, "model.orin-agx.jplan")
        res = run_tool([tools.convert, os.path.join(work, "model.onnx"), "--target", "orin-agx",
                        "-o", gpu_plan])
        if res.returncode != 0:
            problems.append(f"--target orin-agx: {res.first_error()}")
        if gpu_target:  # bit for bit where the CPU is, float16's tolerance for the rest
            exact = name.split("_")[0] in ("tuples", "batch", "full", "scalar", "constant",
                                           "one", "eye")
            tol = (RTOL, ATOL) if exact else (3e-2, 3e-2)
            problems += gpu_problems(tools, gpu_target, work, feeds, expected, *tol)
        suite.report(name, problems)
    # A constant index past its dim is refused at conversion, naming the node.
    work = os.path.join(tools.workdir, "out_of_range")
    os.makedirs(work, exist_ok=True)
    bad = model("gather_far", np.zeros((3, 4), np.float32), [1, 2], 0,
                constant=np.array([[1, 4]], np.int64))
    path = os.path.join(work, "model.onnx")
    with open(path, "wb") as f:
        f.write(bad.SerializeToString())
    res = run_tool([tools.convert, path, "-o", os.path.join(work, "model.jplan")])
    suite.report("out_of_range", check_error(res, "jetplan-convert: error:",
                                             mentions=("gather_far", "out of range")))
    # Det of 5x5 matrices is refused by name (no step factorizes them).
    work = os.path.join(tools.workdir, "det_5x5")
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "model.onnx")
    with open(path, "wb") as f:
        f.write(graph_model("det_5x5", [helper.make_node("Det", ["x"], ["y"], name="det5")],
                            [vi("x", F, [2, 5, 5])], [], opset=11).SerializeToString())
    res = run_tool([tools.convert, path, "-o", os.path.join(work, "model.jplan")])
    suite.report("det_5x5", check_error(res, "jetplan-convert: error:",
                                        mentions=("det5", "5x5", "up to 4x4")))
    return suite.summary("Decomposed ops against ONNX Runtime")


if __name__ == "__main__":
    sys.exit(main())
