"""Runs an example as a user would and checks its failures: the status and the message."""
import subprocess


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def expect_failure(args, words, what):
    """The example run with `args` exits non-zero and its stderr names every one of `words`."""
    r = run(args)
    assert r.returncode != 0, f'{what}: status 0\n{r.stdout}'
    for w in words:
        assert w in r.stderr, f'{what}: "{w}" not in the message:\n{r.stderr}'
    print(f'ok: {what} -> status {r.returncode}: {r.stderr.strip().splitlines()[-1]}')
