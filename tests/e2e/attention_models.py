#!/usr/bin/env python3
"""End-to-end tests of attention fusion: small transformer blocks exported from torch (opset 17,
the TorchScript exporter) - nn.MultiheadAttention (batch-first: 3-D [B*H, S, D] heads, the scale
on Q), a BERT-style self-attention with a padding mask input (4-D heads, K through
Transpose [0, 2, 3, 1], the scale on the scores), nn.TransformerEncoderLayer (pre-norm, as ViT's
encoder block) and a causal self-attention with a constant -inf mask. Each is converted for the
CPU and run with jetplan-run; the plan must hold the expected number of Attention steps (the
MatMul, scale, mask Add, Softmax, MatMul chain fused) and its outputs must match torch's within
|got - want| <= 1e-5 + 1e-4 * |want| (float32 both sides; the step's softmax in FP32). The same
model converted for an H100 (deviceless: the converter loads its own plan) must convert and hold
the same Attention steps. Skipped, visibly, when torch cannot be imported.

Usage: attention_models.py --convert PATH --run PATH --workdir DIR [--only CASE,...]
Exits 1 when a case failed.
"""

import os
import struct
import sys

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (PLAN_STEPS, Suite, fb_field, fb_root, fb_table_vector,  # noqa: E402
                        run_model, run_tool, tool_args)

OPSET = 17
OP_ATTENTION = 36  # schemas/plan.fbs OpFamily.Attention
STEP_OP = 1        # Step.op's field id


def attention_steps(plan_path):
    """How many steps of the plan are Attention steps."""
    with open(plan_path, "rb") as f:
        buf = f.read()
    count = 0
    for step in fb_table_vector(buf, fb_root(buf), PLAN_STEPS):
        pos = fb_field(buf, step, STEP_OP)
        if pos is not None and struct.unpack_from("<H", buf, pos)[0] == OP_ATTENTION:
            count += 1
    return count


def torch_models():
    """(name, module, inputs, Attention steps expected) of each case."""
    import math

    import torch

    torch.manual_seed(11)

    class Mha(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = torch.nn.MultiheadAttention(128, 4, batch_first=True)  # head dim 32

        def forward(self, x):
            return self.mha(x, x, x, need_weights=False)[0]

    class BertSelfAttention(torch.nn.Module):
        def __init__(self, embed=128, heads=2, causal=False, tokens=9):
            super().__init__()
            self.q, self.k, self.v = (torch.nn.Linear(embed, embed) for _ in range(3))
            self.heads, self.causal = heads, causal
            self.register_buffer("causal_mask",
                                 torch.triu(torch.full((tokens, tokens), float("-inf")), 1))

        def forward(self, x, mask=None):
            b, s, e = x.shape
            h, d = self.heads, e // self.heads
            q = self.q(x).view(b, s, h, d).permute(0, 2, 1, 3)
            k = self.k(x).view(b, s, h, d).permute(0, 2, 1, 3)
            v = self.v(x).view(b, s, h, d).permute(0, 2, 1, 3)
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)
            scores = scores + (self.causal_mask if self.causal else mask)
            p = torch.softmax(scores, dim=-1)
            return torch.matmul(p, v).permute(0, 2, 1, 3).reshape(b, s, e)

    encoder = torch.nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0, batch_first=True,
                                               norm_first=True)
    x = lambda *shape: torch.rand(*shape) * 2 - 1  # noqa: E731
    padding = torch.zeros(2, 1, 1, 9)
    padding[1, :, :, 6:] = -10000.0  # the second sequence is 6 tokens long
    return [("mha_batch_first", Mha(), (x(2, 12, 128),), 1),
            ("bert_padding_mask", BertSelfAttention(), (x(2, 9, 128), padding), 1),
            ("encoder_layer_pre_norm", encoder, (x(1, 17, 128),), 1),
            ("causal_head_dim_80", BertSelfAttention(160, 2, True, 11), (x(1, 11, 160),), 1)]


def check_case(tools, suite, name, module, inputs, want_steps):
    import torch

    work = os.path.join(tools.workdir, name)
    os.makedirs(work, exist_ok=True)
    module.eval()
    with torch.no_grad():
        want = module(*inputs)
    names = ["x", "mask"][:len(inputs)]
    path = os.path.join(work, "export.onnx")
    torch.onnx.export(module, inputs, path, opset_version=OPSET, input_names=names,
                      output_names=["y"])
    model = onnx.load(path)
    feeds = {n: t.numpy() for n, t in zip(names, inputs)}
    problems = run_model(tools, work, model, feeds, {"y": want.numpy()})
    plan = os.path.join(work, "model.jplan")
    if os.path.exists(plan) and attention_steps(plan) != want_steps:
        problems.append(f"the CPU plan has {attention_steps(plan)} Attention steps, "
                        f"expected {want_steps}")
    gpu_plan = os.path.join(work, "model.h100.jplan")
    res = run_tool([tools.convert, os.path.join(work, "model.onnx"), "--target", "h100",
                    "-o", gpu_plan])
    if res.returncode != 0 or res.timed_out:
        problems.append(f"jetplan-convert --target h100 failed ({res.describe()}): "
                        f"{res.first_error()}")
    elif attention_steps(gpu_plan) != want_steps:
        problems.append(f"the H100 plan has {attention_steps(gpu_plan)} Attention steps, "
                        f"expected {want_steps}")
    suite.report(name, problems)


def main():
    tools = tool_args(__doc__)
    suite = Suite()
    try:
        cases = torch_models()
    except ImportError as e:
        print(f"SKIP  attention models (torch cannot be imported: {e})")
        return suite.summary("attention models")
    for name, module, inputs, steps in cases:
        if tools.only and name not in tools.only:
            continue
        try:
            check_case(tools, suite, name, module, inputs, steps)
        except Exception as e:  # a broken case must not hide the others
            suite.report(name, [f"{type(e).__name__}: {e}"])
    return suite.summary("attention models")


if __name__ == "__main__":
    sys.exit(main())
