#!/usr/bin/env bash
# cltrace test suite: `make test` (builds first) or `bash tests/run.sh`.
# Each test prints "ok", "FAIL" or "skip (why)"; the last line is the tally.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/build
T=$B/tests
PY=/usr/bin/python3
SHIM=$B/libcltrace.so
LINT=${PFTRACE_LINT:-$ROOT/../shared/tools/pftrace-lint}
WORK=$(mktemp -d /tmp/cltrace-test.XXXXXX)
RES=$WORK/.results
mkdir -p "$RES"
trap 'rm -rf "$WORK"' EXIT
export CLTRACE_QUIET=0
# a `cltrace probe` in the user's cache would change what "small" means in
# every trace below: the tests see none unless they make one
export CLTRACE_PROBE_DIR=$WORK/no-probe
pass=0 fail=0 skip=0

# Tests run side by side (TEST_JOBS at a time, 3 by default: most of them
# wait on PoCL's threads, a compiler or a child); those that judge time or
# load (ALONE below) run afterwards one by one, on a quiet machine. Each
# test's output is kept and printed in name order, with its time; then the
# ten slowest.
run() {   # run NAME FUNCTION: in a folder of its own, so that no test can
    # find another's trace by its prefix (trace_of takes the first match)
    local name=$1 t0 rc
    t0=$(date +%s%N)
    local lock=$RES/$name.lock     # tests that share something outside $WORK take turns (hashcat: one instance)
    case " $HASHCAT " in *" $name "*) lock=$RES/hashcat.lock ;; esac
    ( flock 9; set -e ${TEST_TRACE:+-x}; WORK=$WORK/$name; mkdir -p "$WORK"; "$2" ) > "$RES/$name.out" 2>&1 \
        < /dev/null 9> "$lock"
    rc=$?
    echo "$rc $(( ($(date +%s%N) - t0) / 1000000 ))" > "$RES/$name.rc.tmp" && mv "$RES/$name.rc.tmp" "$RES/$name.rc"
}

report() {   # report NAME: its line (and a failure's output), counted
    local name=$1 rc ms
    read -r rc ms < "$RES/$name.rc"
    local took; took=$(printf "%6.1f s" "$(echo "$ms / 1000" | bc -l)")
    echo "$ms $name" >> "$RES/times"
    if [ "$rc" -eq 0 ]; then      # a check it could not make, said on its line
        local note; note=$(grep -m 1 "^not checked: " "$RES/$name.out")
        echo "ok    $name ($took)${note:+; $note}"; pass=$((pass + 1))
        [ -z "${TEST_SHOW:-}" ] || sed 's/^/      /' "$RES/$name.out"     # TEST_SHOW=1: a pass's output too
    elif [ "$rc" -eq 77 ]; then
        echo "skip  $name ($(tail -n 1 "$RES/$name.out")) ($took)"; skip=$((skip + 1))
    else
        echo "FAIL  $name ($took)"; tail -n 25 "$RES/$name.out" | sed 's/^/      /'; fail=$((fail + 1))
    fi
}

traced() {   # traced OUTPUT_PREFIX cmd...: run under the shim, print the trace path
    local prefix=$1; shift
    CLTRACE_OUTPUT="$prefix.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM "$@"
}
trace_of() { ls "$1".*.pftrace* | head -n 1; }
attr_of() {   # attr_of TRACE NAME: one of its attributes
    $PY tests/tracedump.py --attributes "$1" | $PY -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}

unwrap() {   # unwrap FILE: the text report with each wrapped line whole again
    # (its continuations are the lines indented 8 spaces: report/formats/text.c)
    awk 'NR > 1 && /^        [^ ]/ { sub(/^ +/, ""); printf " %s", $0; next } NR > 1 { print "" } { printf "%s", $0 } END { print "" }' "$1"
}

lint() {     # lint TRACE...: zero errors from the independent checker; in a
    # clone with nothing beside it (no ../shared) the test goes on without
    # it and its line says so
    if [ ! -x "$LINT" ]; then
        echo "not checked: the trace against Perfetto's import rules (no pftrace-lint: PFTRACE_LINT=path)"
        return 0
    fi
    pftrace_lint -q "$@"
}
pftrace_lint() {   # the independent checker with the schema cltrace writes (PerfSample too)
    "$LINT" --proto "$ROOT/trace/cltrace.proto" "$@"
}

# --- tests ---------------------------------------------------------------

t_gpu_measuring_programs_build_and_check_on_pocl() {
    # scripts/ is run on GPU hosts only; here it must still build cleanly,
    # and profq's loops must compute the right data on every path
    ${CC:-cc} -O2 -Wall -Wextra -Werror -pthread -DCL_USE_DEPRECATED_OPENCL_1_2_APIS -o "$WORK/evcollect" \
        scripts/evcollect.c -lOpenCL
    ${CC:-cc} -O2 -Wall -Wextra -Werror -o "$WORK/profq" scripts/profq.c -lOpenCL
    CLBENCH_PLATFORM=Portable "$WORK/profq" 40 > "$WORK/profq.out"
    cat "$WORK/profq.out"
    [ "$(grep -c ' ok$' "$WORK/profq.out")" -eq 16 ]
    ! grep -q WRONG "$WORK/profq.out" || return 1
    # clockprobe: on PoCL (whose device clock is the host's) the QUEUED
    # brackets and polled ENDs of every window agree (PoCL submits after the
    # flush: those windows may not); the globaltimer part needs NVIDIA
    ${CC:-cc} -O2 -Wall -Wextra -Werror -o "$WORK/clockprobe" scripts/clockprobe.c -lOpenCL
    # its stderr kept: PoCL's failed NVIDIA-only build says "1 error generated" there; an
    # OpenCL call that fails says which, where the run then stops (it failed once, 2026-11-30,
    # in a full run on a loaded 2-core VM, before this said why)
    CLBENCH_PLATFORM=Portable "$WORK/clockprobe" 64 > "$WORK/clockprobe.out" 2> "$WORK/clockprobe.err" ||
        { cat "$WORK/clockprobe.out" "$WORK/clockprobe.err"; return 1; }
    cat "$WORK/clockprobe.out"
    [ "$(grep -c '\(QUEUED in the enqueue\|polled END\) .*window of 16: interval [0-9]* ns min' \
        "$WORK/clockprobe.out")" -eq 4 ]
    grep -q "globaltimer: the program does not build here" "$WORK/clockprobe.out"
    ! grep "^ *QUEUED in the enqueue\|^ *+ polled END" "$WORK/clockprobe.out" | grep -q NEGATIVE || return 1
    # its linearity probe: PoCL's device clock is the host's, a straight
    # line: no chord may miss a burst between its ends
    [ "$(grep -c '^linearity, chords over [0-9]* ms: [0-9]* bursts, 0 missed by the chord' \
        "$WORK/clockprobe.out")" -eq 4 ]
}

t_teardown_check_runs_each_condition() {
    # scripts/teardown-check.py (run on GPU hosts for NVIDIA's teardown):
    # every condition run each round; the idle taken out of its runs (a
    # 20 ms idle left in, or not slept, puts them past 20 ms or below 0);
    # cltrace's exit read back from each trace; each run split at the last
    # library's destructor, cltrace's exit on the user space's side of it
    $PY scripts/teardown-check.py --rounds 3 --naps 20 --out "$WORK/td.json" --platform Portable > "$WORK/td.out"
    cat "$WORK/td.out"
    for row in "untraced " "cltrace " "cltrace off " "untraced, 20 ms idle "; do
        grep -q "^$row *[0-9.]* *(" "$WORK/td.out"
    done
    grep -q "^cltrace's exit as its trace states it: median [0-9.]* ms" "$WORK/td.out"
    $PY - "$WORK/td.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs_ms"]
assert sorted(r) == ["cltrace", "cltrace off", "untraced", "untraced, 20 ms idle"], r.keys()
assert all(len(v) == 3 for v in r.values()), r
assert all(0 <= x < 20 for x in r["untraced, 20 ms idle"]), r
assert len(d["stated_exit_ms"]) == 3 and all(x > 0 for x in d["stated_exit_ms"]), d["stated_exit_ms"]
k = d["kernel_ms"]
assert sorted(k) == sorted(r) and all(len(v) == 3 for v in k.values()), k
assert all(0 < after < whole for c in r for whole, after in zip(r[c], k[c]) if c != "untraced, 20 ms idle"), (r, k)
# cltrace's exit lies between the loop's end and the last destructor, run by run
user = [w - x for w, x in zip(r["cltrace"], k["cltrace"])]
assert all(u >= s for u, s in zip(user, d["stated_exit_ms"])), (user, d["stated_exit_ms"])
PYEOF
    grep -q "user space *kernel$" "$WORK/td.out"
}

t_selfcost_check_adds_pairs_only_within_noise() {
    # scripts/selfcost-check.py (make bench): a program whose ratio the runs
    # cannot tell from the target gets another batch of pairs, up to the
    # cap, and no other does. Scripted runs first (slowdowns chosen, the
    # stated figure fixed), then real ones on PoCL
    $PY - <<'PYEOF'
import importlib.util, os, tempfile, types
spec = importlib.util.spec_from_file_location("sc", "scripts/selfcost-check.py")
sc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sc)
work = tempfile.mkdtemp()
def case(slowdowns_ms, stated_ms, upper_ms, figure=False):
    it = iter(slowdowns_ms)
    def wall(cmd, env, phases=None, pids=None, marks=None):
        traced = "CLTRACE_OUTPUT" in env
        if traced:
            pids.append(7)
            open(env["CLTRACE_OUTPUT"][:-len(".pftrace")] + ".7.pftrace.gz", "w").close()
        phases.append((0,) * 7)
        return 0.1 + (next(it) / 1e3 if traced else 0)
    sc.wall, sc.stated = wall, lambda trace: {"total_ns": stated_ms * 1e6, "self_ns": stated_ms * 1e6,
                                              "upper_ns": upper_ms * 1e6}
    a = types.SimpleNamespace(reps=4, max_reps=16, gap=0, keep=False, figure=figure)
    m = sc.measure(["prog"], ["mode", "1"], {}, {}, work, a)
    assert not os.listdir(work), os.listdir(work)       # every trace read, then removed
    return len(m["un"]), m["batches"]
# the target: the slowdown within [0.75 x the figure, 1.25 x the bound]
# decided at once: right, or plainly wrong
assert case([10, 10.2, 9.8, 10.1], 10, 10) == (4, ["ok"])
assert case([10, 10.2, 9.8, 10.1], 3, 3) == (4, ["MISSED"])
assert case([10, 10.2, 9.8, 10.1], 15, 20) == (4, ["MISSED"])          # under 0.75 x the figure
# twice the figure, within the bound: ok; --figure (the GPU hosts'): missed
assert case([20, 20.5, 19.5, 20.2], 10, 18) == (4, ["ok"])
assert case([20, 20.5, 19.5, 20.2], 10, 18, figure=True) == (4, ["MISSED"])
# runs too scattered to tell 7 ms from 10: batches up to the cap
assert case([4, 16] * 8, 7, 7) == (16, ["within noise"] * 4)
# scattered, then steady: a second batch decides
assert case([2, 30, 2, 30] + [9.0, 9.1, 9.2, 9.3], 7, 8) == (8, ["within noise", "ok"])
print("scripted: ok, MISSED, within the bound, within noise to the cap, decided by a second batch")
PYEOF
    # --placebo: a third run a round, threads that only wake up (placebo.so);
    # --delay: a fourth, cltrace's time per call in the loop as a busy-wait
    $PY scripts/selfcost-check.py --reps 2 --max-reps 6 --only enqueue:100,setarg --platform Portable --placebo \
        --delay --out "$WORK/scc" > "$WORK/scc.out" || [ $? -eq 1 ]     # 1: a miss, shown, not this test's concern
    cat "$WORK/scc.out"
    grep -q "^a 0.05 s program .*x  \(ok\|within noise\|MISSED\)" "$WORK/scc.out"
    grep -q "^    placebo (threads that only wake up): [-+]0\.[0-9]*s" "$WORK/scc.out"
    grep -q "^    delay ([0-9]* ns before each call, nothing else): [-+]0\.[0-9]*s" "$WORK/scc.out"
    # the control itself: 200 us before each clSetKernelArg shows in the loop
    OCL_PLATFORM=Portable DELAY_NS=200000 LD_PRELOAD="$T/delay.so" "$T/bench_calls" setarg 200 > "$WORK/dl.out"
    awk '$1 == "wall_ns_per_call" { exit !($2 >= 200000) }' "$WORK/dl.out" || { cat "$WORK/dl.out"; return 1; }
    grep -q "^what cltrace says it added, .*([0-9]* CPUs, .*cpuidle " "$WORK/scc.out"
    $PY - "$WORK/scc/selfcost.json" <<'PYEOF'
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["args"][0] for r in rows] == ["enqueue", "setarg"], [r["args"] for r in rows]
for r in rows:
    b, n = r["verdict_after_each_batch"], len(r["untraced_s"])
    assert n == 2 * len(b) and len(r["traced_s"]) == len(r["stated_s"]) == len(r["phases_traced_ns"]) == n, (b, n)
    assert all(v == "within noise" for v in b[:-1]) and (b[-1] != "within noise" or n == 6), b
    assert b[-1] == r["verdict"], r["verdict"]
    assert len(r["placebo_s"]) == n and r["placebo_slowdown_median_s"] is not None, r["placebo_s"]
    assert len(r["delay_s"]) == n and r["delay_ns"] is not None and r["delay_slowdown_median_s"] is not None, r["delay_s"]
    assert r["idle_policy"].startswith(("a virtual machine", "not a virtual machine")), r["idle_policy"]
print("real runs:", [(r["args"][0], len(r["untraced_s"]), r["verdict_after_each_batch"]) for r in rows])
PYEOF
}

t_exit_stacks_reads_each_condition() {
    # scripts/exit-stacks.py (run on GPU hosts for NVIDIA's end of a
    # process): both conditions run each round, every task's kernel stack
    # read until the process is reaped; cltrace's threads seen in the traced
    # runs' ends only. Kernel stacks need root: skipped (77) without.
    local rc=0
    $PY scripts/exit-stacks.py --rounds 2 --platform Portable --top 40 --timelines 1 > "$WORK/es.out" 2> "$WORK/es.err" || rc=$?
    cat "$WORK/es.out" "$WORK/es.err"
    if [ $rc -eq 2 ] && grep -q "cannot be read here" "$WORK/es.err"; then
        echo "kernel stacks need root"; return 77
    fi
    [ $rc -eq 0 ] || { echo "exit-stacks.py exited $rc"; return 1; }
    grep -q "^== untraced: 2 runs, the end [0-9.]* ms" "$WORK/es.out" || { echo "no untraced summary"; return 1; }
    grep -q "^== traced: 2 runs, the end [0-9.]* ms" "$WORK/es.out" || { echo "no traced summary"; return 1; }
    grep -q "^  traced +" "$WORK/es.out" && grep -q "^  untraced +" "$WORK/es.out" || { echo "no timeline"; return 1; }
    # per condition, its stacks: cltrace's writer in the traced end, in no untraced one
    sed -n '/^== traced:/,$p' "$WORK/es.out" | grep -q "ms/run  cltrace-" || { echo "no cltrace thread traced"; return 1; }
    [ "$(sed -n '/^== untraced:/,/^== traced:/p' "$WORK/es.out" | grep -c "ms/run  cltrace-")" -eq 0 ] ||
        { echo "a cltrace thread in an untraced run's summary"; return 1; }
    [ "$(grep "^  untraced +" "$WORK/es.out" | grep -c "cltrace-")" -eq 0 ] ||
        { echo "a cltrace thread in an untraced run's timeline"; return 1; }
}

