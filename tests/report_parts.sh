# The report as parts (sourced by tests/run.sh): each rule family on its own,
# the outputs as before a change, the rule table as the docs give it, and
# the shape report/ keeps (short functions, small rule files).

t_unit_rules_each_family() {
    "$T/test_rules"
}

t_report_outputs_as_before() {
    # 33 fixed traces, every format, against the outputs recorded before
    # report/ became parts (only the agreed differences of report_golden.py)
    REPORT=$B/cltrace-report bash tests/report_golden.sh check
}

t_report_rule_table_documented() {
    # report/README.md's rule table is `cltrace-report --rules --format
    # markdown`; the man page lists the same ids in the same order
    "$B/cltrace-report" --rules --format markdown > "$WORK/rules.md"
    sed -n '/^<!-- rules: /,/^<!-- end rules -->/p' report/README.md | sed '1d;$d' > "$WORK/readme-rules.md"
    diff "$WORK/rules.md" "$WORK/readme-rules.md"
    "$B/cltrace-report" --rules --format json | $PY -c '
import json, re, sys
ids = [r["id"] for r in json.load(sys.stdin)["rules"]]
man = open("man/cltrace-report.1").read()
listed = re.findall(r"^\.B (\S+)\n\.RI \((?:info|warning|error)\)", man.split(".SH RULES")[1].split(".SH ")[0], re.M)
assert listed == [i.replace("-", "\\-") for i in ids], (listed, ids)
assert len(ids) >= 16 and len(set(ids)) == len(ids), ids
'
    # every finding any fixture gives names a rule of the table
    "$B/cltrace-report" --rules > "$WORK/rules.txt"
    for f in tests/fixtures/report/expected/*.json; do
        $PY -c 'import json,sys; [print(f["rule"]) for f in json.load(open(sys.argv[1])).get("findings", [])]' "$f"
    done | sort -u | while read -r id; do grep -q "^$id " "$WORK/rules.txt" || { echo "$id not in --rules"; exit 1; }; done
}

t_report_parts_small_and_uncut() {
    # no rule file over 250 lines, and no file that switches truncation
    # warnings off (every function at most 80 lines: t_sizes_whole_tree)
    $PY - <<'PY'
import glob, re
bad = []
for path in glob.glob("report/**/*.c", recursive=True):
    lines = open(path).read().split("\n")
    if "format-truncation" in "\n".join(lines):
        bad.append("%s: switches -Wformat-truncation off" % path)
    if path.startswith("report/rules/") and len(lines) > 251:
        bad.append("%s: %d lines (a rule file stays under 250)" % (path, len(lines) - 1))
assert not bad, "\n".join(bad)
print("report/: rule files at most 250 lines, nothing cut silently")
PY
}

t_leaks_classed_like_a_memory_checker() {
    # one program per class: definitely lost (the app released the context,
    # program and queue), growing with the run (a buffer every iteration),
    # still held (the last of a loop that releases the rest; a library's
    # cache): the class and its severity in every format, the traces lint
    for mode in lost loop last cache; do
        "$T/leak_classes" $mode > "$WORK/lk-$mode.plain"
        traced "$WORK/lk-$mode" "$T/leak_classes" $mode > "$WORK/lk-$mode.out"
        diff "$WORK/lk-$mode.plain" "$WORK/lk-$mode.out"
        report_formats "$(trace_of "$WORK/lk-$mode")" "$WORK/lk-$mode"
        $PY tests/checks.py report_leak_class "$WORK/lk-$mode" $mode || return 1
        lint "$(trace_of "$WORK/lk-$mode")"
    done
    # the stderr line counts each class
    CLTRACE_OUTPUT="$WORK/lk-msg.%p.pftrace" LD_PRELOAD=$SHIM "$T/leak_classes" lost 2>&1 > /dev/null |
        grep -q "still held at exit (.*): [1-9][0-9]* definitely lost, 0 growing with the run"
}

