"""Shared helpers of the end-to-end scripts: their command line, running the tools, checking
their error lines, building an ONNX model, converting and running it and comparing its outputs
with a reference, reporting checks, and a minimal FlatBuffers reader for patching plans (the
`flatbuffers` package is optional on the build machines, and a reader this small is easy to
audit)."""

import argparse
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TOOL_TIMEOUT_S = 60

# Float outputs against a float64 reference: |got - want| <= ATOL + RTOL * |want|.
RTOL, ATOL = 1e-4, 1e-5


class Result:
    def __init__(self, argv, returncode, stdout, stderr, seconds, timed_out=False):
        self.argv, self.returncode = argv, returncode
        self.stdout, self.stderr, self.seconds, self.timed_out = stdout, stderr, seconds, timed_out

    def describe(self):
        if self.timed_out:
            return f"timed out after {TOOL_TIMEOUT_S} s"
        if self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = str(-self.returncode)
            return f"killed by signal {name}"
        return f"exit {self.returncode}"

    def stderr_lines(self):
        return [ln for ln in self.stderr.splitlines() if ln.strip()]

    def first_error(self):
        lines = self.stderr_lines()
        return lines[0] if lines else "(no stderr)"


def run_tool(argv, cwd=None):
    start = time.monotonic()
    try:
        p = subprocess.run([str(a) for a in argv], cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TOOL_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        return Result(argv, -1, (e.stdout or b"").decode(errors="replace"),
                      (e.stderr or b"").decode(errors="replace"), time.monotonic() - start, True)
    return Result(argv, p.returncode, p.stdout.decode(errors="replace"),
                  p.stderr.decode(errors="replace"), time.monotonic() - start)


def sanitize(name):
    """File name jetplan-run uses for an output: characters outside [A-Za-z0-9_.-] become '_'."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def check_error(res, prefix, exit_codes=(1,), mentions=(), any_of=(), usage=False):
    """The tools' error contract: no signal, no hang, an exit code in `exit_codes`, exactly one
    non-empty stderr line starting with `prefix`, containing every string in `mentions` and at
    least one of `any_of` (case-insensitive). Returns a list of problems (empty when fine).

    usage=True is for command-line mistakes: the tools may follow the line with their usage
    text, and the line only has to start with the tool's name."""
    problems = []
    if res.timed_out or res.returncode < 0:
        return [res.describe()]
    if res.returncode not in exit_codes:
        problems.append(f"exit {res.returncode}, expected {'/'.join(map(str, exit_codes))}")
    lines = res.stderr_lines()
    if usage:
        prefix = prefix.split(":")[0] + ":"
        lines = lines[:1]
    if len(lines) != 1:
        problems.append(f"{len(lines)} stderr lines, expected 1: {lines[:4]!r}")
    if not lines:
        return problems
    line = lines[0]
    if not line.startswith(prefix):
        problems.append(f"stderr does not start with {prefix!r}: {line!r}")
    low = line.lower()
    for m in mentions:
        if m.lower() not in low:
            problems.append(f"error line does not mention {m!r}: {line!r}")
    if any_of and not any(a.lower() in low for a in any_of):
        problems.append(f"error line mentions none of {list(any_of)!r}: {line!r}")
    return problems


# --------------------------------------------------------------------------------------------
# Command line and reporting
# --------------------------------------------------------------------------------------------

def gpu_run_args():
    """The GPU scripts' own options, taken off sys.argv before tool_args reads the rest: --gpu-run
    (the models are also converted for --gpu-target, default h100, and run on this machine's
    GPU). Returns that target, or None without --gpu-run."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--gpu-run", action="store_true")
    ap.add_argument("--gpu-target", default="h100")
    gpu, sys.argv[1:] = ap.parse_known_args()
    return gpu.gpu_target if gpu.gpu_run else None


def tool_args(doc, with_self_check=False):
    """The scripts' command line: --convert, --run, --workdir (emptied first), --only CASE,...
    and, with_self_check, --self-check (the references alone; the tools are then optional).
    Tool and work paths come back absolute; `only` is a set of names or None."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--convert", help="path of jetplan-convert")
    ap.add_argument("--run", help="path of jetplan-run")
    ap.add_argument("--workdir", help="scratch directory (emptied first)")
    ap.add_argument("--only", help="comma-separated case names (default: all)")
    if with_self_check:
        ap.add_argument("--self-check", action="store_true")
    args = ap.parse_args()
    args.parser = ap
    args.only = set(filter(None, args.only.split(","))) if args.only else None
    if with_self_check and args.self_check:
        return args
    if not (args.convert and args.run and args.workdir):
        ap.error("--convert, --run and --workdir are required")
    args.convert, args.run = os.path.abspath(args.convert), os.path.abspath(args.run)
    args.workdir = os.path.abspath(args.workdir)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    return args