t_exit_pages_counts_each_condition() {
    # scripts/exit-pages.py: the kernel's end of each run from tracefs
    # (root only: skipped, 77, without); every condition's end seen whole,
    # and the traced process gives back more pages (cltrace's rings and
    # libraries) than the untraced one.
    local rc=0
    $PY scripts/exit-pages.py --rounds 2 --pages 1 --platform Portable > "$WORK/ep.out" 2> "$WORK/ep.err" || rc=$?
    cat "$WORK/ep.out" "$WORK/ep.err"
    if [ $rc -eq 2 ] && grep -q "tracefs cannot be used" "$WORK/ep.err"; then
        echo "tracefs needs root"; return 77
    fi
    [ $rc -eq 0 ]
    local un tr
    un=$(awk '$1 == "untraced" && $2 == 2 {print $6}' "$WORK/ep.out")
    tr=$(awk '$1 == "cltrace" && $2 == 2 {print $6}' "$WORK/ep.out")
    grep -q "^cltrace off *2 " "$WORK/ep.out"
    [ -n "$un" ] && [ -n "$tr" ] && [ "$un" -gt 0 ] && [ "$tr" -gt "$un" ]
}

t_unit_fastpack_matches_protobuf_c() {
    "$T/test_fastpack"
}

t_unit_ownpack_matches_protobuf_c() {
    "$T/test_ownpack"
}

t_unit_occupancy_seed_examples() {
    "$T/test_occupancy"
}

t_unit_selfcost_account_bound_and_device_timing() {
    # what cltrace's threads took from the app (all their CPU where the app
    # wanted more than the others, elsewhere as much as the app waited for
    # a CPU per ns run), the total as the sum of its parts, the account and
    # its bound with and without the scheduler's account; device timestamps
    # that cannot be true (0, 1, 2, 3; END before START), and a real late start
    "$T/test_selfcost"
}

t_light_calls_measured_one_in_64() {
    # 100,000 clSetKernelArg: about one in 64 measured (each stands for 64),
    # each a light call's time; none cut short where nothing preempts them
    # all, and the trace states them (JSON, --explain cost)
    traced "$WORK/lc" "$T/bench_calls" setarg 100000 > /dev/null
    "$B/cltrace-report" --format json "$(trace_of "$WORK/lc")" | $PY -c '
import json, sys
c = json.load(sys.stdin)["self_cost"]["light_calls"]
each = c["measured_ns"] / c["measured"]
print("%d light calls measured, %.0f ns each, %d cut short (%.3f ms)" % (c["measured"], each, c["cut"], c["cut_ns"] / 1e6))
assert 100000 / 64 / 2 < c["measured"] < 100000 / 64 * 2, c
assert 0 < each < 5000 and c["cut"] <= c["measured"] // 10, c'
    "$B/cltrace-report" --explain cost "$(trace_of "$WORK/lc")" | grep -q "light calls: [0-9]* measured (each stands for 64)"
}

t_cost_figure_steady_beside_two_cpu_hogs() {
    # a program with few calls (tests/apps/host_gap.c: ~300), traced 5 times
    # on a machine loaded by two CPU hogs: what the report says cltrace
    # added, run by run, within 3x of its median either way (it ran 46 to
    # 1,010 ms while cltrace's clock lock, held by its idle-priority
    # collector, kept the app's clReleaseContext waiting; 26-124 ms while the
    # first queue's markers were polled with sched_yield; 40-250 ms in 3-6
    # runs of 100 while its idle collector held a PoCL lock the app's call
    # needed, or a kernel's facts asked after its first launch waited for
    # PoCL to compile it: 0 in 160 since, 2026-11-30). A set of 5 that
    # misses is said with each run's parts and run once more: a cost that
    # is steadily unsteady fails both sets.
    local set
    for set in 1 2; do
        hog_set "$set" && return 0
    done
    return 1
}

hog_set() {   # hog_set N: 5 traced runs of host_gap beside two hogs; 0 when steady
    local i h1 h2 figs=""
    ( while :; do :; done ) & h1=$!
    ( while :; do :; done ) & h2=$!
    for i in 1 2 3 4 5; do
        traced "$WORK/hog$1-$i" "$T/host_gap" > /dev/null || { kill $h1 $h2; return 1; }
    done
    kill $h1 $h2; wait $h1 $h2 2> /dev/null || true
    for i in 1 2 3 4 5; do
        figs="$figs $("$B/cltrace-report" --format json "$(trace_of "$WORK/hog$1-$i")" | $PY -c '
import json, sys
c = json.load(sys.stdin)["self_cost"]
print("%d:%.1f/%.1f/%.1f/%.1f" % (c["total_ns"], c["hot_path_ns"] / 1e6, c["exit_ns"] / 1e6,
                                  c["competing_ns"] / 1e6, c["writer_cpu_ns"] / 1e6))')"
    done
    $PY - $figs <<'PYEOF'
import statistics, sys
runs = sorted((int(x.split(":")[0]) / 1e6, x.split(":")[1]) for x in sys.argv[1:])
f = [r[0] for r in runs]
m = statistics.median(f)
print("cltrace added (ms), 5 runs beside two hogs: " + " ".join("%.1f" % x for x in f) + "; median %.1f" % m)
if not (len(f) == 5 and f[-1] <= 3 * m and f[0] >= m / 3):
    print("spread beyond 3x of the median; each run's calls/exit/competing/writer CPU (ms): " +
          " ".join(r[1] for r in runs))
    sys.exit(1)
PYEOF
}

t_register_counts_built_once_and_cached() {
    # NVIDIA's register counts come from a private copy of each program,
    # built by cltrace-nvregs beside the app; here every device is taken for NVIDIA's
    # (CLTRACE_TEST_NVBUILD_ANY): the app's output and exit as untraced,
    # whole traces, 5 runs each of two programs; the copy's log kept in the
    # user's cache (XDG_CACHE_HOME), read by every later run, which builds
    # no copy (CLTRACE_DEBUG_NV says where the counts came from)
    local p i cache="$WORK/nb-cache/not-made-yet"     # made as mkdir -p would
    rm -rf "$WORK/nb-cache"
    for p in vecadd timeline; do
        local args=(); [ $p = timeline ] && args=("$WORK/nb.dur")
        "$T/$p" "${args[@]}" > "$WORK/nb-$p.plain"
        for i in 1 2 3 4 5; do
            POCL_CACHE_DIR="$WORK/nb-pocl" XDG_CACHE_HOME=$cache CLTRACE_DEBUG_NV=1 CLTRACE_TEST_NVBUILD_ANY=1 CLTRACE_QUIET=0 \
                CLTRACE_OUTPUT="$WORK/nb-$p-$i.%p.pftrace" LD_PRELOAD=$SHIM "$T/$p" "${args[@]}" \
                > "$WORK/nb-$p.out" 2> "$WORK/nb-$p-$i.err" || { echo "$p: exit $? under cltrace"; return 1; }
            cmp "$WORK/nb-$p.plain" "$WORK/nb-$p.out" || return 1
            if [ $i = 1 ]; then
                grep -q "register counts from" "$WORK/nb-$p-$i.err" && { echo "$p: a cache before any run"; return 1; }
                # the helper may outlive the exit's wait (2 s; PoCL's compile on a loaded machine):
                # it writes the cache on its own then
                local k; for k in $(seq 600); do
                    [ "$(ls "$cache/cltrace/nvregs/" 2> /dev/null | grep -c '\.log$')" -ge "$([ $p = vecadd ] && echo 1 || echo 2)" ] && break
                    sleep 0.1
                done
            else
                grep -q "register counts from $cache/cltrace/nvregs/" "$WORK/nb-$p-$i.err" ||
                    { echo "$p run $i: the copy built again, not read from the cache"; return 1; }
            fi
        done
        lint "$(trace_of "$WORK/nb-$p-5")"
        "$B/cltrace-report" "$(trace_of "$WORK/nb-$p-5")" 2>&1 > /dev/null | grep -q "cut short" && return 1
    done
    ls "$cache/cltrace/nvregs/"*.log > /dev/null || return 1
    echo "10 runs, each as untraced, each trace whole; runs 2-5 of each read $(ls "$cache/cltrace/nvregs" | wc -l) cached logs"
}

t_register_counts_compiled_beside_the_app() {
    # NVIDIA's register counts come from cltrace-nvregs, a process of its
    # own started after the app's build while the app goes on; here a
    # stand-in (CLTRACE_TEST_NVREGS_HELPER) answers as NVIDIA's compiler logs,
    # 0.6 s later, when the app has launched its kernels: every kernel
    # command (each timed: CLTRACE_SAMPLE=all) carries its count (the writer held them until it came), the
    # app's output as untraced. A stand-in that hangs: the exit waits 2 s at
    # most, the trace is whole, the counts absent.
    local env=(CLTRACE_SAMPLE=all CLTRACE_TEST_NVREGS_HELPER="$PWD/tests/apps/nvregs_standin.sh" CLTRACE_TEST_NVBUILD_ANY=1
               XDG_CACHE_HOME="$WORK/nr-cache" POCL_CACHE_DIR="$WORK/nr-pocl")
    "$T/timeline" "$WORK/nr.dur" > "$WORK/nr.plain"
    env "${env[@]}" STANDIN_SLEEP=0.6 STANDIN_REGS=37 CLTRACE_OUTPUT="$WORK/nr1.%p.pftrace" LD_PRELOAD=$SHIM \
        "$T/timeline" "$WORK/nr.dur" > "$WORK/nr.out" || { echo "exit $? under cltrace"; return 1; }
    cmp "$WORK/nr.plain" "$WORK/nr.out" || return 1
    lint "$(trace_of "$WORK/nr1")"
    $PY tests/checks.py registers "$(trace_of "$WORK/nr1")" 37 3 || return 1
    # the helper's loader is given the app's driver alone, and none of the
    # app's files: with two listed (PoCL's and NVIDIA's, an H200 host) the
    # helper found PoCL's platform alone, and no counts came; here PoCL's
    # listed twice over, the helper is told PoCL's library by its path
    mkdir -p "$WORK/nr-icd" && echo libpocl.so.2 > "$WORK/nr-icd/a.icd" && echo libpocl.so.2 > "$WORK/nr-icd/b.icd"
    env "${env[@]}" OCL_ICD_VENDORS="$WORK/nr-icd" OCL_ICD_FILENAMES=libpocl.so.2 STANDIN_ENV="$WORK/nr.env" \
        CLTRACE_OUTPUT="$WORK/nr3.%p.pftrace" LD_PRELOAD=$SHIM "$T/timeline" "$WORK/nr.dur" > /dev/null 3> "$WORK/nr.fd3"
    for _ in $(seq 50); do [ -s "$WORK/nr.env" ] && break; sleep 0.1; done
    cat "$WORK/nr.env"
    grep -Eq "^OCL_ICD_VENDORS=/.*libpocl[^:]*$" "$WORK/nr.env" && grep -Eq "^OCL_ICD_FILENAMES=/.*libpocl[^:]*$" "$WORK/nr.env" &&
        ! grep -q "nr.fd3" "$WORK/nr.env" || { echo "the helper's ICDs or files as above"; return 1; }
    local t0=$SECONDS
    env "${env[@]}" STANDIN_SLEEP=30 CLTRACE_OUTPUT="$WORK/nr2.%p.pftrace" LD_PRELOAD=$SHIM \
        "$T/timeline" "$WORK/nr.dur" > "$WORK/nr.out" || { echo "exit $? under cltrace"; return 1; }
    [ $((SECONDS - t0)) -lt 20 ] || { echo "the exit waited $((SECONDS - t0)) s for a hung helper"; return 1; }
    cmp "$WORK/nr.plain" "$WORK/nr.out" || return 1
    lint "$(trace_of "$WORK/nr2")"
    $PY tests/checks.py registers "$(trace_of "$WORK/nr2")" 0 3 || return 1
    pkill -f "nvregs_standin.sh .*$WORK/nr-cache/" 2> /dev/null || true    # its own: tests run side by side
    echo "counts 0.6 s after the build on every kernel command; a hung helper: the exit went on without them"
}

t_register_counts_coming_keep_the_queue_in_order() {
    # While a kernel's register counts compile (a stand-in answering 2.3 s
    # after the build: it waits 2 s for the app to end, as the helper does,
    # then 0.3 s; the app idles 4 s after its loop), the writer holds its
    # timed launches; the transfer after the loop waits behind them on its
    # queue. Drawn ahead, it drew the loop's untimed launches
    # before any timed one had given their length: each at a 4-byte write's,
    # the kernel's mean 0.15 of a warm run's, "device idle 86 %" (an H200,
    # 2026-12-01). More launches held than the writer keeps (4,096; every
    # one timed): the oldest drawn first, without counts, not the newest
    # ahead of them. A run that ends first: its exit does not wait for the
    # helper (which waits for it), says so, and the launches are drawn in
    # order without counts. Sampled by the budget (untimed launches drawn
    # estimated: 10,000 launches, past the budget's 3 ms floor; of 3,000 a
    # loaded run timed every one, 2026-12-02), but where every launch is timed.
    local env=(CLTRACE_TEST_NVREGS_HELPER="$PWD/tests/apps/nvregs_standin.sh" CLTRACE_TEST_NVBUILD_ANY=1 STANDIN_REGS=21
               POCL_CACHE_DIR="$WORK/hq-pocl" CLTRACE_SAMPLE=budget)
    env "${env[@]}" STANDIN_SLEEP=0.3 XDG_CACHE_HOME="$WORK/hq-cache1" CLTRACE_OUTPUT="$WORK/hq1.%p.pftrace" \
        LD_PRELOAD=$SHIM "$T/kerneltruth" none 10000 4000 > "$WORK/hq.out" || { echo "exit $? under cltrace"; return 1; }
    lint "$(trace_of "$WORK/hq1")"
    $PY tests/checks.py estimates "$(trace_of "$WORK/hq1")" k 21 || return 1
    env "${env[@]}" CLTRACE_SAMPLE=all STANDIN_SLEEP=1 XDG_CACHE_HOME="$WORK/hq-cache3" \
        CLTRACE_OUTPUT="$WORK/hq3.%p.pftrace" LD_PRELOAD=$SHIM "$T/kerneltruth" none 6000 3000 > "$WORK/hq.out" ||
        { echo "exit $? under cltrace"; return 1; }
    lint "$(trace_of "$WORK/hq3")"
    $PY tests/checks.py held_order "$(trace_of "$WORK/hq3")" k 21 || return 1
    local t0=$SECONDS
    env "${env[@]}" STANDIN_SLEEP=5 XDG_CACHE_HOME="$WORK/hq-cache2" CLTRACE_OUTPUT="$WORK/hq2.%p.pftrace" \
        LD_PRELOAD=$SHIM "$T/kerneltruth" none 1000 > "$WORK/hq.out" || { echo "exit $? under cltrace"; return 1; }
    [ $((SECONDS - t0)) -lt 5 ] || { echo "the run took $((SECONDS - t0)) s: the exit waited for the counts"; return 1; }
    lint "$(trace_of "$WORK/hq2")"
    $PY tests/checks.py estimates "$(trace_of "$WORK/hq2")" k 0 || return 1
    "$B/cltrace-report" --format json "$(trace_of "$WORK/hq2")" | $PY -c '
import json, sys
c = json.load(sys.stdin)["self_cost"]
print("counts still compiling at the exit: it waited %.1f ms for them (%d program left), the run %.0f ms"
      % (c["exit_regs_wait_ns"] / 1e6, c["exit_regs_not_in"], c["run_ns"] / 1e6))
# a run longer than the 2 s the helper waits (a loaded machine) may wait the budget share
if c["exit_regs_not_in"] != 1 or c["exit_regs_wait_ns"] >= max(5e6, 0.06 * c["run_ns"]):
    sys.exit("the exit waited for counts that come after it, or did not say they were left")'
    "$B/cltrace-report" --explain cost "$(trace_of "$WORK/hq2")" |
        grep -q "register counts of 1 program not in when the exit went on" ||
        { echo "the account does not say the register counts were left to the next run"; return 1; }
    pkill -f "nvregs_standin.sh .*$WORK/hq-cache2/" 2> /dev/null || true    # its own: tests run side by side
}

