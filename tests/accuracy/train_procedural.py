#!/usr/bin/env python3
"""Trains a small classifier or a small detector on procedurally drawn images (fixed seeds, CPU,
torch) and writes what the INT8 accuracy test needs: the ONNX model (opset 17, a fixed batch),
a calibration set and a held-out set with its labels, each drawn from its own seed.

  classifier  32x32 RGB, 8 classes of shapes (disc, ring, square, frame, triangle, plus, X,
              striped disc) in random colours, sizes, positions and small rotations on noisy
              gradient backgrounds. A ResNet-like CNN: an RGB stem conv, residual blocks of
              3x3 conv + BatchNorm + ReLU at 16 and 32 channels, two stride-2 convs, global
              average pooling and a linear layer.
  detector    64x64 RGB with 1-4 objects of 3 classes (disc, square, triangle) on the same
              backgrounds. An anchor-free single-scale head in YOLO style on an 8x8 grid
              (stride 8): per cell an objectness logit, the box centre's offset in the cell
              (sigmoid) and its log width and height (in units of the stride), and the class
              logits. The box decode, NMS and mAP are numpy, in int8_accuracy.py.

The files (under --out):
  model.onnx                 input "images" [B, 3, H, W] float32 in [0, 1]; output "logits"
                             [B, 8] or "head" [B, 8, 8, 8]
  calib/calib_NNN.npy        calibration samples, each one batch [B, 3, H, W] (the model's
                             input shape) of images from the calibration seed
  heldout/images_NNN.npy     the held-out set in batches [B, 3, H, W]
  heldout/labels.npy         classifier: int64 [N]
  heldout/boxes.npy          detector: float32 [M, 6] = image index, class, x0, y0, x1, y1
  torch_outputs.npy          torch's own FP32 outputs on the held-out set (a sanity check of
                             the FP32 plan)
  train_summary.json         the training loss and accuracy, the seconds it took

Everything runs in float32 on the CPU with torch's deterministic algorithms and a fixed thread
count, so the same command writes the same files."""

import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SEEDS = {"train": 1, "calib": 2, "heldout": 3, "torch": 4}

# --------------------------------------------------------------------------------------------
# Procedural images
# --------------------------------------------------------------------------------------------

CLASSIFIER_SHAPES = ["disc", "ring", "square", "frame", "triangle", "plus", "x", "stripes"]
DETECTOR_SHAPES = ["disc", "square", "triangle"]


def shape_mask(kind, size, rng):
    """A boolean mask [size, size] of one shape of kind `kind` filling most of the square, drawn
    in coordinates rotated by a small random angle (within +-15 degrees, so that plus and X, or
    square and diamond, stay apart)."""
    c = (size - 1) / 2.0
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    x, y = xx - c, yy - c
    a = np.deg2rad(rng.uniform(-15, 15))
    x, y = x * math.cos(a) - y * math.sin(a), x * math.sin(a) + y * math.cos(a)
    r = size / 2.0
    rad = np.sqrt(x * x + y * y)
    cheb = np.maximum(np.abs(x), np.abs(y))
    if kind == "disc":
        return rad <= r * 0.95
    if kind == "ring":
        return np.abs(rad - r * 0.72) <= r * 0.22
    if kind == "square":
        return cheb <= r * 0.72
    if kind == "frame":
        return np.abs(cheb - r * 0.62) <= r * 0.16
    if kind == "triangle":  # equilateral, pointing up (y grows downwards)
        m = np.ones_like(x, bool)
        for ang in (90.0, 210.0, 330.0):
            t = np.deg2rad(ang)
            m &= (x * math.cos(t) - y * math.sin(t)) <= r * 0.48
        return m
    if kind == "plus":
        w = r * 0.28
        return ((np.abs(x) <= w) & (np.abs(y) <= r * 0.92)) | \
               ((np.abs(y) <= w) & (np.abs(x) <= r * 0.92))
    if kind == "x":
        u, v = (x + y) / math.sqrt(2), (x - y) / math.sqrt(2)
        w = r * 0.24
        return ((np.abs(u) <= w) & (np.abs(v) <= r * 0.95)) | \
               ((np.abs(v) <= w) & (np.abs(u) <= r * 0.95))
    if kind == "stripes":
        period = max(3.0, size / 4.0)
        return (rad <= r * 0.95) & (np.mod(y + r, period) < period / 2)
    raise ValueError(kind)


