#!/usr/bin/env python3
"""Runs examples/camera_loop on a CPU plan over an image folder and checks what it prints and
writes: every offered frame is processed or dropped, a top-5 line for the classifier, a histogram
PNG that decodes (zlib inflated, every row present), and a non-zero status with a message that
names the culprit for a missing plan, a missing folder, an empty folder and images of two sizes.
With CONVERTER (and torch), --detect on the tiny detector of example_models.py over frames of
its picture: every live line counts the 3 detections examples/detect finds in it.

    check_camera_loop.py CAMERA_LOOP PLAN WORK_DIR [CONVERTER]
"""
import os
import random
import re
import shutil
import sys

from png_reader import read_png
from run_example import expect_failure, run


def write_ppm(path, width, height, rng):
    with open(path, 'wb') as f:
        f.write(b'P6\n%d %d\n255\n' % (width, height))
        f.write(bytes(rng.randrange(256) for _ in range(width * height * 3)))


def decode_png(path):
    """(width, height) of a whole 8-bit RGB PNG; raises when it is not one."""
    width, height, _ = read_png(path)
    return width, height


def check_detect(camera_loop, converter, work):
    import example_models as em
    from check_detect import convert
    frames = os.path.join(work, 'cells')
    os.makedirs(frames)
    for i in range(2):
        em.write_ppm(os.path.join(frames, f'cells{i}.ppm'), em.cells_picture())
    plan = convert(converter, em.detector(), work, 'detector')
    r = run([camera_loop, '--plan', plan, '--images', frames, '--fps', '100', '--frames', '12',
             '--fit', 'stretch', '--mean', '0,0,0', '--std', '1,1,1', '--detect', '--iou', '0.3',
             '--histogram', os.path.join(work, 'detect.png')])
    print(r.stdout, r.stderr)
    assert r.returncode == 0, f'camera_loop --detect failed with status {r.returncode}'
    counts = re.findall(r'\| detections (\d+)', r.stdout)
    assert counts and all(c == '3' for c in counts), f'detections per live line: {counts}'
    assert 'top-5' not in r.stdout
    expect_failure([camera_loop, '--plan', os.path.join(work, 'detector.jplan'), '--images', frames,
                    '--detect', '--iou', '2', '--frames', '1'], ['iou_threshold'], '--iou 2')
    print('ok: --detect counts the 3 detections on every live line')


def main(camera_loop, plan, work, converter=None):
    shutil.rmtree(work, ignore_errors=True)
    images = os.path.join(work, 'images')
    os.makedirs(images)
    rng = random.Random(17)
    for i in range(3):
        write_ppm(os.path.join(images, f'frame{i}.ppm'), 45, 31, rng)
    png = os.path.join(work, 'latency.png')
    frames = 30
    r = run([camera_loop, '--plan', plan, '--images', images, '--fps', '100',
             '--frames', str(frames), '--histogram', png])
    print(r.stdout, r.stderr)
    assert r.returncode == 0, f'camera_loop failed with status {r.returncode}'
    m = re.search(r'frames offered (\d+) = processed (\d+) \+ dropped (\d+)', r.stdout)
    assert m, 'no "frames offered" line'
    offered, processed, dropped = (int(g) for g in m.groups())
    assert offered == frames, f'offered {offered}, asked for {frames}'
    assert processed + dropped == offered, 'frames lost'
    assert processed > 0, 'nothing processed'
    assert re.search(r'top-5( \d+:[0-9.]+){5}', r.stdout), 'no top-5 line'
    assert re.search(r'inference p50 [0-9.]+ p99 [0-9.]+ max [0-9.]+ ms', r.stdout), 'no latency'
    assert decode_png(png) == (640, 360), 'histogram of an unexpected size'
    # Frames far faster than inference: the ones it cannot take are dropped, none lost.
    r = run([camera_loop, '--plan', plan, '--images', images, '--fps', '2000', '--frames', '200',
             '--fit', 'letterbox', '--histogram', png])
    m = re.search(r'frames offered (\d+) = processed (\d+) \+ dropped (\d+)', r.stdout)
    assert r.returncode == 0 and m, f'fast run failed:\n{r.stdout}\n{r.stderr}'
    offered, processed, dropped = (int(g) for g in m.groups())
    assert offered == 200 and processed + dropped == 200 and processed > 0, m.group(0)
    print(f'ok: fast source: {m.group(0)}')

    expect_failure([camera_loop, '--plan', os.path.join(work, 'none.jplan'), '--images', images],
                   ['none.jplan'], 'missing plan')
    expect_failure([camera_loop, '--plan', plan, '--images', os.path.join(work, 'nowhere')],
                   ['nowhere'], 'missing folder')
    empty = os.path.join(work, 'empty')
    os.makedirs(empty)
    expect_failure([camera_loop, '--plan', plan, '--images', empty], ['no image'], 'empty folder')
    write_ppm(os.path.join(images, 'frame9.ppm'), 20, 20, rng)
    expect_failure([camera_loop, '--plan', plan, '--images', images], ['frame9.ppm', '20x20'],
                   'images of two sizes')
    expect_failure([camera_loop, '--images', images], ['usage'], 'no plan given')
    if converter:
        check_detect(camera_loop, converter, work)
    print('camera_loop: ok')


if __name__ == '__main__':
    main(*sys.argv[1:5])