t_unit_pylines_as_cpython_says() {
    # a CPU sample's Python line, found by the writer: every instruction of
    # ~500 code objects of the standard library as CPython's co_lines()
    # says; a code object freed or retyped since: no line, no fault
    local rc=0
    /usr/bin/python3 tests/pylines_vectors.py > "$WORK/pylines.txt" || rc=$?
    [ $rc -eq 77 ] && { echo "python3 is not 3.11 or 3.12: the decoder checked on its own cases only"; "$T/test_pylines"; return; }
    [ $rc -eq 0 ] && "$T/test_pylines" "$WORK/pylines.txt"
}

t_unit_symtab_names_as_libdw_says() {
    # the writer's sorted symbol tables (writer/symtab.c) against libdw's
    # own lookup on the large modules of a process (the C library, C++'s,
    # LLVM's): every name the same, 9 in 10 addresses answered by the table
    "$T/test_symtab"
}

t_unit_gzstream_whole_after_every_flush() {
    "$T/test_gzstream"
}

t_unit_own_threads_idle_lifted_and_the_drivers_put_back() {
    # cltrace's threads at idle priority, put back while the app waits and
    # lowered a second after; a thread started inside the collector's calls
    # into the driver put at normal priority, the app's own idle one not
    "$T/test_ownthreads"
}

t_unit_clock_chords_across_a_loop() {
    "$T/test_clock"
}

t_unit_tsc_chosen_as_the_kernel_says() {
    "$T/test_tsc"
}

t_unit_pending_list_holes_order_and_queues() {
    "$T/test_pending"
}

t_unit_loaded_objects_as_dladdr_says() {
    "$T/test_loaded" "$T/libcxxlib.so"     # a library nothing else loads, no threads of its own
}

t_unit_symbolizer_reads_the_map_again_only_after_a_load() {
    "$T/test_symreport" "$T/libcxxlib.so" hidden_make
}

t_unit_probe_fit_and_file() {
    "$T/test_probe"
}

