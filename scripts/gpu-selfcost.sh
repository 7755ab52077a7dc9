#!/usr/bin/env bash
# What cltrace says it added to a run against the whole-process slowdown
# measured, on the GPU host (not in `make test`: CI has no GPU): the
# programs of scripts/selfcost-check.py, --long ones too, on NVIDIA's
# driver and on PoCL there (16 cores), REPS paired runs each.
#   scripts/gpu-selfcost.sh [OUTDIR]      (default build/gpu-selfcost)
#   REPS=9 PLATFORMS="NVIDIA Portable" scripts/gpu-selfcost.sh
# ONLY=enqueue:100,...: those programs only (selfcost-check.py --only)
# LONG=0: the short programs only (not --long: one platform then fits a
# 10-minute call)
# PLACEBO=1: a third run a round, threads that only wake up (selfcost-check.py --placebo)
# TEARDOWN=161: then the 0.05 s program's end, untraced, traced and idling
# before it ends, that many rounds (scripts/teardown-check.py).
# HELD=1 (the default): another process keeps the GPU initialized during the
# runs, as nvidia-persistenced does on most GPU servers; HELD=0: as the host
# is set, where persistence mode is off and each process is the GPU's only
# user. Then the driver initializes the GPU as a process first opens it
# (~200 ms) and de-initializes it as the process ends (~100 ms: an RCU
# barrier, the adapter's shutdown, in the kernel), and that end varies more
# than what cltrace adds to a short program (docs/PERFORMANCE.md).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${1:-build/gpu-selfcost}
mkdir -p "$OUT"
export OCL_PLATFORM=NVIDIA CLTRACE_QUIET=1
# shellcheck source=scripts/nvidia-icd.sh
. scripts/nvidia-icd.sh
make -s all build/tests/bench_calls build/tests/placebo.so > /dev/null || exit 1
if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
fi
if [ "${HELD:-1}" = 1 ]; then      # an OpenCL context held for the whole measurement, idle
    build/tests/bench_calls enqueue 1 --nap-us 36000000000 > /dev/null 2>&1 &
    holder=$!
    trap 'kill $holder 2> /dev/null' EXIT
    sleep 3
    kill -0 $holder 2> /dev/null && echo "(the GPU kept initialized by process $holder)" || echo "(no process holds the GPU)"
fi
# Each platform measured with its own driver alone (icd_only, nvidia-icd.sh):
# with NVIDIA's driver loaded beside it, PoCL's runs took 0.43-0.52 s where
# the slowdown was 0.01-0.05 s.
rc=0
for p in ${PLATFORMS:-NVIDIA Portable}; do
    echo "== $p"
    icd_only "$p"
    # the GPU host's target: within +-25 % of the figure, the bound within 1.5 x it
    python3 scripts/selfcost-check.py --platform "$p" $([ "${LONG:-1}" = 1 ] && echo --long) --figure --reps "${REPS:-15}" ${PLACEBO:+--placebo} ${ONLY:+--only "$ONLY"} \
        --out "$OUT/$p" | tee "$OUT/$p.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
    python3 - "$OUT/$p/selfcost.json" <<'PY' | tee -a "$OUT/$p.txt" || rc=1
import json, sys
worst = 0
for r in json.load(open(sys.argv[1])):
    k = r["upper_median_s"] / r["stated_median_s"] if r["stated_median_s"] > 0 else 1
    worst = max(worst, k)
    print("bound / figure %-46s %.2fx%s" % (r["program"][:46], k, "" if k <= 1.5 else "  OVER 1.5"))
sys.exit(worst > 1.5)
PY
    if [ -n "${SAMPLE:-}" ]; then
        python3 scripts/selfcost-check.py --platform "$p" --sample --reps "${REPS:-15}" --out "$OUT/$p-sampled" |
            tee "$OUT/$p-sampled.txt"
    fi
    if [ -n "${TEARDOWN:-}" ]; then
        python3 scripts/teardown-check.py --platform "$p" --rounds "$TEARDOWN" --naps 0.7,1.2,2.5 \
            --out "$OUT/$p-teardown.json" | tee "$OUT/$p-teardown.txt"
    fi
done
exit $rc
