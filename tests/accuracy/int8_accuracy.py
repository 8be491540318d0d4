#!/usr/bin/env python3
"""INT8 accuracy evidence: trains a small model on procedurally drawn images
(train_procedural.py), converts it into an FP32 and an INT8 CPU plan, runs both on a held-out
set with jetplan-run and checks that INT8 keeps the model's accuracy.

  classifier  INT8 top-1 agrees with FP32 on >= 99% of the held-out images; the FP32 plan's
              own accuracy (against the labels) is >= 90%, else the comparison means little.
  detector    the box decode (YOLO-style grid, below), per-class NMS and mAP@0.5 (VOC
              all-point interpolation) in numpy: the INT8 plan's mAP is less than 1 point
              below the FP32 plan's; the FP32 plan's mAP is >= 0.85.

Both: the INT8 plan runs every eligible conv in INT8 (jetplan-convert's "INT8: N convs in
INT8" line: N is the number of 2-D, group-1 convs with constant weights and a multiple of 8
input channels that do not write a graph output, counted in the ONNX model), and the FP32 plan
matches torch's own outputs (so the baseline is the model that was trained).

Exit status 0 when every check passes, 1 otherwise (each failure says what and by how much).
`--self-check` checks the decode, NMS and mAP code alone against hand-computed cases."""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

MIN_AGREEMENT = 0.99          # classifier: INT8 top-1 == FP32 top-1
MIN_CLASSIFIER_ACCURACY = 0.90
MAX_MAP_DROP = 0.01           # detector: mAP FP32 - mAP INT8, as a fraction (1 point)
MIN_DETECTOR_MAP = 0.85
TORCH_ATOL = 1e-3             # FP32 plan against torch, after scaling by max(1, |torch|max)

TOOL_TIMEOUT_S = 240

# --------------------------------------------------------------------------------------------
# Detection: decode, NMS, mAP
# --------------------------------------------------------------------------------------------

STRIDE = 8          # train_procedural.STRIDE
SCORE_MIN = 0.01    # candidates below this score are dropped before NMS
NMS_IOU = 0.5
MAX_DETECTIONS = 50  # per image, after NMS
MATCH_IOU = 0.5     # a detection is a true positive at IoU >= 0.5


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def decode(head, image_size):
    """The detector's output [B, 5 + C, G, G] (objectness, dx, dy, log w, log h, class logits
    per cell) -> one float64 array [K, 6] per image: x0, y0, x1, y1, score, class, with the
    centre at (cell + sigmoid(d)) * STRIDE, the size exp(log size) * STRIDE, clipped to the
    image, and score = sigmoid(objectness) * softmax(class logits)[class] for every class
    scoring at least SCORE_MIN."""
    head = head.astype(np.float64)
    b, ch, g, _ = head.shape
    classes = ch - 5
    gy, gx = np.mgrid[0:g, 0:g]
    out = []
    for i in range(b):
        h = head[i]
        cx = (gx + sigmoid(h[1])) * STRIDE
        cy = (gy + sigmoid(h[2])) * STRIDE
        w, hh = np.exp(h[3]) * STRIDE, np.exp(h[4]) * STRIDE
        boxes = np.stack([cx - w / 2, cy - hh / 2, cx + w / 2, cy + hh / 2], -1).reshape(-1, 4)
        boxes = np.clip(boxes, 0.0, float(image_size))
        logits = h[5:].reshape(classes, -1).T  # [cells, C]
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        scores = sigmoid(h[0]).reshape(-1, 1) * p  # [cells, C]
        cell, cls = np.nonzero(scores >= SCORE_MIN)
        out.append(np.column_stack([boxes[cell], scores[cell, cls], cls]).reshape(-1, 6))
    return out