t_probe_sets_small_threshold() {
    # `cltrace probe` measures this device; traces made afterwards carry it
    # and the report's "small" is the device's, said so; a probe that puts
    # the line below the example's 1 KiB writes takes the finding away; no
    # probe: the default, said so
    local pd=$WORK/probe
    CLTRACE_PROBE_DIR=$pd "$B/cltrace" probe -q
    local f; f=$(ls "$pd"/*.probe)
    grep -q "^small_transfer_bytes [1-9]" "$f"
    grep -q "^h2d_pinned_gbps [0-9]" "$f"
    grep -q "^launch_ns [1-9]" "$f"
    grep -q "^global_gbps [0-9]" "$f"
    grep -q "^profiling_price_ns [0-9]" "$f"
    sed -i 's/^small_transfer_bytes .*/small_transfer_bytes 65536/; s/^profiling_price_ns .*/profiling_price_ns 1000/' "$f"
    CLTRACE_PROBE_DIR=$pd traced "$WORK/pb1" "$B/examples/transfers" > /dev/null
    sed -i 's/^small_transfer_bytes .*/small_transfer_bytes 512/' "$f"
    CLTRACE_PROBE_DIR=$pd traced "$WORK/pb2" "$B/examples/transfers" > /dev/null
    CLTRACE_PROBE_DIR=$WORK/noprobe traced "$WORK/pb3" "$B/examples/transfers" > /dev/null
    lint "$(trace_of "$WORK/pb1")"
    for t in pb1 pb2 pb3; do
        "$B/cltrace-report" --format json "$(trace_of "$WORK/$t")" > "$WORK/$t.json" || [ $? -le 1 ]
    done
    "$B/cltrace-report" --small-bytes 4096 --format json "$(trace_of "$WORK/pb2")" > "$WORK/pb4.json" || [ $? -le 1 ]
    "$B/cltrace-report" "$(trace_of "$WORK/pb1")" | grep -q "small: below 65536 bytes (measured on this device by cltrace probe"
    # the probe's price of a profiling queue, paid by each command on PoCL's
    # where every command is timed (profiling cannot be switched there): in
    # the figure's device timing; by default its queues stay plain (timed by
    # callbacks), no price; without a probe, said not counted
    CLTRACE_SAMPLE=all CLTRACE_PROBE_DIR=$pd traced "$WORK/pb5" "$B/examples/transfers" > /dev/null
    "$B/cltrace-report" --format json "$(trace_of "$WORK/pb5")" > "$WORK/pb5.json" || [ $? -le 1 ]
    "$B/cltrace-report" --explain cost "$(trace_of "$WORK/pb5")" |
        grep -q "device timing (events; profiling it turned on: 514 x 1.00 us, probed)"
    "$B/cltrace-report" --explain cost "$(trace_of "$WORK/pb1")" | grep -q "device timing (the events it asked for)"
    "$B/cltrace-report" --explain cost "$(trace_of "$WORK/pb3")" | tr -s ' \n' ' ' |
        grep -q "what profiling adds to each command on the queues it turned it on for (.cltrace probe. measures it)"
    $PY - "$WORK" <<'PYEOF'
import json, sys
w = sys.argv[1]
r = {t: json.load(open(f"{w}/{t}.json")) for t in ("pb1", "pb2", "pb3", "pb4", "pb5")}
rules = {t: [f["rule"] for f in r[t]["findings"]] for t in r}
assert r["pb1"]["small_transfers"]["below_bytes"] == 65536 and "cltrace probe" in r["pb1"]["small_transfers"]["source"], r["pb1"]["small_transfers"]
small = [f for f in r["pb1"]["findings"] if f["rule"] == "small-transfers"][0]
assert "below 65536 bytes (measured on this device by cltrace probe" in small["numbers"], small
assert r["pb2"]["small_transfers"]["below_bytes"] == 512 and "small-transfers" not in rules["pb2"], rules["pb2"]
assert r["pb3"]["small_transfers"]["below_bytes"] == 32768 and "no cltrace probe" in r["pb3"]["small_transfers"]["source"]
assert "small-transfers" in rules["pb3"]
pt = r["pb5"]["self_cost"]["profiling_turned_on"]
assert pt == {"commands": 514, "ns": 514000} and r["pb5"]["self_cost"]["device_timing_ns"] >= 514000, pt
for t in ("pb1", "pb3"):
    assert "profiling_turned_on" not in r[t]["self_cost"], r[t]["self_cost"]
assert r["pb4"]["small_transfers"] == {"below_bytes": 4096, "source": "--small-bytes"} and "small-transfers" in rules["pb4"]
PYEOF
}

t_unit_kernel_source_hints_seed_kernels() {
    "$T/test_source"
}

t_unit_decoders() {
    "$T/test_decode"
}

t_generated_up_to_date() {
    local xml=$ROOT/../shared/registry/cl.xml
    [ -f "$xml" ] || { echo "../shared/registry/cl.xml not present"; return 77; }
    mkdir -p "$WORK/gen/t" "$WORK/gen/c" "$WORK/gen/f"
    $PY gen/gen.py "$xml" "$WORK/gen/t" "$WORK/gen/c" "$WORK/gen/f"
    diff -r "$WORK/gen/t" trace/generated
    diff -r "$WORK/gen/c" capture/generated
    diff -r "$WORK/gen/f" tests/forward/generated
}

t_every_command_exported_or_looked_up() {
    # every core command is an export of the shim, the two entry points of
    # an ICD loader layer, _exit/_Exit (to write the trace out first),
    # dlsym (run-time-loaded OpenCL), cltrace_api_v1 (include/cltrace.h),
    # pthread_create (each thread's CPU samples armed as it starts), the exec
    # family (the trace finished before the image is replaced) and the MPI
    # calls capture/mpi.c records (forwarded to PMPI_*); nothing else is
    # exported
    local core
    core=$(grep -c 'CLT_F_CORE' trace/generated/clt_tables.c)
    local exported
    exported=$(nm -D --defined-only "$SHIM" | awk '{print $3}' | sort)
    [ "$(echo "$exported" | grep '^cl' | grep -vc '^clGetLayerInfo$\|^clInitLayer$\|^cltrace_api_v1$')" -eq "$core" ]
    echo "$exported" | grep -q '^clGetLayerInfo$'
    echo "$exported" | grep -q '^clInitLayer$'
    echo "$exported" | grep -q '^dlsym$'
    echo "$exported" | grep -q '^cltrace_api_v1$'
    [ "$(echo "$exported" | grep -c '^MPI_')" -eq 19 ]     # the 16 recorded, MPI_Init(_thread), MPI_Finalize
    echo "$exported" | grep -q '^pthread_create$'
    [ "$(echo "$exported" | grep -c '^execl$\|^execle$\|^execlp$\|^execv$\|^execve$\|^execvp$\|^execvpe$\|^fexecve$')" -eq 8 ]
    [ -z "$(echo "$exported" | grep -v '^cl' | grep -v '^_exit$\|^_Exit$\|^dlsym$\|^pthread_create$' |
            grep -v '^execl$\|^execle$\|^execlp$\|^execv$\|^execve$\|^execvp$\|^execvpe$\|^fexecve$' |
            grep -v '^MPI_\(Init\|Init_thread\|Finalize\|Send\|Ssend\|Isend\|Recv\|Irecv\|Sendrecv\|Wait\|Waitall\|Barrier\|Bcast\|Reduce\|Allreduce\|Allgather\|Alltoall\|Gather\|Scatter\)$')" ]
}

t_forwarding_every_wrapper() {
    CLTRACE_LIBRARY=$T/libfakecl.so traced "$WORK/fwd" "$T/forward_check" "$T/libfakecl.so"
    # every checked call, the extension lookups and the unknown-name lookup
    $PY tests/checks.py forward "$(trace_of "$WORK/fwd")" \
        $(( 2 * $(grep -c '^    {"cl' tests/forward/generated/forward_check.c) + \
            2 * $(grep -c ', 0},$' tests/forward/generated/forward_check.c) + 1 ))
}

t_vecadd_same_output() {
    "$T/vecadd" > "$WORK/plain.out"; local rc1=$?
    traced "$WORK/va" "$T/vecadd" > "$WORK/traced.out"; local rc2=$?
    CLTRACE_DISABLE=1 LD_PRELOAD=$SHIM "$T/vecadd" > "$WORK/off.out"
    [ $rc1 -eq $rc2 ]
    cmp "$WORK/plain.out" "$WORK/traced.out"
    cmp "$WORK/plain.out" "$WORK/off.out"
    [ -s "$(trace_of "$WORK/va")" ]
    # a folder named with a trailing '/' is made with its parents, the trace inside it
    CLTRACE_OUTPUT="$WORK/va-new/run/1/" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM "$T/vecadd" > /dev/null 2> "$WORK/va-new.err"
    ! grep -q "running untraced" "$WORK/va-new.err"
    [ -s "$(ls "$WORK"/va-new/run/1/cltrace-vecadd-*.pftrace.gz)" ]
}

t_vecadd_trace_content() {
    traced "$WORK/vc" "$T/vecadd" 1000 4 >/dev/null
    $PY tests/checks.py vecadd "$(trace_of "$WORK/vc")" 1000 4
}

t_pftrace_lint() {
    [ -x "$LINT" ] || { echo "pftrace-lint not found at $LINT"; return 77; }
    traced "$WORK/l1" "$T/vecadd" >/dev/null
    CLTRACE_LIBRARY=$T/libfakecl.so traced "$WORK/l2" "$T/forward_check" "$T/libfakecl.so" >/dev/null
    traced "$WORK/l3" "$T/threads" 4 500 >/dev/null
    CLTRACE_COMPRESS=0 traced "$WORK/l4" "$T/vecadd" >/dev/null
    traced "$WORK/l5" "$T/timeline" /dev/null >/dev/null
    lint "$(trace_of "$WORK/l1")" "$(trace_of "$WORK/l2")" "$(trace_of "$WORK/l3")" "$(trace_of "$WORK/l4")" \
         "$(trace_of "$WORK/l5")"
}

t_device_timeline() {
    # every command timed, on the host clock, tied to its enqueue; durations
    # equal what the app reads; profiling it did not ask for stays invisible
    "$T/timeline" "$WORK/dur0" > "$WORK/tl.plain"
    traced "$WORK/tl" "$T/timeline" "$WORK/dur1" > "$WORK/tl.traced"
    cmp "$WORK/tl.plain" "$WORK/tl.traced"
    $PY tests/checks.py timeline "$(trace_of "$WORK/tl")" "$WORK/dur1"
}

t_command_without_profiling_data() {
    # a driver with no profiling data for a command (NVIDIA's write-invalidate
    # map; here tests/apps/noprofile.c, under timeline's map): counted as
    # untimed, not drawn, and over: its queue's "commands in flight" ends at
    # 0 as without it (it stayed 1 for the rest of the run, and the queue's
    # untimed launches waited for the exit, its slot never free again)
    CLTRACE_LIBRARY="$T/noprofile.so" traced "$WORK/np" "$T/timeline" "$WORK/npdur" > "$WORK/np.traced"
    "$T/timeline" "$WORK/npdur0" > "$WORK/np.plain"
    cmp "$WORK/np.plain" "$WORK/np.traced"
    $PY tests/tracedump.py "$(trace_of "$WORK/np")" | $PY -c '
import collections, json, sys
d = json.load(sys.stdin)
untimed = d["attributes"].get("cltrace.commands_untimed")
last = collections.defaultdict(lambda: (0, None))
for c in d["counters"]:
    if c["name"].endswith("commands in flight") and c["ts"] >= last[c["name"]][0]:
        last[c["name"]] = (c["ts"], c["value"])
print("untimed", untimed, "in flight at the end:", {k: v[1] for k, v in last.items()})
assert untimed == 1 and len(last) == 3 and all(v[1] == 0 for v in last.values()), \
    "want 1 untimed command and 3 queues each ending with 0 in flight"'
    lint "$(trace_of "$WORK/np")"
}

report_formats() {   # report_formats TRACE DIR: the report in every format, into DIR/r.*
    mkdir -p "$2"
    "$B/cltrace-report" "$1" > "$2/r.txt"
    "$B/cltrace-report" --explain cost "$1" > "$2/r.cost"
    for f in json markdown junit html; do
        "$B/cltrace-report" --format $f "$1" > "$2/r.$f" || [ $? -le 1 ]
    done
    mv "$2/r.markdown" "$2/r.md"; mv "$2/r.junit" "$2/r.xml"
}

t_launch_loop_every_command_timed() {
    # 2,000 launches back to back, every one timed (--sample=all): each a
    # device slice with its flow, the clock tied by calibration markers,
    # cltrace's own cost in every format
    CLTRACE_SAMPLE=all traced "$WORK/ll" "$T/bench_calls" launch 2000 > /dev/null
    $PY tests/checks.py launches "$(trace_of "$WORK/ll")" 2000
    report_formats "$(trace_of "$WORK/ll")" "$WORK/llr"
    $PY tests/checks.py report_selfcost "$WORK/llr"
}

t_small_transfers_idle_starts_said() {
    # 300 small blocking writes: each finds its queue idle and waits for
    # PoCL's thread to start it; the waits counted per device, those beyond
    # the quickest tenth said (not counted) in every format. Each is timed
    # (--sample=all): by default a loaded machine's budget left 49 untimed
    CLTRACE_SAMPLE=all traced "$WORK/is" "$T/bench_calls" small 300 > /dev/null
    report_formats "$(trace_of "$WORK/is")" "$WORK/isr"
    $PY tests/checks.py report_selfcost "$WORK/isr"
    $PY - "$WORK/isr/r.json" <<'PY'
import json, sys
d = [x for x in json.load(open(sys.argv[1]))["devices"] if x["device_type"] & 2]
assert d and d[0]["idle_starts"] >= 300 and d[0]["idle_start_ns"] > 0, d
PY
    lint "$(trace_of "$WORK/is")"
}

t_clock_kept_fresh_while_commands_run() {
    # 30,000 launches (~70 ms on PoCL): the collector ties the clocks again
    # every 10 ms on a queue of cltrace's own
    traced "$WORK/clk" "$T/bench_calls" launch 30000 > /dev/null
    "$B/cltrace-report" --format json "$(trace_of "$WORK/clk")" > "$WORK/clk.json" || [ $? -le 1 ]
    $PY tests/checks.py report_clock_kept "$WORK/clk.json" "$(trace_of "$WORK/clk")"
    # a context per round, released while the collector may be using its
    # queue of ours there: same output as untraced, under ASan too
    "$T/churn" 60 contexts > "$WORK/clk.plain"
    traced "$WORK/clkc" "$T/churn" 60 contexts > "$WORK/clk.traced"
    diff "$WORK/clk.plain" "$WORK/clk.traced"
    local rt
    rt=$(${CC:-cc} -print-file-name=libasan.so)
    ASAN_OPTIONS=detect_leaks=0 CLTRACE_OUTPUT="$WORK/clka.%p.pftrace" CLTRACE_QUIET=1 \
        LD_PRELOAD="$rt:$B/asan/libcltrace.so" "$T/churn" 60 contexts > "$WORK/clk.asan"
    diff "$WORK/clk.plain" "$WORK/clk.asan"
    lint "$(trace_of "$WORK/clkc")" "$(trace_of "$WORK/clka")"
}

t_light_calls_one_clock_read() {
    # clSetKernelArg (like clRetain*) reads the clock once: its start; the
    # duration of 1 in 64 is measured and the report extrapolates the rest
    traced "$WORK/oc" "$T/bench_calls" setarg 20000 > /dev/null
    report_formats "$(trace_of "$WORK/oc")" "$WORK/ocr"
    $PY tests/checks.py one_clock "$(trace_of "$WORK/oc")" 20000 "$WORK/ocr/r.json"
    for f in txt md html; do
        grep -q "clSetKernelArg.*(durations of [0-9]* of 20003 calls measured, total extrapolated)" "$WORK/ocr/r.$f" ||
            { echo "r.$f:"; grep clSetKernelArg "$WORK/ocr/r.$f"; return 1; }
    done
    lint "$(trace_of "$WORK/oc")"
}

t_estimates_drawn_as_the_run_goes() {
    # 16 launches timed, then ~none (CLTRACE_SAMPLE=16,100000), in 10 steps
    # each ending in clFinish and 20 ms idle (the collector collects while
    # the app pauses; a bare clFinish, ~0.1 ms, was too short beside other
    # tests): once no timed launch is in flight, the untimed ones are drawn
    # at each clFinish as the run goes (not at the exit), each sized as the
    # timed ones ran, one after another on one lane. So for 500 launches and
    # one clFinish: fewer than the 1,024 drawn without one, all were drawn
    # at the exit (484 of 484, 2026-11-29)
    CLTRACE_SAMPLE=16,100000 traced "$WORK/eh" "$T/bench_calls" launch 10000 --steps 10 --step-pause-us 20000 \
        > /dev/null
    local t; t=$(trace_of "$WORK/eh")
    lint "$t"
    $PY tests/tracedump.py "$t" | $PY -c '
import json, sys
d = json.load(sys.stdin)
a = d["attributes"]
dev = sorted((s for s in d["slices"] if s["name"] in ("k", "k (estimated)")), key=lambda s: s["ts"])
est = [s for s in dev if s["name"] == "k (estimated)"]
timed = [s for s in dev if s["name"] == "k"]
assert len(dev) == 10001 and 16 <= len(timed) <= 20 and a["cltrace.commands_estimated"] == len(est), (len(dev), len(timed))
assert a["cltrace.commands_estimated_at_exit"] == 0, "%d untimed launches left to the exit" % a["cltrace.commands_estimated_at_exit"]
assert len({s["track"] for s in dev}) == 1, "estimated slices on a lane of their own"
assert all(x["ts"] + x["dur"] <= y["ts"] for x, y in zip(dev, dev[1:])), "slices overlap"
# each sized by a moving average of the timed ones after the first: within their range
lo, hi = min(s["dur"] for s in timed[1:]), max(s["dur"] for s in timed[1:])
assert all(lo / 2 <= s["dur"] <= 2 * hi for s in est), (lo, hi, min(s["dur"] for s in est), max(s["dur"] for s in est))
print("estimated", len(est), "at the exit", a["cltrace.commands_estimated_at_exit"], "ns", est[0]["dur"], "timed", lo, "-", hi)'
    CLTRACE_SAMPLE=16,100000 traced "$WORK/e5" "$T/bench_calls" launch 500 > /dev/null
    $PY tests/tracedump.py "$(trace_of "$WORK/e5")" | $PY -c '
import json, sys
a = json.load(sys.stdin)["attributes"]
n, late = a["cltrace.commands_estimated"], a["cltrace.commands_estimated_at_exit"]
print("500 launches, one clFinish:", n, "estimated,", late, "of them drawn at the exit")
assert n >= 480 and late == 0, "%d estimated, %d of them left to the exit (want 480 or more, 0)" % (n, late)'
}

t_estimates_counted_as_sized_where_squeezed() {
    # events longer than the launches' period (as NVIDIA's of a short kernel:
    # ~6.7 us apart 6.5): the untimed launches between two timed ones cannot
    # be drawn end to end at their size, so they are drawn shortened, each
    # saying the length it was sized at; its kernel's time counts that length
    # (counted as drawn, an H200's kernel mean read 0.95 of the program's own).
    # A fixed sample: the budget's timed launches come where the host's pace
    # puts them, and a run of 1,024 untimed ones with none timed in flight is
    # drawn unbounded, squeezed by nothing (0 shortened in 2 runs of 5). 1 in
    # 256, events 100 us long: those between two timed ones are squeezed
    # wherever a launch takes 0.4 to 100 us (1 in 8: 12.5 to 100, 56 of 17,486
    # shortened on a loaded 2-core VM)
    mkdir -p "$WORK/icd"
    echo "$T/libfaketiming.so" > "$WORK/icd/fake.icd"
    OCL_ICD_VENDORS=$WORK/icd FAKE_TIMING=late-end:100000 CLTRACE_SAMPLE=16,256 traced "$WORK/sq" "$T/kerneltruth" none 20000 > /dev/null
    local t; t=$(trace_of "$WORK/sq")
    lint "$t"
    "$B/cltrace-report" --format json "$t" > "$WORK/sq.json"
    $PY tests/tracedump.py "$t" | $PY -c '
import json, sys
d = json.load(sys.stdin)
j = json.load(open(sys.argv[1]))
k = j["kernels"][0]
timed = [s for s in d["slices"] if s["name"] == "k" and (s["track_name"] or "").startswith("Device")]
est = [s for s in d["slices"] if s["name"] == "k (estimated)"]
short = [s for s in est if "shortened_from_ns" in s["args"]]
assert timed and len(short) >= 100, "%d of %d estimated launches shortened" % (len(short), len(est))
assert all(s["args"]["shortened_from_ns"] > s["dur"] for s in short), "a shortened one longer than its size"
# the kernel counts each as sized: its time is the sum of the timed durations and the estimated
# sizes, to the nanosecond (counted as drawn, it reads less by what the shortened ones lost; how
# close the sizes come to the truth depends on the pace of the machine: measured on a GPU host)
sized = sum(s["dur"] for s in timed) + sum(max(s["args"].get("shortened_from_ns", 0), s["dur"]) for s in est)
miss = sum(s["args"]["shortened_from_ns"] - s["dur"] for s in short)
print("timed %d, estimated %d (%d shortened: %.1f ms less drawn); the kernel %.1f ms, sized %.1f ms" % (
    len(timed), len(est), len(short), miss / 1e6, k["device_ns"] / 1e6, sized / 1e6))
assert k["launches"] == len(timed) + len(est) and abs(k["device_ns"] - sized) <= k["launches"], "not counted as sized"
# the two figures that differ say by how much: the table counts each as sized, the device line as drawn
b = j["summary"]["device"]
assert b["estimated"] == len(est) and b["shortened"] == len(short), (b, len(est), len(short))
assert abs(b["shortened_ns"] - miss) <= len(short), (b["shortened_ns"], miss)
gap = sum(x["device_ns"] for x in j["kernels"]) - b["kernel_ns"]
assert abs(gap - b["shortened_ns"]) <= len(short), (gap, b["shortened_ns"])' "$WORK/sq.json"
    "$B/cltrace-report" "$t" | tr -s " \n" "  " | grep -q "of them drawn shorter, to fit between timed ones: the kernels' times count" \
        || { echo "the sample line does not say the table counts more than the device line"; return 1; }
}

t_launch_loop_sampled() {
    # CLTRACE_SAMPLE: every host call, the sampled device commands, the rest
    # marked; the report extrapolates and says so, and leaves device-idle out
    CLTRACE_SAMPLE=16,64 traced "$WORK/ls" "$T/bench_calls" launch 2000 > /dev/null
    $PY tests/checks.py launches "$(trace_of "$WORK/ls")" 2000 16,64
    report_formats "$(trace_of "$WORK/ls")" "$WORK/lsr"
    $PY tests/checks.py report_selfcost "$WORK/lsr" sampled
    # the first screen says how many launches were timed and by what rule (text, Markdown, JSON)
    unwrap "$WORK/lsr/r.txt" | grep -Eq "^sample: [0-9]+ of 2001 launches timed on the device \(1 kernel launch configuration sampled: first 16, then 1 in 64"
    # PoCL's queues are timed by callbacks there: a short kernel's timed launches run longer (docs/TRACING.md)
    unwrap "$WORK/lsr/r.txt" | grep -q "^sample: .*timed by their events' callbacks on a CPU device, a short kernel's timed launches run longer than its others: its time is an upper bound$" ||
        { echo "the sample line does not say the time is an upper bound where callbacks timed the launches"; return 1; }
    grep -q "| device timing | [0-9]* of 2001 launches timed" "$WORK/lsr/r.md"
    $PY -c 'import json, sys; s = json.load(open(sys.argv[1]))["summary"]
assert 16 < s["launches_timed"] < 2001 and s["sampling"].startswith("first 16, then 1 in 64"), s
assert s["device"]["timed_by_callbacks"] is True, s["device"]' "$WORK/lsr/r.json"
    # the launcher's flag sets the same option
    "$B/cltrace" -q -o "$WORK/lf.%p.pftrace" --sample=16,64 "$T/bench_calls" launch 500 > /dev/null
    $PY tests/checks.py launches "$(trace_of "$WORK/lf")" 500 16,64
}

t_untimed_transfers_counted() {
    # transfers that sampling left untimed count in the report with the
    # timed ones (the writer's cltrace.sampled_out_transfer.N): the
    # transfers example's 512 small writes and reads, 4 of each size timed,
    # as many as with every command timed, and the finding says how many;
    # each is drawn on its queue as an estimated slice (lint clean), so the
    # rules that read the timeline judge it (device-idle: found exactly where
    # the device was idle over half the span, as with every command timed)
    CLTRACE_SAMPLE=4,64 traced "$WORK/ut" "$B/examples/transfers" > /dev/null
    CLTRACE_SAMPLE=all traced "$WORK/ua" "$B/examples/transfers" > /dev/null
    lint "$(trace_of "$WORK/ut")"
    "$B/cltrace-report" --format json "$(trace_of "$WORK/ut")" > "$WORK/ut.json"
    "$B/cltrace-report" --format json "$(trace_of "$WORK/ua")" > "$WORK/ua.json"
    $PY - "$WORK/ut.json" "$WORK/ua.json" "$(trace_of "$WORK/ut")" <<'PYEOF'
import json, re, subprocess, sys
def small(path):
    r = json.load(open(path))
    f = [x for x in r["findings"] if x["rule"] == "small-transfers"][0]
    return int(re.match(r"(\d+) transfers below", f["numbers"]).group(1)), f["numbers"], r["summary"]["device"]["transfers"]
(n_s, text_s, t_s), (n_a, text_a, t_a) = small(sys.argv[1]), small(sys.argv[2])
print("sampled: %d small, %d transfers; every command timed: %d small, %d transfers" % (n_s, t_s, n_a, t_a))
m = re.search(r"\((\d+) transfers untimed", text_s)
assert n_s == n_a == 512 and t_s == t_a and m and 400 < int(m.group(1)) < 512, text_s
assert "untimed" not in text_a, text_a
dump = json.loads(subprocess.check_output([sys.executable, "tests/tracedump.py", sys.argv[3]]))
drawn = sum(1 for s in dump["slices"] if "cltrace.estimated" in s["categories"])
r = json.load(open(sys.argv[1]))
idle_found = any(f["rule"] == "device-idle" for f in r["findings"])
busy = r["summary"]["device"]["busy_percent"]
print("untimed transfers drawn: %d; the device busy %.1f %% of the span, device-idle %s" % (
    drawn, busy, "found" if idle_found else "not found"))
assert int(m.group(1)) == drawn, "every untimed transfer an estimated slice"
assert idle_found == (busy < 50), "the device's idle time judged on a sampled timeline"
PYEOF
}

t_launch_loop_budget_by_default() {
    # by default a launch-bound loop is timed within the budget (here 2 % of
    # the run, so that a slow machine's loop still reaches it): the first 16
    # launches, then a sample; every untimed launch is an estimated slice on
    # its queue (lint clean), counted in busy; the first screen says so in
    # one line, the JSON names the mode
    CLTRACE_BUDGET=2 traced "$WORK/lb" "$T/bench_calls" launch 20000 > /dev/null
    local t; t=$(trace_of "$WORK/lb")
    lint "$t"
    "$B/cltrace-report" "$t" > "$WORK/lb.raw" || true
    unwrap "$WORK/lb.raw" > "$WORK/lb.txt"
    grep -Eq "^sample: timed 16 of each of 1 launch configuration, then 1 in [0-9]+ \([0-9,]+ of 20,001 launches\): (within the 2 % budget \(|over the 2 % budget: )timing cost [0-9.]+ ms.*; the [0-9,]+ others drawn where they ran, estimated" "$WORK/lb.txt" ||
        { grep "^sample" "$WORK/lb.txt"; return 1; }
    "$B/cltrace-report" --format json "$t" | $PY -c '
import json, sys
r = json.load(sys.stdin)
s, k = r["self_cost"], r["kernels"][0]
assert s["sampling_mode"] == "budget" and s["sampling"].startswith("budget 2 %"), s
b = s["budget"]
assert 16 <= k["timed_launches"] < k["launches"] == 20001, k
assert b["estimated_commands"] == k["launches"] - k["timed_launches"], (b, k)
d = r["summary"]["device"]
timed_ns = k["device_ns"] * k["timed_launches"] / k["launches"]
assert d["kernel_ns"] > 2 * timed_ns, (d, k)   # the estimated slices count in busy
print("timed", k["timed_launches"], "estimated", b["estimated_commands"], "busy %", d["busy_percent"])'
    # every launch has its arrow, estimated ones too; none drawn before its
    # enqueue; none left out
    $PY tests/tracedump.py "$t" | $PY -c '
import json, sys
d = json.load(sys.stdin)
enq = {f: s for s in d["slices"] if s["name"] == "clEnqueueNDRangeKernel" for f in s.get("flows") or []}
dev = [s for s in d["slices"] if s["name"] in ("k", "k (estimated)")]
ends = {f: s for s in dev for f in s.get("terminating_flows") or []}
assert len(enq) == len(ends) == len(dev) == 20001, (len(enq), len(ends), len(dev))
assert all(ends[f]["ts"] >= enq[f]["ts"] for f in enq), "a command drawn before its enqueue"
est = [s for s in dev if s["name"] == "k (estimated)"]
assert est and all(s["categories"] == ["cltrace.estimated"] and s["args"]["estimated"] for s in est)
# sized as the timed ones ran: none longer than the longest, the first left
# out; most no shorter than the shortest (those squeezed between two timed
# ones may be: the device ran them in less). Drawn before any timed one was,
# they were 1 ns each. Not their median within 4x: the size is a running
# mean, and beside busy threads a few timed launches of 100 us made it 4.9x
# a median of 721 ns.
import statistics
timed = [s["dur"] for s in dev[1:] if s["name"] == "k"]
drawn = [s["dur"] for s in est]
assert min(timed) <= statistics.median(drawn) and max(drawn) <= max(timed), \
    (statistics.median(drawn), max(drawn), min(timed), max(timed))
print("arrows", len(ends), "of which estimated", len(est), "median ns: estimated", statistics.median(drawn),
      "timed", statistics.median(timed))'
    # --sample=all: every command timed, nothing estimated
    "$B/cltrace" -q -o "$WORK/la.%p.pftrace" --sample=all "$T/bench_calls" launch 2000 > /dev/null
    "$B/cltrace-report" --format json "$(trace_of "$WORK/la")" | $PY -c '
import json, sys
r = json.load(sys.stdin)
assert r["self_cost"]["sampling_mode"] == "all" and r["kernels"][0]["timed_launches"] == 2001, r["self_cost"]'
}

t_device_memory_peak() {
    # known allocations in two contexts on one device: each context's
    # counter and the device's (every context) peak where the program's
    # own account says, the device's in its group; the report says the
    # same peak and the buffers that held it, largest first
    traced "$WORK/mp" "$T/memory_peak" > /dev/null
    local t; t=$(trace_of "$WORK/mp")
    lint "$t"
    $PY tests/tracedump.py "$t" | $PY -c '
import json, sys
d = json.load(sys.stdin)
M = 1 << 20
peaks = {}
for c in d["counters"]:
    if c["name"].startswith("device memory"):
        peaks[c["name"]] = max(peaks.get(c["name"], 0), c["value"])
dev = [n for n in peaks if n.startswith("device memory, Device 0")]
ctx = sorted(v for n, v in peaks.items() if n.startswith("device memory, context"))
assert len(dev) == 1 and peaks[dev[0]] == 9 * M, peaks
assert ctx == [3 * M, 6 * M], peaks
print("counters", peaks)'
    "$B/cltrace-report" --format json "$t" > "$WORK/mp.json" || [ $? -le 1 ]
    $PY -c '
import json, sys
m = json.load(open(sys.argv[1]))["summary"]["device_memory"]
M = 1 << 20
assert m["peak_bytes"] == 9 * M and m["held_at_peak"] == 3 and m["buffers"] == 5, m
assert [o["bytes"] for o in m["objects"]] == [4 * M, 3 * M, 2 * M], m["objects"]
assert all("memory_peak.c" in o["where"] for o in m["objects"]), m["objects"]
assert m["global_mem_bytes"] > 0 and not m["near_limit"], m' "$WORK/mp.json"
    "$B/cltrace-report" "$t" > "$WORK/mp.txt" || true
    grep -q "^memory: peak 9 MiB of buffers at [0-9.]* s, 3 held it, the largest 4 MiB" "$WORK/mp.txt" ||
        { cat "$WORK/mp.txt"; echo "no memory line with the peak"; return 1; }
}

t_annotate_puts_findings_on_the_timeline() {
    # --annotate: the trace again with one slice per finding on a track of
    # its own, over the commands it names (the small transfers, a kernel's
    # launches); it lints clean, reads as the same report, and trace
    # processor (where built: TRACE_PROCESSOR) imports it with no error
    local x
    for x in transfers workgroup; do
        CLTRACE_SAMPLE=all traced "$WORK/$x" "$B/examples/$x" > /dev/null
        local t; t=$(trace_of "$WORK/$x")
        "$B/cltrace-report" --format json -o "$WORK/$x.json" "$t" || [ $? -le 1 ]
        "$B/cltrace-report" --annotate "$WORK/$x-ann.pftrace.gz" -o /dev/null "$t" || [ $? -le 1 ]
        lint "$WORK/$x-ann.pftrace.gz"
        "$B/cltrace-report" --format json -o "$WORK/$x-ann.json" "$WORK/$x-ann.pftrace.gz" || [ $? -le 1 ]
        $PY tests/tracedump.py "$WORK/$x-ann.pftrace.gz" > "$WORK/$x-ann.dump"
        $PY - "$WORK/$x.json" "$WORK/$x-ann.json" "$WORK/$x-ann.dump" <<'PYEOF'
import json, re, sys
rep, again, d = (json.load(open(p)) for p in sys.argv[1:])
fs = [s for s in d["slices"] if s.get("categories") == ["cltrace.finding"]]
assert len(fs) == len(rep["findings"]) > 0, (len(fs), len(rep["findings"]))
assert {s["args"]["rule"] for s in fs} == {f["rule"] for f in rep["findings"]}
assert all(s["track_name"] == "cltrace findings" and s["args"]["fix"] for s in fs)
assert [f["rule"] for f in again["findings"]] == [f["rule"] for f in rep["findings"]], "the annotation changed the report"
dev = [s for s in d["slices"] if s.get("args", {}).get("command_type")]
def covers(f, cmds):
    assert cmds and all(f["ts"] <= c["ts"] and c["ts"] + c["dur"] <= f["ts"] + f["dur"] for c in cmds), f["name"]
for f in fs:
    if f["args"]["rule"] == "small-transfers":
        covers(f, [c for c in dev if c["args"].get("direction") in ("host_to_device", "device_to_host")
                   and c["args"]["bytes"] < 32768])
    if f["args"]["rule"] in ("work-group-multiple", "under-filled-device"):   # its configuration's launches
        kernel, local = re.match(r".*?: (\S+) global=\d+ local=(\w+)", f["name"]).groups()
        covers(f, [c for c in dev if c["name"] == kernel and
                   str(c["args"]["local_work_size"]).strip("[]") == local])
print(len(fs), "findings on the timeline:", sorted(s["args"]["rule"] for s in fs))
PYEOF
        if [ -n "${TRACE_PROCESSOR:-}" ]; then
            [ -z "$("$TRACE_PROCESSOR" -Q "select name from stats where value > 0 and severity in ('error', 'data_loss')" \
                   "$WORK/$x-ann.pftrace.gz" 2>/dev/null | tail -n +2)" ] || { echo "trace processor: import errors"; return 1; }
        fi
    done
    # one trace only, and a clear error for a broken one
    ! "$B/cltrace-report" --annotate "$WORK/two.pftrace" "$(trace_of "$WORK/transfers")" "$(trace_of "$WORK/workgroup")" \
        2> /dev/null
    printf 'not a trace' > "$WORK/bad.pftrace"
    ! "$B/cltrace-report" --annotate "$WORK/bad-ann.pftrace" "$WORK/bad.pftrace" 2> "$WORK/bad.err"
    grep -q "cltrace-report: " "$WORK/bad.err"
}

t_leaks_classified() {
    # a leak is an error where its site leaks every time or on some path,
    # info where the object was made once and held to the end
    traced "$WORK/lc" "$T/lifetimes" classify > /dev/null
    "$B/cltrace-report" --format json "$(trace_of "$WORK/lc")" > "$WORK/lc.json" || [ $? -le 1 ]
    $PY tests/checks.py report_leak_classes "$WORK/lc.json"
}

t_text_where_is_short() {
    # a ten-frame creation stack: text and Markdown show its first four
    # frames and count the rest, JSON and HTML keep every frame
    traced "$WORK/ds" "$T/deep_stack" > /dev/null
    report_formats "$(trace_of "$WORK/ds")" "$WORK/dsr"
    unwrap "$WORK/dsr/r.txt" > "$WORK/dsr/r.txt1" && mv "$WORK/dsr/r.txt1" "$WORK/dsr/r.txt"
    for f in txt md; do
        sed 's/&lt;/</g' "$WORK/dsr/r.$f" |
            grep -q "at nest (tests/apps/deep_stack.c:[0-9]*) <- nest .* <- \.\.\. (6 more frames in the JSON and HTML reports)" ||
            { echo "r.$f:"; grep -A1 "cl_mem" "$WORK/dsr/r.$f"; return 1; }
    done
    $PY -c 'import json, sys; w = [f["where"] for f in json.load(open(sys.argv[1]))["findings"] if "nest (" in f["where"]]
assert w and w[0].count(" <- ") == 9, w' "$WORK/dsr/r.json" || { echo "r.json lacks the whole stack"; return 1; }
    for f in html; do
        sed 's/&lt;/</g' "$WORK/dsr/r.$f" |
            grep -o "nest (tests/apps/deep_stack.c:[0-9]*) <- nest.*<- main (tests/apps/deep_stack.c:[0-9]*)" |
            head -n 1 | grep -o " <- " | wc -l | grep -qx 9 || { echo "r.$f lacks the whole stack"; return 1; }
    done
}

t_serialization_names_its_call_site() {
    # the finding says where the launches that wait are made
    traced "$WORK/sy" "$B/examples/sync" > /dev/null
    "$B/cltrace-report" "$(trace_of "$WORK/sy")" > "$WORK/sy.raw" || [ $? -le 1 ]
    unwrap "$WORK/sy.raw" > "$WORK/sy.txt"
    grep -q "serialization: kernel launches at main (examples/sync/sync.c:[0-9]*) ([0-9]* followed by a wait)" \
        "$WORK/sy.txt" || { grep -A1 serialization "$WORK/sy.txt"; return 1; }
}

t_findings_estimate_gains() {
    # serialization and small transfers say what fixing them is worth (and
    # how); a finding the trace cannot support says nothing (JSON: null).
    # The small transfers' gain is what the method it states gives: on PoCL
    # small and large transfers are both host memcpys, the gain near 0 and
    # at 0 on a loaded machine (the one large transfer slowed); a gain that
    # must be positive is the rule vectors' (tests/rule_vectors.py)
    traced "$WORK/eg1" "$B/examples/sync" > /dev/null
    traced "$WORK/eg2" "$B/examples/transfers" > /dev/null
    for t in eg1 eg2; do
        "$B/cltrace-report" --format json "$(trace_of "$WORK/$t")" > "$WORK/$t.json" || [ $? -le 1 ]
        "$B/cltrace-report" "$(trace_of "$WORK/$t")" > "$WORK/$t.txt" || [ $? -le 1 ]
    done
    grep -q "estimated gain: [0-9.]* ms ([0-9.]* % of the device timeline): " "$WORK/eg1.txt"
    $PY - "$WORK/eg1.json" "$WORK/eg2.json" <<'PYEOF'
import json, re, sys
want = {0: "serialization", 1: "small-transfers"}
for i, path in enumerate(sys.argv[1:]):
    found = json.load(open(path))["findings"]
    f = [x for x in found if x["rule"] == want[i]]
    assert f and f[0]["gain_method"], f
    g = f[0]["estimated_gain_ns"]
    if i == 0:
        assert g > 0 and 0 < f[0]["estimated_gain_percent"] < 100, f
    else:
        m = re.match(r"their ([0-9.]+) ms, less the same bytes at ([0-9.]+) GB/s", f[0]["gain_method"])
        small = int(re.search(r"([0-9]+) bytes in all", f[0]["numbers"]).group(1))
        their, bw = float(m.group(1)) * 1e6, float(m.group(2))
        expect = max(0.0, their - small / bw)
        print("small transfers: %.0f ns, less %d bytes at %.2f GB/s: %.0f ns; said %d ns" % (their, small, bw, expect, g))
        # the text rounds the bandwidth (0.34 GB/s: +-1.5 %, 23 us of 524,288 bytes' 1.54 ms on a
        # loaded machine) and the time (to the us)
        half = 0.5 * 10 ** -len(m.group(2).partition(".")[2])
        rounding = small * half / (bw * (bw - half)) if bw > half else their
        assert abs(g - expect) <= 1000 + 0.01 * their + rounding, (g, expect, rounding)
        # a warning where the gain is 1 % of the device timeline or more, else info
        assert f[0]["severity"] == ("warning" if f[0].get("estimated_gain_percent", 0) >= 1 else "info"), f
    others = [x for x in found if x["rule"] in ("leaks", "api-errors")]
    assert all(x["estimated_gain_ns"] is None for x in others), others
    # ranked: by severity, then estimated gain (largest first), then the rest
    rank = {"error": 2, "warning": 1, "info": 0}
    keys = [(-rank[x["severity"]], x["estimated_gain_ns"] is None, -(x["estimated_gain_ns"] or 0))
            for x in found if x["rule"] != "dropped-calls"]
    assert keys == sorted(keys), keys
PYEOF
}

t_frames_readable() {
    # C++ names demangled, a frame with no symbol as library+offset, in
    # every format a person reads
    traced "$WORK/cx" "$T/cxx_stack" > /dev/null
    report_formats "$(trace_of "$WORK/cx")" "$WORK/cxr"
    for f in txt md html; do
        grep -q "vision::Mat::create(_cl_context\*, int)" "$WORK/cxr/r.$f" || { echo "r.$f: not demangled"; return 1; }
        grep -q "libcxxlib.so+0x[0-9a-f]" "$WORK/cxr/r.$f" || { echo "r.$f: no library+offset frame"; return 1; }
        ! grep -q "_ZN[0-9]" "$WORK/cxr/r.$f" || { echo "r.$f: a mangled name"; return 1; }
    done
}

t_layer_mode_traces_dlopen_apps() {
    # an app that dlopens libOpenCL and dlsyms everything (as hashcat does)
    # is traced through the ICD loader's layer (OPENCL_LAYERS)
    "$T/dlopen_app" > "$WORK/dl.plain"
    OPENCL_LAYERS=$SHIM CLTRACE_OUTPUT="$WORK/dl.%p.pftrace" CLTRACE_QUIET=1 "$T/dlopen_app" > "$WORK/dl.traced"
    cmp "$WORK/dl.plain" "$WORK/dl.traced"
    $PY tests/checks.py dlopen_app "$(trace_of "$WORK/dl")"
}

t_preload_and_layer_record_each_call_once() {
    "$T/vecadd" > "$WORK/pl.plain"
    OPENCL_LAYERS=$SHIM traced "$WORK/pl" "$T/vecadd" > "$WORK/pl.traced"
    cmp "$WORK/pl.plain" "$WORK/pl.traced"
    $PY tests/checks.py vecadd "$(trace_of "$WORK/pl")"
    # and a program that dlsyms its functions: the preload's dlsym and the
    # layer both see it, the trace has each call once (23)
    OPENCL_LAYERS=$SHIM traced "$WORK/pld" "$T/dlopen_app" > "$WORK/pld.traced"
    cmp "$WORK/dl.plain" "$WORK/pld.traced" 2> /dev/null || "$T/dlopen_app" | cmp - "$WORK/pld.traced"
    $PY tests/checks.py dlopen_app "$(trace_of "$WORK/pld")" 23
}

exits() {     # exits MODE N PREFIX: run tests/apps/exits traced; prints its exit status
    local rc=0
    CLTRACE_OUTPUT="$3.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM timeout 60 "$T/exits" "$1" "$2" \
        > "$3.out" 2> "$3.err" || rc=$?
    echo $rc
}

t_crash_keeps_every_call() {
    # SIGSEGV and abort: the status is the app's; the trace holds every call
    # made before the crash, and is a whole gzip file (its end is rewritten
    # at every flush); SIGKILL, where no handler runs: whatever the writer
    # had flushed, still a whole gzip file
    [ "$(exits segv 500 "$WORK/cs")" -eq 139 ]
    $PY tests/checks.py calls "$(trace_of "$WORK/cs")" clGetPlatformInfo 500
    [ "$(exits abort 300 "$WORK/ca")" -eq 134 ]
    $PY tests/checks.py calls "$(trace_of "$WORK/ca")" clGetPlatformInfo 300
    # SIGKILL once the writer's idle flush holds the calls (its thread runs
    # at idle priority: beside two CPU hogs, 300 ms was not always enough)
    local pid rc=0 i
    CLTRACE_OUTPUT="$WORK/ck.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM "$T/exits" kill 400 > "$WORK/ck.out" &
    pid=$!
    for i in $(seq 300); do
        sleep 0.1
        ! ls "$WORK"/ck.*.pftrace* > /dev/null 2>&1 ||
            ! $PY tests/checks.py calls "$(trace_of "$WORK/ck")" clGetPlatformInfo 400 > /dev/null 2>&1 || break
    done
    kill -KILL $pid
    wait $pid || rc=$?
    [ $rc -eq 137 ]
    $PY tests/checks.py calls "$(trace_of "$WORK/ck")" clGetPlatformInfo 400
    for f in cs ca ck; do
        case "$(trace_of "$WORK/$f")" in *.pftrace.gz) gzip -t "$(trace_of "$WORK/$f")" ;; *) false ;; esac
    done
    lint "$(trace_of "$WORK/cs")" "$(trace_of "$WORK/ca")" "$(trace_of "$WORK/ck")"
}

