#!/usr/bin/env python3
"""Models with their own Q/DQ pairs on the GPU: ONNX Runtime's static quantizer against jetplan.

Each model (tests/models/export_and_check.py's builders) is exported, quantized by ONNX Runtime's
quantize_static in QDQ format (int8 activations and weights, symmetric, per-channel weights:
the form jetplan honours, docs/int8.md) over --calib-samples inputs, and converted for the GPU
target without --precision or calibration (the model's own scales). On held-out inputs:

  snr_vs_ort   10 log10(|y_ort|^2 / |y - y_ort|^2): jetplan's INT8 plan against ONNX Runtime
               running the same Q/DQ model on the CPU (the quantized model's reference)
  top1_vs_ort  the share of held-out samples whose argmax agrees with ONNX Runtime's
  ort_snr_fp32 ONNX Runtime's Q/DQ output against PyTorch FP32 (what the quantization costs)
  ms           jetplan-run's GPU median: the Q/DQ plan and the FP16 plan of the FP32 model,
               interleaved over --rounds rounds

    python3 tests/perf/qdq_check.py --convert BIN/jetplan-convert --run BIN/jetplan-run \\
        --target h200 --models resnet18,mobilenet_v2 --json out.json
"""
import json
import os
import sys

import numpy as np
import onnxruntime as ort
import torch
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export_and_check as eac  # noqa: E402
from int8_check import base_parser, run, snr_db, time_interleaved  # noqa: E402


class Reader(CalibrationDataReader):
    def __init__(self, samples):
        self.samples = iter(samples)

    def get_next(self):
        x = next(self.samples, None)
        return None if x is None else {"input": x}


def check(args, name, work):
    model, _, opset = eac.build(name, 1)
    shape = (1,) + tuple(eac.MODELS[name][1][1:])
    os.makedirs(work, exist_ok=True)
    fp32_path, qdq_path = os.path.join(work, f"{name}.onnx"), os.path.join(work, f"{name}_qdq.onnx")
    eac.export(model, torch.zeros(shape), opset, fp32_path)
    rng = np.random.default_rng(10)
    calib = [rng.standard_normal(shape).astype(np.float32) for _ in range(args.calib_samples)]
    quantize_static(fp32_path, qdq_path, Reader(calib), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    extra_options={"ActivationSymmetric": True, "WeightSymmetric": True})
    plans = {"qdq": os.path.join(work, "qdq.jplan"), "fp16": os.path.join(work, "fp16.jplan")}
    pin = ["--shape", "input:" + "x".join(map(str, shape)), "--target", args.target]
    summary = run([args.convert, qdq_path, "-o", plans["qdq"]] + pin)
    run([args.convert, fp32_path, "-o", plans["fp16"]] + pin)
    row = {"model": name, "summary": summary.strip().splitlines()}
    session = ort.InferenceSession(qdq_path, providers=["CPUExecutionProvider"])
    got, ref, fp32 = [], [], []
    for i in range(args.held_out):
        x = np.random.default_rng(1000 + i).standard_normal(shape).astype(np.float32)
        xin, odir = os.path.join(work, f"held{i}.npy"), os.path.join(work, f"out{i}")
        np.save(xin, x)
        run([args.run, plans["qdq"], "--input", f"input={xin}", "--warmup", 0, "--iterations", 1,
             "--save-outputs", odir])
        got.append(np.load(os.path.join(odir, "output.npy")))
        ref.append(session.run(None, {"input": x})[0])
        with torch.no_grad():
            fp32.append(model(torch.from_numpy(x)).numpy())
    g, r, f = np.concatenate(got), np.concatenate(ref), np.concatenate(fp32)
    row["snr_vs_ort"] = round(snr_db(g, r), 2)
    row["top1_vs_ort"] = float(np.mean(g.reshape(len(g), -1).argmax(1) == r.reshape(len(r), -1).argmax(1)))
    row["ort_snr_fp32"] = round(snr_db(r, f), 2)
    row["snr_fp32"] = round(snr_db(g, f), 2)
    row.update(time_interleaved(args, plans))
    row["qdq_over_fp16"] = round(row["qdq_ms"] / row["fp16_ms"], 3)
    return row


def main():
    ap = base_parser(__doc__, "resnet18,mobilenet_v2", 16, "jetplan_qdq_")
    args = ap.parse_args()
    rows = []
    print(f"{'model':<16}{'SNR vs ORT':>11}{'top1 vs ORT':>12}{'ORT vs FP32':>12}{'vs FP32':>9}"
          f"{'qdq ms':>9}{'fp16 ms':>9}{'qdq/fp16':>9}")
    for name in args.models.split(","):
        try:
            row = check(args, name, os.path.join(args.workdir, name))
        except Exception as e:  # one model's failure is reported, the others still run
            row = {"model": name, "error": str(e)}
            print(f"{name:<16}  ERROR {e}", flush=True)
            rows.append(row)
            continue
        rows.append(row)
        print(f"{name:<16}{row['snr_vs_ort']:>11.1f}{row['top1_vs_ort']:>12.2f}{row['ort_snr_fp32']:>12.1f}"
              f"{row['snr_fp32']:>9.1f}{row['qdq_ms']:>9.3f}{row['fp16_ms']:>9.3f}{row['qdq_over_fp16']:>9.3f}",
              flush=True)
        for line in row["summary"][1:]:
            print("    " + line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"target": args.target, "rows": rows}, f, indent=1)
    sys.exit(1 if any("error" in r for r in rows) else 0)


if __name__ == "__main__":
    main()