t_leaks_without_call_stacks() {
    # no libunwind (a GPU host without it: hidden here by a mount over it).
    # On x86-64 cltrace reads call stacks itself: the leaks keep their
    # creation sites. With no stacks at all (arm64, whose stacks are
    # libunwind's) a leak has no creation site; its classification read the
    # site's count through a NULL pointer and crashed the traced program
    # (PoCL's small transfers on the H100 host, 2026-11-27). Either way it
    # runs as untraced, its leaks listed, the trace lints
    unshare -m true 2> /dev/null || { echo "no mount namespace here (unshare -m)"; return 77; }
    local mode rc
    for mode in loop lost; do
        "$T/leak_classes" $mode > "$WORK/ns-$mode.plain"
        rc=0
        CLTRACE_OUTPUT="$WORK/ns-$mode.%p.pftrace" LD_PRELOAD=$SHIM unshare -m sh -c '
            for f in "$1"/libunwind.so*; do [ -f "$f" ] && mount --bind /dev/null "$f"; done
            exec "$2" "$3"' sh /usr/lib/x86_64-linux-gnu "$T/leak_classes" $mode > "$WORK/ns-$mode.out" \
            2> "$WORK/ns-$mode.err" || rc=$?
        cat "$WORK/ns-$mode.err"
        [ $rc -eq 0 ]
        diff "$WORK/ns-$mode.plain" "$WORK/ns-$mode.out"
        ! grep -q "no creation stacks" "$WORK/ns-$mode.err"
        "$B/cltrace-report" "$(trace_of "$WORK/ns-$mode")" > "$WORK/ns-$mode.txt" || true
        grep -q "leak_classes.c:[0-9]" "$WORK/ns-$mode.txt"
        lint "$(trace_of "$WORK/ns-$mode")"
    done
    arm64_ready || { echo "no arm64 build: the trace with no stacks at all not checked"; return 0; }
    for mode in loop lost; do
        rc=0
        unshare -m sh -c '
            for f in /usr/lib/aarch64-linux-gnu/libunwind.so*; do [ -f "$f" ] && mount --bind /dev/null "$f"; done
            exec "$@"' sh env OCL_ICD_VENDORS="$A64T/icd" "$A64/cltrace" -o "$WORK/na-$mode.pftrace.gz" -- \
            "$A64T/leak_classes" $mode > /dev/null 2> "$WORK/na-$mode.err" || rc=$?
        cat "$WORK/na-$mode.err"
        [ $rc -eq 0 ]
        grep -q "libunwind not found: no call stacks" "$WORK/na-$mode.err"
        grep -q "still held at exit .*no creation stacks" "$WORK/na-$mode.err"
        "$B/cltrace-report" --format json "$(ls "$WORK"/na-$mode.*.pftrace.gz)" |
            $PY -c 'import json,sys; n = sum(1 for f in json.load(sys.stdin)["findings"] if f["rule"] == "leaks"); print(n, "leak findings"); sys.exit(n == 0)'
        lint "$(ls "$WORK"/na-$mode.*.pftrace.gz)"
    done
}

t_break_on_leak_only_when_lost_or_growing() {
    # CLTRACE_BREAK=leak under gdb: SIGTRAP at exit for a definitely lost or
    # growing leak, none for leaks that are still held
    command -v gdb > /dev/null || { echo "gdb not installed"; return 77; }
    for mode in lost loop last cache; do
        gdb -q -batch -ex "set environment LD_PRELOAD=$SHIM" -ex "set environment CLTRACE_BREAK=leak" \
            -ex "set environment CLTRACE_QUIET=1" -ex "set environment CLTRACE_OUTPUT=$WORK/gl.%p.pftrace" \
            -ex run --args "$T/leak_classes" $mode > "$WORK/gl-$mode.out" 2>&1 || true
        if grep -q 'ptrace: Operation not permitted\|Could not trace the inferior' "$WORK/gl-$mode.out"; then
            echo "gdb may not trace here (ptrace not permitted)"; return 77
        fi
        case $mode in
            lost|loop) grep -q SIGTRAP "$WORK/gl-$mode.out" || { echo "$mode: no stop"; cat "$WORK/gl-$mode.out"; return 1; } ;;
            *) ! grep -q SIGTRAP "$WORK/gl-$mode.out" || { echo "$mode: stopped"; return 1; } ;;
        esac
    done
}

