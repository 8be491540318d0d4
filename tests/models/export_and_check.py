#!/usr/bin/env python3
"""Real architectures through jetplan: each model is built in PyTorch with random weights (eval
mode, BatchNorm statistics randomized so that folding them matters), exported with
torch.onnx.export (constant folding on, batch dim symbolic so the shape arithmetic an exporter
writes is in the graph), converted with jetplan-convert (--shape pins the batch to 1), run with
jetplan-run on a fixed random input saved as .npy, and compared with PyTorch's output.

Error measures per model: max |jetplan - torch| and that divided by max |torch| (the output's
scale); the model passes when the relative error is within its tolerance (float32 throughout:
about 1e-4, the sums of a deep network in another order; see TOLERANCE). One table line per
model: PASS, FAIL (with why) or UNSUPPORTED (the converter's reason, which names every node it
refuses). Exit status 1 when a model of --require (default: every model run) is not PASS.

    /usr/bin/python3 tests/models/export_and_check.py \\
        --convert build/converter/jetplan-convert --run build/runtime/tools/jetplan-run \\
        [--models fast|all|NAME,...] [--require NAME,...|all|none] [--workdir DIR] \\
        [--target h100 --batch 8] [--exporter dynamo] [--fixtures DIR] [--half]

--models zoo runs the architectures of ZOO, which nobody tuned jetplan for (not in "all"); --half
converts each model stored in float16 (weights, input and output, as after .half()).

--exporter dynamo exports with torch.export (torch >= 2.9's default exporter, opset 18 to 20 and
up); --fixtures DIR checks models exported so before, elsewhere (tests/models/fixtures: exported
on a machine with torch 2.11, for Debian's torch 1.13, which has no such exporter).

With --target naming a GPU (targets/*.json) the plan is FP16 on the GPU: the tolerance is
GPU_TOLERANCE (FP16 storage with FP32 accumulation: about 1e-2 of the output's scale).

Run with /usr/bin/python3 (Debian's torch, torchvision, onnx and numpy).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn
import torchvision

TOOL_TIMEOUT_S = 900

# Relative error (max abs error / max |reference|) each model must stay within. float32 sums in
# another order than PyTorch's drift by ~1e-7 per accumulation; deep stacks of convolutions and
# the attention of ViT (softmax over 197 tokens, 12 layers) get to a few 1e-5.
DEFAULT_TOLERANCE = 1e-4
TOLERANCE = {}
# FP16 plans: every activation and weight rounded to 11 significant bits (2^-11 = 4.9e-4
# relative), through 50+ layers; FP32 accumulation inside each layer.
GPU_TOLERANCE = 1e-2


class UNetSmall(nn.Module):
    """A small U-Net: Conv/BN/ReLU encoder with MaxPool, a decoder with one ConvTranspose and one
    bilinear Upsample step, skip connections joined by Concat, a 1x1 classifier."""

    def __init__(self, classes=3):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(
                nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

        self.enc1, self.enc2, self.mid = block(3, 16), block(16, 32), block(32, 64)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.dec2 = block(64, 32)
        self.up1 = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                                 nn.Conv2d(32, 16, 1))
        self.dec1 = block(32, 16)
        self.head = nn.Conv2d(16, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        m = self.mid(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.head(d1)


class SequenceModel(nn.Module):
    """A sequence tagger: a 2-layer bidirectional LSTM, a GRU on its outputs, a Linear per step."""

    def __init__(self, features=16, classes=5):
        super().__init__()
        self.lstm = nn.LSTM(features, 32, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(64, 24, batch_first=True)
        self.fc = nn.Linear(24, classes)

    def forward(self, x):
        y, _ = self.lstm(x)
        y, _ = self.gru(y)
        return self.fc(y)


class SpeechTiny(nn.Module):
    """A speech-encoder front end: 1-D convs over [N, features, frames], a GroupNorm with one
    group per channel (exported as InstanceNormalization), GELU, a strided conv, a Linear per
    frame."""

    def __init__(self, features=40, width=64, classes=12):
        super().__init__()
        self.conv1 = nn.Conv1d(features, width, 5, padding=2)
        self.norm = nn.GroupNorm(width, width)
        self.conv2 = nn.Conv1d(width, width, 3, stride=2, padding=1)
        self.fc = nn.Linear(width, classes)

    def forward(self, x):
        y = nn.functional.gelu(self.norm(self.conv1(x)))
        y = torch.relu(self.conv2(y))
        return self.fc(y.transpose(1, 2))


def vit_tiny():
    """torchvision's VisionTransformer at toy size: 32x32 images, 8x8 patches, 2 layers of 4
    heads of 16 (its attention is nn.MultiheadAttention, scaled_dot_product_attention inside)."""
    return torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2,
                                                num_heads=4, hidden_dim=64, mlp_dim=128,
                                                num_classes=10)


def tv(name):
    return lambda: getattr(torchvision.models, name)(weights=None)


# name -> (constructor, input shape, opset)
MODELS = {
    "resnet18": (tv("resnet18"), (1, 3, 224, 224), 13),
    "resnet50": (tv("resnet50"), (1, 3, 224, 224), 13),
    "mobilenet_v2": (tv("mobilenet_v2"), (1, 3, 224, 224), 13),
    "mobilenet_v3_small": (tv("mobilenet_v3_small"), (1, 3, 224, 224), 17),
    "efficientnet_b0": (tv("efficientnet_b0"), (1, 3, 224, 224), 13),
    "convnext_tiny": (tv("convnext_tiny"), (1, 3, 224, 224), 17),
    "regnet_y_400mf": (tv("regnet_y_400mf"), (1, 3, 224, 224), 13),
    "squeezenet1_1": (tv("squeezenet1_1"), (1, 3, 224, 224), 13),
    "densenet121": (tv("densenet121"), (1, 3, 224, 224), 13),
    "vit_b_16": (tv("vit_b_16"), (1, 3, 224, 224), 17),
    "unet_small": (UNetSmall, (1, 3, 64, 64), 13),
    "lstm_gru": (SequenceModel, (1, 20, 16), 13),
    "speech_tiny": (SpeechTiny, (1, 40, 50), 17),
    "vit_tiny": (vit_tiny, (1, 3, 32, 32), 17),
}
FAST = ["resnet18", "mobilenet_v2", "squeezenet1_1", "unet_small", "lstm_gru"]


class OutKey(nn.Module):
    """torchvision's segmentation models return a dict: its 'out' entry."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def tv_kw(name, **kw):
    return lambda: getattr(torchvision.models, name)(weights=None, **kw)


