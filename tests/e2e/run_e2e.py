#!/usr/bin/env python3
"""End-to-end model tests: make_models.py builds ONNX models with numpy-reference outputs; each is
converted with jetplan-convert, run with jetplan-run on the same inputs (--save-outputs), and
every output is compared with the reference.

Pass criterion per element: |got - expected| <= atol + rtol * |expected| (fp32: rtol 1e-4,
atol 1e-5 unless a case says otherwise); NaN or Inf in an output fails. Each model runs as
converted and again converted with --no-fuse. Besides the models, a few checks of the tools'
contract: byte-identical plans for identical inputs, `--input FILE` without a name, raw .bin
inputs, seeded random inputs, the latency summary.

Prints one line per check and a summary; exits 1 when anything failed.

Usage: run_e2e.py --convert PATH --run PATH --workdir DIR [--only CASE,...]
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models  # noqa: E402
from e2e_common import Suite, run_tool, sanitize, tool_args  # noqa: E402

RUN_FLAGS = ["--warmup", "1", "--iterations", "2"]


def tool_problem(tool, res):
    """None when the tool succeeded, else one line saying how it failed."""
    if res.returncode == 0 and not res.timed_out:
        return None
    return f"{tool} failed ({res.describe()}): {res.first_error()}"


def compare(got, expected, rtol, atol):
    """(problems, summary) for one output."""
    if got.dtype != np.float32:
        return [f"dtype {got.dtype}, expected float32"], ""
    if got.shape != expected.shape:
        return [f"shape {list(got.shape)}, expected {list(expected.shape)}"], ""
    g = got.astype(np.float64)
    e = expected.astype(np.float64)
    bad_values = ~np.isfinite(g)
    if bad_values.any():
        idx = np.unravel_index(np.argmax(bad_values), g.shape)
        return [f"{int(bad_values.sum())} NaN/Inf values, first at {list(idx)}"], ""
    err = np.abs(g - e)
    rel = err / np.maximum(np.abs(e), atol)
    max_abs = float(err.max()) if err.size else 0.0
    max_rel = float(rel.max()) if rel.size else 0.0
    summary = f"max_abs {max_abs:.1e} max_rel {max_rel:.1e}"
    over = err > atol + rtol * np.abs(e)
    if over.any():
        idx = np.unravel_index(np.argmax(err - (atol + rtol * np.abs(e))), g.shape)
        return [f"{int(over.sum())}/{g.size} elements beyond rtol {rtol:g} atol {atol:g}; "
                f"{summary}; worst at {list(idx)}: got {g[idx]:.7g}, expected {e[idx]:.7g}"], \
            summary
    return [], summary


def input_args(case_dir, manifest):
    args = []
    for inp in manifest["inputs"]:
        args += ["--input", f"{inp['name']}={os.path.join(case_dir, inp['file'])}"]
    return args


def convert(tools, case_dir, manifest, plan, extra=()):
    return run_tool([tools.convert, os.path.join(case_dir, "model.onnx"), "-o", plan]
                    + manifest["convert_args"] + list(extra))


def check_outputs(case_dir, manifest, out_dir):
    """Compares every output file with the reference; (problems, per-output summaries)."""
    problems, details = [], []
    for out in manifest["outputs"]:
        path = os.path.join(out_dir, sanitize(out["name"]) + ".npy")
        if not os.path.exists(path):
            present = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
            problems.append(f"output {out['name']!r}: no file {os.path.basename(path)} "
                            f"(found {present})")
            continue
        try:
            got = np.load(path, allow_pickle=False)
        except Exception as e:  # a malformed .npy is a finding, not a crash of the suite
            problems.append(f"output {out['name']!r}: unreadable .npy: {e}")
            continue
        expected = np.load(os.path.join(case_dir, out["file"]))
        p, s = compare(got, expected, manifest["rtol"], manifest["atol"])
        problems += [f"output {out['name']!r}: {x}" for x in p]
        if s:
            details.append(s)
    return problems, details


# Each model runs as converted by default and with --no-fuse: a fusion bug and a bug of the
# unfused kernels then show up as different lines.
VARIANTS = (("", []), ("[no-fuse]", ["--no-fuse"]))


def run_case(tools, suite, case_dir, work, label, extra):
    """Converts and runs one case; returns (manifest, plan path or None)."""
    with open(os.path.join(case_dir, "case.json")) as fh:
        manifest = json.load(fh)
    name = manifest["case"] + label
    stem = sanitize(name)
    plan = os.path.join(work, stem + ".jplan")
    res = convert(tools, case_dir, manifest, plan, extra)
    p = tool_problem("jetplan-convert", res)
    if p:
        suite.report(name, [p])
        return manifest, None
    out_dir = os.path.join(work, stem + "_out")
    res = run_tool([tools.run, plan] + input_args(case_dir, manifest) + RUN_FLAGS
                   + ["--save-outputs", out_dir])
    p = tool_problem("jetplan-run", res)
    if p:
        suite.report(name, [p])
        return manifest, plan
    problems, details = check_outputs(case_dir, manifest, out_dir)
    worst = max(details, key=lambda s: float(s.split()[-1])) if details else ""
    suite.report(name, problems, f"({len(manifest['outputs'])} outputs, worst {worst})")
    return manifest, plan


def contract_checks(tools, suite, models, plans, work):
    """Checks of the tools' behaviour beyond numbers, on models already built."""
    # Identical inputs give a byte-identical plan.
    if "mini_resnet" in models:
        case_dir, manifest = models["mini_resnet"]
        a, b = os.path.join(work, "det_a.jplan"), os.path.join(work, "det_b.jplan")
        problems = [p for p in (tool_problem("jetplan-convert", convert(tools, case_dir,
                                                                          manifest, f))
                                for f in (a, b)) if p]
        if not problems:
            with open(a, "rb") as fa, open(b, "rb") as fb:
                da, db = fa.read(), fb.read()
            if da != db:
                first = next((i for i in range(min(len(da), len(db))) if da[i] != db[i]),
                             min(len(da), len(db)))
                problems.append(f"plans differ: {len(da)} vs {len(db)} bytes, first difference "
                                f"at byte {first}")
        suite.report("contract/plan_is_deterministic", problems)

    # One-input model: `--input FILE` without a name, as .npy and as raw bytes.
    if plans.get("mini_resnet"):
        case_dir, manifest = models["mini_resnet"]
        npy = os.path.join(case_dir, manifest["inputs"][0]["file"])
        raw = os.path.join(work, "mini_resnet_input.bin")
        np.load(npy).astype("<f4").tofile(raw)
        for label, arg in (("positional_npy_input", npy), ("raw_bin_input", raw)):
            out_dir = os.path.join(work, label + "_out")
            res = run_tool([tools.run, plans["mini_resnet"], "--input", arg] + RUN_FLAGS
                           + ["--save-outputs", out_dir])
            p = tool_problem("jetplan-run", res)
            problems = [p] if p else check_outputs(case_dir, manifest, out_dir)[0]
            suite.report(f"contract/{label}", problems)

        # The latency summary names its statistics.
        res = run_tool([tools.run, plans["mini_resnet"], "--input", npy, "--warmup", "2",
                        "--iterations", "5"])
        p = tool_problem("jetplan-run", res)
        problems = [p] if p else []
        if not p:
            low = res.stdout.lower()
            missing = [w for w in ("median", "p99", "max", "warm") if w not in low]
            if missing:
                problems.append(f"stdout lacks {missing}: {res.stdout.strip()[-300:]!r}")
        suite.report("contract/latency_summary", problems)

    # Inputs not given are random, seeded: same seed same outputs, another seed others.
    if plans.get("conv_variants"):
        outs = {}
        problems = []
        for tag, seed in (("a", 5), ("b", 5), ("c", 6)):
            out_dir = os.path.join(work, f"seed_{tag}_out")
            res = run_tool([tools.run, plans["conv_variants"], "--seed", str(seed)] + RUN_FLAGS
                           + ["--save-outputs", out_dir])
            p = tool_problem("jetplan-run", res)
            if p:
                problems.append(p)
                break
            path = os.path.join(out_dir, "valid.npy")
            if not os.path.exists(path):
                problems.append(f"no {path}")
                break
            outs[tag] = np.load(path)
        if not problems:
            if not np.array_equal(outs["a"], outs["b"]):
                problems.append("--seed 5 twice gave different outputs")
            if np.array_equal(outs["a"], outs["c"]):
                problems.append("--seed 5 and --seed 6 gave the same outputs")
            if not np.isfinite(outs["a"]).all():
                problems.append("non-finite outputs from random inputs")
        suite.report("contract/seeded_random_inputs", problems)


def main():
    tools = tool_args(__doc__)
    only = tools.only
    unknown = (only or set()) - set(make_models.case_names())
    if unknown:
        tools.parser.error(f"unknown cases {sorted(unknown)}; known: {make_models.case_names()}")
    work = tools.workdir
    case_dirs = make_models.generate(os.path.join(work, "models"), only)

    suite = Suite()
    models, plans = {}, {}
    for case_dir in case_dirs:
        for label, extra in VARIANTS:
            manifest, plan = run_case(tools, suite, case_dir, work, label, extra)
            if not label:
                models[manifest["case"]] = (case_dir, manifest)
                plans[manifest["case"]] = plan
    contract_checks(tools, suite, models, plans, work)
    return suite.summary("e2e models")


if __name__ == "__main__":
    sys.exit(main())
