# Windows (sourced by tests/run.sh): what is recorded when, by time, call
# count, kernel, the program's cltrace_start/stop and `cltrace ctl`. The
# program: tests/apps/windows.c (setup = calls 1-9, phase P = calls
# 10+81P .. 90+81P, the end = 334-338; every call in its log).

win_run() {   # win_run NAME MODE: traced, its log NAME.log; CLTRACE_WINDOW from the caller
    # A timed run whose program could not keep its own schedule (a phase
    # late: setup's builds on a loaded machine took seconds) says nothing of
    # time windows: run again, three times at most
    local try
    for try in 1 2 3; do
        rm -f "$WORK/$1".*.pftrace*
        traced "$WORK/$1" "$T/windows" "$2" > "$WORK/$1.log" 2> "$WORK/$1.err"
        grep -q '^done$' "$WORK/$1.log" || return 1
        grep -q "late" "$WORK/$1.err" || return 0
        echo "$1, try $try: $(grep -m1 late "$WORK/$1.err")"
    done
    return 1
}

win_check() {   # win_check NAME RANGES WINDOWS: the calls inside, the trace lints, the report says so
    local trace; trace=$(trace_of "$WORK/$1")
    $PY tests/checks.py window "$trace" "$WORK/$1.log" "$2" "$3"
    lint "$trace"
    "$B/cltrace-report" "$trace" > "$WORK/$1.txt" || [ $? -le 1 ]
    grep -q "^window: this trace holds $3 window" "$WORK/$1.txt" || { head -5 "$WORK/$1.txt"; false; }
}

t_window_by_call_count_kernel_and_time() {
    # 171calls+81calls: exactly phase 2; kernel:hot+80calls: from hot's first
    # launch, 80 calls; 3.5s+1s: phase 2, which runs 4 s after main began
    CLTRACE_WINDOW=171calls+81calls win_run wc plain
    win_check wc 172-252 1
    CLTRACE_WINDOW=kernel:hot+80calls win_run wk plain
    local first; first=$(grep -m1 "clEnqueueNDRangeKernel phase 2" "$WORK/wk.log" | cut -d' ' -f2)
    win_check wk "$first-$((first + 79))" 1
    CLTRACE_WINDOW=3.5s+1s win_run wt timed
    win_check wt 172-252 1
    # two windows, one by count then one by time, and one repeated every 1 s
    CLTRACE_WINDOW=9calls+81calls,3.5s+1s win_run w2 timed
    win_check w2 10-90,172-252 2
    CLTRACE_WINDOW=1.5s+1s CLTRACE_WINDOW_EVERY=2s win_run we timed
    win_check we 10-90,172-252 2
}

t_window_by_the_programs_own_hand() {
    # cltrace_stop() after setup, cltrace_start() before phase 2, stop after
    # it: the run's start up to the first stop is window 1, phase 2 window 2;
    # under --window manual nothing before the first start
    win_run wa api
    win_check wa 1-9,172-252 2
    CLTRACE_WINDOW=manual win_run wm api
    win_check wm 172-252 1
    # without cltrace the same program runs as before
    "$T/windows" api | grep -v "^phase" | diff - <(grep -v "^phase" "$WORK/wa.log")
}

t_window_objects_and_leaks_of_the_whole_run() {
    # a window's report names the objects made before it (buffer a, the
    # kernel), and the leaks at exit are those of a whole-run trace
    traced "$WORK/all" "$T/windows" plain > /dev/null
    CLTRACE_WINDOW=171calls+81calls win_run wl plain
    for t in all wl; do
        "$B/cltrace-report" --format json "$(trace_of "$WORK/$t")" > "$WORK/$t.json" || [ $? -le 1 ]
    done
    $PY - "$WORK/all.json" "$WORK/wl.json" <<'PY'
import json, sys
a, w = (json.load(open(p)) for p in sys.argv[1:])
def leaks(r):
    return sorted((f["where"], f.get("class"), f["severity"], f.get("numbers").split(":")[0]) for f in r["findings"] if f["rule"] == "leaks")
assert leaks(a) and leaks(a) == leaks(w), (leaks(a), leaks(w))
k = {x["name"]: x for x in w.get("kernels", [])}
assert "hot" in k and k["hot"].get("launches") == 20, w.get("kernels")
PY
    "$B/cltrace-report" "$(trace_of "$WORK/wl")" > "$WORK/wl.raw" || [ $? -le 1 ]
    unwrap "$WORK/wl.raw" > "$WORK/wl.txt"
    grep -q "calls outside them: only those that make, build or release objects" "$WORK/wl.txt"
}

