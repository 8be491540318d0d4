#!/usr/bin/env python3
"""End-to-end models of the ops that take any dtype (Transpose, Slice, Split, Gather,
GatherElements, Pad, Expand, Tile, DepthToSpace, SpaceToDepth, unary math, comparisons and
logic, integer arithmetic, Where, Cast, Sum/Mean, Einsum) and of constant folding through them:
each model is built here with a numpy reference, converted with jetplan-convert, run with
jetplan-run on the same inputs, and every output compared with the reference (dtype and shape exactly; floats to
rtol 1e-4 + atol 1e-5, integers and bools bit for bit). Some cases also pin the number of
steps the plan has, where folding or lowering decides it.

Prints one line per case and a summary; exits 1 when anything failed.

Usage: typed_ops_models.py --convert PATH --run PATH --workdir DIR [--only CASE,...]
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import onnx_model, run_cases, tool_args, value_info  # noqa: E402
from model_reference import softmax_ref  # noqa: E402

RNG = np.random.default_rng(20261122)


class Case:
    """A model: graph inputs with their values, nodes, initializers, and expected outputs."""

    def __init__(self, name, opset=13):
        self.name, self.opset = name, opset
        self.inputs, self.inits, self.nodes, self.outputs = [], [], [], []
        self.feeds, self.expected = {}, {}
        self.steps = None  # the plan's step count, when the case pins it

    def input(self, name, value):
        value = np.asarray(value)
        self.inputs.append(value_info(name, value))
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
        self.outputs.append(value_info(name, value))
        self.expected[name] = value

    def model(self):
        return onnx_model(self.name, self.nodes, self.inputs, self.outputs, self.inits,
                          self.opset)


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
    p = softmax_ref(np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(d), -1)
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


def main():
    return run_cases("typed ops models", tool_args(__doc__), [make() for make in CASES])


if __name__ == "__main__":
    sys.exit(main())
