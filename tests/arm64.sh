# cltrace built for arm64 (make CROSS_COMPILE=aarch64-linux-gnu-) and run
# under qemu-user through binfmt_misc (scripts/deps-arm64.sh installs both):
# a linked program on 8 threads, one that dlopens the loader and dlsyms
# every function, the leak classes, windows, the deflate writer's arm64
# path and the hot clock (their unit tests); each trace linted and read by the x86 report, and the arm64
# report reading the x86 traces the same. The OpenCL under the apps is a
# stand-in ICD behind arm64 ocl-icd (tests/apps/standin_icd.c): PoCL's
# arm64 package cannot be installed beside the amd64 one. Sourced by
# run.sh; `make test-arm64` runs these alone. Skips, saying why, where the
# cross compiler or qemu is missing.
A64=$B/aarch64-linux-gnu
A64T=$A64/tests

arm64_ready() {   # the cross build and the apps, once a run; 77 (skip) without the tools
    command -v aarch64-linux-gnu-gcc > /dev/null || { echo "no aarch64-linux-gnu-gcc (scripts/deps-arm64.sh)"; return 77; }
    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] ||
        { echo "qemu-aarch64 not registered with binfmt_misc (scripts/deps-arm64.sh)"; return 77; }
    [ -e /usr/lib/aarch64-linux-gnu/libisal.so ] || { echo "no arm64 ISA-L (scripts/deps-arm64.sh)"; return 77; }
    local stamp top; top=$(dirname "$WORK"); stamp=$top/arm64-built
    # once, under a lock: the arm64 tests run side by side (tests/run.sh)
    (
        flock 9
        [ -e "$stamp" ] && exit 0
        local x=aarch64-linux-gnu-gcc f="-O1 -g -Wall -Wextra -Wno-unused-parameter"
        # (in parallel and without debug info: the test apps carry their own)
        make -s -j"$(nproc)" -C "$ROOT" CROSS_COMPILE=aarch64-linux-gnu- CFLAGS=-O2 all > "$WORK/cross-build.log" 2>&1 ||
            { tail -n 20 "$WORK/cross-build.log"; exit 1; }
        mkdir -p "$A64T/icd"
        $x $f -shared -fPIC -o "$A64T/libstandin.so" tests/apps/standin_icd.c &&
        $x $f -o "$A64T/threads" tests/apps/threads.c -lOpenCL -lpthread &&
        $x $f -o "$A64T/dlopen_app" tests/apps/dlopen_app.c -ldl &&
        $x $f -O0 -o "$A64T/leak_classes" tests/apps/leak_classes.c -lOpenCL &&
        $x $f -I. -o "$A64T/windows" tests/apps/windows.c -lOpenCL -ldl &&
        $x $f -std=gnu11 -I. -o "$A64T/test_gzstream" tests/unit/test_gzstream.c writer/gzstream.c -ldeflate -lz &&
        $x $f -std=gnu11 -I. -o "$A64T/test_tsc" tests/unit/test_tsc.c trace/clock.c || exit 1
        echo "$A64T/libstandin.so" > "$A64T/icd/standin.icd"
        touch "$stamp"
    ) 9> "$top/arm64.lock"
}

a64() {   # a64 cmd...: with the stand-in as the only OpenCL platform
    OCL_ICD_VENDORS=$A64T/icd "$@"
}

t_arm64_builds_shim_launcher_report_replay() {
    arm64_ready || return $?
    local f
    for f in libcltrace.so cltrace cltrace-report cltrace-replay cltrace-probe cltrace-view; do
        file -L "$A64/$f" | grep -q "ARM aarch64" || { echo "$f: $(file -L "$A64/$f")"; return 1; }
    done
    # the hot paths' portable pieces are there: the dlsym export (aarch64
    # assembly), no x86 instruction needed
    aarch64-linux-gnu-nm -D --defined-only "$A64/libcltrace.so" | grep -qw dlsym
    # the deflate writer's arm64 packet comparison (word arithmetic, not
    # SSE2): its unit test under qemu
    "$A64T/test_gzstream"
    # the hot clock: CNTVCT_EL0 exactly where the kernel's clocksource is
    # arch_sys_counter (under qemu on x86: the host's, so BOOTTIME), and
    # either one following BOOTTIME once calibrated
    "$A64T/test_tsc"
}

