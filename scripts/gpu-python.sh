#!/usr/bin/env bash
# The user's own code as "where" on an NVIDIA GPU host (not in `make test`:
# CI has no GPU). Ubuntu 24.04's CPython 3.12, no pyopencl there:
#   1. OpenCL through ctypes (tests/apps/pyctypes) on NVIDIA: each finding at
#      the script's marked line (CPython 3.12's frames), the trace whole after
#      os._exit;
#   2. OpenCL called inside build and event callbacks (tests/apps/callbacks);
#   3. MPI jobs (tests/apps/mpi_halo): 4 ranks on one GPU, then 2 ranks with a
#      GPU each (OCL_DEVICE=rank): the first screen's device lines, and no
#      finding from hwloc's probing in MPI_Init above the program's.
# Every trace is left in OUTDIR, to lint (pftrace-lint) and load
# (trace_processor) on a machine that has them.
#   scripts/gpu-python.sh [OUTDIR]       (default build/gpu-python)
# MPI_HALO: a prebuilt tests/apps/mpi_halo where the host has no mpicc.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${1:-build/gpu-python}
mkdir -p "$OUT"
export CLTRACE_QUIET=1 OCL_PLATFORM=NVIDIA CLTEST_PLATFORM=NVIDIA
# shellcheck source=scripts/nvidia-icd.sh
. scripts/nvidia-icd.sh
icd_only NVIDIA
make -s all build/tests/callbacks > /dev/null || exit 1
PY=${PYTHON:-python3}
rc=0
echo "== 1. ctypes on NVIDIA, $($PY -c 'import sys; print(sys.version.split()[0], sys.executable)')"
$PY tests/apps/pyctypes/where_ctypes.py > "$OUT/ctypes.plain" || rc=1
CLTRACE_OUTPUT="$OUT/ctypes.%p.pftrace" LD_PRELOAD=$PWD/build/libcltrace.so $PY tests/apps/pyctypes/where_ctypes.py \
    > "$OUT/ctypes.out" 2> "$OUT/ctypes.err" || rc=1
cat "$OUT/ctypes.out" "$OUT/ctypes.err"
diff "$OUT/ctypes.plain" "$OUT/ctypes.out" || { echo "output differs traced"; rc=1; }
t=$(ls "$OUT"/ctypes.*.pftrace.gz | head -n 1)
build/cltrace-report "$t" > "$OUT/ctypes.txt" 2>&1
build/cltrace-report --format json -o "$OUT/ctypes.json" "$t"
build/cltrace-report --format sarif -o "$OUT/ctypes.sarif" "$t"
sed -n '1,16p' "$OUT/ctypes.txt"
$PY tests/python_where.py marks tests/apps/pyctypes "$OUT/ctypes.json" api-errors=FAIL small-transfers=SMALL \
    work-group-multiple=ODD leaks=LEAK || rc=1

echo "== 2. OpenCL inside callbacks"
build/tests/callbacks > "$OUT/cb.plain"
CLTRACE_OUTPUT="$OUT/callbacks.%p.pftrace" LD_PRELOAD=$PWD/build/libcltrace.so build/tests/callbacks > "$OUT/cb.out"
diff "$OUT/cb.plain" "$OUT/cb.out" || rc=1
build/cltrace-report "$(ls "$OUT"/callbacks.*.pftrace.gz | head -n 1)" | sed -n '/^Findings/,/^API/p' | head -n 12

echo "== 3. MPI jobs"
root=""; [ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
app=${MPI_HALO:-build/tests/mpi_halo}
[ -x "$app" ] || make -s build/tests/mpi_halo > /dev/null 2>&1 || app=gpu-carry/mpi_halo
if command -v mpirun > /dev/null; then
    for job in "one-gpu 4" "gpu-each 2"; do
        set -- $job
        rm -rf "${OUT:?}/$1"
        extra=""; [ "$1" = gpu-each ] && extra="-x OCL_DEVICE=rank" && export OCL_DEVICE=rank
        timeout 300 mpirun $root --oversubscribe -n "$2" -x OCL_ICD_VENDORS -x OCL_ICD_FILENAMES -x CLTRACE_QUIET \
            -x LD_LIBRARY_PATH $extra build/cltrace -q -o "$OUT/$1/" -- "$app" blocking 2000000 || rc=1
        unset OCL_DEVICE
        build/cltrace-report "$OUT/$1" > "$OUT/$1.txt" 2>&1
        build/cltrace-report --format json -o "$OUT/$1.json" "$OUT/$1"
        echo "-- $1: $2 ranks"
        sed -n '1,14p' "$OUT/$1.txt"
        grep -n "hwloc\|called by" "$OUT/$1.txt" | head -n 4
    done
else
    echo "no mpirun on this host"; rc=1
fi
exit $rc
