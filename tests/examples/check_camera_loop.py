#!/usr/bin/env python3
"""Runs examples/camera_loop on a CPU plan over an image folder and checks what it prints and
writes: every offered frame is processed or dropped, a top-5 line for the classifier, a histogram
PNG that decodes (zlib inflated, every row present), and a non-zero status with a message that
names the culprit for a missing plan, a missing folder, an empty folder and images of two sizes.

    check_camera_loop.py CAMERA_LOOP PLAN WORK_DIR
"""
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import zlib


def write_ppm(path, width, height, rng):
    with open(path, 'wb') as f:
        f.write(b'P6\n%d %d\n255\n' % (width, height))
        f.write(bytes(rng.randrange(256) for _ in range(width * height * 3)))


def decode_png(path):
    """(width, height) after inflating every IDAT; raises when the PNG is not whole."""
    with open(path, 'rb') as f:
        data = f.read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG signature'
    pos, idat, width = 8, b'', None
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = struct.unpack('>I', data[pos + 8 + length:pos + 12 + length])[0]
        assert zlib.crc32(kind + body) == crc, f'bad CRC in chunk {kind}'
        if kind == b'IHDR':
            width, height, depth, colour = struct.unpack('>IIBB', body[:10])
            assert depth == 8 and colour == 2, f'not 8-bit RGB: depth {depth} colour {colour}'
        elif kind == b'IDAT':
            idat += body
        pos += 12 + length
    pixels = zlib.decompress(idat)
    assert len(pixels) == height * (1 + width * 3), 'rows missing'
    return width, height


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def expect_failure(args, words, what):
    r = run(args)
    assert r.returncode != 0, f'{what}: status 0\n{r.stdout}'
    for w in words:
        assert w in r.stderr, f'{what}: "{w}" not in the message:\n{r.stderr}'
    print(f'ok: {what} -> status {r.returncode}: {r.stderr.strip().splitlines()[-1]}')


def main(camera_loop, plan, work):
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
    print('camera_loop: ok')


if __name__ == '__main__':
    main(*sys.argv[1:4])