def seg(name):
    return lambda: OutKey(getattr(torchvision.models.segmentation, name)(
        weights=None, weights_backbone=None, aux_loss=False))


def video(name):
    return lambda: getattr(torchvision.models.video, name)(weights=None)


class AnchorFreeTiny(nn.Module):
    """A YOLOv8-style anchor-free detector: SiLU conv backbone, two scales, a box branch of 4 x 16
    distribution bins and a class branch per scale, their outputs flattened and joined over the
    scales, the distribution focal loss decode (softmax over the bins, a fixed 1x1 conv of
    0..15), boxes from the anchor points and strides, Sigmoid class scores: [N, 4 + classes, A]."""

    def __init__(self, classes=6, width=16, bins=16):
        super().__init__()

        def conv(cin, cout, stride=1):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
                                 nn.BatchNorm2d(cout), nn.SiLU())

        self.bins, self.classes = bins, classes
        self.stem = nn.Sequential(conv(3, width, 2), conv(width, width * 2, 2))
        self.p3 = conv(width * 2, width * 2, 2)
        self.p4 = conv(width * 2, width * 4, 2)
        self.box = nn.ModuleList(nn.Sequential(conv(c, width), nn.Conv2d(width, 4 * bins, 1))
                                 for c in (width * 2, width * 4))
        self.cls = nn.ModuleList(nn.Sequential(conv(c, width), nn.Conv2d(width, classes, 1))
                                 for c in (width * 2, width * 4))
        self.dfl = nn.Conv2d(bins, 1, 1, bias=False)
        self.dfl.weight.data[:] = torch.arange(bins, dtype=torch.float32).view(1, bins, 1, 1)
        self.dfl.weight.requires_grad_(False)
        self.strides = (8, 16)

    def forward(self, x):
        p3 = self.p3(self.stem(x))
        p4 = self.p4(p3)
        n = x.shape[0]
        outs, anchors, strides = [], [], []
        for i, f in enumerate((p3, p4)):
            h, w = f.shape[2], f.shape[3]
            outs.append(torch.cat([self.box[i](f), self.cls[i](f)], 1).view(n, 4 * self.bins + self.classes, -1))
            sy, sx = torch.meshgrid(torch.arange(h) + 0.5, torch.arange(w) + 0.5, indexing="ij")
            anchors.append(torch.stack((sx, sy), -1).view(-1, 2))
            strides.append(torch.full((h * w, 1), float(self.strides[i])))
        y = torch.cat(outs, 2)
        box, cls = y.split((4 * self.bins, self.classes), 1)
        a = box.shape[2]
        dist = self.dfl(box.view(n, 4, self.bins, a).transpose(2, 1).softmax(1)).view(n, 4, a)
        anchor = torch.cat(anchors).transpose(0, 1).unsqueeze(0)
        stride = torch.cat(strides).transpose(0, 1).unsqueeze(0)
        lt, rb = dist.chunk(2, 1)
        x1y1, x2y2 = anchor - lt, anchor + rb
        dbox = torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * stride
        return torch.cat((dbox, cls.sigmoid()), 1)


