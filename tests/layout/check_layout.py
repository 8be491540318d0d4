#!/usr/bin/env python3
"""The layout rules of docs/architecture.md that a machine can check.

1. Every op family of kernels/op_families.def has its file in every folder, named by its stem:
   kernels/<file>.h, kernels/cpu/<file>.cc, runtime/src/prepare/<file>.cc,
   converter/src/ops/<file>.cc; CUDA rows also kernels/cuda/<file>.cu and <file>_select.cc,
   CPU_ONLY rows neither (the mark and the code must agree).
2. No source file over 600 lines; no function over 150 lines (C, C++, CUDA, Python).
3. No file named after a coverage group (group, extra, nn, seq: the names of how the work was
   divided, not of what the code is).

Prints every violation, one per line, and exits 1 when there is any. Run from anywhere:
    python3 tests/layout/check_layout.py [--root DIR]
"""
import argparse
import ast
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 150
SOURCE_EXTS = ('.c', '.cc', '.h', '.cu', '.cuh', '.py', '.inc', '.def')
C_EXTS = ('.c', '.cc', '.h', '.cu', '.cuh', '.inc')
CODE_DIRS = ('kernels', 'runtime', 'converter', 'tests', 'examples', 'schemas', 'cmake')
GROUP_NAME = re.compile(r'(^|[_/])(group|groups|extra|nn|seq)([_.]|$)')
FAMILY_ROW = re.compile(r'^JP_OP_FAMILY\((\w+),\s*(\w+),\s*(\w+),\s*(CUDA|CPU_ONLY)\)', re.M)


def tracked_files(root):
    """The files git tracks under CODE_DIRS; outside a checkout, every file there."""
    git = subprocess.run(['git', '-C', root, 'ls-files'], capture_output=True, text=True)
    if git.returncode == 0:
        files = git.stdout.splitlines()
    else:
        files = [os.path.relpath(os.path.join(d, f), root)
                 for top in CODE_DIRS for d, _, names in os.walk(os.path.join(root, top))
                 for f in names]
    return sorted(f for f in files if f.split('/')[0] in CODE_DIRS)


def read_families(root):
    with open(os.path.join(root, 'kernels', 'op_families.def'), encoding='utf-8') as f:
        return FAMILY_ROW.findall(f.read())


def family_problems(root, families):
    problems = []
    if len(families) < 2:
        problems.append('kernels/op_families.def: no JP_OP_FAMILY rows found')
    for name, stem, _params, backends in families:
        need = [f'kernels/{stem}.h', f'kernels/cpu/{stem}.cc', f'runtime/src/prepare/{stem}.cc',
                f'converter/src/ops/{stem}.cc']
        cuda = [f'kernels/cuda/{stem}.cu', f'kernels/cuda/{stem}_select.cc']
        for path in need + (cuda if backends == 'CUDA' else []):
            if not os.path.isfile(os.path.join(root, path)):
                problems.append(f'op family {name}: {path} is missing')
        if backends == 'CPU_ONLY':
            for path in cuda:
                if os.path.exists(os.path.join(root, path)):
                    problems.append(f'op family {name} is marked CPU_ONLY in '
                                    f'kernels/op_families.def but {path} exists')
    return problems


def strip_c(text):
    """Comments and string/char literals blanked, newlines kept (so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append('\n' * text.count('\n', i, j))
            i = j
        elif c == '"' or c == "'":
            raw = c == '"' and i > 0 and text[i - 1] == 'R'
            if raw:  # R"delim( ... )delim"
                k = text.find('(', i)
                delim = ')' + text[i + 1:k] + '"'
                j = text.find(delim, k)
                j = n if j < 0 else j + len(delim)
            else:
                j = i + 1
                while j < n and text[j] != c and text[j] != '\n':
                    j += 2 if text[j] == '\\' else 1
                j += 1
            out.append(' ' + '\n' * text.count('\n', i, min(j, n)))
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


CONTROL = re.compile(r'\b(if|for|while|switch|catch|do|else|return)\s*$')
SCOPE = re.compile(r'\b(namespace|struct|class|union|enum)\b[^;()]*$|extern\s*$')


def c_functions(text):
    """(name, first line, line count) of each function body at namespace or class scope."""
    code = strip_c(text)
    found = []
    stack = []  # per open brace: ('scope' | 'func' | 'other', start line)
    names = []  # of the functions open on the stack
    header_start = 0
    line = 1
    for i, c in enumerate(code):
        if c == '\n':
            line += 1
        elif c in ';}':
            if c == '}' and stack:
                kind, start = stack.pop()
                if kind == 'func':
                    found.append((names.pop(), start, line - start + 1))
            header_start = i + 1
        elif c == '{':
            in_function = any(k in ('func', 'other') for k, _ in stack)
            header = code[header_start:i]
            if in_function:
                stack.append(('other', line))
            elif SCOPE.search(header.strip()) or header.strip().endswith('extern "C"'):
                stack.append(('scope', line))
            else:
                # A body: the header ends in ')' (+ qualifiers, a trailing return type or a
                # constructor's initializer list) and is no control statement or initializer.
                h = re.sub(r'\s+', ' ', header).strip()
                h = re.sub(r'^template ?<.*?> ?(?=[A-Za-z_])', '', h)  # default arguments' '='
                is_func = (')' in h and not h.endswith('=') and '=' not in h.split('(')[0]
                           and not CONTROL.search(h.split('(')[0].strip()))
                if is_func:
                    m = re.search(r'([~\w:]+)\s*\(', h)
                    names.append(m.group(1) if m else '?')
                    stack.append(('func', line))
                else:
                    stack.append(('other' if stack and stack[-1][0] != 'scope' else 'scope', line))
            header_start = i + 1
    return found


def py_functions(text, path):
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as e:
        return [('<syntax error: %s>' % e, 1, 0)]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node.name, node.lineno, node.end_lineno - node.lineno + 1))
    return out


def size_problems(root, files):
    problems = []
    for path in files:
        if not path.endswith(SOURCE_EXTS):
            continue
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue
        with open(full, encoding='utf-8', errors='replace') as f:
            text = f.read()
        lines = text.count('\n') + (0 if text.endswith('\n') else 1)
        if lines > MAX_FILE_LINES:
            problems.append(f'{path}: {lines} lines (at most {MAX_FILE_LINES})')
        funcs = py_functions(text, path) if path.endswith('.py') else (
            c_functions(text) if path.endswith(C_EXTS) else [])
        for name, start, count in funcs:
            if count > MAX_FUNCTION_LINES:
                problems.append(f'{path}:{start}: function {name} is {count} lines '
                                f'(at most {MAX_FUNCTION_LINES})')
    return problems


def name_problems(files, families):
    """Files named after a group; a family's own stem (group_norm) is a name, not a group."""
    stems = sorted((f[1] for f in families), key=len, reverse=True)
    problems = []
    for path in files:
        stem = os.path.splitext(path)[0]
        for family_stem in stems:
            stem = re.sub(r'(^|(?<=[_/]))' + family_stem + r'(?=[_./]|$)', 'family', stem)
        if GROUP_NAME.search(stem):
            problems.append(f'{path}: named after a coverage group; name it by what it is')
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--root', default=os.path.join(os.path.dirname(__file__), '..', '..'))
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    files = tracked_files(root)
    families = read_families(root)
    problems = family_problems(root, families) + size_problems(root, files) + name_problems(files, families)
    for p in problems:
        print(p)
    print(f'layout: {len(families)} op families, {len(files)} files checked, '
          f'{len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
