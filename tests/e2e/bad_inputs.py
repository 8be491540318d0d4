#!/usr/bin/env python3
"""Bad-input tests of jetplan-convert and jetplan-run: every broken model, plan, input file or
command line must give exactly one stderr line starting with the tool's `error:` prefix that
names the offending thing, a non-zero exit (1, or 2 for usage errors of jetplan-convert), and
never a signal or a hang. Command-line mistakes may add the usage text after that line.
Corrupted plans whose damage lies in the weights may also run; they must not crash.

Prints one line per check and a summary; exits 1 when anything failed.

Usage: bad_inputs.py --convert PATH --run PATH --workdir DIR
"""

import json
import os
import random
import shutil
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models  # noqa: E402
from e2e_common import (PLAN_SCHEMA_VERSION, PLAN_STEPS, PLAN_TENSORS, PLAN_WEIGHTS,  # noqa: E402
                        STEP_INPUTS, STORAGE_BINDING, TENSOR_OFFSET, TENSOR_STORAGE,
                        FlatBufferError, Suite, check_error, fb_field, fb_identifier, fb_root,
                        fb_table_vector, fb_vector, onnx_model, run_tool, tool_args)
from graph_builder import Graph  # noqa: E402

CONVERT_PREFIX = "jetplan-convert: error:"
RUN_PREFIX = "jetplan-run: error:"
RUN_FLAGS = ["--warmup", "0", "--iterations", "1"]


def refusal(res):
    """The detail a passing check prints: the tool's error line, when it refused."""
    return "| " + res.first_error() if res.returncode != 0 else ""