class Suite:
    """One line per check (PASS or FAIL, a failure's problems under it) and a summary."""

    def __init__(self):
        self.passed, self.failed = 0, []
        self.start = time.monotonic()

    def report(self, name, problems, detail=""):
        if problems:
            self.failed.append(name)
            print(f"FAIL  {name}")
            for p in problems:
                print(f"        {p}")
        else:
            self.passed += 1
            print(f"PASS  {name}{'  ' + detail if detail else ''}")
        sys.stdout.flush()

    def summary(self, title):
        """Prints the summary line; the exit status (1 when anything failed)."""
        total = self.passed + len(self.failed)
        print(f"{title}: {self.passed}/{total} passed in {time.monotonic() - self.start:.1f} s"
              + (f"; failed: {', '.join(self.failed)}" if self.failed else ""))
        return 1 if self.failed else 0


# --------------------------------------------------------------------------------------------
# Models against references
# --------------------------------------------------------------------------------------------

def onnx_type(dtype):
    """The TensorProto element type of a numpy dtype (through onnx.mapping on older onnx)."""
    if hasattr(helper, "np_dtype_to_tensor_dtype"):
        return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def value_info(name, arr, shape=None):
    """A graph input or output of `arr`'s dtype and shape (or `shape`, which may name dims)."""
    return helper.make_tensor_value_info(name, onnx_type(arr.dtype),
                                         list(arr.shape) if shape is None else shape)


def onnx_model(name, nodes, inputs, outputs, initializers=(), opset=13, check=True):
    """The model of one graph, at ir_version 8; through the onnx checker unless check=False (a
    broken model on purpose)."""
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="jetplan-e2e")
    model.ir_version = 8
    if check:
        onnx.checker.check_model(model)
    return model


class ModelCase:
    """A model built whole (onnx.helper, or exported), its inputs and expected outputs (name ->
    array each)."""

    def __init__(self, name, model, feeds, expected):
        self.name, self._model, self.feeds, self.expected = name, model, feeds, expected

    def model(self):
        return self._model


class ReferenceCase:
    """A model built node by node: float32 graph inputs with their values, initializers, nodes
    named after their first output, and the reference outputs (float32, or int64 where the
    reference is integer); `rng` is seeded for the case's random data."""

    def __init__(self, name, opset, seed):
        self.name, self.opset = name, opset
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inputs, self.outputs, self.inits = [], [], [], []
        self.feeds, self.expected = {}, {}

    def input(self, name, arr):
        arr = np.asarray(arr, np.float32)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, arr.shape))
        self.feeds[name] = arr
        return arr

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(self, op, ins, outs, **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, name=outs[0] + "_node", **attrs))

    def output(self, name, want, rows_at_run_time=False):
        """A graph output declared with the reference's shape (the converter checks it against
        its own), or with a symbolic leading dim where the row count is known at run time."""
        want = np.asarray(want)
        dtype = TensorProto.INT64 if want.dtype.kind in "iu" else TensorProto.FLOAT
        shape = ["rows"] + list(want.shape[1:]) if rows_at_run_time else list(want.shape)
        self.outputs.append(helper.make_tensor_value_info(name, dtype, shape))
        self.expected[name] = want.astype(np.int64 if dtype == TensorProto.INT64 else np.float32)

    def model(self):
        return onnx_model(self.name, self.nodes, self.inputs, self.outputs, self.inits,
                          self.opset)


