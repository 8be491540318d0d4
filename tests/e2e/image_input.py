#!/usr/bin/env python3
"""jetplan-run reads images (stb_image) into float32 inputs scaled to [0, 1], NCHW or NHWC as the
input is laid out, and refuses an image of the wrong size with a one-line error naming both."""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def relu_model(path, shape):
    x = helper.make_tensor_value_info("image", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    graph = helper.make_graph([helper.make_node("Relu", ["image"], ["y"], name="relu")], "img",
                              [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


def write_pnm(path, pixels):  # pixels [H, W, C] uint8, C = 1 (PGM) or 3 (PPM)
    h, w, c = pixels.shape
    with open(path, "wb") as f:
        f.write(b"P6\n" if c == 3 else b"P5\n")
        f.write(f"{w} {h}\n255\n".encode())
        f.write(pixels.tobytes())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--convert", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    rng = np.random.default_rng(3)
    failures = 0
    h, w = 4, 5
    for name, shape, channels in [("nchw_rgb", [1, 3, h, w], 3), ("nhwc_rgb", [1, h, w, 3], 3),
                                  ("nchw_gray", [1, 1, h, w], 1)]:
        model = os.path.join(a.workdir, name + ".onnx")
        plan = os.path.join(a.workdir, name + ".jplan")
        relu_model(model, shape)
        subprocess.run([a.convert, model, "-o", plan], check=True, capture_output=True)
        pixels = rng.integers(0, 256, size=(h, w, channels), dtype=np.uint8)
        image = os.path.join(a.workdir, name + (".ppm" if channels == 3 else ".pgm"))
        write_pnm(image, pixels)
        out_dir = os.path.join(a.workdir, name + "_out")
        p = subprocess.run([a.run, plan, "--input", "image=" + image, "--warmup", "0",
                            "--iterations", "1", "--save-outputs", out_dir],
                           capture_output=True, text=True)
        want = pixels.astype(np.float32) / 255.0
        want = want.transpose(2, 0, 1)[None] if shape[1] == channels else want[None]
        got = np.load(os.path.join(out_dir, "y.npy")) if p.returncode == 0 else None
        ok = got is not None and got.shape == want.shape and np.allclose(got, want, atol=1e-6)
        print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {p.stderr.strip()}"))
        failures += not ok
    # An image of another size: one line naming both sizes, exit 1.
    small = os.path.join(a.workdir, "small.ppm")
    write_pnm(small, rng.integers(0, 256, size=(2, 2, 3), dtype=np.uint8))
    p = subprocess.run([a.run, os.path.join(a.workdir, "nchw_rgb.jplan"), "--input",
                        "image=" + small], capture_output=True, text=True)
    lines = p.stderr.strip().splitlines()
    ok = (p.returncode == 1 and len(lines) == 1 and "2x2" in lines[0] and "5x4" in lines[0]
          and lines[0].startswith("jetplan-run: error:"))
    print(("PASS " if ok else "FAIL ") + "wrong_size_image" + ("" if ok else f": {p.stderr!r}"))
    failures += not ok
    print(f"image inputs: {4 - failures}/4 passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
