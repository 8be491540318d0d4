#!/usr/bin/env python3
"""Models stored in float16 and bfloat16 (converter/src/import/widen_floats.h) against ONNX
Runtime: built with onnx.helper (fixed seeds), converted with jetplan-convert, run with
jetplan-run (CPU plan), each output held to two references:
  - ONNX Runtime on the same narrow model (where its CPU provider runs it): it rounds after
    every op where jetplan rounds once, so within 1e-2 |want| + 1e-2 max|want|;
  - ONNX Runtime on the float32 twin of the model (the same values: the narrow ones are exact
    in float32), which computes what jetplan computes before its one rounding: within one step
    of the narrow type (2^-10 |want| for float16, 2^-7 for bfloat16) + 1e-6 max|want|.
Each model is also converted for --target orin-agx (the converter writes a GPU plan only once
the runtime's deviceless load accepts it).
  cnn_fp16        Conv + BatchNormalization + Relu + MaxPool + 1x1 Conv + GlobalAveragePool +
                  Flatten + Gemm + Softmax, weights and input/output float16.
  encoder_bf16    LayerNormalization, MatMul, Gelu (opset 20), MatMul with a residual Add,
                  Softmax, in bfloat16 (ONNX Runtime's CPU provider does not run it: the float32
                  twin only).
  autocast_mixed  a float32 model with a float16 island (what torch.autocast exports): Cast to
                  float16, a MatMul of float16 weights, Cast back, LayerNormalization in float32.
  cast_rounds     a Cast to float16 inside a float32 model rounds (and overflows) as ONNX says:
                  bit for bit with ONNX Runtime.
    narrow_float_models.py --convert BIN/jetplan-convert --run BIN/jetplan-run --workdir DIR
"""
import copy
import os
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Suite, run_model, run_tool, sanitize, tool_args  # noqa: E402

F, H, BF = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16


def bf16_bits(x):
    """float32 values as bfloat16 bit patterns (uint16), rounded to nearest even."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


class Builder:
    """A model of one element type for its float tensors: `elem` float32, float16 or bfloat16.
    Values are made exact in the narrow type `exact` so that the float32 twin holds them too."""

    def __init__(self, elem, exact, rng):
        self.elem, self.exact, self.rng = elem, exact, rng
        self.nodes, self.inits = [], []

    def rounded(self, a):
        a = np.asarray(a, np.float32)
        if self.exact == H:
            return a.astype(np.float16).astype(np.float32)
        return bf16_values(bf16_bits(a))

    def stored(self, a):
        """Exact values as the model's element type stores them."""
        if self.elem == F:
            return a.astype(np.float32)
        if self.elem == H:
            return a.astype(np.float16)
        return bf16_bits(a)

    def init(self, name, a):
        a = self.stored(self.rounded(a))
        if self.elem == BF:
            t = helper.make_tensor(name, BF, a.shape, a.tobytes(), raw=True)
        else:
            t = numpy_helper.from_array(a, name)
        self.inits.append(t)
        return name

    def node(self, op, ins, outs, **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, **attrs))

    def model(self, name, inputs, outputs, opset=17):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                 ir_version=8)


def cnn(elem, rng):
    b = Builder(elem, H, rng)
    r = np.random.default_rng(7)
    b.node("Conv", ["x", b.init("w1", r.normal(0, 0.3, (8, 3, 3, 3))), b.init("b1", r.normal(0, 0.1, 8))],
           ["c1"], pads=[1, 1, 1, 1])
    b.node("BatchNormalization", ["c1", b.init("g", r.uniform(0.5, 1.5, 8)),
                                  b.init("be", r.normal(0, 0.1, 8)), b.init("mu", r.normal(0, 0.1, 8)),
                                  b.init("var", r.uniform(0.5, 2, 8))], ["bn"])
    b.node("Relu", ["bn"], ["r"])
    b.node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2])
    b.node("Conv", ["p", b.init("w2", r.normal(0, 0.3, (16, 8, 1, 1)))], ["c2"])
    b.node("GlobalAveragePool", ["c2"], ["gap"])
    b.node("Flatten", ["gap"], ["f"])
    b.node("Gemm", ["f", b.init("wf", r.normal(0, 0.3, (10, 16))), b.init("bf", r.normal(0, 0.1, 10))],
           ["logits"], transB=1)
    b.node("Softmax", ["logits"], ["y"], axis=1)
    m = b.model("cnn", [helper.make_tensor_value_info("x", elem, [2, 3, 16, 16])],
                [helper.make_tensor_value_info("y", elem, [2, 10]),
                 helper.make_tensor_value_info("logits", elem, [2, 10])])
    return m, {"x": b.rounded(rng.normal(0, 1, (2, 3, 16, 16)))}


def encoder(elem, rng):
    b = Builder(elem, BF, rng)
    r = np.random.default_rng(8)
    d, hidden = 32, 64
    b.node("LayerNormalization", ["x", b.init("ln_g", r.uniform(0.5, 1.5, d)),
                                  b.init("ln_b", r.normal(0, 0.1, d))], ["n"], axis=-1)
    b.node("MatMul", ["n", b.init("w1", r.normal(0, 0.2, (d, hidden)))], ["h"])
    b.node("Gelu", ["h"], ["g"])
    b.node("MatMul", ["g", b.init("w2", r.normal(0, 0.2, (hidden, d)))], ["o"])
    b.node("Add", ["o", "x"], ["res"])
    b.node("Softmax", ["res"], ["y"], axis=-1)
    m = b.model("encoder", [helper.make_tensor_value_info("x", elem, [2, 5, d])],
                [helper.make_tensor_value_info("y", elem, [2, 5, d]),
                 helper.make_tensor_value_info("res", elem, [2, 5, d])], opset=20)
    return m, {"x": b.rounded(rng.normal(0, 1, (2, 5, d)))}


