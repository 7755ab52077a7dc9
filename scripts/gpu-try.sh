#!/usr/bin/env bash
# The examples' fixes tried in the programs on an NVIDIA GPU (not in `make
# test`: CI has no GPU): `cltrace try` with each example's fix as an override
# (examples/*/fix.cl) or a local size, beside the problem and fixed examples
# measured the same way (traced with the same fingerprints, interleaved, the
# kernel's device time). The
# table goes to stdout, every run's traces to OUTDIR.
#   scripts/gpu-try.sh [OUTDIR] [RUNS]     (default build/gpu-try, 5)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${1:-build/gpu-try}
RUNS=${2:-5}
mkdir -p "$OUT"
export CLTRACE_QUIET=1 OCL_PLATFORM=${OCL_PLATFORM:-NVIDIA}
# shellcheck source=scripts/nvidia-icd.sh
. scripts/nvidia-icd.sh
icd_only "$OCL_PLATFORM"
make -s all build/examples/nbody build/examples/transpose build/examples/matmul build/examples/copy \
    build/examples/workgroup > /dev/null || exit 1
PY=${PYTHON:-python3}
rc=0
while IFS=: read -r x k0 k1 args <&3; do   # fd 3: the programs keep stdin
    # shellcheck disable=SC2086   # the change's flags, split on purpose
    build/cltrace try --runs "$RUNS" --format json --keep "$OUT/try-$x" $args -- "build/examples/$x" \
        > "$OUT/try-$x.json"
    echo "$x: cltrace try exit $?"
    for i in $(seq "$RUNS"); do
        for v in "" --fixed; do
            # as try measures: the same fingerprints (its kernels, what is read back)
            CLTRACE_FINGERPRINT="$k0,$k1,clEnqueueReadBuffer" build/cltrace -o "$OUT/ex-$x$v-$i/" -- \
                "build/examples/$x" $v > /dev/null || rc=1
        done
    done
done 3< <(grep -v '^#' examples/fixes.txt)
$PY - "$OUT" <<'PYEOF' || rc=1
import glob, json, subprocess, sys
out = sys.argv[1]
specs = [l.split(":")[:3] for l in open("examples/fixes.txt") if l.strip() and not l.startswith("#")]
def kernel_ns(trace, name):
    j = json.loads(subprocess.run(["build/cltrace-report", "--format", "json", trace], capture_output=True,
                                  text=True).stdout)
    return sum(k["device_ns"] for k in j["kernels"] if k["name"] == name)
def med(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
print("| example | `cltrace try`, kernel µs before → after (median) | after / before | results | "
      "the examples, problem → fixed µs | fixed / problem |")
print("|---|---:|---:|---|---:|---:|")
for x, k0, k1 in specs:
    r = json.load(open("%s/try-%s.json" % (out, x)))
    t = [k for k in r["kernels"] if k["name"] == k0]
    prob = [kernel_ns(glob.glob("%s/ex-%s-%d/*.pftrace*" % (out, x, i))[0], k0)
            for i in range(1, 1 + len(glob.glob("%s/ex-%s-[0-9]*" % (out, x))))]
    fixd = [kernel_ns(glob.glob("%s/ex-%s--fixed-%d/*.pftrace*" % (out, x, i))[0], k1)
            for i in range(1, 1 + len(glob.glob("%s/ex-%s--fixed-*" % (out, x))))]
    if not t:
        print("| %s | %s | | | | |" % (x, r["verdict"]["text"][:80]))
        continue
    b, a = t[0]["before"]["median_ns"], t[0]["after"]["median_ns"]
    print("| %s | %.1f → %.1f | %.2fx | %s (exit %d) | %.1f → %.1f | %.2fx |"
          % (x, b / 1e3, a / 1e3, a / b, r["results"]["status"], r["verdict"]["exit"], med(prob) / 1e3,
             med(fixd) / 1e3, med(fixd) / med(prob)))
PYEOF
exit $rc
