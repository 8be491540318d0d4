#!/usr/bin/env python3
"""ONNX's own conformance data through jetplan: every model is converted with jetplan-convert,
run with jetplan-run on each stored input set (CPU backend), and its outputs compared with the
stored outputs. Two sources: a data folder in the libonnx-testdata layout (--data, default
Debian's onnx 1.12 data), or with --onnx-package the node tests of the onnx package this script
runs under (the newest PyPI onnx in tests/install_deps.sh's venv: its wheel carries them as the
generator scripts of onnx/backend/test/case/node, whose models and data are written out in that
layout first).

One line per test: PASS, FAIL (with why) or UNSUPPORTED (the converter's reason), then a summary.
Graph inputs that feed parameter slots (Reshape's shape, Pad's pads, TopK's K, CastLike's
target_type, ...: see PARAMETER_SLOTS) or that nothing reads are frozen into initializers holding
the test's stored value, one plan per data set, and the line says so ("PASS node/test_pad
(frozen: pads)"); --no-freeze converts the models as they are.
With --expect FILE, exits non-zero on a regression: a test listed there as PASS that no longer
passes, or a FAIL (a wrong result, not a refusal) of a test the list does not mark FAIL; tests
that pass but are not listed are reported, so the list can be updated with --write-expect. The
list names the onnx version whose node tests it was written from; under another version, tests
new in that version are reported, not failed.
Tolerance (float types): |got - want| <= atol + rtol * |want| with rtol 1e-3 and atol 1e-5
(ONNX's backend tests use rtol 1e-3); integers, booleans and bfloat16 (its bit patterns, as
uint16: numpy has no bfloat16) must be equal, except that with --bfloat16-truncated-data (onnx
1.12's data truncated to bfloat16 where ONNX now rounds to nearest even) a bfloat16 output may
also be one step farther from zero than the stored one, and that a bfloat16 output computed by
ops other than Cast and CastLike may be up to 2 bfloat16 steps from the stored one (ONNX's
reference rounds every op's result to bfloat16, jetplan computes in float32 and rounds once); a NaN passes only where the stored output
has a NaN at that position. Run with /usr/bin/python3 for Debian's data, with the venv's python
(tests/install_deps.sh) for --onnx-package.
With --target NAME (a GPU target, on a machine with its GPU) the plans are converted for it and
run there: float32 tensors are float16 inside such plans, so float outputs are held to rtol 1e-2
and atol 2e-3 times the output's largest stored magnitude (at least 1), bfloat16 outputs too
(compared as the floats they hold: the float32 they are cast from is float16 there); the rest
as above. The
expectation lists are the CPU backend's; a GPU run writes its own with --write-expect.
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
TARGET = None  # --target: plans for a GPU target, float outputs at float16's tolerance
SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]

# Input slots that describe the computation rather than carry data: jetplan needs them constant
# (they fix output shapes or attributes of the step). ONNX's node tests often feed them as graph
# inputs with the value stored in the test data; with --freeze (the default) such an input is
# turned into an initializer holding that stored value, which is the same test.
_REDUCE = ["ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
           "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare"]
PARAMETER_SLOTS = {
    "AffineGrid": (1,),              # size (it fixes the output's shape)
    "CastLike": (1,),                # target_type: only its dtype is read
    "Col2Im": (1, 2),                # image_shape, block_shape (they fix the output)
    "CenterCropPad": (1,),           # shape
    "Compress": (1,),                # condition (it fixes the output's shape)
    "Clip": (1, 2),                  # min, max
    "ConstantOfShape": (0,),         # shape
    "CumProd": (1,),                 # axis
    "CumSum": (1,),                  # axis
    "DFT": (1, 2),                   # dft_length, axis (opset 20)
    "Dropout": (1, 2),               # ratio, training_mode
    "Expand": (1,),                  # shape
    "BlackmanWindow": (0,),          # size
    "HammingWindow": (0,),           # size
    "HannWindow": (0,),              # size
    "If": (0,),                      # cond: jetplan folds If to a branch (--freeze)
    "Loop": (0, 1),                  # trip count, cond: jetplan unrolls Loop (--freeze)
    "MaxUnpool": (2,),               # output_shape
    "MelWeightMatrix": (0, 1, 2, 3, 4),  # every input: it folds
    "NonMaxSuppression": (2, 3, 4),  # max_output_boxes_per_class, iou/score thresholds
    "OneHot": (1,),                  # depth
    "Pad": (1, 2, 3),                # pads, constant_value, axes
    "Range": (0, 1, 2),              # start, limit, delta
    "Reshape": (1,),                 # shape
    "Resize": (1, 2, 3),             # roi, scales, sizes
    "Slice": (1, 2, 3, 4),           # starts, ends, axes, steps
    "Split": (1,),                   # split
    "STFT": (1, 3),                  # frame_step, frame_length
    "Squeeze": (1,),                 # axes
    "Tile": (1,),                    # repeats
    "TopK": (1,),                    # K
    "ReverseSequence": (1,),         # sequence_lens
    "Trilu": (1,),                   # k
    "Unsqueeze": (1,),               # axes
    "Upsample": (1,),                # scales
    **{op: (1,) for op in _REDUCE},  # axes
}


def names_read(graph):
    """Every value name a node of `graph` or of its subgraphs reads, and its outputs."""
    read = {o.name for o in graph.output}
    for node in graph.node:
        read.update(node.input)
        for a in node.attribute:
            for g in list(a.graphs) + ([a.g] if a.HasField("g") else []):
                read |= names_read(g)
    return read


def parameter_inputs(model):
    """Names of the graph inputs (not initializers) that feed a parameter slot of a node of
    the default domain, or that nothing reads (the _expanded CastLike tests keep their 'like'
    input, whose stored value need not have the declared shape), in graph input order; none
    for a model with a graph input that is no tensor."""
    inits = {i.name for i in model.graph.initializer}
    graph_inputs = [i.name for i in model.graph.input if i.name not in inits]
    # A sequence or optional input's stored value is no array to freeze or feed: such a model
    # converts as it is (and is refused: plans hold tensors only).
    if any(not i.type.HasField("tensor_type") for i in model.graph.input if i.name not in inits):
        return []
    read = names_read(model.graph)
    wanted = {name for name in graph_inputs if name not in read}
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx"):
            continue
        for slot in PARAMETER_SLOTS.get(node.op_type, ()):
            if slot < len(node.input) and node.input[slot] in graph_inputs:
                wanted.add(node.input[slot])
    return [name for name in graph_inputs if name in wanted]


def freeze_inputs(model, values):
    """A copy of `model` where each graph input named in `values` is an initializer holding
    that array. Models of IR version 3 and older list every initializer as a graph input too
    (their checker requires it); jetplan takes such inputs as constants. An input the model
    declares bfloat16 holds its bit patterns as uint16 (see load_tensor) and stays bfloat16."""
    frozen = onnx.ModelProto()
    frozen.CopyFrom(model)
    declared = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    keep_inputs = model.ir_version < 4
    kept = [i for i in frozen.graph.input if keep_inputs or i.name not in values]
    del frozen.graph.input[:]
    frozen.graph.input.extend(kept)
    for name, arr in values.items():
        arr = np.asarray(arr)
        if declared.get(name) == onnx.TensorProto.BFLOAT16 and arr.dtype == np.uint16:
            t = onnx.TensorProto(name=name, data_type=onnx.TensorProto.BFLOAT16,
                                 dims=arr.shape, raw_data=arr.astype("<u2").tobytes())
        else:
            t = numpy_helper.from_array(arr, name)
        frozen.graph.initializer.append(t)
    return frozen


def load_tensor(path):
    """(name, array). numpy has no bfloat16: a BFLOAT16 tensor comes back as its bit patterns,
    uint16, as jetplan-run reads and writes a bfloat16 binding (ONNX's node tests store their
    bfloat16 data as UINT16 tensors of those bits already); compare() then wants them equal."""
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type == onnx.TensorProto.BFLOAT16:
        bits = (np.frombuffer(t.raw_data, dtype="<u2") if t.raw_data
                else np.asarray(t.int32_data, dtype=np.int64).astype(np.uint16))
        return t.name, bits.reshape(tuple(t.dims))
    return t.name, numpy_helper.to_array(t)


def first_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1] if lines else "(no message)"


def bfloat16_one_step_out(got, want):
    """Where `got` is the bfloat16 (bits, uint16) one step farther from zero than a finite
    `want`, as rounding to nearest even gives where truncation dropped half a step or more."""
    finite = (want & 0x7f80) != 0x7f80
    return finite & ((got & 0x8000) == (want & 0x8000)) & (
        (got & 0x7fff).astype(np.int32) == (want & 0x7fff).astype(np.int32) + 1)


def bfloat16_steps_apart(got, want):
    """How many bfloat16 steps apart the bit patterns (uint16) are: their order as integers
    (sign and magnitude made one signed scale, so -0 and +0 are 0 apart)."""
    def key(b):
        mag = (b & 0x7fff).astype(np.int32)
        return np.where((b & 0x8000) != 0, -mag, mag)
    return np.abs(key(got) - key(want))


def bfloat16_values(bits):
    """bfloat16 bit patterns (uint16) as the float32 values they are."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def compare(name, got, want, bfloat16_truncated=False, bfloat16=False, bfloat16_computed=False):
    """None when `got` matches `want`, else why not. bfloat16_truncated: `want` holds bfloat16
    bits made by truncation (onnx 1.12's data), and a value one step farther from zero passes.
    bfloat16: the output is bfloat16 (bits); under --target its values are compared as floats,
    since a GPU plan's float32 is float16 before it is rounded to bfloat16. bfloat16_computed:
    the output is computed by ops other than a Cast: finite values may be 2 steps apart."""
    if got.shape != want.shape:
        return f"output '{name}' has shape {list(got.shape)}, expected {list(want.shape)}"
    if TARGET and bfloat16 and got.dtype == np.uint16 and want.dtype == np.uint16:
        got, want = bfloat16_values(got), bfloat16_values(want)
    if want.dtype.kind in "fc":
        got64, want64 = got.astype(np.float64), want.astype(np.float64)
        nan_want, nan_got = np.isnan(want64), np.isnan(got64)
        if np.any(nan_got & ~nan_want) or np.any(nan_want & ~nan_got):
            return f"output '{name}': NaN where none is expected (or missing)"
        ok = ~nan_want
        both_inf = np.isinf(want64) & (got64 == want64)
        err = np.abs(got64 - want64)
        rtol, atol = RTOL, ATOL
        if TARGET:
            finite = want64[np.isfinite(want64)]
            rtol, atol = 1e-2, 2e-3 * max(1.0, float(np.max(np.abs(finite))) if finite.size else 1.0)
        bad = ok & ~both_inf & ~(err <= atol + rtol * np.abs(want64))
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
        if bfloat16_truncated:
            bad &= ~bfloat16_one_step_out(got, want)
        if bfloat16_computed and got.dtype == np.uint16:
            finite = ((want & 0x7f80) != 0x7f80) & ((got & 0x7f80) != 0x7f80)
            bad &= ~(finite & (bfloat16_steps_apart(got, want) <= 2))
        if np.any(bad):
            return f"output '{name}': {int(bad.sum())} of {bad.size} elements differ"
    return None


