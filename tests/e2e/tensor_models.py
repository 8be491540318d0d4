#!/usr/bin/env python3
"""End-to-end models of the tensor op group (Transpose, Slice, Split, Gather, GatherElements,
Pad, Expand, Tile, DepthToSpace, SpaceToDepth, unary math, comparisons and logic, integer
arithmetic, Where, Cast, Sum/Mean, Einsum) and of constant folding through them: each model is
built here with a numpy reference, converted with jetplan-convert, run with jetplan-run on the
same inputs, and every output compared with the reference (dtype and shape exactly; floats to
rtol 1e-4 + atol 1e-5, integers and bools bit for bit). Some cases also pin the number of
steps the plan has, where folding or lowering decides it.

Prints one line per case and a summary; exits 1 when anything failed.

Usage: tensor_models.py --convert PATH --run PATH --workdir DIR [--only CASE,...]
"""

import argparse
import os
import re
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import run_tool, sanitize  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
RNG = np.random.default_rng(20261122)


def onnx_type(dtype):
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype)) if hasattr(
        helper, "np_dtype_to_tensor_dtype") else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


class Case:
    """A model: graph inputs with their values, nodes, initializers, and expected outputs."""

    def __init__(self, name, opset=13):
        self.name, self.opset = name, opset
        self.inputs, self.inits, self.nodes, self.outputs = [], [], [], []
        self.feeds, self.expected = {}, {}
        self.steps = None  # the plan's step count, when the case pins it

    def input(self, name, value):
        value = np.asarray(value)
        self.inputs.append(helper.make_tensor_value_info(name, onnx_type(value.dtype),
                                                         list(value.shape)))
        self.feeds[name] = value
        return value

    def init(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return np.asarray(value)

    def node(self, op, ins, outs, **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, name=f"{op.lower()}_{len(self.nodes)}",
                                           **attrs))

    def output(self, name, value):
        value = np.asarray(value)
        self.outputs.append(helper.make_tensor_value_info(name, onnx_type(value.dtype),
                                                          list(value.shape)))
        self.expected[name] = value

    def model(self):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                              producer_name="jetplan-e2e")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def case_attention():
    """Multi-head self-attention as exporters write it with Einsum."""
    c = Case("attention", opset=13)
    b, t, h, d = 2, 5, 2, 4
    x = c.input("x", RNG.standard_normal((b, t, h * d)).astype(np.float32))
    wq, wk, wv = (c.init(n, RNG.standard_normal((h * d, h * d)).astype(np.float32) * 0.3)
                  for n in ("wq", "wk", "wv"))
    c.init("heads", np.array([b, t, h, d], np.int64))
    c.init("merged", np.array([b, t, h * d], np.int64))
    c.init("scale", np.array(1 / np.sqrt(d), np.float32))
    for n, w in (("q", "wq"), ("k", "wk"), ("v", "wv")):
        c.node("MatMul", ["x", w], [n + "2"])
        c.node("Reshape", [n + "2", "heads"], [n + "4"])
        c.node("Transpose", [n + "4"], [n], perm=[0, 2, 1, 3])  # [b, h, t, d]
    c.node("Einsum", ["q", "k"], ["scores"], equation="bhid,bhjd->bhij")
    c.node("Mul", ["scores", "scale"], ["scaled"])
    c.node("Softmax", ["scaled"], ["probs"], axis=-1)
    c.node("Einsum", ["probs", "v"], ["ctx"], equation="bhij,bhjd->bhid")
    c.node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3])
    c.node("Reshape", ["ctx_t", "merged"], ["y"])
    split = lambda m: (x @ m).reshape(b, t, h, d).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = split(wq), split(wk), split(wv)
    p = softmax(np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(d), -1)
    c.output("y", np.einsum("bhij,bhjd->bhid", p, v).transpose(0, 2, 1, 3).reshape(b, t, h * d))
    return c