t_arm64_linked_program_8_threads() {
    # 8 threads x 10,000 clSetKernelArg on arm64: every call in the trace,
    # counted the app's way; the x86 report reads it
    arm64_ready || return $?
    a64 "$A64T/threads" > "$WORK/plain.out"
    a64 "$A64/cltrace" -q -o "$WORK/th.pftrace.gz" -- "$A64T/threads" > "$WORK/traced.out"
    diff "$WORK/plain.out" "$WORK/traced.out"
    local t calls
    t=$(ls "$WORK"/th.*.pftrace.gz)
    lint "$t"
    "$B/cltrace-report" --format json "$t" > "$WORK/r.json"
    # the trace says which clock it was written with
    local src clock
    src=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
    clock=$(attr_of "$t" cltrace.clock)
    echo "arm64 under qemu: clocksource $src, cltrace.clock $clock"
    [ "$clock" = "$([ "$src" = arch_sys_counter ] && echo cntvct || echo boottime)" ]
    calls=$(sed -n 's/.*calls=\([0-9]*\).*/\1/p' "$WORK/plain.out")
    $PY - "$WORK/r.json" "$calls" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = {a["name"]: a["count"] for a in r["api"]}
assert sum(n.values()) == int(sys.argv[2]), (sum(n.values()), sys.argv[2], n)
assert n["clSetKernelArg"] == 80000 and n["clCreateKernel"] == 8, n
print("arm64: %d calls on 8 threads, as the app counted" % sum(n.values()))
PY
}

t_arm64_dlopen_dlsym_program() {
    # a program that dlopens libOpenCL.so.1 and dlsyms each function: the
    # aarch64 dlsym trampoline hands it the wrappers, under the launcher
    # and under LD_PRELOAD
    arm64_ready || return $?
    a64 "$A64T/dlopen_app" > "$WORK/plain.out"
    a64 "$A64/cltrace" -q -o "$WORK/dl.pftrace.gz" -- "$A64T/dlopen_app" > "$WORK/traced.out"
    a64 env CLTRACE_OUTPUT="$WORK/pl.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD="$A64/libcltrace.so" \
        "$A64T/dlopen_app" > "$WORK/preload.out"
    diff "$WORK/plain.out" "$WORK/traced.out"
    diff "$WORK/plain.out" "$WORK/preload.out"
    local t
    for t in "$WORK"/dl.*.pftrace.gz "$WORK"/pl.*.pftrace*; do
        lint "$t"
        "$B/cltrace-report" --format json "$t" > "$WORK/r.json"
        $PY - "$WORK/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = {a["name"]: a["count"] for a in r["api"]}
assert n.get("clEnqueueNDRangeKernel") == 4 and n.get("clGetPlatformIDs", 0) >= 1, n
assert r["kernels"] and r["kernels"][0]["launches"] == 4, r["kernels"]
PY
    done
}

t_arm64_leaks_classed_with_stacks() {
    # the leak classes on arm64: each class and severity as on x86, the
    # creation stacks symbolized to file:line (libdw on arm64)
    arm64_ready || return $?
    local mode
    for mode in lost loop last cache; do
        a64 "$A64/cltrace" -q -o "$WORK/lk-$mode.pftrace.gz" -- "$A64T/leak_classes" $mode > /dev/null
        report_formats "$(ls "$WORK"/lk-$mode.*.pftrace.gz)" "$WORK/lk-$mode"
        $PY tests/checks.py report_leak_class "$WORK/lk-$mode" $mode || return 1
        lint "$(ls "$WORK"/lk-$mode.*.pftrace.gz)"
    done
    grep -q "leak_classes.c:[0-9]" "$WORK/lk-lost/r.txt"
}

t_arm64_windows_by_count_kernel_and_hand() {
    # windows on arm64 (windows.sh's program and checks): by call count, by
    # a kernel, by the program's cltrace_start/stop; exactly the calls
    # inside, each trace linted, the x86 report says so
    arm64_ready || return $?
    T=$A64T SHIM=$A64/libcltrace.so
    export OCL_ICD_VENDORS=$A64T/icd
    CLTRACE_WINDOW=171calls+81calls win_run wc plain
    win_check wc 172-252 1
    CLTRACE_WINDOW=kernel:hot+80calls win_run wk plain
    local first; first=$(grep -m1 "clEnqueueNDRangeKernel phase 2" "$WORK/wk.log" | cut -d' ' -f2)
    win_check wk "$first-$((first + 79))" 1
    win_run wa api
    win_check wa 1-9,172-252 2
}

t_arm64_report_reads_as_x86_does() {
    # the arm64 report on a trace written on x86 and on one written on
    # arm64: the JSON byte for byte the x86 report's
    arm64_ready || return $?
    a64 "$A64/cltrace" -q -o "$WORK/a.pftrace.gz" -- "$A64T/dlopen_app" > /dev/null
    local t
    for t in "$(ls "$WORK"/a.*.pftrace.gz)" tests/fixtures/pocl-leaks.pftrace.gz; do
        "$B/cltrace-report" --format json "$t" > "$WORK/x86.json" || [ $? -le 1 ]
        "$A64/cltrace-report" --format json "$t" > "$WORK/arm64.json" || [ $? -le 1 ]
        cmp "$WORK/x86.json" "$WORK/arm64.json" || { diff "$WORK/x86.json" "$WORK/arm64.json" | head; return 1; }
    done
}