def safe_name(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "output"


def convert_model(convert, model_path, plan):
    """None when jetplan-convert made the plan, else (status, why)."""
    argv = [convert, model_path, "-o", plan] + (["--target", TARGET] if TARGET else [])
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if p.returncode < 0:
        return "FAIL", f"jetplan-convert died with signal {-p.returncode}"
    if p.returncode != 0:
        msg = first_line(p.stderr).replace("jetplan-convert: error: ", "")
        return "UNSUPPORTED", msg.replace(model_path + ": ", "")
    return None


def run_test(test_dir, convert, run, work_root, freeze=True, bfloat16_truncated=False):
    """(name, status, why, frozen): frozen lists the graph inputs turned into initializers."""
    name = os.path.basename(test_dir)
    work = tempfile.mkdtemp(prefix=name + ".", dir=work_root)
    frozen = []
    try:
        model_path = os.path.join(test_dir, "model.onnx")
        model = onnx.load(model_path, load_external_data=False)
        inits = {i.name for i in model.graph.initializer}
        inputs = [i.name for i in model.graph.input if i.name not in inits]
        declared = {}
        for i in model.graph.input:
            dims = i.type.tensor_type.shape.dim
            if i.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
                declared[i.name] = tuple(d.dim_value for d in dims)
        outputs = [o.name for o in model.graph.output]
        bfloat16_outputs = {o.name for o in model.graph.output
                            if o.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16}
        computed = any(n.op_type not in ("Cast", "CastLike") for n in model.graph.node)
        frozen = parameter_inputs(model) if freeze else []
        sets = sorted(d for d in os.listdir(test_dir) if d.startswith("test_data_set_"))
        plan = os.path.join(work, "model.jplan")
        if not frozen:
            bad = convert_model(convert, model_path, plan)
            if bad:
                return name, bad[0], bad[1], frozen
        if not sets:
            return name, "FAIL", "no test data", frozen
        for ds in sets:
            ds_dir = os.path.join(test_dir, ds)
            given = {}  # graph input name -> stored array, in data set order
            n_in = len([f for f in os.listdir(ds_dir) if f.startswith("input_")])
            for i in range(n_in):
                pb_name, arr = load_tensor(os.path.join(ds_dir, f"input_{i}.pb"))
                in_name = inputs[i] if i < len(inputs) else pb_name
                # Some stored inputs hold the declared elements in another shape ([1] for a
                # scalar): give them the shape the model declares.
                shape = declared.get(in_name)
                if shape is not None and arr.shape != shape and arr.size == int(np.prod(shape)):
                    arr = arr.reshape(shape)
                given[in_name] = arr
            if frozen:
                # The parameters may differ between data sets: one plan per set.
                missing = [n for n in frozen if n not in given]
                if missing:
                    return name, "FAIL", f"{ds}: no stored value for input '{missing[0]}'", frozen
                frozen_path = os.path.join(work, f"{ds}.model.onnx")
                onnx.save(freeze_inputs(model, {n: given[n] for n in frozen}), frozen_path)
                plan = os.path.join(work, f"{ds}.jplan")
                bad = convert_model(convert, frozen_path, plan)
                if bad:
                    return name, bad[0], bad[1], frozen
            args = [run, plan, "--warmup", "0", "--iterations", "1",
                    "--save-outputs", os.path.join(work, ds)]
            for i, (in_name, arr) in enumerate(given.items()):
                if in_name in frozen:
                    continue
                npy = os.path.join(work, f"{ds}.in{i}.npy")
                np.save(npy, np.array(arr, order="C"))
                args += ["--input", f"{in_name}={npy}"]
            p = subprocess.run(args, capture_output=True, text=True, timeout=120)
            if p.returncode < 0:
                return name, "FAIL", f"jetplan-run died with signal {-p.returncode}", frozen
            if p.returncode != 0:
                return name, "FAIL", "jetplan-run: " + first_line(p.stderr).replace(
                    "jetplan-run: error: ", ""), frozen
            n_out = len([f for f in os.listdir(ds_dir) if f.startswith("output_")])
            for i in range(n_out):
                _, want = load_tensor(os.path.join(ds_dir, f"output_{i}.pb"))
                out_name = outputs[i]
                got_path = os.path.join(work, ds, safe_name(out_name) + ".npy")
                if not os.path.exists(got_path):
                    return name, "FAIL", f"output '{out_name}' was not written", frozen
                why = compare(out_name, np.load(got_path), want,
                              bfloat16_truncated and out_name in bfloat16_outputs,
                              out_name in bfloat16_outputs,
                              computed and out_name in bfloat16_outputs)
                if why:
                    return name, "FAIL", f"{ds}: {why}", frozen
        return name, "PASS", "", frozen
    except subprocess.TimeoutExpired:
        return name, "FAIL", "timed out", frozen
    except Exception as e:  # a broken test file must not stop the run
        return name, "FAIL", f"runner: {type(e).__name__}: {e}", frozen
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write_value(value, type_proto, name, path):
    """One stored input or output of a node test, serialized as onnx's backend-test-tools
    generate-data writes it (a TensorProto, or a Sequence/Map/Optional proto for those types)."""
    if isinstance(value, onnx.TensorProto):
        proto = value
    elif type_proto.HasField("sequence_type"):
        proto = numpy_helper.from_list(value, name)
    elif type_proto.HasField("map_type"):
        proto = numpy_helper.from_dict(value, name)
    elif type_proto.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, name)
    else:
        proto = numpy_helper.from_array(np.asarray(value), name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def write_package_node_tests(out_root, name_filter):
    """The node tests of the onnx package this script runs under, written in the
    libonnx-testdata layout under out_root/node (model.onnx, test_data_set_N/input_M.pb and
    output_M.pb). Returns onnx's version."""
    import warnings
    from onnx.backend.test.loader import load_node_model_tests
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators' own numpy warnings (1/0 on purpose)
        cases = load_node_model_tests()
    for case in cases:
        if not re.search(name_filter, case.name):
            continue
        test_dir = os.path.join(out_root, "node", case.name)
        os.makedirs(test_dir)
        graph = case.model.graph
        with open(os.path.join(test_dir, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(test_dir, f"test_data_set_{i}")
            os.makedirs(ds)
            for j, value in enumerate(inputs):
                write_value(value, graph.input[j].type, graph.input[j].name,
                            os.path.join(ds, f"input_{j}.pb"))
            for j, value in enumerate(outputs):
                write_value(value, graph.output[j].type, graph.output[j].name,
                            os.path.join(ds, f"output_{j}.pb"))
    return onnx.__version__


EXPECT_ONNX_VERSION = "# onnx-version:"


def read_expect(path):
    """({test: status}, the onnx version the list was written from or None)."""
    expect, version = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith(EXPECT_ONNX_VERSION):
                version = line[len(EXPECT_ONNX_VERSION):].strip()
            line = line.split("#", 1)[0].strip()
            if line:
                test, status = line.split()[:2]
                expect[test] = status
    return expect, version


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--convert", required=True)
    ap.add_argument("--target", help="a GPU target: convert for it and run on its GPU")
    ap.add_argument("--run", required=True)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--onnx-package", action="store_true",
                    help="the node tests of the onnx package this interpreter imports, instead "
                         "of --data")
    ap.add_argument("--suites", default=",".join(SUITES))
    ap.add_argument("--bfloat16-truncated-data", action="store_true",
                    help="the data's bfloat16 outputs were made by truncating float32 (onnx "
                         "1.12, Debian's libonnx-testdata; ONNX now rounds to nearest even): "
                         "accept a value one bfloat16 step farther from zero than the stored one")
    ap.add_argument("--filter", default="", help="regex on the test name")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--expect", help="expectation list: fail on a regression against it")
    ap.add_argument("--write-expect", help="write the statuses of this run as a list")
    ap.add_argument("--quiet", action="store_true", help="print only failures and the summary")
    ap.add_argument("--freeze", action=argparse.BooleanOptionalAction, default=True,
                    help="turn graph inputs that feed parameter slots (Reshape shape, Pad pads, "
                         "TopK K, ...; see PARAMETER_SLOTS) into initializers holding the test's "
                         "stored value (default: on); the per-test line names them")
    args = ap.parse_args()
    global TARGET
    TARGET = args.target

    work_root = args.workdir or tempfile.mkdtemp(prefix="jetplan-conformance.")
    os.makedirs(work_root, exist_ok=True)
    onnx_version = None
    if args.onnx_package:
        args.data = tempfile.mkdtemp(prefix="onnx-node-tests.", dir=work_root)
        args.suites = "node"
        onnx_version = write_package_node_tests(args.data, args.filter)
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

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_test, d, args.convert, args.run, work_root, args.freeze,
                               args.bfloat16_truncated_data): (s, d) for s, d in tests}
        for fut in concurrent.futures.as_completed(futures):
            suite, _ = futures[fut]
            name, status, why, frozen = fut.result()
            results[f"{suite}/{name}"] = (status, why, frozen)
    counts = {"PASS": 0, "FAIL": 0, "UNSUPPORTED": 0}
    n_frozen = 0
    for key in sorted(results):
        status, why, frozen = results[key]
        counts[status] += 1
        n_frozen += bool(frozen)
        if not args.quiet or status == "FAIL":
            print(f"{status:<11} {key}" + (f" (frozen: {', '.join(frozen)})" if frozen else "")
                  + (f": {why}" if why else ""))
    source = f"onnx {onnx_version}'s node tests" if onnx_version else args.data
    rate = 100.0 * counts["PASS"] / max(1, len(results))
    print(f"conformance ({source}): {len(results)} tests: {counts['PASS']} pass ({rate:.1f}%), "
          f"{counts['FAIL']} fail, {counts['UNSUPPORTED']} unsupported" +
          (f" ({n_frozen} with parameter inputs frozen)" if args.freeze else " (--no-freeze)"))

    if args.write_expect:
        with open(args.write_expect, "w") as f:
            f.write("# jetplan conformance expectations: test status (written by "
                    "run_conformance.py --write-expect)\n")
            if onnx_version:
                f.write(f"{EXPECT_ONNX_VERSION} {onnx_version}\n")
            for key in sorted(results):
                frozen = results[key][2]
                f.write(f"{key} {results[key][0]}" +
                        (f"  # frozen: {', '.join(frozen)}" if frozen else "") + "\n")
    rc = 0
    if args.expect:
        expect, expect_version = read_expect(args.expect)
        # Under another onnx release the set itself changes: tests appear and go. Those are
        # reported; what the list says of the tests both have still holds.
        same_set = expect_version == onnx_version
        regressions = [k for k, st in expect.items() if st == "PASS" and k in results
                       and results[k][0] != "PASS"]
        # A new wrong result: a refusal that became a FAIL, or an unlisted test of this set
        # that fails (a listed PASS that fails is counted above).
        regressions += [k for k in results if results[k][0] == "FAIL" and (
            expect.get(k) == "UNSUPPORTED" or (k not in expect and same_set))]
        missing = [k for k, st in expect.items() if st == "PASS" and k not in results
                   and not args.filter]
        improved = [k for k in results if results[k][0] == "PASS" and expect.get(k) != "PASS"]
        for k in sorted(regressions):
            print(f"REGRESSION  {k}: {results[k][0]} {results[k][1]}")
        for k in missing:
            print(("REGRESSION  " if same_set else "GONE        ") +
                  f"{k}: expected to pass but no longer found")
        if not same_set:
            new = [k for k in results if k not in expect]
            print(f"conformance: the list was written from onnx {expect_version}, this is onnx "
                  f"{onnx_version}: {len(new)} tests are not in it ("
                  f"{sum(results[k][0] == 'FAIL' for k in new)} fail), not counted as regressions")
        if improved:
            print(f"conformance: {len(improved)} tests pass that the list does not expect to; "
                  f"update it with --write-expect")
        if regressions or (missing and same_set):
            rc = 1
    if not args.workdir:
        shutil.rmtree(work_root, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
