#!/usr/bin/env python3
"""CPU checks of the benchmark's parts that need no GPU (ctest perf_tools): the new models build,
export and give the expected output shapes; a GPU plan (--target h100, converted here) is read
back from jetplan-inspect, and the layer table's shapes and FLOPs agree with PyTorch's own
modules (a fused attention step's too); the report's tables hold every row. Exit status 1 on the first failed check.

    python3 tests/perf/test_perf_tools.py --convert build/converter/jetplan-convert \\
        --inspect build/runtime/tools/jetplan-inspect [--workdir DIR]
"""
import argparse
import os
import sys
import tempfile
import warnings

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import perf_layers as pl  # noqa: E402
import perf_models as pm  # noqa: E402
import perf_report as pr  # noqa: E402
import perf_systems as ps  # noqa: E402

FAILED = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILED.append(what)


def torch_conv_gemm_flops(model, x):
    """2 * multiply-adds of every Conv2d and Linear, from forward hooks."""
    total = [0.0, 0, 0]

    def conv_hook(m, inp, out):
        total[0] += 2.0 * out.numel() * m.in_channels // m.groups * np.prod(m.kernel_size)
        total[1] += 1

    def lin_hook(m, inp, out):
        total[0] += 2.0 * out.numel() * m.in_features
        total[2] += 1

    hooks = [m.register_forward_hook(conv_hook if isinstance(m, nn.Conv2d) else lin_hook)
             for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    return total


# A stand-in for jetplan-run on a GPU plan (none here): the JSON of a CUDA plan, with
# "gpu_samples_ms" (1, 2, ... ms plus the set's input mean) only when given --samples, and the
# input saved as the output.
FAKE_RUN = r"""
import json, os, sys
import numpy as np
a = sys.argv[1:]
opt = lambda k: a[a.index(k) + 1]
n = int(opt("--iterations"))
x = np.load(opt("--input").split("=", 1)[1])
gpu = [float(i + 1 + x.mean()) for i in range(n)]
r = {"backend": "cuda", "iterations": n, "median_ms": 9.0, "gpu_median_ms": float(np.median(gpu)),
     "gpu_p99_ms": float(np.percentile(gpu, 99))}
if "--samples" in a:
    r["samples_ms"], r["gpu_samples_ms"] = [9.0] * n, gpu
json.dump(r, open(opt("--json"), "w"))
os.makedirs(opt("--save-outputs"), exist_ok=True)
np.save(os.path.join(opt("--save-outputs"), "output.npy"), x)
"""


def hist_checks(work):
    """The histogram's jetplan samples: run_jetplan passes --samples only when asked and keeps
    every set's GPU samples in run order; the histogram draws them as a system of its own."""
    fake = os.path.join(work, "fake_jetplan_run")
    with open(fake, "w") as f:
        f.write(f"#!{sys.executable}\n" + FAKE_RUN)
    os.chmod(fake, 0o755)
    sets = [[np.full((2, 3), 10.0 * k, np.float32)] for k in range(3)]
    refs = [s[0] for s in sets]
    got = {}
    for keep in (False, True):
        got[keep] = ps.run_jetplan({"run": fake}, "x.jplan", ["input"], sets, refs, work,
                                   f"fake{int(keep)}", 0, 12, keep_samples=keep)
    want = [i + 1 + 10.0 * k for k in range(3) for i in range(4)]
    check("error" not in got[True] and got[True].get("samples") == want and
          got[True]["n"] == 12 and got[True]["rel"] == 0.0,
          f"run_jetplan --samples: every set's GPU samples in run order ({got[True]})")
    check("error" not in got[False] and "samples" not in got[False],
          "run_jetplan without keep_samples: no --samples, no samples")
    res = {"meta": {"gpu": "G", "binaries_commit": "abc", "date": "d"}, "rows": [],
           "hist": {"model": "m1", "batch": 1, "jetplan": {"median": 5.0, "p99": 20.0},
                    "samples": {"jetplan": got[True]["samples"], "eager": [3.0, 4.0, 5.0]}}}
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("skip histogram chart: no matplotlib")
        return
    drawn = {}
    import matplotlib.axes
    orig = matplotlib.axes.Axes.hist

    def spy(self, x, *a, **k):
        drawn[k.get("label", "").split(" (")[0]] = list(x)
        return orig(self, x, *a, **k)
    matplotlib.axes.Axes.hist = spy
    try:
        names = pr.charts(res, work, tag="histtest")
    finally:
        matplotlib.axes.Axes.hist = orig
    check(names == ["bench_histtest_hist.png"] and
          os.path.getsize(os.path.join(work, names[0])) > 0 and
          drawn.get("jetplan FP16") == want and drawn.get("eager FP16") == [3.0, 4.0, 5.0],
          f"histogram: jetplan's samples drawn as a system's ({sorted(drawn)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--convert", required=True)
    ap.add_argument("--inspect", required=True)
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="jetplan-perf-test.")
    os.makedirs(work, exist_ok=True)
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    tools = {"convert": args.convert, "inspect": args.inspect}

    # The models of the benchmark that are built here (transformers' BERT is not: a skip).
    shapes = {"yolo_style": (1, 25200, 85), "unet": (1, 4, 256, 256), "lstm2": (1, 64, 32)}
    for name, shape in shapes.items():
        model = pm.build(name)
        sets = pm.input_sets(name, 1, 2)
        refs = pm.reference(model, sets, torch.device("cpu"))
        check(refs[0].shape == shape and np.all(np.isfinite(refs[0])),
              f"{name}: output {refs[0].shape}, expected {shape}")
        check(pm.rel_err(refs[1], refs[0]) > 1e-3, f"{name}: input sets give other outputs")
    try:
        pm.build("bert_base")
        check(True, "bert_base builds (transformers present)")
    except pm.Unavailable as e:
        check("transformers" in str(e), f"bert_base: a clear skip reason: {e}")
    ids, mask = pm.input_sets("bert_base", 2, 2)[1]
    check(ids.dtype == np.int64 and mask.shape == (2, pm.BERT_SEQ) and mask.min() == 0,
          "bert_base input sets: int64 ids, the second set masks padding")
    for name, seq in (("gpt_decoder", pm.GPT_SEQ), ("gpt_decoder_s512", 512)):
        try:
            model = pm.build(name)
            check(pm.input_names(name, model) == ["input_ids"], f"{name} builds, ids only")
        except pm.Unavailable as e:
            check("transformers" in str(e), f"{name}: a clear skip reason: {e}")
        sets = pm.input_sets(name, 2, 2)
        check(len(sets[0]) == 1 and sets[0][0].shape == (2, seq) and sets[0][0].dtype == np.int64
              and sets[1][0].max() < pm.GPT_VOCAB and pm.input_names(name) == ["input_ids"],
              f"{name} input sets: one int64 [2, {seq}] ids tensor per set")
    check("gpt_decoder" in pm.DEFAULT_MODELS and "gpt_decoder_s512" not in pm.DEFAULT_MODELS,
          "the default run has the sequence-128 decoder, --models names the 512 one")

    # A GPU plan converted here and read back: shapes, FLOPs and memory figures.
    model = pm.build("resnet18")
    x = pm.input_sets("resnet18", 2, 1)[0]
    onnx_path, plan = os.path.join(work, "resnet18.onnx"), os.path.join(work, "resnet18.jplan")
    pm.export("resnet18", model, pm.input_sets("resnet18", 1, 1)[0], onnx_path)
    c = ps.convert(tools, onnx_path, plan, {"input": x[0].shape}, "h100")
    check("error" not in c and c["plan_bytes"] > 0, f"resnet18 converts for h100: {c}")
    info = ps.inspect(tools, plan)
    check(info and info.get("weight_bytes", 0) > 20e6 and info.get("arena_bytes", 0) > 0,
          f"jetplan-inspect: weights {info.get('weight_bytes')} arena {info.get('arena_bytes')}")
    layers = [pl.describe(s) for s in info["steps"]]
    layers = [d for d in layers if d]
    want, convs, linears = torch_conv_gemm_flops(model, torch.from_numpy(x[0]))
    got = sum(d[2] for d in layers)
    check(sum(d[0] == "Conv" for d in layers) == convs and
          sum(d[0] == "Gemm" for d in layers) == linears,
          f"resnet18 plan: {convs} convs and {linears} GEMM steps as in torch")
    check(abs(got - want) < 1e-6 * want, f"resnet18 conv+GEMM FLOPs {got:.4g} == torch's "
          f"{want:.4g}")
    check(any("+res Relu" in d[1] for d in layers), "residual add and ReLU fused into a conv")

    # A fused attention step read back and restated for SDPA: a one-layer ViT (3 images of 17
    # tokens, 2 heads of 64), which GPU plans run as one Attention step over [tokens, 6, 64].
    import torchvision
    vit = torchvision.models.VisionTransformer(image_size=64, patch_size=16, num_layers=1,
                                               num_heads=2, hidden_dim=128, mlp_dim=256).eval()
    onnx_path, plan = os.path.join(work, "vit_tiny.onnx"), os.path.join(work, "vit_tiny.jplan")
    kwargs = dict(opset_version=17, input_names=["input"], output_names=["output"],
                  dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    try:
        torch.onnx.export(vit, (torch.randn(1, 3, 64, 64),), onnx_path, dynamo=False, **kwargs)
    except TypeError:  # older torch has no dynamo argument
        torch.onnx.export(vit, (torch.randn(1, 3, 64, 64),), onnx_path, **kwargs)
    c = ps.convert(tools, onnx_path, plan, {"input": (3, 3, 64, 64)}, "h100")
    check("error" not in c, f"the one-layer ViT converts for h100: {c}")
    info = ps.inspect(tools, plan) or {"steps": []}
    att = [pl.describe(s) for s in info["steps"] if s["op"] == "Attention"]
    check(len(att) == 1 and att[0][:3] == ("Attention", "6x1 heads, 17x17 keys, d64",
                                           4.0 * 6 * 17 * 17 * 64),
          f"the ViT's attention step restated for SDPA: {[a[:3] for a in att]}")

    # Timing statistics and the report.
    med, p99 = ps.stats(list(range(1, 101)))
    check(med == 50.5 and abs(p99 - 99.01) < 1e-9, f"stats: median {med}, p99 {p99}")
    check(pm.rel_err(np.array([1.0, np.nan]), np.array([1.0, 1.0])) == float("inf"),
          "a NaN output is an infinite error")
    res = {"meta": {"date": "d", "gpu": "G", "driver": "1", "torch": "t", "ort": "o",
                    "ort_provider": "CPUExecutionProvider", "target": "h100",
                    "binaries_commit": "abc", "warmup": 1, "iterations": 2, "input_sets": 3,
                    "ort_seconds": 1, "time_budget_s": 9, "elapsed_s": 8},
           "rows": [{"model": "m1", "batch": 1, "jetplan": {"median": 1.0, "p99": 1.1, "rel": 1e-3},
                     "eager": {"median": 4.0, "p99": 5.0, "rel": 1e-3},
                     "cuda_graph": {"median": 0.5, "p99": 0.6, "rel": 1e-3},
                     "resources": {"weight_bytes": 2**20, "arena_bytes": 2**20}},
                    {"model": "m2", "batch": 8, "jetplan": {"error": "unsupported: X"}},
                    {"model": "m3", "batch": 1, "skipped": "no package"}], "notes": ["n"]}
    md = pr.markdown(res)
    check("| m1 | 1 | 1.000 (1.100) | 4.000 (5.000) | 0.500 (0.600) |" in md and
          "**0.25**" in md and "| 2.00 |" in md, "report: latencies and ratios")
    check("unsupported: X" in md and "skipped: no package" in md and "| 2.0 |" in md,
          "report: refusals, skips and jetplan memory")
    hist_checks(work)
    print(f"\n{len(FAILED)} failed" + (": " + "; ".join(FAILED) if FAILED else ""))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