ctl_wait() {   # ctl_wait FILE LINE: until the program printed it (10 s at most)
    for _ in $(seq 100); do grep -qx "$2" "$1" && return 0; sleep 0.1; done
    echo "never printed: $2"; cat "$1"; false
}

t_window_cltrace_ctl_start_stop_snapshot_status() {
    # --window manual: nothing until `cltrace ctl PID start` (phase 1),
    # `stop` after it; a snapshot writes what was recorded while the program
    # runs on; status says what it does; an unknown command is a usage error
    mkfifo "$WORK/in"
    CLTRACE_WINDOW=manual CLTRACE_OUTPUT="$WORK/ct.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM \
        "$T/windows" wait < "$WORK/in" > "$WORK/ct.log" &
    local pid=$!
    exec 7> "$WORK/in"
    ctl_wait "$WORK/ct.log" "waiting 0"
    "$B/cltrace" ctl $pid status | grep -q "^pid $pid: not recording"
    echo >&7
    ctl_wait "$WORK/ct.log" "waiting 1"
    "$B/cltrace" ctl $pid start | grep -qx recording
    "$B/cltrace" ctl $pid start | grep -qx "already recording"
    echo >&7
    ctl_wait "$WORK/ct.log" "waiting 2"
    "$B/cltrace" ctl $pid stop | grep -qx stopped
    "$B/cltrace" ctl $pid snapshot > "$WORK/snap.out"
    grep -q "^written: $WORK/ct.$pid.pftrace" "$WORK/snap.out"
    cp "$(trace_of "$WORK/ct")" "$WORK/snap.pftrace.gz"
    $PY tests/checks.py calls "$WORK/snap.pftrace.gz" clEnqueueNDRangeKernel 20
    local rc=0
    "$B/cltrace" ctl $pid dance 2> "$WORK/dance.err" || rc=$?
    [ $rc -eq 2 ]
    grep -q "usage: cltrace ctl PID start|stop|snapshot|status" "$WORK/dance.err"
    echo >&7; ctl_wait "$WORK/ct.log" "waiting 3"; echo >&7
    exec 7>&-
    wait $pid
    win_check ct 91-171 1
    [ ! -e "/tmp/cltrace-$(id -u)/$pid.sock" ]
    [ ! -e "${XDG_RUNTIME_DIR:-/nonexistent}/cltrace/$pid.sock" ]
    ! "$B/cltrace" ctl $pid status 2> "$WORK/gone.err" || return 1
    grep -q "no traced program with a channel as process $pid" "$WORK/gone.err"
}

