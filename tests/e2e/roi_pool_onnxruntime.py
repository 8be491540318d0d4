#!/usr/bin/env python3
"""RoiAlign and MaxRoiPool (the RoiPool family: converter/src/ops/roi_pool.cc, kernels/roi_pool.h)
against ONNX Runtime: models built with onnx.helper (fixed seeds), converted with jetplan-convert,
run with jetplan-run (CPU plan) and compared with ONNX Runtime on the same inputs (float32, within
e2e_common's float tolerance; ONNX Runtime's bits are expected: the twin computes as it does);
each also converted for --target orin-agx, which the converter writes only after the runtime's
deviceless load accepts the plan. Boxes reach past X and some are malformed (x2 < x1, within a
pixel: ONNX Runtime refuses half_pixel boxes whose both extents are a bin or more negative).
  align_<mode>_<ctm>_sr<N>  RoiAlign opset 16, X [2, 3, 10, 12], 20 boxes, output 3x4,
                  mode avg or max, coordinate_transformation_mode half_pixel or
                  output_half_pixel, sampling_ratio 0 (adaptive) or 2, spatial_scale 0.5.
  align_opset10_<mode>      RoiAlign opset 10 (no coordinate_transformation_mode: as
                  output_half_pixel), sampling_ratio 0, spatial_scale 1.3.
  align_fpn       RoiAlign of a Conv's output (NHWC in GPU plans), 7x7, sampling_ratio 2,
                  spatial_scale 1/4, the boxes from a Relu (computed in the plan).
  max_roi_pool_<ph>x<pw>    MaxRoiPool, X [2, 3, 10, 12], 20 boxes with fractional batch
                  indices and corners at exact halves (rounded away from zero).
  bad_rois_shape  RoiAlign with rois [5, 5]: refused at conversion, naming the node.
    roi_pool_onnxruntime.py --convert BIN/jetplan-convert --run BIN/jetplan-run --workdir DIR
With --gpu-run the models are also converted for --gpu-target (default h100) and run there,
within 3e-2 + 3e-2 |want| (float16 storage of X and Y).
"""
import os
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (Suite, check_error, gpu_problems, gpu_run_args, run_model, run_tool,  # noqa: E402
                        tool_args)

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(name, nodes, inputs, inits=(), opset=16):
    graph = helper.make_graph(nodes, name, inputs, [vi("y", F, None)], list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def boxes(rng, r, h, w, scale):
    """r boxes (x1, y1, x2, y2) in the coordinates `scale` maps onto an h x w image, reaching a
    third past it; every fourth malformed by up to 0.4 of a pixel."""
    x1 = rng.uniform(-w / 3, w, r) / scale
    y1 = rng.uniform(-h / 3, h, r) / scale
    x2 = x1 + rng.uniform(0, 0.7 * w, r) / scale
    y2 = y1 + rng.uniform(0, 0.7 * h, r) / scale
    bad = np.arange(r) % 4 == 0
    x2[bad] = x1[bad] - rng.uniform(0, 0.4, bad.sum())
    y2[bad] = y1[bad] - rng.uniform(0, 0.4, bad.sum())
    return np.stack([x1, y1, x2, y2], 1).astype(np.float32)


def cases(rng):
    out = []
    x = rng.normal(size=(2, 3, 10, 12)).astype(np.float32)
    r = 20
    bi = rng.integers(0, 2, r).astype(np.int64)
    ins = [vi("x", F, list(x.shape)), vi("rois", F, [r, 4]), vi("bi", I64, [r])]
    for mode in ("avg", "max"):
        for ctm in ("half_pixel", "output_half_pixel"):
            for sr in (0, 2):
                name = f"align_{mode}_{ctm}_sr{sr}"
                rois = boxes(rng, r, 10, 12, 0.5)
                node = helper.make_node("RoiAlign", ["x", "rois", "bi"], ["y"], mode=mode,
                                        coordinate_transformation_mode=ctm, output_height=3,
                                        output_width=4, sampling_ratio=sr, spatial_scale=0.5)
                out.append((name, model(name, [node], ins), {"x": x, "rois": rois, "bi": bi}))
        name = f"align_opset10_{mode}"
        rois = boxes(rng, r, 10, 12, 1.3)
        node = helper.make_node("RoiAlign", ["x", "rois", "bi"], ["y"], mode=mode,
                                output_height=2, output_width=3, spatial_scale=1.3)
        out.append((name, model(name, [node], ins, opset=10), {"x": x, "rois": rois, "bi": bi}))
    # An FPN level: X from a Conv, the boxes computed (Relu keeps them; image coordinates).
    xf = rng.normal(size=(2, 8, 16, 20)).astype(np.float32)
    wf = (rng.normal(size=(8, 8, 3, 3)) * 0.2).astype(np.float32)
    rois = np.abs(boxes(rng, 12, 16, 20, 0.25))
    bif = rng.integers(0, 2, 12).astype(np.int64)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["r"], ["rois"]),
             helper.make_node("RoiAlign", ["c", "rois", "bi"], ["y"], output_height=7,
                              output_width=7, sampling_ratio=2, spatial_scale=0.25)]
    out.append(("align_fpn", model("align_fpn", nodes,
                                   [vi("x", F, list(xf.shape)), vi("r", F, [12, 4]),
                                    vi("bi", I64, [12])], [numpy_helper.from_array(wf, "w")]),
                {"x": xf, "r": rois, "bi": bif}))
    for ph, pw, scale in ((2, 3, 1.0), (3, 3, 0.625), (7, 5, 0.5)):
        name = f"max_roi_pool_{ph}x{pw}"
        b = boxes(rng, r, 10, 12, scale)
        b[:4] = np.round(b[:4] * 2 * scale) / (2 * scale)  # corners at exact halves
        first = (rng.integers(0, 2, r) + rng.uniform(0, 0.9, r)).astype(np.float32)
        rois = np.concatenate([first[:, None], b], 1).astype(np.float32)
        node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[ph, pw],
                                spatial_scale=scale)
        out.append((name, model(name, [node], [vi("x", F, list(x.shape)), vi("rois", F, [r, 5])],
                                opset=13), {"x": x, "rois": rois}))
    return out


