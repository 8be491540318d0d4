"""The benchmark's model set (tests/perf/bench_models.py): built in PyTorch with random weights
(seeded, BatchNorm statistics randomized as in tests/models/export_and_check.py), their input
sets, the ONNX export and the FP32 reference.

Models: torchvision's resnet18, resnet50, mobilenet_v2, mobilenet_v3_large, efficientnet_b0 and
vit_b_16; a BERT-base encoder at sequence 128 (transformers' BertModel from a default BertConfig,
random weights; inputs input_ids and attention_mask, output last_hidden_state); a GPT-2 small
decoder (transformers' GPT2Model from a default GPT2Config, random weights, causal attention;
input input_ids, output last_hidden_state) as the prefill of 128 tokens (gpt_decoder) and of
512 (gpt_decoder_s512, not in the default set: --models names it); a YOLO-style detector (CSP
backbone, SPPF, PAN neck, three 1x1 heads, SiLU/Concat/Upsample); a U-Net-like segmenter; a
2-layer LSTM with a per-step Linear.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import export_and_check as ec  # noqa: E402

BERT_SEQ = 128
GPT_SEQ = 128  # gpt_decoder's prefill length; gpt_decoder_s512 runs 512
GPT_VOCAB = 50257


class ConvBnSilu(nn.Sequential):
    def __init__(self, cin, cout, k=1, s=1):
        super().__init__(nn.Conv2d(cin, cout, k, s, (k - 1) // 2, bias=False), nn.BatchNorm2d(cout),
                         nn.SiLU())


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1, self.cv2, self.add = ConvBnSilu(c, c, 1), ConvBnSilu(c, c, 3), shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3(nn.Module):
    """CSP block: two 1x1 branches, bottlenecks on one, joined by Concat and a 1x1 conv."""

    def __init__(self, cin, cout, n=1, shortcut=True):
        super().__init__()
        c = cout // 2
        self.cv1, self.cv2 = ConvBnSilu(cin, c), ConvBnSilu(cin, c)
        self.m = nn.Sequential(*[Bottleneck(c, shortcut) for _ in range(n)])
        self.cv3 = ConvBnSilu(2 * c, cout)

    def forward(self, x):
        return self.cv3(torch.cat([self.m(self.cv1(x)), self.cv2(x)], dim=1))


class Sppf(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        c = cin // 2
        self.cv1, self.cv2 = ConvBnSilu(cin, c), ConvBnSilu(4 * c, cout)
        self.pool = nn.MaxPool2d(5, 1, 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.pool(x)
        y2 = self.pool(y1)
        return self.cv2(torch.cat([x, y1, y2, self.pool(y2)], dim=1))


class YoloStyle(nn.Module):
    """A YOLOv5s-sized detector from torch layers: CSP backbone (strides 8/16/32), SPPF, a PAN
    neck (nearest Upsample, Concat, strided convs) and one 1x1 head per scale; the output is
    [B, anchors, 5 + classes] (sigmoid), the three scales flattened and concatenated."""

    def __init__(self, classes=80, anchors=3):
        super().__init__()
        self.no, self.na = classes + 5, anchors
        self.stem = nn.Sequential(ConvBnSilu(3, 32, 6, 2), ConvBnSilu(32, 64, 3, 2), C3(64, 64, 1))
        self.s8 = nn.Sequential(ConvBnSilu(64, 128, 3, 2), C3(128, 128, 2))
        self.s16 = nn.Sequential(ConvBnSilu(128, 256, 3, 2), C3(256, 256, 3))
        self.s32 = nn.Sequential(ConvBnSilu(256, 512, 3, 2), C3(512, 512, 1), Sppf(512, 512))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.lat5, self.td4 = ConvBnSilu(512, 256), C3(512, 256, 1, False)
        self.lat4, self.td3 = ConvBnSilu(256, 128), C3(256, 128, 1, False)
        self.down3, self.bu4 = ConvBnSilu(128, 128, 3, 2), C3(256, 256, 1, False)
        self.down4, self.bu5 = ConvBnSilu(256, 256, 3, 2), C3(512, 512, 1, False)
        self.heads = nn.ModuleList(nn.Conv2d(c, self.na * self.no, 1) for c in (128, 256, 512))
        # He initialisation: with PyTorch's default (a third of the variance kept per conv) the
        # signal fades through 60 convs and every output sits at sigmoid(0) whatever the input,
        # which would make the comparison with PyTorch FP32 prove nothing; the heads scaled down
        # so that the sigmoid is not saturated either (logits of a few units).
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
        with torch.no_grad():
            for h in self.heads:
                h.weight.mul_(0.03)

    def forward(self, x):
        p3 = self.s8(self.stem(x))
        p4 = self.s16(p3)
        p5 = self.s32(p4)
        h5 = self.lat5(p5)
        h4 = self.lat4(self.td4(torch.cat([self.up(h5), p4], 1)))
        o3 = self.td3(torch.cat([self.up(h4), p3], 1))
        o4 = self.bu4(torch.cat([self.down3(o3), h4], 1))
        o5 = self.bu5(torch.cat([self.down4(o4), h5], 1))
        outs = []
        for head, f in zip(self.heads, (o3, o4, o5)):
            y = head(f)
            b, _, h, w = y.shape
            y = y.view(b, self.na, self.no, h, w).permute(0, 1, 3, 4, 2)
            outs.append(y.reshape(b, self.na * h * w, self.no))
        return torch.sigmoid(torch.cat(outs, 1))


class UNet(nn.Module):
    """A U-Net-like segmenter, 4 levels (32..256 channels, 512 at the bottom): Conv/BN/ReLU pairs,
    MaxPool down; up by ConvTranspose (two deep levels) and bilinear Upsample + 1x1 conv (two
    shallow ones); skips joined by Concat; a 1x1 classifier."""

    def __init__(self, classes=4, widths=(32, 64, 128, 256), bottom=512):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(
                nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

        chans = [3] + list(widths)
        self.enc = nn.ModuleList(block(chans[i], chans[i + 1]) for i in range(len(widths)))
        self.pool = nn.MaxPool2d(2)
        self.mid = block(widths[-1], bottom)
        self.ups, self.dec = nn.ModuleList(), nn.ModuleList()
        cin = bottom
        for i, c in enumerate(reversed(widths)):
            if i < 2:
                self.ups.append(nn.ConvTranspose2d(cin, c, 2, stride=2))
            else:
                self.ups.append(nn.Sequential(
                    nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                    nn.Conv2d(cin, c, 1)))
            self.dec.append(block(2 * c, c))
            cin = c
        self.head = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x):
        skips = []
        for enc in self.enc:
            x = enc(x)
            skips.append(x)
            x = self.pool(x)
        x = self.mid(x)
        for up, dec, skip in zip(self.ups, self.dec, reversed(skips)):
            x = dec(torch.cat([up(x), skip], dim=1))
        return self.head(x)


class Lstm2(nn.Module):
    """A 2-layer LSTM (128 features in, 256 hidden, 64 steps) with a Linear on every step."""

    def __init__(self, features=128, hidden=256, classes=32):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=2, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y)


class BertEncoder(nn.Module):
    """transformers' BertModel (BertConfig defaults: BERT-base, 12 layers, hidden 768), eager
    attention; forward(input_ids, attention_mask) -> last_hidden_state. with_mask=False: no
    mask input (every token attended), forward(input_ids)."""

    def __init__(self, with_mask=True):
        super().__init__()
        import transformers  # on the GPU machine; absent here: the caller prints a skip line
        try:
            cfg = transformers.BertConfig(attn_implementation="eager")
        except TypeError:
            cfg = transformers.BertConfig()
        try:
            self.bert = transformers.BertModel(cfg, add_pooling_layer=False)
        except TypeError:
            self.bert = transformers.BertModel(cfg)
        if hasattr(self.bert.config, "_attn_implementation"):
            try:
                self.bert.config._attn_implementation = "eager"
            except Exception:  # noqa: BLE001 a read-only property in some versions
                pass
        self.with_mask = with_mask

    def forward(self, input_ids, attention_mask=None):
        out = self.bert(input_ids=input_ids,
                        attention_mask=attention_mask if self.with_mask else None,
                        return_dict=True)
        return out.last_hidden_state


class GptDecoder(nn.Module):
    """transformers' GPT2Model (GPT2Config defaults: GPT-2 small, 12 layers, hidden 768, 12
    heads, 1024 positions) with transformers' default attention for it (sdpa since 4.4x: torch's
    scaled_dot_product_attention with is_causal or a causal mask, which the exporters write out
    as MatMul, Softmax, MatMul and the mask); forward(input_ids) -> last_hidden_state, the
    prefill of a whole prompt: no KV cache, every token attends to itself and those before."""

    def __init__(self):
        super().__init__()
        import transformers  # on the GPU machine; absent here: the caller prints a skip line
        self.gpt = transformers.GPT2Model(transformers.GPT2Config())

    def forward(self, input_ids):
        # The all-ones attention_mask a tokenizer gives one unpadded prompt: without a mask,
        # transformers 5.x looks for packed sequences in the position ids (torch.diff, which the
        # TorchScript exporter lacks). The exported mask is computed from the ids' shape alone,
        # so it folds to a constant once the shape is pinned.
        mask = torch.ones_like(input_ids)
        return self.gpt(input_ids=input_ids, attention_mask=mask, use_cache=False,
                        return_dict=True).last_hidden_state


tv = ec.tv

# name -> (constructor, per-sample input shape, "tokens" (BERT_SEQ ids and a padding mask) or
# ("ids", S) (S token ids, a causal decoder's prompt), opset)
MODELS = {
    "resnet18": (tv("resnet18"), (3, 224, 224), 13),
    "resnet50": (tv("resnet50"), (3, 224, 224), 13),
    "mobilenet_v2": (tv("mobilenet_v2"), (3, 224, 224), 13),
    "mobilenet_v3_large": (tv("mobilenet_v3_large"), (3, 224, 224), 17),
    "efficientnet_b0": (tv("efficientnet_b0"), (3, 224, 224), 13),
    "regnet_y_400mf": (tv("regnet_y_400mf"), (3, 224, 224), 13),
    "convnext_tiny": (tv("convnext_tiny"), (3, 224, 224), 17),
    "vit_b_16": (tv("vit_b_16"), (3, 224, 224), 17),
    "bert_base": (BertEncoder, "tokens", 17),
    "bert_base_nomask": (lambda: BertEncoder(with_mask=False), "tokens", 17),
    "gpt_decoder": (GptDecoder, ("ids", GPT_SEQ), 17),
    "gpt_decoder_s512": (GptDecoder, ("ids", 512), 17),
    "yolo_style": (YoloStyle, (3, 640, 640), 13),
    "unet": (UNet, (3, 256, 256), 13),
    "lstm2": (Lstm2, (64, 128), 13),
}
# The sequence-512 prefill only where named: the default run stays within its time budget.
DEFAULT_MODELS = [n for n in MODELS if n != "gpt_decoder_s512"]


class Unavailable(Exception):
    """A model that cannot be built here (a missing package): the run prints a skip line."""


def build(name):
    """The FP32 model in eval mode, seeded and randomized like export_and_check.build."""
    ctor, _, _ = MODELS[name]
    torch.manual_seed(0)
    try:
        model = ctor()
    except ImportError as e:
        raise Unavailable(f"{name}: {e} (python3 -c 'import transformers' fails here)") from e
    return ec.randomize(model)


def input_names(name, model=None):
    if is_ids(name):
        return ["input_ids"]
    if MODELS[name][1] != "tokens":
        return ["input"]
    return ["input_ids"] if model is not None and not model.with_mask else ["input_ids",
                                                                           "attention_mask"]


def is_ids(name):
    """A model whose one input is token ids (("ids", S) in MODELS)."""
    shape = MODELS[name][1]
    return isinstance(shape, tuple) and len(shape) == 2 and shape[0] == "ids"


def input_sets(name, batch, count):
    """`count` input sets, each a list of numpy arrays in input_names order (seeded)."""
    shape = MODELS[name][1]
    sets = []
    for k in range(count):
        rng = np.random.default_rng(1 + k)
        if is_ids(name):
            sets.append([rng.integers(0, GPT_VOCAB, size=(batch, shape[1]), dtype=np.int64)])
        elif shape == "tokens":
            ids = rng.integers(1000, 30000, size=(batch, BERT_SEQ), dtype=np.int64)
            ids[:, 0] = 101  # [CLS]
            mask = np.ones((batch, BERT_SEQ), dtype=np.int64)
            if k > 0:  # padded rows: the last tokens of every other row masked out
                for b in range(0, batch, 2):
                    mask[b, BERT_SEQ - 16 * k:] = 0
            sets.append([ids, mask])
        else:
            sets.append([rng.standard_normal((batch,) + tuple(shape)).astype(np.float32)])
    return sets


def export(name, model, example, path):
    """ONNX export with a symbolic batch dimension (one file serves every batch size)."""
    import onnx
    names = input_names(name, model)
    example = example[:len(names)]
    opset = MODELS[name][2]
    axes = {n: {0: "batch"} for n in names + ["output"]}
    kwargs = dict(opset_version=opset, do_constant_folding=True, input_names=names,
                  output_names=["output"], dynamic_axes=axes)
    args = tuple(torch.from_numpy(a) for a in example)
    try:  # torch >= 2.9 exports with dynamo (opset 18+) unless told otherwise
        torch.onnx.export(model, args, path, dynamo=False, **kwargs)
    except TypeError:  # older torch has no dynamo argument
        torch.onnx.export(model, args, path, **kwargs)
    onnx.checker.check_model(onnx.load(path, load_external_data=False))


def to_device(arrays, device, half, channels_last=True):
    """Tensors on `device`; float ones in FP16 (channels-last when 4-D) where half."""
    out = []
    for a in arrays:
        t = torch.from_numpy(a).to(device)
        if t.is_floating_point():
            if half:
                t = t.half()
            if channels_last and t.dim() == 4:
                t = t.contiguous(memory_format=torch.channels_last)
        out.append(t)
    return out


def reference(model, sets, device):
    """PyTorch FP32 outputs (TF32 off) of every input set, as float64-able numpy arrays."""
    tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        m = model.to(device)
        with torch.inference_mode():
            refs = [m(*to_device(s, device, half=False, channels_last=False)).float().cpu().numpy()
                    for s in sets]
        model.to("cpu")
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
    return refs


def rel_err(got, ref):
    """max |got - ref| / max |ref|; inf for a shape mismatch or a non-finite output."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape or not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))
