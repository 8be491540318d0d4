#!/usr/bin/env python3
"""The benchmark's report (tests/perf/bench_models.py writes the JSON): markdown tables for
tests/perf/RESULTS.md, a latency chart per model and system (log scale) and a latency histogram
for one model, drawn with matplotlib. Also a command of its own, to redraw from a saved JSON:

    python3 tests/perf/perf_report.py bench.json [--out-dir DIR] [--append-results]
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS_MD = os.path.join(HERE, "RESULTS.md")
# key, column title
SYSTEMS = [("jetplan", "jetplan FP16"), ("eager", "eager FP16"), ("cuda_graph", "CUDA graph"),
           ("compile", "torch.compile"), ("ort", "ONNX Runtime")]
COLORS = {"jetplan": "tab:blue", "eager": "tab:orange", "cuda_graph": "tab:green",
          "compile": "tab:red", "ort": "tab:purple"}


def num(v, fmt="{:.3f}"):
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else fmt.format(v)


def lat_cell(s):
    if not s:
        return "-"
    if "error" in s:
        return s["error"].replace("|", "/")[:160]
    return f"{num(s['median'])} ({num(s['p99'])})"


def rel_cell(s):
    if not s or "error" in s:
        return "-"
    return "inf (non-finite or wrong shape)" if not math.isfinite(s["rel"]) else f"{s['rel']:.1e}"


def ratio(a, b):
    if not a or not b or "median" not in a or "median" not in b or not b["median"]:
        return "-"
    r = a["median"] / b["median"]
    return f"**{r:.2f}**" if r <= 1.0 else f"{r:.2f}"


def mb(v):
    return "-" if v is None else f"{v / 2**20:.1f}"


def markdown(res):
    meta = res["meta"]
    ort = meta.get("ort", "-")
    lines = [
        f"## {meta['date']} — {meta['gpu']} (driver {meta['driver']}, SM clock at start/max "
        f"{meta.get('clocks', '?')}), torch {meta['torch']}, onnxruntime {ort}",
        "",
        f"`tests/perf/bench_models.py` in one run ({meta['elapsed_s']:.0f} s of a "
        f"{meta['time_budget_s']:.0f} s budget): jetplan binaries of {meta['binaries_commit']} "
        f"(`tests/gpu/pack.sh`), plans converted with `--target {meta['target']}` (FP16); "
        f"scripts at {meta.get('script_commit', '?')}. Every system gets the same "
        f"{meta['input_sets']} input sets (rotated), {meta['warmup']} warm-up and "
        f"{meta['iterations']} timed runs (ONNX Runtime: at most {meta['ort_seconds']} s of "
        f"runs per model, at least 10). GPU timings by CUDA events (jetplan: one CUDA-graph "
        f"replay of the plan, `jetplan-run`; PyTorch: around each call; the CUDA graph's input "
        f"copy is not timed); ONNX Runtime by the host clock around `session.run` from numpy to "
        f"numpy. Ratios are jetplan's median over the peer's (below 1, in bold: jetplan is "
        f"faster). The command: `{meta.get('command', '')}`",
        "",
        "### Latency, ms: median (p99)",
        "",
        "| model | batch | " + " | ".join(
            t if k != "ort" else f"{t} ({meta.get('ort_provider', '?')})" for k, t in SYSTEMS)
        + " | jetplan/eager | jetplan/graph | jetplan/compile | jetplan/ORT |",
        "|---|---|" + "---|" * (len(SYSTEMS) + 4),
    ]
    for r in res["rows"]:
        if "skipped" in r:
            lines.append(f"| {r['model']} | {r['batch']} | skipped: {r['skipped']} |" +
                         " |" * (len(SYSTEMS) + 3))
            continue
        j = r.get("jetplan")
        lines.append(f"| {r['model']} | {r['batch']} | " +
                     " | ".join(lat_cell(r.get(k)) for k, _ in SYSTEMS) + " | " +
                     " | ".join(ratio(j, r.get(k)) for k in ("eager", "cuda_graph", "compile",
                                                              "ort")) + " |")
    lines += ["", "### Relative error against PyTorch FP32 (max |out - ref| / max |ref|, worst "
              "input set)", "",
              "| model | batch | " + " | ".join(t for _, t in SYSTEMS) + " |",
              "|---|---|" + "---|" * len(SYSTEMS)]
    for r in res["rows"]:
        if "skipped" not in r:
            lines.append(f"| {r['model']} | {r['batch']} | " +
                         " | ".join(rel_cell(r.get(k)) for k, _ in SYSTEMS) + " |")
    base = meta.get("load_baseline_s")
    load = ("less that of a one-Relu plan ({:.0f} ms: process start and CUDA initialisation)"
            .format(base * 1e3) if base is not None else
            "(process start and CUDA initialisation included: the one-Relu baseline plan that "
            "the figure should be less of failed, see the notes)")
    lines += ["", "### Conversion, load and device memory", "",
              f"Load: wall time of `jetplan-run PLAN --warmup 0 --iterations 1` {load}: "
              "reading, verifying, uploading weights, capturing the CUDA graph, one run. "
              "jetplan memory: weights + arena "
              "as `jetplan-inspect` prints them; PyTorch: `torch.cuda.max_memory_allocated` over "
              "moving the FP16 model to the GPU and running it (weights, activations, cuDNN "
              "workspaces).", "",
              "| model | batch | convert s | plan MB | load ms | weights MB | arena MB | "
              "jetplan MB | PyTorch eager peak MB |", "|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        if "skipped" in r:
            continue
        x = r.get("resources", {})
        tot = (x["weight_bytes"] + x["arena_bytes"]) if "arena_bytes" in x else None
        lines.append(f"| {r['model']} | {r['batch']} | {num(x.get('convert_s'), '{:.2f}')} | "
                     f"{mb(x.get('plan_bytes'))} | {num(x.get('load_ms'), '{:.0f}')} | "
                     f"{mb(x.get('weight_bytes'))} | {mb(x.get('arena_bytes'))} | {mb(tot)} | "
                     f"{mb(x.get('torch_peak_bytes'))} |")
    lay = res.get("layers") or {}
    if lay.get("rows"):
        lines += ["", "### Layers: jetplan's kernels against cuDNN / cuBLAS / SDPA through torch", "",
                  f"Tensor-core peak measured in this run: {lay['peak_tflops']:.0f} TFLOP/s "
                  f"(FP16 torch.matmul {lay['peak_shape']}). jetplan: the per-step profile "
                  f"(`jetplan-run --profile`: each step launched in turn between CUDA events, "
                  f"median of 20), the step's fused bias/residual/activation included; torch: "
                  f"the same operation as PyTorch eager runs it (conv2d FP16 channels-last with "
                  f"bias, then the residual add and activation as their own kernels; "
                  f"F.linear/matmul, then the activation; attention: F.scaled_dot_product_attention "
                  f"on dense [batch, heads, seq, dim] operands), timed the way the profile times a "
                  f"step: {lay['reps']} calls queued back to back with a CUDA event between "
                  f"each (the GPU held by a spin kernel until all are queued, so that Python's "
                  f"launch cost stays out), median interval; the last column: the same calls "
                  f"captured in one CUDA graph, time per call (no events between kernels). "
                  f"TFLOP/s count the multiply-adds of the conv/GEMM (attention: its two products) "
                  f"only. One row per distinct "
                  f"shape; 'count' steps share it (jetplan: median over them).",
                  "",
                  "| model | batch | op | shape | count | jetplan kernel | jetplan us | TFLOP/s "
                  "| % peak | torch us | TFLOP/s | % peak | jetplan/torch | torch us, graph |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for x in lay["rows"]:
            lines.append(
                f"| {x['model']} | {x['batch']} | {x['op']} | {x['shape']} | {x['count']} | "
                f"{x.get('kernel', '-')} | {num(x.get('jp_us'), '{:.1f}')} | "
                f"{num(x.get('jp_tflops'), '{:.1f}')} | {num(x.get('jp_pct'), '{:.0f}')} | "
                f"{num(x.get('torch_us'), '{:.1f}')} | {num(x.get('torch_tflops'), '{:.1f}')} | "
                f"{num(x.get('torch_pct'), '{:.0f}')} | "
                + (ratio({"median": x['jp_us']}, {"median": x['torch_us']})
                   if x.get('jp_us') and x.get('torch_us') else "-") +
                f" | {num(x.get('torch_graph_us'), '{:.1f}')} |")
        for t in lay.get("totals", []):
            lines.append(f"\n{t}")
    if lay.get("error"):
        lines += ["", f"Layer benchmark: {lay['error']}"]
    if res.get("notes"):
        lines += ["", "### Skipped, capped and notes", ""] + [f"- {n}" for n in res["notes"]]
    if res.get("charts"):
        lines += ["", " ".join(f"![{c}]({c})" for c in res["charts"])]
    return "\n".join(lines) + "\n"


def charts(res, out_dir, tag=""):
    """latency chart + histogram as PNG files in out_dir (bench[_TAG]_latency.png,
    bench[_TAG]_hist.png); returns their names ([] without matplotlib)."""
    stem = "bench" + (f"_{tag}" if tag else "")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        res.setdefault("notes", []).append(f"no charts: {e}")
        return []
    names = []
    rows = [r for r in res["rows"] if "skipped" not in r]
    batches = sorted({r["batch"] for r in rows})
    if rows:
        fig, axes = plt.subplots(len(batches), 1, figsize=(13, 4.2 * len(batches)), squeeze=False)
        for ax, b in zip(axes[:, 0], batches):
            rb = [r for r in rows if r["batch"] == b]
            width = 0.8 / len(SYSTEMS)
            for si, (key, title) in enumerate(SYSTEMS):
                xs, ys = [], []
                for mi, r in enumerate(rb):
                    s = r.get(key) or {}
                    if "median" in s:
                        xs.append(mi + (si - (len(SYSTEMS) - 1) / 2) * width)
                        ys.append(s["median"])
                if not xs:  # no bar of this system in this panel: no legend entry either
                    continue
                if key == "ort":
                    title += f" ({res['meta'].get('ort_provider', '?')})"
                ax.bar(xs, ys, width, label=title, color=COLORS[key])
            ax.set_yscale("log")
            lo, hi = ax.get_ylim()
            ax.set_ylim(lo, hi * 8)  # room for the legend above the bars
            ax.set_xticks(range(len(rb)))
            ax.set_xticklabels([r["model"] for r in rb], rotation=20, ha="right")
            ax.set_ylabel("median latency, ms (log)")
            ax.set_title(f"batch {b}: {res['meta']['gpu']}, jetplan {res['meta']['binaries_commit']}"
                         f", {res['meta']['date']}")
            ax.grid(axis="y", which="both", alpha=0.3)
            ax.legend(fontsize=8, ncol=len(SYSTEMS))
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, f"{stem}_latency.png"), dpi=110)
        plt.close(fig)
        names.append(f"{stem}_latency.png")
    hist = res.get("hist")
    if hist and hist.get("samples"):
        import numpy as np
        fig, ax = plt.subplots(figsize=(10, 4.5))
        allv = [v for s in hist["samples"].values() for v in s]
        lo, hi = min(allv), max(allv)
        # jetplan's samples (jetplan-run --samples: GPU time per run) are drawn as the others';
        # a results file without them draws jetplan's median and p99 as lines.
        jp = {} if "jetplan" in hist["samples"] else (hist.get("jetplan") or {})
        if jp.get("median"):
            lo, hi = min(lo, jp["median"]), max(hi, jp.get("p99", jp["median"]))
        bins = np.logspace(np.log10(lo * 0.95), np.log10(hi * 1.05), 120)
        for key, title in SYSTEMS:
            if key in hist["samples"]:
                ax.hist(hist["samples"][key], bins=bins, alpha=0.6, color=COLORS[key],
                        label=f"{title} "
                        f"(n={len(hist['samples'][key])})")
        if jp.get("median"):
            ax.axvline(jp["median"], color="k", lw=1.5, label="jetplan median")
            ax.axvline(jp["p99"], color="k", lw=1.0, ls="--", label="jetplan p99 (worst set)")
        ax.set_xscale("log")
        ax.set_xlabel("latency per run, ms (log)")
        ax.set_ylabel("runs")
        ax.set_title(f"{hist['model']} batch {hist['batch']}: distribution per system" +
                     (" (jetplan: percentiles only, drawn as lines)" if jp.get("median") else ""))
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, f"{stem}_hist.png"), dpi=110)
        plt.close(fig)
        names.append(f"{stem}_hist.png")
    return names


def append_results(md, path=RESULTS_MD):
    with open(path, "a") as f:
        f.write("\n" + md)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json")
    ap.add_argument("--out-dir", default=None, help="charts and bench.md here (default: the "
                    "JSON's folder)")
    ap.add_argument("--append-results", action="store_true",
                    help=f"append the markdown to {RESULTS_MD}")
    ap.add_argument("--no-charts", action="store_true")
    ap.add_argument("--tag", default="", help="chart names bench_TAG_*.png (e.g. h100_ab7d39d: "
                    "a later run appended to RESULTS.md keeps its own pictures)")
    args = ap.parse_args()
    res = json.load(open(args.json))
    out = args.out_dir or os.path.dirname(os.path.abspath(args.json))
    if not args.no_charts:
        res["charts"] = charts(res, out, args.tag)
    md = markdown(res)
    with open(os.path.join(out, "bench.md"), "w") as f:
        f.write(md)
    print(md)
    if args.append_results:
        append_results(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
