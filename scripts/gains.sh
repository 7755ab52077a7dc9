#!/usr/bin/env bash
# What the report's estimated gains are worth: each problem/fix example run
# under cltrace, the estimated gain of the problem's finding held against the
# measured difference between the problem and --fixed runs, in the same
# metric (device time from the two traces). Prints a Markdown table (the one
# in examples/README.md). Runs on any OpenCL device (OCL_PLATFORM picks one):
#   bash scripts/gains.sh [REPEATS]          (after make all examples)
# Each pair runs REPEATS times (default 3), problem and fix alternating; the
# median of each figure is kept.
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
REPS=${1:-3}
W=$(mktemp -d /tmp/cltrace-gains.XXXXXX)
trap 'rm -rf "$W"' EXIT
OUT=$W . scripts/nvidia-icd.sh
for name in transfers sync underfill workgroup; do
    for r in $(seq "$REPS"); do
        for v in problem fixed; do
            flag=$([ $v = fixed ] && echo --fixed || true)
            CLTRACE_QUIET=1 CLTRACE_OUTPUT="$W/$name-$v-$r.%p.pftrace" LD_PRELOAD=$B/libcltrace.so \
                "$B/examples/$name" $flag > /dev/null
            "$B/cltrace-report" --format json -o "$W/$name-$v-$r.json" "$W/$name-$v-$r".*.pftrace* || true
        done
    done
done
/usr/bin/python3 - "$W" "$REPS" <<'PY'
import json, statistics, sys
w, reps = sys.argv[1], int(sys.argv[2])
def load(name, v, r):
    return json.load(open(f"{w}/{name}-{v}-{r}.json"))
def transfer_ns(d):
    return sum(d["transfers"][k]["ns"] for k in ("host_to_device", "device_to_host"))
def kernel0_ns(d):
    return d["kernels"][0]["device_ns"] if d["kernels"] else 0
# example, the problem's rule, the measured metric (what the fix changes), its name
pairs = [
    ("transfers", "small-transfers", transfer_ns, "host<->device transfer time"),
    ("sync", "serialization", lambda d: d["timeline"]["span_ns"], "device timeline (first start to last end)"),
    ("underfill", "under-filled-device", kernel0_ns, "the kernel's device time"),
    ("workgroup", "work-group-multiple", kernel0_ns, "device time of local 100 (fix: 128)"),
]
dev = ""
print("| example | finding | metric | estimated gain (ms) | measured gain (ms), median (min … max) | estimate vs measured |")
print("|---|---|---|---:|---:|---:|")
for name, rule, metric, what in pairs:
    est, meas = [], []
    for r in range(1, reps + 1):
        p, f = load(name, "problem", r), load(name, "fixed", r)
        dev = dev or p["occupancy_model"]
        hits = [x for x in p["findings"] if x["rule"] == rule and x.get("estimated_gain_ns") is not None]
        # the workgroup example's first configuration (local 100) only
        hits = [x for x in hits if name != "workgroup" or "local=100" in x["where"]]
        est.append(hits[0]["estimated_gain_ns"] if hits else float("nan"))
        meas.append(metric(p) - metric(f))
    e, m = statistics.median(est), statistics.median(meas)
    err = f"{100 * (e - m) / m:+.0f} %" if m > 0 and e == e else "n/a"
    print(f"| `{name}` | `{rule}` | {what} | {e / 1e6:.3f} | {m / 1e6:.3f} ({min(meas) / 1e6:.3f} … "
          f"{max(meas) / 1e6:.3f}) | {err} |")
PY
