#!/usr/bin/env bash
# Proves the tracer on an NVIDIA GPU: a real program traced on the "NVIDIA
# CUDA" OpenCL platform, its output unchanged, every command's device time
# equal to what the program reads itself, register counts from the build,
# the clock calibration residual, and profiling switched on only for the
# commands timed. Not part of `make test` (CI has no GPU).
#
#   scripts/gpu-check.sh [OUTDIR]        (default build/gpu-check)
#
# Needs the build dependencies (scripts/deps.sh), an NVIDIA OpenCL driver,
# python3 with protobuf and protoc (for tests/tracedump.py); pftrace-lint is
# used when found (PFTRACE_LINT or ../shared/tools/pftrace-lint).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/gpu-check}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
LINT=${PFTRACE_LINT:-../shared/tools/pftrace-lint}
# CUDA_CACHE_DISABLE: NVIDIA caches compiled kernels; a cached build has a
# shorter log than a fresh one, which would make the two runs differ.
export OCL_PLATFORM=NVIDIA CLTRACE_QUIET=1 CUDA_CACHE_DISABLE=1

make -s all build/tests/timeline build/examples/vecadd
if command -v clinfo > /dev/null; then clinfo -l; fi

echo "== 1. output unchanged by the tracer (timeline and vecadd on NVIDIA)"
build/tests/timeline "$OUT/dur.plain" > "$OUT/timeline.plain"
# A first run's register counts compile after it ends (nvregs/README.md):
# the trace checked is the second run's, the counts read from the cache.
export XDG_CACHE_HOME=$OUT/cache
rm -rf "$XDG_CACHE_HOME" "$OUT"/timeline.*.pftrace*
CLTRACE_OUTPUT="$OUT/first/" LD_PRELOAD=$PWD/build/libcltrace.so build/tests/timeline "$OUT/dur.first" > /dev/null
for _ in $(seq 100); do
    [ "$(ls "$XDG_CACHE_HOME/cltrace/nvregs/" 2> /dev/null | grep -c '\.log$')" -ge 1 ] && break
    sleep 0.1
done
echo "first run: $(ls "$XDG_CACHE_HOME/cltrace/nvregs/" 2> /dev/null | grep -c '\.log$') programs' counts cached after it"
CLTRACE_OUTPUT="$OUT/timeline.%p.pftrace" LD_PRELOAD=$PWD/build/libcltrace.so \
    build/tests/timeline "$OUT/dur.traced" > "$OUT/timeline.traced"
cmp "$OUT/timeline.plain" "$OUT/timeline.traced"
cat "$OUT/timeline.traced"
build/examples/vecadd > "$OUT/vecadd.plain"
rm -f "$OUT"/vecadd.*.pftrace*
CLTRACE_OUTPUT="$OUT/vecadd.%p.pftrace" LD_PRELOAD=$PWD/build/libcltrace.so build/examples/vecadd > "$OUT/vecadd.traced"
cmp "$OUT/vecadd.plain" "$OUT/vecadd.traced"
TRACE=$(ls "$OUT"/timeline.*.pftrace*)
echo "unchanged; trace: $TRACE"

echo "== 2. the trace: every command, flows, durations = the app's own profiling"
$PY tests/checks.py timeline "$TRACE" "$OUT/dur.traced"
$PY tests/checks.py nvidia "$TRACE"
echo "ok"

echo "== 3. figures"
$PY tests/checks.py figures "$TRACE" "$OUT/dur.traced"

if [ -x "$LINT" ]; then
    echo "== 4. pftrace-lint"
    "$LINT" -q --proto trace/cltrace.proto "$TRACE" "$(ls "$OUT"/vecadd.*.pftrace*)"
fi

echo "== 5. lifetimes on NVIDIA: leaks with creation stacks, implicit references, errors"
make -s build/tests/lifetimes
for mode in leak implicit errors; do
    rm -f "$OUT"/lt-$mode.*.pftrace*
    build/tests/lifetimes $mode > "$OUT/lt-$mode.plain"
    CLTRACE_OUTPUT="$OUT/lt-$mode.%p.pftrace" LD_PRELOAD=$PWD/build/libcltrace.so \
        build/tests/lifetimes $mode > "$OUT/lt-$mode.out"
    cmp "$OUT/lt-$mode.plain" "$OUT/lt-$mode.out"
    $PY tests/checks.py lifetimes "$(ls "$OUT"/lt-$mode.*.pftrace*)" $mode "$OUT/lt-$mode.out"
    echo "$mode: ok ($(grep -c '^expect' "$OUT/lt-$mode.out") objects made)"
done

echo "== 6. the examples on NVIDIA: rules, and the device time each fix saves"
make -s $(sed -n 's/^EXAMPLES := /build\/examples\//p' Makefile | sed 's/ / build\/examples\//g')
EXAMPLES_OUT="$OUT/examples" bash scripts/check-examples.sh $(sed -n 's/^EXAMPLES := //p' Makefile) || true
for f in "$OUT"/examples/*-problem.*.pftrace*; do
    name=$(basename "$f" | sed 's/-problem\..*//')
    fixed=$(ls "$OUT"/examples/$name-fixed.*.pftrace* | head -n 1)
    echo "-- $name: kernels (problem, then fixed): device us"
    build/cltrace-report "$f" | sed -n '/^Kernels/,/^$/p' | tail -n +3
    build/cltrace-report "$fixed" | sed -n '/^Kernels/,/^$/p' | tail -n +3
done

echo "== 7. profiling on only for the commands timed, on a queue the app made plain"
# tests/apps/profswitch.c, loaded as the library cltrace calls, logs each
# switch NVIDIA's driver is asked for; they must follow the trace's timed and
# untimed commands (tests/checks.py switches): on at a timed write after
# untimed ones, off at the next untimed one, none between commands alike
make -s build/tests/bench_calls build/tests/profswitch.so
rm -f "$OUT"/ps.*.pftrace* "$OUT/ps.switches"
CLBENCH_PLATFORM=NVIDIA CLTRACE_LIBRARY=$PWD/build/tests/profswitch.so PROFSWITCH_LOG="$OUT/ps.switches" \
    CLTRACE_OUTPUT="$OUT/ps.%p.pftrace" LD_PRELOAD=$PWD/build/libcltrace.so build/tests/bench_calls small 4000 > /dev/null
$PY tests/checks.py switches "$(ls "$OUT"/ps.*.pftrace*)" "$OUT/ps.switches"
echo "ok: $(wc -c < "$OUT/ps.switches") switches for 4,000 small writes"
