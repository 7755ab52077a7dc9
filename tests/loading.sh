# Tests of how programs load OpenCL and which platform version they meet
# (sourced by tests/run.sh: its t_* functions join the suite).
#
# Every count here is independent of cltrace: build/tests/count/libOpenCL.so.1
# (tests/count/gen_counter.py) stands in for the system loader in an untraced
# run and counts each cl* call the program makes; the trace of the same
# program must hold exactly those calls, under `cltrace app` and under
# LD_PRELOAD alike.

COUNT=${CLCOUNT_DIR:-$T/count}     # scripts/loader-check.sh points it at another loader's counter
OCLGRIND_ICD=/usr/lib/oclgrind/liboclgrind-rt-icd.so

counted() {   # counted NAME cmd...: untraced (counted), `cltrace`, LD_PRELOAD: same stdout and status
    local name=$1; shift
    local rc0=0 rc1=0 rc2=0
    CLCOUNT_OUT="$WORK/$name.count" LD_LIBRARY_PATH=$COUNT timeout 300 "$@" > "$WORK/$name.plain" || rc0=$?
    LD_LIBRARY_PATH=$COUNT CLTRACE_QUIET=1 timeout 300 "$B/cltrace" -o "$WORK/$name.launcher.%p.pftrace" -- "$@" \
        > "$WORK/$name.launcher" || rc1=$?
    LD_LIBRARY_PATH=$COUNT timeout 300 env CLTRACE_OUTPUT="$WORK/$name.preload.%p.pftrace" CLTRACE_QUIET=1 \
        LD_PRELOAD=$SHIM "$@" > "$WORK/$name.preload" || rc2=$?
    echo "$name: status $rc0 untraced, $rc1 cltrace, $rc2 LD_PRELOAD; $(awk '{n += $2} END {print n}' "$WORK/$name.count") calls counted"
    [ "$rc0" = "$rc1" ]
    [ "$rc0" = "$rc2" ]
    [ "$rc0" != 124 ]
    cmp "$WORK/$name.plain" "$WORK/$name.launcher"
    cmp "$WORK/$name.plain" "$WORK/$name.preload"
    $PY tests/checks.py counted "$(trace_of "$WORK/$name.launcher")" "$WORK/$name.count"
    $PY tests/checks.py counted "$(trace_of "$WORK/$name.preload")" "$WORK/$name.count"
}

t_runtime_loaded_dlopen_dlsym() {
    counted dl "$T/dlopen_app"                                  # by soname
    counted dlpath "$T/dlopen_app" "$COUNT/libOpenCL.so.1"      # by full path
    counted dlso "$T/dlopen_app" libOpenCL.so                   # the development name
}

t_runtime_loaded_dlmopen() {
    counted dlm "$T/dlopen_app" libOpenCL.so.1 dlmopen
}

t_runtime_loaded_then_unloaded_by_the_app() {
    # the app dlcloses libOpenCL at its end and runs on, as hashcat does:
    # the loader's unload took the driver with it while cltrace's collector
    # still asked it about the last commands (SIGSEGV in every run); now
    # cltrace keeps the library loaded: 5 runs, each as untraced, its trace
    # whole with every call (the crash's evidence: capture/dlsym.c)
    local i
    for i in 1 2 3 4 5; do
        counted "unload$i" "$T/dlopen_app" libOpenCL.so.1 unload
    done
}

t_runtime_loaded_python_ctypes() {
    counted ctypes $PY tests/apps/ctypes_app.py
}

t_runtime_loaded_hashcat_mask_attack() {
    command -v hashcat > /dev/null || { echo "hashcat not installed (optional package)"; return 77; }
    mkdir -p "$WORK/hc-home"
    HOME=$WORK/hc-home counted hashcat hashcat -m 0 -a 3 --potfile-disable --quiet \
        202cb962ac59075b964b07152d234b70 '?d?d?d'
    grep -q ':123$' "$WORK/hashcat.plain"
}

t_linked_and_runtime_loaded_once_each() {
    # linked with libOpenCL and calling it directly, and dlopen/dlsym on the
    # same library: one record per call, whichever route it took
    counted linked "$T/dlopen_app_linked"
    grep -q "clGetPlatformIDs 2" "$WORK/linked.count"
}

# --- an OpenCL 1.2 platform (Oclgrind through OCL_ICD_VENDORS) ---------------

