"""The systems of the benchmark (tests/perf/bench_models.py), each timed on the same input sets
and compared with the same PyTorch FP32 outputs:

- jetplan FP16: jetplan-convert --target, then jetplan-run once per input set (GPU time of one
  CUDA-graph replay by CUDA events, --json); median = median of the per-set medians, p99 = the
  largest per-set p99; for the histogram's model (keep_samples) also --samples, whose
  "gpu_samples_ms" of every set, in run order, become the system's samples.
- PyTorch eager FP16, channels-last, cudnn.benchmark: CUDA events around each call, the input
  set rotated every call.
- The same captured once as a CUDA graph and replayed; the next input set is copied into the
  graph's static input before each replay, outside the timed events.
- torch.compile(mode="max-autotune"): in a child process (python3 perf_systems.py
  --compile-worker ...) so that a build can be capped by a timeout and killed.
- ONNX Runtime on the FP32 ONNX file with the best execution provider present (CUDA, then
  TensorRT, then CPU): host wall clock around session.run, inputs from and outputs to numpy,
  iterations capped by time.
"""
import argparse
import copy
import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_models as pm  # noqa: E402


def stats(samples):
    """Median and p99 (linear interpolation, as jetplan-run computes them) in ms."""
    s = np.asarray(samples, dtype=np.float64)
    return float(np.percentile(s, 50)), float(np.percentile(s, 99))