class DetrTiny(nn.Module):
    """A detection transformer at toy size: a ResNet-18 trunk, a 1x1 projection, sine-free
    learned positions, nn.Transformer's encoder and decoder over 10 learned queries, class and
    box heads (sigmoid boxes), the two concatenated per query."""

    def __init__(self, d=64, queries=10, classes=5):
        super().__init__()
        r = torchvision.models.resnet18(weights=None)
        self.trunk = nn.Sequential(*list(r.children())[:-2])
        self.proj = nn.Conv2d(512, d, 1)
        self.pos = nn.Parameter(torch.randn(1, 49, d) * 0.1)
        self.queries = nn.Parameter(torch.randn(1, queries, d) * 0.1)
        self.transformer = nn.Transformer(d, 4, 2, 2, 128, batch_first=True)
        self.cls = nn.Linear(d, classes + 1)
        self.box = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))

    def forward(self, x):
        f = self.proj(self.trunk(x)).flatten(2).transpose(1, 2) + self.pos
        h = self.transformer(f, self.queries.expand(x.shape[0], -1, -1))
        return torch.cat([self.cls(h), self.box(h).sigmoid()], dim=-1)


class CrnnOcr(nn.Module):
    """A text-line recognizer (CRNN): conv and pool stages down to a height of 1, a 2-layer
    bidirectional LSTM over the width, per-column log-softmax over the characters (CTC's input)."""

    def __init__(self, chars=37):
        super().__init__()
        def block(i, o, pool):
            return [nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(), nn.MaxPool2d(pool)]
        self.conv = nn.Sequential(*block(1, 32, 2), *block(32, 64, 2), *block(64, 128, (2, 1)),
                                  *block(128, 128, (4, 1)))
        self.rnn = nn.LSTM(128, 64, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(128, chars)

    def forward(self, x):
        f = self.conv(x).squeeze(2).transpose(1, 2)  # [N, W/4, 128]
        y, _ = self.rnn(f)
        return self.fc(y).log_softmax(-1)


# A zoo of architectures nobody tuned jetplan for (--models zoo; not in "all", which CI runs):
# classifiers of every family torchvision has, video (3-D convs), segmentation heads, a detection
# transformer, a YOLOv8-style anchor-free detector and an OCR text-line recognizer.
ZOO = {
    "shufflenet_v2_x1_0": (tv("shufflenet_v2_x1_0"), (1, 3, 224, 224), 17),
    "mnasnet1_0": (tv("mnasnet1_0"), (1, 3, 224, 224), 17),
    "googlenet": (tv_kw("googlenet", aux_logits=False, init_weights=True), (1, 3, 224, 224), 17),
    "inception_v3": (tv_kw("inception_v3", aux_logits=False, init_weights=False), (1, 3, 299, 299), 17),
    "resnext50_32x4d": (tv("resnext50_32x4d"), (1, 3, 224, 224), 17),
    "wide_resnet50_2": (tv("wide_resnet50_2"), (1, 3, 224, 224), 17),
    "efficientnet_v2_s": (tv("efficientnet_v2_s"), (1, 3, 224, 224), 17),
    "regnet_x_400mf": (tv("regnet_x_400mf"), (1, 3, 224, 224), 17),
    "swin_t": (tv("swin_t"), (1, 3, 224, 224), 17),
    "vit_b_32": (tv("vit_b_32"), (1, 3, 224, 224), 17),
    "convnext_small": (tv("convnext_small"), (1, 3, 224, 224), 17),
    "mobilenet_v3_large": (tv("mobilenet_v3_large"), (1, 3, 224, 224), 17),
    "alexnet": (tv("alexnet"), (1, 3, 224, 224), 17),
    "vgg11_bn": (tv("vgg11_bn"), (1, 3, 224, 224), 17),
    "r3d_18": (video("r3d_18"), (1, 3, 16, 112, 112), 17),
    "mc3_18": (video("mc3_18"), (1, 3, 16, 112, 112), 17),
    "r2plus1d_18": (video("r2plus1d_18"), (1, 3, 16, 112, 112), 17),
    "deeplabv3_mobilenet_v3_large": (seg("deeplabv3_mobilenet_v3_large"), (1, 3, 320, 320), 17),
    "lraspp_mobilenet_v3_large": (lambda: OutKey(torchvision.models.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None)), (1, 3, 320, 320), 17),
    "fcn_resnet50": (seg("fcn_resnet50"), (1, 3, 320, 320), 17),
    "detr_tiny": (DetrTiny, (1, 3, 224, 224), 17),
    "anchor_free_tiny": (AnchorFreeTiny, (2, 3, 128, 160), 17),
    "crnn_ocr": (CrnnOcr, (1, 1, 32, 128), 17),
}
# float16 models (--half): every float32 weight rounded to 11 significant bits, the output too.
HALF_TOLERANCE = 1e-2


