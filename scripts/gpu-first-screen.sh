#!/usr/bin/env bash
# The first screen on a GPU host (not in `make test`: CI has no GPU): each
# example's problem version traced on NVIDIA's driver, its report in text
# (the first 25 lines checked as make test checks PoCL's), Markdown and
# SARIF, and the device timing judged usable.
#   scripts/gpu-first-screen.sh [OUTDIR]      (default build/gpu-first-screen)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${1:-build/gpu-first-screen}
mkdir -p "$OUT"
export OCL_PLATFORM=NVIDIA CLTRACE_QUIET=1 CLBENCH_PLATFORM=NVIDIA
# shellcheck source=scripts/nvidia-icd.sh
. scripts/nvidia-icd.sh
icd_only NVIDIA
make -s all examples > /dev/null || exit 1
rc=0
for n in transfers matmul transpose copy nbody workgroup leaks sync underfill; do
    rm -f "$OUT/$n".*.pftrace.gz
    CLTRACE_OUTPUT="$OUT/$n.%p.pftrace" LD_PRELOAD=$PWD/build/libcltrace.so "build/examples/$n" > /dev/null || rc=1
    t=$(ls "$OUT/$n".*.pftrace.gz | head -n 1)
    build/cltrace-report -o "$OUT/$n.txt" "$t"
    build/cltrace-report --format json -o "$OUT/$n.json" "$t"
    build/cltrace-report --format markdown -o "$OUT/$n.md" "$t"
    build/cltrace-report --format sarif -o "$OUT/$n.sarif" "$t"
    python3 tests/first_screen.py text "$OUT/$n.txt" "$OUT/$n.json" || rc=1
    python3 tests/first_screen.py markdown "$OUT/$n.md" "$OUT/$n.json" || rc=1
    grep -q '"device_timing":{"usable":true' "$OUT/$n.json" || { echo "$n: device timing judged unusable"; rc=1; }
    echo "== $n"
    head -n 12 "$OUT/$n.txt"
done
exit $rc
