#!/usr/bin/env bash
# Real OpenCL clients nobody here wrote, on PoCL (and the Oclgrind ICD):
# the same output and exit status with and without the tracer, a trace that
# holds their calls, and a report that reads well (tests/checks.py
# report_readable: no error leak for objects made once and held, no mangled
# name, every frame named or library+offset, no warning worth under 1 % of
# the run). Prints a table, then each client's findings above info; exits 1
# if any client differs or its report does not read well.
#   bash tests/clients.sh            (make test runs it)
# Needs clinfo, clpeak, python3-pyopencl, oclgrind, hashcat, clblast-tests,
# clfft-client, ffmpeg (scripts/deps.sh); a client not installed is skipped.
# Outputs with timings (clpeak, clFFT) are compared with their numbers masked.
set -u
cd "$(dirname "$0")/.."
SHIM=$PWD/build/libcltrace.so
W=$(mktemp -d /tmp/cltrace-clients.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
export CLTRACE_QUIET=1 HOME="$W/home"   # hashcat keeps its kernel cache in $HOME
mkdir -p "$HOME"
status=0
printf "%-12s %-8s %6s %6s %-10s %8s %8s\n" client mode rc rc_traced output calls commands

# numbers masked; PoCL's "N warnings generated." appears on the run that
# compiles a kernel, not on the one that finds it in PoCL's cache
mask() { sed -E -e '/^[0-9]+ warnings? generated\.$/d' -e 's/[0-9]+(\.[0-9]+)?/N/g'; }

# client NAME MODE(preload|layer) MASK(0|1) cmd...
client() {
    local name=$1 mode=$2 masked=$3; shift 3
    if ! command -v "$1" > /dev/null 2>&1 && [ ! -x "$1" ]; then
        printf "%-12s %-8s %s\n" "$name" "$mode" "skipped: $1 not installed"
        return
    fi
    local rc0=0 rc1=0
    timeout 300 "$@" > "$W/$name.plain" 2>&1 || rc0=$?
    if [ "$mode" = layer ]; then
        OPENCL_LAYERS=$SHIM CLTRACE_OUTPUT="$W/$name.%p.pftrace" timeout 300 "$@" > "$W/$name.traced" 2>&1 || rc1=$?
    else
        LD_PRELOAD=$SHIM CLTRACE_OUTPUT="$W/$name.%p.pftrace" timeout 300 "$@" > "$W/$name.traced" 2>&1 || rc1=$?
    fi
    local same=same
    if [ "$masked" = 1 ]; then
        cmp -s <(mask < "$W/$name.plain") <(mask < "$W/$name.traced") || same=DIFFERENT
    else
        cmp -s "$W/$name.plain" "$W/$name.traced" || same=DIFFERENT
    fi
    local trace calls="-" cmds="-"
    trace=$(ls "$W/$name".*.pftrace* 2> /dev/null | head -n 1)
    if [ -n "$trace" ]; then
        read -r calls cmds < <(/usr/bin/python3 tests/tracedump.py --attributes "$trace" |
            /usr/bin/python3 -c 'import json,sys; a=json.load(sys.stdin); print(a.get("cltrace.calls", 0), a.get("cltrace.device_commands", 0))')
    fi
    printf "%-12s %-8s %6s %6s %-10s %8s %8s\n" "$name" "$mode" "$rc0" "$rc1" "$same" "$calls" "$cmds"
    if [ "$same" != same ] || [ "$rc0" != "$rc1" ] || [ "$calls" = "-" ] || [ "$calls" = 0 ]; then
        status=1
        diff <(head -c 2000 "$W/$name.plain") <(head -c 2000 "$W/$name.traced") | head -20
    fi
    [ -n "$trace" ] || return 0
    local r=$W/$name.report
    mkdir -p "$r"
    build/cltrace-report "$trace" > "$r/r.txt" 2>&1 || true
    build/cltrace-report --format json "$trace" > "$r/r.json" || true
    build/cltrace-report --format markdown "$trace" > "$r/r.md" || true
    build/cltrace-report --format html "$trace" > "$r/r.html" || true
    /usr/bin/python3 tests/checks.py report_readable "$r" "$name" "$W/findings" || status=1
}

# captured NAME SPEC cmd...: the launches SPEC picks captured (cltrace
# --capture), each replayed (cltrace replay) with outputs identical to the
# captured ones
captured() {
    local name=$1 spec=$2; shift 2
    command -v "$1" > /dev/null 2>&1 || { printf "%-12s capture  skipped: %s not installed\n" "$name" "$1"; return; }
    local dir=$W/$name.cap n=0 same=0 d
    CLTRACE_CAPTURE=$spec CLTRACE_CAPTURE_DIR=$dir LD_PRELOAD=$SHIM CLTRACE_OUTPUT="$W/$name-cap.%p.pftrace" \
        timeout 300 "$@" > /dev/null 2>&1
    for d in "$dir"/*; do
        [ -f "$d/manifest" ] || continue
        n=$((n + 1))
        if build/cltrace replay --repeat 2 "$d" > "$W/$name.replay" 2>&1 &&
           ! grep "^  arg" "$W/$name.replay" | grep -qv ": identical$"; then
            same=$((same + 1))
        else
            cat "$W/$name.replay"
        fi
    done
    printf "%-12s capture  %s: %d launches captured, %d replayed identical\n" "$name" "$spec" "$n" "$same"
    [ "$n" -ge 1 ] && [ "$same" = "$n" ] || status=1
}

printf '%s\n' /usr/lib/oclgrind/liboclgrind-rt-icd.so > "$W/oclgrind.icd"

client clinfo     preload 0 clinfo
client clpeak     preload 1 clpeak -p 0 -d 0 --kernel-latency
client pyopencl   preload 0 env PYOPENCL_CTX=0 PYOPENCL_NO_CACHE=1 /usr/bin/python3 tests/apps/pyocl_vadd.py
# (Oclgrind interprets kernels: a small program; it dlopens nothing, but the
# layer mode is the one that also sees the ICD loader it is registered with)
client oclgrind   layer   0 env OCL_ICD_VENDORS="$W/oclgrind.icd" build/tests/dlopen_app
# hashcat dlopens libOpenCL and dlsyms it: here through the loader's layer
# (the preload and the launcher: tests/loading.sh, its calls counted)
client hashcat-l  layer   0 hashcat -m 0 -a 3 --potfile-disable --quiet 202cb962ac59075b964b07152d234b70 '?d?d?d'
# a BLAS library's own tests (CLBlast: one routine, every precision), an FFT
# library's client (clFFT), a video filter chain (FFmpeg's OpenCL filters)
client clblast    preload 1 clblast_test_xaxpy
client clfft      preload 1 clFFT-client -x 1024 -y 64 -p 3
client ffmpeg     preload 0 ffmpeg -hide_banner -nostats -loglevel error -init_hw_device opencl=ocl:0.0 \
    -filter_hw_device ocl -f lavfi -i testsrc=duration=1:size=320x240:rate=25 \
    -vf "format=yuv420p,hwupload,avgblur_opencl=sizeX=3,unsharp_opencl,hwdownload,format=yuv420p" -f null -
# one launch of each, captured and replayed: a BLAS routine (real*: compared
# byte for byte), a video filter's kernels (images in and out)
captured clblast  'Xaxpy@1,Xaxpy@2' clblast_test_xaxpy
captured ffmpeg   'avgblur*@1' ffmpeg -hide_banner -nostats -loglevel error -init_hw_device opencl=ocl:0.0 \
    -filter_hw_device ocl -f lavfi -i testsrc=duration=1:size=320x240:rate=25 \
    -vf "format=yuv420p,hwupload,avgblur_opencl=sizeX=3,unsharp_opencl,hwdownload,format=yuv420p" -f null -
echo
echo "findings above info (warnings, errors) per client:"
[ -f "$W/findings" ] && sed 's/|/: /' "$W/findings" | sed 's/^/  /'
exit $status