def half_model(src, dst):
    """The float32 ONNX model at src stored in float16, as onnxconverter-common's float16
    conversion writes it: initializers, tensor attributes, declared types and Cast targets."""
    m = onnx.load(src)
    F, H = onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16

    def tensor(t):
        if t.data_type == F:
            t.CopyFrom(numpy_helper.from_array(
                numpy_helper.to_array(t).astype(np.float16), t.name))

    def walk(g):
        for t in g.initializer:
            tensor(t)
        for v in list(g.input) + list(g.output) + list(g.value_info):
            if v.type.tensor_type.elem_type == F:
                v.type.tensor_type.elem_type = H
        for n in g.node:
            for a in n.attribute:
                if a.name == "to" and n.op_type == "Cast" and a.i == F:
                    a.i = H
                if a.HasField("t"):
                    tensor(a.t)
                if a.HasField("g"):
                    walk(a.g)

    walk(m.graph)
    onnx.save(m, dst)


def build(name, batch=None):
    ctor, shape, opset = {**MODELS, **ZOO}[name]
    if batch is not None:
        shape = (batch,) + tuple(shape[1:])
    torch.manual_seed(0)
    model = randomize(ctor())
    x = torch.from_numpy(np.random.default_rng(1).standard_normal(shape).astype(np.float32))
    return model, x, opset


def randomize(model):
    """Random BatchNorm statistics, no all-zero parameter, eval mode (also used by
    tests/perf/perf_models.py)."""
    # Random BatchNorm statistics and affine parameters: the defaults (mean 0, var 1, weight 1,
    # bias 0) would make BatchNorm folding a no-op.
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    # Parameters a constructor zeroes (ViT's classifier head, class token, biases) would make
    # the output constant and the comparison empty.
    with torch.no_grad():
        for p in model.parameters():
            if not torch.any(p != 0):
                p.normal_(0.0, 0.02)
    return model.eval()


