#!/usr/bin/env python3
"""The size rules, for the whole tree (make test runs it): every hand-written
C file at most 700 lines, every function at most 80, so that each reads in
one sitting. Generated code aside (*/generated/, protoc-c's output), and the
tests' own programs and vectors (tests/). Prints each file or function over;
exit 1 if any.   python3 scripts/check-size.py [ROOT]"""
import os
import re
import sys

MAX_FILE, MAX_FUNCTION = 700, 80
FOLDERS = ("capture", "writer", "trace", "common", "report", "try", "replay", "override", "launcher", "probe", "nvregs",
           "viewer", "include", "examples")


def generated(path):
    return "/generated/" in path or path.endswith((".pb-c.c", ".pb-c.h"))


def functions(lines):
    """(name, first line, length): a definition's head at the margin, its body from a "{" alone at the
    margin to the "}" alone at the margin (the house style, which every file follows)."""
    name = head = start = None
    for i, line in enumerate(lines):
        m = re.match(r"^[A-Za-z_][^;=]*?\b(\w+)\(", line)
        if start is None and m and not line.startswith(("typedef", "#", "struct", "static const", "enum")):
            name, head = m.group(1), i
        elif start is None and m and line.startswith(("static const", "struct")) and line.rstrip().endswith(")"):
            name, head = m.group(1), i
        if line == "{" and start is None and name:
            start = head
        if line == "}" and start is not None:
            yield name, start + 1, i - start + 1
            name = start = None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    os.chdir(root)
    over, files, fns = [], 0, 0
    for top in FOLDERS:
        for d, _, names in os.walk(top):
            for n in sorted(names):
                path = os.path.join(d, n)
                if not n.endswith((".c", ".h")) or generated(path):
                    continue
                lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
                files += 1
                if len(lines) - 1 > MAX_FILE:
                    over.append("%s: %d lines (at most %d)" % (path, len(lines) - 1, MAX_FILE))
                for name, first, length in functions(lines):
                    fns += 1
                    if length > MAX_FUNCTION:
                        over.append("%s:%d: %s() is %d lines (at most %d)" % (path, first, name, length,
                                                                             MAX_FUNCTION))
    for line in over:
        print(line)
    print("%d files, %d functions: %d over the size rules" % (files, fns, len(over)))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