t_compressor_thread_ends_traces_whole() {
    # gzip on a second thread (by itself only with 4 CPUs or more, so forced
    # here): a crash, SIGKILL, _exit, fork and a full disk still leave whole
    # traces with every call, as without it
    export CLTRACE_COMPRESS_THREAD=1
    WORK=$WORK/ct
    mkdir -p "$WORK"
    t_crash_keeps_every_call
    t_exit_paths
    t_fork_child_gets_its_own_trace
    t_full_disk_warns_once_and_app_runs_on
}

t_gzip_beside_the_exit_on_two_cpus() {
    # with fewer than 4 CPUs (here 1) gzip runs in the writer during the run (a
    # thread of its own would take the app's CPU) and on a thread of its own
    # from the first full buffer flushed after the app's exit began, the
    # exit's CPUs being free: a backlog at the exit (here the writer's first
    # write, made during the driver's start, stalls for 2 s, so a 5,000-launch
    # loop's ~1.5 MB of packets wait for the exit, however fast the machine;
    # a ring of 1 MiB holds its records: one of 256 KiB, full, would have
    # the loop wait for the stalled writer and leave nothing for the exit)
    # is encoded and compressed side by side; an exit with less than a buffer
    # to write starts no thread (100 launches); the trace whole and lint clean
    # either way, the attribute says where gzip ran
    local mode want n
    for mode in -1:exit:5000 -1:none:100 0:none:1000 1:run:1000; do
        want=${mode#*:}
        n=${want#*:}
        want=${want%:*}
        if [ "$n" = 5000 ]; then
            STALL_AT=1 STALL_S=2 CLTRACE_BUFFER_KB=1024 CLTRACE_OUTPUT="$WORK/gx$want$n.%p.pftrace" CLTRACE_QUIET=1 \
                LD_PRELOAD=$T/libstall.so:$SHIM taskset -c 0 "$T/bench_calls" launch $n > /dev/null
        else
            CLTRACE_COMPRESS_THREAD=${mode%%:*} traced "$WORK/gx$want$n" taskset -c 0 "$T/bench_calls" \
                launch $n > /dev/null
        fi
        lint "$(trace_of "$WORK/gx$want$n")"
        $PY tests/tracedump.py "$(trace_of "$WORK/gx$want$n")" | $PY -c '
import json, sys
d = json.load(sys.stdin)
got = d["attributes"].get("cltrace.gzip_thread")
k = [s for s in d["slices"] if s["name"] in ("k", "k (estimated)")]
print("gzip thread:", got, "of", sys.argv[1] + ";", len(k), "launches drawn")
assert got == sys.argv[1] and len(k) == int(sys.argv[2]) + 1, (got, len(k))' "$want" "$n"
    done
}

t_stalled_disk_never_hangs_the_app() {
    # the trace's second write blocks for 60 s (a disk that stops answering),
    # gzip on its own thread: the writer gives up on it after 10 s and says
    # so, the app runs on unchanged, its exit waits 10 s at most
    "$T/exits" plain 200000 > "$WORK/sd.plain"
    local t0 rc=0
    t0=$(date +%s)
    STALL_AT=2 STALL_S=60 CLTRACE_COMPRESS_THREAD=1 CLTRACE_OUTPUT="$WORK/sd.%p.pftrace" \
        LD_PRELOAD="$T/libstall.so:$SHIM" "$T/exits" plain 200000 > "$WORK/sd.out" 2> "$WORK/sd.err" || rc=$?
    local took=$(( $(date +%s) - t0 ))
    cat "$WORK/sd.err"
    echo "took $took s"
    [ $rc -eq 0 ]
    cmp "$WORK/sd.plain" "$WORK/sd.out"
    [ "$took" -lt 45 ]
    grep -q "takes more than 10 s; trace stops here, the app runs on" "$WORK/sd.err"
}

t_app_signal_handler_still_runs() {
    [ "$(exits handler 50 "$WORK/ah")" -eq 42 ]
    grep -q "app handler ran" "$WORK/ah.out"
}

whole_exit() {   # whole_exit PREFIX HOW: the trace of an exit that ran no atexit is whole and says so
    local r
    r=$("$B/cltrace-report" "$(trace_of "$1")" 2> "$1.rerr") || [ $? -eq 1 ]
    echo "$r" | head -3
    ! grep -q "cut short" "$1.rerr" || { cat "$1.rerr"; return 1; }
    echo "$r" | head -1 | grep -q "ran [0-9.]* s, ended by $2"
    echo "$r" | grep -q "^cost:   cltrace added"
    lint "$(trace_of "$1")"
}

t_exec_writes_the_trace_first() {
    # exec replaces the image: no exit handler runs, and what the writer had
    # not written went with it (a fork child that called OpenCL, then ran
    # /bin/true, left an empty file). The trace is finished before an exec
    # and says so; an exec that fails returns to a process that runs on,
    # untraced; the new image, traced too, writes a file of its own (the
    # same pid: the name gets -1). Output and status as untraced
    "$T/exits" exec 50 > "$WORK/xe.plain"
    local rc=0
    CLTRACE_OUTPUT="$WORK/xe.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM "$T/exits" exec 50 > "$WORK/xe.out" || rc=$?
    [ $rc -eq 0 ] && cmp "$WORK/xe.plain" "$WORK/xe.out"
    local first second
    first=$(ls "$WORK"/xe.*.pftrace* | grep -v -- '-1\.pftrace')
    second=$(ls "$WORK"/xe.*-1.pftrace*)
    "$B/cltrace-report" "$first" | head -n 1 | grep -q "ended by exec"
    [ "$(count_of "$first" clGetPlatformInfo)" -eq 50 ] || { echo "before the exec: $(count_of "$first" clGetPlatformInfo) of 50"; return 1; }
    [ "$(count_of "$second" clGetPlatformInfo)" -eq 10 ] || { echo "the new image: $(count_of "$second" clGetPlatformInfo) of 10"; return 1; }
    lint "$first" "$second"
}

t_exit_paths() {
    [ "$(exits _exit 200 "$WORK/ex")" -eq 3 ]                 # _exit: no atexit, still written, whole
    $PY tests/checks.py calls "$(trace_of "$WORK/ex")" clGetPlatformInfo 200
    whole_exit "$WORK/ex" "_exit(3)"
    [ "$(exits leak 10 "$WORK/ek")" -eq 0 ]                   # the objects held at _exit, classed
    whole_exit "$WORK/ek" "_exit(0)"
    "$B/cltrace-report" "$(trace_of "$WORK/ek")" | grep -q "cl_mem, created by clCreateBuffer at main"
    "$B/cltrace-report" "$(trace_of "$WORK/ek")" | grep -q "1 object(s) still held at _exit (no atexit ran) (still reachable), 4096 bytes"
    [ "$(exits quick 10 "$WORK/eq")" -eq 4 ]                  # quick_exit: the app's handler, then a whole trace
    grep -q "app quick handler ran" "$WORK/eq.out"
    whole_exit "$WORK/eq" "quick_exit"
    [ "$(exits byThread 10 "$WORK/eb")" -eq 5 ]               # exit() from a thread other than main
    $PY tests/checks.py calls "$(trace_of "$WORK/eb")" clGetPlatformInfo 15    # 10 + 2 + destructor 3
    "$B/cltrace-report" "$(trace_of "$WORK/eb")" 2>&1 | { ! grep -q "cut short"; }
    [ "$(exits vfork 10 "$WORK/ev")" -eq 0 ]                  # a vfork child's _exit: untouched
    grep -q "vfork child status 0" "$WORK/ev.out"
    [ "$(ls "$WORK"/ev.*.pftrace* | wc -l)" -eq 1 ]
    $PY tests/checks.py calls "$(trace_of "$WORK/ev")" clGetPlatformInfo 23    # 10 + 10 + destructor 3
    [ "$(exits thread 10 "$WORK/et")" -eq 0 ]                 # exit while another thread calls
    [ -s "$(trace_of "$WORK/et")" ]
    [ "$(exits late 10 "$WORK/el")" -eq 0 ]                   # calls after main returned
    $PY tests/checks.py calls "$(trace_of "$WORK/el")" clGetPlatformInfo 18    # 10 + atexit 5 + destructor 3
}

t_exit_with_kernels_in_flight() {
    # main returns while 4 kernels run on PoCL, compiled as they start (no
    # kernel cache): untraced the process just ends (0, but for PoCL's own
    # race: SIGSEGV in 1 run of 20, so no untraced run here); traced, cltrace
    # waits for them before the libraries' destructors (after them, PoCL's
    # threads met LLVM torn down: SIGABRT or SIGSEGV, 4 runs of 4): status 0,
    # the app's output, and each launch timed
    export POCL_KERNEL_CACHE=0
    echo "4 launches in flight" > "$WORK/if.plain"
    local i
    for i in 1 2 3; do
        [ "$(exits inflight 4 "$WORK/if$i")" -eq 0 ] || { tail -5 "$WORK/if$i.err"; return 1; }
        cmp "$WORK/if.plain" "$WORK/if$i.out"
        "$B/cltrace-report" --format json "$(trace_of "$WORK/if$i")" | $PY -c '
import json, sys
k = json.load(sys.stdin)["kernels"]
print([(x["name"], x["launches"], x["timed_launches"]) for x in k])
sys.exit(0 if len(k) == 1 and k[0]["launches"] == 4 and k[0]["timed_launches"] == 4 else 1)'
    done
    lint "$(trace_of "$WORK/if1")"
}

t_exit_calls_the_driver_from_a_thread_of_its_own() {
    # glibc destroys the thread-locals of the thread that calls exit() before
    # any atexit handler or destructor runs; a driver that keeps state there
    # (Oclgrind: the API call it is in) writes into freed memory when called
    # on that thread later (CI: "corrupted double-linked list", SIGABRT, as
    # cltrace's exit released an event). The stand-in ICD aborts on any such
    # call: the app's own calls from an atexit handler show it does. main
    # returns while a kernel runs 300 ms: cltrace collects it at exit from a
    # thread of its own (it aborted in every run before), by either route;
    # after _exit (no thread-local destroyed) on the calling thread: status
    # 0, the app's output, both launches timed, none left unfinished
    local rc=0 r
    standin "$T/exits" late 1 > /dev/null 2> "$WORK/xl.err" || rc=$?
    [ $rc -eq 134 ] && grep -q "thread-locals were destroyed" "$WORK/xl.err"
    standin STANDIN_RUN_MS=300 "$T/old_platform" inflight > "$WORK/xo.plain"
    for r in preload launcher _exit; do
        rc=0
        if [ $r = launcher ]; then
            standin STANDIN_RUN_MS=300 "$B/cltrace" -q -o "$WORK/xo-$r.%p.pftrace" -- \
                "$T/old_platform" inflight > "$WORK/xo-$r.out" 2> "$WORK/xo-$r.err" || rc=$?
        else
            standin STANDIN_RUN_MS=300 LD_PRELOAD=$SHIM CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/xo-$r.%p.pftrace" \
                "$T/old_platform" inflight ${r#preload} > "$WORK/xo-$r.out" 2> "$WORK/xo-$r.err" || rc=$?
        fi
        cat "$WORK/xo-$r.err"
        [ $rc -eq 0 ] && cmp "$WORK/xo.plain" "$WORK/xo-$r.out"
        "$B/cltrace-report" --format json "$(trace_of "$WORK/xo-$r")" | $PY -c '
import json, sys
k = json.load(sys.stdin)["kernels"]
print([(x["name"], x["launches"], x["timed_launches"]) for x in k])
sys.exit(0 if [(x["launches"], x["timed_launches"]) for x in k] == [(2, 2)] else 1)'
        [ "$(attr_of "$(trace_of "$WORK/xo-$r")" cltrace.commands_unfinished)" = 0 ]
    done
    lint "$(trace_of "$WORK/xo-preload")"
}

t_fork_child_gets_its_own_trace() {
    [ "$(exits fork 40 "$WORK/fk")" -eq 0 ]
    grep -q "child status 0" "$WORK/fk.out"
    local files
    files=$(ls "$WORK"/fk.*.pftrace*)
    [ "$(echo "$files" | wc -l)" -eq 2 ]
    # parent: 40 + 40 + destructor 3; child: its own 40 + destructor 3, none of the parent's
    local counts=""
    for f in $files; do
        counts="$counts $($PY tests/tracedump.py "$f" | $PY -c 'import json,sys; print(sum(s["name"] == "clGetPlatformInfo" for s in json.load(sys.stdin)["slices"]))')"
    done
    [ "$(echo $counts | tr ' ' '\n' | sort -n | tr '\n' ' ')" = "43 83 " ]
    [ -z "$(cat "$WORK/fk.err")" ]
}

t_full_disk_warns_once_and_app_runs_on() {
    # a file size limit makes the trace's writes fail (EFBIG) as a full disk would
    "$T/exits" plain 20000 > "$WORK/df.plain"
    local rc=0
    ( trap '' XFSZ; ulimit -f 64; CLTRACE_OUTPUT="$WORK/df.%p.pftrace" LD_PRELOAD=$SHIM \
        "$T/exits" plain 20000 > "$WORK/df.out" 2> "$WORK/df.err" ) || rc=$?
    cat "$WORK/df.err"
    [ $rc -eq 0 ]
    cmp "$WORK/df.plain" "$WORK/df.out"
    [ "$(grep -c '^cltrace:' "$WORK/df.err")" -eq 1 ]
    grep -q 'failed' "$WORK/df.err"
    lint "$(trace_of "$WORK/df")"
}

t_launcher_children() {
    # child processes are traced too, unless --no-children
    local va=$T/vecadd
    "$B/cltrace" -q -o "$WORK/ch" -- sh -c "$va > /dev/null; $va > /dev/null"
    [ "$(ls "$WORK"/ch.*.pftrace* | wc -l)" -eq 2 ]
    "$B/cltrace" -q --no-children -o "$WORK/nc" -- sh -c "$va > /dev/null; $va > /dev/null"
    [ -z "$(ls "$WORK"/nc.*.pftrace* 2>/dev/null)" ]
}

t_bad_input_same_codes() {
    # NULLs, unknown enums and flags, absurd sizes: same codes, no crash,
    # under ASan/UBSan too
    "$T/badargs" > "$WORK/ba.plain"
    traced "$WORK/ba" "$T/badargs" > "$WORK/ba.traced"
    diff "$WORK/ba.plain" "$WORK/ba.traced"
    local rt
    rt=$(${CC:-cc} -print-file-name=libasan.so)
    ASAN_OPTIONS=detect_leaks=0 CLTRACE_OUTPUT="$WORK/bas.%p.pftrace" CLTRACE_QUIET=1 \
        LD_PRELOAD="$rt:$B/asan/libcltrace.so" "$T/badargs" > "$WORK/ba.asan"
    diff "$WORK/ba.plain" "$WORK/ba.asan"
    lint "$(trace_of "$WORK/ba")"
}

lifetimes() {   # lifetimes MODE: run tests/apps/lifetimes traced, check its trace
    "$T/lifetimes" "$1" > "$WORK/lt-$1.plain"
    traced "$WORK/lt-$1" "$T/lifetimes" "$1" > "$WORK/lt-$1.out"
    diff "$WORK/lt-$1.plain" "$WORK/lt-$1.out"     # same output, same error codes
    $PY tests/checks.py lifetimes "$(trace_of "$WORK/lt-$1")" "$1" "$WORK/lt-$1.out"
    # the same under the ASan/UBSan build of the shim (the model, the stacks, the leak report)
    local rt
    rt=$(${CC:-cc} -print-file-name=libasan.so)
    ASAN_OPTIONS=detect_leaks=0 CLTRACE_OUTPUT="$WORK/lta-$1.%p.pftrace" CLTRACE_QUIET=1 \
        LD_PRELOAD="$rt:$B/asan/libcltrace.so" "$T/lifetimes" "$1" > "$WORK/lt-$1.asan"
    diff "$WORK/lt-$1.plain" "$WORK/lt-$1.asan"
    $PY tests/checks.py lifetimes "$(trace_of "$WORK/lta-$1")" "$1" "$WORK/lt-$1.asan"
    "$B/cltrace-report" --format json "$(trace_of "$WORK/lt-$1")" > "$WORK/lt-$1.json" || true
    $PY tests/checks.py report_lifetimes "$WORK/lt-$1.json" "$1" "$WORK/lt-$1.out"
    lint "$(trace_of "$WORK/lt-$1")"
}

t_leaks_each_type_with_creation_stack() {
    # one object of each type the PoCL device has, none released: exactly
    # those leaks, each with type, refcount and a stack down to make_<type>
    lifetimes leak
}

t_no_leaks_when_everything_is_released() {
    lifetimes clean
}

t_implicit_references_are_not_leaks() {
    # parents released before children; the model's counts equal the
    # driver's CL_MEM_REFERENCE_COUNT; a call on a released handle is flagged
    lifetimes implicit
}

t_errors_named_with_stacks() {
    lifetimes errors
}

t_stacks_show_inlined_calls() {
    # examples/leaks is built -O2: its helpers are inlined into main; the
    # creation stack still names each one, with the line it was called from
    traced "$WORK/il" "$B/examples/leaks" > /dev/null
    "$B/cltrace-report" "$(trace_of "$WORK/il")" > "$WORK/il.raw" || true
    unwrap "$WORK/il.raw" > "$WORK/il.txt"
    # an enqueue without a stack still has its call site: kernels say where they were launched
    traced "$WORK/wg" "$B/examples/workgroup" > /dev/null
    "$B/cltrace-report" "$(trace_of "$WORK/wg")" > "$WORK/wg.raw" || true
    unwrap "$WORK/wg.raw" > "$WORK/wg.txt"
    grep -Eq 'work-group-multiple: saxpy global=1049600 local=100, launched from launch \(examples/workgroup/workgroup.c:[0-9]+\)$' "$WORK/wg.txt"
    traced "$WORK/st" "$B/examples/transfers" > /dev/null
    "$B/cltrace-report" "$(trace_of "$WORK/st")" > "$WORK/st.raw" || true
    unwrap "$WORK/st.raw" > "$WORK/st.txt"
    grep -Eq 'small-transfers: host<->device transfers: 256 from main \(examples/transfers/transfers.c:[0-9]+\); 256 from main \(examples/transfers/transfers.c:[0-9]+\)$' "$WORK/st.txt"
    grep -Eq 'created by clCreateKernel at ex_kernel \(examples/common/example.h:[0-9]+\) <- step \(examples/leaks/leaks.c:[0-9]+\) <- main \(examples/leaks/leaks.c:[0-9]+\)$' "$WORK/il.txt" ||
        { grep leaks: "$WORK/il.txt"; false; }
}

t_long_names_cut_whole_in_stacks() {
    # a creation stack through a function named by 3,072 bytes of UTF-8: the
    # trace names it by its first 512 bytes or fewer, cut where a character
    # starts (a packet of 64 such frames fits the writer's buffer), and reads
    traced "$WORK/ln" "$T/long_names" > /dev/null
    $PY tests/tracedump.py "$(trace_of "$WORK/ln")" | $PY -c '
import json, sys
d = json.load(sys.stdin)     # tracedump decodes every name as UTF-8: a split character fails here
made = [s for s in d["slices"] if s["name"] == "clCreateBuffer" and s.get("stack")]
names = [f["function"] for s in made for f in s["stack"] if f and (f["function"] or "").startswith("a\u00e9a\u00e9")]
assert names, [f and f["function"][:40] for s in made for f in s["stack"]]
n = len(names[0].encode())
print("the long name kept as", n, "bytes")
assert 500 <= n <= 512 and names[0] == "a\u00e9" * (n // 3) + "a" * (n % 3 == 1), names[0][-8:]'
    lint "$(trace_of "$WORK/ln")"
}

t_break_on_error_only_under_a_debugger() {
    # without a debugger CLTRACE_BREAK changes nothing; under gdb the app
    # stops in the failing call, with the app's function on the stack
    CLTRACE_BREAK=all traced "$WORK/brk" "$T/lifetimes" errors > "$WORK/brk.out"
    "$T/lifetimes" errors | diff - "$WORK/brk.out"
    command -v gdb > /dev/null || { echo "gdb not installed"; return 77; }
    gdb -q -batch -ex "set environment LD_PRELOAD=$SHIM" -ex "set environment CLTRACE_BREAK=error" \
        -ex "set environment CLTRACE_QUIET=1" -ex "set environment CLTRACE_OUTPUT=$WORK/gdb.%p.pftrace" \
        -ex run -ex bt --args "$T/lifetimes" errors > "$WORK/gdb.out" 2>&1 || true
    if grep -q 'ptrace: Operation not permitted\|Could not trace the inferior' "$WORK/gdb.out"; then
        echo "gdb may not trace here (ptrace not permitted)"; return 77
    fi
    grep -q 'SIGTRAP' "$WORK/gdb.out"
    grep -q 'in errors ' "$WORK/gdb.out" || { cat "$WORK/gdb.out"; false; }
}

t_out_arrays_hold_what_the_driver_wrote() {
    # room for 8 platforms and 16 devices, filled with 0x5a.. and 0x5b..:
    # the trace holds the handles the driver said it wrote (num_platforms,
    # num_devices) and no object for the rest (each was one, numbered
    # differently from run to run as the app's memory was); so too where
    # the app passes NULL for the count (cltrace asks the driver for it),
    # and NULL for both still fails as untraced
    traced "$WORK/or" "$T/out_room" > "$WORK/or.out"
    cat "$WORK/or.out"
    $PY tests/tracedump.py "$(trace_of "$WORK/or")" | $PY -c '
import json, sys
t = {}
for s in sorted((s for s in json.load(sys.stdin)["slices"] if s.get("tid")), key=lambda s: s["ts"]):
    t.setdefault(s["name"], []).append(s["args"])
(p, p2, p3), (d, d2), c = t["clGetPlatformIDs"], t["clGetDeviceIDs"], t["clCreateContext"][0]
print(p["platforms"], d["devices"], p2["platforms"], d2["devices"], p3["result"], c["result"])
ok = len(p["platforms"]) == p["num_platforms"] and len(d["devices"]) == d["num_devices"]
ok = ok and p2["platforms"] == p["platforms"] and d2["devices"] == d["devices"]
ok = ok and p3["result"] == "CL_INVALID_VALUE"
sys.exit(0 if ok and c["result"] == p["num_platforms"] + d["num_devices"] + 1 else 1)'
    lint "$(trace_of "$WORK/or")"
}

t_object_churn_every_command_drawn() {
    # 300 rounds of queue + buffer + kernel made and released: more queues
    # than the writer keeps at once; every command still drawn
    CLTRACE_SAMPLE=all traced "$WORK/cn" "$T/churn" 300 > /dev/null   # every command timed
    $PY tests/checks.py churn "$(trace_of "$WORK/cn")" 300
    lint "$(trace_of "$WORK/cn")"
}

t_viewer_serves_once_on_loopback() {
    command -v curl > /dev/null || { echo "curl not installed"; return 77; }
    local tr=$WORK/v.pftrace.gz
    traced "$WORK/vt" "$T/vecadd" > /dev/null
    cp "$(trace_of "$WORK/vt")" "$tr"
    "$B/cltrace-view" --no-open --timeout 20 "$tr" > "$WORK/v.out" 2> "$WORK/v.err" &
    local pid=$!
    for _ in $(seq 50); do grep -q ':2329 00000000:0000 0A' /proc/net/tcp && break; sleep 0.1; done
    grep -q "^https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/v.pftrace.gz$" "$WORK/v.out" ||
        { cat "$WORK/v.out" "$WORK/v.err"; echo "no link printed (port 9001 taken? a trace processor serving there)"; return 1; }
    # listening on 127.0.0.1:9001 only
    grep -q ' 0100007F:2329 00000000:0000 0A' /proc/net/tcp
    ! grep -q ' 00000000:2329 00000000:0000 0A' /proc/net/tcp || return 1
    # the browser's preflight, a wrong path, then the trace itself
    curl -s -i -X OPTIONS -H 'Access-Control-Request-Private-Network: true' \
        http://127.0.0.1:9001/v.pftrace.gz | tr -d '\r' > "$WORK/v.opt"
    grep -q '^HTTP/1.1 204' "$WORK/v.opt"
    grep -q '^Access-Control-Allow-Origin: https://ui.perfetto.dev$' "$WORK/v.opt"
    grep -q '^Access-Control-Allow-Private-Network: true$' "$WORK/v.opt"
    [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:9001/other)" = 404 ]
    curl -s -D "$WORK/v.hdr" -o "$WORK/v.got" http://127.0.0.1:9001/v.pftrace.gz
    grep -q '^Access-Control-Allow-Origin: https://ui.perfetto.dev' "$WORK/v.hdr"
    cmp "$WORK/v.got" "$tr"
    # it stops by itself once the trace was fetched...
    for _ in $(seq 30); do kill -0 $pid 2> /dev/null || break; sleep 0.1; done
    ! kill -0 $pid 2> /dev/null || return 1
    wait $pid
    # ...or after its timeout, saying so
    local rc=0
    timeout 10 "$B/cltrace-view" --no-open --timeout 1 "$tr" > /dev/null 2> "$WORK/v2.err" || rc=$?
    [ $rc -eq 1 ]
    grep -q 'nobody fetched' "$WORK/v2.err"
}

report_json() {   # report_json TRACE... -> JSON on stdout (exit status ignored)
    "$B/cltrace-report" --format json "$@" || true
}

t_report_findings_and_summaries() {
    traced "$WORK/rt" "$T/timeline" /dev/null > /dev/null
    report_json "$(trace_of "$WORK/rt")" > "$WORK/rt.json"
    $PY - "$WORK/rt.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
api = {a["name"]: a for a in r["api"]}
assert api["clEnqueueNDRangeKernel"]["count"] == 6, api["clEnqueueNDRangeKernel"]
assert api["clGetEventProfilingInfo"]["errors"] == 1
k = {(x["name"], x["local_null"]): x for x in r["kernels"]}
assert k[("scale", True)]["launches"] == 1 and k[("scale", False)]["launches"] == 4, k
rules = [(f["rule"], f["severity"]) for f in r["findings"]]
assert ("api-errors", "error") in rules and ("work-group-multiple", "warning") in rules, rules
assert not [f for f in r["findings"] if f["rule"] == "small-transfers"], rules
# one 256 KiB write, three 4 KiB writes, the 4 KiB unmap of a write-mapped buffer
assert r["transfers"]["host_to_device"]["bytes"] == 4 * 65536 + 3 * 4096 + 4096, r["transfers"]
assert r["transfers"]["host_to_device"]["count"] == 5
PY
    # many small transfers; a launch of one work-group on a 2-CU device
    traced "$WORK/rc" "$T/churn" 100 > /dev/null
    traced "$WORK/ru" "$T/vecadd" 64 1 > /dev/null
    report_json "$(trace_of "$WORK/rc")" > "$WORK/rc.json"
    report_json "$(trace_of "$WORK/ru")" > "$WORK/ru.json"
    $PY - "$WORK/rc.json" "$WORK/ru.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
small = [f for f in c["findings"] if f["rule"] == "small-transfers"]
assert small and small[0]["numbers"].startswith("200 transfers below 32768 bytes"), c["findings"]
u = json.load(open(sys.argv[2]))
under = [f for f in u["findings"] if f["rule"] == "under-filled-device"]
assert under and "1 work-groups for 2 compute units" in under[0]["numbers"], u["findings"]
PY
    # Markdown for a CI step summary; JUnit: each rule a test case
    "$B/cltrace-report" --format markdown "$(trace_of "$WORK/rt")" > "$WORK/rt.md"
    grep -q '^| severity | rule | estimated gain | where |$' "$WORK/rt.md"
    grep -q '^| \*\*error\*\* | `api-errors` | - | clGetEventProfilingInfo, called from main (tests/apps/timeline.c:[0-9]*) |' \
        "$WORK/rt.md"
    grep -q '^<details><summary><b>error</b> <code>api-errors</code>: clGetEventProfilingInfo, called from main (tests/apps/timeline.c:[0-9]*)</summary>$' \
        "$WORK/rt.md"
    "$B/cltrace-report" --format junit "$(trace_of "$WORK/rt")" > "$WORK/rt.xml"
    $PY - "$WORK/rt.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
cases = {c.get("name"): c for c in s.findall("testcase")}
assert s.get("tests") == str(len(cases)) == "19" and s.get("failures") == "2", s.attrib     # a case per rule
assert cases["api-errors"].find("failure") is not None and cases["work-group-multiple"].find("failure") is not None
assert cases["small-transfers"].find("failure") is None
PY
    # exit status: findings at or over --fail-on give 1
    "$B/cltrace-report" --fail-on error "$(trace_of "$WORK/rc")" > /dev/null
    local rc=0
    "$B/cltrace-report" --fail-on warning "$(trace_of "$WORK/rc")" > /dev/null || rc=$?
    [ $rc -eq 1 ]
}

t_report_nvidia_fixture() {
    # a trace recorded on an H200 (tests/fixtures): warp 32, registers known,
    # full occupancy (no occupancy finding), the NULL local size found
    report_json tests/fixtures/h200-timeline.pftrace.gz > "$WORK/nv.json"
    $PY - "$WORK/nv.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rules = [f["rule"] for f in r["findings"]]
assert "work-group-multiple" in rules and "occupancy" not in rules, r["findings"]
assert {k["name"] for k in r["kernels"]} == {"scale", "sum_local"}
PY
}

t_html_report_renders_and_escapes() {
    # one self-contained page: charts drawn (pixels of each chart's colour in
    # a headless-Chromium screenshot), no console errors, and trace text that
    # is HTML (a kernel named <script>...) shown as text, never as markup
    $PY tests/html_check.py hostile "$WORK/hostile.pftrace"
    "$B/cltrace-report" --format html -o "$WORK/hostile.html" "$WORK/hostile.pftrace" || [ $? -eq 1 ]
    traced "$WORK/ht" "$T/timeline" /dev/null > /dev/null
    "$B/cltrace-report" --format html -o "$WORK/pocl.html" "$(trace_of "$WORK/ht")" || [ $? -eq 1 ]
    "$B/cltrace-report" --format html -o "$WORK/h200.html" tests/fixtures/h200-timeline.pftrace.gz || [ $? -eq 1 ]
    grep -q 'id=chart-occupancy' "$WORK/h200.html" && grep -q '100%, limited by' "$WORK/h200.html"
    command -v chromium > /dev/null || { echo "chromium not installed: rendering not checked"; return 77; }
    (cd tests && for f in hostile pocl; do $PY html_check.py check "$WORK/$f.html" "$WORK" || exit 1; done &&
        $PY html_check.py check "$WORK/h200.html" "$WORK" kernels,transfers,threshold,occupancy)
}

t_examples_problem_and_fix() {
    # every example of examples/: the report finds its rules on the problem
    # version and none on the fix; same results; traces lint clean
    EXAMPLES_OUT="$WORK/examples" bash scripts/check-examples.sh \
        $(sed -n 's/^EXAMPLES := //p' Makefile)
}

t_report_asan_every_format() {
    # the reporter under ASan/UBSan: every format, diff, on real, crash-cut,
    # hostile and NVIDIA traces
    local r=$T/cltrace-report-asan f fmt
    $PY tests/html_check.py hostile "$WORK/ra.pftrace"
    traced "$WORK/rl" "$T/lifetimes" leak > /dev/null
    for f in tests/fixtures/*.pftrace.gz "$WORK/ra.pftrace" "$(trace_of "$WORK/rl")"; do
        for fmt in text json markdown junit html; do
            "$r" --format $fmt -o "$WORK/ra.out" "$f" || [ $? -eq 1 ]
            [ -s "$WORK/ra.out" ]
        done
    done
    head -c 3000 "$(trace_of "$WORK/rl")" > "$WORK/cut.pftrace.gz"
    "$r" "$WORK/cut.pftrace.gz" > /dev/null 2>&1 || [ $? -le 2 ]
    "$r" diff tests/fixtures/pocl-leaks.pftrace.gz tests/fixtures/h200-timeline.pftrace.gz > /dev/null || [ $? -eq 1 ]
}

t_report_rule_vectors() {
    # synthetic traces for the rules the PoCL programs cannot pin down
    # (low bandwidth, small groups, serialization, idle device, build options,
    # dropped calls, halting idle CPUs): each makes exactly its finding, numbers included
    (cd tests && $PY rule_vectors.py "$B/cltrace-report" "$WORK")
}

t_report_diff_gates_on_regressions() {
    # the same kernel 100 us -> 150 us: a regression (exit 1); -> 105 us: under
    # the 10 % threshold (exit 0); a trace against itself: nothing new
    $PY tests/html_check.py hostile "$WORK/d100.pftrace" 100000
    $PY tests/html_check.py hostile "$WORK/d150.pftrace" 150000
    $PY tests/html_check.py hostile "$WORK/d105.pftrace" 105000
    local rc=0
    "$B/cltrace-report" diff "$WORK/d100.pftrace" "$WORK/d150.pftrace" > "$WORK/d.txt" || rc=$?
    [ $rc -eq 1 ]
    grep -q 'REGRESSION' "$WORK/d.txt"
    grep -q '+50.0%' "$WORK/d.txt"
    "$B/cltrace-report" diff "$WORK/d100.pftrace" "$WORK/d105.pftrace" > "$WORK/d.txt"
    ! grep -q 'REGRESSION' "$WORK/d.txt" || return 1
    "$B/cltrace-report" diff --threshold 3 "$WORK/d100.pftrace" "$WORK/d105.pftrace" > /dev/null || rc=$?
    [ $rc -eq 1 ]
    "$B/cltrace-report" diff --format json "$WORK/d100.pftrace" "$WORK/d100.pftrace" > "$WORK/d.json"
    $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); assert not d["new_findings"] and not d["regression"], d' \
        "$WORK/d.json"
    # a finding the new trace has and the base has not: listed, gates with --fail-on
    traced "$WORK/dt" "$T/churn" 100 > /dev/null
    traced "$WORK/du" "$T/churn" 2 > /dev/null
    rc=0
    "$B/cltrace-report" diff --fail-on warning "$(trace_of "$WORK/du")" "$(trace_of "$WORK/dt")" > "$WORK/d.txt" || rc=$?
    [ $rc -eq 1 ]
    grep -q 'small-transfers' "$WORK/d.txt"
    rc=0
    "$B/cltrace-report" diff "$WORK/d100.pftrace" README.md 2> /dev/null || rc=$?
    [ $rc -eq 2 ]
}

t_report_bad_input() {
    # a crash-cut raw trace reports what it holds, with a warning
    [ "$(exits segv 50 "$WORK/rx")" -eq 139 ]
    "$B/cltrace-report" "$(trace_of "$WORK/rx")" > "$WORK/rx.out" 2> "$WORK/rx.err"
    grep -q 'clGetPlatformInfo *50' "$WORK/rx.out"
    grep -q 'cut short' "$WORK/rx.err"
    # not a trace: a clear error, status 2
    local rc=0
    "$B/cltrace-report" README.md > /dev/null 2> "$WORK/rn.err" || rc=$?
    [ $rc -eq 2 ]
    grep -q 'not a Perfetto trace' "$WORK/rn.err"
    rc=0
    "$B/cltrace-report" /no/such.pftrace > /dev/null 2>&1 || rc=$?
    [ $rc -eq 2 ]
}

t_fuzz_reader_bounded() {
    # the trace reader under libFuzzer + ASan/UBSan for a few seconds
    command -v clang > /dev/null || { echo "clang not installed"; return 77; }
    echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
        clang -fsanitize=fuzzer -x c - -o "$WORK/fuzz-probe" 2> /dev/null ||
        { echo "libFuzzer runtime not installed (libclang-rt-*-dev)"; return 77; }
    make -s fuzz FUZZ_SECONDS=10 > "$WORK/fuzz.log" 2>&1 || { tail -30 "$WORK/fuzz.log"; return 1; }
    grep -q '^Done [0-9]* runs' "$WORK/fuzz.log"
}

t_real_clients_unchanged() {
    # clinfo, clpeak, pyopencl, an Oclgrind program, hashcat: same output
    # and status with and without the tracer, and traced
    bash tests/clients.sh
}

t_asan_ubsan_vecadd() {
    local rt
    rt=$(${CC:-cc} -print-file-name=libasan.so)
    [ -f "$rt" ] || { echo "no libasan"; return 77; }
    "$T/vecadd" > "$WORK/a.plain"
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=66 CLTRACE_OUTPUT="$WORK/as.%p.pftrace" \
        LD_PRELOAD="$rt:$B/asan/libcltrace.so" "$T/vecadd" > "$WORK/a.traced"
    cmp "$WORK/a.plain" "$WORK/a.traced"
    $PY tests/checks.py vecadd "$(trace_of "$WORK/as")"
}

t_asan_ubsan_untimed_commands_on_reused_queues() {
    # 300 queues made and released one after another (the writer reuses
    # their slots), each with its commands left untimed but the first two
    # of each kind: every one drawn, under ASan and UBSan. A queue released
    # with none of its timed commands in flight once lost its untimed ones
    # (843 of 900 counted, 36 drawn: its slot went to the next queue), and
    # an empty queue's first untimed command passed memmove a NULL.
    local rt
    rt=$(${CC:-cc} -print-file-name=libasan.so)
    [ -f "$rt" ] || { echo "no libasan"; return 77; }
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=66 CLTRACE_SAMPLE=2,1000 CLTRACE_QUIET=1 \
        CLTRACE_OUTPUT="$WORK/uq.%p.pftrace" LD_PRELOAD="$rt:$B/asan/libcltrace.so" "$T/churn" 300 > /dev/null
    $PY tests/tracedump.py --attributes "$(trace_of "$WORK/uq")" > "$WORK/uq.attrs"
    $PY - "$WORK/uq.attrs" <<'PYEOF'
import json, sys
line = next(l for l in open(sys.argv[1]) if '"cltrace.commands_estimated"' in l)
a = json.loads(line[line.index("{"):])
timed, est = a["cltrace.device_commands"], a["cltrace.commands_estimated"]
print("timed", timed, "estimated", est)
assert timed + est == 900, "300 rounds of write, launch, read: every command drawn"
assert est >= 580, "the transfers but the first of each size untimed, drawn estimated"
PYEOF
    # each on its own queue's track, named by that queue (it was 0: drawn after its slot was freed)
    $PY tests/tracedump.py "$(trace_of "$WORK/uq")" | $PY -c '
import json, sys
d = json.load(sys.stdin)
est = [s for s in d["slices"] if s["name"].endswith("(estimated)")]
queues = {s["args"]["queue"] for s in est}
assert est and 0 not in queues and len(queues) >= 250, sorted(queues)[:5]
print(len(est), "estimated slices on", len(queues), "queues")'
    lint "$(trace_of "$WORK/uq")"
}

t_unwritable_output_warns_once() {
    "$T/vecadd" > "$WORK/u.plain"
    CLTRACE_OUTPUT=/nonexistent-dir/x.pftrace LD_PRELOAD=$SHIM "$T/vecadd" > "$WORK/u.out" 2> "$WORK/u.err"
    cmp "$WORK/u.plain" "$WORK/u.out"
    cat "$WORK/u.err"
    [ "$(grep -c '^cltrace:' "$WORK/u.err")" -eq 1 ]
    grep -q 'cannot create.*running untraced' "$WORK/u.err"
}

t_never_follows_symlink() {
    mkdir "$WORK/sl"
    # bash's $$ is the pid the app will have after exec
    CLTRACE_OUTPUT="$WORK/sl/t.pftrace" LD_PRELOAD=$SHIM CLTRACE_QUIET=1 bash -c \
        'ln -s "$0/victim" "$0/sl/t.$$.pftrace.gz"; exec "$1" > /dev/null' "$WORK" "$T/vecadd"
    [ ! -e "$WORK/victim" ]
    ls "$WORK/sl"
    [ -s "$(ls "$WORK"/sl/t.*-1.pftrace.gz)" ]
}

t_launcher() {
    "$B/cltrace" --help | grep -q CLTRACE_OUTPUT
    "$B/cltrace" --help | grep -q CLTRACE_BUFFER_KB
    "$T/vecadd" > "$WORK/la.plain"
    "$B/cltrace" -o "$WORK/la.pftrace" -- "$T/vecadd" > "$WORK/la.out" 2> "$WORK/la.err"
    cmp "$WORK/la.plain" "$WORK/la.out"
    cat "$WORK/la.err"
    local path
    path=$(sed -n 's/^cltrace: trace written to //p' "$WORK/la.err")
    [ -s "$path" ]
    set +e
    "$B/cltrace" -q -- sh -c 'exit 3'; local rc=$?
    "$B/cltrace" -q -- sh -c 'kill -TERM $$'; local rc2=$?
    "$B/cltrace" -q -- /no/such/program 2>/dev/null; local rc3=$?
    set -e
    [ $rc -eq 3 ] && [ $rc2 -eq 143 ] && [ $rc3 -eq 127 ]
}

t_disabled_writes_nothing() {
    mkdir "$WORK/off"
    CLTRACE_DISABLE=1 CLTRACE_OUTPUT="$WORK/off" LD_PRELOAD=$SHIM "$T/vecadd" > /dev/null
    [ -z "$(ls -A "$WORK/off")" ]
}

t_no_opencl_no_file() {
    mkdir "$WORK/none"
    (cd "$WORK/none" && LD_PRELOAD=$SHIM true && ls /dev/null > /dev/null)
    [ -z "$(ls -A "$WORK/none")" ]
}

source tests/loading.sh
source tests/tools.sh
source tests/capacity.sh
source tests/jobs.sh
source tests/report_parts.sh
source tests/fingerprints.sh
source tests/replay.sh
source tests/windows.sh
source tests/first_screen.sh
source tests/arm64.sh
source tests/python.sh
source tests/try.sh
source tests/reuse.sh
source tests/cpusamples.sh

# Tests that judge time or load: alone, after the others.
ALONE=" try_examples_fixes_measured_as_the_fixed_examples launch_loop_budget_by_default ctl_answers_under_load clock_kept_fresh_while_commands_run teardown_check_runs_each_condition
  selfcost_check_adds_pairs_only_within_noise stalled_disk_never_hangs_the_app
  gpu_measuring_programs_build_and_check_on_pocl threads_8x1M_defaults_lossless threads_8x250k_tsan_lossless
  mpi_wait_with_idle_device_found_and_fixed mpi_two_hosts_one_timeline tune_workgroup_picks_a_preferred_multiple
  findings_estimate_gains cpu_samples_cost_counted_on_the_cpu "
# hashcat refuses a second instance of itself
HASHCAT="runtime_loaded_hashcat_mask_attack real_clients_unchanged"
JOBS=${TEST_JOBS:-3}
# the independent checker compiles its schema on its first run: once, here
if [ -x "$LINT" ]; then "$LINT" -q tests/fixtures/pocl-leaks.pftrace.gz > /dev/null 2>&1 || true; fi
ALONE=" $(echo $ALONE) "
all=$(for t in ${ONLY:-$(declare -F | awk "{print \$3}" | grep "^t_")}; do echo "${t#t_}"; done)
# The longest of those run side by side start first (the six over ~30 s in
# a clean clone, 2026-11-30): started in name order, real_clients_unchanged
# once came late and hashcat's test then waited for its lock, the last two
# minutes on one slot of three.
LONG=" real_clients_unchanged arm64_builds_shim_launcher_report_replay cpu_samples_under_sanitizers
  fuzz_reader_bounded capture_replay_examples_and_vecadd cpu_samples_leave_the_program_as_it_was "
LONG=" $(echo $LONG) "
together=() alone=() rest=()
for n in $all; do
    case "$ALONE" in *" $n "*) alone+=("$n"); continue ;; esac
    case "$LONG" in *" $n "*) together+=("$n") ;; *) rest+=("$n") ;; esac
done
together+=("${rest[@]}")
started=0 shown=0
order=($all)
show_done() {   # the finished tests at the head of the name order, in that order
    while [ $shown -lt ${#order[@]} ] && [ -f "$RES/${order[$shown]}.rc" ]; do
        report "${order[$shown]}"
        shown=$((shown + 1))
    done
}
for n in "${together[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
        wait -n 2> /dev/null || true
        show_done
    done
    run "$n" "t_$n" &
done
wait
show_done
for n in "${alone[@]}"; do
    run "$n" "t_$n"
    show_done
done
show_done
echo
echo "the ten slowest:"
sort -rn "$RES/times" | head -n 10 | awk '{ printf "  %7.1f s  %s\n", $1 / 1000, $2 }'
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