def iou(box, boxes):
    """IoU of one box [4] with boxes [K, 4] (x0, y0, x1, y1; continuous coordinates, the area
    of a box is (x1 - x0) * (y1 - y0))."""
    ix = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    iy = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    inter = ix * iy
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    union = area + areas - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def nms(dets):
    """Per-class greedy NMS of [K, 6] detections (IoU > NMS_IOU suppresses), at most
    MAX_DETECTIONS kept, best first. Ties in score keep the earlier detection (stable sort)."""
    keep = []
    for c in np.unique(dets[:, 5]):
        d = dets[dets[:, 5] == c]
        d = d[np.argsort(-d[:, 4], kind="stable")]
        while len(d):
            keep.append(d[0])
            d = d[1:][iou(d[0, :4], d[1:, :4]) <= NMS_IOU]
    if not keep:
        return np.zeros((0, 6))
    keep = np.array(keep)
    return keep[np.argsort(-keep[:, 4], kind="stable")][:MAX_DETECTIONS]


def voc_ap(recall, precision):
    """Area under the precision envelope, all points (PASCAL VOC 2010+ devkit)."""
    mrec = np.concatenate([[0.0], recall, [1.0]])
    mpre = np.concatenate([[0.0], precision, [0.0]])
    for i in range(len(mpre) - 2, -1, -1):
        mpre[i] = max(mpre[i], mpre[i + 1])
    i = np.nonzero(mrec[1:] != mrec[:-1])[0]
    return float(np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1]))


def mean_ap(detections, gt, classes):
    """mAP at IoU >= MATCH_IOU, VOC style: per class, the detections of all images in order of
    score (stable); each is a true positive when its best-overlapping ground-truth box of that
    class in its image reaches MATCH_IOU and was not matched before (else a false positive,
    duplicates included); AP by all-point interpolation; the mean over the classes that have
    ground truth. detections: one [K, 6] array per image (x0, y0, x1, y1, score, class);
    gt: [M, 6] (image, class, x0, y0, x1, y1). Returns (mAP, {class: AP})."""
    aps = {}
    for c in range(classes):
        g = gt[gt[:, 1] == c]
        if len(g) == 0:
            continue
        by_image = {int(i): g[g[:, 0] == i, 2:6] for i in np.unique(g[:, 0])}
        matched = {i: np.zeros(len(b), bool) for i, b in by_image.items()}
        cand = [(d[4], img, d[:4]) for img, ds in enumerate(detections) for d in ds
                if int(d[5]) == c]
        order = np.argsort(-np.array([s for s, _, _ in cand]), kind="stable")
        tp = np.zeros(len(cand))
        for rank, k in enumerate(order):
            _, img, box = cand[k]
            if img not in by_image:
                continue
            ov = iou(box, by_image[img])
            j = int(np.argmax(ov))
            if ov[j] >= MATCH_IOU and not matched[img][j]:
                matched[img][j] = True
                tp[rank] = 1.0
        ctp, cfp = np.cumsum(tp), np.cumsum(1.0 - tp)
        recall = ctp / len(g)
        precision = ctp / np.maximum(ctp + cfp, np.finfo(np.float64).eps)
        aps[c] = voc_ap(recall, precision)
    return (float(np.mean(list(aps.values()))) if aps else 0.0), aps


def detect(head, image_size):
    return [nms(d) for d in decode(head, image_size)]


# --------------------------------------------------------------------------------------------
# Self-check: the metric code against cases computed by hand
# --------------------------------------------------------------------------------------------

