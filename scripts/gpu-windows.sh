#!/usr/bin/env bash
# Windows and the flight recorder on an NVIDIA GPU (not in `make test`: CI
# has no GPU). The launch-bound loop (build/tests/bench_calls launch N: N
# kernels back to back, one clFinish), interleaved REPS times:
#   untraced | outside a window throughout (--window manual, never started)
#   | a 1 s window every 10 s (--window 5s+1s --every 10s) | every command
#   timed (no window) | --ring 64 (every command timed, the last 64 MiB kept)
# Wall time per launch (min and median of REPS), against untraced; for the
# windowed run, the windows the trace holds and the launches in them.
#   scripts/gpu-windows.sh [OUTDIR]      (default build/gpu-windows)
#   N=5000000 REPS=2 scripts/gpu-windows.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/gpu-windows}
N=${N:-5000000}
REPS=${REPS:-2}
mkdir -p "$OUT"
rm -f "$OUT"/*.pftrace* "$OUT"/runs.txt
export CLTRACE_QUIET=1 OCL_PLATFORM=${OCL_PLATFORM:-NVIDIA} CLBENCH_PLATFORM=${OCL_PLATFORM:-NVIDIA}
# shellcheck source=scripts/nvidia-icd.sh
. scripts/nvidia-icd.sh
icd_only "$OCL_PLATFORM"      # its driver alone, also where the host lists several in OCL_ICD_FILENAMES
make -s all build/tests/bench_calls > /dev/null || exit 1
if command -v nvidia-smi > /dev/null; then nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; fi
SHIM=$PWD/build/libcltrace.so

run() {   # run MODE REP
    local env=()
    case $1 in
        outside) env=(LD_PRELOAD="$SHIM" CLTRACE_WINDOW=manual) ;;
        windows) env=(LD_PRELOAD="$SHIM" CLTRACE_WINDOW=5s+1s CLTRACE_WINDOW_EVERY=10s) ;;
        timed)   env=(LD_PRELOAD="$SHIM") ;;
        ring)    env=(LD_PRELOAD="$SHIM" CLTRACE_RING_MB=64) ;;
    esac
    [ "$1" = untraced ] || env+=(CLTRACE_OUTPUT="$OUT/$1-$2.pftrace")
    local o t0 t1
    t0=$(date +%s.%N)
    o=$(env "${env[@]}" /usr/bin/time -f "maxrss_kb %M" build/tests/bench_calls launch "$N" 2>&1)
    t1=$(date +%s.%N)
    echo "$1 $2 $(echo "$o" | awk '/^wall_ns_per_call/ {print $2}') $(echo "$o" | awk '/^maxrss_kb/ {print $2}') \
$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')" | tee -a "$OUT/runs.txt"
}
echo "mode rep wall_ns_per_launch maxrss_kb process_s   ($N launches)"
for rep in $(seq 1 "$REPS"); do
    for mode in untraced outside windows timed ring; do run $mode "$rep"; done
done

echo "== per launch, wall: min and median of $REPS; against untraced"
python3 - "$OUT/runs.txt" <<'PY'
import statistics, sys
v = {}
for line in open(sys.argv[1]):
    f = line.split()
    v.setdefault(f[0], []).append(float(f[2]))
for m in ("untraced", "outside", "windows", "timed", "ring"):
    if m in v:
        print("%-9s min %8.1f ns  median %8.1f ns  %.3fx" % (m, min(v[m]), statistics.median(v[m]), min(v[m]) / min(v["untraced"])))
PY
echo "== the windowed trace: its windows and the launches in them"
t=$(ls "$OUT"/windows-1.*.pftrace* 2> /dev/null | head -n 1)
if [ -n "$t" ]; then
    build/cltrace-report --format json "$t" | python3 -c '
import json, sys
r = json.load(sys.stdin)
w = r.get("windows", {})
k = {x["name"]: x for x in r.get("kernels", [])}
print("windows:", w.get("count"), "recorded %.2f s" % (w.get("recorded_ns", 0) / 1e9),
      "launches recorded:", sum(x["launches"] for x in k.values()))'
fi
ls -l "$OUT"/ring-1.* 2> /dev/null

# `cltrace ctl` under the launch loop on the GPU (tests/windows.sh does it on
# PoCL and 30 M light calls/s): snapshot, stop, start, snapshot, each answer
# timed, each snapshot whole (every launch made before the asking)
echo "== cltrace ctl under the launch loop: answer times"
for mode in ring window; do
    case $mode in
        ring) env=(CLTRACE_RING_MB=64) ;;
        window) env=(CLTRACE_WINDOW=0s) ;;
    esac
    env "${env[@]}" CLTRACE_OUTPUT="$OUT/ctl-$mode.%p.pftrace" LD_PRELOAD="$SHIM" \
        build/tests/bench_calls launch 200000000 > /dev/null 2>&1 &
    pid=$!
    sleep 3
    for c in snapshot stop start snapshot; do
        t0=$(date +%s%N)
        a=$(build/cltrace ctl $pid $c 2>&1)
        t1=$(date +%s%N)
        printf '%-6s %-8s %5d ms  %s\n' "$mode" "$c" $(((t1 - t0) / 1000000)) "$(echo "$a" | sed "s|$OUT/||" | cut -c1-80)"
        sleep 1
    done
    kill $pid; wait $pid 2> /dev/null
done
