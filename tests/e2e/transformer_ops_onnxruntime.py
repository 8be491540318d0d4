#!/usr/bin/env python3
"""The opset-23 transformer ops (issue 14) against ONNX Runtime, whose CPU provider implements
all three: models built with onnx.helper (fixed seeds), converted with jetplan-convert, run with
jetplan-run (CPU plan) and compared with ONNX Runtime on the same inputs; each also converted for
--target orin-agx, which the converter writes only after the runtime's deviceless load accepts
the plan (write_gpu_plan).
  llama_block     RMSNormalization, Q/K/V projections, RotaryEmbedding on Q and K (3-D, num_heads,
                  position_ids a graph input), Attention 3-D with grouped-query heads (4 Q heads,
                  2 KV heads, head dim 32) and is_causal, output projection, residual Add. The
                  Attention fuses into one Attention step (CPU and GPU plans); RMSNormalization is
                  one LayerNorm step.
  attention_4d_softcap  4-D Q [2,2,5,32], K/V [2,2,7,32] (another length), a float mask [1,1,5,7]
                  broadcast, scale 0.3, softcap 8: runs as its primitive steps (softcap's tanh
                  keeps the fusion off).
  attention_3d_bool_mask  3-D, 2 heads of 32, a bool mask [2,1,5,6]: fused with the mask.
  attention_past  4-D with past_key/past_value [1,2,4,32] and is_causal (bottom-right aligned by
                  the past length); present_key, present_value and qk_matmul_output (mode 0)
                  outputs.
  rotary_4d_interleaved_partial  RotaryEmbedding 4-D, interleaved, rotary_embedding_dim 8 of
                  head size 16, caches [B, S, 4] (no position_ids).
  rms_axis1       RMSNormalization over dims 1.. of [2,3,4,5], epsilon 1e-3, scale [4,5]
                  broadcast to the normalized shape.
  refused         two Attention nodes jetplan does not run (the qk_matmul_output output of mode 2
                  read; nonpad_kv_seqlen at opset 24): exit 1, one error naming both nodes and
                  why.
Float outputs within e2e_common's tolerance of ONNX Runtime's. Needs the newest onnx and
onnxruntime (JETPLAN_ONNX_PYTHON); a few seconds.
    transformer_ops_onnxruntime.py --convert BIN/jetplan-convert --run BIN/jetplan-run --workdir DIR
With --gpu-run (on a machine with the --gpu-target GPU, default h100) each model is also converted
for that target and run there: float16 tensors, so within 3e-2 + 3e-2 |want| of ONNX Runtime.
"""
import os
import struct
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (PLAN_STEPS, Suite, check_error, fb_field, fb_root,  # noqa: E402
                        fb_table_vector, gpu_problems, gpu_run_args, onnx_model, run_model, run_tool,
                        tool_args)

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
GPU_TOL = 3e-2  # float16 storage, float32 arithmetic
OPSET = 23
STEP_OP = 1  # Step.op's field id
OP_LAYER_NORM, OP_ATTENTION = 15, 36  # schemas/plan.fbs OpFamily


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def family_steps(plan_path, family):
    with open(plan_path, "rb") as f:
        buf = f.read()
    count = 0
    for step in fb_table_vector(buf, fb_root(buf), PLAN_STEPS):
        pos = fb_field(buf, step, STEP_OP)
        if pos is not None and struct.unpack_from("<H", buf, pos)[0] == family:
            count += 1
    return count