def case_pixel_shuffle():
    """DepthToSpace (CRD, as PyTorch's PixelShuffle) and SpaceToDepth around a Relu."""
    c = Case("pixel_shuffle")
    x = c.input("x", RNG.standard_normal((1, 12, 3, 4)).astype(np.float32))
    c.node("DepthToSpace", ["x"], ["up"], blocksize=2, mode="CRD")
    c.node("Relu", ["up"], ["r"])
    c.node("SpaceToDepth", ["r"], ["y"], blocksize=2)
    n, ch, hh, ww = x.shape
    up = x.reshape(n, ch // 4, 2, 2, hh, ww).transpose(0, 1, 4, 2, 5, 3).reshape(n, ch // 4, hh * 2,
                                                                                 ww * 2)
    r = np.maximum(up, 0)
    c.output("y", r.reshape(n, ch // 4, hh, 2, ww, 2).transpose(0, 3, 5, 1, 2, 4)
             .reshape(n, ch, hh, ww))
    return c


def case_embedding_mask():
    """Token embedding with a padding mask: int64 ids, Gather of a float table and of a bool
    mask table, Where, Equal/Not/Cast; a position table sliced from a constant (folded)."""
    c = Case("embedding_mask")
    ids = c.input("ids", np.array([[3, 0, 7, 1], [0, 0, 2, 9]], np.int64))
    table = c.init("table", RNG.standard_normal((10, 6)).astype(np.float32))
    pos = c.init("pos", RNG.standard_normal((16, 6)).astype(np.float32))
    mask_table = c.init("mask_table", (np.arange(10) == 0).reshape(10, 1))
    c.init("zero_id", np.array(0, np.int64))
    c.init("zero", np.array(0.0, np.float32))
    c.init("s", np.array([0], np.int64))
    c.init("e", np.array([4], np.int64))
    c.node("Gather", ["table", "ids"], ["emb"])
    c.node("Slice", ["pos", "s", "e"], ["pos4"])
    c.node("Add", ["emb", "pos4"], ["emb_pos"])
    c.node("Gather", ["mask_table", "ids"], ["pad3"])  # [2, 4, 1] bool
    c.node("Where", ["pad3", "zero", "emb_pos"], ["y"])
    c.node("Equal", ["ids", "zero_id"], ["pad"])
    c.node("Not", ["pad"], ["keep"])
    c.node("Cast", ["keep"], ["keep_i32"], to=TensorProto.INT32)
    emb = table[ids] + pos[:4]
    c.output("y", np.where(mask_table[ids], np.float32(0), emb).astype(np.float32))
    c.output("keep_i32", (ids != 0).astype(np.int32))
    return c


def case_glu_pad_tile():
    """GLU (Split + Sigmoid + Mul), reflect Pad, Tile, Expand, GatherElements."""
    c = Case("glu_pad_tile")
    x = c.input("x", RNG.standard_normal((2, 6, 5)).astype(np.float32))
    c.init("split", np.array([3, 3], np.int64))
    c.init("pads", np.array([0, 0, 2, 0, 0, 1], np.int64))
    c.init("reps", np.array([1, 2, 1], np.int64))
    c.init("shape", np.array([2, 2, 6, 8], np.int64))
    idx = c.init("idx", RNG.integers(-8, 8, size=(2, 6, 3)).astype(np.int64))
    c.node("Split", ["x", "split"], ["a", "b"], axis=1)
    c.node("Sigmoid", ["b"], ["gate"])
    c.node("Mul", ["a", "gate"], ["glu"])
    c.node("Pad", ["glu", "pads"], ["padded"], mode="reflect")
    c.node("Tile", ["padded", "reps"], ["tiled"])
    c.node("Expand", ["tiled", "shape"], ["y"])
    c.node("GatherElements", ["tiled", "idx"], ["picked"], axis=2)
    a, b = x[:, :3], x[:, 3:]
    glu = a / (1 + np.exp(-b))
    padded = np.pad(glu, ((0, 0), (0, 0), (2, 1)), mode="reflect")
    tiled = np.tile(padded, (1, 2, 1))
    c.output("y", np.broadcast_to(tiled, (2, 2, 6, 8)).astype(np.float32))
    c.output("picked", np.take_along_axis(tiled, np.where(idx < 0, idx + 8, idx), axis=2))
    return c


def case_integer_math():
    """int8/int64 Mod (int8 through int32), comparisons, Abs, and casts around float math."""
    c = Case("integer_math")
    a = c.input("a", np.array([[7, -7, 100, -128], [3, 0, -1, 55]], np.int8))
    n = c.input("n", np.array([5, -3, 11, 2, 9], np.int64))
    c.init("three", np.array(3, np.int8))
    c.init("two", np.array([2], np.int64))
    c.node("Mod", ["a", "three"], ["a_mod"])
    c.node("Mod", ["n", "two"], ["n_fmod"], fmod=1)
    c.node("Greater", ["n", "two"], ["n_gt"])
    c.node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT)
    c.node("Sin", ["nf"], ["sin"])
    c.node("Round", ["sin"], ["rounded"])  # -1, 0 or 1
    c.node("Cast", ["rounded"], ["sign_i"], to=TensorProto.INT64)
    c.node("Abs", ["a"], ["a_abs"])
    c.output("a_mod", np.mod(a.astype(np.int32), 3).astype(np.int8))
    c.output("n_fmod", np.fmod(n, 2))
    c.output("n_gt", n > 2)
    c.output("sign_i", np.round(np.sin(n.astype(np.float32))).astype(np.int64))
    c.output("a_abs", np.abs(a))  # -128 stays -128, as numpy
    return c


