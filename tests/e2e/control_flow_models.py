#!/usr/bin/env python3
"""Control flow that folds (issue 14): If, Loop and Scan models built with onnx.helper, converted
with jetplan-convert (--freeze where a condition or trip count is a graph input), run with
jetplan-run and compared with ONNX Runtime on the same inputs, frozen ones included: ONNX Runtime
runs the control flow as it is, jetplan the branch or unrolled body it folded to.

  vad_16000, vad_8000  a voice-activity detector's pattern: If on `sr == 16000` (sr an int64
              graph input) choosing between two branches that read outer tensors (a graph
              input, an initializer, a value computed before the If); --freeze sr=16000 and
              sr=8000 give each branch. Without --freeze: exit 1, one line naming the node and
              `sr` and saying --freeze.
  if_opset18_* an If at opset 18 whose branches hold ops libonnx 1.12 has no schema for
              (ReduceMean/ReduceMax with axes as an input).
  nested_if   an If in a branch of an If, the inner condition from a --freeze'd float input
              given as a .npy, the outer from shape arithmetic (Shape -> Gather -> Greater).
  loop        Loop with trip count 5 (an initializer): a carried value plus a constant each
              iteration and a scan output of the carried value times the iteration number;
              opset 11 (Unsqueeze's axes an attribute) and 13 (an input).
  loop_frozen its trip count a graph input: refused naming it, then --freeze n=3.
  scan        Scan as a cumulative sum (state + element) over axis 0 forward, and over axis 1
              in reverse with the scan output stacked on axis 1 in reverse.
  freeze_*    --freeze errors: exit 2 and one line naming the input (unknown name, an
              initializer, a malformed or out-of-range literal, a .npy of the wrong dtype or
              shape, a list for a scalar, a scalar for a [2,8] input), and a list literal for a
              1-D input.
Float outputs within 1e-5 + 1e-4 |want| of ONNX Runtime's. Needs the newest onnx and
onnxruntime (JETPLAN_ONNX_PYTHON); a few seconds.

    control_flow_models.py --convert BIN/jetplan-convert --run BIN/jetplan-run --workdir DIR
"""
import os
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import Suite, check_error, onnx_model, run_model, run_tool, tool_args  # noqa

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def ort_outputs(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds)))


def vad_model():
    """y = If(sr == 16000, then: relu(x) * w + x, else: (relu(x) - 1) * 0.5); both read relu(x)
    (computed before the If), then also the graph input x and the initializer w."""
    then = helper.make_graph(
        [helper.make_node("Mul", ["h", "w"], ["t0"]), helper.make_node("Add", ["t0", "x"], ["t1"])],
        "then", [], [vi("t1", F, [1, 16])])
    other = helper.make_graph(
        [helper.make_node("Sub", ["h", "one"], ["e0"]),
         helper.make_node("Mul", ["e0", "half"], ["e1"])], "else", [], [vi("e1", F, [1, 16])])
    nodes = [helper.make_node("Relu", ["x"], ["h"]),
             helper.make_node("Equal", ["sr", "rate"], ["is16k"]),
             helper.make_node("If", ["is16k"], ["y"], name="sample_rate_if", then_branch=then,
                              else_branch=other)]
    rng = np.random.default_rng(1)
    inits = [const("w", rng.standard_normal((1, 16)).astype(np.float32)),
             const("rate", np.array(16000, np.int64)), const("one", np.float32(1)),
             const("half", np.float32(0.5))]
    return onnx_model("vad", nodes, [vi("x", F, [1, 16]), vi("sr", I64, [])],
                      [vi("y", F, [1, 16])], inits, opset=16)


def opset18_if_model():
    """If at opset 18 whose branches hold ops of definitions newer than libonnx 1.12's (ReduceMean
    and ReduceMax with axes as an input): mean or max of x over axis 1."""
    then = helper.make_graph([helper.make_node("ReduceMean", ["x", "ax"], ["m"], keepdims=1)],
                             "then", [], [vi("m", F, [2, 1])])
    other = helper.make_graph([helper.make_node("ReduceMax", ["x", "ax"], ["n"], keepdims=1)],
                              "else", [], [vi("n", F, [2, 1])])
    nodes = [helper.make_node("Equal", ["sr", "rate"], ["is16k"]),
             helper.make_node("If", ["is16k"], ["y"], then_branch=then, else_branch=other)]
    inits = [const("ax", np.array([1], np.int64)), const("rate", np.array(16000, np.int64))]
    return onnx_model("if18", nodes, [vi("x", F, [2, 8]), vi("sr", I64, [])],
                      [vi("y", F, [2, 1])], inits, opset=18)