def rope_caches(positions, half, theta=10000.0):
    freq = theta ** (-np.arange(half, dtype=np.float64) / half)
    angles = np.outer(np.arange(positions), freq)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def llama_block(rng):
    hidden, hq, hkv, d, seq = 128, 4, 2, 32, 6
    w = lambda *s: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)  # noqa: E731
    cos, sin = rope_caches(16, d // 2)
    inits = [const("g", (1 + 0.1 * rng.standard_normal(hidden)).astype(np.float32)),
             const("wq", w(hidden, hq * d)), const("wk", w(hidden, hkv * d)),
             const("wv", w(hidden, hkv * d)), const("wo", w(hq * d, hidden)),
             const("cos", cos), const("sin", sin)]
    nodes = [helper.make_node("RMSNormalization", ["x", "g"], ["n"], name="rms", epsilon=1e-6),
             helper.make_node("MatMul", ["n", "wq"], ["q"]),
             helper.make_node("MatMul", ["n", "wk"], ["k"]),
             helper.make_node("MatMul", ["n", "wv"], ["v"]),
             helper.make_node("RotaryEmbedding", ["q", "cos", "sin", "pos"], ["qr"], name="rope_q",
                              num_heads=hq),
             helper.make_node("RotaryEmbedding", ["k", "cos", "sin", "pos"], ["kr"], name="rope_k",
                              num_heads=hkv),
             helper.make_node("Attention", ["qr", "kr", "v"], ["a"], name="attn", is_causal=1,
                              q_num_heads=hq, kv_num_heads=hkv),
             helper.make_node("MatMul", ["a", "wo"], ["o"]),
             helper.make_node("Add", ["x", "o"], ["y"])]
    model = onnx_model("llama_block", nodes,
                       [vi("x", F, [1, seq, hidden]), vi("pos", I64, [1, seq])],
                       [vi("y", F, [1, seq, hidden])], inits, opset=OPSET)
    feeds = {"x": rng.standard_normal((1, seq, hidden)).astype(np.float32),
             "pos": np.arange(3, 3 + seq, dtype=np.int64).reshape(1, seq)}
    return model, feeds, {OP_ATTENTION: 1, OP_LAYER_NORM: 1}


def attention_4d_softcap(rng):
    mask = rng.standard_normal((1, 1, 5, 7)).astype(np.float32)
    mask[0, 0, 1, 2] = -np.inf
    nodes = [helper.make_node("Attention", ["q", "k", "v", "mask"], ["y"], name="attn",
                              scale=0.3, softcap=8.0)]
    model = onnx_model("attention_4d_softcap", nodes,
                       [vi("q", F, [2, 2, 5, 32]), vi("k", F, [2, 2, 7, 32]),
                        vi("v", F, [2, 2, 7, 32])], [vi("y", F, [2, 2, 5, 32])],
                       [const("mask", mask)], opset=OPSET)
    feeds = {n: rng.standard_normal(s).astype(np.float32)
             for n, s in (("q", (2, 2, 5, 32)), ("k", (2, 2, 7, 32)), ("v", (2, 2, 7, 32)))}
    return model, feeds, {OP_ATTENTION: 0}


def attention_3d_bool_mask(rng):
    nodes = [helper.make_node("Attention", ["q", "k", "v", "mask"], ["y"], name="attn",
                              q_num_heads=2, kv_num_heads=2)]
    model = onnx_model("attention_3d_bool_mask", nodes,
                       [vi("q", F, [2, 5, 64]), vi("k", F, [2, 6, 64]), vi("v", F, [2, 6, 64]),
                        vi("mask", B, [2, 1, 5, 6])], [vi("y", F, [2, 5, 64])], opset=OPSET)
    mask = rng.random((2, 1, 5, 6)) < 0.6
    mask[..., 0] = True  # no row fully masked
    feeds = {n: rng.standard_normal(s).astype(np.float32)
             for n, s in (("q", (2, 5, 64)), ("k", (2, 6, 64)), ("v", (2, 6, 64)))}
    feeds["mask"] = mask
    return model, feeds, {OP_ATTENTION: 1}


def attention_past(rng):
    shapes = {"q": (1, 2, 3, 32), "k": (1, 2, 3, 32), "v": (1, 2, 3, 32),
              "past_k": (1, 2, 4, 32), "past_v": (1, 2, 4, 32)}
    nodes = [helper.make_node("Attention", ["q", "k", "v", "", "past_k", "past_v"],
                              ["y", "present_k", "present_v", "qk"], name="attn", is_causal=1)]
    model = onnx_model("attention_past", nodes, [vi(n, F, list(s)) for n, s in shapes.items()],
                       [vi("y", F, [1, 2, 3, 32]), vi("present_k", F, [1, 2, 7, 32]),
                        vi("present_v", F, [1, 2, 7, 32]), vi("qk", F, [1, 2, 3, 7])],
                       opset=OPSET)
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    return model, feeds, {}


def rotary_4d_interleaved_partial(rng):
    nodes = [helper.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], name="rope",
                              interleaved=1, rotary_embedding_dim=8)]
    model = onnx_model("rotary", nodes, [vi("x", F, [2, 2, 5, 16]), vi("cos", F, [2, 5, 4]),
                                         vi("sin", F, [2, 5, 4])],
                       [vi("y", F, [2, 2, 5, 16])], opset=OPSET)
    angles = rng.uniform(-3, 3, (2, 5, 4))
    feeds = {"x": rng.standard_normal((2, 2, 5, 16)).astype(np.float32),
             "cos": np.cos(angles).astype(np.float32), "sin": np.sin(angles).astype(np.float32)}
    return model, feeds, {}


