# Tests of capture under load: many threads at once, every call recorded and
# in order, with the defaults (the calling threads wait for the writer) and
# under ThreadSanitizer; drops only when asked for, and then said. Sourced by
# tests/run.sh: its t_* functions join the suite.

t_threads_pocl_exact() {
    traced "$WORK/th" "$T/threads" 8 3000 >/dev/null
    $PY tests/checks.py threads "$(trace_of "$WORK/th")" 8 3000
}

t_collector_tsan() {
    # the completion collector (its own thread, a lock-free hand-over ring)
    # under ThreadSanitizer: 20,000 launches, each handed over and collected
    # (every one timed: --sample=all)
    local out
    out=$(CLTRACE_SAMPLE=all CLTRACE_LIBRARY=$T/libfakecl.so TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
          CLTRACE_OUTPUT="$WORK/tc.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$B/tsan/libcltrace.so \
          "$T/bench_calls-tsan" ndrange 20000 --fake 2>&1)
    ! echo "$out" | grep -q ThreadSanitizer || { echo "$out" | head -30; return 1; }
    echo "$out" | grep -q "^ns_per_call"
    [ "$($PY tests/tracedump.py --attributes "$(trace_of "$WORK/tc")" |
         $PY -c 'import json,sys; a=json.load(sys.stdin); print(a["cltrace.device.0.own_events"] if "cltrace.device.0.own_events" in a else a["cltrace.commands_unmatched"] + a["cltrace.device_commands"])')" = 20000 ]
}

t_threads_tsan_exact() {
    local out
    out=$(CLTRACE_LIBRARY=$T/libfakecl.so TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
          CLTRACE_OUTPUT="$WORK/ts.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$B/tsan/libcltrace.so \
          "$T/threads-tsan" 8 5000 --fake 2>&1)
    echo "$out"
    ! echo "$out" | grep -q ThreadSanitizer || return 1
    echo "$out" | grep -q "threads=8 calls=40000"
    $PY tests/checks.py threads "$(trace_of "$WORK/ts")" 8 5000
}

t_threads_8x1M_defaults_lossless() {
    # 8 threads x 1,000,000 calls with the defaults (PoCL): the calling
    # threads wait for the writer instead of dropping: every call recorded,
    # each thread's in order (a C reader: the trace has 16M events)
    CLTRACE_QUIET=0 CLTRACE_OUTPUT="$WORK/big.%p.pftrace" LD_PRELOAD=$SHIM "$T/threads" 8 1000000 \
        > "$WORK/big.out" 2> "$WORK/big.err"
    grep -q "threads=8 calls=8000023" "$WORK/big.out"
    ! grep -q dropped "$WORK/big.err" || return 1
    "$T/trace_order" "$(trace_of "$WORK/big")" 8 1000000
    rm -f "$WORK"/big.*.pftrace*
}

t_threads_8x250k_tsan_lossless() {
    # the same under ThreadSanitizer, fake vendor, with the compressor
    # thread (it starts by itself only with 4 CPUs or more): 8 x 250,000
    # calls, ~175 buffers handed over and the callers waiting for the writer
    # all along (TSan's writer is ten times slower); races need handovers,
    # not volume: 8 x 1M took 55 s of make test's serial part
    local out
    out=$(CLTRACE_LIBRARY=$T/libfakecl.so TSAN_OPTIONS="halt_on_error=1 exitcode=66" CLTRACE_COMPRESS_THREAD=1 \
          CLTRACE_OUTPUT="$WORK/bigt.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$B/tsan/libcltrace.so \
          "$T/threads-tsan" 8 250000 --fake 2>&1)
    ! echo "$out" | grep -q ThreadSanitizer || return 1
    echo "$out" | grep -q "threads=8 calls=2000000"
    "$T/trace_order" "$(trace_of "$WORK/bigt")" 8 250000
    rm -f "$WORK"/bigt.*.pftrace*
}

spilled() { attr_of "$1" cltrace.spilled_bytes; }   # the bytes its writer set aside

# count_of TRACE FUNCTION: its calls in the trace, by the report (these
# traces hold a million calls: Python's decoder took ~20 s for each; the
# report's reader is checked against protobuf-c on every trace of the run)
count_of() {
    "$B/cltrace-report" --format json "$1" 2> /dev/null |
        $PY -c 'import json,sys; print(sum(c["count"] for c in json.load(sys.stdin)["api"] if c["name"] == sys.argv[1]))' "$2"
}

t_spill_keeps_every_call_through_exit_and_crash() {
    # 1M light calls outrun the writer: their records are set aside raw
    # (writer/spill.c) and encoded later. Every call is in the trace, in
    # order, at exit and after a crash (its flush encodes what was set
    # aside); the trace says how much went through the file; capped by
    # CLTRACE_SPILL_MB; the same calls as with spilling off
    local rc=0
    CLTRACE_OUTPUT="$WORK/sp.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM "$T/exits" plain 1000000 > /dev/null
    [ "$(spilled "$(trace_of "$WORK/sp")")" -gt 1000000 ]
    [ "$(count_of "$(trace_of "$WORK/sp")" clGetPlatformInfo)" -eq 1000003 ]
    CLTRACE_OUTPUT="$WORK/sc.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM "$T/exits" segv 1000000 \
        > /dev/null 2>&1 || rc=$?
    [ $rc -eq 139 ]
    [ "$(count_of "$(trace_of "$WORK/sc")" clGetPlatformInfo)" -eq 1000000 ]
    # (a ring of 1 MiB: a chunk of it fits under the cap, where a thread's
    # grown ring of 4 MiB is set aside 2 MiB at a time)
    CLTRACE_BUFFER_KB=1024 CLTRACE_SPILL_MB=1 CLTRACE_OUTPUT="$WORK/s1.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM \
        "$T/exits" plain 1000000 > /dev/null
    local capped; capped=$(spilled "$(trace_of "$WORK/s1")")
    [ "$capped" -gt 0 ]
    [ "$(count_of "$(trace_of "$WORK/s1")" clGetPlatformInfo)" -eq 1000003 ]
    CLTRACE_SPILL_MB=0 CLTRACE_OUTPUT="$WORK/s0.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM \
        "$T/exits" plain 1000000 > /dev/null
    [ "$(spilled "$(trace_of "$WORK/s0")")" -eq 0 ]
    for t in sp s0; do
        "$B/cltrace-report" --format json "$(trace_of "$WORK/$t")" |
            $PY -c 'import json,sys; a=json.load(sys.stdin); print(sorted((c["name"], c["count"], c["errors"]) for c in a["api"]))' > "$WORK/$t.api"
    done
    cmp "$WORK/sp.api" "$WORK/s0.api"
    ! ls -a "$WORK" | grep -q "\.spill" || return 1       # nothing left beside the traces
    if [ -x "$LINT" ]; then
        # the independent checker on spilled traces, at exit and after a
        # crash: 100,000 calls through a 64 KiB ring each (a million-call
        # trace took it 4 minutes, the suite's longest wait), a core each
        CLTRACE_BUFFER_KB=64 CLTRACE_OUTPUT="$WORK/lp.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM \
            "$T/exits" plain 100000 > /dev/null
        [ "$(spilled "$(trace_of "$WORK/lp")")" -gt 0 ]
        rc=0
        CLTRACE_BUFFER_KB=64 CLTRACE_OUTPUT="$WORK/lc.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM \
            "$T/exits" segv 100000 > /dev/null 2>&1 || rc=$?
        [ $rc -eq 139 ]
        lint "$(trace_of "$WORK/lp")" &
        local p=$!
        lint "$(trace_of "$WORK/lc")"
        wait "$p"
    fi
}

t_busy_threads_move_to_larger_rings() {
    # A thread that records faster than the writer encodes leaves its
    # 256 KiB ring for a larger one (writer/grow.c: 4 MiB, its pages touched
    # by the writer; past 8 such rings, 1 MiB), once: one such thread; of 8
    # at once, those the writer saw ahead of it (it may keep up with some;
    # on this 2-core VM all 8 move, loaded or not: a thread waiting on its
    # full ring takes the offer as it waits, where beside a CPU hog none
    # moved in half the runs). Every call is in the trace, each thread's in
    # order, through the spill that follows and after a crash; a size
    # asked for stays.
    CLTRACE_LIBRARY=$T/libfakecl.so CLTRACE_OUTPUT="$WORK/gr.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM \
        "$T/threads" 8 100000 --fake > /dev/null
    local tr; tr=$(trace_of "$WORK/gr")
    local grown; grown=$(attr_of "$tr" cltrace.rings_grown)
    [ "$grown" -ge 1 ] && [ "$grown" -le 8 ] || { echo "8 busy threads: $grown rings grown (want 1 to 8)"; return 1; }
    "$T/trace_order" "$tr" 8 100000
    CLTRACE_BUFFER_KB=256 CLTRACE_LIBRARY=$T/libfakecl.so CLTRACE_OUTPUT="$WORK/gk.%p.pftrace" CLTRACE_QUIET=1 \
        LD_PRELOAD=$SHIM "$T/threads" 8 20000 --fake > /dev/null
    tr=$(trace_of "$WORK/gk")
    grown=$(attr_of "$tr" cltrace.rings_grown)
    [ "$grown" -eq 0 ] || { echo "CLTRACE_BUFFER_KB=256 set: $grown rings grown (want 0)"; return 1; }
    "$T/trace_order" "$tr" 8 20000
    local rc=0
    CLTRACE_OUTPUT="$WORK/gc.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM "$T/exits" segv 300000 \
        > /dev/null 2>&1 || rc=$?
    [ $rc -eq 139 ] || { echo "the crashing program exited $rc (want 139, its SIGSEGV)"; return 1; }
    local calls; calls=$(count_of "$(trace_of "$WORK/gc")" clGetPlatformInfo)
    [ "$calls" -eq 300000 ] || { echo "after a crash: $calls of 300000 calls in the trace"; return 1; }
    CLTRACE_OUTPUT="$WORK/gp.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM "$T/exits" plain 300000 > /dev/null
    grown=$(attr_of "$(trace_of "$WORK/gp")" cltrace.rings_grown)
    [ "$grown" -eq 1 ] || { echo "one busy thread: $grown rings grown (want 1)"; return 1; }
    # a fork after the move: the child starts on a small ring of its own and moves too
    CLTRACE_OUTPUT="$WORK/gf.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM "$T/exits" fork 300000 > /dev/null
    local f got=""
    for f in "$WORK"/gf.*.pftrace*; do
        got="$got $(count_of "$f" clGetPlatformInfo):$(attr_of "$f" cltrace.rings_grown)"
    done
    got=$(echo $got | tr ' ' '\n' | sort -n | tr '\n' ' ')
    [ "$got" = "300003:1 600003:1 " ] || { echo "fork: calls:grown $got (want 300003:1 600003:1)"; return 1; }
}

t_full_buffer_drops_only_when_asked_and_said() {
    # CLTRACE_DROP=1: a full buffer drops calls; they are counted in the
    # trace, said on stderr at exit, and the report says so first
    CLTRACE_QUIET=0 CLTRACE_DROP=1 CLTRACE_LIBRARY=$T/libfakecl.so CLTRACE_BUFFER_KB=64 CLTRACE_WAIT_US=0 \
        CLTRACE_SPILL_MB=0 CLTRACE_OUTPUT="$WORK/dr.%p.pftrace" LD_PRELOAD=$SHIM "$T/threads" 1 300000 --fake > /dev/null 2> "$WORK/dr.err"
    local trace; trace=$(trace_of "$WORK/dr")
    $PY tests/checks.py dropped "$trace" 300000
    cat "$WORK/dr.err"
    grep -q "of 300000 calls were dropped (buffer full: the writer fell behind, CLTRACE_DROP=1)" "$WORK/dr.err"
    "$B/cltrace-report" "$trace" | head -n 1 | grep -q "^WARNING: [0-9]* calls were dropped"
    "$B/cltrace-report" --format json "$trace" | $PY -c 'import json,sys; f=json.load(sys.stdin)["findings"]; assert f[0]["rule"] == "dropped-calls", f[0]'
}

# The policy (5: SCHED_IDLE, 0: SCHED_OTHER) of the running process $1's
# thread named $2 (/proc/PID/task/TID/stat, field 41).
thread_policy() {
    local t
    for t in /proc/"$1"/task/*; do
        [ "$(cat "$t/comm" 2>/dev/null)" = "$2" ] && { awk '{ sub(/.*\) /, ""); print $39 }' "$t/stat"; return; }
    done
}

t_own_threads_idle_and_lifted_while_the_app_waits() {
    # cltrace's threads run at idle priority (writer/ownthreads.c). An app
    # whose threads take every CPU (spinners, one a CPU) leaves them none
    # until its calling thread waits for ring room: they go back to normal
    # priority then, every call is recorded in order, and the trace says so
    local n out a
    n=$(nproc)
    out=$(CLTRACE_LIBRARY=$T/libfakecl.so CLTRACE_OUTPUT="$WORK/sp.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM \
          timeout 300 "$T/threads" 1 2000000 --fake --spin "$n" 2>&1)
    echo "$out" | grep -q "threads=1 calls=2000000" || { echo "$out"; return 1; }
    "$T/trace_order" "$(trace_of "$WORK/sp")" 1 2000000
    a=$($PY tests/tracedump.py --attributes "$(trace_of "$WORK/sp")")
    echo "$a" | $PY -c 'import json, sys; a = json.load(sys.stdin); print({k: v for k, v in a.items() if "own_threads" in k or "dropped" in k})'
    # idle priority on a virtual machine whose idle CPUs halt at once (the
    # trace says how they wait); elsewhere normal, and why
    local pri
    pri=$(echo "$a" | $PY -c 'import json, sys; a = json.load(sys.stdin)
halts = a.get("cltrace.hypervisor") == 1 and (a.get("cltrace.cpuidle_driver") != "haltpoll" or
                                             a.get("cltrace.guest_halt_poll_ns") == 0)
p = a.get("cltrace.own_threads_priority")
if p == "normal":
    assert a.get("cltrace.own_threads_normal_why"), a
    assert halts or "not a virtual machine whose idle CPUs halt at once" in a["cltrace.own_threads_normal_why"], a
else:
    assert p == "idle" and halts, a
    assert a.get("cltrace.own_threads_lifted") == "an app thread waited for room in its ring", a
    assert a.get("cltrace.own_threads_lifts", 0) >= 1, a
print(p)')
    rm -f "$WORK"/sp.*.pftrace*
    if [ "$pri" != idle ]; then
        echo "SKIP part: cltrace's threads at normal priority here: the idle-priority cases not run"
        return 0
    fi
    # while the app runs: the writer and the collector at idle priority
    CLTRACE_OUTPUT="$WORK/sq.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM \
        "$T/bench_calls" enqueue 1 --nap-us 1500000 > /dev/null &
    local pid=$!
    sleep 1
    [ "$(thread_policy $pid cltrace-writer)" = 5 ] && [ "$(thread_policy $pid cltrace-collect)" = 5 ] ||
        { echo "writer $(thread_policy $pid cltrace-writer), collector $(thread_policy $pid cltrace-collect)"; wait; return 1; }
    wait $pid
    rm -f "$WORK"/sq.*.pftrace*
    # where they could not be put back (no CAP_SYS_NICE, RLIMIT_NICE below
    # 20): normal priority, and why
    if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && [ "$(ulimit -He)" != unlimited ] &&
       [ "$(ulimit -He)" -lt 20 ]; then
        CLTRACE_OUTPUT="$WORK/sn.%p.pftrace" CLTRACE_QUIET=1 setpriv --bounding-set -sys_nice env LD_PRELOAD=$SHIM \
            "$T/bench_calls" enqueue 1 --nap-us 1500000 > /dev/null &
        pid=$!
        sleep 1
        [ "$(thread_policy $pid cltrace-writer)" = 0 ] || { echo "writer $(thread_policy $pid cltrace-writer)"; wait; return 1; }
        wait $pid
        $PY tests/tracedump.py --attributes "$(trace_of "$WORK/sn")" | $PY -c 'import json, sys; a = json.load(sys.stdin)
assert a.get("cltrace.own_threads_priority") == "normal", a
assert "CAP_SYS_NICE" in a.get("cltrace.own_threads_normal_why", ""), a'
        rm -f "$WORK"/sn.*.pftrace*
    else
        echo "SKIP part: not root with setpriv and RLIMIT_NICE's hard limit below 20: the normal-priority case not run"
    fi
}

t_own_threads_lift_tsan() {
    # the lifts and their undoing under ThreadSanitizer: a calling thread
    # waiting for ring room behind spinners, the writer settling after
    local out rc=0
    out=$(CLTRACE_LIBRARY=$T/libfakecl.so TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
          CLTRACE_OUTPUT="$WORK/spt.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$B/tsan/libcltrace.so \
          "$T/threads-tsan" 2 300000 --fake --spin "$(nproc)" 2>&1) || rc=$?
    ! echo "$out" | grep -q ThreadSanitizer || { echo "$out" | head -30; echo "ThreadSanitizer reported"; return 1; }
    [ "$rc" -eq 0 ] || { echo "$out" | tail -20; echo "the program exited with status $rc"; return 1; }
    echo "$out" | grep -q "threads=2 calls=600000" ||
        { echo "$out" | tail -20; echo "the program did not say it made its 600,000 calls"; return 1; }
    "$T/trace_order" "$(trace_of "$WORK/spt")" 2 300000 ||
        { echo "the trace does not hold every call in order"; return 1; }
    rm -f "$WORK"/spt.*.pftrace*
}