def compare_output(name, got, want, rtol=RTOL, atol=ATOL):
    """None when `got` matches the reference `want`, else one line saying how it does not:
    dtype and shape exactly; floats within atol + rtol |want| (float16: rtol 1e-3), NaN only
    where the reference has NaN; integers and bools bit for bit."""
    if got.dtype != want.dtype:
        return f"output {name!r}: dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"output {name!r}: shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype.kind == "f":
        g, w = got.astype(np.float64), want.astype(np.float64)
        if want.dtype == np.float16:
            rtol = max(rtol, 1e-3)
        with np.errstate(invalid="ignore"):  # inf - inf: NaN, which fails the bound
            bad = ~(np.abs(g - w) <= atol + rtol * np.abs(w)) & ~(np.isnan(g) & np.isnan(w))
        if bad.any():
            i = int(np.argmax(bad))
            return (f"output {name!r}: {int(bad.sum())}/{bad.size} elements off; first at "
                    f"{list(np.unravel_index(i, want.shape))}: got {g.flat[i]!r}, "
                    f"expected {w.flat[i]!r}")
        return None
    if not np.array_equal(got, want):
        return f"output {name!r}: {int((got != want).sum())}/{want.size} elements differ"
    return None


def run_model(tools, work, model, feeds, expected, iterations=1, steps=None, convert_args=()):
    """Converts `model` with jetplan-convert (and `convert_args`), runs the plan with jetplan-run
    on `feeds` (name -> array) and compares every output with `expected` (name -> array).
    `steps`: the step count the plan must have (jetplan-convert prints it), None when any. The
    problems found."""
    os.makedirs(work, exist_ok=True)
    model_path, plan = os.path.join(work, "model.onnx"), os.path.join(work, "model.jplan")
    onnx.save(model, model_path)
    res = run_tool([tools.convert, model_path, "-o", plan] + list(convert_args))
    if res.returncode != 0 or res.timed_out:
        return [f"jetplan-convert failed ({res.describe()}): {res.first_error()}"]
    problems = []
    if steps is not None:
        m = re.search(r"(\d+) steps", res.stdout + res.stderr)
        if not m:
            problems.append("jetplan-convert printed no step count")
        elif int(m.group(1)) != steps:
            problems.append(f"the plan has {m.group(1)} steps, expected {steps}")
    args = [tools.run, plan, "--warmup", "0", "--iterations", str(iterations),
            "--save-outputs", os.path.join(work, "out")]
    for name, arr in feeds.items():
        path = os.path.join(work, sanitize(name) + ".in.npy")
        np.save(path, np.array(arr, order="C"))  # keeps 0-d arrays 0-d
        args += ["--input", f"{name}={path}"]
    res = run_tool(args)
    if res.returncode != 0 or res.timed_out:
        return problems + [f"jetplan-run failed ({res.describe()}): {res.first_error()}"]
    for name, want in expected.items():
        path = os.path.join(work, "out", sanitize(name) + ".npy")
        if not os.path.exists(path):
            problems.append(f"output {name!r} was not written")
            continue
        why = compare_output(name, np.load(path), np.asarray(want))
        if why:
            problems.append(why)
    return problems


def gpu_problems(tools, gpu_target, work, feeds, expected, rtol=RTOL, atol=ATOL):
    """Converts work/model.onnx (run_model wrote it and the feeds) for gpu_target, runs it on this
    machine's GPU and compares every output of `expected` within atol + rtol |want|. The
    problems found."""
    plan, out = os.path.join(work, f"model.{gpu_target}.jplan"), os.path.join(work, "gpu_out")
    res = run_tool([tools.convert, os.path.join(work, "model.onnx"), "--target", gpu_target,
                    "-o", plan])
    if res.returncode != 0 or res.timed_out:
        return [f"jetplan-convert --target {gpu_target} failed: {res.first_error()}"]
    args = [tools.run, plan, "--warmup", "0", "--iterations", "1", "--save-outputs", out]
    for name in feeds:
        args += ["--input", f"{name}={os.path.join(work, sanitize(name) + '.in.npy')}"]
    res = run_tool(args)
    if res.returncode != 0 or res.timed_out:
        return [f"jetplan-run of the {gpu_target} plan failed: {res.first_error()}"]
    problems = []
    for name, want in expected.items():
        why = compare_output(name, np.load(os.path.join(out, sanitize(name) + ".npy")),
                             np.asarray(want), rtol=rtol, atol=atol)
        if why:
            problems.append(f"{gpu_target}: {why}")
    return problems


