#!/usr/bin/env bash
# Fingerprints on an NVIDIA GPU (not in `make test`: CI has no GPU):
#   1. the NaN program on NVIDIA: its answer unchanged, the report naming the
#      launch that wrote the NaN; with CLTRACE_BREAK=nan under gdb (if any)
#   2. the same program and every example (problem and fixed) on NVIDIA and
#      on PoCL, `cltrace-report diverge` between the two: exactly, and with
#      --tolerance 1e-5
#   3. what fingerprints cost: the digest on one core of this host (from
#      memory and in cache), and a
#      launch writing 1, 16 and 64 MiB untraced / traced / fingerprinted
#      (the least of 3 runs each)
#   scripts/gpu-fingerprint.sh [OUTDIR]        (default build/gpu-fingerprint)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/gpu-fingerprint}
mkdir -p "$OUT"
export CLTRACE_QUIET=1 CUDA_CACHE_DISABLE=1
# shellcheck source=scripts/nvidia-icd.sh
export OCL_PLATFORM=NVIDIA
. scripts/nvidia-icd.sh
unset OCL_PLATFORM
make -s all build/tests/wrong_answer build/tests/bench_fingerprint $(printf "build/examples/%s " transfers sync underfill workgroup transpose matmul copy nbody) > /dev/null || exit 1
SHIM=$PWD/build/libcltrace.so R=build/cltrace-report
fp() {   # fp PLATFORM PREFIX cmd...
    local plat=$1 prefix=$2; shift 2
    rm -f "$prefix".*.pftrace*
    OCL_PLATFORM=$plat CLTRACE_FINGERPRINT=1 CLTRACE_OUTPUT="$prefix.%p.pftrace" LD_PRELOAD=$SHIM "$@"
}
trace_of() { ls "$1".*.pftrace* | head -n 1; }

echo "== 1. the first NaN on NVIDIA"
OCL_PLATFORM=NVIDIA build/tests/wrong_answer --nan-at 5 > "$OUT/nan.plain"
fp NVIDIA "$OUT/nan-nv" build/tests/wrong_answer --nan-at 5 > "$OUT/nan.traced"
cmp "$OUT/nan.plain" "$OUT/nan.traced" && echo "answer unchanged: $(cat "$OUT/nan.plain")"
$R "$(trace_of "$OUT/nan-nv")" | grep -A2 "\[error\] nan"
if command -v gdb > /dev/null; then
    OCL_PLATFORM=NVIDIA gdb -q -batch -ex "set environment LD_PRELOAD=$SHIM" -ex "set environment CLTRACE_BREAK=nan" \
        -ex "set environment CLTRACE_FINGERPRINT=1" -ex "set environment CLTRACE_OUTPUT=$OUT/gdb.%p.pftrace" \
        -ex run -ex bt --args build/tests/wrong_answer --nan-at 5 > "$OUT/gdb.txt" 2>&1
    grep -m1 SIGTRAP "$OUT/gdb.txt"; grep -m1 "in main" "$OUT/gdb.txt"
fi

echo "== 2. NVIDIA against PoCL: diverge"
printf "%-28s %-60s %s\n" program "exact" "--tolerance 1e-5"
one() {   # one NAME cmd...
    local name=$1; shift
    fp NVIDIA "$OUT/$name-nv" "$@" > "$OUT/$name-nv.out" 2>&1
    fp Portable "$OUT/$name-pocl" "$@" > "$OUT/$name-pocl.out" 2>&1
    local a b e t
    a=$(trace_of "$OUT/$name-nv") b=$(trace_of "$OUT/$name-pocl")
    e=$($R diverge "$a" "$b" > "$OUT/$name.diverge" 2>&1; echo $?)
    t=$($R diverge --tolerance 1e-5 "$a" "$b" > "$OUT/$name.diverge-tol" 2>&1; echo $?)
    printf "%-28s %-60s %s\n" "$name" "exit $e: $(head -n 1 "$OUT/$name.diverge" | cut -c1-52)" \
        "exit $t: $(head -n 1 "$OUT/$name.diverge-tol" | cut -c1-60)"
}
one wrong_answer build/tests/wrong_answer
one wrong_answer-nan build/tests/wrong_answer --nan-at 5
for ex in transfers sync underfill workgroup transpose matmul copy nbody; do
    one "$ex" build/examples/$ex
    one "$ex-fixed" build/examples/$ex --fixed
done

echo "== 3. cost"
build/tests/bench_fingerprint digest
fl() { "$@" | awk '/^wall_ns_per_launch/ {print $2}'; }
min() { tr ' ' '\n' | sort -g | head -n 1; }
printf "%-40s %10s %10s %10s %12s\n" "wall us per launch (NVIDIA)" untraced traced "+prints" "added s/GiB"
for mib in 1 16 64; do
    a=""; b=""; c=""
    for r in 1 2 3; do
        a="$a $(OCL_PLATFORM=NVIDIA fl build/tests/bench_fingerprint launch $mib 200)"
        b="$b $(OCL_PLATFORM=NVIDIA CLTRACE_OUTPUT=$OUT/cb.%p.pftrace LD_PRELOAD=$SHIM fl build/tests/bench_fingerprint launch $mib 200)"
        c="$c $(OCL_PLATFORM=NVIDIA CLTRACE_FINGERPRINT=1 CLTRACE_OUTPUT=$OUT/cc.%p.pftrace LD_PRELOAD=$SHIM fl build/tests/bench_fingerprint launch $mib 200)"
        rm -f "$OUT"/cb.* "$OUT"/cc.*
    done
    a=$(echo $a | min) b=$(echo $b | min) c=$(echo $c | min)
    printf "%-40s %10.0f %10.0f %10.0f %12.3f\n" "a kernel writing $mib MiB" "$(awk -v x="$a" 'BEGIN{print x/1000}')" \
        "$(awk -v x="$b" 'BEGIN{print x/1000}')" "$(awk -v x="$c" 'BEGIN{print x/1000}')" \
        "$(awk -v x="$c" -v y="$b" -v m="$mib" 'BEGIN{print (x-y)/1e9*1024/m}')"
done
