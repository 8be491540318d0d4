"""Layer level (tests/perf/bench_models.py): every convolution, GEMM and fused attention shape of
a plan (from jetplan-inspect: shapes, fused bias/residual/activation, kernel) with jetplan's time
for it (the per-step profile of jetplan-run --profile) against the same operation run by PyTorch
through cuDNN (conv2d FP16 channels-last, then the residual add and the activation as eager
PyTorch runs them), cuBLAS (F.linear / torch.matmul) or F.scaled_dot_product_attention (flash,
or the memory-efficient kernel where a mask is given), as achieved TFLOP/s and % of the
tensor-core peak measured in the same run with a large FP16 matmul.
"""
import re
import time

import numpy as np
import torch
import torch.nn.functional as F

REPS = 20     # calls per CUDA graph / per queued sequence (torch side)
REPLAYS = 10  # timed replays of that graph
QUEUED_ROUNDS = 3
SLEEP_CYCLES = 4_000_000  # ~2 ms of GPU spin: the CPU queues every call before the GPU starts


def measure_peak(sizes=(8192, 16384)):
    """The best FP16 torch.matmul rate over `sizes` (square), TFLOP/s."""
    best = {"tflops": 0.0, "shape": "-"}
    for n in sizes:
        a = torch.randn(n, n, device="cuda", dtype=torch.float16)
        b = torch.randn(n, n, device="cuda", dtype=torch.float16)
        for _ in range(3):
            torch.matmul(a, b)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        reps = 10 if n <= 8192 else 4
        s.record()
        for _ in range(reps):
            torch.matmul(a, b)
        e.record()
        e.synchronize()
        tflops = 2.0 * n ** 3 * reps / (s.elapsed_time(e) * 1e-3) / 1e12
        if tflops > best["tflops"]:
            best = {"tflops": tflops, "shape": f"{n}x{n}x{n}"}
        del a, b
    torch.cuda.empty_cache()
    return best


def graph_time_us(fn):
    """Time per call of fn (GPU only): REPS calls captured in one CUDA graph, replayed."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(REPS):
            fn()
    for _ in range(3):
        g.replay()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(REPLAYS):
        start.record()
        g.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / REPS)
    del g
    return float(np.median(times))


def queued_time_us(fn):
    """Time per call of fn measured as jetplan-run --profile measures a step: calls queued on
    the stream back to back with a CUDA event between each (the GPU held by a spin kernel
    until all are queued, so that Python's launch cost stays out), median interval."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(QUEUED_ROUNDS):
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(REPS + 1)]
        torch.cuda.synchronize()
        torch.cuda._sleep(SLEEP_CYCLES)
        ev[0].record()
        for i in range(REPS):
            fn()
            ev[i + 1].record()
        ev[-1].synchronize()
        times += [ev[i].elapsed_time(ev[i + 1]) * 1e3 for i in range(REPS)]
    return float(np.median(times))


ACTS = {"Relu": lambda y: y.relu_(), "Silu": F.silu, "Sigmoid": torch.sigmoid,
        "Tanh": torch.tanh, "HardSwish": F.hardswish, "HardSigmoid": F.hardsigmoid,
        "LeakyRelu": lambda y: F.leaky_relu(y, 0.01), "Clip": lambda y: y.clamp_(0.0, 6.0),
        "Gelu": F.gelu}


def ints(text, key):
    m = re.search(key + r"=([0-9,]+)", text)
    return [int(v) for v in m.group(1).split(",")] if m else None