t_window_cltrace_ctl_refuses_another_user() {
    # the channel is its user's: a program run as nobody refuses root, and
    # nobody cannot reach root's program (its folder is 0700)
    [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null || { echo "needs root and setpriv to act as another user"; return 77; }
    local d=/tmp/cltrace-nobody-$$
    mkdir -m 777 "$d"
    setpriv --reuid=65534 --regid=65534 --clear-groups true 2> /dev/null || { rmdir "$d"; echo "setpriv cannot switch users here"; return 77; }
    [ -r "$SHIM" ] && setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$T/windows" ||
        { rmdir "$d"; echo "the build folder is not readable by nobody"; return 77; }
    mkfifo -m 666 "$d/in"
    setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_RUNTIME_DIR HOME="$d" XDG_CACHE_HOME="$d" CLTRACE_WINDOW=manual \
        CLTRACE_OUTPUT="$d/nb.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM "$T/windows" wait < "$d/in" > "$d/nb.log" &
    local pid=$!
    exec 7> "$d/in"
    ctl_wait "$d/nb.log" "waiting 0"
    local rc=0
    "$B/cltrace" ctl $pid start > "$WORK/root.out" 2>&1 || rc=$?
    for _ in 1 2 3 4; do echo >&7; done
    exec 7>&-
    wait $pid || true
    rm -rf "$d"
    cat "$WORK/root.out"
    [ $rc -eq 1 ]
    grep -q "refused: only user 65534 may control this program" "$WORK/root.out"
    # root's program, nobody asking
    mkfifo "$WORK/in2"
    CLTRACE_WINDOW=manual CLTRACE_OUTPUT="$WORK/rt.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM \
        "$T/windows" wait < "$WORK/in2" > "$WORK/rt.log" &
    pid=$!
    exec 7> "$WORK/in2"
    ctl_wait "$WORK/rt.log" "waiting 0"
    rc=0
    setpriv --reuid=65534 --regid=65534 --clear-groups "$B/cltrace" ctl $pid start > "$WORK/nb.out" 2>&1 || rc=$?
    for _ in 1 2 3 4; do echo >&7; done
    exec 7>&-
    wait $pid
    cat "$WORK/nb.out"
    [ $rc -eq 1 ] && grep -q "refused: process $pid's channel belongs to another user" "$WORK/nb.out"
}

t_window_spelling_errors_said_before_the_run() {
    local rc=0
    "$B/cltrace" --window 10x+1s -- true 2> "$WORK/bad.err" || rc=$?
    [ $rc -eq 2 ]
    grep -q "a start is a duration (60s), a count (1000calls), kernel:NAME or manual" "$WORK/bad.err"
    rc=0
    "$B/cltrace" --window 10s+1s --every 5 -- true 2> "$WORK/bad2.err" || rc=$?
    [ $rc -eq 2 ]
    grep -q "every '5': not a duration" "$WORK/bad2.err"
    # the shim, given a bad spelling without the launcher: said once, the whole run recorded
    CLTRACE_WINDOW=soon CLTRACE_OUTPUT="$WORK/bs.%p.pftrace" LD_PRELOAD=$SHIM "$T/windows" plain > "$WORK/bs.log" 2> "$WORK/bs.err"
    grep -q "CLTRACE_WINDOW=soon: 'soon': a start is a duration" "$WORK/bs.err"
    $PY tests/checks.py calls "$(trace_of "$WORK/bs")" clEnqueueNDRangeKernel 80
}

t_window_under_sanitizers() {
    # the control thread, the calling thread's ticks, the flight recorder: a
    # kernel window and a timed one, and a snapshot at a failing call, under
    # the TSan shim; the flight recorder and the program's own start/stop
    # under the ASan+UBSan shim
    local rt
    rt=$(${CC:-cc} -print-file-name=libtsan.so)
    CLTRACE_WINDOW=kernel:hot+80calls,4.5s+1s CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/st.%p.pftrace" \
        TSAN_OPTIONS=halt_on_error=1 LD_PRELOAD="$rt:$B/tsan/libcltrace.so" "$T/windows" timed > "$WORK/st.log" 2> "$WORK/san.err" ||
        { cat "$WORK/san.err"; return 1; }     # a race halts the run: say which
    local first; first=$(grep -m1 "clEnqueueNDRangeKernel phase 2" "$WORK/st.log" | cut -d' ' -f2)
    $PY tests/checks.py window "$(trace_of "$WORK/st")" "$WORK/st.log" "$first-$((first + 79)),253-338" 2
    CLTRACE_RING_MB=1 CLTRACE_SNAPSHOT_ON=error CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/sr.%p.pftrace" \
        TSAN_OPTIONS=halt_on_error=1 LD_PRELOAD="$rt:$B/tsan/libcltrace.so" "$T/windows" long 200000 error 100000 \
        > /dev/null 2>> "$WORK/san.err" || { cat "$WORK/san.err"; return 1; }
    [ -s "$(ls "$WORK"/sr.*.snapshot-1.pftrace)" ]
    rt=$(${CC:-cc} -print-file-name=libasan.so)
    CLTRACE_RING_MB=1 CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/ra.%p.pftrace" ASAN_OPTIONS=detect_leaks=0 \
        LD_PRELOAD="$rt:$B/asan/libcltrace.so" "$T/windows" long 200000 > /dev/null 2>> "$WORK/san.err"
    read -r n first last consecutive <<< "$(ring_values "$(trace_of "$WORK/ra")")"
    [ "$last" -eq 199999 ]
    [ "$consecutive" = True ]
    CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/sa.%p.pftrace" ASAN_OPTIONS=detect_leaks=0 \
        LD_PRELOAD="$rt:$B/asan/libcltrace.so" "$T/windows" api > "$WORK/sa.log" 2>> "$WORK/san.err"
    $PY tests/checks.py window "$(trace_of "$WORK/sa")" "$WORK/sa.log" 1-9,172-252 2
    ! grep -q "runtime error\|Sanitizer" "$WORK/san.err" || { cat "$WORK/san.err"; return 1; }
}

ring_values() {   # ring_values TRACE: "COUNT FIRST LAST CONSECUTIVE" of the long loop's clSetKernelArg values
    $PY tests/tracedump.py "$1" | $PY -c '
import json, sys
t = json.load(sys.stdin)
v = [s["args"]["arg_value"] for s in t["slices"] if s["name"] == "clSetKernelArg" and s["args"].get("result") == "CL_SUCCESS"]
print(len(v), v[0], v[-1], v == list(range(v[0], v[-1] + 1)))'
}

ring_consecutive_in_windows() {   # ring_consecutive_in_windows SNAPSHOT
    # the long loop's clSetKernelArg values, every one inside a window of
    # recording and consecutive within it: after `ctl stop` and `start` the
    # ring may still hold calls from before the stop (beside two CPU hogs the
    # loop made too few since to roll them out), the stopped time a gap
    $PY tests/tracedump.py "$1" | $PY -c '
import json, sys
t = json.load(sys.stdin)
wins = [tuple(map(int, w.split("-"))) for w in t["attributes"].get("cltrace.windows", "").split(";") if w]
calls = [(s["ts"], s["args"]["arg_value"]) for s in t["slices"]
         if s["name"] == "clSetKernelArg" and s["args"].get("result") == "CL_SUCCESS"]
where = lambda ts: next((i for i, (a, b) in enumerate(wins) if a <= ts <= b), -1) if wins else 0
parts = {}
for ts, v in calls:
    parts.setdefault(where(ts), []).append(v)
said = ", ".join("window %d: %d calls, %d..%d" % (i, len(v), v[0], v[-1]) for i, v in sorted(parts.items()))
print("%s: %d calls in %d window(s) of %d: %s" % (sys.argv[1].split("/")[-1], len(calls), len(parts), len(wins), said))
if -1 in parts:
    sys.exit("%d calls outside every window of recording" % len(parts[-1]))
for i, v in parts.items():
    if v != list(range(v[0], v[-1] + 1)):
        sys.exit("window %d: its calls not consecutive" % i)
if len(calls) <= 10000:
    sys.exit("%d calls, 10,000 at least expected" % len(calls))' "$1"
}

t_ring_keeps_the_last_calls_in_order() {
    # --ring 1: of 1,000,000 calls the trace holds the last ones, in order,
    # up to the last; memory and file bounded by the ring; it lints; the
    # leaks at exit are those of a whole trace
    CLTRACE_RING_MB=1 traced "$WORK/r1" "$T/windows" long 1000000 > /dev/null
    local t; t=$(trace_of "$WORK/r1")
    read -r n first last consecutive <<< "$(ring_values "$t")"
    echo "ring 1 MiB: $n calls, $first..$last, consecutive $consecutive"
    [ "$n" -gt 5000 ]
    [ "$n" -lt 100000 ]
    [ "$last" -eq 999999 ]
    [ "$consecutive" = True ]
    [ "$(attr_of "$t" cltrace.ring_bytes)" -le $((1024 * 1024 + 256 * 1024)) ]
    [ "$(attr_of "$t" cltrace.ring_dropped_bytes)" -gt 10000000 ]
    lint "$t"
    traced "$WORK/r0" "$T/windows" long 100000 > /dev/null
    CLTRACE_RING_MB=1 traced "$WORK/r2" "$T/windows" long 100000 > /dev/null
    for x in r0 r2; do
        "$B/cltrace-report" --format json "$(trace_of "$WORK/$x")" |
            $PY -c 'import json,sys; print(sorted((f["where"], f.get("class"), f["severity"]) for f in json.load(sys.stdin)["findings"] if f["rule"] == "leaks"))' > "$WORK/$x.leaks"
    done
    grep -q cl_kernel "$WORK/r0.leaks" && cmp "$WORK/r0.leaks" "$WORK/r2.leaks"
    "$B/cltrace-report" "$t" | grep -q "^flight recorder: this trace holds the last"
}

t_ring_written_on_a_crash_an_error_a_kernel_and_ctl() {
    # the program's crash: the last calls before it, in the trace file
    local rc=0
    CLTRACE_RING_MB=1 traced "$WORK/rs" "$T/windows" long 300000 segv > /dev/null 2>&1 || rc=$?
    [ $rc -eq 139 ]
    read -r n first last consecutive <<< "$(ring_values "$(trace_of "$WORK/rs")")"
    [ "$last" -eq 299999 ]
    [ "$consecutive" = True ]
    [ "$n" -gt 5000 ]
    [ "$(attr_of "$(trace_of "$WORK/rs")" cltrace.ring_dropped_bytes)" -gt 1000000 ]   # said though no footer
    lint "$(trace_of "$WORK/rs")"
    # the first failing call: a snapshot beside the trace, ending at it
    CLTRACE_RING_MB=1 CLTRACE_SNAPSHOT_ON=error traced "$WORK/re" "$T/windows" long 300000 error 200000 > /dev/null
    local snap; snap=$(ls "$WORK"/re.*.snapshot-1.pftrace)
    read -r n first last consecutive <<< "$(ring_values "$snap")"
    [ "$last" -le 200000 ]
    [ "$last" -ge 199000 ]
    [ "$consecutive" = True ]
    [ "$(attr_of "$snap" cltrace.snapshot)" = "the first failing call" ]
    $PY tests/checks.py calls "$snap" clSetKernelArg "$((n + 1))"
    lint "$snap"
    # a kernel's first launch: phases 0 and 1's 40 launches, none of phase 3's
    CLTRACE_RING_MB=1 CLTRACE_SNAPSHOT_ON=kernel:hot traced "$WORK/rk" "$T/windows" plain > /dev/null
    snap=$(ls "$WORK"/rk.*.snapshot-1.pftrace)
    [ "$(attr_of "$snap" cltrace.snapshot)" = "the first launch of hot" ]
    local launches; launches=$($PY tests/tracedump.py "$snap" | $PY -c 'import json,sys; print(sum(s["name"] == "clEnqueueNDRangeKernel" for s in json.load(sys.stdin)["slices"]))')
    [ "$launches" -ge 40 ]
    [ "$launches" -le 41 ]
    # cltrace ctl PID snapshot while the program waits
    mkfifo "$WORK/rin"
    CLTRACE_RING_MB=1 CLTRACE_OUTPUT="$WORK/rc.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM \
        "$T/windows" long 100000 wait < "$WORK/rin" > "$WORK/rc.log" &
    local pid=$!
    exec 7> "$WORK/rin"
    ctl_wait "$WORK/rc.log" waiting
    "$B/cltrace" ctl $pid snapshot > "$WORK/rc.out"
    echo >&7
    exec 7>&-
    wait $pid
    grep -q "^written: $WORK/rc.$pid.snapshot-1.pftrace" "$WORK/rc.out"
    read -r n first last consecutive <<< "$(ring_values "$WORK/rc.$pid.snapshot-1.pftrace")"
    [ "$last" -eq 99999 ] && [ "$consecutive" = True ]
}

ctl_timed() {   # ctl_timed PID COMMAND OUT: the answer into OUT, its time in ms on stdout
    local t0 t1
    t0=$(date +%s%N)
    "$B/cltrace" ctl "$1" "$2" > "$3" 2>&1 || true
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000))
}