def nested_if_model():
    """If(dim 1 of x > 4, then: If(g > 0, x * 2, x * 3) + 1, else: x - 1)."""
    inner = helper.make_node(
        "If", ["g_pos"], ["inner_y"], name="inner_if",
        then_branch=helper.make_graph([helper.make_node("Mul", ["x", "two"], ["a"])], "t",
                                      [], [vi("a", F, [2, 8])]),
        else_branch=helper.make_graph([helper.make_node("Mul", ["x", "three"], ["b"])], "e",
                                      [], [vi("b", F, [2, 8])]))
    then = helper.make_graph([helper.make_node("Greater", ["g", "zero"], ["g_pos"]), inner,
                              helper.make_node("Add", ["inner_y", "onef"], ["t_out"])],
                             "then", [], [vi("t_out", F, [2, 8])])
    other = helper.make_graph([helper.make_node("Sub", ["x", "onef"], ["e_out"])], "else", [],
                              [vi("e_out", F, [2, 8])])
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("Gather", ["shape", "one_i"], ["width"], axis=0),
             helper.make_node("Greater", ["width", "four"], ["wide"]),
             helper.make_node("If", ["wide"], ["y"], name="outer_if", then_branch=then,
                              else_branch=other)]
    inits = [const("one_i", np.array(1, np.int64)), const("four", np.array(4, np.int64)),
             const("zero", np.float32(0)), const("two", np.float32(2)),
             const("three", np.float32(3)), const("onef", np.float32(1))]
    return onnx_model("nested_if", nodes, [vi("x", F, [2, 8]), vi("g", F, [1])],
                      [vi("y", F, [2, 8])], inits, opset=13)


def loop_model(opset, trip_count_input=False):
    """Loop M times: v += c; scan output v * i (i the iteration number, as float)."""
    body_nodes = [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                  helper.make_node("Add", ["v_in", "c"], ["v_out"]),
                  helper.make_node("Cast", ["i"], ["i_f"], to=F),
                  helper.make_node("Mul", ["v_in", "i_f"], ["scan_out"])]
    body = helper.make_graph(body_nodes, "body",
                             [vi("i", I64, []), vi("cond_in", TensorProto.BOOL, []),
                              vi("v_in", F, [3])],
                             [vi("cond_out", TensorProto.BOOL, []), vi("v_out", F, [3]),
                              vi("scan_out", F, [3])])
    inputs = [vi("v0", F, [3])] + ([vi("n", I64, [])] if trip_count_input else [])
    inits = [const("c", np.array([0.5, -1.0, 2.0], np.float32)), const("t", np.array(True))]
    if not trip_count_input:
        inits.append(const("n", np.array(5, np.int64)))
    nodes = [helper.make_node("Loop", ["n", "t", "v0"], ["v_final", "scans"], name="loop",
                              body=body)]
    return onnx_model(f"loop{opset}", nodes, inputs, [vi("v_final", F, [3]), vi("scans", F, ["T", 3])],
                      inits, opset=opset)


def scan_model(reverse):
    """Scan cumulative sum: s += x[t]; scan output s (forward over axis 0, or reverse over axis
    1 with the scan output stacked on axis 1 in reverse)."""
    body = helper.make_graph([helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
                              helper.make_node("Identity", ["s_out"], ["y_t"])], "body",
                             [vi("s_in", F, [4]), vi("x_t", F, [4])],
                             [vi("s_out", F, [4]), vi("y_t", F, [4])])
    attrs = dict(num_scan_inputs=1)
    x_shape, y_shape = [5, 4], [5, 4]
    if reverse:
        attrs.update(scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1],
                     scan_output_directions=[1])
        x_shape, y_shape = [4, 5], [4, 5]
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s_final", "y"], name="cumsum_scan",
                              body=body, **attrs)]
    return onnx_model("scan", nodes, [vi("s0", F, [4]), vi("x", F, x_shape)],
                      [vi("s_final", F, [4]), vi("y", F, y_shape)], opset=13)


def check_against_ort(suite, tools, name, model, feeds, frozen=(), convert_args=()):
    """Converts with convert_args, runs on feeds minus the frozen inputs, compares with ORT."""
    expected = ort_outputs(model, feeds)
    run_feeds = {k: v for k, v in feeds.items() if k not in frozen}
    try:
        problems = run_model(tools, os.path.join(tools.workdir, name), model, run_feeds, expected,
                             convert_args=convert_args)
    except Exception as e:  # a broken case must not hide the others
        problems = [f"{type(e).__name__}: {e}"]
    suite.report(name, problems, f"({len(expected)} outputs against ONNX Runtime)")


def convert_only(tools, name, model, args):
    work = os.path.join(tools.workdir, name)
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "model.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return run_tool([tools.convert, path, "-o", os.path.join(work, "model.jplan")] + list(args))


