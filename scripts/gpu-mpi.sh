#!/usr/bin/env bash
# MPI on an NVIDIA GPU host (not in `make test`: CI has no GPU): what the
# ranks under mpirun see of OpenCL and why; then a 4-rank job sharing the
# GPU (tests/apps/mpi_halo: a halo exchange, blocking and overlapped) traced
# with MPI on the timeline, merged, and reported by rank.
#   scripts/gpu-mpi.sh [OUTDIR] [ROUNDS]   (default build/gpu-mpi; ROUNDS:
#                                            the kernel's loop, ~2 ms a 10^6)
# MPI_HALO: a prebuilt tests/apps/mpi_halo where the host has no mpicc.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${1:-build/gpu-mpi}
ROUNDS=${2:-10000000}
mkdir -p "$OUT"
export CLTRACE_QUIET=1
command -v mpirun > /dev/null || { echo "no mpirun on this host"; exit 2; }
root=""; [ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
mpirun --version | head -n 1

echo "== what the ranks see"
env | sort > "$OUT/env.shell"
mpirun $root -n 1 env | sort > "$OUT/env.mpirun"
echo "environment, shell against a rank (OpenCL, loader, library paths):"
diff "$OUT/env.shell" "$OUT/env.mpirun" | grep -i "ocl\|opencl\|ld_\|nvidia\|cuda\|path" || echo "  (the same)"
ls -l /etc/OpenCL/vendors/ 2>&1
echo "clinfo -l, the shell:"; clinfo -l 2>&1 | head -n 8
echo "clinfo -l, a rank:"; mpirun $root -n 1 clinfo -l 2>&1 | head -n 8
echo "clinfo -l, a rank given the shell's OCL_ICD_* (-x):"
mpirun $root -n 1 -x OCL_ICD_VENDORS -x OCL_ICD_FILENAMES clinfo -l 2>&1 | head -n 8

echo "== a 4-rank job sharing the GPU"
export OCL_PLATFORM=NVIDIA
# shellcheck source=scripts/nvidia-icd.sh
. scripts/nvidia-icd.sh
icd_only NVIDIA
make -s all > /dev/null || exit 1
app=${MPI_HALO:-build/tests/mpi_halo}
[ -x "$app" ] || make -s build/tests/mpi_halo > /dev/null || { echo "no mpi_halo (no mpicc here)"; exit 1; }
rc=0
for mode in blocking overlap; do
    rm -rf "$OUT/$mode"
    timeout 300 mpirun $root --oversubscribe -n 4 -x OCL_ICD_VENDORS -x OCL_ICD_FILENAMES -x CLTRACE_QUIET -x LD_LIBRARY_PATH \
        build/cltrace -q -o "$OUT/$mode/" -- "$app" $mode "$ROUNDS" || rc=1
    ls "$OUT/$mode"
    build/cltrace-report merge -o "$OUT/$mode.pftrace.gz" "$OUT/$mode" || rc=1
    build/cltrace-report -o "$OUT/$mode.txt" "$OUT/$mode"
    build/cltrace-report --format json -o "$OUT/$mode.json" "$OUT/$mode"
    build/cltrace-report --format html -o "$OUT/$mode.html" "$OUT/$mode"
    grep -q '"device_timing":{"usable":true' "$OUT/$mode.json" || { echo "$mode: device timing judged unusable"; rc=1; }
    grep -q 'NVIDIA\|H100\|H200' "$OUT/$mode.txt" || echo "$mode: no NVIDIA device named in the report"
    echo "-- $mode"
    head -n 12 "$OUT/$mode.txt"
    sed -n '/^Job: /,$p' "$OUT/$mode.txt" | head -n 30
done
exit $rc