def time_cuda(fn, warmup, iterations, before=None):
    """fn(i) timed alone by CUDA events; before(i), if any, runs untimed just before it."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for i in range(warmup):
        if before:
            before(i)
        fn(i)
    torch.cuda.synchronize()
    samples = []
    for i in range(iterations):
        if before:
            before(i)
        start.record()
        fn(i)
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return samples


def short(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:240] if text else ''}"


def result(times, rel, **extra):
    med, p99 = stats(times)
    return dict(median=med, p99=p99, rel=rel, n=len(times), **extra)


# ---------------------------------------------------------------------------------------- torch

def bench_torch(model, sets, refs, warmup, iterations, keep_samples=False):
    """Eager FP16 channels-last + cudnn.benchmark, and the same as a CUDA graph. Returns
    {"eager": {...}, "cuda_graph": {...}, "torch_peak_bytes": n} (a system that fails holds
    {"error": ...})."""
    out = {}
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    ins = [pm.to_device(s, dev, half=True) for s in sets]
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    m = copy.deepcopy(model).to(dev).half().to(memory_format=torch.channels_last)
    k = len(ins)
    with torch.inference_mode():
        try:
            got = [m(*x).float().cpu().numpy() for x in ins]
            torch.cuda.synchronize()
            out["torch_peak_bytes"] = torch.cuda.max_memory_allocated() - base
            rel = max(pm.rel_err(g, r) for g, r in zip(got, refs))
            samples = time_cuda(lambda i: m(*ins[i % k]), warmup, iterations)
            out["eager"] = result(samples, rel, **({"samples": samples} if keep_samples else {}))
        except Exception as e:  # noqa: BLE001 a failing system is a finding, not a crash
            out["eager"] = {"error": short(e)}
            return out
        try:
            static = [t.clone() for t in ins[0]]
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    m(*static)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                static_out = m(*static)

            def load(i):
                for dst, src in zip(static, ins[i % k]):
                    dst.copy_(src)

            rel = 0.0
            for i in range(k):
                load(i)
                g.replay()
                rel = max(rel, pm.rel_err(static_out.float().cpu().numpy(), refs[i]))
            samples = time_cuda(lambda i: g.replay(), warmup, iterations, before=load)
            out["cuda_graph"] = result(samples, rel,
                                       **({"samples": samples} if keep_samples else {}))
        except Exception as e:  # noqa: BLE001
            out["cuda_graph"] = {"error": short(e)}
    m = g = static = static_out = None  # noqa: F841 free the GPU memory for the next model
    torch.cuda.empty_cache()
    return out


def compile_child(name, batch, sets_npz, out_json, cache_dir, timeout_s, warmup, iterations,
                  keep_samples):
    """Runs torch.compile max-autotune for one model in a child process killed at timeout_s."""
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache_dir, PYTHONUNBUFFERED="1")
    argv = [sys.executable, os.path.abspath(__file__), "--compile-worker", name, str(batch),
            sets_npz, out_json, str(warmup), str(iterations)] + (["--samples"] if keep_samples
                                                                  else [])
    start = time.monotonic()
    # Its own process group: inductor's compile workers go with it when the cap kills it.
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        _, err = p.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return {"error": f"capped: build and timing not done within {timeout_s:.0f} s"}
    wall = time.monotonic() - start
    if p.returncode != 0 or not os.path.exists(out_json):
        lines = [ln for ln in (err or "").strip().splitlines() if ln.strip()]
        return {"error": f"worker exit {p.returncode}: {lines[-1][:240] if lines else '?'}"}
    r = json.load(open(out_json))
    r["wall_s"] = wall
    return r


def save_sets(path, sets, refs):
    arrays = {f"s{k}_{j}": a for k, s in enumerate(sets) for j, a in enumerate(s)}
    arrays.update({f"ref{k}": r for k, r in enumerate(refs)})
    np.savez(path, **arrays)


def load_sets(path):
    z = np.load(path)
    k = len([n for n in z.files if n.startswith("ref")])
    j = len([n for n in z.files if n.startswith("s0_")])
    return [[z[f"s{i}_{n}"] for n in range(j)] for i in range(k)], [z[f"ref{i}"] for i in
                                                                      range(k)]


def compile_worker(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("batch", type=int)
    ap.add_argument("sets")
    ap.add_argument("out")
    ap.add_argument("warmup", type=int)
    ap.add_argument("iterations", type=int)
    ap.add_argument("--samples", action="store_true")
    a = ap.parse_args(argv)
    sets, refs = load_sets(a.sets)
    model = pm.build(a.name)
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    m = model.to(dev).half().to(memory_format=torch.channels_last)
    if hasattr(model, "with_mask") and len(sets[0]) == 1:
        model.with_mask = False  # the run fell back to a model without the mask input
    ins = [pm.to_device(s, dev, half=True) for s in sets]
    k = len(ins)
    start = time.monotonic()
    cm = torch.compile(m, mode="max-autotune")

    def step(i):  # max-autotune replays CUDA graphs: mark each call a new step
        torch.compiler.cudagraph_mark_step_begin()
        return cm(*ins[i % k])

    with torch.inference_mode():
        step(0)
        torch.cuda.synchronize()
        build_s = time.monotonic() - start
        rel = max(pm.rel_err(step(i).float().cpu().numpy(), refs[i]) for i in range(k))
        samples = time_cuda(step, a.warmup, a.iterations)
    r = result(samples, rel, build_s=build_s, **({"samples": samples} if a.samples else {}))
    with open(a.out, "w") as f:
        json.dump(r, f)
    return 0


# ----------------------------------------------------------------------------------------- ORT

PROVIDER_PREFERENCE = ["CUDAExecutionProvider", "TensorrtExecutionProvider",
                       "ROCMExecutionProvider", "CPUExecutionProvider"]


def ort_provider():
    """(onnxruntime module or None, provider name or why not)."""
    try:
        import onnxruntime as ort
    except ImportError as e:
        return None, f"onnxruntime missing: {e}"
    avail = ort.get_available_providers()
    for p in PROVIDER_PREFERENCE:
        if p in avail:
            return ort, p
    return ort, avail[0]


def bench_ort(onnx_path, names, sets, refs, warmup, iterations, seconds, keep_samples=False):
    ort, provider = ort_provider()
    if ort is None:
        return {"error": provider}
    try:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        t0 = time.monotonic()
        sess = ort.InferenceSession(onnx_path, so, providers=[provider])
        session_s = time.monotonic() - t0
        feeds = [{n: a for n, a in zip(names, s)} for s in sets]
        rel = max(pm.rel_err(sess.run(None, f)[0], r) for f, r in zip(feeds, refs))
        for i in range(warmup):
            sess.run(None, feeds[i % len(feeds)])
        samples, t_end = [], time.monotonic() + seconds
        for i in range(iterations):
            t = time.perf_counter()
            sess.run(None, feeds[i % len(feeds)])
            samples.append((time.perf_counter() - t) * 1e3)
            if time.monotonic() > t_end and len(samples) >= 10:
                break
        return result(samples, rel, provider=provider, session_s=session_s,
                      capped=len(samples) < iterations,
                      **({"samples": samples} if keep_samples else {}))
    except Exception as e:  # noqa: BLE001
        return {"error": short(e), "provider": provider}


# ------------------------------------------------------------------------------------- jetplan

def last_line(text):
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "(no message)"


def convert(tools, onnx_path, plan, shapes, target):
    argv = [tools["convert"], onnx_path, "-o", plan, "--target", target]
    for n, shape in shapes.items():
        argv += ["--shape", f"{n}:" + "x".join(str(d) for d in shape)]
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        msg = last_line(p.stderr).replace("jetplan-convert: error: ", "").replace(
            onnx_path + ": ", "")
        if re.search(r"unsupported|no CUDA kernel|refus", msg):
            return {"error": "unsupported: " + msg, "convert_s": dt}
        return {"error": "jetplan-convert: " + msg, "convert_s": dt}
    return {"convert_s": dt, "plan_bytes": os.path.getsize(plan)}


TENSOR_RE = re.compile(r"'([^']*)' \[([0-9,]*)\] (\w+) (arena@\d+|weight@\d+|binding \d+)")


def inspect(tools, plan):
    """jetplan-inspect's report as a dict: arena, weights, steps (op, params, in/out shapes,
    kernel). None where jetplan-inspect is missing."""
    if not tools.get("inspect"):
        return None
    p = subprocess.run([tools["inspect"], plan], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return {"error": "jetplan-inspect: " + last_line(p.stderr)}
    info, steps = {}, []
    for line in p.stdout.splitlines():
        m = re.match(r"arena (\d+) bytes .*weights (\d+) bytes", line)
        if m:
            info["arena_bytes"], info["weight_bytes"] = int(m.group(1)), int(m.group(2))
        m = re.match(r"step (\d+) '(.*)' (\w+) ?(.*)$", line)
        if m:
            steps.append({"index": int(m.group(1)), "name": m.group(2), "op": m.group(3),
                          "params": m.group(4), "inputs": [], "outputs": []})
            continue
        for key, tag in (("inputs", "    in:"), ("outputs", "    out:")):
            if line.startswith(tag) and steps:
                steps[-1][key] = [{"name": t[0], "shape": [int(d) for d in t[1].split(",") if d],
                                   "dtype": t[2], "where": t[3]}
                                  for t in TENSOR_RE.findall(line)]
        m = re.match(r"    kernel (\S+)", line)
        if m and steps:
            steps[-1]["kernel"] = m.group(1)
    info["steps"] = steps
    return info


def run_jetplan(tools, plan, names, sets, refs, work, tag, warmup, iterations, profile=False,
                keep_samples=False):
    """jetplan-run once per input set; the first also with --profile where asked; with
    keep_samples also --samples, and the GPU time of every timed run as "samples"."""
    per_set, rel, prof, samples = [], 0.0, None, []
    each = max(1, iterations // len(sets))
    for k, s in enumerate(sets):
        argv = [tools["run"], plan, "--warmup", str(warmup), "--iterations", str(each)]
        for n, a in zip(names, s):
            path = os.path.join(work, f"{tag}.s{k}.{n}.npy")
            np.save(path, a)
            argv += ["--input", f"{n}={path}"]
        res, outdir = os.path.join(work, f"{tag}.s{k}.json"), os.path.join(work, f"{tag}.s{k}")
        argv += ["--json", res, "--save-outputs", outdir] + (["--profile"] if profile and k == 0
                                                             else [])
        argv += ["--samples"] if keep_samples else []
        p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            return {"error": "jetplan-run: " + last_line(p.stderr)}
        r = json.load(open(res))
        if "gpu_median_ms" not in r:
            return {"error": "jetplan-run gave no GPU time (not a CUDA plan?)"}
        per_set.append((r["gpu_median_ms"], r["gpu_p99_ms"], r["median_ms"]))
        if keep_samples:  # one per timed run (the histogram shows n)
            samples += r.get("gpu_samples_ms") or []
        if profile and k == 0:
            prof = r.get("profile")
        rel = max(rel, pm.rel_err(np.load(os.path.join(outdir, "output.npy")), refs[k]))
    meds = [x[0] for x in per_set]
    out = {"median": float(np.median(meds)), "p99": max(x[1] for x in per_set), "rel": rel,
           "n": each * len(sets), "set_medians": meds,
           "host_median": float(np.median([x[2] for x in per_set])), "profile": prof}
    if samples:
        out["samples"] = samples
    return out


def wall_of_run(tools, plan):
    """(seconds for jetplan-run PLAN --warmup 0 --iterations 1 (random inputs), None) or
    (None, why)."""
    t0 = time.monotonic()
    p = subprocess.run([tools["run"], plan, "--warmup", "0", "--iterations", "1"],
                       capture_output=True, text=True, timeout=300)
    dt = time.monotonic() - t0
    return (dt, None) if p.returncode == 0 else (None, "jetplan-run: " + last_line(p.stderr))


def tiny_plan(tools, work, target):
    """A one-Relu plan: the baseline (process start, CUDA init) of the load-time figure."""
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])])
    path, plan = os.path.join(work, "tiny.onnx"), os.path.join(work, "tiny.jplan")
    # IR version 8 (onnx 1.10+): a newer onnx package writes a newer IR than the converter reads.
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    r = convert(tools, path, plan, {}, target)
    return (None, r["error"]) if "error" in r else (plan, None)


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--compile-worker":
    sys.exit(compile_worker(sys.argv[2:]))
