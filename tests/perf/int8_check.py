#!/usr/bin/env python3
"""INT8 against FP16 on the GPU, per model and batch: accuracy against PyTorch FP32 and speed.

Each model (tests/models/export_and_check.py's builders: random weights, randomized BatchNorm)
is exported, calibrated on --calib-samples inputs of the model's input distribution (standard
normal, the same as export_and_check's test input; written as .npy), converted twice
(--precision fp16 and --precision int8), and both plans run on held-out inputs:

  snr_db     10 log10(|y|^2 / |y - y_torch|^2) over the held-out outputs (FP32 PyTorch reference)
  top1       the share of held-out samples whose argmax agrees with PyTorch's
  ms         jetplan-run's GPU median (CUDA graph replays), FP16 and INT8 interleaved over
             --rounds rounds; the figure is the median over rounds
  int8/fp16  the speed ratio (below 1: INT8 is faster)

With --profile the INT8 and FP16 plans of batch 1 are profiled step by step and the conv steps
are listed side by side (the layer table). With --base-convert OTHER_CONVERTER a third plan,
int8_base, is converted by that converter from the same model with the same scales (it reads
the calibration cache the first conversion wrote), checked and timed in the same rounds: int8/base is this converter's INT8 plan
over that one's (an A/B of a converter change on one runtime). Writes everything to --json.

    python3 tests/perf/int8_check.py --convert BIN/jetplan-convert --run BIN/jetplan-run \\
        --target h100 --models resnet50,resnet18 --batches 1,8 --json out.json [--profile]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export_and_check as eac  # noqa: E402


def run(argv, timeout=1800):
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))}: exit {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p.stdout


def snr_db(got, want):
    noise = float(np.sum((got.astype(np.float64) - want) ** 2))
    return 10 * np.log10(float(np.sum(want.astype(np.float64) ** 2)) / max(noise, 1e-30))


def time_plan(args, plan):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    run([args.run, plan, "--warmup", 50, "--iterations", args.iterations, "--json", out])
    with open(out) as f:
        figures = json.load(f)
    os.unlink(out)
    return figures.get("gpu_median_ms", figures.get("median_ms"))


def time_interleaved(args, plans):
    """{"<kind>_ms": median over --rounds rounds} of every plan of {kind: path}, the plans run
    in turn each round (drift falls on all alike)."""
    times = {kind: [] for kind in plans}
    for _ in range(args.rounds):
        for kind, plan in plans.items():
            times[kind].append(time_plan(args, plan))
    return {f"{kind}_ms": round(statistics.median(t), 4) for kind, t in times.items()}


def profile(args, plan):
    """{step name: (kernel, ms)} of the Conv and Gemm steps (INT8 GEMMs are 1x1 convs), from jetplan-run --profile --json."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    run([args.run, plan, "--warmup", 20, "--iterations", 100, "--profile", "--json", out])
    with open(out) as f:
        steps = json.load(f)["profile"]
    os.unlink(out)
    return {s["name"]: (s["kernel"], s["ms"]) for s in steps if s["op"] in ("Conv", "Gemm")}


