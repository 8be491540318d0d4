#!/usr/bin/env python3
"""ONNX's own conformance data (Debian libonnx-testdata) through jetplan: every model is
converted with jetplan-convert, run with jetplan-run on each stored input set (CPU backend), and
its outputs compared with the stored outputs.

One line per test: PASS, FAIL (with why) or UNSUPPORTED (the converter's reason), then a summary.
With --expect FILE, exits non-zero when a test listed there as PASS no longer passes (a
regression); tests that pass but are not listed are reported, so the list can be updated with
--write-expect. Tolerance (float types): |got - want| <= atol + rtol * |want| with rtol 1e-3 and
atol 1e-5 (ONNX's backend tests use rtol 1e-3); integers and booleans must be equal; a NaN
passes only where the stored output has a NaN at that position. Run with /usr/bin/python3.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

RTOL, ATOL = 1e-3, 1e-5
SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]


def load_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def first_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1] if lines else "(no message)"


def compare(name, got, want):
    if got.shape != want.shape:
        return f"output '{name}' has shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype.kind in "fc":
        got64, want64 = got.astype(np.float64), want.astype(np.float64)
        nan_want, nan_got = np.isnan(want64), np.isnan(got64)
        if np.any(nan_got & ~nan_want) or np.any(nan_want & ~nan_got):
            return f"output '{name}': NaN where none is expected (or missing)"
        ok = ~nan_want
        both_inf = np.isinf(want64) & (got64 == want64)
        err = np.abs(got64 - want64)
        bad = ok & ~both_inf & ~(err <= ATOL + RTOL * np.abs(want64))
        if np.any(bad):
            i = np.argmax(np.where(bad, err, -1))
            return (f"output '{name}': {int(bad.sum())} of {bad.size} elements off, worst at "
                    f"{np.unravel_index(i, want.shape)}: got {got64.flat[i]!r}, expected "
                    f"{want64.flat[i]!r}")
        return None
    if got.dtype != want.dtype:
        return f"output '{name}' is {got.dtype}, expected {want.dtype}"
    if not np.array_equal(got, want):
        bad = got != want
        return f"output '{name}': {int(bad.sum())} of {bad.size} elements differ"
    return None


def safe_name(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "output"


def run_test(test_dir, convert, run, work_root):
    name = os.path.basename(test_dir)
    work = tempfile.mkdtemp(prefix=name + ".", dir=work_root)
    try:
        model_path = os.path.join(test_dir, "model.onnx")
        plan = os.path.join(work, "model.jplan")
        p = subprocess.run([convert, model_path, "-o", plan], capture_output=True, text=True,
                           timeout=120)
        if p.returncode < 0:
            return name, "FAIL", f"jetplan-convert died with signal {-p.returncode}"
        if p.returncode != 0:
            msg = first_line(p.stderr).replace("jetplan-convert: error: ", "")
            msg = msg.replace(model_path + ": ", "")
            return name, "UNSUPPORTED", msg
        model = onnx.load(model_path, load_external_data=False)
        inits = {i.name for i in model.graph.initializer}
        inputs = [i.name for i in model.graph.input if i.name not in inits]
        declared = {}
        for i in model.graph.input:
            dims = i.type.tensor_type.shape.dim
            if i.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
                declared[i.name] = tuple(d.dim_value for d in dims)
        outputs = [o.name for o in model.graph.output]
        sets = sorted(d for d in os.listdir(test_dir) if d.startswith("test_data_set_"))
        if not sets:
            return name, "FAIL", "no test data"
        for ds in sets:
            ds_dir = os.path.join(test_dir, ds)
            args = [run, plan, "--warmup", "0", "--iterations", "1",
                    "--save-outputs", os.path.join(work, ds)]
            n_in = len([f for f in os.listdir(ds_dir) if f.startswith("input_")])
            for i in range(n_in):
                pb_name, arr = load_tensor(os.path.join(ds_dir, f"input_{i}.pb"))
                in_name = inputs[i] if i < len(inputs) else pb_name
                # Some stored inputs hold the declared elements in another shape ([1] for a
                # scalar): give them the shape the model declares.
                shape = declared.get(in_name)
                if shape is not None and arr.shape != shape and arr.size == int(np.prod(shape)):
                    arr = arr.reshape(shape)
                npy = os.path.join(work, f"{ds}.in{i}.npy")
                np.save(npy, np.array(arr, order="C"))
                args += ["--input", f"{in_name}={npy}"]
            p = subprocess.run(args, capture_output=True, text=True, timeout=120)
            if p.returncode < 0:
                return name, "FAIL", f"jetplan-run died with signal {-p.returncode}"
            if p.returncode != 0:
                return name, "FAIL", "jetplan-run: " + first_line(p.stderr).replace(
                    "jetplan-run: error: ", "")
            n_out = len([f for f in os.listdir(ds_dir) if f.startswith("output_")])
            for i in range(n_out):
                _, want = load_tensor(os.path.join(ds_dir, f"output_{i}.pb"))
                out_name = outputs[i]
                got_path = os.path.join(work, ds, safe_name(out_name) + ".npy")
                if not os.path.exists(got_path):
                    return name, "FAIL", f"output '{out_name}' was not written"
                why = compare(out_name, np.load(got_path), want)
                if why:
                    return name, "FAIL", f"{ds}: {why}"
        return name, "PASS", ""
    except subprocess.TimeoutExpired:
        return name, "FAIL", "timed out"
    except Exception as e:  # a broken test file must not stop the run
        return name, "FAIL", f"runner: {type(e).__name__}: {e}"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def read_expect(path):
    expect = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                test, status = line.split()[:2]
                expect[test] = status
    return expect


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--convert", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--suites", default=",".join(SUITES))
    ap.add_argument("--filter", default="", help="regex on the test name")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--expect", help="expectation list: fail on a regression against it")
    ap.add_argument("--write-expect", help="write the statuses of this run as a list")
    ap.add_argument("--quiet", action="store_true", help="print only failures and the summary")
    args = ap.parse_args()

    tests = []
    for suite in args.suites.split(","):
        root = os.path.join(args.data, suite)
        if not os.path.isdir(root):
            print(f"conformance: suite directory {root} is missing", file=sys.stderr)
            return 2
        for d in sorted(os.listdir(root)):
            full = os.path.join(root, d)
            if os.path.isfile(os.path.join(full, "model.onnx")) and re.search(args.filter, d):
                tests.append((suite, full))
    work_root = args.workdir or tempfile.mkdtemp(prefix="jetplan-conformance.")
    os.makedirs(work_root, exist_ok=True)

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_test, d, args.convert, args.run, work_root): (s, d)
                   for s, d in tests}
        for fut in concurrent.futures.as_completed(futures):
            suite, _ = futures[fut]
            name, status, why = fut.result()
            results[f"{suite}/{name}"] = (status, why)
    counts = {"PASS": 0, "FAIL": 0, "UNSUPPORTED": 0}
    for key in sorted(results):
        status, why = results[key]
        counts[status] += 1
        if not args.quiet or status == "FAIL":
            print(f"{status:<11} {key}" + (f": {why}" if why else ""))
    print(f"conformance: {len(results)} tests: {counts['PASS']} pass, {counts['FAIL']} fail, "
          f"{counts['UNSUPPORTED']} unsupported")

    if args.write_expect:
        with open(args.write_expect, "w") as f:
            f.write("# jetplan conformance expectations: test status (written by "
                    "run_conformance.py --write-expect)\n")
            for key in sorted(results):
                f.write(f"{key} {results[key][0]}\n")
    rc = 0
    if args.expect:
        expect = read_expect(args.expect)
        regressions = [k for k, s in expect.items() if s == "PASS" and k in results
                       and results[k][0] != "PASS"]
        missing = [k for k, s in expect.items() if s == "PASS" and k not in results
                   and not args.filter]
        improved = [k for k in results if results[k][0] == "PASS" and expect.get(k) != "PASS"]
        for k in regressions:
            print(f"REGRESSION  {k}: {results[k][0]} {results[k][1]}")
        for k in missing:
            print(f"REGRESSION  {k}: expected to pass but no longer found")
        if improved:
            print(f"conformance: {len(improved)} tests pass that the list does not expect to; "
                  f"update it with --write-expect")
        if regressions or missing:
            rc = 1
    if not args.workdir:
        shutil.rmtree(work_root, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
