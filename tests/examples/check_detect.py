#!/usr/bin/env python3
"""Runs examples/detect on a tiny detector with fixed weights (example_models.py) converted for
the CPU, on a 64x64 picture with two red cells (vertically adjacent: IoU 1/3, the weaker one
suppressed at --iou 0.3) and two green ones, and checks: the printed detections against the
numpy reference of the decode and NMS run on torch's head (classes, order, scores within 1e-4,
boxes within 0.006 picture pixels: both printed to
4 and 2 decimals), the three detections known by hand, the same lines from the
channels-last plan, a PNG of the picture's size with the best box's outline in its class colour,
and a non-zero status naming the culprit for a missing plan or image, a head of the wrong shape
and a bad threshold.

    check_detect.py DETECT CONVERTER WORK_DIR [GPU_TARGET]

With GPU_TARGET (e.g. h100; on a machine with that GPU) the detector is also converted for it
and must find the same boxes, decoded and suppressed on the GPU by jp_detector's kernels
(scores within 2e-3 and boxes within 0.1 picture pixels: the plan runs the conv in FP16).
"""
import math
import os
import re
import shutil
import sys

import numpy as np

import example_models as em
from png_reader import read_png
from run_example import expect_failure, run

LINE = re.compile(r'^\s+(\S+)\s+([0-9.]+)\s+box ([0-9.-]+) ([0-9.-]+) ([0-9.-]+) ([0-9.-]+)$')


def convert(converter, model, work, name, target=None):
    onnx_path, plan = os.path.join(work, name + '.onnx'), os.path.join(work, name + '.jplan')
    em.export(model, onnx_path)
    r = run([converter, onnx_path, '-o', plan] + (['--target', target] if target else []))
    assert r.returncode == 0, f'converting {name}: {r.stdout}\n{r.stderr}'
    return plan


def detections(stdout):
    return [LINE.match(l).groups() for l in stdout.splitlines() if LINE.match(l)]


def check_gpu(detect, converter, work, target, args, want):
    plan = convert(converter, em.detector(), work, 'detector_' + target, target)
    r = run([detect, '--plan', plan, '--out', os.path.join(work, 'gpu.png')] + args)
    print(r.stdout, r.stderr)
    assert r.returncode == 0, f'detect on the {target} plan failed'
    assert '(cpu)' not in r.stdout, 'not a GPU plan'
    got = detections(r.stdout)
    assert len(got) == len(want), f'{len(got)} detections on the GPU, {len(want)} on the CPU'
    for g, w in zip(got, want):
        assert g[0] == w[0] and abs(float(g[1]) - float(w[1])) <= 2e-3, f'{g} against {w}'
        assert all(abs(float(a) - float(b)) <= 0.1 for a, b in zip(g[2:], w[2:])), f'{g}, {w}'
    print(f'ok: the {target} plan finds the same on the GPU')


def main(detect, converter, work, gpu_target=None):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    pic = em.cells_picture()
    image = os.path.join(work, 'cells.ppm')
    em.write_ppm(image, pic)
    plan = convert(converter, em.detector(), work, 'detector')
    plan_last = convert(converter, em.detector(channels_last=True), work, 'detector_nhwc')
    png = os.path.join(work, 'detections.png')
    args = ['--image', image, '--score', '0.25', '--iou', '0.3', '--labels', 'red,green']
    r = run([detect, '--plan', plan, '--out', png] + args)
    print(r.stdout, r.stderr)
    assert r.returncode == 0, f'detect failed with status {r.returncode}'
    got = detections(r.stdout)

    head = em.run(em.detector(), pic)[0]
    want = em.nms(em.decode(head, 32, 0.25), 0.3, 100)
    assert len(got) == len(want) == 3, f'{len(got)} detections, the reference {len(want)}'
    for g, w in zip(got, want):
        assert g[0] == ['red', 'green'][int(w[5])], f'class {g[0]}, want {w[5]}'
        assert abs(float(g[1]) - w[4]) <= 1e-4, f'score {g[1]}, want {w[4]}'
        for k in range(4):  # in picture pixels (twice the input's)
            assert abs(float(g[2 + k]) - 2 * w[k]) <= 0.006, f'box {g[2:]}, want {2 * w[:4]}'
    # By hand: red (1, 0) first, red (1, 1) suppressed by it, green (2, 1), green (3, 3).
    assert [g[0] for g in got] == ['red', 'green', 'green']
    sig = lambda x: 1 / (1 + math.exp(-x))
    cx, cy = (1 + sig(0.5)) * 8, sig(-0.5) * 8
    assert abs(float(got[0][4]) - 2 * (cx + 6)) <= 0.006 and float(got[0][3]) == 0.0, got[0]
    assert abs(float(got[0][1]) - sig(5) * sig(10) / (sig(10) + sig(-10))) <= 1e-4, got[0]
    print('ok: detections match the numpy reference and the hand-made picture')

    width, height, rows = read_png(png)
    assert (width, height) == (64, 64), f'PNG of {width}x{height}'
    x0, y0, y1 = (int(float(got[0][k]) + 0.5) for k in (2, 3, 5))
    y = (y0 + y1) // 2
    assert tuple(rows[y][x0 * 3:x0 * 3 + 3]) == (128, 0, 0), f'box edge {rows[y][x0 * 3:x0 * 3 + 3]}'
    print('ok: PNG 64x64 with the red box drawn')

    r = run([detect, '--plan', plan_last, '--channels-last', '--out', png] + args)
    assert r.returncode == 0 and detections(r.stdout) == got, f'channels last:\n{r.stdout}{r.stderr}'
    print('ok: the channels-last plan finds the same')

    expect_failure([detect, '--plan', os.path.join(work, 'none.jplan'), '--image', image],
                   ['none.jplan'], 'missing plan')
    expect_failure([detect, '--plan', plan, '--image', os.path.join(work, 'none.png')],
                   ['none.png'], 'missing image')
    expect_failure([detect, '--plan', plan_last, '--image', image], ['not a grid head'],
                   'channels-last head read as channels first')
    expect_failure([detect, '--plan', plan, '--image', image, '--iou', '2'], ['iou_threshold'],
                   'IoU threshold out of range')
    expect_failure([detect, '--image', image], ['usage'], 'no plan given')
    if gpu_target:
        check_gpu(detect, converter, work, gpu_target, args, got)
    print('detect: ok')


if __name__ == '__main__':
    main(*sys.argv[1:5])