def check(args, name, batch, work):
    model, _, opset = eac.build(name, batch)
    shape = (batch,) + tuple(eac.MODELS[name][1][1:])
    os.makedirs(work, exist_ok=True)
    onnx_path = os.path.join(work, f"{name}.onnx")
    eac.export(model, torch.zeros(shape), opset, onnx_path)
    calib = os.path.join(work, "calib")
    os.makedirs(calib, exist_ok=True)
    rng = np.random.default_rng(10)
    for i in range(max(1, args.calib_samples // batch)):
        np.save(os.path.join(calib, f"s{i:03d}.npy"), rng.standard_normal(shape).astype(np.float32))
    held = [np.random.default_rng(1000 + i).standard_normal(shape).astype(np.float32)
            for i in range(max(1, args.held_out // batch))]
    pin = ["--shape", "input:" + "x".join(map(str, shape)), "--target", args.target]
    plans = {"fp16": os.path.join(work, "fp16.jplan"), "int8": os.path.join(work, "int8.jplan")}
    run([args.convert, onnx_path, "-o", plans["fp16"]] + pin)

    def int8(convert, plan, cache):
        return run([convert, onnx_path, "-o", plan, "--precision", "int8", "--calib", calib,
                    "--calib-method", args.calib_method, "--calib-cache", os.path.join(work, cache),
                    "--calib-device", args.calib_device] + pin)

    if os.path.exists(os.path.join(work, "calib.cache")):
        os.unlink(os.path.join(work, "calib.cache"))  # calibrate afresh: the conversion is timed
    started = time.perf_counter()
    summary = int8(args.convert, plans["int8"], "calib.cache")
    row = {"model": name, "batch": batch, "int8_summary": summary.strip().splitlines(),
           "int8_convert_s": round(time.perf_counter() - started, 2)}
    if args.base_convert:
        plans["int8_base"] = os.path.join(work, "int8_base.jplan")
        row["int8_base_summary"] = int8(args.base_convert, plans["int8_base"],
                                        "calib.cache").strip().splitlines()
    with torch.no_grad():
        want = [model(torch.from_numpy(x)).numpy() for x in held]
    for kind, plan in plans.items():
        got = []
        for i, x in enumerate(held):
            xin, odir = os.path.join(work, f"held{i}.npy"), os.path.join(work, f"out_{kind}_{i}")
            np.save(xin, x)
            run([args.run, plan, "--input", f"input={xin}", "--warmup", 0, "--iterations", 1,
                 "--save-outputs", odir])
            got.append(np.load(os.path.join(odir, "output.npy")))
        g, w = np.concatenate(got), np.concatenate(want)
        row[f"{kind}_snr_db"] = round(snr_db(g, w), 2)
        row[f"{kind}_top1"] = float(np.mean(g.reshape(g.shape[0], -1).argmax(1) == w.reshape(w.shape[0], -1).argmax(1)))
    row.update(time_interleaved(args, plans))
    row["int8_over_fp16"] = round(row["int8_ms"] / row["fp16_ms"], 3)
    if "int8_base_ms" in row:
        row["int8_over_base"] = round(row["int8_ms"] / row["int8_base_ms"], 3)
    if args.profile and batch == 1:
        f16, i8 = profile(args, plans["fp16"]), profile(args, plans["int8"])
        row["layers"] = [{"step": s, "fp16_kernel": f16[s][0], "fp16_ms": f16[s][1],
                          "int8_kernel": i8.get(s, ("-", None))[0], "int8_ms": i8.get(s, ("-", None))[1]}
                         for s in f16]
    return row


def base_parser(doc, models, calib_samples, workdir_prefix):
    """The arguments this script and qdq_check.py share."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--convert", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--models", default=models)
    ap.add_argument("--calib-samples", type=int, default=calib_samples)
    ap.add_argument("--held-out", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--workdir", default=tempfile.mkdtemp(prefix=workdir_prefix))
    ap.add_argument("--json")
    return ap


def main():
    ap = base_parser(__doc__, "resnet50,resnet18", 32, "jetplan_int8_")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--calib-method", default="entropy")
    ap.add_argument("--calib-device", default="auto", choices=["auto", "cpu", "gpu"],
                    help="where the converter runs calibration (its int8_convert_s is timed)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--base-convert", help="a second converter: its INT8 plan joins as int8_base")
    args = ap.parse_args()
    rows = []
    print(f"{'model':<18}{'batch':>6}{'fp16 ms':>10}{'int8 ms':>10}{'int8/fp16':>11}"
          f"{'fp16 SNR':>10}{'int8 SNR':>10}{'int8 top1':>11}")
    for name in args.models.split(","):
        for batch in map(int, args.batches.split(",")):
            try:
                row = check(args, name, batch, os.path.join(args.workdir, f"{name}_b{batch}"))
            except Exception as e:  # one model's failure is reported, the others still run
                row = {"model": name, "batch": batch, "error": str(e)}
                print(f"{name:<18}{batch:>6}  ERROR {e}", flush=True)
                rows.append(row)
                continue
            rows.append(row)
            print(f"{name:<18}{batch:>6}{row['fp16_ms']:>10.3f}{row['int8_ms']:>10.3f}"
                  f"{row['int8_over_fp16']:>11.3f}{row['fp16_snr_db']:>10.1f}{row['int8_snr_db']:>10.1f}"
                  f"{row['int8_top1']:>11.2f}", flush=True)
            for line in row["int8_summary"][1:]:
                print("    " + line)
            if "int8_base_ms" in row:
                print(f"    base converter's INT8 plan: {row['int8_base_ms']:.3f} ms, SNR "
                      f"{row['int8_base_snr_db']:.1f} dB, top1 {row['int8_base_top1']:.2f}; "
                      f"int8/base {row['int8_over_base']:.3f}")
                for line in row["int8_base_summary"][1:]:
                    print("    base: " + line)
            for layer in row.get("layers", []):
                print(f"    {layer['step'][:48]:<50}{layer['fp16_kernel']:<34}{layer['fp16_ms']}"
                      f"  {layer['int8_kernel']:<36}{layer['int8_ms']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"target": args.target, "calib_method": args.calib_method, "rows": rows}, f, indent=1)
    sys.exit(1 if any("error" in r for r in rows) else 0)


if __name__ == "__main__":
    main()