def self_check():
    failures = []

    def check(what, got, want, tol=1e-9):
        ok = abs(got - want) <= tol
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {got:.6f} (expected {want:.6f})")
        if not ok:
            failures.append(what)

    gt = np.array([[0, 0, 0, 0, 10, 10], [0, 0, 20, 20, 30, 30], [1, 1, 5, 5, 15, 25]], float)

    def det(*rows):
        return np.array(rows, float).reshape(-1, 6)

    perfect = [det([0, 0, 10, 10, .9, 0], [20, 20, 30, 30, .8, 0]), det([5, 5, 15, 25, .7, 1])]
    check("perfect detections: mAP", mean_ap(perfect, gt, 2)[0], 1.0)
    # Class 0: TP .9, FP .8 (no overlap), TP .7 -> recall .5 .5 1, precision 1 .5 2/3:
    # AP = .5 * 1 + .5 * 2/3. Class 1 missed entirely: AP 0. Class 2 has no ground truth.
    mixed = [det([0, 0, 10, 10, .9, 0], [40, 40, 50, 50, .8, 0], [20, 20, 30, 30, .7, 0]),
             det([40, 40, 50, 50, .6, 2])]
    m, aps = mean_ap(mixed, gt, 3)
    check("TP FP TP: AP of class 0", aps[0], 0.5 + 0.5 * 2 / 3)
    check("no detection of a class: its AP", aps[1], 0.0)
    check("a class without ground truth is left out of the mean", m, (0.5 + 0.5 * 2 / 3) / 2)
    # A duplicate of a matched box is a false positive: TP .9, dup .8, TP .7 on class 0.
    dup = [det([0, 0, 10, 10, .9, 0], [0, 0, 10, 10, .8, 0], [20, 20, 30, 30, .7, 0])]
    check("duplicate detection: AP", mean_ap(dup, gt[:2], 1)[0], 0.5 + 0.5 * 2 / 3)
    # IoU exactly 0.5 matches ([0,0,10,5] against [0,0,10,10]); 0.49 does not.
    check("IoU 0.5 is a match", mean_ap([det([0, 0, 10, 5, .9, 0])], gt[:1], 1)[0], 1.0)
    check("IoU 0.49 is not", mean_ap([det([0, 0, 10, 4.9, .9, 0])], gt[:1], 1)[0], 0.0)
    # The wrong image: a box in image 1 does not match image 0's ground truth.
    check("a detection in another image", mean_ap([det(), det([0, 0, 10, 10, .9, 0])],
                                                  gt[:1], 1)[0], 0.0)
    # FP first, then the TP: precision 1/2 at recall 1 -> AP 0.5.
    check("FP ranked above the TP", mean_ap([det([50, 50, 60, 60, .9, 0],
                                                 [0, 0, 10, 10, .5, 0])], gt[:1], 1)[0], 0.5)
    # NMS: same class suppressed above IoU 0.5, another class kept, lower IoU kept.
    kept = nms(det([0, 0, 10, 10, .9, 0], [0, 0, 10, 8, .8, 0], [0, 0, 10, 10, .7, 1],
                   [0, 0, 10, 4, .6, 0]))
    check("NMS keeps 3 of 4", len(kept), 3)
    check("NMS keeps the best first", kept[0, 4], 0.9)
    # Decode: the training targets of a box (train_procedural.detector_targets's encoding)
    # turned into logits decode to the box.
    x0, y0, x1, y1 = 13.0, 22.0, 37.0, 31.0
    cx, cy = (x0 + x1) / 2 / STRIDE, (y0 + y1) / 2 / STRIDE
    gx, gy = int(cx), int(cy)
    head = np.full((1, 8, 8, 8), -20.0)
    logit = lambda p: np.log(p / (1 - p))
    head[0, :, gy, gx] = [20.0, logit(cx - gx), logit(cy - gy), np.log((x1 - x0) / STRIDE),
                          np.log((y1 - y0) / STRIDE), -5.0, 5.0, -5.0]
    d = detect(head, 64)[0]
    check("decode: one detection", len(d), 1)
    check("decode: the box", float(np.abs(d[0, :4] - [x0, y0, x1, y1]).max()), 0.0, 1e-6)
    check("decode: the class", d[0, 5], 1)
    print(f"self-check: {len(failures)} failure(s)")
    return 1 if failures else 0


# --------------------------------------------------------------------------------------------
# The tools
# --------------------------------------------------------------------------------------------

def run_tool(argv):
    start = time.monotonic()
    p = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=TOOL_TIMEOUT_S)
    if p.returncode != 0:
        raise RuntimeError(f"{os.path.basename(str(argv[0]))} failed (exit {p.returncode}): "
                           f"{' '.join(map(str, argv))}\n{p.stderr.strip()}")
    return p.stdout + p.stderr, time.monotonic() - start