def background(h, w, rng):
    """[h, w, 3] float32: a random colour, a linear gradient and Gaussian noise."""
    base = rng.uniform(0.0, 1.0, 3).astype(np.float32)
    gy, gx = rng.uniform(-0.25, 0.25, 2)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    grad = (gy * (yy / h - 0.5) + gx * (xx / w - 0.5))[..., None]
    return base + grad


def contrasting_colour(bg_mean, rng):
    """A colour at least 0.35 away (Euclidean, RGB in [0, 1]) from the background's mean."""
    for _ in range(100):
        col = rng.uniform(0.0, 1.0, 3).astype(np.float32)
        if np.linalg.norm(col - bg_mean) >= 0.35:
            return col
    return 1.0 - bg_mean


def finish(img, rng, noise=0.06):
    img = img + rng.normal(0.0, noise, img.shape).astype(np.float32)
    return np.clip(img, 0.0, 1.0).transpose(2, 0, 1).copy()  # CHW


def classifier_images(n, seed, size=32):
    """n images [n, 3, size, size] float32 and labels [n] int64, balanced over the classes."""
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % len(CLASSIFIER_SHAPES)
    rng.shuffle(labels)
    images = np.empty((n, 3, size, size), np.float32)
    for i, lab in enumerate(labels):
        img = background(size, size, rng)
        s = int(rng.integers(14, 27))  # the shape's square
        m = shape_mask(CLASSIFIER_SHAPES[lab], s, rng)
        y0, x0 = rng.integers(0, size - s + 1, 2)
        col = contrasting_colour(img.mean((0, 1)), rng)
        view = img[y0:y0 + s, x0:x0 + s]
        view[m] = col
        images[i] = finish(img, rng)
    return images, labels.astype(np.int64)


def detector_images(n, seed, size=64, max_objects=4):
    """n images [n, 3, size, size] and their boxes [M, 6] float32 (image, class, x0, y0, x1, y1
    in pixels, the tight box of the drawn mask, x1 and y1 exclusive). Objects do not overlap and
    their centres fall in different cells of the 8x8 grid."""
    rng = np.random.default_rng(seed)
    images = np.empty((n, 3, size, size), np.float32)
    boxes = []
    for i in range(n):
        img = background(size, size, rng)
        bg_mean = img.mean((0, 1))
        want = int(rng.integers(1, max_objects + 1))
        placed, cells = [], set()
        tries = 0
        while len(placed) < want and tries < 50:
            tries += 1
            s = int(rng.integers(12, 31))
            y0, x0 = (int(v) for v in rng.integers(0, size - s + 1, 2))
            cell = (int((y0 + s / 2) // 8), int((x0 + s / 2) // 8))
            if cell in cells or any(x0 < bx1 + 2 and bx0 < x0 + s + 2 and
                                    y0 < by1 + 2 and by0 < y0 + s + 2
                                    for bx0, by0, bx1, by1 in placed):
                continue
            cls = int(rng.integers(0, len(DETECTOR_SHAPES)))
            m = shape_mask(DETECTOR_SHAPES[cls], s, rng)
            ys, xs = np.nonzero(m)
            img[y0:y0 + s, x0:x0 + s][m] = contrasting_colour(bg_mean, rng)
            bx0, by0, bx1, by1 = x0 + xs.min(), y0 + ys.min(), x0 + xs.max() + 1, y0 + ys.max() + 1
            placed.append((x0, y0, x0 + s, y0 + s))
            cells.add(cell)
            boxes.append((i, cls, bx0, by0, bx1, by1))
        images[i] = finish(img, rng)
    return images, np.array(boxes, np.float32).reshape(-1, 6)


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------

def conv_bn(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))


class Residual(nn.Module):
    """x + BN(conv(ReLU(BN(conv(x))))), then ReLU."""

    def __init__(self, c):
        super().__init__()
        self.a = conv_bn(c, c)
        self.b = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        return F.relu(x + self.b(self.a(x)))


class Classifier(nn.Module):
    def __init__(self, classes=len(CLASSIFIER_SHAPES)):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn(3, 16, 2),         # 16x16, the RGB stem (FP32: 3 input channels)
            Residual(16),              # 16x16
            conv_bn(16, 32, 2),        # 8x8
            Residual(32),              # 8x8
            conv_bn(32, 32))           # 8x8
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        return self.fc(self.features(x).mean((2, 3)))


