# Wrong answers found (sourced by tests/run.sh): fingerprints, the first
# NaN, where two runs diverge. The program: tests/apps/wrong_answer.c.

t_unit_digest_types_selection() {
    "$T/test_digest"
}

fp_run() {   # fp_run PREFIX [wrong_answer args]: traced with every command fingerprinted
    local p=$1; shift
    CLTRACE_FINGERPRINT=${FP_SPEC:-1} traced "$p" "$T/wrong_answer" "$@"
}

oclgrind_vendors() {   # a vendors folder with Oclgrind's ICD only; 77 without it
    [ -f /usr/lib/oclgrind/liboclgrind-rt-icd.so ] || { echo "oclgrind not installed (optional package)"; return 77; }
    mkdir -p "$WORK/ogv"
    echo /usr/lib/oclgrind/liboclgrind-rt-icd.so > "$WORK/ogv/oclgrind.icd"
}

t_fingerprints_name_the_first_nan() {
    # update's 5th launch writes a NaN (0/0 at element 3): the report names
    # that kernel, launch, buffer and element, error severity, the 19
    # commands before it clean, in every format; the answer is the
    # untraced one; a run without the NaN gets no finding; the trace lints
    "$T/wrong_answer" --nan-at 5 > "$WORK/fn.plain"
    fp_run "$WORK/fn" --nan-at 5 > "$WORK/fn.out"
    diff "$WORK/fn.plain" "$WORK/fn.out"
    report_formats "$(trace_of "$WORK/fn")" "$WORK/fn"
    $PY - "$WORK/fn" <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/r.json"))
nan = [f for f in r["findings"] if f["rule"] == "nan"]
assert len(nan) == 1 and nan[0]["severity"] == "error", nan
f = nan[0]
assert f["where"].startswith("kernel `update` launch 5 (#20, global 4096, local 64), enqueued at main (tests/apps/wrong_answer.c:"), f["where"]
for want in ("first wrote 1 NaN into buffer", "(arg 0, float, 16384 bytes, created at main (tests/apps/wrong_answer.c:",
             "the first at element 3", "the 19 fingerprinted commands before it left none", "6 later commands"):
    assert want in f["numbers"], (want, f["numbers"])
for ext in ("txt", "md", "xml", "html"):
    t = open(d + "/r." + ext).read()
    assert "update" in t and "launch 5 (#20" in t and "element 3" in t, ext
PY
    fp_run "$WORK/fc" > /dev/null
    "$B/cltrace-report" --format json "$(trace_of "$WORK/fc")" | $PY -c '
import json, sys
r = json.load(sys.stdin)
assert not [f for f in r["findings"] if f["rule"] == "nan"], r["findings"]'
    lint "$(trace_of "$WORK/fn")" "$(trace_of "$WORK/fc")"
}

t_fingerprints_backlog_past_its_bound_drains() {
    # 101 launches each writing 16 MiB, every one fingerprinted: past 512 MiB
    # read back and not digested the app waits for the collector, which must
    # go on digesting while it does (it napped as while the app enqueues:
    # 19.6-100 s on 2 cores in 7 of 8 runs, 2.0 s in one, instead of 1.1-2.1;
    # 15 s is a stall, not a speed bound: 60 s let the shorter stalls through).
    # Every launch's fingerprint is in the trace.
    local rc=0
    CLTRACE_FINGERPRINT=1 traced "$WORK/fb" timeout 15 "$T/bench_fingerprint" launch 16 100 > "$WORK/fb.out" || rc=$?
    [ "$rc" -eq 0 ] || { echo "101 fingerprinted launches of 16 MiB did not end within 15 s (exit $rc): the app waits on digests"; return 1; }
    grep -q '^wall_ns_per_launch' "$WORK/fb.out" || { echo "no wall_ns_per_launch: $(tail -n 1 "$WORK/fb.out")"; return 1; }
    $PY "$ROOT/tests/tracedump.py" "$(trace_of "$WORK/fb")" | $PY -c '
import json, sys
d = json.load(sys.stdin)
fp = [s for s in d["slices"] if s["name"] == "advance" and "fingerprints" in s["args"]]
assert len(fp) == 101, "%d launches carry fingerprints, not 101" % len(fp)
assert all(f["args"]["fingerprints"][0]["bytes"] == 16 << 20 for f in fp)
'
}

t_fingerprints_of_buffers_the_host_may_not_read() {
    # the state made CL_MEM_HOST_NO_ACCESS: still fingerprinted (copied to a
    # buffer of cltrace's first), the NaN still found at the same launch
    fp_run "$WORK/fh" --nan-at 5 --host-no-access > /dev/null
    "$B/cltrace-report" --format json "$(trace_of "$WORK/fh")" | $PY -c '
import json, sys
f = [f for f in json.load(sys.stdin)["findings"] if f["rule"] == "nan"]
assert len(f) == 1 and "launch 5" in f[0]["where"] and "arg 0, float" in f[0]["numbers"], f'
}