def describe(step):
    """(op, shape key, flops, torch closure factory) for a Conv, Gemm or Attention step, else
    None."""
    p, ins, outs = step["params"], step["inputs"], step["outputs"]
    act = re.search(r"act=(\w+)", p)
    act = act.group(1) if act else None
    if step["op"] == "Conv" and len(ins) >= 2 and len(ins[0]["shape"]) == 4:
        n, h, w, cin = ins[0]["shape"]
        cout, kh, kw, cpg = ins[1]["shape"]
        _, ho, wo, _ = outs[0]["shape"]
        stride, dil = ints(p, "stride"), ints(p, "dilation")
        pads = re.search(r"pads=([0-9,]+)/([0-9,]+)", p)
        pb = [int(v) for v in pads.group(1).split(",")]
        groups = int(re.search(r"groups=(\d+)", p).group(1))
        bias, residual = " bias" in p, " residual" in p
        key = (f"{n}x{h}x{w}x{cin} -> {cout}, k{kh}x{kw} s{stride[0]} g{groups}"
               + (" +bias" if bias else "") + (" +res" if residual else "")
               + (f" {act}" if act else ""))
        flops = 2.0 * n * ho * wo * cout * kh * kw * cpg

        def make():
            x = torch.randn(n, cin, h, w, device="cuda", dtype=torch.float16).contiguous(
                memory_format=torch.channels_last)
            wt = (torch.randn(cout, cpg, kh, kw, device="cuda", dtype=torch.float16) * 0.05
                  ).contiguous(memory_format=torch.channels_last)
            b = torch.randn(cout, device="cuda", dtype=torch.float16) if bias else None
            r = torch.randn(n, cout, ho, wo, device="cuda", dtype=torch.float16).contiguous(
                memory_format=torch.channels_last) if residual else None
            f_act = ACTS.get(act) if act else None

            def fn():
                y = F.conv2d(x, wt, b, stride, pb, dil, groups)
                if r is not None:
                    y = y + r
                return f_act(y) if f_act else y
            return fn
        return "Conv", key, flops, make
    if step["op"] == "Gemm" and len(ins) >= 2:
        a, b, o = ins[0]["shape"], ins[1]["shape"], outs[0]["shape"]
        ta, tb, has_c = "A^T" in p, "B^T" in p, " C" in p
        k = a[-2] if ta else a[-1]
        flops = 2.0 * float(np.prod(o)) * k
        weight = ins[1]["where"].startswith("weight") and len(b) == 2
        key = (f"[{','.join(map(str, a))}]{'^T' if ta else ''} x "
               f"[{','.join(map(str, b))}]{'^T' if tb else ''}" + (" +bias" if has_c else "")
               + (f" {act}" if act else ""))
        f_act = ACTS.get(act) if act else None
        if weight and not ta:
            m_rows = int(np.prod(a[:-1]))
            n_cols = b[0] if tb else b[1]

            def make():
                x = torch.randn(m_rows, k, device="cuda", dtype=torch.float16)
                wt = torch.randn(n_cols, k, device="cuda", dtype=torch.float16) * 0.05
                c = torch.randn(n_cols, device="cuda", dtype=torch.float16) if has_c else None

                def fn():  # what nn.Linear runs: cuBLAS with the weight transposed (+ bias)
                    y = F.linear(x, wt, c)
                    return f_act(y) if f_act else y
                return fn
        else:
            def make():
                x = torch.randn(*a, device="cuda", dtype=torch.float16)
                y2 = torch.randn(*b, device="cuda", dtype=torch.float16)

                def fn():
                    y = torch.matmul(x.transpose(-1, -2) if ta else x,
                                     y2.transpose(-1, -2) if tb else y2)
                    return f_act(y) if f_act else y
                return fn
        return "Gemm", key, flops, make
    if step["op"] == "Attention" and len(ins) >= 3:
        return describe_attention(p, ins, outs)
    return None