def main():
    tools = tool_args(__doc__)
    suite = Suite()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 16)).astype(np.float32)

    vad = vad_model()
    for rate in (16000, 8000):
        check_against_ort(suite, tools, f"vad_{rate}", vad,
                          {"x": x, "sr": np.array(rate, np.int64)}, frozen=("sr",),
                          convert_args=["--freeze", f"sr={rate}"])
    res = convert_only(tools, "vad_unfrozen", vad, [])
    suite.report("vad_unfrozen_error", check_error(
        res, "jetplan-convert: error:", exit_codes=(1,),
        mentions=("sample_rate_if", "'sr'", "--freeze sr=")))

    x28 = rng.standard_normal((2, 8)).astype(np.float32)
    for rate in (16000, 8000):
        check_against_ort(suite, tools, f"if_opset18_{rate}", opset18_if_model(),
                          {"x": x28, "sr": np.array(rate, np.int64)}, frozen=("sr",),
                          convert_args=["--freeze", f"sr={rate}"])
    for g in (1.5, -1.5):
        g_path = os.path.join(tools.workdir, f"g_{g}.npy")
        np.save(g_path, np.array([g], np.float32))
        check_against_ort(suite, tools, f"nested_if_g{g:+}", nested_if_model(),
                          {"x": x28, "g": np.array([g], np.float32)}, frozen=("g",),
                          convert_args=["--freeze", f"g={g_path}"])

    v0 = np.array([1.0, 2.0, -3.0], np.float32)
    for opset in (11, 13):
        check_against_ort(suite, tools, f"loop_opset{opset}", loop_model(opset), {"v0": v0})
    frozen_loop = loop_model(13, trip_count_input=True)
    res = convert_only(tools, "loop_unfrozen", frozen_loop, [])
    suite.report("loop_unfrozen_error", check_error(
        res, "jetplan-convert: error:", mentions=("'loop' (Loop)", "trip count", "--freeze n=")))
    check_against_ort(suite, tools, "loop_frozen", frozen_loop,
                      {"v0": v0, "n": np.array(3, np.int64)}, frozen=("n",),
                      convert_args=["--freeze", "n=3"])

    s0 = rng.standard_normal(4).astype(np.float32)
    check_against_ort(suite, tools, "scan_forward", scan_model(False),
                      {"s0": s0, "x": rng.standard_normal((5, 4)).astype(np.float32)})
    check_against_ort(suite, tools, "scan_reverse_axis1", scan_model(True),
                      {"s0": s0, "x": rng.standard_normal((4, 5)).astype(np.float32)})

    # --freeze errors: a wrong command line (exit 2), one line naming the input.
    bad_npy = os.path.join(tools.workdir, "sr_f64.npy")
    np.save(bad_npy, np.array(16000, np.float64))
    bad_shape = os.path.join(tools.workdir, "sr_2.npy")
    np.save(bad_shape, np.array([16000, 8000], np.int64))
    for name, arg, mentions in [
            ("freeze_unknown_name", "rate_hz=16000", ("'rate_hz'", "not a graph input", "sr")),
            ("freeze_initializer", "rate=16000", ("'rate'", "initializer", "not a graph input")),
            ("freeze_malformed", "sr=16k", ("--freeze sr", "'16k'", "integer")),
            ("freeze_out_of_range", "sr=99999999999999999999", ("--freeze sr", "out of the range")),
            ("freeze_npy_dtype", f"sr={bad_npy}", ("--freeze sr", "<f8", "int64")),
            ("freeze_npy_shape", f"sr={bad_shape}", ("--freeze sr", "[2]", "[]")),
            ("freeze_list_for_scalar", "sr=[16000,8000]", ("--freeze sr", "[2]")),
            ("freeze_no_value", "sr=", ("--freeze", "NAME=VALUE"))]:
        res = convert_only(tools, name, vad, ["--freeze", arg])
        suite.report(name, check_error(res, "jetplan-convert: error:", exit_codes=(2,),
                                       mentions=mentions, usage=True))
    res = convert_only(tools, "freeze_scalar_for_two", nested_if_model(),
                       ["--freeze", "g=[1.5]", "--freeze", "x=2"])
    suite.report("freeze_scalar_for_two", check_error(
        res, "jetplan-convert: error:", exit_codes=(2,), mentions=("--freeze x", "[2,8]"),
        usage=True))
    # A list literal for a 1-D input: g=[1.5] (then the inner then-branch).
    check_against_ort(suite, tools, "nested_if_list_literal", nested_if_model(),
                      {"x": x28, "g": np.array([1.5], np.float32)}, frozen=("g",),
                      convert_args=["--freeze", "g=[1.5]"])
    return suite.summary("control flow models")


if __name__ == "__main__":
    sys.exit(main())