def case_float16_io():
    """Float16 through unary math (computed in float32) and casts."""
    c = Case("float16_io")
    x = c.input("x", (RNG.standard_normal((3, 4)) * 4).astype(np.float16))
    c.node("Abs", ["x"], ["ax"])
    c.node("Sqrt", ["ax"], ["y"])
    c.node("Cast", ["y"], ["y32"], to=TensorProto.FLOAT)
    c.node("Transpose", ["x"], ["xt"])
    y = np.sqrt(np.abs(x).astype(np.float32)).astype(np.float16)
    c.output("y", y)
    c.output("y32", y.astype(np.float32))
    c.output("xt", x.T)
    return c


def case_constant_folding():
    """Constants through Cast, Transpose, Gather, Slice, Unsqueeze, Equal, Where, Pad, Tile,
    Split, Sum and unary math fold at conversion: the plan is the one Add left."""
    c = Case("constant_folding")
    x = c.input("x", RNG.standard_normal((1, 3, 4)).astype(np.float32))
    k = c.init("k", np.arange(12, dtype=np.int64).reshape(4, 3))
    c.init("rows", np.array([2, 0, 1], np.int64))
    c.init("st", np.array([3], np.int64))
    c.init("en", np.array([-100], np.int64))
    c.init("sp", np.array([-1], np.int64))
    c.init("ax", np.array([1], np.int64))
    c.init("unsq", np.array([0], np.int64))
    c.init("five", np.array(5.0, np.float32))
    c.init("pads", np.array([0, 0, 0, 0, 0, 1], np.int64))
    c.node("Cast", ["k"], ["kf"], to=TensorProto.FLOAT)
    c.node("Transpose", ["kf"], ["kt"])                    # [3, 4]
    c.node("Gather", ["kt", "rows"], ["kg"])               # rows 2, 0, 1
    c.node("Slice", ["kg", "st", "en", "ax", "sp"], ["ks"])  # columns 3..0
    c.node("Unsqueeze", ["ks", "unsq"], ["ku"])            # [1, 3, 4]
    c.node("Equal", ["ku", "five"], ["is5"])
    c.node("Neg", ["ku"], ["neg"])
    c.node("Where", ["is5", "neg", "ku"], ["w"])
    c.node("Split", ["w"], ["w1", "w2"], axis=2)
    c.node("Sum", ["w1", "w2", "w1"], ["ws"])              # [1, 3, 2]
    c.node("Tile", ["ws", "tile2"], ["wt"])
    c.init("tile2", np.array([1, 1, 2], np.int64))
    c.node("Sqrt", ["wt"], ["root"])
    c.node("IsNaN", ["root"], ["nan"])
    c.node("Where", ["nan", "zero", "root"], ["clean"])
    c.init("zero", np.array(0.0, np.float32))
    c.node("Add", ["x", "clean"], ["y"])
    kt = k.astype(np.float32).T[[2, 0, 1]][:, ::-1][None]
    w = np.where(kt == 5, -kt, kt)
    ws = w[..., :2] + w[..., 2:] + w[..., :2]
    with np.errstate(invalid="ignore"):
        root = np.sqrt(np.tile(ws, (1, 1, 2)))
    c.output("y", x + np.where(np.isnan(root), np.float32(0), root).astype(np.float32))
    c.steps = 1
    return c