def write(path, data):
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def model_with_unsupported_ops(path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [helper.make_node("RandomUniformLike", ["x"], ["a"], name="strange_random"),
             helper.make_node("Relu", ["a"], ["b"], name="fine_relu"),
             helper.make_node("RandomNormalLike", ["b"], ["y"], name="odd_random")]
    onnx.save(onnx_model("unsupported", nodes, [x], [y]), path)
    return path


def model_with_double_input(path):
    x = helper.make_tensor_value_info("dbl", TensorProto.DOUBLE, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.DOUBLE, [1, 4])
    nodes = [helper.make_node("Relu", ["dbl"], ["y"], name="relu")]
    onnx.save(onnx_model("double", nodes, [x], [y], check=False), path)
    return path


def model_with_dangling_input(path):
    """Not a valid graph: the Relu reads a tensor nothing produces."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [helper.make_node("Add", ["x", "ghost_tensor"], ["y"], name="add_ghost")]
    onnx.save(onnx_model("dangling", nodes, [x], [y], check=False), path)
    return path


def model_with_storage_order(path):
    # storage_order is 0 (row-major Indices) or 1 (column-major): 2 names no order.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 2, 2])
    nodes = [helper.make_node("MaxPool", ["x"], ["y"], name="column_major_pool",
                              kernel_shape=[2, 2], strides=[2, 2], storage_order=2)]
    onnx.save(onnx_model("ceil", nodes, [x], [y]), path)
    return path


def model_with_external_data(directory):
    """A Conv whose weight lives in an external data file, as large models keep them."""
    g = Graph("external", seed=5)
    g.output(g.conv(g.input("x", [1, 2, 5, 5]), 3, 3, name="conv_ext"), "y")
    d = g.save(directory)
    model = onnx.load(os.path.join(d, "model.onnx"))
    onnx.save_model(model, os.path.join(d, "external.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="external_weights.bin",
                    size_threshold=0)
    return d, os.path.join(d, "external.onnx"), os.path.join(d, "external_weights.bin")


def converter_checks(tools, suite, work, good_onnx):
    def expect(name, argv, exit_codes=(1,), mentions=(), any_of=(), usage=False):
        res = run_tool([tools.convert] + argv)
        suite.report(f"convert/{name}",
                     check_error(res, CONVERT_PREFIX, exit_codes, mentions, any_of, usage),
                     refusal(res))

    out = os.path.join(work, "unused.jplan")
    missing = os.path.join(work, "no_such_model.onnx")
    expect("missing_model_file", [missing, "-o", out], mentions=["no_such_model.onnx"])

    rnd = write(os.path.join(work, "random_bytes.onnx"),
                np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    expect("random_bytes", [rnd, "-o", out], any_of=["random_bytes.onnx", "onnx", "parse"])

    with open(good_onnx, "rb") as fh:
        data = fh.read()
    for frac in (0.5, 0.9):
        cut = write(os.path.join(work, f"truncated_{int(frac * 100)}.onnx"),
                    data[:int(len(data) * frac)])
        expect(f"truncated_onnx_{int(frac * 100)}pct", [cut, "-o", out],
               any_of=[os.path.basename(cut), "onnx", "parse", "truncat"])
    empty = write(os.path.join(work, "empty.onnx"), b"")
    expect("empty_file", [empty, "-o", out], any_of=["empty.onnx", "onnx", "parse", "empty"])

    uns = model_with_unsupported_ops(os.path.join(work, "unsupported.onnx"))
    expect("two_unsupported_ops_in_one_line", [uns, "-o", out],
           mentions=["strange_random", "RandomUniformLike", "odd_random", "RandomNormalLike"])
    res = run_tool([tools.convert, uns, "-o", out])
    suite.report("convert/supported_node_not_listed_as_unsupported",
                 [f"error names the supported node fine_relu: {res.first_error()!r}"]
                 if "fine_relu" in res.stderr else [], refusal(res))

    expect("double_dtype", [model_with_double_input(os.path.join(work, "double.onnx")),
                            "-o", out], any_of=["dbl", "double", "float64", "dtype", "type"])
    expect("invalid_graph", [model_with_dangling_input(os.path.join(work, "dangling.onnx")),
                             "-o", out], any_of=["ghost_tensor", "add_ghost"])

    expect("maxpool_storage_order_invalid",
           [model_with_storage_order(os.path.join(work, "storage_order.onnx")), "-o", out],
           mentions=["column_major_pool", "storage_order 2"])

    # External data: converts (and computes right) while the file is there, or refuses
    # external data cleanly; once the file is gone, an error that names it.
    # A rank the runtime does not take (it reads at most rank 8): refused at conversion, or a
    # plan that loads and runs; never a plan the runtime refuses.
    g = Graph("rank9", seed=6)
    g.output(g.relu(g.input("x", [1, 2, 1, 2, 1, 2, 1, 2, 3]), name="relu_rank9"), "y")
    d9 = g.save(os.path.join(work, "models"))
    plan9 = os.path.join(work, "rank9.jplan")
    res = run_tool([tools.convert, os.path.join(d9, "model.onnx"), "-o", plan9])
    if res.returncode == 0:
        r2 = run_tool([tools.run, plan9, "--warmup", "0", "--iterations", "1"])
        problems = [] if r2.returncode == 0 else [
            f"converted, but jetplan-run refuses the plan ({r2.describe()}): {r2.first_error()}"]
    else:
        problems = check_error(res, CONVERT_PREFIX, (1,), any_of=["rank", "relu_rank9", "'x'"])
    suite.report("convert/rank_9_tensor", problems, refusal(res))

    d, ext_model, ext_data = model_with_external_data(os.path.join(work, "models"))
    ext_plan = os.path.join(work, "external.jplan")
    res = run_tool([tools.convert, ext_model, "-o", ext_plan])
    problems = []
    if res.returncode == 0:
        out_dir = os.path.join(work, "external_out")
        r2 = run_tool([tools.run, ext_plan, "--input", f"x={os.path.join(d, 'input0.npy')}",
                       "--warmup", "0", "--iterations", "1", "--save-outputs", out_dir])
        if r2.returncode != 0:
            problems.append(f"jetplan-run failed ({r2.describe()}): {r2.first_error()}")
        else:
            got = np.load(os.path.join(out_dir, "y.npy"))
            want = np.load(os.path.join(d, "expected0.npy"))
            if got.shape != want.shape or not np.allclose(got, want, 1e-4, 1e-5):
                problems.append("outputs differ from the reference")
    else:
        problems = check_error(res, CONVERT_PREFIX, (1,), any_of=["external"])
    suite.report("convert/external_data_present", problems, refusal(res))
    os.remove(ext_data)
    expect("external_data_missing", [ext_model, "-o", out],
           any_of=["external_weights.bin", "external"])

    unwritable = os.path.join(work, "no_such_dir", "x.jplan")
    expect("unwritable_output", [good_onnx, "-o", unwritable], mentions=["no_such_dir"])

    expect("usage_no_arguments", [], exit_codes=(2,), usage=True)
    expect("usage_unknown_option", [good_onnx, "-o", out, "--no-such-option"], exit_codes=(2,),
           mentions=["--no-such-option"], usage=True)
    expect("usage_missing_output", [good_onnx], exit_codes=(2,), usage=True)
    expect("shape_malformed", [good_onnx, "-o", out, "--shape", "image:2xAx16"],
           exit_codes=(1, 2), any_of=["2xAx16", "shape"], usage=True)
    expect("shape_unknown_input", [good_onnx, "-o", out, "--shape", "nope:1x3x16x16"],
           exit_codes=(1, 2), mentions=["nope"])
    expect("shape_wrong_rank", [good_onnx, "-o", out, "--shape", "image:2x3x16"],
           exit_codes=(1, 2), mentions=["image"])
    if os.path.exists(out):
        suite.report("convert/no_output_left_after_errors", [f"{out} was written"])


def plan_layout(buf):
    """Positions of the things the plan checks patch; raises FlatBufferError if the plan does
    not have the shape schemas/plan.fbs gives it."""
    root = fb_root(buf)
    version_pos = fb_field(buf, root, PLAN_SCHEMA_VERSION)
    weights = fb_vector(buf, root, PLAN_WEIGHTS)
    tensors = fb_table_vector(buf, root, PLAN_TENSORS)
    steps = fb_table_vector(buf, root, PLAN_STEPS)
    # A tensor whose offset field is present and that is not a binding: moving its offset far
    # away must be caught by load's bounds checks.
    offset_pos = None
    for t in tensors:
        st = fb_field(buf, t, TENSOR_STORAGE)
        storage = buf[st] if st is not None else 0
        pos = fb_field(buf, t, TENSOR_OFFSET)
        if storage != STORAGE_BINDING and pos is not None:
            offset_pos = pos
            break
    step_input_pos = None
    for s in steps:
        v = fb_vector(buf, s, STEP_INPUTS)
        if v is not None and v[1] > 0:
            step_input_pos = v[0]
            break
    return dict(version=version_pos, weights=weights, tensor_offset=offset_pos,
                step_input=step_input_pos, n_tensors=len(tensors))


def json_checks(tools, suite, work, plan, feed):
    """jetplan-run --json: the summary figures alone by default; --samples adds every timed
    run's host wall-clock time ("samples_ms", in run order) and, on GPU plans only,
    "gpu_samples_ms". The plan here is a CPU plan."""
    iterations = 7
    flags = ["--warmup", "1", "--iterations", str(iterations)]
    for name, extra in (("json_default", []), ("json_samples", ["--samples"])):
        path = os.path.join(work, f"{name}.json")
        if os.path.exists(path):
            os.remove(path)
        res = run_tool([tools.run, plan] + feed + flags + ["--json", path] + extra)
        problems = []
        if res.returncode != 0:
            problems.append(f"jetplan-run failed ({res.describe()}): {res.first_error()}")
        else:
            try:
                with open(path) as fh:
                    doc = json.load(fh)
            except (OSError, ValueError) as e:
                doc = None
                problems.append(f"{path} is not JSON: {e}")
            if doc is not None:
                if doc.get("backend") != "cpu" or doc.get("iterations") != iterations:
                    problems.append(f"backend {doc.get('backend')!r}, iterations "
                                    f"{doc.get('iterations')!r} (want 'cpu', {iterations})")
                if not doc.get("median_ms", 0) > 0:
                    problems.append(f"median_ms {doc.get('median_ms')!r} not positive")
                if "gpu_samples_ms" in doc or "gpu_median_ms" in doc:
                    problems.append("GPU figures in a CPU plan's JSON")
                samples = doc.get("samples_ms")
                if not extra:
                    if samples is not None:
                        problems.append("samples_ms written without --samples")
                elif not isinstance(samples, list) or len(samples) != iterations:
                    problems.append(f"samples_ms {samples!r}: want a list of {iterations}")
                elif not all(isinstance(v, (int, float)) and v > 0 for v in samples):
                    problems.append(f"samples_ms {samples!r}: want positive numbers")
                elif not (min(samples) <= doc["median_ms"] <= max(samples) and
                          abs(max(samples) - doc["max_ms"]) <= 1e-5 * doc["max_ms"]):
                    problems.append(f"samples_ms {samples} disagree with median_ms "
                                    f"{doc['median_ms']} / max_ms {doc['max_ms']}")
        suite.report(f"run/{name}", problems, refusal(res))


def run_refusal_check(tools, suite):
    """expect(name, argv, ...): jetplan-run on argv must refuse it by the error contract."""
    def expect(name, argv, mentions=(), any_of=(), exit_codes=(1,), usage=False):
        res = run_tool([tools.run] + argv)
        suite.report(f"run/{name}",
                     check_error(res, RUN_PREFIX, exit_codes, mentions, any_of, usage),
                     refusal(res))
        return res
    return expect


def plan_checks(tools, suite, work, case_dir, manifest):
    expect = run_refusal_check(tools, suite)
    plan = os.path.join(work, "good.jplan")
    res = run_tool([tools.convert, os.path.join(case_dir, "model.onnx"), "-o", plan]
                   + manifest["convert_args"])
    if res.returncode != 0:
        suite.report("run/setup_convert", [f"jetplan-convert failed ({res.describe()}): "
                                           f"{res.first_error()}"])
        return
    with open(plan, "rb") as fh:
        good = fh.read()
    inp = manifest["inputs"][0]
    npy = os.path.join(case_dir, inp["file"])
    feed = ["--input", f"{inp['name']}={npy}"]
    res = run_tool([tools.run, plan] + feed + RUN_FLAGS)
    if res.returncode != 0:
        suite.report("run/setup_good_plan_runs", [f"jetplan-run failed ({res.describe()}): "
                                                  f"{res.first_error()}"])
        return

    json_checks(tools, suite, work, plan, feed)
    expect("samples_without_json", [plan] + feed + RUN_FLAGS + ["--samples"], exit_codes=(1, 2),
           mentions=["--samples", "--json"], usage=True)
    expect("missing_plan_file", [os.path.join(work, "no_such.jplan")] + feed,
           mentions=["no_such.jplan"])
    expect("onnx_given_as_plan", [os.path.join(case_dir, "model.onnx")] + feed,
           any_of=["model.onnx", "plan", "identifier"])
    for size in sorted({0, 3, 8, 64, len(good) // 2, len(good) - 1}):
        cut = write(os.path.join(work, f"truncated_{size}.jplan"), good[:size])
        expect(f"plan_truncated_to_{size}_bytes", [cut] + feed,
               any_of=[os.path.basename(cut), "plan", "truncat", "verif", "corrupt", "size"])

    try:
        layout = plan_layout(good)
    except (FlatBufferError, struct.error, IndexError) as e:
        suite.report("run/plan_layout_readable", [f"cannot walk the plan FlatBuffer: {e}"])
        return
    if fb_identifier(good) != b"JPLN":
        suite.report("run/plan_file_identifier", [f"identifier {fb_identifier(good)!r}"])

    bad_id = bytearray(good)
    bad_id[4:8] = b"JPLX"
    expect("plan_wrong_file_identifier", [write(os.path.join(work, "bad_id.jplan"), bad_id)]
           + feed, any_of=["identifier", "JPLN", "plan", "bad_id.jplan"])

    if layout["version"] is None:
        suite.report("run/plan_schema_version_present", ["Plan.schema_version absent (0)"])
    else:
        version = struct.unpack_from("<I", good, layout["version"])[0]
        for new in (version + 1, 0xFFFFFFFF, 0):
            if new == version:
                continue
            patched = bytearray(good)
            struct.pack_into("<I", patched, layout["version"], new)
            expect(f"plan_schema_version_{new}",
                   [write(os.path.join(work, f"version_{new}.jplan"), patched)] + feed,
                   mentions=["version"])

    if layout["tensor_offset"] is not None:
        patched = bytearray(good)
        struct.pack_into("<Q", patched, layout["tensor_offset"], 1 << 40)
        expect("plan_tensor_offset_out_of_bounds",
               [write(os.path.join(work, "tensor_offset.jplan"), patched)] + feed)
    if layout["step_input"] is not None:
        patched = bytearray(good)
        struct.pack_into("<I", patched, layout["step_input"], layout["n_tensors"] + 1000)
        expect("plan_step_input_index_out_of_range",
               [write(os.path.join(work, "step_input.jplan"), patched)] + feed)

    damaged_plan_check(tools, suite, work, good, layout, feed)
    input_file_checks(tools, suite, work, plan, feed, inp, npy)


def damaged_plan_check(tools, suite, work, good, layout, feed):
    # Corrupted bytes: an error (one clean line) or, where the damage is harmless (weights,
    # padding), a normal run. Never a signal, never a hang. Most of the file is weights, so the
    # positions are drawn mostly from the rest (header, vtables, tensors, steps, metadata); half
    # the damage is a flipped byte, half a random 32-bit word (offsets and counts gone wild).
    w_begin, w_len = layout["weights"] if layout["weights"] else (0, 0)
    structure = [p for p in range(len(good)) if not w_begin <= p < w_begin + w_len]
    rng = random.Random(1234)
    positions = sorted(set(rng.sample(structure, min(len(structure), 160))) |
                       {rng.randrange(w_begin, w_begin + w_len) for _ in range(10) if w_len})
    crashed, messy = [], []
    runs = errors = 0
    for k, pos in enumerate(positions):
        damaged = bytearray(good)
        if k % 2 == 0 or pos + 4 > len(good):
            damaged[pos] ^= 0xFF
            how = "flipped"
        else:
            struct.pack_into("<I", damaged, pos, rng.getrandbits(32))
            how = "word at"
        path = write(os.path.join(work, "damaged.jplan"), damaged)
        res = run_tool([tools.run, path] + feed + RUN_FLAGS)
        where = " (weights)" if w_begin <= pos < w_begin + w_len else ""
        if res.timed_out or res.returncode < 0:
            crashed.append(f"{how} byte {pos}{where}: {res.describe()}; stderr "
                           f"{res.stderr.strip()[-300:]!r}")
            shutil.copy(path, os.path.join(work, f"crash_{pos}.jplan"))
        elif res.returncode == 0:
            runs += 1
        else:
            errors += 1
            p = check_error(res, RUN_PREFIX, (1,))
            if p:
                messy.append(f"{how} byte {pos}{where}: {'; '.join(p)}")
    suite.report(f"run/plan_corrupted_at_{len(positions)}_positions", crashed + messy)
    print(f"        ({runs} ran, {errors} refused; weights at [{w_begin}, {w_begin + w_len}) "
          f"of {len(good)} bytes; crashing plans kept as {work}/crash_*.jplan)")


def input_file_checks(tools, suite, work, plan, feed, inp, npy):
    expect = run_refusal_check(tools, suite)
    shape = inp["shape"]
    name = inp["name"]
    raw = write(os.path.join(work, "short.bin"),
                np.zeros(int(np.prod(shape)) - 1, "<f4").tobytes())
    expect("raw_input_wrong_size", [plan, "--input", f"{name}={raw}"],
           any_of=[name, "short.bin"])
    wrong = os.path.join(work, "wrong_shape.npy")
    np.save(wrong, np.zeros(list(reversed(shape)), "<f4"))
    expect("npy_wrong_shape", [plan, "--input", f"{name}={wrong}"],
           any_of=[name, "wrong_shape.npy"])
    same_count = os.path.join(work, "same_count_other_shape.npy")
    np.save(same_count, np.zeros([int(np.prod(shape))], "<f4"))
    expect("npy_same_size_other_shape", [plan, "--input", f"{name}={same_count}"],
           any_of=[name, "same_count_other_shape.npy"])
    f64 = os.path.join(work, "float64.npy")
    np.save(f64, np.zeros(shape, "<f8"))
    expect("npy_float64", [plan, "--input", f"{name}={f64}"],
           any_of=["f8", "float64", "dtype", "float32", "f4"])
    fortran = os.path.join(work, "fortran.npy")
    np.save(fortran, np.asfortranarray(np.zeros(shape, "<f4")))
    expect("npy_fortran_order", [plan, "--input", f"{name}={fortran}"],
           any_of=["fortran", "order", "fortran.npy"])
    garbage = write(os.path.join(work, "garbage.npy"), b"\x93NUMPY\x01\x00\xff\xffnot a header")
    expect("npy_corrupt_header", [plan, "--input", f"{name}={garbage}"],
           any_of=["garbage.npy", "npy", "header"])
    expect("input_file_missing", [plan, "--input", f"{name}={os.path.join(work, 'nope.npy')}"],
           mentions=["nope.npy"])
    expect("input_unknown_name", [plan, "--input", f"no_such_input={npy}"],
           mentions=["no_such_input"])
    expect("usage_iterations_not_a_number", [plan] + feed + ["--iterations", "many"],
           exit_codes=(1, 2), any_of=["many", "iterations"], usage=True)
    expect("usage_unknown_option", [plan, "--frobnicate"], exit_codes=(1, 2),
           mentions=["--frobnicate"], usage=True)
    # No arguments at all: the usage text alone is a fine answer too.
    res = run_tool([tools.run])
    problems = check_error(res, RUN_PREFIX, (1, 2), usage=True)
    if problems and res.returncode in (1, 2) and res.first_error().startswith("usage:"):
        problems = []
    suite.report("run/usage_no_arguments", problems, refusal(res))
    unwritable = os.path.join(work, "file_not_dir")
    write(unwritable, b"x")
    expect("save_outputs_into_a_file", [plan] + feed + RUN_FLAGS +
           ["--save-outputs", unwritable], any_of=["file_not_dir", "save", "output"])


def main():
    tools = tool_args(__doc__)
    work = tools.workdir
    case_dir = make_models.generate(os.path.join(work, "models"), {"mini_resnet"})[0]
    with open(os.path.join(case_dir, "case.json")) as fh:
        manifest = json.load(fh)

    suite = Suite()
    converter_checks(tools, suite, work, os.path.join(case_dir, "model.onnx"))
    plan_checks(tools, suite, work, case_dir, manifest)
    return suite.summary("e2e bad inputs")


if __name__ == "__main__":
    sys.exit(main())
