#!/usr/bin/env python3
"""jetplan against the peers a user would pick, side by side in one run on one GPU.

For each model and batch size: the model is built in PyTorch with random weights (the same
constructor and seed as tests/models/export_and_check.py), exported to ONNX, converted with
jetplan-convert --target TARGET (FP16, NHWC, kernels chosen for the target) and timed with
jetplan-run (GPU time of one CUDA-graph replay, CUDA events). The peers run the same input on the
same GPU: PyTorch eager FP16 channels-last with cudnn.benchmark, the same replayed as a CUDA
graph, and torch.compile(mode="max-autotune") for the models in --compile (slow to build: capped
by --compile-timeout, skipped models are named). Every system's output is compared with PyTorch
FP32 (max abs error / max |reference|). Timings: median and p99 over --iterations after warm-up.

    python3 tests/perf/bench_models.py --convert BIN/jetplan-convert --run BIN/jetplan-run \\
        --target h100 --models resnet50,mobilenet_v2 --batches 1,8 --json out.json

Prints a markdown table (ratios are jetplan's time over the peer's: below 1 means jetplan is
faster) and writes everything to --json.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export_and_check as models  # noqa: E402


def time_cuda(fn, warmup, iterations):
    """Median and p99 in ms of fn() by CUDA events, each call timed on its own."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return float(np.median(times)), float(times[min(len(times) - 1, int(0.99 * len(times)))])


def rel_err(got, ref):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape or not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30))


def bench_torch(model, x, ref, args, compile_it):
    out = {}
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    m = model.to(dev).half().to(memory_format=torch.channels_last)
    xin = x.to(dev).half()
    if xin.dim() == 4:
        xin = xin.contiguous(memory_format=torch.channels_last)
    with torch.inference_mode():
        y = m(xin)
        out["eager"] = time_cuda(lambda: m(xin), args.warmup, args.iterations) + (
            rel_err(y.float().cpu().numpy(), ref),)
        # The same replayed as one CUDA graph (what a latency-minded user would do by hand).
        static_in = xin.clone()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                m(static_in)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_out = m(static_in)
        g.replay()
        out["cuda_graph"] = time_cuda(g.replay, args.warmup, args.iterations) + (
            rel_err(static_out.float().cpu().numpy(), ref),)
        if compile_it:
            start = time.monotonic()
            try:
                cm = torch.compile(m, mode="max-autotune")

                def step():  # max-autotune replays CUDA graphs: mark each call a new step
                    torch.compiler.cudagraph_mark_step_begin()
                    return cm(xin)

                step()
                y = step().float().cpu().numpy()
                build_s = time.monotonic() - start
                out["compile"] = time_cuda(step, args.warmup, args.iterations) + (
                    rel_err(y, ref),)
                out["compile_build_s"] = build_s
            except Exception as e:  # a failed compile is reported, not fatal
                out["compile_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    return out


def bench_jetplan(model_name, name, model, x, ref, args, work):
    onnx_path = os.path.join(work, f"{name}.onnx")
    plan = os.path.join(work, f"{name}.jplan")
    in_npy = os.path.join(work, f"{name}.in.npy")
    res_json = os.path.join(work, f"{name}.run.json")
    out_dir = os.path.join(work, f"{name}.out")
    _, _, opset = models.MODELS[model_name]
    models.export(model, x, opset, onnx_path)
    np.save(in_npy, x.numpy())
    shape = "x".join(str(d) for d in x.shape)
    t0 = time.monotonic()
    p = subprocess.run([args.convert, onnx_path, "-o", plan, "--shape", f"input:{shape}",
                        "--target", args.target], capture_output=True, text=True)
    convert_s = time.monotonic() - t0
    if p.returncode != 0:
        return {"error": "convert: " + (p.stderr.strip().splitlines() or ["?"])[-1]}
    p = subprocess.run([args.run, plan, "--input", f"input={in_npy}", "--warmup",
                        str(args.warmup), "--iterations", str(args.iterations), "--json", res_json,
                        "--save-outputs", out_dir] + (["--profile"] if args.profile else []),
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": "run: " + (p.stderr.strip().splitlines() or ["?"])[-1]}
    r = json.load(open(res_json))
    got = np.load(os.path.join(out_dir, "output.npy"))
    return {"median": r.get("gpu_median_ms"), "p99": r.get("gpu_p99_ms"),
            "wall_median": r["median_ms"], "rel": rel_err(got, ref), "convert_s": convert_s,
            "plan_bytes": os.path.getsize(plan), "profile": r.get("profile"),
            "run_stdout": p.stdout[-4000:] if args.profile else ""}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--convert", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--models", default="resnet18,resnet50,mobilenet_v2,efficientnet_b0,vit_b_16")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--compile", default="resnet50,mobilenet_v2",
                    help="models also timed under torch.compile max-autotune (batch 1 only)")
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--profile", action="store_true", help="per-step jetplan profile too")
    ap.add_argument("--json", default=None)
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="jetplan-bench.")
    os.makedirs(work, exist_ok=True)
    compile_set = set(n for n in args.compile.split(",") if n)
    gpu = torch.cuda.get_device_name(0)
    print(f"GPU: {gpu}, torch {torch.__version__}, target {args.target}", flush=True)
    rows = []
    for name in [n for n in args.models.split(",") if n]:
        for batch in [int(b) for b in args.batches.split(",") if b]:
            model, x, _ = models.build(name, batch)
            with torch.no_grad():
                ref = model(x).numpy()
            row = {"model": name, "batch": batch}
            row["jetplan"] = bench_jetplan(name, f"{name}_b{batch}", model, x, ref, args, work)
            row["torch"] = bench_torch(model, x, ref, args, name in compile_set and batch == 1)
            rows.append(row)
            j = row["jetplan"]
            print(f"{name} b{batch}: jetplan {j.get('median')} ms (p99 {j.get('p99')}, rel "
                  f"{j.get('rel')}) {j.get('error', '')}; torch {row['torch']}", flush=True)
            if args.profile and j.get("run_stdout"):
                print(j["run_stdout"], flush=True)

    def cell(v):
        return "-" if v is None else f"{v:.3f}"

    print("\n| model | batch | jetplan ms (p99) | rel err | eager fp16 ms | graph ms | "
          "compile ms | jetplan/eager | jetplan/graph | jetplan/compile |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        j, t = r["jetplan"], r["torch"]
        jm = j.get("median")
        peers = [t.get(k, (None,))[0] for k in ("eager", "cuda_graph", "compile")]
        ratios = [cell(jm / p) if jm and p else "-" for p in peers]
        jt = f"{cell(jm)} ({cell(j.get('p99'))})" if jm else j.get("error", "-")
        print(f"| {r['model']} | {r['batch']} | {jt} | {cell(j.get('rel'))} | "
              f"{cell(peers[0])} | {cell(peers[1])} | {cell(peers[2])} | " + " | ".join(ratios)
              + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": gpu, "torch": torch.__version__, "target": args.target,
                       "rows": rows}, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
