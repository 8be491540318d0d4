#!/usr/bin/env python3
"""jetplan against the peers a user would pick, side by side in one run on one GPU, with pictures.

For each model (tests/perf/perf_models.py: resnet18, resnet50, mobilenet_v2, mobilenet_v3_large,
efficientnet_b0, regnet_y_400mf (grouped convs), convnext_tiny (7x7 depthwise, LayerNorm over
channels), vit_b_16, bert_base at sequence 128, gpt_decoder (GPT-2 small, causal, a prefill of
128 tokens; gpt_decoder_s512 with --models), yolo_style, unet, lstm2; random weights) and
batch size: one ONNX export (symbolic batch), jetplan-convert --target (FP16), then on the same
input sets (rotated) every system of tests/perf/perf_systems.py: jetplan FP16, PyTorch eager FP16
channels-last with cudnn.benchmark, the same as a CUDA graph, torch.compile(mode="max-autotune")
(models of --compile only: a cold build takes minutes; capped, skipped ones named), ONNX Runtime
with the best provider present. Outputs against PyTorch FP32; median and p99 after warm-up.
Also: conversion time, plan load time, plan size, jetplan weights + arena against PyTorch's peak
allocation, and the layer-level comparison of tests/perf/perf_layers.py (resnet50, vit_b_16).

The command (README "GPU tests"; on a machine with an NVIDIA GPU, python3 with torch,
torchvision, onnx, onnxruntime, matplotlib, transformers; binaries from tests/gpu/pack.sh):

    python3 tests/perf/bench_models.py --bin .device-carry/gpu/bin --target h100 --out OUT_DIR

It stops starting work at --time-budget (default 540 s, the whole run stays under 10 minutes on
one H100) and names what it skipped. OUT_DIR gets bench.json, bench.md (the RESULTS.md section),
bench_latency.png and bench_hist.png; --append-results appends bench.md to tests/perf/RESULTS.md
(or later: python3 tests/perf/perf_report.py OUT_DIR/bench.json --append-results).
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import perf_layers as pl  # noqa: E402
import perf_models as pm  # noqa: E402
import perf_report as pr  # noqa: E402
import perf_systems as ps  # noqa: E402

REPORT_RESERVE_S = 20  # JSON, markdown and charts
LAYER_RESERVE_S = 45   # the layer benchmark (two models at one batch size)


def sh(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def find_tool(args, name):
    for d in ([args.bin] if args.bin else []) + [os.path.dirname(args.run or "")]:
        p = os.path.join(d, name)
        if d and os.path.exists(p):
            return p
    return shutil.which(name)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=None, help="folder of jetplan-convert, jetplan-run, "
                    "jetplan-inspect (tests/gpu/pack.sh's bin)")
    ap.add_argument("--convert", default=None)
    ap.add_argument("--run", default=None)
    ap.add_argument("--inspect", default=None)
    ap.add_argument("--target", required=True, help="jetplan-convert --target (h100, h200, ...)")
    ap.add_argument("--models", default=",".join(pm.DEFAULT_MODELS))
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--compile", default="lstm2,resnet18,bert_base,resnet50",
                    help="models also timed under torch.compile max-autotune, in this order, "
                    "while time is left (a cold build takes minutes)")
    ap.add_argument("--compile-batches", default="1")
    ap.add_argument("--compile-timeout", type=float, default=200, help="cap per model, s")
    ap.add_argument("--inductor-cache", default=os.path.expanduser("~/.cache/jetplan-bench-inductor"),
                    help="TORCHINDUCTOR_CACHE_DIR (a warm cache makes the builds seconds)")
    ap.add_argument("--layers", default="resnet50,vit_b_16", help="models of the layer table")
    ap.add_argument("--layer-batches", default="1,8")
    ap.add_argument("--hist", default="resnet50:1", help="MODEL:BATCH of the histogram")
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--input-sets", type=int, default=3)
    ap.add_argument("--ort-seconds", type=float, default=1.0,
                    help="ONNX Runtime: stop timing a model after this long (at least 10 runs)")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--time-budget", type=float, default=540)
    ap.add_argument("--out", default=None, help="bench.json, bench.md, PNGs here")
    ap.add_argument("--json", default=None, help="the JSON's path (default OUT/bench.json)")
    ap.add_argument("--workdir", default=None, help="ONNX files, plans, inputs (default: temp)")
    ap.add_argument("--binaries-commit", default=os.environ.get("JETPLAN_COMMIT", "?"))
    ap.add_argument("--script-commit", default=None, help="default: git rev-parse HEAD")
    ap.add_argument("--append-results", action="store_true",
                    help="append the markdown section to tests/perf/RESULTS.md")
    return ap.parse_args()


def find_tools(args):
    return {"convert": args.convert or find_tool(args, "jetplan-convert"),
            "run": args.run or find_tool(args, "jetplan-run"),
            "inspect": (args.inspect if args.inspect and os.path.exists(args.inspect)
                        else find_tool(args, "jetplan-inspect"))}


def run_meta(args, gpu, ort_mod, provider):
    """Where and how the run was made: the machine, the versions, the commits, the settings."""
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "gpu": gpu,
            "driver": sh(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]),
            "clocks": sh(["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm",
                          "--format=csv,noheader"]),
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "ort": getattr(ort_mod, "__version__", "missing"),
            "ort_provider": provider if ort_mod else "-",
            "target": os.path.basename(args.target).replace(".json", ""),
            "binaries_commit": args.binaries_commit,
            "script_commit": args.script_commit or sh(["git", "-C", HERE, "rev-parse", "--short",
                                                       "HEAD"]) or "?",
            "warmup": args.warmup, "iterations": args.iterations,
            "input_sets": args.input_sets, "ort_seconds": args.ort_seconds,
            "time_budget_s": args.time_budget,
            "command": "python3 tests/perf/bench_models.py " + " ".join(sys.argv[1:])}


class Bench:
    """One run: the options, the tools, the target, the work folder and the result it fills in
    (res: meta, rows, notes, and hist, layers, charts when made), against one time budget."""

    def __init__(self, args, tools, target, work, names, t_start):
        self.args, self.tools, self.target, self.work = args, tools, target, work
        self.names, self.t_start = names, t_start
        self.deadline = t_start + args.time_budget
        self.batches = [int(b) for b in args.batches.split(",") if b]
        self.layer_set = {(m, b) for m in args.layers.split(",") if m
                          for b in map(int, args.layer_batches.split(","))}
        self.compile_list = [(m, b) for m in args.compile.split(",") if m in names
                             for b in map(int, args.compile_batches.split(","))
                             if b in self.batches]
        self.hist_key = tuple(args.hist.split(":")) if args.hist else None
        self.ort_mod, provider = ps.ort_provider()
        gpu = torch.cuda.get_device_name(0)
        self.meta = meta = run_meta(args, gpu, self.ort_mod, provider)
        print(f"GPU: {gpu}, driver {meta['driver']}, torch {meta['torch']}, onnxruntime "
              f"{meta['ort']} ({meta['ort_provider']}), target {target}, tools {tools}",
              flush=True)
        self.res = {"meta": meta, "rows": [], "notes": []}
        self.notes = notes = self.res["notes"]
        if not tools["inspect"]:
            notes.append("jetplan-inspect not found: no weights/arena figures and no layer table")
        if args.no_ort or not self.ort_mod:
            notes.append(f"ONNX Runtime not run: {'--no-ort' if args.no_ort else provider}")
        elif provider == "CPUExecutionProvider":
            notes.append(f"ONNX Runtime {meta['ort']} offers "
                         f"{self.ort_mod.get_available_providers()} here: timed on the CPU "
                         f"(FP32), not comparable with the GPU systems")
        self.plans = {}  # (model, batch) -> (plan path, inspect info, profile, median)
        self.peak, self.base_s = None, None

    def left(self):
        return self.deadline - time.monotonic()

    def baselines(self):
        """The tensor-core peak (layer table) and the one-Relu plan (load time)."""
        self.peak = peak = pl.measure_peak()
        print(f"FP16 tensor-core peak (torch.matmul {peak['shape']}): {peak['tflops']:.0f} "
              f"TFLOP/s", flush=True)
        tiny, why = ps.tiny_plan(self.tools, self.work, self.target)
        walls = [ps.wall_of_run(self.tools, tiny) for _ in range(3)] if tiny else [(None, why)]
        self.base_s = base_s = min([w for w, _ in walls if w is not None], default=None)
        if base_s is None:
            self.notes.append(f"load times include process start and CUDA initialisation: the "
                              f"one-Relu baseline plan failed: {walls[0][1]}")
        print(f"jetplan-run of a one-Relu plan: {base_s} s {walls[0][1] or ''}", flush=True)
        self.meta["load_baseline_s"] = base_s

    def jetplan(self, row, name, b, tag, in_names, onnx_path, sets, refs, keep):
        """Convert, inspect, load and run one (model, batch) with jetplan."""
        args, tools, notes = self.args, self.tools, self.notes
        plan = os.path.join(self.work, f"{tag}.jplan")
        shapes = {n: a.shape for n, a in zip(in_names, sets[0])}
        c = ps.convert(tools, onnx_path, plan, shapes, self.target)
        row["resources"]["convert_s"] = c["convert_s"]
        if "error" in c:
            row["jetplan"] = {"error": c["error"]}
            return
        row["resources"]["plan_bytes"] = c["plan_bytes"]
        info = ps.inspect(tools, plan)
        if info and "error" not in info:
            row["resources"]["weight_bytes"] = info["weight_bytes"]
            row["resources"]["arena_bytes"] = info["arena_bytes"]
        elif info:
            notes.append(f"{tag}: {info['error']}")
        w, why = ps.wall_of_run(tools, plan)
        if w is not None:
            row["resources"]["load_ms"] = max(0.0, (w - (self.base_s or 0.0)) * 1e3)
        else:
            notes.append(f"{tag}: no load time: {why}")
        prof = (name, b) in self.layer_set
        row["jetplan"] = ps.run_jetplan(tools, plan, in_names, sets, refs, self.work, tag,
                                        args.warmup, args.iterations, profile=prof,
                                        keep_samples=keep)
        self.plans[(name, b)] = (plan, info, row["jetplan"].pop("profile", None),
                                 row["jetplan"].get("median"))

    def bench_one(self, row, name, b, model, in_names, onnx_path, export_error):
        """Every system on one (model, batch), the same input sets."""
        args = self.args
        if export_error:
            row["jetplan"] = {"error": export_error}
        sets = [s[:len(in_names)] for s in pm.input_sets(name, b, args.input_sets)]
        refs = pm.reference(model, sets, torch.device("cuda"))
        tag = f"{name}_b{b}"
        keep = self.hist_key == (name, str(b))
        if not export_error:
            self.jetplan(row, name, b, tag, in_names, onnx_path, sets, refs, keep)
        t = ps.bench_torch(model, sets, refs, args.warmup, args.iterations, keep)
        row["resources"]["torch_peak_bytes"] = t.pop("torch_peak_bytes", None)
        row.update(t)
        if not (args.no_ort or not self.ort_mod or export_error):
            row["ort"] = ps.bench_ort(onnx_path, in_names, sets, refs, 2, args.iterations,
                                      args.ort_seconds, keep)
        if (name, b) in self.compile_list:
            ps.save_sets(os.path.join(self.work, f"{tag}.sets.npz"), sets, refs)
        if keep:
            self.res["hist"] = {"model": name, "batch": b, "samples": {
                k: row[k].pop("samples") for k in ("jetplan", "eager", "cuda_graph", "ort")
                if "samples" in row.get(k, {})}, "jetplan": row.get("jetplan")}
        print(f"{tag}: " + "; ".join(f"{k} {pr.lat_cell(row.get(k))} rel "
                                     f"{pr.rel_cell(row.get(k))}"
                                     for k, _ in pr.SYSTEMS if k in row), flush=True)

    def export(self, name, model, onnx_path):
        """The model's ONNX export; (note, error), each None when there is none."""
        export_note, export_error = None, None
        try:
            pm.export(name, model, pm.input_sets(name, 1, 1)[0], onnx_path)
        except Exception as e:  # noqa: BLE001
            if hasattr(model, "with_mask"):
                model.with_mask = False
                export_note = f"{name}: exported without attention_mask (all tokens attended): " \
                              f"the export with the mask failed: {ps.short(e)}"
                try:
                    pm.export(name, model, pm.input_sets(name, 1, 1)[0], onnx_path)
                except Exception as e2:  # noqa: BLE001
                    export_error = "export: " + ps.short(e2)
            else:
                export_error = "export: " + ps.short(e)
        return export_note, export_error

    def model(self, name):
        """One model at every batch size, while the budget lasts."""
        res, notes, batches = self.res, self.notes, self.batches
        need = REPORT_RESERVE_S + (LAYER_RESERVE_S if self.layer_set else 0) + 15
        if self.left() < need:
            for b in batches:
                res["rows"].append({"model": name, "batch": b, "skipped": "time budget spent"})
            notes.append(f"{name}: not run, {self.left():.0f} s were left of --time-budget")
            return
        t_model = time.monotonic()
        try:
            model = pm.build(name)
        except Exception as e:  # noqa: BLE001 pm.Unavailable: a package missing here
            why = str(e) if isinstance(e, pm.Unavailable) else f"{name}: build: {ps.short(e)}"
            for b in batches:
                res["rows"].append({"model": name, "batch": b, "skipped": why})
            notes.append(f"skipped {why}")
            print(f"SKIP {why}", flush=True)
            return
        onnx_path = os.path.join(self.work, f"{name}.onnx")
        export_note, export_error = self.export(name, model, onnx_path)
        if export_note:
            notes.append(export_note)
            print(export_note, flush=True)
        in_names = pm.input_names(name, model)
        for b in batches:
            row = {"model": name, "batch": b, "resources": {}}
            res["rows"].append(row)
            if self.left() < need - 10:
                row["skipped"] = "time budget spent"
                notes.append(f"{name} b{b}: not run, {self.left():.0f} s were left of "
                             f"--time-budget")
                continue
            try:
                self.bench_one(row, name, b, model, in_names, onnx_path, export_error)
            except Exception as e:  # noqa: BLE001 one model's failure does not end the run
                row["error"] = ps.short(e)
                notes.append(f"{name} b{b}: the run broke off: {row['error']}")
                print(f"{name} b{b}: {ps.short(e)}", flush=True)
        del model
        print(f"  ({name}: {time.monotonic() - t_model:.1f} s, {self.left():.0f} s left)",
              flush=True)

    def layers(self):
        """The layer-level table, from the profiled plans."""
        res, layer_set = self.res, self.layer_set
        if layer_set and self.tools["inspect"] and self.left() > REPORT_RESERVE_S + 10:
            try:
                res["layers"] = pl.bench_layers(
                    {k: v for k, v in self.plans.items() if k in layer_set}, self.peak,
                    self.deadline - REPORT_RESERVE_S)
                print(f"layers: {len(res['layers']['rows'])} shapes ({self.left():.0f} s left)",
                      flush=True)
            except Exception as e:  # noqa: BLE001
                res["layers"] = {"error": ps.short(e)}
                print(f"layers: {ps.short(e)}", flush=True)
        elif layer_set:
            self.notes.append("layer table not made: " + (
                "no jetplan-inspect" if not self.tools["inspect"] else "time budget spent"))

    def compiles(self):
        """torch.compile last: what is left of the budget, each build capped."""
        args, res, notes, work = self.args, self.res, self.notes, self.work
        os.makedirs(args.inductor_cache, exist_ok=True)
        done = set()
        for name, b in self.compile_list:
            row = next((r for r in res["rows"] if r["model"] == name and r["batch"] == b), None)
            npz = os.path.join(work, f"{name}_b{b}.sets.npz")
            if row is None or "skipped" in row or not os.path.exists(npz):
                continue
            cap = min(args.compile_timeout, self.left() - REPORT_RESERVE_S)
            if cap < 30:
                row["compile"] = {"error": "skipped: time budget spent"}
                notes.append(f"torch.compile {name} b{b}: skipped, {self.left():.0f} s left")
                continue
            keep = self.hist_key == (name, str(b))
            cached = sum(len(f) for _, _, f in os.walk(args.inductor_cache))
            row["compile"] = ps.compile_child(name, b, npz,
                                              os.path.join(work, f"{name}_b{b}.compile.json"),
                                              args.inductor_cache, cap, args.warmup,
                                              args.iterations, keep)
            if keep and "samples" in row["compile"] and "hist" in res:
                res["hist"]["samples"]["compile"] = row["compile"].pop("samples")
            done.add((name, b))
            c = row["compile"]
            print(f"torch.compile {name} b{b}: {pr.lat_cell(c)} (build {c.get('build_s', 0):.0f} "
                  f"s, cap {cap:.0f} s; {self.left():.0f} s left)", flush=True)
            if "error" in c:
                notes.append(f"torch.compile {name} b{b}: {c['error']}")
            elif c.get("build_s"):
                notes.append(f"torch.compile {name} b{b}: built in {c['build_s']:.0f} s (the "
                             f"inductor cache held {cached} files before)")
        others = sorted({r["model"] for r in res["rows"] if "skipped" not in r} -
                        {m for m, _ in done})
        if others:
            notes.append("torch.compile max-autotune not built for " + ", ".join(others) +
                         " (not in --compile, or other batch sizes: a cold build takes minutes "
                         "per model and shape; --compile names them)")

    def report(self, out):
        """bench.json, the charts, bench.md; RESULTS.md with --append-results."""
        args, res, meta = self.args, self.res, self.meta
        meta["elapsed_s"] = time.monotonic() - self.t_start
        res["charts"] = ["bench_latency.png", "bench_hist.png" if "hist" in res else None]
        res["charts"] = [c for c in res["charts"] if c]
        with open(args.json or os.path.join(out, "bench.json"), "w") as f:
            json.dump(res, f, indent=1, default=float)
        try:
            res["charts"] = pr.charts(res, out)
        except Exception as e:  # noqa: BLE001 the figures are in the JSON already
            self.notes.append(f"charts failed: {ps.short(e)}")
            res["charts"] = []
        meta["elapsed_s"] = time.monotonic() - self.t_start
        md = pr.markdown(res)
        with open(os.path.join(out, "bench.md"), "w") as f:
            f.write(md)
        with open(args.json or os.path.join(out, "bench.json"), "w") as f:
            json.dump(res, f, indent=1, default=float)
        print("\n" + md, flush=True)
        if args.append_results:
            pr.append_results(md)
        print(f"bench_models.py: {meta['elapsed_s']:.0f} s; out {out}", flush=True)


def main():
    args = parse_args()
    t_start = time.monotonic()
    tools = find_tools(args)
    if not tools["convert"] or not tools["run"]:
        print("bench_models.py: jetplan-convert / jetplan-run not found: pass --bin", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("bench_models.py: no CUDA device for torch", file=sys.stderr)
        return 2
    out = args.out or tempfile.mkdtemp(prefix="jetplan-bench-out.")
    work = args.workdir or tempfile.mkdtemp(prefix="jetplan-bench.")
    os.makedirs(out, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    warnings.filterwarnings("ignore")
    target = args.target
    tfile = os.path.join(HERE, "..", "..", "targets", f"{target}.json")
    if not os.path.exists(target) and os.path.exists(tfile):
        target = os.path.abspath(tfile)
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in pm.MODELS]
    if unknown:
        print(f"unknown model(s) {unknown}; known: {', '.join(pm.MODELS)}", file=sys.stderr)
        return 2
    bench = Bench(args, tools, target, work, names, t_start)
    bench.baselines()
    for name in names:
        bench.model(name)
    bench.layers()
    bench.compiles()
    bench.report(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
