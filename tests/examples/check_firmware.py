#!/usr/bin/env python3
"""Runs examples/firmware on a CPU plan: the program as built, and the same source linked with
heap_probe.c (which counts every malloc, calloc, realloc, free and aligned allocation), and
checks: no allocator call and no library allocation during the control loop (while start-up
makes some: the probe counts), the deadline-miss counter (every cycle misses a 1 us period),
and status 1 with a message naming the culprit for a missing plan, a corrupt plan and a plan
larger than the flash region, status 2 for a bad command line. Then the plan built in as a C
array (examples/firmware/embed_plan.cmake, compiled as C99 with FIRMWARE_EMBEDDED_PLAN and
linked with the static library): the same bytes in flash and the same outputs as from the file.

    check_firmware.py FIRMWARE FIRMWARE_WITH_HEAP_PROBE PLAN WORK_DIR \
                      CMAKE C_COMPILER CXX_COMPILER FIRMWARE_SOURCE_DIR INCLUDE_DIR STATIC_LIBRARY
"""
import os
import random
import re
import shutil
import sys

from run_example import expect_failure, run

LOOP = re.compile(r'loop: (\d+) cycles of (\d+) us: deadline misses (\d+) \(releases skipped '
                  r'(\d+)\), cycle time mean [0-9.]+ us, worst [0-9.]+ us')


def loop_line(r, what):
    assert r.returncode == 0, f'{what}: status {r.returncode}\n{r.stdout}\n{r.stderr}'
    m = LOOP.search(r.stdout)
    assert m, f'{what}: no loop line\n{r.stdout}'
    return [int(g) for g in m.groups()]


def check_embedded(plan, work, cmake, cc, cxx, source_dir, include_dir, static_library, want):
    array = os.path.join(work, 'plan.c')
    r = run([cmake, f'-DPLAN={plan}', f'-DOUT={array}', '-P',
             os.path.join(source_dir, 'embed_plan.cmake')])
    assert r.returncode == 0, f'embed_plan.cmake: {r.stderr}'
    exe = os.path.join(work, 'firmware_embedded')
    objects = []
    for source in (os.path.join(source_dir, 'firmware.c'), array):
        objects.append(os.path.join(work, os.path.basename(source) + '.o'))
        r = run([cc, '-c', '-std=c99', '-pedantic', '-Wall', '-Werror', '-DFIRMWARE_EMBEDDED_PLAN',
                 '-I', include_dir, source, '-o', objects[-1]])
        assert r.returncode == 0, f'compiling {source} as C99:\n{r.stderr}'
    r = run([cxx] + objects + [static_library, '-ldl', '-pthread', '-o', exe])
    assert r.returncode == 0, f'linking the embedded firmware:\n{r.stderr}'
    r = run([exe, 'embedded', '5', '2000'])
    print(r.stdout, r.stderr)
    loop_line(r, 'embedded firmware')
    assert f'{os.path.getsize(plan)} bytes in flash' in r.stdout, r.stdout
    got = re.search(r'output\[0\]: .*', r.stdout).group(0)
    assert got == want, f'embedded plan: {got}, from the file: {want}'
    print(f'ok: the embedded plan runs as the file does ({got})')


def main(firmware, probed, plan, work, *embed_args):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    r = run([firmware, plan, '5', '2000'])
    print(r.stdout, r.stderr)
    cycles, period, misses, _ = loop_line(r, 'firmware')
    assert (cycles, period) == (5, 2000) and misses <= cycles
    assert 'library allocations during the loop: 0' in r.stdout, r.stdout
    assert 'heap calls' not in r.stdout, 'a firmware build without the probe reports heap calls'

    r = run([probed, plan, '40', '2000'])
    print(r.stdout, r.stderr)
    loop_line(r, 'firmware with the heap probe')
    m = re.search(r'heap calls during the loop: (\d+) \(start-up: (\d+)\)', r.stdout)
    assert m, 'no heap line'
    assert int(m.group(1)) == 0, f'{m.group(1)} allocator calls during the control loop'
    assert int(m.group(2)) > 0, 'the probe counted nothing at start-up either (fopen allocates)'
    assert 'library allocations during the loop: 0' in r.stdout, r.stdout
    print(f'ok: {m.group(0)}')

    cycles, _, misses, _ = loop_line(run([probed, plan, '5', '1']), '1 us period')
    assert misses == cycles == 5, f'{misses} deadline misses of 5 cycles of 1 us'
    print('ok: every 1 us cycle misses its deadline')

    expect_failure([firmware, os.path.join(work, 'none.jplan')], ['cannot open plan', 'none.jplan'],
                   'missing plan')
    corrupt = os.path.join(work, 'corrupt.jplan')
    with open(corrupt, 'wb') as f:
        f.write(bytes(random.Random(10).randrange(256) for _ in range(4096)))
    expect_failure([firmware, corrupt], ['loading the plan'], 'corrupt plan')
    big = os.path.join(work, 'big.jplan')
    with open(big, 'wb') as f:
        f.truncate((8 << 20) + 1)
    expect_failure([firmware, big], ['larger than'], 'plan larger than the flash region')
    expect_failure([firmware, plan, 'x'], ['usage'], 'bad cycle count')
    expect_failure([firmware, plan, '3', '0'], ['usage'], 'zero period')
    want = re.search(r'output\[0\]: .*', run([firmware, plan, '5', '2000']).stdout).group(0)
    check_embedded(plan, work, *embed_args, want)
    print('firmware: ok')


if __name__ == '__main__':
    main(*sys.argv[1:11])