def eligible_int8_convs(model_path):
    """(required, candidates): the convs of the model the INT8 kernels take (2-D with constant
    weights, depthwise or group 1: the RGB stem too, its input padded to 8 channels), and of
    those the ones the INT8 pass must take (docs/int8.md): the ones not writing a graph output
    (a plan may still run such a conv in INT8 where a layout step follows it, as the detector's
    head)."""
    import onnx
    g = onnx.load(model_path).graph
    weights = {t.name: list(t.dims) for t in g.initializer}
    outputs = {o.name for o in g.output}
    required = candidates = 0
    for node in g.node:
        if node.op_type != "Conv" or node.input[1] not in weights:
            continue
        dims = weights[node.input[1]]
        group = next((a.i for a in node.attribute if a.name == "group"), 1)
        depthwise = group == dims[0] and dims[1] == 1
        if len(dims) == 4 and (group == 1 or depthwise):
            candidates += 1
            required += node.output[0] not in outputs
    return required, candidates


def run_plan(tools, plan, batches, out_root, workers):
    """Runs `plan` on every held-out batch; the outputs concatenated (the only output)."""
    def one(k):
        out = os.path.join(out_root, f"{k:03d}")
        run_tool([tools.run, plan, "--input", f"images={batches[k]}", "--warmup", "0",
                  "--iterations", "1", "--save-outputs", out])
        (name,) = os.listdir(out)
        return np.load(os.path.join(out, name))
    with ThreadPoolExecutor(workers) as pool:
        return np.concatenate(list(pool.map(one, range(len(batches)))))


