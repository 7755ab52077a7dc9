#!/usr/bin/env bash
# make examples: run each example twice under cltrace (problem, --fixed) and
# check what cltrace-report says against examples/<name>/expect:
#   problem: RULE...   all of these are reported on the problem version
#   may: RULE...       timing-dependent info rules either version may get
# The fixed version gets none of the problem's rules; neither gets a rule in
# neither list. A finding about the machine (where: "machine", such as
# halting-idle-cpus on a VM whose idle CPUs halt at once) is about neither
# version: it is printed, not compared. Both versions print the same results (numbers within 1e-5).
# Each trace is checked with ../shared/tools/pftrace-lint where it exists.
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
OUT=${EXAMPLES_OUT:-$B/examples-run}
LINT=${PFTRACE_LINT:-../shared/tools/pftrace-lint}
mkdir -p "$OUT"
rm -f "$OUT"/*.pftrace*
[ -x "$LINT" ] || echo "examples: pftrace-lint not found at $LINT: traces not linted"
fail=0
for name in "$@"; do
    exp=examples/$name/expect
    want=$(sed -n 's/^problem://p' "$exp" | xargs)
    may=$(sed -n 's/^may://p' "$exp" | xargs)
    for v in problem fixed; do
        flag=$([ $v = fixed ] && echo --fixed)
        CLTRACE_QUIET=1 CLTRACE_OUTPUT="$OUT/$name-$v.%p.pftrace" LD_PRELOAD=$B/libcltrace.so \
            "$B/examples/$name" $flag > "$OUT/$name-$v.out" 2> "$OUT/$name-$v.err" ||
            { echo "FAIL  $name $v: exit status $? ($(tail -n 1 "$OUT/$name-$v.err"))"; fail=1; continue; }
        trace=$(ls "$OUT/$name-$v".*.pftrace* | head -n 1)
        "$B/cltrace-report" --format json -o "$OUT/$name-$v.json" "$trace" || true
        if [ -x "$LINT" ] && ! "$LINT" -q --proto trace/cltrace.proto "$trace" > "$OUT/$name-$v.lint" 2>&1; then
            echo "FAIL  $name $v: pftrace-lint: $(tail -n 2 "$OUT/$name-$v.lint")"; fail=1
        fi
    done
    /usr/bin/python3 - "$OUT/$name" "$want" "$may" <<'PY' || fail=1
import json, re, sys
base, want, may = sys.argv[1], set(sys.argv[2].split()), set(sys.argv[3].split())
name = base.rsplit("/", 1)[1]
try:
    found = {v: json.load(open("%s-%s.json" % (base, v)))["findings"] for v in ("problem", "fixed")}
    outs = [open("%s-%s.out" % (base, v)).read().split() for v in ("problem", "fixed")]
except (OSError, ValueError) as e:
    print("FAIL  %s: %s" % (name, e)); sys.exit(1)
got = {v: {f["rule"] for f in fs if f.get("where") != "machine"} for v, fs in found.items()}
machine = sorted({f["rule"] for fs in found.values() for f in fs if f.get("where") == "machine"})
errors = []
if not want <= got["problem"]:
    errors.append("problem lacks %s" % sorted(want - got["problem"]))
if got["problem"] - want - may:
    errors.append("problem also has %s" % sorted(got["problem"] - want - may))
if got["fixed"] & want:
    errors.append("fixed still has %s" % sorted(got["fixed"] & want))
if got["fixed"] - may:
    errors.append("fixed has %s" % sorted(got["fixed"] - may))
num = re.compile(r"^[-+]?\d+(\.\d*)?([eE][-+]?\d+)?$")
same = len(outs[0]) == len(outs[1]) and all(
    a == b or (num.match(a) and num.match(b) and abs(float(a) - float(b)) <= 1e-5 * max(abs(float(a)), 1e-30))
    for a, b in zip(*outs))
if not same:
    errors.append("results differ: %s vs %s" % (" ".join(outs[0]), " ".join(outs[1])))
print("%-5s %-10s problem: %-40s fixed: %s%s%s" % ("FAIL" if errors else "ok", name, ", ".join(sorted(got["problem"])),
      ", ".join(sorted(got["fixed"])) or "-", "  (machine: %s)" % ", ".join(machine) if machine else "",
      "".join("\n      " + e for e in errors)))
sys.exit(1 if errors else 0)
PY
done
exit $fail
