# A driver that hands a released handle out again, and a fork after
# estimated launches (sourced by tests/run.sh): the stand-in ICD
# (tests/apps/standin_icd.c, STANDIN_REUSE=1) under the ocl-icd loader,
# tests/apps/reuse_handles.c as the app. Each failed on the main of
# 2026-11-28 (before the fixes it checks).

standin() {   # standin VAR=VALUE... CMD...: CMD on the stand-in ICD alone
    mkdir -p "$WORK/icd"
    echo "$T/libstandin.so" > "$WORK/icd/standin.icd"
    env OCL_ICD_VENDORS="$WORK/icd" STANDIN_REUSE=1 "$@"
}

t_override_local_follows_a_reused_kernel_handle() {
    # --local a=8: kernel a launched with 8; kernel b, given a's released
    # handle, launched with the app's NULL (a name kept by handle gave b
    # a's local size)
    standin STANDIN_LAUNCHES="$WORK/launches" "$B/cltrace" -q -o "$WORK/k/" --local a=8 -- \
        "$T/reuse_handles" kernels > "$WORK/k.out"
    grep -q "^handle reused$" "$WORK/k.out" || { echo "the stand-in did not reuse the handle"; return 1; }
    cat "$WORK/launches"
    [ "$(cat "$WORK/launches")" = "$(printf 'a 8 1 1\nb NULL')" ]
}

t_decoded_arguments_follow_a_reused_queue_handle() {
    # a kernel launched 3 times on a queue, the queue released and another
    # given its handle, the kernel launched there alike: the same records
    # but for the queue behind the handle (the writer reuses an enqueue's
    # decoded arguments while no object is made or let go)
    standin STANDIN_REUSE=2 LD_PRELOAD="$B/libcltrace.so" CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/la.%p.pftrace" \
        "$T/reuse_handles" launches > "$WORK/la.out"
    grep -q "^handle reused$" "$WORK/la.out" || { echo "the stand-in did not reuse the handle"; return 1; }
    $PY tests/tracedump.py "$(trace_of "$WORK/la")" | $PY -c '
import json, sys
t = json.load(sys.stdin)
queue, seen = None, []
for s in sorted((s for s in t["slices"] if s.get("tid")), key=lambda s: s["ts"]):
    if s["name"] == "clCreateCommandQueue":
        queue = s["args"]["result"]
    elif s["name"] == "clEnqueueNDRangeKernel":
        seen.append((s["args"]["command_queue"], queue))
print(seen)
sys.exit(0 if len(seen) == 6 and all(a == b for a, b in seen) and seen[0][0] != seen[-1][0] else 1)'
}

t_override_program_held_while_its_handle_is_reused() {
    # --programs: a program built on one thread, let go of by the app during
    # the build; once the build has returned, while cltrace still asks the
    # driver about it, another thread's new program gets its handle. Under
    # ASan: no use of freed memory (the first program's record was freed
    # under the build's feet), the app's output and status as untraced
    local rt; rt=$(${CC:-cc} -print-file-name=libasan.so)
    standin STANDIN_BUILD_MS=200 "$T/reuse_handles" programs > "$WORK/p.plain"
    grep -q "^handle reused$" "$WORK/p.plain" || { echo "the stand-in did not reuse the handle"; return 1; }
    local rc=0
    standin STANDIN_BUILD_MS=200 CLTRACE_PROGRAMS="$WORK/progs" CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/p.%p.pftrace" \
        ASAN_OPTIONS=detect_leaks=0:exitcode=66 LD_PRELOAD="$rt:$B/asan/libcltrace.so" "$T/reuse_handles" programs \
        > "$WORK/p.out" 2> "$WORK/p.err" || rc=$?
    tail -n 20 "$WORK/p.err"
    [ $rc -eq 0 ] && cmp "$WORK/p.plain" "$WORK/p.out"
}

t_estimates_after_fork_are_the_childs_own() {
    # 60 launches of a 2 ms kernel, then a fork: the child's 60 launches
    # of a 2 us kernel (the same object ids) are estimated from its own
    # timed ones, not from its parent's (within 3x of its timed mean)
    standin CLTRACE_SAMPLE=2,10 "$B/cltrace" -q -o "$WORK/f/" -- "$T/reuse_handles" fork
    $PY - "$WORK"/f/*.pftrace* <<'PY'
import json, subprocess, sys
for path in sys.argv[1:]:
    d = json.loads(subprocess.run([sys.executable, "tests/tracedump.py", path], capture_output=True, text=True).stdout)
    by = {}
    for s in d["slices"]:
        if s["name"].startswith(("slowk", "quick")):
            by.setdefault(s["name"], []).append(s["dur"])
    if "quick" not in by:
        continue
    timed, est = by["quick"], by.get("quick (estimated)", [])
    mean = lambda v: sum(v) / len(v)
    print("child: %d timed, mean %.0f ns; %d estimated, mean %.0f ns" % (len(timed), mean(timed), len(est), mean(est)))
    assert est and mean(est) < 3 * mean(timed), "the child's launches sized from its parent's kernel"
    sys.exit(0)
sys.exit("no child trace with quick's launches")
PY
}