def run_cases(title, tools, cases, iterations=1, suite=None):
    """Every case of `cases` (each with .name, .model(), .feeds, .expected and optionally
    .steps) not left out by --only, through run_model; the exit status."""
    suite = suite or Suite()
    for case in cases:
        if tools.only and case.name not in tools.only:
            continue
        try:
            problems = run_model(tools, os.path.join(tools.workdir, case.name), case.model(),
                                 case.feeds, case.expected, iterations,
                                 getattr(case, "steps", None))
        except Exception as e:  # a broken case must not hide the others
            problems = [f"{type(e).__name__}: {e}"]
        suite.report(case.name, problems, f"({len(case.expected)} outputs)")
    return suite.summary(title)


def self_checker():
    """(check, failures): check(what, ok) prints one line per check of a reference against an
    independent formulation; failures() counts the failed ones."""
    failed = []

    def check(what, ok):
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        if not ok:
            failed.append(what)

    return check, lambda: len(failed)


def self_check_models(case_makers, failures):
    """The end of a --self-check: every case's model passes the onnx checker; prints the
    failure count of the reference checks and returns the exit status."""
    for make in case_makers:
        make().model()
        print(f"ok   model {make.__name__[5:]} passes the onnx checker")
    print(f"self-check: {failures} failure(s)")
    return 1 if failures else 0


def main_with_self_check(doc, title, case_makers, self_check, iterations=1):
    """The main of a script whose references check themselves: --self-check alone, or the
    self-check (a failure fails the run) and then every case."""
    tools = tool_args(doc, with_self_check=True)
    if tools.self_check:
        return self_check()
    suite = Suite()
    if self_check() != 0:
        suite.report("self-check", ["a reference disagrees with its definition"])
    return run_cases(title, tools, [make() for make in case_makers], iterations, suite)


# --------------------------------------------------------------------------------------------
# FlatBuffers, read-only walk (little-endian): root uoffset -> table; table soffset -> vtable;
# vtable = [u16 vtable bytes, u16 table bytes, u16 field offsets...]; a field offset of 0 means
# the field is absent (it holds its default).
# --------------------------------------------------------------------------------------------

class FlatBufferError(Exception):
    pass


def _u16(b, p):
    return struct.unpack_from("<H", b, p)[0]


def _u32(b, p):
    return struct.unpack_from("<I", b, p)[0]


def _i32(b, p):
    return struct.unpack_from("<i", b, p)[0]


def fb_root(buf):
    if len(buf) < 8:
        raise FlatBufferError("buffer too small")
    return _u32(buf, 0)


def fb_identifier(buf):
    return bytes(buf[4:8])


def fb_field(buf, table, index):
    """Absolute position of field `index` of the table at `table`, or None when absent."""
    vtable = table - _i32(buf, table)
    vt_bytes = _u16(buf, vtable)
    slot = 4 + 2 * index
    if slot + 2 > vt_bytes:
        return None
    off = _u16(buf, vtable + slot)
    return table + off if off else None


def fb_deref(buf, pos):
    """Follows the uoffset stored at `pos` (tables, vectors, strings)."""
    return pos + _u32(buf, pos)


def fb_vector(buf, table, index):
    """(position of the first element, length) of a vector field, or None when absent."""
    pos = fb_field(buf, table, index)
    if pos is None:
        return None
    vec = fb_deref(buf, pos)
    return vec + 4, _u32(buf, vec)


def fb_table_vector(buf, table, index):
    """Positions of the tables of a vector-of-tables field."""
    v = fb_vector(buf, table, index)
    if v is None:
        return []
    start, n = v
    return [fb_deref(buf, start + 4 * i) for i in range(n)]


# Field ids of schemas/plan.fbs (a union takes two ids: its _type and its value).
PLAN_SCHEMA_VERSION, PLAN_TENSORS, PLAN_STEPS, PLAN_WEIGHTS = 0, 4, 5, 8
TENSOR_STORAGE, TENSOR_OFFSET, TENSOR_SIZE_BYTES = 4, 5, 6
STEP_INPUTS = 4
STORAGE_BINDING = 2
