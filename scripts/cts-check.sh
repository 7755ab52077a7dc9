#!/usr/bin/env bash
# The Khronos OpenCL conformance tests (CTS) under cltrace: each subset run
# untraced and under `cltrace`, on the same platform; every test's result
# (pass, fail, skip: the CTS's own JSON) must be the same both ways, no
# test may fail only under cltrace, and every trace must lint. Not part of
# `make test` (hours on a CPU platform). Fetches nothing:
#
#   scripts/cts-check.sh CTS OPENCL_HEADERS SPIRV_HEADERS [OUTDIR]
#     CTS             a KhronosGroup/OpenCL-CTS tree (a snapshot without
#                     test_conformance/spir builds without that folder)
#     OPENCL_HEADERS  KhronosGroup/OpenCL-Headers (Debian 12's are too old)
#     SPIRV_HEADERS   KhronosGroup/SPIRV-Headers
#   SUBSETS="events profiling"  the subsets (default: every one below), or
#                               executables by name (test_cl_copy_images)
#   TESTS="fpmath if"           only these of each executable's tests
#   SKIP_TESTS="imagedim_*"     every test but these (shell patterns; the
#                               tests left out are printed)
#   CL_PLATFORM_INDEX=N         the platform (the CTS's own variable)
#   TIMEOUT=S                   per run (default 3600); JOBS=N: build jobs
#   CTS_BUILD=DIR               the suite built already (its test_conformance/
#                               holds the executables): nothing is built
#   IMAGES_ARGS="CL_UNORM_INT8" words added to each image executable's
#                               arguments (a GPU's 3D images: hours otherwise)
#   PARALLEL=1                  the untraced and the traced run at once (the
#                               results compared, not the times)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
[ $# -ge 3 ] || { sed -n '2,22p' "$0"; exit 2; }
CTS=$(realpath "$1") HDR=$(realpath "$2") SPV=$(realpath "$3")
OUT=$(realpath -m "${4:-build/cts}")
LINT=${PFTRACE_LINT:-$ROOT/../shared/tools/pftrace-lint}
# subset, executable, its arguments: one run each. The image suites run
# as the CTS's quick list runs them, test_image_streams on the CL_RGBA
# formats only (every format: hours on a CPU platform).
RUNS=(
    "computeinfo computeinfo/test_computeinfo" "events events/test_events"
    "profiling profiling/test_profiling" "mem_host_flags mem_host_flags/test_mem_host_flags"
    "printf printf/test_printf" "api api/test_api" "basic basic/test_basic"
    "buffers buffers/test_buffers" "SVM SVM/test_svm"
    "images images/clGetInfo/test_cl_get_info" "images images/kernel_image_methods/test_kernel_image_methods"
    "images images/clCopyImage/test_cl_copy_images" "images images/clFillImage/test_cl_fill_images"
    "images images/clReadWriteImage/test_cl_read_write_images"
    "images images/samplerlessReads/test_samplerless_reads"
    "images images/kernel_read_write/test_image_streams CL_FILTER_NEAREST CL_RGBA"
    "command_buffer extensions/cl_khr_command_buffer/test_cl_khr_command_buffer"
    "command_buffer extensions/cl_khr_command_buffer/cl_khr_command_buffer_mutable_dispatch/test_cl_khr_mutable_dispatch"
    "multiple_device_context multiple_device_context/test_multiples"
)
SUBSETS=${SUBSETS:-computeinfo events profiling mem_host_flags printf multiple_device_context api basic buffers SVM images command_buffer}
wanted() { [[ " $SUBSETS " == *" $1 "* || " $SUBSETS " == *" $(basename "$2") "* ]]; }
mkdir -p "$OUT/results" "$OUT/traces"
make -s all > /dev/null || exit 1

BUILD=${CTS_BUILD:-$OUT/build}
if [ -z "${CTS_BUILD:-}" ]; then
    # A snapshot of the CTS may lack spir/ (its zipped kernels are git
    # LFS-like blobs): build from a copy without that folder.
    SRC=$CTS
    if [ ! -d "$CTS/test_conformance/spir" ] && grep -q "^add_subdirectory( spir )" "$CTS/test_conformance/CMakeLists.txt"; then
        SRC=$OUT/src
        rm -rf "$SRC" && cp -r "$CTS" "$SRC"
        sed -i 's/^add_subdirectory( spir )/# (no spir: not in this snapshot)/' "$SRC/test_conformance/CMakeLists.txt"
    fi
    targets=()
    for r in "${RUNS[@]}"; do
        read -r s b _ <<< "$r"
        if wanted "$s" "$b"; then targets+=("$(basename "$b")"); fi
    done
    gen=(); command -v ninja > /dev/null && gen=(-G Ninja)
    cmake -S "$SRC" -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCL_INCLUDE_DIR="$HDR" \
        -DCL_LIB_DIR=/usr/lib/x86_64-linux-gnu -DSPIRV_INCLUDE_DIR="$SPV" -DOPENCL_LIBRARIES=OpenCL > "$OUT/cmake.log" 2>&1 ||
        { tail -20 "$OUT/cmake.log"; exit 1; }
    cmake --build "$BUILD" -j "${JOBS:-$(nproc)}" --target "${targets[@]}" > "$OUT/build.log" 2>&1 ||
        { tail -20 "$OUT/build.log"; exit 1; }
fi

run() {   # run NAME BIN MODE [ARGS]: the CTS's results JSON, the exit status, the log
    local name=$1 bin=$2 mode=$3 rc=0
    shift 3
    local pre=()
    [ "$mode" = traced ] && pre=("$ROOT/build/cltrace" -q -o "$OUT/traces/$name.pftrace" --)
    (cd "$(dirname "$bin")" && CL_CONFORMANCE_RESULTS_FILENAME="$OUT/results/$name.$mode.json" \
        timeout "${TIMEOUT:-3600}" "${pre[@]}" "$bin" "$@" > "$OUT/results/$name.$mode.log" 2>&1) || rc=$?
    echo $rc > "$OUT/results/$name.$mode.rc"
}

status=0
printf "%-32s %6s %6s %6s %6s  %-9s %-9s %s\n" "executable" tests pass fail skip untraced traced "under cltrace"
for r in "${RUNS[@]}"; do
    read -r s b args <<< "$r"
    wanted "$s" "$b" || continue
    name=$(basename "$b") bin=$BUILD/test_conformance/$b
    if [ -n "${TESTS:-}" ]; then
        args="$args $TESTS"
    elif [ -n "${SKIP_TESTS:-}" ]; then   # the CTS has no exclusion: name the others
        keep=() left=()
        read -ra pats <<< "$SKIP_TESTS"   # patterns, not expanded here
        for t in $("$bin" --help 2>&1 | sed -n '/^Test names:/,$p' | sed -n 's/^\t\([A-Za-z0-9_]*\)$/\1/p'); do
            skip=
            for pat in "${pats[@]}"; do
                # shellcheck disable=SC2053  # a pattern
                [[ $t == $pat ]] && skip=1
            done
            if [ -n "$skip" ]; then left+=("$t"); else keep+=("$t"); fi
        done
        [ ${#left[@]} -gt 0 ] && echo "$name: left out (SKIP_TESTS): ${left[*]}"
        args="$args ${keep[*]}"
    fi
    args=${args# }
    rm -f "$OUT/results/$name".* "$OUT/traces/$name".*
    [ "$s" = images ] && args="$args ${IMAGES_ARGS:-}" && args=${args# }
    read -ra argv <<< "$args"   # words; a test name's '*' is the CTS's, not the shell's
    if [ -n "${PARALLEL:-}" ]; then
        run "$name" "$bin" untraced "${argv[@]}" &
        run "$name" "$bin" traced "${argv[@]}"
        wait
    else
        run "$name" "$bin" untraced "${argv[@]}"
        run "$name" "$bin" traced "${argv[@]}"
    fi
    line=$(python3 - "$OUT/results/$name" <<'PY'
import json, sys
base = sys.argv[1]
def from_log(mode):
    """A run that crashed writes no JSON: its log's "NAME passed / FAILED /
    test not supported / skipped (why)" lines, and the test it was in ("NAME..." alone)."""
    r, last = {}, None
    try:
        for line in open(base + "." + mode + ".log", errors="replace"):
            w = line.split()
            if len(w) == 1 and w[0].endswith("...") and len(w[0]) > 3:
                last = r[w[0][:-3]] = "crashed in"
            elif len(w) == 2 and w[1] in ("passed", "FAILED") and w[0] in r:
                r[w[0]] = "pass" if w[1] == "passed" else "fail"
            elif len(w) == 4 and w[1:] == ["test", "not", "supported"] and w[0] in r:
                r[w[0]] = "skip"
            elif len(w) >= 2 and w[1] == "skipped" and w[0] in r:   # "NAME skipped (requires ...)"
                r[w[0]] = "skip"
    except OSError:
        pass
    return r if last is not None else None
def load(mode):
    try:
        return json.load(open(base + "." + mode + ".json")).get("results", {})
    except (OSError, ValueError):
        return from_log(mode)
u, t = load("untraced"), load("traced")
ru, rt = (open(base + "." + m + ".rc").read().strip() for m in ("untraced", "traced"))
def rc(r):
    r = int(r)
    return "crash %d" % (r - 128) if r > 128 else "timeout" if r == 124 else "exit %d" % r
if u is None or t is None:
    same = ru == rt
    print("%6s %6s %6s %6s  %-9s %-9s %s" % ("-", "-", "-", "-", rc(ru), rc(rt),
          "no results both ways, same exit" if same and u is None and t is None else "DIFFERENT: results missing"))
    sys.exit(0 if same and u is None and t is None else 1)
note = ""
if "124" in (ru, rt):     # timed out: the tests both runs reached (the last one of each cut short)
    both = [k for k in u if k in t and u[k] != "crashed in" and t[k] != "crashed in"]
    note = " (timed out: the %d tests both runs finished)" % len(both)
    if not both:
        print("%6s %6s %6s %6s  %-9s %-9s %s" % ("-", "-", "-", "-", "timeout", "timeout",
              "timed out both ways before a test finished: not compared"))
        sys.exit(0)
    u, t = {k: u[k] for k in both}, {k: t[k] for k in both}
    ru = rt = "124"
count = lambda r, v: sum(1 for x in r.values() if x == v)
only = sorted(k for k in u if u[k] != "fail" and t.get(k) == "fail")
diff = sorted(k for k in set(u) | set(t) if u.get(k) != t.get(k))
verdict = ("identical" + note) if not diff and ru == rt else "DIFFERENT: " + ", ".join(diff[:6])
if only:
    verdict += "; fail only under cltrace: " + ", ".join(only[:6])
print("%6d %6d %6d %6d  %-9s %-9s %s" % (len(u), count(u, "pass"), count(u, "fail"), count(u, "skip"),
      rc(ru), rc(rt), verdict))
fails = sorted(k for k, v in u.items() if v == "fail")
if fails:
    print("    failing untraced too: " + ", ".join(fails))
crashed = sorted(k for k, v in u.items() if v == "crashed in")
if crashed:
    print("    untraced too, the run ended inside: " + ", ".join(crashed) + " (its results from the log)")
sys.exit(0 if verdict.startswith("identical") else 1)
PY
) || status=1
    shown=$args
    [ ${#shown} -gt 60 ] && shown="${shown:0:57}..."
    printf "%-32s %s\n" "$name${shown:+ ($shown)}" "$line"
    for tr in "$OUT/traces/$name".*; do
        [ -e "$tr" ] || continue
        if [ -x "$LINT" ]; then
            "$LINT" -q --proto "$ROOT/trace/cltrace.proto" "$tr" > "$OUT/results/$name.lint" 2>&1 || { echo "    $(basename "$tr"): lint errors"; status=1; }
        fi
    done
done
[ -x "$LINT" ] || echo "(pftrace-lint not found at $LINT: traces not linted)"
exit $status
