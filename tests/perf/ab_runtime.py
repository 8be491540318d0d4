#!/usr/bin/env python3
"""Times the same plans with two jetplan-run binaries, interleaved, on one GPU.

For a change that must not move performance (a refactor, a build change): both binaries run
every plan in alternating rounds (A, B, A, B, ...), so drift of clocks or temperature falls on
both alike. Each run is `jetplan-run PLAN --warmup W --iterations N --json F` (CUDA-graph replays
timed by CUDA events); a plan's figure is the median over rounds of each run's GPU median, and
the spread is the range of those medians. The table's last column is B/A. --a-args / --b-args
add jetplan-run options to one side: the same binary with and without an option is an A/B too
(`--a BIN/jetplan-run --a-args=--no-early-launch --b BIN/jetplan-run`).

A plan argument `A.jplan=B.jplan` gives each side its own plan: a converter change is timed
as the old converter's plan on the old binary against the new converter's on the new one.

    python3 tests/perf/ab_runtime.py --a OLD/jetplan-run --b NEW/jetplan-run PLAN... \
        [--rounds 3] [--iterations 300] [--warmup 50] [--json OUT.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run_once(binary, plan, args, lib_path, extra=''):
    with tempfile.NamedTemporaryFile(suffix='.json', delete=False) as f:
        out = f.name
    env = dict(os.environ)
    if lib_path:
        env['LD_LIBRARY_PATH'] = lib_path
    cmd = [binary, plan, '--warmup', str(args.warmup), '--iterations', str(args.iterations),
           '--seed', '1', '--json', out] + extra.split()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    try:
        if proc.returncode != 0:
            raise RuntimeError(f'{" ".join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}')
        with open(out) as f:
            figures = json.load(f)
        key = 'gpu_median_ms' if 'gpu_median_ms' in figures else 'median_ms'
        return figures[key]
    finally:
        os.unlink(out)


def label(plan):
    """The plan's file name, with its folder's where the file name says nothing (model.jplan, or
    int8_check.py's fp16.jplan and int8.jplan in a folder per model and batch)."""
    name = os.path.basename(plan)
    if name == 'model.jplan':
        return os.path.join(os.path.basename(os.path.dirname(os.path.dirname(plan))),
                            os.path.basename(os.path.dirname(plan)))
    if name in ('fp16.jplan', 'int8.jplan'):
        return os.path.join(os.path.basename(os.path.dirname(plan)), name)
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--a', required=True, help='the baseline jetplan-run')
    ap.add_argument('--b', required=True, help='the jetplan-run under test')
    ap.add_argument('--a-lib', default='', help='LD_LIBRARY_PATH for --a')
    ap.add_argument('--b-lib', default='', help='LD_LIBRARY_PATH for --b')
    ap.add_argument('--a-args', default='', help='extra jetplan-run options for --a')
    ap.add_argument('--b-args', default='', help='extra jetplan-run options for --b')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--iterations', type=int, default=300)
    ap.add_argument('--warmup', type=int, default=50)
    ap.add_argument('--json', help='write every figure here')
    ap.add_argument('plans', nargs='+')
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error('--rounds must be at least 1')

    results = []
    for plan in args.plans:
        a_plan, _, b_plan = plan.partition('=')
        b_plan = b_plan or a_plan
        a_ms, b_ms = [], []
        for _ in range(args.rounds):
            a_ms.append(run_once(args.a, a_plan, args, args.a_lib, args.a_args))
            b_ms.append(run_once(args.b, b_plan, args, args.b_lib, args.b_args))
        results.append({'plan': plan, 'a_ms': a_ms, 'b_ms': b_ms,
                        'a_median': statistics.median(a_ms), 'b_median': statistics.median(b_ms)})

    print(f'| plan | A median ms (range) | B median ms (range) | B/A |')
    print('|---|---|---|---|')
    for r in results:
        print(f"| {label(r['plan'].partition('=')[2] or r['plan'])} | {r['a_median']:.4f} "
              f"({min(r['a_ms']):.4f}-{max(r['a_ms']):.4f}) | {r['b_median']:.4f} "
              f"({min(r['b_ms']):.4f}-{max(r['b_ms']):.4f}) | {r['b_median'] / r['a_median']:.3f} |")
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'a': args.a, 'b': args.b, 'a_args': args.a_args, 'b_args': args.b_args,
                       'rounds': args.rounds,
                       'iterations': args.iterations, 'warmup': args.warmup,
                       'results': results}, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
