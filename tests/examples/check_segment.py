#!/usr/bin/env python3
"""Runs examples/segment on a tiny segmenter with fixed weights (example_models.py) converted
for the CPU, on a 64x64 picture of four quadrants (black, red, green, blue: classes 0-3 of the
16x16 class map, 64 pixels each), and checks: the class histogram, the same from the
channels-last plan, an overlay PNG of the picture's size whose quadrants are the picture blended
half and half with the PASCAL VOC colours, and a non-zero status naming the culprit for a
missing plan and a bad --alpha.

    check_segment.py SEGMENT CONVERTER WORK_DIR [GPU_TARGET]

With GPU_TARGET (e.g. h100; on a machine with that GPU) the segmenter is also converted for it
and must give the same histogram, its classes taken on the GPU by jp_class_map's kernel.
"""
import os
import re
import shutil
import sys

import numpy as np

import example_models as em
from check_detect import convert
from png_reader import read_png
from run_example import expect_failure, run


def main(segment, converter, work, gpu_target=None):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    pic = em.quadrants_picture()
    image = os.path.join(work, 'quadrants.ppm')
    em.write_ppm(image, pic)
    plan = convert(converter, em.segmenter(), work, 'segmenter')
    plan_last = convert(converter, em.segmenter(channels_last=True), work, 'segmenter_nhwc')
    png = os.path.join(work, 'overlay.png')
    r = run([segment, '--plan', plan, '--image', image, '--out', png, '--labels',
             'black,red,green,blue'])
    print(r.stdout, r.stderr)
    assert r.returncode == 0, f'segment failed with status {r.returncode}'
    hist = re.findall(r'class (\d) (\w+): (\d+) pixels \(([0-9.]+)%\)', r.stdout)
    want = [('0', 'black', '64', '25.0'), ('1', 'red', '64', '25.0'),
            ('2', 'green', '64', '25.0'), ('3', 'blue', '64', '25.0')]
    assert hist == want, f'histogram {hist}'
    # The torch model agrees on every pixel of the map.
    logits = em.run(em.segmenter(), pic)[0]
    assert (logits.argmax(0) == np.repeat(np.repeat([[0, 2], [1, 3]], 8, 0), 8, 1)).all()
    print('ok: class histogram')

    width, height, rows = read_png(png)
    assert (width, height) == (64, 64), f'PNG of {width}x{height}'
    # Half the picture, half the class colour (0 black, 1 (128, 0, 0), 2 (0, 128, 0),
    # 3 (128, 128, 0)), rounded half away from zero.
    for (x, y), rgb in {(8, 8): (0, 0, 0), (8, 40): (192, 0, 0), (40, 8): (0, 192, 0),
                        (40, 40): (64, 64, 128), (63, 63): (64, 64, 128)}.items():
        assert tuple(rows[y][x * 3:x * 3 + 3]) == rgb, f'({x}, {y}): {rows[y][x * 3:x * 3 + 3]}'
    print('ok: overlay PNG 64x64 with the quadrants blended')

    r2 = run([segment, '--plan', plan_last, '--channels-last', '--image', image, '--out', png,
              '--labels', 'black,red,green,blue'])
    assert r2.returncode == 0 and re.findall(r'class .*', r2.stdout) == \
        re.findall(r'class .*', r.stdout), f'channels last:\n{r2.stdout}{r2.stderr}'
    print('ok: the channels-last plan gives the same histogram')

    expect_failure([segment, '--plan', os.path.join(work, 'none.jplan'), '--image', image],
                   ['none.jplan'], 'missing plan')
    expect_failure([segment, '--plan', plan, '--image', image, '--alpha', '3'], ['--alpha'],
                   'alpha out of range')
    if gpu_target:
        plan_gpu = convert(converter, em.segmenter(), work, 'segmenter_' + gpu_target, gpu_target)
        r3 = run([segment, '--plan', plan_gpu, '--image', image, '--out', png, '--labels',
                  'black,red,green,blue'])
        print(r3.stdout, r3.stderr)
        assert r3.returncode == 0 and '(cpu)' not in r3.stdout, 'not run on a GPU plan'
        assert re.findall(r'class .*', r3.stdout) == re.findall(r'class .*', r.stdout)
        print(f'ok: the {gpu_target} plan gives the same histogram on the GPU')
    print('segment: ok')


if __name__ == '__main__':
    main(*sys.argv[1:5])