def autocast(rng):
    b = Builder(F, H, rng)
    r = np.random.default_rng(9)
    w = b.rounded(r.normal(0, 0.2, (24, 16)))
    b.inits.append(numpy_helper.from_array(w.astype(np.float16), "w"))
    b.node("Cast", ["x"], ["xh"], to=H)
    b.node("MatMul", ["xh", "w"], ["mh"])
    b.node("Cast", ["mh"], ["m"], to=F)
    b.node("LayerNormalization", ["m", b.init("g", r.uniform(0.5, 1.5, 16)),
                                  b.init("be", r.normal(0, 0.1, 16))], ["y"], axis=-1)
    m = b.model("autocast", [helper.make_tensor_value_info("x", F, [4, 24])],
                [helper.make_tensor_value_info("y", F, [4, 16])])
    return m, {"x": rng.normal(0, 1, (4, 24)).astype(np.float32)}


def cast_rounds():
    b = Builder(F, H, None)
    b.node("Cast", ["x"], ["h"], to=H)
    b.node("Cast", ["h"], ["y"], to=F)
    m = b.model("cast_rounds", [helper.make_tensor_value_info("x", F, [6])],
                [helper.make_tensor_value_info("y", F, [6])])
    x = np.array([1.0001, 70000.0, -3.3e-8, 2049.0, 0.1, -65519.0], np.float32)
    return m, {"x": x}


def ort_run(model, feeds):
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def as_float(arr, elem):
    return bf16_values(arr) if elem == BF else np.asarray(arr).astype(np.float32)


def within(name, got, want, rtol, atol_scale):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return [f"{name}: shape {got.shape}, expected {want.shape}"]
    if np.isnan(got).any() or np.isnan(want).any():
        return [f"{name}: NaN in the output or the reference"]
    atol = atol_scale * float(np.max(np.abs(want)))
    bad = np.abs(got - want) > atol + rtol * np.abs(want)
    if bad.any():
        i = int(np.argmax(np.abs(got - want) - rtol * np.abs(want)))
        return [f"{name}: {int(bad.sum())} of {bad.size} off, worst got {got.flat[i]!r} "
                f"expected {want.flat[i]!r}"]
    return []


def narrow_twin(model):
    """The float32 twin of a narrow model: every float16/bfloat16 type and tensor as float32."""
    m = copy.deepcopy(model)
    g = m.graph
    for t in g.initializer:
        if t.data_type in (H, BF):
            a = (bf16_values(np.frombuffer(t.raw_data, np.uint16)) if t.data_type == BF
                 else numpy_helper.to_array(t).astype(np.float32))
            t.CopyFrom(numpy_helper.from_array(a.reshape(tuple(t.dims)), t.name))
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type in (H, BF):
            v.type.tensor_type.elem_type = F
    for n in g.node:
        for a in n.attribute:
            if a.name == "to" and a.i in (H, BF):
                a.i = F
    return m


def main():
    tools = tool_args(__doc__)
    suite = Suite()
    rng = np.random.default_rng(2026)
    cases = [("cnn_fp16", *cnn(H, rng), H, True), ("encoder_bf16", *encoder(BF, rng), BF, False),
             ("autocast_mixed", *autocast(rng), F, True), ("cast_rounds", *cast_rounds(), F, True)]
    for name, model, feeds, elem, ort_runs_it in cases:
        if tools.only and name not in tools.only:
            continue
        work = os.path.join(tools.workdir, name)
        stored = {k: (bf16_bits(v) if elem == BF else v.astype(np.float16) if elem == H else v)
                  for k, v in feeds.items()}
        problems = run_model(tools, work, model, stored, {})
        outs = {o.name: np.load(os.path.join(work, "out", sanitize(o.name) + ".npy"))
                for o in model.graph.output} if not problems else {}
        step = {H: 2.0 ** -10, BF: 2.0 ** -7, F: 2.0 ** -10}[elem]
        if outs and name == "cast_rounds":
            want = ort_run(model, feeds)["y"]
            if outs["y"].tobytes() != want.tobytes():
                problems.append(f"y: {outs['y']!r}, ONNX Runtime {want!r}")
        elif outs:
            if elem != F:
                twin = ort_run(narrow_twin(model), {k: v.astype(np.float32) for k, v in feeds.items()})
                for o, got in outs.items():
                    problems += within(o + " (float32 twin)", as_float(got, elem), twin[o], step, 1e-6)
            if ort_runs_it:
                ref = ort_run(model, stored)
                for o, got in outs.items():
                    problems += within(o + " (ONNX Runtime)", as_float(got, elem),
                                       as_float(ref[o], elem), 1e-2, 1e-2)
        if not problems:
            res = run_tool([tools.convert, os.path.join(work, "model.onnx"), "--target", "orin-agx",
                            "-o", os.path.join(work, "model.orin-agx.jplan")])
            if res.returncode != 0:
                problems.append(f"--target orin-agx: {res.first_error()}")
        suite.report(name, problems)
    return suite.summary("float16 and bfloat16 models against ONNX Runtime")


if __name__ == "__main__":
    sys.exit(main())