class Detector(nn.Module):
    """Output [B, 5 + classes, 8, 8]: objectness, dx, dy, log w, log h, class logits."""

    def __init__(self, classes=len(DETECTOR_SHAPES)):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn(3, 16, 2),         # 32x32, the RGB stem (FP32: 3 input channels)
            conv_bn(16, 16, 2),        # 16x16
            Residual(16),              # 16x16
            conv_bn(16, 32, 2),        # 8x8
            Residual(32),              # 8x8
            conv_bn(32, 32))           # 8x8
        self.head = nn.Conv2d(32, 5 + classes, 1)

    def forward(self, x):
        return self.head(self.features(x))


STRIDE = 8


def detector_targets(boxes, n, grid):
    """Per-cell targets of a batch: obj [n, g, g], the box [n, 4, g, g] (centre offset in the
    cell, log size in strides), class [n, g, g] (-1 where no object)."""
    obj = np.zeros((n, grid, grid), np.float32)
    box = np.zeros((n, 4, grid, grid), np.float32)
    cls = np.full((n, grid, grid), -1, np.int64)
    for i, c, x0, y0, x1, y1 in boxes:
        cx, cy = (x0 + x1) / 2 / STRIDE, (y0 + y1) / 2 / STRIDE
        gx, gy = int(cx), int(cy)
        i = int(i)
        obj[i, gy, gx] = 1.0
        box[i, :, gy, gx] = (cx - gx, cy - gy, math.log((x1 - x0) / STRIDE),
                             math.log((y1 - y0) / STRIDE))
        cls[i, gy, gx] = int(c)
    return obj, box, cls


def detector_loss(out, obj, box, cls):
    pos = obj > 0
    l_obj = F.binary_cross_entropy_with_logits(out[:, 0], obj, reduction="sum") / out.shape[0]
    p = out.permute(0, 2, 3, 1)[pos]  # [P, 5 + classes]
    t = box.permute(0, 2, 3, 1)[pos]
    l_xy = F.binary_cross_entropy_with_logits(p[:, 1:3], t[:, 0:2], reduction="sum")
    l_wh = F.smooth_l1_loss(p[:, 3:5], t[:, 2:4], beta=0.1, reduction="sum")
    l_cls = F.cross_entropy(p[:, 5:], cls[pos], reduction="sum")
    return l_obj + (2.0 * l_xy + 5.0 * l_wh + l_cls) / out.shape[0]


# --------------------------------------------------------------------------------------------
# Training and export
# --------------------------------------------------------------------------------------------

CONFIG = {
    # train images, epochs, batch, peak learning rate, held-out, calibration batches
    "classifier": dict(train=4000, epochs=6, batch=64, lr=4e-3, heldout=1000, calib=4,
                       size=32),
    "detector": dict(train=3000, epochs=10, batch=32, lr=4e-3, heldout=300, calib=4,
                     size=64),
}
EXPORT_BATCH = 50


def train(model, loss_of_batch, n_train, cfg, log):
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=1e-4)
    steps = cfg["epochs"] * math.ceil(n_train / cfg["batch"])
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg["lr"], total_steps=steps,
                                                pct_start=0.2)
    gen = torch.Generator().manual_seed(SEEDS["torch"])
    model.train()
    for epoch in range(cfg["epochs"]):
        order = torch.randperm(n_train, generator=gen)
        total, count = 0.0, 0
        for s in range(0, n_train, cfg["batch"]):
            idx = order[s:s + cfg["batch"]]
            loss = loss_of_batch(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss) * len(idx)
            count += len(idx)
        log(f"epoch {epoch + 1}/{cfg['epochs']}: loss {total / count:.4f}")
    model.eval()
    return total / count