def describe_attention(p, ins, outs):
    """An Attention step (jetplan-inspect's params: scale, causal, mask, O's axes, K's axes or
    view length) as (op, key, flops, make): PyTorch's scaled_dot_product_attention on dense
    [batch, heads, seq, head dim] operands of the same extents."""
    o = outs[0]["shape"]
    rank = len(o)
    order = ints(p, "o_axes") or list(range(rank))
    batch, dim = o[order[0]], o[-1]
    heads = o[order[1]] if rank == 4 else 1
    seq_q = o[order[rank - 2]]
    seq_kv = ints(p, "k_seq_len")
    if seq_kv:
        seq_kv = seq_kv[0]
    else:
        k = ins[1]["shape"]
        k_order = ints(p, "k_axes") or list(range(len(k)))
        seq_kv = k[k_order[len(k) - 2]]
    causal, masked = " causal" in p, " mask" in p
    scale = float(re.search(r"scale=([0-9.eE+-]+)", p).group(1))
    key = (f"{batch}x{heads} heads, {seq_q}x{seq_kv} keys, d{dim}" + (" causal" if causal else "")
           + (" +mask" if masked else ""))
    flops = 4.0 * batch * heads * seq_q * seq_kv * dim * (0.5 if causal else 1.0)

    def make():
        def rand(s):
            return torch.randn(batch, heads, s, dim, device="cuda", dtype=torch.float16)
        q, k, v = rand(seq_q), rand(seq_kv), rand(seq_kv)
        m = (torch.randn(batch, 1, 1, seq_kv, device="cuda", dtype=torch.float16)
             if masked else None)

        def fn():
            return F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=causal,
                                                  scale=scale)
        return fn
    return "Attention", key, flops, make


def bench_layers(plans, peak, deadline):
    """plans: {(model, batch): (plan path, inspect info, profile list, whole-plan replay ms)}.
    Returns the table."""
    rows, totals = [], []
    pk = peak["tflops"]
    for (model, batch), (_, info, profile, replay_ms) in sorted(plans.items()):
        if not info or "steps" not in info or not profile:
            totals.append(f"{model} b{batch}: no jetplan profile or inspect output")
            continue
        if replay_ms:
            totals.append(f"{model} batch {batch}: jetplan's profile sums {len(profile)} steps "
                          f"to {sum(p['ms'] for p in profile) * 1e3:.0f} us; the whole plan "
                          f"replayed as one CUDA graph takes {replay_ms * 1e3:.0f} us (the "
                          f"difference: events and gaps between steps, in both columns' method)")
        groups = {}
        for step in info["steps"]:
            d = describe(step)
            if d is None or step["index"] >= len(profile):
                continue
            op, key, flops, make = d
            g = groups.setdefault((op, key), {"flops": flops, "make": make, "ms": [],
                                              "kernels": set()})
            g["ms"].append(profile[step["index"]]["ms"])
            g["kernels"].add(step.get("kernel", "?"))
        sum_of = {}  # what -> [jetplan us, torch us]
        for (op, key), g in groups.items():
            if time.monotonic() > deadline:
                totals.append(f"{model} b{batch}: stopped at the time budget")
                break
            jp_us = float(np.median(g["ms"])) * 1e3
            row = {"model": model, "batch": batch, "op": op, "shape": key,
                   "count": len(g["ms"]), "kernel": ", ".join(sorted(g["kernels"])),
                   "flops": g["flops"], "jp_us": jp_us,
                   "jp_tflops": g["flops"] / (jp_us * 1e-6) / 1e12 if jp_us > 0 else None}
            try:
                fn = g["make"]()
                row["torch_us"] = queued_time_us(fn)
                row["torch_graph_us"] = graph_time_us(fn)
                row["torch_tflops"] = g["flops"] / (row["torch_us"] * 1e-6) / 1e12
            except Exception as e:  # noqa: BLE001
                row["torch_error"] = f"{type(e).__name__}: {str(e)[:120]}"
            for side in ("jp", "torch"):
                if row.get(f"{side}_tflops"):
                    row[f"{side}_pct"] = 100.0 * row[f"{side}_tflops"] / pk
            if row.get("torch_us"):
                sums = sum_of.setdefault("attention" if op == "Attention" else "conv/GEMM",
                                         [0.0, 0.0])
                sums[0] += jp_us * row["count"]
                sums[1] += row["torch_us"] * row["count"]
            rows.append(row)
        for what, (jp_sum, torch_sum) in sorted(sum_of.items(), reverse=True):
            totals.append(f"{model} batch {batch}: {what} steps in all, jetplan "
                          f"{jp_sum:.0f} us against torch {torch_sum:.0f} us "
                          f"({jp_sum / torch_sum:.2f}x).")
    torch.cuda.empty_cache()
    return {"peak_tflops": pk, "peak_shape": peak["shape"], "reps": REPS, "rows": rows,
            "totals": totals}