def main():
    gpu_target = gpu_run_args()
    tools = tool_args(__doc__)
    suite = Suite()
    rng = np.random.default_rng(2026)
    for name, m, feeds in cases(rng):
        if tools.only and name not in tools.only:
            continue
        work = os.path.join(tools.workdir, name)
        options = ort.SessionOptions()
        options.log_severity_level = 3  # its warning that max mode changed in ORT 1.13
        expected = dict(zip(["y"], ort.InferenceSession(
            m.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(None, feeds)))
        problems = run_model(tools, work, m, feeds, expected)
        gpu_plan = os.path.join(work, "model.orin-agx.jplan")
        res = run_tool([tools.convert, os.path.join(work, "model.onnx"), "--target", "orin-agx",
                        "-o", gpu_plan])
        if res.returncode != 0:
            problems.append(f"--target orin-agx: {res.first_error()}")
        if gpu_target:
            problems += gpu_problems(tools, gpu_target, work, feeds, expected, 3e-2, 3e-2)
        suite.report(name, problems)
    # Rois of 5 columns for RoiAlign: refused at conversion, naming the node.
    work = os.path.join(tools.workdir, "bad_rois_shape")
    os.makedirs(work, exist_ok=True)
    bad = model("bad", [helper.make_node("RoiAlign", ["x", "rois", "bi"], ["y"], name="align_bad")],
                [vi("x", F, [1, 2, 4, 4]), vi("rois", F, [5, 5]), vi("bi", I64, [5])])
    path = os.path.join(work, "model.onnx")
    with open(path, "wb") as f:
        f.write(bad.SerializeToString())
    res = run_tool([tools.convert, path, "-o", os.path.join(work, "model.jplan")])
    suite.report("bad_rois_shape", check_error(res, "jetplan-convert: error:",
                                               mentions=("align_bad",)))
    return suite.summary("RoiAlign and MaxRoiPool against ONNX Runtime")


if __name__ == "__main__":
    sys.exit(main())
