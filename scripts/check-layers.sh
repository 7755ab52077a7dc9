#!/usr/bin/env bash
# Every #include "folder/file" in the tree is allowed by LAYERS (the one place
# that says which folder may use which); a same-folder include has no folder.
# A unit is the longest LAYERS name a path starts with: report/rules/x.c is
# in report/rules, report/diff.c in report. Then the calls inside report/,
# capture/ and writer/ (below). Prints each violation; exit 1 if any.
#   bash scripts/check-layers.sh
set -u
cd "$(dirname "$0")/.."
bad=0 obj= files=

# The calls inside the folders made of parts: each file compiled alone, an
# arrow from a file to every file that defines a symbol it uses (nm).
#  - report/: each part a folder (LAYERS); every arrow follows LAYERS or stays
#    in its part; no files call each other in a circle.
#  - capture/ and writer/: each part a file, in the order of its folder's
#    README table (the order a reader follows, top down); every arrow points
#    down that table (so no circle), and every file is in it (the sizes:
#    scripts/check-size.py). `dlsym` is the C library's: the
#    shim exports one in front of it (capture/dlsym.c) that passes its own
#    lookups straight through, so a call to it is no arrow.
if command -v nm > /dev/null && command -v "${CC:-cc}" > /dev/null; then
    obj=$(mktemp -d /tmp/cltrace-layers.XXXXXX)
    trap 'rm -rf "$obj"' EXIT
    files=$(find report capture writer -name '*.c' ! -name fuzz_reader.c | sort)
    # Each file's object: make's own where nothing it was built from is
    # newer (its .d file lists them; make compiles each file alone too),
    # else compiled alone here, 4 at a time; a failure said. With
    # LAYERS_OBJ_CACHE=DIR a file whose text and every header are as when it
    # was compiled there is not compiled again (tests/tools.sh checks a copy
    # of the tree that differs in three files). One process: as a shell
    # loop it forked ~8 times a file, 6 s of system time on a 2-core VM.
    # shellcheck disable=SC2086   # the file names, split
    /usr/bin/python3 - "$obj" "${LAYERS_OBJ_CACHE:-}" "${CC:-cc}" $files <<'PY' || bad=1
import hashlib, os, shutil, subprocess, sys
obj, cache, cc, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
hdrs = ""
if cache:
    os.makedirs(cache, exist_ok=True)
    heads = []      # the folders of code (a scratch folder's headers beside them change no object)
    for top in ("common", "trace", "writer", "capture", "launcher", "report", "viewer", "include", "tests",
                "examples", "replay", "override", "try"):
        for root, dirs, names in os.walk(top):
            heads += [os.path.join(root, n) for n in names if n.endswith(".h")]
    h = hashlib.sha1()
    for path in sorted(heads):
        h.update(open(path, "rb").read())
    hdrs = h.hexdigest()[:16]

def made(f):
    for m in ("build/pic/%s.o" % f[:-2], "build/obj/%s.o" % f[:-2]):
        d = m[:-2] + ".d"
        if not (os.path.isfile(m) and os.path.isfile(d)):
            continue
        t = os.stat(m).st_mtime_ns
        deps = [x for line in open(d) for x in line.partition(":")[2].replace("\\", " ").split()]
        try:
            if all(os.stat(x).st_mtime_ns <= t for x in deps):
                return m
        except OSError:         # a file gone
            continue
    return None

jobs, failed = [], []
def reap(most):
    while len(jobs) > most:
        f, o, c, p = jobs.pop(0)
        err = p.communicate()[1]
        if p.returncode:
            print("%s: does not compile alone" % f)
            print(err, end="")
            failed.append(f)
        elif c:
            shutil.copyfile(o, c)

for f in files:
    o, c = os.path.join(obj, f.replace("/", "_") + ".o"), ""
    if cache:
        key = hashlib.sha1(open(f, "rb").read()).hexdigest()[:16]
        c = os.path.join(cache, "%s-%s-%s.o" % (key, hdrs, f.replace("/", "_")))
        if os.path.isfile(c):
            shutil.copyfile(c, o)
            continue
    m = made(f)
    if m:
        shutil.copyfile(m, o)
        if c:
            shutil.copyfile(m, c)
        continue
    jobs.append((f, o, c, subprocess.Popen([cc, "-std=gnu11", "-I.", "-c", "-o", o, f], stderr=subprocess.PIPE,
                                           text=True)))
    reap(3)
reap(0)
sys.exit(1 if failed else 0)
PY
fi
/usr/bin/python3 - "$obj" $files <<'PY' || bad=1
import os, re, subprocess, sys
obj, files = sys.argv[1], sys.argv[2:]     # obj "": no compiler or nm, includes only
allow, units = {}, []
for line in open("LAYERS"):
    line = line.split("#")[0]
    if ":" in line:
        k, v = line.split(":", 1)
        allow[k.strip()] = v.split()
        units.append(k.strip())
def unit(p):
    return max((u for u in units if p.startswith(u + "/")), key=len, default="")
bad = 0

# every #include (a shell loop forked twice an include: 6 s of a 2-core VM)
found = subprocess.run(["find", "common", "trace", "writer", "capture", "launcher", "report", "viewer", "include",
                        "tests", "examples", "replay", "override", "try", "(", "-name", "*.c", "-o", "-name", "*.h",
                        ")", "-print0"], capture_output=True, text=True).stdout
include = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]*)"', re.M)
for f in (x for x in found.split("\0") if x):
    top = unit(f)
    if not top:
        print('%s: folder %s is not in LAYERS' % (f, f.split("/")[0]))
        bad = 1
        continue
    for inc in include.findall(open(f, errors="replace").read()):
        if inc.startswith("../"):       # up within its own unit
            path = os.path.relpath(os.path.normpath(os.path.join(os.path.dirname(f), inc)))
            if not (os.path.exists(path) and unit(path) == top):
                print('%s: includes "%s": outside %s (name the folder)' % (f, inc, top))
                bad = 1
            continue
        if "/" not in inc:              # its own folder, or one above it in the same unit
            d = os.path.dirname(f)
            while not os.path.exists(os.path.join(d, inc)) and d not in (top, ".", ""):
                d = os.path.dirname(d)
            if not os.path.exists(os.path.join(d, inc)):
                print('%s: includes "%s", not in its folder' % (f, inc))
                bad = 1
            continue
        dep = unit(inc)
        if not dep:
            print('%s: includes "%s": not in a LAYERS folder' % (f, inc))
            bad = 1
        elif dep != top and dep not in allow.get(top, []):
            print('%s: includes "%s": %s may not use %s (LAYERS)' % (f, inc, top, dep))
            bad = 1
if not obj:
    sys.exit(bad)

NOT_ARROWS = {"dlsym"}

# every object's symbols from one nm (one per object took ~0.1 s each here, 14 s in all)
symbols = {f: [] for f in files}
of_object = {os.path.join(obj, f.replace("/", "_") + ".o"): f for f in files}
listing = subprocess.run(["nm", "-A"] + [o for o in of_object if os.path.exists(o)], capture_output=True,
                         text=True).stdout
for line in listing.splitlines():
    path, _, rest = line.partition(":")     # "OBJECT:VALUE TYPE NAME", "OBJECT:   U NAME"
    if path in of_object:
        symbols[of_object[path]].append(rest.split())

def graph(group):
    defs, uses = {}, {}
    for f in group:
        uses[f] = set()
        for parts in symbols[f]:
            if len(parts) == 2 and parts[0] == "U":
                uses[f].add(parts[1])
            elif len(parts) == 3 and parts[1] in "TDRBC":
                defs.setdefault(parts[2], f)
    edges, why = {}, {}
    for f in group:
        edges[f] = sorted({defs[s] for s in uses[f] if s in defs and defs[s] != f and s not in NOT_ARROWS})
        for s in uses[f]:
            if s in defs and defs[s] != f and s not in NOT_ARROWS:
                why.setdefault((f, defs[s]), []).append(s)
    return edges, why

def circles(edges):
    index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1
        stack.append(v); on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = stack.pop(); on.discard(w); c.append(w)
                if w == v:
                    break
            if len(c) > 1:
                comps.append(sorted(c))
    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return comps

# report/: parts are folders
rep = [f for f in files if f.startswith("report/")]
edges, _ = graph(rep)
for f, to in edges.items():
    for g in to:
        if unit(g) != unit(f) and unit(g) not in allow.get(unit(f), []):
            print("%s calls %s: %s may not use %s (LAYERS)" % (f, g, unit(f), unit(g)))
            bad = 1
for c in circles(edges):
    print("report/ files that call each other in a circle: %s" % " ".join(c))
    bad = 1
summary = ["report/: %d files, %d arrows, each down the pipeline" % (len(rep), sum(len(t) for t in edges.values()))]

# capture/, writer/: parts are files, in their README table's order
for folder in ("capture", "writer"):
    group = [f for f in files if f.startswith(folder + "/")]
    rows = [l for l in open(os.path.join(folder, "README.md")) if l.startswith("| `")]
    rank = {}
    for i, row in enumerate(rows):
        for name in re.findall(r"`([^`]+)`", row.split("|")[1]):
            for f in group + [os.path.join(folder, n) for n in os.listdir(folder)]:
                rel = f[len(folder) + 1:]
                if (rel == name or (name.endswith("/") and rel.startswith(name))) and f not in rank:
                    rank[f] = i
    for f in sorted(set(group) | {os.path.join(folder, n) for n in os.listdir(folder) if n.endswith((".c", ".h"))}):
        if f not in rank:
            print("%s: not in %s/README.md's table of parts" % (f, folder))
            bad = 1
    edges, why = graph(group)
    for f, to in edges.items():
        for g in to:
            if f in rank and g in rank and rank[g] <= rank[f]:
                print("%s calls %s (%s): up %s/README.md's order of parts" % (f, g, " ".join(sorted(why[(f, g)])[:4]), folder))
                bad = 1
    for c in circles(edges):
        print("%s/ files that call each other in a circle: %s" % (folder, " ".join(c)))
        bad = 1
    summary.append("%s/: %d files, %d arrows, each down its README's order" % (folder, len(group),
                                                                               sum(len(t) for t in edges.values())))
if not bad:
    print("layers: " + "; ".join(summary) + "; no circle")
sys.exit(bad)
PY
[ $bad -eq 0 ] && echo "layers: every include follows LAYERS"
exit $bad