oclgrind_env() {
    [ -f "$OCLGRIND_ICD" ] || { echo "oclgrind not installed (optional package)"; return 77; }
    mkdir -p "$WORK/vendors"       # a directory: ocl-icd and the Khronos loader both read it
    printf '%s\n' "$OCLGRIND_ICD" > "$WORK/vendors/oclgrind.icd"
    export OCL_ICD_VENDORS=$WORK/vendors
}

own_calls_are_1_2() {   # own_calls_are_1_2 NAME cmd...: a traced run counted too
    local name=$1; shift
    LD_LIBRARY_PATH=$COUNT CLCOUNT_OUT="$WORK/$name.all" CLTRACE_OUTPUT="$WORK/$name.own.%p.pftrace" \
        CLTRACE_QUIET=1 LD_PRELOAD=$SHIM timeout 300 "$@" > /dev/null
    # what the OpenCL 1.2 headers declare, independent of cltrace's tables,
    # 1.0's deprecated commands too: every 1.2 ICD's dispatch table has their
    # slots, and cltrace calls clSetCommandQueueProperty only where its
    # queue's slot is filled (capture/queues.c)
    printf '#define CL_TARGET_OPENCL_VERSION 120\n#define CL_USE_DEPRECATED_OPENCL_1_0_APIS\n#include <CL/cl.h>\n' |
        ${CC:-cc} -E - |
        grep -o '\bcl[A-Z][A-Za-z0-9]*' | sort -u > "$WORK/cl12.names"
    $PY tests/checks.py own_calls "$(trace_of "$WORK/$name.own")" "$WORK/$name.all" "$WORK/cl12.names"
}

t_opencl_1_2_platform_c_program() {
    oclgrind_env || return 77
    counted og "$T/old_platform"
    grep -q "OpenCL 1.2" "$WORK/og.plain"
    own_calls_are_1_2 og "$T/old_platform"
}

t_opencl_1_2_platform_pyopencl() {
    oclgrind_env || return 77
    $PY -c 'import pyopencl' 2> /dev/null || { echo "python3-pyopencl not installed (optional package)"; return 77; }
    export PYOPENCL_CTX=0 PYOPENCL_NO_CACHE=1
    counted ogpy $PY tests/apps/pyocl_vadd.py
    counted ogpyinfo $PY tests/apps/pyocl_info.py
    own_calls_are_1_2 ogpy $PY tests/apps/pyocl_vadd.py
}

sampled_loop() {   # sampled_loop NAME: old_platform loop sampled, checked against untraced
    "$T/old_platform" loop 40 > "$WORK/$1.plain"
    CLTRACE_SAMPLE=4,8 traced "$WORK/$1" "$T/old_platform" loop 40 > "$WORK/$1.out"
    diff "$WORK/$1.plain" "$WORK/$1.out"
    lint "$(trace_of "$WORK/$1")"
}

t_profiling_switched_for_timed_commands() {
    # By default and with CLTRACE_SAMPLE, a queue the app made without
    # profiling stays plain where the driver can switch profiling (Oclgrind
    # takes the call): on for a timed command, left on while the next ones
    # are timed, off before an untimed one (tests/apps/profswitch.c logs each
    # switch). PoCL's loader entry for the switch is empty: its queue stays
    # plain all the same, its timed commands timed by callbacks (a blocking
    # read enqueued non-blocking and waited for). Same output either way,
    # the app's own profiling query included (Oclgrind answers it unasked)
    sampled_loop ps
    $PY tests/checks.py switched "$(trace_of "$WORK/ps")" 0 40 1
    oclgrind_env || return 77
    export CLTRACE_LIBRARY=$T/profswitch.so PROFSWITCH_LOG=$WORK/og.switches
    sampled_loop og
    grep -q "profiling info=0" "$WORK/og.out"
    $PY tests/checks.py switched "$(trace_of "$WORK/og")" 1 40
    $PY tests/checks.py switches "$(trace_of "$WORK/og")" "$WORK/og.switches"
    PROFSWITCH_LOG=$WORK/ogd.switches traced "$WORK/ogd" "$T/old_platform" loop 40 | diff "$WORK/og.plain" -
    $PY tests/checks.py switches "$(trace_of "$WORK/ogd")" "$WORK/ogd.switches"
}

