#!/usr/bin/env bash
# Run-time-loaded OpenCL traced on a GPU's platform, through every ICD loader
# the machine has: the system's libOpenCL.so.1 and the one bundled with the
# CUDA toolkit (/usr/local/cuda*/lib64). For each loader, programs that dlopen
# it by name, by full path, with dlmopen, that link it and dlsym it too, and
# a Python ctypes script: untraced (counted by a stand-in libOpenCL built for
# that loader, tests/count), under `cltrace` and under LD_PRELOAD: the same
# output and status. Not part of `make test` (CI has no GPU).
#
#   scripts/gpu-loaders.sh OUTDIR          on the GPU machine (CLTEST_PLATFORM, default NVIDIA)
#   scripts/gpu-loaders.sh --check OUTDIR  anywhere with python3-protobuf: each trace holds
#                                          exactly the calls counted
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --check ]; then
    status=0
    for count in "$2"/*.count; do
        base=${count%.count}
        for mode in launcher preload; do
            trace=$(ls "$base.$mode".*.pftrace* 2> /dev/null | head -n 1)
            if [ -z "$trace" ]; then echo "FAIL $(basename "$base") $mode: no trace"; status=1; continue; fi
            if /usr/bin/python3 tests/checks.py counted "$trace" "$count"; then
                echo "ok   $(basename "$base") $mode: $(awk '{n += $2} END {print n}' "$count") calls, each once"
            else
                echo "FAIL $(basename "$base") $mode"; status=1
            fi
        done
    done
    exit $status
fi
OUT=${1:?usage: gpu-loaders.sh OUTDIR}
mkdir -p "$OUT"
export CLTEST_PLATFORM=${CLTEST_PLATFORM:-NVIDIA} CLTRACE_QUIET=1 CUDA_CACHE_DISABLE=1
make -s all build/tests/dlopen_app build/tests/dlopen_app_linked || exit 1
# Every loader gets the same vendors: the system's, plus NVIDIA's driver where
# /etc/OpenCL/vendors does not list it (CUDA's loader finds it by itself).
mkdir -p "$OUT/vendors"
cp /etc/OpenCL/vendors/*.icd "$OUT/vendors/" 2> /dev/null
grep -qs nvidia "$OUT"/vendors/*.icd || echo libnvidia-opencl.so.1 > "$OUT/vendors/nvidia.icd"
export OCL_ICD_VENDORS=$PWD/$OUT/vendors
case $OUT in /*) export OCL_ICD_VENDORS=$OUT/vendors ;; esac
loaders=$( (/sbin/ldconfig -p | awk '/libOpenCL\.so\.1 /{print $NF}'; ls /usr/local/cuda*/lib64/libOpenCL.so.1 /usr/local/cuda*/targets/*/lib/libOpenCL.so.1 2> /dev/null) |
          xargs -r -n1 readlink -f | sort -u)
status=0
for lib in $loaders; do
    tag=$(echo "$lib" | md5sum | cut -c1-6)
    dir=build/loader-check/$tag
    mkdir -p "$dir"
    python3 tests/count/gen_counter.py "$lib" "$dir/clcount.c" &&
        ${CC:-cc} -shared -fPIC -Wl,--version-script="$dir/clcount.map" -o "$dir/libOpenCL.so.1" "$dir/clcount.c" -ldl || exit 1
    ln -sf libOpenCL.so.1 "$dir/libOpenCL.so"
    echo "== loader $lib ($(strings "$lib" | grep -m1 -iE 'khronos|ocl-icd|version [0-9]' || true))"
    run() {   # run NAME cmd...
        local name=$tag-$1; shift
        local rc0=0 rc1=0 rc2=0
        CLCOUNT_OUT="$OUT/$name.count" LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 120 "$@" > "$OUT/$name.plain" 2> "$OUT/$name.plain.err" || rc0=$?
        LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} timeout 120 build/cltrace -o "$OUT/$name.launcher.%p.pftrace" -- "$@" \
            > "$OUT/$name.launcher" 2> "$OUT/$name.launcher.err" || rc1=$?
        LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} CLTRACE_OUTPUT="$OUT/$name.preload.%p.pftrace" LD_PRELOAD=$PWD/build/libcltrace.so \
            timeout 120 "$@" > "$OUT/$name.preload" 2> "$OUT/$name.preload.err" || rc2=$?
        local same=same
        cmp -s "$OUT/$name.plain" "$OUT/$name.launcher" && cmp -s "$OUT/$name.plain" "$OUT/$name.preload" || same=DIFFERENT
        printf "%-28s status %s/%s/%s  output %-9s  %s calls counted  %s\n" "$name" "$rc0" "$rc1" "$rc2" "$same" \
            "$(awk '{n += $2} END {print n + 0}' "$OUT/$name.count" 2> /dev/null)" "$(head -c 60 "$OUT/$name.plain" | tr '\n' ' ')"
        [ "$same" = same ] && [ "$rc0" = "$rc1" ] && [ "$rc0" = "$rc2" ] || status=1
    }
    run dlopen build/tests/dlopen_app
    run fullpath build/tests/dlopen_app "$PWD/$dir/libOpenCL.so.1"
    run dlmopen build/tests/dlopen_app libOpenCL.so.1 dlmopen
    run linked build/tests/dlopen_app_linked
    run ctypes python3 tests/apps/ctypes_app.py
done
exit $status
