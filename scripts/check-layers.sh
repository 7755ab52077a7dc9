#!/usr/bin/env bash
# Every #include "folder/file" in the tree is allowed by LAYERS (the one place
# that says which folder may use which); a same-folder include has no folder.
# A unit is the longest LAYERS name a path starts with: report/rules/x.c is
# in report/rules, report/diff.c in report. Then, for report/ (whose parts
# share one program), the calls too: each file compiled alone, an arrow from
# a file to every file that defines a symbol it uses; every arrow must
# follow LAYERS (or stay in its unit) and no files may call each other in a
# circle. Prints each violation; exit 1 if any.  bash scripts/check-layers.sh
set -u
cd "$(dirname "$0")/.."
declare -A allow
units=()
while read -r line; do
    line=${line%%#*}
    [[ $line == *:* ]] || continue
    allow[${line%%:*}]=" ${line#*:} "
    units+=("${line%%:*}")
done < LAYERS
unit_of() {   # unit_of PATH: the longest LAYERS name it starts with
    local best="" u
    for u in "${units[@]}"; do
        [[ $1 == "$u"/* && ${#u} -gt ${#best} ]] && best=$u
    done
    echo "$best"
}
bad=0
while IFS= read -r -d '' f; do
    top=$(unit_of "$f")
    [ -n "$top" ] || { echo "$f: folder ${f%%/*} is not in LAYERS"; bad=1; continue; }
    while IFS= read -r inc; do
        case $inc in
            ../*)   # up within its own unit
                local_path=$(realpath -m --relative-to=. "$(dirname "$f")/$inc")
                [ -e "$local_path" ] && [ "$(unit_of "$local_path")" = "$top" ] ||
                    { echo "$f: includes \"$inc\": outside $top (name the folder)"; bad=1; }
                continue ;;
            */*) ;;
            *)      # its own folder, or one above it in the same unit
                d=$(dirname "$f")
                while [ ! -e "$d/$inc" ] && [ "$d" != "$top" ] && [ "$d" != . ]; do d=$(dirname "$d"); done
                [ -e "$d/$inc" ] || { echo "$f: includes \"$inc\", not in its folder"; bad=1; }
                continue ;;
        esac
        dep=$(unit_of "$inc")
        [ -n "$dep" ] || { echo "$f: includes \"$inc\": not in a LAYERS folder"; bad=1; continue; }
        [ "$dep" = "$top" ] && continue
        [[ ${allow[$top]} == *" $dep "* ]] || { echo "$f: includes \"$inc\": $top may not use $dep (LAYERS)"; bad=1; }
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find common trace writer capture launcher report viewer include tests examples replay \
              \( -name '*.c' -o -name '*.h' \) -print0)

# report/'s calls: compiled one file at a time, symbols read with nm
if command -v nm > /dev/null && command -v "${CC:-cc}" > /dev/null; then
    obj=$(mktemp -d /tmp/cltrace-layers.XXXXXX)
    trap 'rm -rf "$obj"' EXIT
    files=$(find report -name '*.c' ! -name fuzz_reader.c | sort)
    for f in $files; do
        o=$obj/$(echo "$f" | tr / _).o
        "${CC:-cc}" -std=gnu11 -I. -c -o "$o" "$f" 2> "$obj/err" || { echo "$f: does not compile alone"; cat "$obj/err"; bad=1; }
    done
    /usr/bin/python3 - "$obj" $files <<'PY' || bad=1
import os, subprocess, sys
obj, files = sys.argv[1], sys.argv[2:]
allow, units = {}, []
for line in open("LAYERS"):
    line = line.split("#")[0]
    if ":" in line:
        k, v = line.split(":", 1)
        allow[k.strip()] = v.split()
        units.append(k.strip())
def unit(p):
    return max((u for u in units if p.startswith(u + "/")), key=len, default="")
defs, uses = {}, {}
for f in files:
    out = subprocess.run(["nm", os.path.join(obj, f.replace("/", "_") + ".o")], capture_output=True,
                         text=True).stdout
    uses[f] = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            uses[f].add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDRB":
            defs.setdefault(parts[2], f)
edges = {f: sorted({defs[s] for s in uses[f] if s in defs and defs[s] != f}) for f in files}
bad = 0
for f, to in edges.items():
    for g in to:
        if unit(g) != unit(f) and unit(g) not in allow.get(unit(f), []):
            print("%s calls %s: %s may not use %s (LAYERS)" % (f, g, unit(f), unit(g)))
            bad = 1
# circles: Tarjan's strongly connected components
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
for v in files:
    if v not in index:
        visit(v)
for c in comps:
    print("report/ files that call each other in a circle: %s" % " ".join(c))
    bad = 1
print("layers: report/: %d files, %d arrows, no circle, each arrow down the pipeline" % (
    len(files), sum(len(t) for t in edges.values())) if not bad else "", end="\n" if not bad else "")
sys.exit(bad)
PY
fi
[ $bad -eq 0 ] && echo "layers: every include follows LAYERS"
exit $bad