# --------------------------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["classifier", "detector"])
    ap.add_argument("--convert", help="path of jetplan-convert")
    ap.add_argument("--run", help="path of jetplan-run")
    ap.add_argument("--workdir", help="scratch directory (emptied first)")
    ap.add_argument("--calib-method", default=None,
                    help="jetplan-convert --calib-method (default: the converter's)")
    ap.add_argument("--jobs", type=int, default=2, help="jetplan-run processes at once")
    ap.add_argument("--self-check", action="store_true")
    a = ap.parse_args()
    if a.self_check:
        return self_check()
    if not (a.model and a.convert and a.run and a.workdir):
        ap.error("--model, --convert, --run and --workdir are required")
    start = time.monotonic()
    if self_check() != 0:
        print("FAIL: the metric code disagrees with its hand-computed cases")
        return 1
    work = os.path.abspath(a.workdir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # 1. Train and export (in this process: one torch import).
    sys.path.insert(0, HERE)
    import train_procedural
    data = os.path.join(work, "data")
    if train_procedural.main(["--model", a.model, "--out", data]) != 0:
        print("FAIL: training failed")
        return 1
    t_train = time.monotonic() - start
    model = os.path.join(data, "model.onnx")
    with open(os.path.join(data, "train_summary.json")) as f:
        summary = json.load(f)

    # 2. Convert: FP32 and INT8 CPU plans.
    fp32, int8 = os.path.join(work, "fp32.jplan"), os.path.join(work, "int8.jplan")
    int8_cmd = [a.convert, model, "-o", int8, "--target", "cpu", "--precision", "int8",
                "--calib", os.path.join(data, "calib")]
    if a.calib_method:
        int8_cmd += ["--calib-method", a.calib_method]
    with ThreadPoolExecutor(2) as pool:
        f_fp32 = pool.submit(run_tool, [a.convert, model, "-o", fp32, "--target", "cpu"])
        f_int8 = pool.submit(run_tool, int8_cmd)
        _, t_fp32 = f_fp32.result()
        int8_log, t_int8 = f_int8.result()
    print(f"converted: FP32 in {t_fp32:.1f} s; INT8 in {t_int8:.1f} s:")
    print("  " + int8_log.strip().replace("\n", "\n  "))
    problems = []
    m = re.search(r"INT8: (\d+) convs in INT8", int8_log)
    want_int8, candidates = eligible_int8_convs(model)
    if not m:
        problems.append("jetplan-convert printed no 'INT8: N convs in INT8' line")
    elif int(m.group(1)) < want_int8:
        problems.append(f"only {m.group(1)} convs run in INT8; the model has {want_int8} "
                        "that must")
    n_int8 = int(m.group(1)) if m else 0

    # 3. Run both plans on the held-out set.
    held = os.path.join(data, "heldout")
    batches = sorted(os.path.join(held, f) for f in os.listdir(held) if f.startswith("images_"))
    t0 = time.monotonic()
    out_fp32 = run_plan(a, fp32, batches, os.path.join(work, "out_fp32"), a.jobs)
    out_int8 = run_plan(a, int8, batches, os.path.join(work, "out_int8"), a.jobs)
    t_run = time.monotonic() - t0
    torch_out = np.load(os.path.join(data, "torch_outputs.npy"))
    n = len(out_fp32)

    # 4. The FP32 plan is the trained model.
    err = float(np.abs(out_fp32 - torch_out).max())
    scale = max(1.0, float(np.abs(torch_out).max()))
    if not err <= TORCH_ATOL * scale:
        problems.append(f"the FP32 plan differs from torch by {err:.3g} (max |torch| "
                        f"{scale:.3g}): the baseline is not the trained model")

    # 5. The accuracy checks.
    if a.model == "classifier":
        labels = np.load(os.path.join(held, "labels.npy"))
        p32, p8 = out_fp32.argmax(1), out_int8.argmax(1)
        acc32, acc8 = float((p32 == labels).mean()), float((p8 == labels).mean())
        agree = float((p32 == p8).mean())
        line = (f"classifier: {n} held-out images, FP32 top-1 {acc32:.4f}, INT8 top-1 "
                f"{acc8:.4f}, INT8/FP32 top-1 agreement {agree:.4f} "
                f"({int((p32 != p8).sum())} differ); {n_int8} of {candidates} convs in INT8")
        if acc32 < MIN_CLASSIFIER_ACCURACY:
            problems.append(f"the classifier is poorly trained: FP32 top-1 {acc32:.4f} < "
                            f"{MIN_CLASSIFIER_ACCURACY}")
        if agree < MIN_AGREEMENT:
            problems.append(f"INT8 top-1 agrees with FP32 on {agree:.4f} of the held-out "
                            f"images < {MIN_AGREEMENT}")
    else:
        gt = np.load(os.path.join(held, "boxes.npy"))
        size = summary["config"]["size"]
        classes = out_fp32.shape[1] - 5
        det32, det8 = detect(out_fp32, size), detect(out_int8, size)
        map32, ap32 = mean_ap(det32, gt, classes)
        map8, ap8 = mean_ap(det8, gt, classes)
        # Also INT8 against FP32's own confident detections (score >= 0.3) as ground truth.
        ref = np.concatenate([np.column_stack([np.full(len(d), i), d[:, 5], d[:, :4]])
                              [d[:, 4] >= 0.3] for i, d in enumerate(det32)]).reshape(-1, 6)
        map_vs_fp32, _ = mean_ap(det8, ref, classes)
        drop = map32 - map8
        line = (f"detector: {n} held-out images, {len(gt)} objects, mAP@0.5 (VOC all-point) "
                f"FP32 {map32:.4f}, INT8 {map8:.4f}, drop {100 * drop:.2f} points "
                f"(per class FP32 {', '.join(f'{v:.3f}' for v in ap32.values())}; INT8 "
                f"{', '.join(f'{v:.3f}' for v in ap8.values())}); INT8 mAP against FP32's "
                f"detections {map_vs_fp32:.4f}; {n_int8} of {candidates} convs in INT8")
        if map32 < MIN_DETECTOR_MAP:
            problems.append(f"the detector is poorly trained: FP32 mAP {map32:.4f} < "
                            f"{MIN_DETECTOR_MAP}")
        if not drop < MAX_MAP_DROP:
            problems.append(f"INT8 mAP is {100 * drop:.2f} points below FP32 (>= "
                            f"{100 * MAX_MAP_DROP:.0f})")
    print(line)
    print(f"times: training and export {t_train:.1f} s, conversion {max(t_fp32, t_int8):.1f} s, "
          f"{2 * len(batches)} runs {t_run:.1f} s, total {time.monotonic() - start:.1f} s")
    for p in problems:
        print("FAIL: " + p)
    print(f"int8 accuracy {a.model}: {'FAIL' if problems else 'PASS'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