ctl_under_load() {   # ctl_under_load NAME PROGRAM...: snapshot, stop, start, snapshot while it runs flat out
    # (CTL_BOUNDED_OK=1: a snapshot may also be the bounded one, what the
    # writer encoded in 0.7 s, as under TSan beside two CPU hogs)
    local name=$1 pid ms c i=0 whole="(whole up to now)"
    [ -z "${CTL_BOUNDED_OK:-}" ] || whole="(\(whole up to now\|what cltrace's writer encoded within 0.7 s: .*\))"
    shift
    LOOP_MARK=1 "$@" > /dev/null 2> "$WORK/$name.err" &
    pid=$!
    # well inside its loop: the writer behind it, the rings full. A fixed
    # second was not enough on a loaded machine: tests/apps/windows.c's
    # setup (a PoCL build) ran past it, and the first snapshot, whole up to
    # then, held none of the loop's calls. A program that says when its loop
    # begins (windows long) is waited for; then a second in the loop
    if [ "$2" = long ]; then
        for ms in $(seq 1 600); do
            grep -q '^looping$' "$WORK/$name.err" && break
            kill -0 $pid 2> /dev/null || break
            sleep 0.1
        done
        grep -q '^looping$' "$WORK/$name.err" || { kill $pid; echo "$name: its loop did not begin in 60 s"; return 1; }
    fi
    sleep 1
    for c in snapshot stop start snapshot; do
        i=$((i + 1))
        ms=$(ctl_timed $pid $c "$WORK/$name.$i.out")
        echo "$name: ctl $c answered in $ms ms: $(cut -c1-90 "$WORK/$name.$i.out")"
        [ "$ms" -lt 1000 ] || { kill $pid; echo "$name: ctl $c answered in $ms ms, over 1 s"; return 1; }
        case $c in
            snapshot) grep -q "^written: .* $whole$" "$WORK/$name.$i.out" ;;
            stop) grep -qx "stopped" "$WORK/$name.$i.out" ;;
            start) grep -qx "recording" "$WORK/$name.$i.out" ;;
        esac || {
            kill $pid
            tail -5 "$WORK/$name.err"
            echo "$name: ctl $c: not the answer wanted: $(cat "$WORK/$name.$i.out")"
            return 1
        }
    done
    kill $pid
    wait $pid 2> /dev/null || true
}