t_full_disk_keeps_what_fits_and_says_so() {
    # 200 KiB free (a tmpfs of its own: root and a mount namespace), 2 M
    # calls: the trace keeps what fits -- most of the disk, not its first
    # flush -- ends saying the disk filled, lints clean, and the report says
    # so in every format instead of "crashed"; the app runs on unchanged
    [ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null || { echo "needs root and unshare for a tmpfs"; return 77; }
    mkdir -p "$WORK/full"
    unshare -m sh -c "mount -t tmpfs -o size=200k tmpfs '$WORK/full' || exit 77
        CLTRACE_OUTPUT='$WORK/full/df.%p.pftrace' LD_PRELOAD='$SHIM' '$T/bench_calls' setarg 2000000 \
            > '$WORK/dfull.out' 2> '$WORK/dfull.err'; echo \$? > '$WORK/dfull.rc'
        cp '$WORK'/full/df.*.pftrace.gz '$WORK/'" || { echo "cannot mount a tmpfs here"; return 77; }
    cat "$WORK/dfull.err"
    [ "$(cat "$WORK/dfull.rc")" -eq 0 ]
    grep -q '^calls 2000000' "$WORK/dfull.out" || grep -q 'ns_per_call' "$WORK/dfull.out"
    grep -q "No space left on device; trace stops here (it says so at its end), the app runs on" "$WORK/dfull.err"
    local t
    t=$(ls "$WORK"/df.*.pftrace.gz)
    [ "$(stat -c %s "$t")" -gt $((120 * 1024)) ] || { echo "kept only $(stat -c %s "$t") bytes"; return 1; }
    lint "$t"
    report_formats "$t" "$WORK/dfr"
    $PY - "$WORK/dfr" <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/r.json"))
assert r["truncated"] and "disk filled" in r.get("disk_full", ""), r.get("disk_full")
calls = sum(a["count"] for a in r["api"] if a["name"] == "clSetKernelArg")
assert calls > 10000, calls
for f in ("r.txt", "r.md", "r.html"):
    t = open("%s/%s" % (d, f)).read()
    assert "the disk filled while tracing" in t and "crashed" not in t, f
print("kept %d clSetKernelArg calls; every format says the disk filled" % calls)
PY
}

t_zz_reader_agrees_with_protobuf_c_on_every_trace() {
    # report/model/fastread.c decodes the hot packets in place; every other
    # packet goes through protobuf-c. Every trace this suite wrote (run
    # last: the other tests' folders are still there) and every fixture,
    # read both ways (CLTRACE_REPORT_DECODER=protobuf-c: every packet
    # through protobuf-c): the JSON reports byte for byte the same. Traces
    # over 24 MB are left out (protobuf-c takes ~1 s a million packets):
    # counted, said.
    # Two traces at a time: it starts last, when the other side-by-side
    # tests are ending and a CPU is often free.
    local n big differ
    find "$(dirname "$WORK")" tests/fixtures -name '*.pftrace' -o -name '*.pftrace.gz' | sort |
        tr '\n' '\0' | xargs -0 -n 1 -P 2 bash -c '
            if [ "$(stat -c %s "$1")" -gt 25165824 ]; then echo big; exit 0; fi
            a=$("$0" --format json "$1" 2> /dev/null | md5sum)
            b=$(CLTRACE_REPORT_DECODER=protobuf-c "$0" --format json "$1" 2> /dev/null | md5sum)
            [ "$a" = "$b" ] && echo same || echo "differ: $1"' "$B/cltrace-report" > "$WORK/both-ways"
    grep "^differ: " "$WORK/both-ways" || true
    n=$(grep -c "^same\|^differ: " "$WORK/both-ways" || true)
    big=$(grep -c "^big$" "$WORK/both-ways" || true) differ=$(grep -c "^differ: " "$WORK/both-ways" || true)
    echo "$n traces read both ways, $differ differ; $big over 24 MB left out"
    [ "$n" -gt 100 ] || echo "too few to judge: it reads the traces the other tests wrote (run it with them)"
    [ "$n" -gt 100 ] && [ "$differ" -eq 0 ]
}