def export(model, size, path):
    x = torch.zeros(EXPORT_BATCH, 3, size, size)
    out = "logits" if isinstance(model, Classifier) else "head"
    kwargs = dict(opset_version=17, do_constant_folding=True, input_names=["images"],
                  output_names=[out])
    try:  # torch >= 2.9 exports with dynamo unless told otherwise
        torch.onnx.export(model, (x,), path, dynamo=False, **kwargs)
    except TypeError:  # older torch (Debian's) has no dynamo argument
        torch.onnx.export(model, (x,), path, **kwargs)


def write_batches(folder, stem, images):
    os.makedirs(folder, exist_ok=True)
    for b in range(0, len(images), EXPORT_BATCH):
        np.save(os.path.join(folder, f"{stem}_{b // EXPORT_BATCH:03d}.npy"),
                np.ascontiguousarray(images[b:b + EXPORT_BATCH]))


@torch.no_grad()
def predict(model, images):
    return torch.cat([model(torch.from_numpy(images[b:b + EXPORT_BATCH]))
                      for b in range(0, len(images), EXPORT_BATCH)]).numpy()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(CONFIG), required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (part of the result: keep it fixed)")
    a = ap.parse_args(argv)
    cfg = CONFIG[a.model]
    torch.set_num_threads(a.threads)
    torch.manual_seed(SEEDS["torch"])
    torch.use_deterministic_algorithms(True)
    os.makedirs(a.out, exist_ok=True)
    start = time.monotonic()

    def log(msg):
        print(f"[{a.model} {time.monotonic() - start:5.1f} s] {msg}", flush=True)

    n_calib = cfg["calib"] * EXPORT_BATCH
    summary = {"model": a.model, "config": cfg, "export_batch": EXPORT_BATCH}
    if a.model == "classifier":
        x_train, y_train = classifier_images(cfg["train"], SEEDS["train"], cfg["size"])
        x_calib, _ = classifier_images(n_calib, SEEDS["calib"], cfg["size"])
        x_held, y_held = classifier_images(cfg["heldout"], SEEDS["heldout"], cfg["size"])
        log(f"drew {len(x_train)} training, {n_calib} calibration, {len(x_held)} held-out "
            "images")
        model = Classifier()
        xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
        summary["final_loss"] = train(
            model, lambda idx: F.cross_entropy(model(xt[idx]), yt[idx]), len(xt), cfg, log)
        train_acc = float((predict(model, x_train).argmax(1) == y_train).mean())
        held_out = predict(model, x_held)
        held_acc = float((held_out.argmax(1) == y_held).mean())
        summary.update(train_accuracy=train_acc, heldout_accuracy=held_acc)
        log(f"torch FP32: train accuracy {train_acc:.4f}, held-out accuracy {held_acc:.4f}")
        os.makedirs(os.path.join(a.out, "heldout"), exist_ok=True)
        np.save(os.path.join(a.out, "heldout", "labels.npy"), y_held)
    else:
        x_train, b_train = detector_images(cfg["train"], SEEDS["train"], cfg["size"])
        x_calib, _ = detector_images(n_calib, SEEDS["calib"], cfg["size"])
        x_held, b_held = detector_images(cfg["heldout"], SEEDS["heldout"], cfg["size"])
        log(f"drew {len(x_train)} training ({len(b_train)} objects), {n_calib} calibration, "
            f"{len(x_held)} held-out images ({len(b_held)} objects)")
        grid = cfg["size"] // STRIDE
        obj, box, cls = (torch.from_numpy(t) for t in
                         detector_targets(b_train, len(x_train), grid))
        model = Detector()
        xt = torch.from_numpy(x_train)
        summary["final_loss"] = train(
            model, lambda idx: detector_loss(model(xt[idx]), obj[idx], box[idx], cls[idx]),
            len(xt), cfg, log)
        held_out = predict(model, x_held)
        os.makedirs(os.path.join(a.out, "heldout"), exist_ok=True)
        np.save(os.path.join(a.out, "heldout", "boxes.npy"), b_held)
    summary["train_seconds"] = time.monotonic() - start
    export(model, cfg["size"], os.path.join(a.out, "model.onnx"))
    write_batches(os.path.join(a.out, "calib"), "calib", x_calib)
    write_batches(os.path.join(a.out, "heldout"), "images", x_held)
    np.save(os.path.join(a.out, "torch_outputs.npy"), held_out)
    with open(os.path.join(a.out, "train_summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    log(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