def rms_axis1(rng):
    nodes = [helper.make_node("RMSNormalization", ["x", "scale"], ["y"], name="rms", axis=1,
                              epsilon=1e-3)]
    model = onnx_model("rms_axis1", nodes, [vi("x", F, [2, 3, 4, 5])], [vi("y", F, [2, 3, 4, 5])],
                       [const("scale", rng.uniform(-2, 2, (4, 5)).astype(np.float32))],
                       opset=OPSET)
    return model, {"x": rng.uniform(1, 4, (2, 3, 4, 5)).astype(np.float32)}, {OP_LAYER_NORM: 1}


def refused_model():
    nodes = [helper.make_node("Attention", ["q", "q", "q"], ["y1", "", "", "qk"], name="with_qk",
                              qk_matmul_output_mode=2),
             helper.make_node("Attention", ["q", "q", "q", "", "", "", "lens"], ["y2"],
                              name="with_nonpad")]
    return onnx_model("refused", nodes, [vi("q", F, [1, 2, 3, 32]), vi("lens", I64, [1])],
                      [vi("y1", F, [1, 2, 3, 32]), vi("qk", F, [1, 2, 3, 3]),
                       vi("y2", F, [1, 2, 3, 32])], opset=24)


def ort_outputs(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def check_case(suite, tools, name, make, rng, gpu_target=None):
    model, feeds, want_steps = make(rng)
    work = os.path.join(tools.workdir, name)
    expected = ort_outputs(model, feeds)
    try:
        problems = run_model(tools, work, model, feeds, expected)
        if gpu_target:
            problems += gpu_problems(tools, gpu_target, work, feeds, expected, GPU_TOL, GPU_TOL)
    except Exception as e:  # a broken case must not hide the others
        problems = [f"{type(e).__name__}: {e}"]
    cpu_plan = os.path.join(work, "model.jplan")
    gpu_plan = os.path.join(work, "model.orin-agx.jplan")
    res = run_tool([tools.convert, os.path.join(work, "model.onnx"), "--target", "orin-agx",
                    "-o", gpu_plan])
    if res.returncode != 0 or res.timed_out:
        problems.append(f"jetplan-convert --target orin-agx failed ({res.describe()}): "
                        f"{res.first_error()}")
    for plan, what in ((cpu_plan, "CPU"), (gpu_plan, "orin-agx")):
        if not os.path.exists(plan):
            continue
        for family, want in want_steps.items():
            got = family_steps(plan, family)
            if got != want:
                problems.append(f"the {what} plan has {got} steps of family {family}, "
                                f"expected {want}")
    suite.report(name, problems, "(against ONNX Runtime; orin-agx plan converted)")


def main():
    gpu_target = gpu_run_args()
    tools = tool_args(__doc__)
    suite = Suite()
    rng = np.random.default_rng(23)
    for make in (llama_block, attention_4d_softcap, attention_3d_bool_mask, attention_past,
                 rotary_4d_interleaved_partial, rms_axis1):
        if tools.only and make.__name__ not in tools.only:
            continue
        check_case(suite, tools, make.__name__, make, rng, gpu_target)
    if tools.only and "refused" not in tools.only:
        return suite.summary("transformer ops against ONNX Runtime")
    work = os.path.join(tools.workdir, "refused")
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "model.onnx")
    with open(path, "wb") as f:
        f.write(refused_model().SerializeToString())
    res = run_tool([tools.convert, path, "-o", os.path.join(work, "model.jplan")])
    suite.report("refused", check_error(
        res, "jetplan-convert: error:",
        mentions=("2 unsupported nodes", "'with_qk' (Attention)",
                  "qk_matmul_output output (output 3) of qk_matmul_output_mode 2",
                  "'with_nonpad' (Attention)", "nonpad_kv_seqlen")))
    return suite.summary("transformer ops against ONNX Runtime")


if __name__ == "__main__":
    sys.exit(main())
