#!/usr/bin/env bash
# Capture, replay and tune on an NVIDIA GPU (not in `make test`: CI has no GPU):
#   1. the first launch of every kernel of every example (and vecadd)
#      captured on NVIDIA, replayed there and on PoCL (the same machine):
#      the outputs against the captured ones, the device time
#   2. cltrace tune on NVIDIA for examples/workgroup and examples/underfill,
#      and the report's findings given the result (--tuned)
#   3. what capturing a launch costs: one launch of a kernel on a 16 and a
#      256 MiB buffer captured, against the same run traced only
#   scripts/gpu-replay.sh [OUTDIR]        (default build/gpu-replay)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/gpu-replay}
mkdir -p "$OUT"
export CLTRACE_QUIET=1 CUDA_CACHE_DISABLE=1
export OCL_PLATFORM=NVIDIA
# shellcheck source=scripts/nvidia-icd.sh
. scripts/nvidia-icd.sh
EXAMPLES="transfers matmul transpose copy nbody workgroup leaks sync underfill"
make -s all build/examples/vecadd build/tests/bench_fingerprint $(printf "build/examples/%s " $EXAMPLES) > /dev/null ||
    exit 1
SHIM=$PWD/build/libcltrace.so
trace_of() { ls "$1".*.pftrace* | head -n 1; }
verdict() {   # verdict FILE: identical | within tolerance | DIFFERS | cannot (exit 2)
    if grep -q "^  arg.*DIFFERS" "$1"; then echo DIFFERS
    elif grep -q "same within the tolerance" "$1"; then echo "within 1e-5"
    elif grep -q "result: the outputs are the captured ones" "$1"; then echo identical
    else echo "cannot: $(tail -n 1 "$1" | cut -c1-40)"; fi
}
median_us() { sed -n 's/.*median \([0-9.]*\) us/\1/p' "$1"; }

echo "== 1. captured on NVIDIA, replayed on NVIDIA and on PoCL"
printf "%-26s %-14s %10s   %-14s %10s\n" launch NVIDIA "median us" PoCL "median us"
for ex in $EXAMPLES vecadd; do
    rm -rf "$OUT/$ex.cap" "$OUT/$ex".*.pftrace*
    CLTRACE_CAPTURE='*@1' CLTRACE_CAPTURE_DIR=$OUT/$ex.cap CLTRACE_OUTPUT="$OUT/$ex.%p.pftrace" LD_PRELOAD=$SHIM \
        build/examples/$ex > /dev/null 2>&1
    for d in "$OUT/$ex.cap"/*; do
        [ -f "$d/manifest" ] || continue
        n=$(basename "$d")
        build/cltrace replay --repeat 10 "$d" > "$OUT/$ex-$n.nv" 2>&1
        build/cltrace replay --repeat 3 --platform Portable "$d" > "$OUT/$ex-$n.pocl" 2>&1
        printf "%-26s %-14s %10s   %-14s %10s\n" "$ex $n" "$(verdict "$OUT/$ex-$n.nv")" "$(median_us "$OUT/$ex-$n.nv")" \
            "$(verdict "$OUT/$ex-$n.pocl")" "$(median_us "$OUT/$ex-$n.pocl")"
    done
done

echo "== 2. tune on NVIDIA"
for ex in workgroup underfill; do
    d=$(ls -d "$OUT/$ex.cap"/*@1 | head -n 1)
    round=""; [ $ex = workgroup ] && round=--round-global
    build/cltrace tune --repeat 10 $round "$d" > "$OUT/$ex.tune" 2>&1
    head -n 2 "$OUT/$ex.tune"; grep -E "\(captured\)|^best" "$OUT/$ex.tune"
    sed -n '4,8p' "$OUT/$ex.tune"
    build/cltrace-report --tuned "$d" "$(trace_of "$OUT/$ex")" | grep -A3 -E "work-group-multiple|under-filled" |
        grep -E "^\s+\[|measured|estimated gain" | head -n 6
done

echo "== 3. what capturing a launch costs (NVIDIA)"
fl() { "$@" | awk '/^wall_ns_per_launch/ {print $2}'; }
printf "%-34s %12s %12s %12s\n" "one launch on a buffer of" "traced ms" "captured ms" "s per GiB"
for mib in 16 256; do
    b=$(CLTRACE_OUTPUT=$OUT/cb.%p.pftrace LD_PRELOAD=$SHIM fl build/tests/bench_fingerprint launch $mib 20)
    c=$(CLTRACE_CAPTURE='advance@2' CLTRACE_CAPTURE_DIR=$OUT/cost.cap CLTRACE_OUTPUT=$OUT/cc.%p.pftrace \
        LD_PRELOAD=$SHIM fl build/tests/bench_fingerprint launch $mib 20)
    rm -rf "$OUT"/cb.* "$OUT"/cc.* "$OUT/cost.cap"
    awk -v b="$b" -v c="$c" -v m="$mib" 'BEGIN { extra = (c - b) * 20 / 1e6;
        printf "%-34s %12.3f %12.3f %12.3f\n", m " MiB (read, run, read back, 2 files)", b * 20 / 1e6, c * 20 / 1e6,
        extra / 1e3 / (m / 1024) }'
done
