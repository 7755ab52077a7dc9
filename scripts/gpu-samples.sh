#!/usr/bin/env bash
# What the host ran while an NVIDIA GPU waited (not in `make test`: CI has no
# GPU): a C program whose host builds each step's input (tests/apps/host_gap.c)
# and the same in pure Python through ctypes (tests/apps/pyctypes/
# host_gap_ctypes.py; the GPU hosts have no pyopencl), each on the NVIDIA
# platform: the serialization finding's host line and its JSON; then the
# sampling's cost there (scripts/bench-cpu-samples.sh). Every trace is left in
# OUTDIR, to lint and load on a machine that has the tools. Last, the
# handler's reader of C frames against libunwind and the writer's symbol
# tables against libdw, on this host's interpreter and C library.
#   scripts/gpu-samples.sh [OUTDIR]     (default build/gpu-samples)
# A host without the build's -dev packages: GPU_DEBS=a folder of Debian's
# .deb files (shared/bench/README.md), unpacked into OUTDIR/prefix.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${1:-build/gpu-samples}
mkdir -p "$OUT"
if [ -n "${GPU_DEBS:-}" ]; then
    for d in "$GPU_DEBS"/*.deb; do dpkg -x "$d" "$OUT/prefix"; done
    P=$(cd "$OUT/prefix" && pwd)
    export CPATH=$P/usr/include
    export LIBRARY_PATH=$P/usr/lib/x86_64-linux-gnu
    export LD_LIBRARY_PATH=$LIBRARY_PATH
fi
export CLTRACE_QUIET=1 OCL_PLATFORM=NVIDIA CLTEST_PLATFORM=NVIDIA
# shellcheck source=scripts/nvidia-icd.sh
. scripts/nvidia-icd.sh
icd_only NVIDIA
make -s all build/tests/host_gap build/tests/sample_stress build/tests/sample_stress-fp build/tests/unwind_check.so \
    build/tests/test_symtab > "$OUT/make.log" 2>&1 || { tail -20 "$OUT/make.log"; exit 1; }
PY=${PYTHON:-python3}
rc=0
host_line() {   # host_line NAME: the serialization finding and its host, from the report
    local t; t=$(ls "$OUT"/"$1".*.pftrace.gz | head -n 1)
    build/cltrace-report "$t" > "$OUT/$1.txt" 2>&1
    build/cltrace-report --format json -o "$OUT/$1.json" "$t"
    sed -n '1,4p' "$OUT/$1.txt"
    sed -n '/\[warning\] serialization/,/fix:/p' "$OUT/$1.txt"
    $PY - "$OUT/$1.json" "$2" <<'PY' || rc=1
import json, sys
f = [x for x in json.load(open(sys.argv[1]))["findings"] if x["rule"] == "serialization" and "host" in x]
h = f[0]["host"] if f else None
ok = h and h["top"] and h["top"][0]["function"] == sys.argv[2] and h["top"][0]["samples"] >= 0.8 * h["samples"]
print("host: %s -> %s" % (json.dumps(h)[:600], "named" if ok else "NOT NAMED"))
sys.exit(0 if ok else 1)
PY
}
echo "== 1. C: host_gap on NVIDIA"
CLTRACE_OUTPUT="$OUT/c.%p.pftrace" LD_PRELOAD=$PWD/build/libcltrace.so build/tests/host_gap 40 || rc=1
host_line c prepare_batch
echo "== 2. Python through ctypes on NVIDIA, $($PY -c 'import sys; print(sys.version.split()[0])')"
CLTRACE_OUTPUT="$OUT/py.%p.pftrace" LD_PRELOAD=$PWD/build/libcltrace.so $PY tests/apps/pyctypes/host_gap_ctypes.py 20 ||
    rc=1
host_line py build_inputs
echo "== 3. the sampling's cost on this host ($(nproc) cores)"
bash scripts/bench-cpu-samples.sh || rc=1
echo "== 4. the handler's C frames (capture/unwind.c) against libunwind, and the writer's symbol tables against libdw"
LD_PRELOAD=$PWD/build/tests/unwind_check.so $PY tests/apps/pyctypes/unwind_mix.py 1 || rc=1
for p in sample_stress sample_stress-fp; do
    LD_PRELOAD=$PWD/build/tests/unwind_check.so build/tests/$p work > /dev/null || rc=1
done
build/tests/test_symtab || rc=1
exit $rc