CASES = [case_attention, case_pixel_shuffle, case_embedding_mask, case_glu_pad_tile,
         case_integer_math, case_float16_io, case_constant_folding]


def compare(name, got, want):
    if got.dtype != want.dtype:
        return f"output '{name}' is {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"output '{name}' has shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype.kind == "f":
        g, w = got.astype(np.float64), want.astype(np.float64)
        rtol = 1e-3 if want.dtype == np.float16 else RTOL
        bad = ~(np.abs(g - w) <= ATOL + rtol * np.abs(w)) & ~(np.isnan(g) & np.isnan(w))
        if bad.any():
            i = int(np.argmax(bad))
            return (f"output '{name}': {int(bad.sum())}/{bad.size} elements off; first at "
                    f"{np.unravel_index(i, want.shape)}: got {g.flat[i]!r}, expected {w.flat[i]!r}")
        return None
    if not np.array_equal(got, want):
        return f"output '{name}': {int((got != want).sum())}/{want.size} elements differ"
    return None


def run_case(case, convert, run, workdir):
    work = os.path.join(workdir, case.name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model_path = os.path.join(work, "model.onnx")
    onnx.save(case.model(), model_path)
    plan = os.path.join(work, "model.jplan")
    res = run_tool([convert, model_path, "-o", plan])
    if res.returncode != 0 or res.timed_out:
        return [f"jetplan-convert failed ({res.describe()}): {res.first_error()}"]
    problems = []
    if case.steps is not None:
        m = re.search(r"(\d+) steps", res.stdout + res.stderr)
        if not m:
            problems.append("jetplan-convert printed no step count")
        elif int(m.group(1)) != case.steps:
            problems.append(f"the plan has {m.group(1)} steps, expected {case.steps}")
    args = [run, plan, "--warmup", "0", "--iterations", "1", "--save-outputs",
            os.path.join(work, "out")]
    for name, value in case.feeds.items():
        path = os.path.join(work, sanitize(name) + ".in.npy")
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    res = run_tool(args)
    if res.returncode != 0 or res.timed_out:
        return problems + [f"jetplan-run failed ({res.describe()}): {res.first_error()}"]
    for name, want in case.expected.items():
        path = os.path.join(work, "out", sanitize(name) + ".npy")
        if not os.path.exists(path):
            problems.append(f"output '{name}' was not written")
            continue
        why = compare(name, np.load(path), want)
        if why:
            problems.append(why)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--convert", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    os.makedirs(args.workdir, exist_ok=True)
    failed = []
    for make in CASES:
        case = make()
        if only and case.name not in only:
            continue
        try:
            problems = run_case(case, args.convert, args.run, args.workdir)
        except Exception as e:  # a broken case must not hide the others
            problems = [f"{type(e).__name__}: {e}"]
        if problems:
            failed.append(case.name)
            print(f"FAIL  {case.name}")
            for p in problems:
                print(f"        {p}")
        else:
            print(f"PASS  {case.name}")
        sys.stdout.flush()
    total = len(CASES) if not only else len(only)
    print(f"tensor models: {total - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