t_fingerprint_spec_picks_commands() {
    # update@3 alone; #3 (the first flux: write, fill, flux); count=2; a
    # spec that cannot be read says so and the program runs untraced-alike
    FP_SPEC='update@3' fp_run "$WORK/fs1" > /dev/null
    FP_SPEC='#3' fp_run "$WORK/fs2" > /dev/null
    FP_SPEC='count=2' fp_run "$WORK/fs3" > /dev/null
    CLTRACE_FINGERPRINT='k@x' CLTRACE_OUTPUT="$WORK/fs4.%p.pftrace" LD_PRELOAD=$SHIM "$T/wrong_answer" \
        2> "$WORK/fs4.err" > /dev/null
    grep -q "CLTRACE_FINGERPRINT=k@x: 'k@x': NAME@N takes a launch number from 1; no fingerprints" "$WORK/fs4.err"
    for i in 1 2 3 4; do $PY tests/tracedump.py "$(trace_of "$WORK/fs$i")" > "$WORK/fs$i.json"; done
    $PY - "$WORK" <<'PY'
import json, sys
def fps(i):
    d = json.load(open("%s/fs%d.json" % (sys.argv[1], i)))
    return [(s["name"], s["args"]["fingerprint_command"], s["args"]["fingerprint_launch"])
            for s in d["slices"] if "fingerprints" in s.get("args", {})]
assert fps(1) == [("update", 12, 3)], fps(1)
assert fps(2) == [("flux", 3, 1)], fps(2)
assert [f[1] for f in fps(3)] == [1, 2], fps(3)
assert fps(4) == [], fps(4)
PY
}

t_diverge_names_the_first_differing_command() {
    # two identical runs: exit 0; a second build with another constant in
    # flux: its first launch (#3), exit 1, both sides shown with their
    # call sites; PoCL against Oclgrind: the same, where Oclgrind is
    # installed; a trace without fingerprints: a clear error, exit 2
    fp_run "$WORK/da" > /dev/null
    fp_run "$WORK/db" > /dev/null
    fp_run "$WORK/dc" --scale 0.6 > /dev/null
    local TA TB TC rc
    TA=$(trace_of "$WORK/da") TB=$(trace_of "$WORK/db") TC=$(trace_of "$WORK/dc")
    "$B/cltrace-report" diverge "$TA" "$TB" > "$WORK/d-ab.txt"
    grep -q "^no divergence: 33 commands compared, 33 identical" "$WORK/d-ab.txt"
    set +e
    "$B/cltrace-report" diverge "$TA" "$TC" > "$WORK/d-ac.txt"; rc=$?
    set -e
    [ $rc -eq 1 ] || { cat "$WORK/d-ac.txt"; return 1; }
    grep -q '^diverged at kernel `flux` launch 1 (#3, global 4096, local 64): contents differ' "$WORK/d-ac.txt"
    grep -q "the 2 commands before it: 2 identical" "$WORK/d-ac.txt"
    [ "$(grep -c 'enqueued at main (tests/apps/wrong_answer.c:' "$WORK/d-ac.txt")" -eq 2 ]
    set +e
    "$B/cltrace-report" diverge --format json "$TA" "$TC" > "$WORK/d-ac.json"
    traced "$WORK/dplain" "$T/wrong_answer" > /dev/null
    "$B/cltrace-report" diverge "$TA" "$(trace_of "$WORK/dplain")" 2> "$WORK/d-plain.err"; rc=$?
    set -e
    [ $rc -eq 2 ]
    grep -q "has no fingerprints: trace both runs with \`cltrace --fingerprint" "$WORK/d-plain.err"
    $PY -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["diverged"] and r["compared"] == 2 and "flux" in r["a"]["command"] and r["a"]["hash"] != r["b"]["hash"], r' "$WORK/d-ac.json"
    lint "$TA" "$TB" "$TC"
    oclgrind_vendors || return 0
    OCL_ICD_VENDORS=$WORK/ogv fp_run "$WORK/dg" > /dev/null
    OCL_ICD_VENDORS=$WORK/ogv fp_run "$WORK/dgc" --scale 0.6 > /dev/null
    "$B/cltrace-report" diverge "$TA" "$(trace_of "$WORK/dg")" | grep -q "^no divergence: 33 commands compared"
    set +e
    "$B/cltrace-report" diverge "$TA" "$(trace_of "$WORK/dgc")" > "$WORK/d-ag.txt"; rc=$?
    set -e
    [ $rc -eq 1 ]
    grep -q '^diverged at kernel `flux` launch 1 (#3' "$WORK/d-ag.txt"
    lint "$(trace_of "$WORK/dg")"
}

