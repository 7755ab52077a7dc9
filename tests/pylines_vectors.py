"""Test vectors for writer/pylines.c: for code objects of a few standard
modules (every nested function too), each location table with its first
line, and for every instruction the line CPython itself gives (co_lines;
0 where it has none). CPython 3.11 or 3.12 only (the table's format)."""
import sys
import types

if sys.version_info[:2] not in ((3, 11), (3, 12)):
    sys.exit(77)


def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c)


out = sys.stdout
n = 0
for name in ("json.decoder", "argparse", "dataclasses", "asyncio.base_events", "email.message"):
    mod = __import__(name, fromlist=["_"])
    src = open(mod.__file__).read()
    for co in codes(compile(src, mod.__file__, "exec")):
        out.write("F %d %s\n" % (co.co_firstlineno, co.co_linetable.hex() or "-"))
        for start, end, line in co.co_lines():
            for at in range(start, end, 2):
                out.write("O %d %d\n" % (at, line or 0))
        n += 1
sys.stderr.write("%d code objects\n" % n)
