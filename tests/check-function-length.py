#!/usr/bin/env python3
# No function in product code runs over MAX lines: each top-level function
# body is found by matching braces (comments, strings and character
# constants skipped) and measured from its first line to its closing brace.
# Prints "file:line: name: N lines" for each offender and exits 1, or
# "function length: ok".
import os
import re
import sys

MAX = 120
DIRS = ['core', 'decode', 'access', 'nccl', 'gate', 'probes', 'engine',
        'report']


def blank_out(src):
    """The source with comments, strings and char constants as spaces
    (newlines kept, so line numbers still match)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', src[i:j]))
            i = j
        elif src.startswith('//', i):
            j = src.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(re.sub(r'[^\n]', ' ', src[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def functions(path):
    """(name, first line, length) of each top-level function body."""
    text = blank_out(open(path, encoding='utf-8').read())
    depth, start, found = 0, None, []
    for m in re.finditer(r'[{};]', text):
        c = m.group()
        if c == '{':
            if depth == 0:
                start = m.start()
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0 and start is not None:
                head = text[:start].rstrip()
                # A function body follows a parameter list: "...)" (or
                # "...) __attribute__((...))"); a struct, enum or
                # initialiser does not.
                if head.endswith(')'):
                    # The declaration starts on the last line before the
                    # body that begins at column 0 with an identifier.
                    hl = head.split('\n')
                    first = len(hl)
                    while first > 1 and not re.match(r'[A-Za-z_]',
                                                     hl[first - 1]):
                        first -= 1
                    decl = '\n'.join(hl[first - 1:])
                    name = re.findall(r'(\w+)\s*\(', decl)
                    end = text.count('\n', 0, m.start()) + 1
                    found.append((name[0] if name else '?', first,
                                  end - first + 1))
                start = None
    return found


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    os.chdir(root)
    files = [os.path.join(d, f) for d in DIRS for f in sorted(os.listdir(d))
             if f.endswith('.c')] + ['gdrcheck.c']
    bad = 0
    for f in files:
        for name, line, length in functions(f):
            if length > MAX:
                print(f'{f}:{line}: {name}: {length} lines (max {MAX})')
                bad += 1
    print('function length: ok' if not bad else
          f'function length: {bad} functions over {MAX} lines')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