t_ctl_answers_under_load() {
    # `cltrace ctl` answers within 1 s while the program calls as fast as it
    # can (one thread of clSetKernelArg, 8 threads, a launch loop), with the
    # flight recorder and with a window, and a snapshot holds every call made
    # before the asking, in order (the backlog is held to 0.1 s
    # of the writer's work while a channel is open: writer/writer.c). Before
    # it said "no answer" after 5 s; then, bounded, wrote what the writer had
    # encoded in 0.3 s, the calls just before the asking missing
    CLTRACE_RING_MB=2 CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/l1.%p.pftrace" LD_PRELOAD=$SHIM \
        ctl_under_load ring-one-thread "$T/windows" long 2000000000
    local snap
    for snap in "$WORK"/l1.*.snapshot-[12].pftrace; do
        ring_consecutive_in_windows "$snap"
        [ "$(attr_of "$snap" cltrace.snapshot_whole)" = 1 ]
        # its last call began at most 50 ms before the asking (the program
        # may have been waiting for room then), none after it
        $PY tests/tracedump.py "$snap" | $PY -c '
import json, sys
t = json.load(sys.stdin)
asked = t["attributes"]["cltrace.snapshot_asked_ns"]
last = max(s["ts"] for s in t["slices"] if s["name"] == "clSetKernelArg")
print("last call %.3f ms before the asking" % ((asked - last) / 1e6))
sys.exit(not 0 <= asked - last < 50e6)'
        lint "$snap"
    done
    CLTRACE_WINDOW=0s CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/l8.%p.pftrace" LD_PRELOAD=$SHIM \
        ctl_under_load window-8-threads "$T/threads" 8 2000000000
    CLTRACE_RING_MB=2 CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/ll.%p.pftrace" LD_PRELOAD=$SHIM \
        ctl_under_load ring-launch-loop "$T/bench_calls" launch 100000000
    lint "$(ls "$WORK"/ll.*.snapshot-1.pftrace)"
    # each load the other way too: a window (the trace file flushed), a ring
    CLTRACE_WINDOW=0s CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/w1.%p.pftrace" LD_PRELOAD=$SHIM \
        ctl_under_load window-one-thread "$T/windows" long 2000000000
    CLTRACE_RING_MB=2 CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/r8.%p.pftrace" LD_PRELOAD=$SHIM \
        ctl_under_load ring-8-threads "$T/threads" 8 2000000000
    CLTRACE_WINDOW=0s CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/wl.%p.pftrace" LD_PRELOAD=$SHIM \
        ctl_under_load window-launch-loop "$T/bench_calls" launch 100000000
    lint "$(ls "$WORK"/r8.*.snapshot-1.pftrace)"
    # the control thread, the writer's bounded drain and the snapshot under
    # TSan: no race; whole or bounded (TSan's writer is ten times slower: beside
    # two CPU hogs the second snapshot was the bounded one, in 872 ms)
    local rt
    rt=$(${CC:-cc} -print-file-name=libtsan.so)
    CTL_BOUNDED_OK=1 CLTRACE_RING_MB=2 CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/lt.%p.pftrace" TSAN_OPTIONS=halt_on_error=1 \
        LD_PRELOAD="$rt:$B/tsan/libcltrace.so" ctl_under_load ring-tsan "$T/windows" long 2000000000
    ! grep -q "ThreadSanitizer" "$WORK"/ring-tsan.err || { cat "$WORK"/ring-tsan.err; return 1; }
}
