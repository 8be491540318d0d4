"""Shared helpers of the end-to-end scripts: running the tools, checking their error lines,
and a minimal FlatBuffers reader for patching plans (the `flatbuffers` package is optional on
the build machines, and a reader this small is easy to audit)."""

import re
import signal
import struct
import subprocess
import time

TOOL_TIMEOUT_S = 60


class Result:
    def __init__(self, argv, returncode, stdout, stderr, seconds, timed_out=False):
        self.argv, self.returncode = argv, returncode
        self.stdout, self.stderr, self.seconds, self.timed_out = stdout, stderr, seconds, timed_out

    def describe(self):
        if self.timed_out:
            return f"timed out after {TOOL_TIMEOUT_S} s"
        if self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = str(-self.returncode)
            return f"killed by signal {name}"
        return f"exit {self.returncode}"

    def stderr_lines(self):
        return [ln for ln in self.stderr.splitlines() if ln.strip()]

    def first_error(self):
        lines = self.stderr_lines()
        return lines[0] if lines else "(no stderr)"


def run_tool(argv, cwd=None):
    start = time.monotonic()
    try:
        p = subprocess.run([str(a) for a in argv], cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TOOL_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        return Result(argv, -1, (e.stdout or b"").decode(errors="replace"),
                      (e.stderr or b"").decode(errors="replace"), time.monotonic() - start, True)
    return Result(argv, p.returncode, p.stdout.decode(errors="replace"),
                  p.stderr.decode(errors="replace"), time.monotonic() - start)


def sanitize(name):
    """File name jetplan-run uses for an output: characters outside [A-Za-z0-9_.-] become '_'."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def check_error(res, prefix, exit_codes=(1,), mentions=(), any_of=(), usage=False):
    """The tools' error contract: no signal, no hang, an exit code in `exit_codes`, exactly one
    non-empty stderr line starting with `prefix`, containing every string in `mentions` and at
    least one of `any_of` (case-insensitive). Returns a list of problems (empty when fine).

    usage=True is for command-line mistakes: the tools may follow the line with their usage
    text, and the line only has to start with the tool's name."""
    problems = []
    if res.timed_out or res.returncode < 0:
        return [res.describe()]
    if res.returncode not in exit_codes:
        problems.append(f"exit {res.returncode}, expected {'/'.join(map(str, exit_codes))}")
    lines = res.stderr_lines()
    if usage:
        prefix = prefix.split(":")[0] + ":"
        lines = lines[:1]
    if len(lines) != 1:
        problems.append(f"{len(lines)} stderr lines, expected 1: {lines[:4]!r}")
    if not lines:
        return problems
    line = lines[0]
    if not line.startswith(prefix):
        problems.append(f"stderr does not start with {prefix!r}: {line!r}")
    low = line.lower()
    for m in mentions:
        if m.lower() not in low:
            problems.append(f"error line does not mention {m!r}: {line!r}")
    if any_of and not any(a.lower() in low for a in any_of):
        problems.append(f"error line mentions none of {list(any_of)!r}: {line!r}")
    return problems


# --------------------------------------------------------------------------------------------
# FlatBuffers, read-only walk (little-endian): root uoffset -> table; table soffset -> vtable;
# vtable = [u16 vtable bytes, u16 table bytes, u16 field offsets...]; a field offset of 0 means
# the field is absent (it holds its default).
# --------------------------------------------------------------------------------------------

class FlatBufferError(Exception):
    pass


def _u16(b, p):
    return struct.unpack_from("<H", b, p)[0]


def _u32(b, p):
    return struct.unpack_from("<I", b, p)[0]


def _i32(b, p):
    return struct.unpack_from("<i", b, p)[0]


def fb_root(buf):
    if len(buf) < 8:
        raise FlatBufferError("buffer too small")
    return _u32(buf, 0)


def fb_identifier(buf):
    return bytes(buf[4:8])


def fb_field(buf, table, index):
    """Absolute position of field `index` of the table at `table`, or None when absent."""
    vtable = table - _i32(buf, table)
    vt_bytes = _u16(buf, vtable)
    slot = 4 + 2 * index
    if slot + 2 > vt_bytes:
        return None
    off = _u16(buf, vtable + slot)
    return table + off if off else None


def fb_deref(buf, pos):
    """Follows the uoffset stored at `pos` (tables, vectors, strings)."""
    return pos + _u32(buf, pos)


def fb_vector(buf, table, index):
    """(position of the first element, length) of a vector field, or None when absent."""
    pos = fb_field(buf, table, index)
    if pos is None:
        return None
    vec = fb_deref(buf, pos)
    return vec + 4, _u32(buf, vec)


def fb_table_vector(buf, table, index):
    """Positions of the tables of a vector-of-tables field."""
    v = fb_vector(buf, table, index)
    if v is None:
        return []
    start, n = v
    return [fb_deref(buf, start + 4 * i) for i in range(n)]


# Field ids of schemas/plan.fbs (a union takes two ids: its _type and its value).
PLAN_SCHEMA_VERSION, PLAN_TENSORS, PLAN_STEPS, PLAN_WEIGHTS = 0, 4, 5, 8
TENSOR_STORAGE, TENSOR_OFFSET, TENSOR_SIZE_BYTES = 4, 5, 6
STEP_INPUTS = 4
STORAGE_BINDING = 2
