# Programs out, overrides in, and cltrace try (sourced by tests/run.sh):
# cltrace --programs, --override, --options, --local; cltrace try on the
# examples' fixes, on its refusals, through pyopencl, on a program from a
# binary. The apps: tests/apps/override_app.c, tests/apps/pytry.py.

try_json() {   # try_json OUT ARGS...: cltrace try --format json, its exit status in OUT.rc
    local out=$1; shift
    local rc=0
    "$B/cltrace" try --format json "$@" > "$out" 2> "$out.err" || rc=$?
    echo $rc > "$out.rc"
}

t_programs_out_and_overrides_transparent() {
    # --programs writes each program (source, and one from a binary) with the
    # app's options and prints where; the trace names each program's file;
    # --override with the programs' own files: the app's output, error codes,
    # kernel names, options and argument info as untraced, every override in
    # the report's first lines and the JSON summary, the trace lints clean
    local d=$WORK/progs
    "$T/override_app" > "$WORK/oa.plain"
    "$B/cltrace" -o "$WORK/oa-out/" --programs "$d" -- "$T/override_app" > "$WORK/oa.out" 2> "$WORK/oa.err"
    diff "$WORK/oa.plain" "$WORK/oa.out"
    grep -q "cltrace: program scale written to $d/scale-[0-9a-f]\{16\}.cl (kernels: scale shift)" "$WORK/oa.err"
    ls "$d"/scale-*.cl "$d"/twice-*.cl "$d"/twice-*.bin > /dev/null
    [ "$(cat "$d"/scale-*.options)" = "-cl-mad-enable" ]
    grep -q "^scale-[0-9a-f]*.cl	kernels: scale shift	options: -cl-mad-enable$" "$d/programs.txt"
    [ -s "$(ls "$d"/twice-*.bin)" ]   # a binary, not empty
    local t; t=$(ls "$WORK"/oa-out/*.pftrace*)
    lint "$t"
    "$B/cltrace-report" --format json "$t" | $PY -c '
import json, sys, os
r = json.load(sys.stdin)
files = sorted(p["file"] for p in r["programs"])
want = sorted(os.listdir(sys.argv[1]))
assert all(f in want for f in files) and len(files) == 3, (files, want)
assert r["summary"]["overrides"] == [], r["summary"]["overrides"]' "$d"
    "$B/cltrace" -o "$WORK/ov-out/" --override "$d" -- "$T/override_app" > "$WORK/ov.out" 2> "$WORK/ov.err"
    diff "$WORK/oa.plain" "$WORK/ov.out"
    t=$(ls "$WORK"/ov-out/*.pftrace*)
    lint "$t"
    "$B/cltrace-report" "$t" > "$WORK/ov.txt" || true
    unwrap "$WORK/ov.txt" | sed -n 3p | grep -q "^override: program [0-9a-f]* created from $d/scale-" ||
        { head -5 "$WORK/ov.txt"; return 1; }
    [ "$(unwrap "$WORK/ov.txt" | grep -c "^override: program .* instead of the app's \(source\|binary\)")" -eq 3 ]
    "$B/cltrace-report" --format json "$t" | $PY -c '
import json, sys
o = json.load(sys.stdin)["summary"]["overrides"]
assert [x["what"] for x in o] == ["source"] * 3 and sum("binary" in x["text"] for x in o) == 1, o'
}

t_override_options_and_local_in_the_trace() {
    # --options adds to a program's options (the app reads its own back),
    # --local sets a kernel's local size on its NULL launches: the answer
    # unchanged, each said in the report; a bad spelling is refused
    "$B/cltrace" -q -o "$WORK/opt-out/" --options 'scale=+-cl-fast-relaxed-math' --local 'shift=64' \
        -- "$T/override_app" > "$WORK/opt.out"
    diff <("$T/override_app") "$WORK/opt.out"
    "$B/cltrace-report" "$(ls "$WORK"/opt-out/*.pftrace*)" > "$WORK/opt.txt" || true
    unwrap "$WORK/opt.txt" | grep -q "^override: build options '-cl-mad-enable -cl-fast-relaxed-math' instead of '-cl-mad-enable' (--options scale=+-cl-fast-relaxed-math)"
    unwrap "$WORK/opt.txt" | grep -q "^override: shift launched with local size 64 instead of NULL (--local shift)"
    "$B/cltrace" -o "$WORK/opt2-out/" --local 'shift=0' -- "$T/override_app" > /dev/null 2> "$WORK/opt2.err"
    grep -q "cltrace: --local shift=0: sizes are whole numbers from 1" "$WORK/opt2.err"
}

t_try_refuses_what_it_cannot_try() {
    # exit 2 with a clear line, no verdict: an override that does not build
    # (its build log shown), one that matches nothing, a local size that
    # does not divide the global size (OpenCL 1.x, or no non-uniform groups),
    # one over the kernel's maximum, an unreadable file; exit 1 for an edit
    # that changes the answer, naming the kernel and the launch
    local n=$B/examples/nbody rc
    sed 's/float inv = rsqrt(d);/float inv = rsqrt(d) oops;/' examples/nbody/fix.cl > "$WORK/bad.cl"
    try_json "$WORK/tb.json" --runs 1 --warmup 0 --override "$WORK/bad.cl" -- "$n"
    [ "$(cat "$WORK/tb.json.rc")" = 2 ]
    $PY - "$WORK/tb.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"]["exit"] == 2 and "did not build (error -11)" in r["could_not"] and "build log" in r["could_not"], r["could_not"]
assert r["kernels"] == [] and r["verdict"]["time"] == "", r
PYEOF
    sed 's/kernel void nbody_naive/kernel void nbody_other/' examples/nbody/fix.cl > "$WORK/none.cl"
    rc=0; "$B/cltrace" try --runs 1 --warmup 0 --override "$WORK/none.cl" -- "$n" > "$WORK/tn.txt" || rc=$?
    [ "$rc" -eq 2 ]
    head -1 "$WORK/tn.txt" | grep -q "^cltrace try: could not try: the change matched nothing"
    grep -q "matched none of the programs the app created" "$WORK/tn.txt"
    rc=0; "$B/cltrace" try --runs 1 --warmup 0 --local nbody_naive=100 -- "$n" > "$WORK/tl.txt" || rc=$?; [ "$rc" -eq 2 ]
    grep -q "100 does not divide the global size 4096" "$WORK/tl.txt"
    rc=0; "$B/cltrace" try --runs 1 --warmup 0 --local nbody_naive=1000000 -- "$n" > "$WORK/tm.txt" || rc=$?; [ "$rc" -eq 2 ]
    grep -q "1000000 work-items in a group, over the kernel's maximum" "$WORK/tm.txt"
    rc=0; "$B/cltrace" try --override "$WORK/missing.cl" -- "$n" 2> "$WORK/tf.err" || rc=$?; [ "$rc" -eq 2 ]
    grep -q "missing.cl: No such file" "$WORK/tf.err"
    sed 's/acc += (tile\[j\].w/acc += 1.01f * (tile[j].w/' examples/nbody/fix.cl > "$WORK/wrong.cl"
    rc=0; "$B/cltrace" try --runs 1 --warmup 0 --override "$WORK/wrong.cl" -- "$n" > "$WORK/tw.txt" || rc=$?; [ "$rc" -eq 1 ]
    head -1 "$WORK/tw.txt" | grep -q "a different answer"
    grep -q "^diverged at kernel \`nbody_naive\` launch 1 " "$WORK/tw.txt"
    "$B/cltrace" try --runs 1 --warmup 0 --format markdown --override "$WORK/wrong.cl" -- "$n" > "$WORK/tw.md" || true
    head -1 "$WORK/tw.md" | grep -q "^### cltrace try: .*a different answer"
}

t_try_fork_failing_is_never_a_verdict() {
    # cltrace try's forks fail (tests/apps/failfork.c, preloaded into
    # cltrace-try itself: the launcher runs it without LD_PRELOAD): at its
    # first run, it could not try (exit 2); after its runs, an edit that
    # changes the answer is still a different answer (exit 1), never "the
    # same answer" (a failed fork once left a child's status unread and the
    # verdict "identical")
    local n=$B/examples/nbody rc=0
    sed 's/acc += (tile\[j\].w/acc += 1.01f * (tile[j].w/' examples/nbody/fix.cl > "$WORK/wrong.cl"
    FAIL_FORK_AFTER=0 LD_PRELOAD=$T/libfailfork.so "$B/cltrace-try" --runs 1 --warmup 0 --override "$WORK/wrong.cl" \
        -- "$n" > "$WORK/f0.txt" 2>&1 || rc=$?
    head -1 "$WORK/f0.txt"
    [ $rc -eq 2 ]
    head -1 "$WORK/f0.txt" | grep -q "could not try"
    rc=0
    FAIL_FORK_AFTER=2 LD_PRELOAD=$T/libfailfork.so "$B/cltrace-try" --runs 1 --warmup 0 --override "$WORK/wrong.cl" \
        -- "$n" > "$WORK/f2.txt" 2>&1 || rc=$?
    head -1 "$WORK/f2.txt"
    [ $rc -eq 1 ]
    head -1 "$WORK/f2.txt" | grep -q "a different answer"
}

t_try_examples_fixes_measured_as_the_fixed_examples() {
    # each example whose fix is in its kernels or its launch size, tried with
    # that fix (same kernel names and arguments, or --local): the same answer
    # (copy's fix copies other words: a different answer, exit 1, the kernel
    # and launch named), and try's before and after within the spread of the
    # problem and fixed examples measured the same way (traced with the same
    # fingerprints, interleaved, the kernel's device time)
    local x args k0 k1 fails=0 tried=0
    while IFS=: read -r x k0 k1 args <&3; do   # fd 3: the programs keep stdin
        tried=$((tried + 1))
        # shellcheck disable=SC2086   # the change's flags, split on purpose
        try_json "$WORK/try-$x.json" --runs 5 --keep "$WORK/try-$x" $args -- "$B/examples/$x"
        for i in 1 2 3 4 5; do
            for v in "" --fixed; do
                # as try measures: the same fingerprints (its kernels, what is read back)
                CLTRACE_QUIET=1 CLTRACE_FINGERPRINT="$k0,$k1,clEnqueueReadBuffer" "$B/cltrace" -o "$WORK/ex-$x$v-$i/" \
                    -- "$B/examples/$x" $v > /dev/null
            done
        done
        $PY - "$WORK" "$x" "$k0" "$k1" "$(cat "$WORK/try-$x.json.rc")" "$B/cltrace-report" <<'PYEOF' || fails=$((fails + 1))
import glob, json, subprocess, sys
work, x, k0, k1, rc, report = sys.argv[1:7]
r = json.load(open("%s/try-%s.json" % (work, x)))
if x == "copy":
    assert r["results"]["status"] == "diverge" and rc == "1", (rc, r["results"])
    assert r["results"]["detail"].startswith("diverged at kernel `strideCopy` launch 1 "), r["results"]
else:
    assert r["results"]["status"] == "identical", r["results"]
assert rc in ("0", "1") and r["verdict"]["exit"] == int(rc), (rc, r["verdict"])
def kernel_ns(trace, name):
    j = json.loads(subprocess.run([report, "--format", "json", trace], capture_output=True, text=True).stdout)
    return sum(k["device_ns"] for k in j["kernels"] if k["name"] == name)
def ex(v, k):
    return sorted(kernel_ns(glob.glob("%s/ex-%s%s-%d/*.pftrace*" % (work, x, v, i))[0], k) for i in range(1, 6))
prob, fixd = ex("", k0), ex("--fixed", k1)
prob, fixd = [prob[0], prob[2], prob[4]], [fixd[0], fixd[2], fixd[4]]   # min, median, max
t = [k for k in r["kernels"] if k["name"] == k0][0]
before, after = t["before"], t["after"]
# try's runs as it is overlap the problem example's (its range widened by
# 25 %, a 2-core machine's noise), and its runs with the change the fixed
# example's (the same code: the fix's body under the problem's name)
def overlap(t, ex):
    return t["min_ns"] <= ex[2] * 1.25 and t["max_ns"] >= ex[0] / 1.25
ok = overlap(before, prob) and overlap(after, fixd)
print("%-9s try %-16s before %.3f .. %.3f ms (problem %.3f .. %.3f), after %.3f .. %.3f ms (fixed %.3f .. %.3f): %s"
      % (x, k0, before["min_ns"] / 1e6, before["max_ns"] / 1e6, prob[0] / 1e6, prob[2] / 1e6, after["min_ns"] / 1e6,
         after["max_ns"] / 1e6, fixd[0] / 1e6, fixd[2] / 1e6, "ok" if ok else "OUTSIDE"))
assert ok
PYEOF
    done 3< <(grep -v '^#' examples/fixes.txt)
    [ "$tried" -eq "$(grep -cv '^#' examples/fixes.txt)" ] && [ "$tried" -ge 5 ] && [ "$fails" -eq 0 ]
}

t_try_through_pyopencl_and_a_binary() {
    # a pyopencl script: its own kernel and pyopencl's generated one written
    # out; the generated one overridden by its own file and the script's
    # kernel given a local size: the same answer, exit 0 or 1 (time), never
    # 2; a broken edit of the script's kernel: exit 2. A program created from
    # a binary: dumped as .bin, overridden by a source file of its hash
    pyopencl_ready || return $?
    local d=$WORK/pyprogs rc
    PYOPENCL_CTX=0 "$B/cltrace" -q -o "$WORK/pyt/" --programs "$d" -- $PY tests/apps/pytry.py > "$WORK/pyt.out"
    diff <(PYOPENCL_CTX=0 PYOPENCL_NO_CACHE=1 $PY tests/apps/pytry.py) "$WORK/pyt.out"
    local gen; gen=$(ls "$d"/axpbyz-*.cl)
    PYOPENCL_CTX=0 try_json "$WORK/pyt.json" --runs 2 --override "$gen" --local smooth=64 -- $PY tests/apps/pytry.py
    $PY - "$WORK/pyt.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"]["exit"] in (0, 1) and r["results"]["status"] == "identical", r
assert any("created from" in o for o in r["overrides"]) and any("smooth launched with local size 64" in o
                                                              for o in r["overrides"]), r["overrides"]
assert {k["name"] for k in r["kernels"]} >= {"smooth", "axpbyz"}, r["kernels"]
PYEOF
    sed 's/c\[i\] = /c[i] = oops /' "$d"/smooth-*.cl > "$WORK/smooth-bad-$(ls "$d"/smooth-*.cl | sed 's/.*-\([0-9a-f]*\).cl/\1/').cl"
    rc=0; PYOPENCL_CTX=0 "$B/cltrace" try --runs 1 --warmup 0 --override "$WORK"/smooth-bad-*.cl -- \
        $PY tests/apps/pytry.py > "$WORK/pyb.txt" || rc=$?
    [ "$rc" -eq 2 ]
    grep -q "did not build" "$WORK/pyb.txt"
    # the binary (a file the app loads, as apps ship them): twice-HASH.bin's
    # program from a source file named with its hash, the same answer
    export OVERRIDE_APP_BINARY=$WORK/twice.bin
    "$T/override_app" > "$WORK/bin.plain"
    "$B/cltrace" -q -o "$WORK/bin-out/" --programs "$WORK/binprogs" -- "$T/override_app" > "$WORK/bin.out"
    diff "$WORK/bin.plain" "$WORK/bin.out"
    local h; h=$(ls "$WORK"/binprogs/twice-*.bin | sed 's/.*twice-\([0-9a-f]*\).bin/\1/')
    cmp "$WORK/twice.bin" "$WORK/binprogs/twice-$h.bin"
    printf 'kernel void twice(global int *v) { int i = get_global_id(0); v[i] = v[i] + v[i] + 1; }\n' \
        > "$WORK/twice-$h.cl"
    try_json "$WORK/bin.json" --runs 1 --warmup 0 --override "$WORK/twice-$h.cl" -- "$T/override_app"
    $PY - "$WORK/bin.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["results"]["status"] == "identical" and r["verdict"]["exit"] == 0, r
assert any("instead of the app's binary" in o for o in r["overrides"]), r["overrides"]
PYEOF
}