t_diverge_tolerance_passes_rounding_only() {
    # flux's terms summed in another order: results that differ by rounding
    # only; without --tolerance they diverge at flux's first launch, with
    # 1e-6 they pass (the NaN counts still compared exactly)
    fp_run "$WORK/ta" > /dev/null
    fp_run "$WORK/tb" --reorder > /dev/null
    local TA TB rc
    TA=$(trace_of "$WORK/ta") TB=$(trace_of "$WORK/tb")
    set +e
    "$B/cltrace-report" diverge "$TA" "$TB" > "$WORK/t0.txt"; rc=$?
    set -e
    [ $rc -eq 1 ]
    grep -q '^diverged at kernel `flux` launch 1' "$WORK/t0.txt"
    "$B/cltrace-report" diverge --tolerance 1e-6 "$TA" "$TB" > "$WORK/t1.txt"
    grep -q "^no divergence: 33 commands compared, [0-9]* identical, [1-9][0-9]* within the tolerance" "$WORK/t1.txt"
    # a NaN in one run only is never within a tolerance
    fp_run "$WORK/tn" --nan-at 5 > /dev/null
    set +e
    "$B/cltrace-report" diverge --tolerance 0.5 "$TA" "$(trace_of "$WORK/tn")" > "$WORK/t2.txt"; rc=$?
    set -e
    [ $rc -eq 1 ] && grep -q '^diverged at kernel `update` launch 5 (#20.*NaN/+Inf/-Inf counts differ' "$WORK/t2.txt"
}

t_break_on_nan_stops_at_the_launch() {
    # CLTRACE_BREAK=nan under gdb: SIGTRAP in the call that enqueued the
    # launch that wrote the NaN (its line in the backtrace); no stop without
    command -v gdb > /dev/null || { echo "gdb not installed"; return 77; }
    for mode in nan clean; do
        gdb -q -batch -ex "set environment LD_PRELOAD=$SHIM" -ex "set environment CLTRACE_BREAK=nan" \
            -ex "set environment CLTRACE_FINGERPRINT=1" -ex "set environment CLTRACE_QUIET=1" \
            -ex "set environment CLTRACE_OUTPUT=$WORK/gn.%p.pftrace" -ex run -ex bt \
            --args "$T/wrong_answer" $([ $mode = nan ] && echo --nan-at 5) > "$WORK/gn-$mode.out" 2>&1 || true
        if grep -q 'ptrace: Operation not permitted\|Could not trace the inferior' "$WORK/gn-$mode.out"; then
            echo "gdb may not trace here (ptrace not permitted)"; return 77
        fi
    done
    grep -q SIGTRAP "$WORK/gn-nan.out" || { cat "$WORK/gn-nan.out"; return 1; }
    grep -q "main .*wrong_answer.c:" "$WORK/gn-nan.out"
    ! grep -q SIGTRAP "$WORK/gn-clean.out"
}

t_fingerprints_under_sanitizers() {
    # the app's thread and the collector share the readbacks: the shim built
    # with ASan/UBSan and with TSan, a NaN run and a host-no-access run
    local rt
    rt=$(${CC:-cc} -print-file-name=libasan.so)
    CLTRACE_FINGERPRINT=1 CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/fsa.%p.pftrace" ASAN_OPTIONS=detect_leaks=0 \
        LD_PRELOAD="$rt:$B/asan/libcltrace.so" "$T/wrong_answer" --nan-at 5 --host-no-access > "$WORK/fsa.out" 2>&1
    rt=$(${CC:-cc} -print-file-name=libtsan.so)
    CLTRACE_FINGERPRINT=1 CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/fst.%p.pftrace" TSAN_OPTIONS=halt_on_error=1 \
        LD_PRELOAD="$rt:$B/tsan/libcltrace.so" "$T/wrong_answer" --nan-at 5 >> "$WORK/fsa.out" 2>&1
    ! grep -q "runtime error\|Sanitizer" "$WORK/fsa.out" || { cat "$WORK/fsa.out"; return 1; }
    "$B/cltrace-report" --format json "$(trace_of "$WORK/fst")" | grep -q '"rule":"nan"'
}

t_fingerprints_every_route() {
    # the real entry points cltrace looks through are set by every route: an
    # ICD loader layer alone, and preload with the layer (each call once):
    # the same first NaN, #20, and cltrace's own commands never counted
    for route in layer both; do
        local env_layer="OPENCL_LAYERS=$SHIM" env_pre="LD_PRELOAD="
        [ $route = both ] && env_pre="LD_PRELOAD=$SHIM"
        env "$env_layer" "$env_pre" CLTRACE_FINGERPRINT=1 CLTRACE_QUIET=1 CLTRACE_OUTPUT="$WORK/fr-$route.%p.pftrace" \
            "$T/wrong_answer" --nan-at 5 > /dev/null
        "$B/cltrace-report" --format json "$(trace_of "$WORK/fr-$route")" | $PY -c '
import json, sys
f = [f for f in json.load(sys.stdin)["findings"] if f["rule"] == "nan"]
assert len(f) == 1 and f[0]["where"].startswith("kernel `update` launch 5 (#20,"), f'
    done
}