def export(model, x, opset, path, exporter="legacy"):
    """legacy: the TorchScript exporter at `opset` (the only one Debian's torch has). dynamo:
    what torch.onnx.export does by default since torch 2.9 (torch.export, the exporter's own
    opset: 18 to 20 and up), as a new user calls it, with the weights inside the file."""
    if exporter == "dynamo":
        torch.onnx.export(model, (x,), path, dynamo=True, input_names=["input"],
                          output_names=["output"], external_data=False)
        onnx.checker.check_model(onnx.load(path))
        return
    kwargs = dict(opset_version=opset, do_constant_folding=True, input_names=["input"],
                  output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    try:  # torch >= 2.9 exports with dynamo (opset 18+) unless told otherwise
        torch.onnx.export(model, (x,), path, dynamo=False, **kwargs)
    except TypeError:  # older torch (Debian's) has no dynamo argument
        torch.onnx.export(model, (x,), path, **kwargs)
    onnx.checker.check_model(onnx.load(path))


def last_line(text):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "(no message)"


def run_tool(argv):
    start = time.monotonic()
    try:
        p = subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                           timeout=TOOL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {TOOL_TIMEOUT_S} s", time.monotonic() - start
    return p.returncode, p.stderr, time.monotonic() - start


def check_model(name, args):
    """Returns a dict: status, why, abs_err, rel_err, tol, times."""
    gpu = args.target != "cpu"
    row = {"name": name, "status": "FAIL", "why": "", "abs": None, "rel": None,
           "tol": (GPU_TOLERANCE if gpu else HALF_TOLERANCE if args.half
                   else TOLERANCE.get(name, DEFAULT_TOLERANCE)), "ops": "",
           "t_conv": 0.0, "t_run": 0.0}
    work = os.path.join(args.workdir, name)
    os.makedirs(work, exist_ok=True)
    onnx_path, plan = os.path.join(work, "model.onnx"), os.path.join(work, "model.jplan")
    in_npy, out_dir = os.path.join(work, "input.npy"), os.path.join(work, "out")
    ref_npy = os.path.join(work, "ref.npy")
    if args.fixtures:  # exported elsewhere (another torch): the model, input and torch's output
        src = os.path.join(args.fixtures, name)
        onnx_path, in_npy = os.path.join(src, "model.onnx"), os.path.join(src, "input.npy")
        x, ref = np.load(in_npy), np.load(os.path.join(src, "ref.npy"))
    else:
        try:
            model, x, opset = build(name, args.batch)
            with torch.no_grad():
                ref = model(x).numpy()
            export(model, x, opset, onnx_path, args.exporter)
            np.save(in_npy, x.numpy())
            np.save(ref_npy, ref)
        except Exception as e:  # an export failure is a finding, not a crash of the run
            row["why"] = f"export: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            return row
    if args.half:
        half_path, half_npy = os.path.join(work, "model_fp16.onnx"), os.path.join(work, "input_fp16.npy")
        half_model(onnx_path, half_path)
        np.save(half_npy, np.load(in_npy).astype(np.float16))
        onnx_path, in_npy = half_path, half_npy
    ops = sorted({n.op_type for n in onnx.load(onnx_path, load_external_data=False).graph.node})
    row["ops"] = ",".join(ops)

    shape = "x".join(str(d) for d in x.shape)
    rc, err, row["t_conv"] = run_tool([args.convert, onnx_path, "-o", plan,
                                       "--shape", f"input:{shape}", "--target", args.target])
    if rc != 0:
        msg = last_line(err).replace("jetplan-convert: error: ", "").replace(onnx_path + ": ", "")
        if rc is None or rc < 0:
            row["why"] = f"jetplan-convert: {msg if rc is None else f'killed by signal {-rc}'}"
        elif re.search(r"unsupported (node|graph)|no CUDA kernel", msg):
            row["status"], row["why"] = "UNSUPPORTED", msg
        else:
            row["why"] = f"jetplan-convert: {msg}"
        return row
    rc, err, row["t_run"] = run_tool([args.run, plan, "--input", f"input={in_npy}", "--warmup",
                                      "0", "--iterations", "1", "--save-outputs", out_dir])
    if rc != 0:
        row["why"] = "jetplan-run: " + (err if rc is None else
                                        f"killed by signal {-rc}" if rc < 0 else last_line(err))
        return row
    got_path = os.path.join(out_dir, "output.npy")
    if not os.path.exists(got_path):
        row["why"] = "jetplan-run wrote no output.npy"
        return row
    got = np.load(got_path)
    if got.shape != ref.shape:
        row["why"] = f"output shape {list(got.shape)}, torch gives {list(ref.shape)}"
        return row
    if not np.all(np.isfinite(got)):
        row["why"] = f"{int((~np.isfinite(got)).sum())} non-finite output elements"
        return row
    scale = float(np.max(np.abs(ref)))
    if scale == 0.0 or float(np.std(ref)) <= 1e-6 * scale:
        row["why"] = "torch's output is constant: the comparison would prove nothing"
        return row
    diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    row["abs"], row["rel"] = float(diff.max()), float(diff.max()) / scale
    if row["rel"] <= row["tol"]:
        row["status"] = "PASS"
    else:
        i = np.unravel_index(int(np.argmax(diff)), diff.shape)
        row["why"] = (f"relative error {row['rel']:.2e} > {row['tol']:.0e} (worst at {i}: "
                      f"{got[i]!r} vs {ref[i]!r})")
    return row


def fmt(v):
    return "-" if v is None else f"{v:.2e}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--convert", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--models", default="fast", help="fast, all, zoo, or a comma-separated list")
    ap.add_argument("--require", default="all",
                    help="models that must PASS (comma-separated), all (default) or none")
    ap.add_argument("--workdir", default=None, help="keep the models, plans and outputs here")
    ap.add_argument("--show-ops", action="store_true", help="print each model's ONNX op types")
    ap.add_argument("--target", default="cpu", help="jetplan-convert --target (default cpu)")
    ap.add_argument("--batch", type=int, default=None, help="batch size (default: the model's)")
    ap.add_argument("--exporter", choices=["legacy", "dynamo"], default="legacy",
                    help="torch.onnx.export's TorchScript exporter (legacy, default) or its "
                         "torch.export one (dynamo: torch >= 2.9's default)")
    ap.add_argument("--half", action="store_true",
                    help="convert the model stored in float16 (weights, input and output), "
                         "held to HALF_TOLERANCE (or GPU_TOLERANCE on a GPU)")
    ap.add_argument("--fixtures", default=None,
                    help="models exported before: DIR/NAME/{model.onnx,input.npy,ref.npy} "
                         "(--models names them; nothing is exported)")
    args = ap.parse_args()

    names = (FAST if args.models == "fast" else list(MODELS) if args.models == "all"
             else list(ZOO) if args.models == "zoo" else [n for n in args.models.split(",") if n])
    unknown = [n for n in names if n not in MODELS and n not in ZOO and not args.fixtures]
    if unknown:
        print(f"unknown model(s) {unknown}; known: {', '.join(list(MODELS) + list(ZOO))}",
              file=sys.stderr)
        return 2
    require = (set(names) if args.require == "all" else set() if args.require == "none"
               else set(args.require.split(",")))
    if args.workdir is None:
        args.workdir = tempfile.mkdtemp(prefix="jetplan-models.")
    os.makedirs(args.workdir, exist_ok=True)
    torch.set_num_threads(1)  # the machine is shared; the reference is small next to the runs
    warnings.filterwarnings("ignore")  # the exporter's notes on LSTM batch sizes and the like

    rows = []
    for name in names:
        row = check_model(name, args)
        rows.append(row)
        print(f"{row['status']:<11} {name}: " + (row["why"] or
              f"max abs err {fmt(row['abs'])}, rel err {fmt(row['rel'])} (tol {row['tol']:.0e})"),
              flush=True)
        if args.show_ops:
            print(f"            ops: {row['ops']}")

    print()
    print("| model | status | max abs err | rel err | tol | convert s | run s | reason |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['name']} | {r['status']} | {fmt(r['abs'])} | {fmt(r['rel'])} | "
              f"{r['tol']:.0e} | {r['t_conv']:.1f} | {r['t_run']:.1f} | {r['why']} |")
    bad = [r["name"] for r in rows if r["name"] in require and r["status"] != "PASS"]
    counts = {s: sum(r["status"] == s for r in rows) for s in ("PASS", "FAIL", "UNSUPPORTED")}
    print(f"\nmodels: {len(rows)}: {counts['PASS']} pass, {counts['FAIL']} fail, "
          f"{counts['UNSUPPORTED']} unsupported; required and not passing: "
          f"{', '.join(bad) if bad else 'none'}")
    fails = [r["name"] for r in rows if r["status"] == "FAIL"]
    return 1 if bad or fails else 0


if __name__ == "__main__":
    sys.exit(main())