t_pocl_queues_timed_by_callbacks() {
    # PoCL cannot switch profiling: by default its queues stay as the app made
    # them, each timed command timed by its event's callbacks and held by an
    # event of cltrace's own until they are set (capture/cbtime.c). The app
    # sees what it sees untraced: its user event holds its launch, a wait list
    # of 20, an out-of-order queue, a blocking map and read, its own event's
    # profiling refused. With launches captured (a capture waits for the
    # command's events in front of the driver) the queues get profiling: no
    # command held, no hang; the launch behind the app's user event, not yet
    # set, is not captured (waiting for it would never end: it hung), said so
    "$T/cbgate" > "$WORK/cb.plain"
    traced "$WORK/cb" timeout 60 "$T/cbgate" | diff "$WORK/cb.plain" -
    lint "$(trace_of "$WORK/cb")"
    $PY tests/checks.py by_callbacks "$(trace_of "$WORK/cb")" 2
    # the callbacks on PoCL's threads and the slots the collector reads, under ThreadSanitizer
    local rt; rt=$(${CC:-cc} -print-file-name=libtsan.so)
    if [ -f "$rt" ]; then
        TSAN_OPTIONS="halt_on_error=1 exitcode=66" CLTRACE_OUTPUT="$WORK/cbt.%p.pftrace" CLTRACE_QUIET=1 \
            LD_PRELOAD="$rt:$B/tsan/libcltrace.so" timeout 120 "$T/cbgate" > "$WORK/cbt.out" 2>&1
        ! grep -q ThreadSanitizer "$WORK/cbt.out"
        diff "$WORK/cb.plain" "$WORK/cbt.out"
        $PY tests/checks.py by_callbacks "$(trace_of "$WORK/cbt")" 2
    else
        echo "not checked under ThreadSanitizer: no libtsan"
    fi
    CLTRACE_CAPTURE=add CLTRACE_CAPTURE_DIR=$WORK/cap CLTRACE_OUTPUT="$WORK/cc.%p.pftrace" LD_PRELOAD=$SHIM \
        timeout 60 "$T/cbgate" 2> "$WORK/cc.err" | diff "$WORK/cb.plain" -
    grep -q "not captured: add launch 1 waits for a user event the program has not set yet" "$WORK/cc.err"
    [ "$(ls -d "$WORK"/cap/add@* | wc -l)" -eq 2 ]
    $PY tests/checks.py by_callbacks "$(trace_of "$WORK/cc")" 0
}

t_kernel_facts_however_the_kernel_was_made() {
    # a kernel's work-group facts are asked when it is made, not after its
    # first launch (PoCL answered them under the lock its worker held while
    # compiling that launch: beside two CPU hogs 35-100 ms of the app's call);
    # a kernel of clCreateKernelsInProgram or clCloneKernel is drawn under its
    # name (it was "NDRangeKernel"), with the facts the driver gives the app
    "$T/kernel_facts" > "$WORK/kf.plain"
    traced "$WORK/kf" "$T/kernel_facts" | diff "$WORK/kf.plain" -
    lint "$(trace_of "$WORK/kf")"
    $PY tests/checks.py kernel_facts "$(trace_of "$WORK/kf")" "$WORK/kf.plain"
}

t_opencl_1_2_platform_missing_command_fails_not_hangs() {
    # ocl-icd 2.3 sends a 2.1 command a 1.2 vendor lacks back in a loop, by
    # name: untraced the program spins; under cltrace the command fails with
    # CL_INVALID_OPERATION (said once on stderr) and the program goes on
    oclgrind_env || return 77
    local rc=0
    CLTRACE_OUTPUT="$WORK/lp.%p.pftrace" LD_PRELOAD=$SHIM timeout 60 "$T/old_platform" timer \
        > "$WORK/lp.out" 2> "$WORK/lp.err" || rc=$?
    cat "$WORK/lp.out" "$WORK/lp.err"
    [ $rc -eq 0 ]
    grep -q "clGetDeviceAndHostTimer: -59" "$WORK/lp.out"
    [ "$(grep -c 'calls it back into cltrace' "$WORK/lp.err")" -eq 1 ]
}

t_opencl_1_2_platform_queue_retry_never_recurses() {
    # clCreateCommandQueueWithProperties on Oclgrind comes back into cltrace
    # by name: the queue cltrace asked for failed, and its retry of the app's
    # own request used to come back in again, without end (a stack overflow
    # that crashed the program). Now the retry is made once: no crash, and
    # where the command fails the message says why
    oclgrind_env || return 77
    local rc=0
    CLTRACE_OUTPUT="$WORK/lq.%p.pftrace" LD_PRELOAD=$SHIM timeout 60 "$B/examples/transfers" \
        > "$WORK/lq.out" 2> "$WORK/lq.err" || rc=$?
    cat "$WORK/lq.err"
    [ $rc -lt 128 ]
    [ $rc -eq 0 ] || grep -q 'calls it back into cltrace' "$WORK/lq.err"
}
