# The user's own code as the "where" of every finding: a pyopencl program's
# Python frames (tests/apps/pywhere), a library's own calls (an MPI
# library's device probing), OpenCL called from OpenCL's callbacks. Sourced
# by tests/run.sh: its t_* functions join the suite.

pyopencl_ready() {
    $PY -c 'import pyopencl' 2> /dev/null || { echo "python3-pyopencl not installed (optional package)"; return 77; }
}

py_where() {   # py_where PREFIX [env...]: tests/apps/pywhere/where.py untraced, then traced; same output
    local prefix=$1; shift
    env PYOPENCL_CTX=0 PYOPENCL_NO_CACHE=1 "$@" $PY tests/apps/pywhere/where.py > "$prefix.plain" 2>&1
    env PYOPENCL_CTX=0 PYOPENCL_NO_CACHE=1 CLTRACE_OUTPUT="$prefix.%p.pftrace" CLTRACE_QUIET=1 "$@" \
        LD_PRELOAD="${PRELOAD:-$SHIM}" $PY tests/apps/pywhere/where.py > "$prefix.out" 2>&1
    cat "$prefix.out"
    diff "$prefix.plain" "$prefix.out"
}

t_python_frames_at_the_programs_lines() {
    # a pyopencl script with a problem of each kind at a marked line (small
    # transfers, an odd work-group size also launched from a second thread,
    # a failing clCreateKernel, an array operation, a blocking read with the
    # GIL released, a buffer leaked by a second module), ended by
    # os._exit(0): output as untraced; every finding's where is the script's
    # line, SARIF validates and locates each there with its whole stack,
    # GitHub's annotations too; the trace is whole and lints clean
    pyopencl_ready || return $?
    py_where "$WORK/pw"
    local t; t=$(trace_of "$WORK/pw")
    local r="$B/cltrace-report"
    "$r" "$t" > "$WORK/pw.txt" 2> "$WORK/pw.err" || [ $? -eq 1 ]
    head -12 "$WORK/pw.txt"
    ! grep -q "cut short" "$WORK/pw.err" || return 1
    head -1 "$WORK/pw.txt" | grep -q "ran [0-9.]* s, ended by _exit(0)"
    "$r" --format json -o "$WORK/pw.json" "$t" || [ $? -eq 1 ]
    "$r" --format sarif -o "$WORK/pw.sarif" "$t"
    "$r" --format github -o "$WORK/pw.gh" "$t"
    lint "$t"
    # the stacks as trace processor reads them: the independent lint's dump,
    # or (no lint beside the clone) the project's own decoder's
    if [ -x "$LINT" ]; then pftrace_lint --dump "$t" > "$WORK/pw.dump"; else $PY tests/tracedump.py "$t" > "$WORK/pw.dump"; fi
    $PY tests/python_where.py tests/apps/pywhere "$WORK/pw.json" "$WORK/pw.sarif" "$WORK/pw.gh" "$WORK/pw.dump" \
        tests/fixtures/sarif-schema-2.1.0.json
    # the program's own frame said first (the stack itself starts in the
    # interpreter): every call with a stack names the script's line, and
    # the second module's leaked buffer names the module's
    $PY tests/tracedump.py "$t" | $PY -c '
import json, sys
d = json.load(sys.stdin)
deep = [s for s in d["slices"] if len(s.get("stack") or []) > 1]
said = [s["args"].get("called_from", "") for s in deep]
assert deep and all(w.endswith(")") and (".py:" in w) for w in said), said[:5]
assert any("where.py:" in w for w in said) and any("helper.py:" in w for w in said), sorted(set(said))[:8]
print(len(deep), "calls with a stack, each with its program frame:", sorted(set(said))[:3])'
}

t_python_ctypes_frames_at_the_programs_lines() {
    # OpenCL through ctypes (every call with the GIL released): each finding
    # at the script's marked line; the GPU hosts run it on CPython 3.12
    # (scripts/gpu-python.sh)
    $PY tests/apps/pyctypes/where_ctypes.py > "$WORK/pc.plain"
    CLTRACE_OUTPUT="$WORK/pc.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$SHIM $PY tests/apps/pyctypes/where_ctypes.py \
        > "$WORK/pc.out"
    diff "$WORK/pc.plain" "$WORK/pc.out"
    "$B/cltrace-report" --format json -o "$WORK/pc.json" "$(trace_of "$WORK/pc")" || [ $? -eq 1 ]
    $PY tests/python_where.py marks tests/apps/pyctypes "$WORK/pc.json" api-errors=FAIL small-transfers=SMALL \
        work-group-multiple=ODD leaks=LEAK
    lint "$(trace_of "$WORK/pc")"
}

t_python_fork_and_shutdown() {
    # a forked worker ended by os._exit writes its own whole trace, its
    # buffer at the child's line; the parent ends normally (pyopencl releases
    # its objects while the interpreter shuts down: no Python frames are read
    # then) and its output is as untraced; both traces lint clean
    pyopencl_ready || return $?
    py_where "$WORK/pf" WHERE_FORK=1 WHERE_EXIT=exit
    local files; files=$(ls "$WORK"/pf.*.pftrace.gz)
    [ "$(echo "$files" | wc -l)" -eq 2 ] || { echo "$files"; return 1; }
    local line; line=$(grep -n "FORK-LINE" tests/apps/pywhere/where.py | cut -d: -f1)
    local f found=0
    for f in $files; do
        "$B/cltrace-report" "$f" > "$WORK/pf.txt" 2> "$WORK/pf.err" || [ $? -eq 1 ]
        if grep -q "cut short" "$WORK/pf.err"; then
            cat "$WORK/pf.err"
            echo "$f: the report says the trace was cut short"
            return 1
        fi
        if grep -q "ended by _exit(0)" "$WORK/pf.txt"; then
            unwrap "$WORK/pf.txt" | grep -q "cl_mem, created by clCreateBuffer at main ([^)]*where.py:$line)" && found=1
        fi
        lint "$f"
    done
    [ $found -eq 1 ] || {       # what each trace holds, then the reason
        for f in $files; do
            "$B/cltrace-report" "$f" > "$WORK/pf.txt" 2>&1 || true
            unwrap "$WORK/pf.txt" | grep -E "ended by|cl_mem, created" | head -4
        done
        echo "no trace ended by _exit(0) with the child's buffer made at where.py:$line"
        return 1
    }
}

t_python_version_not_supported_said_once() {
    # an interpreter of another version (here a program exporting
    # Py_GetVersion "3.10.12"): one line says so, C frames as before
    CLTRACE_OUTPUT="$WORK/op.%p.pftrace" LD_PRELOAD=$SHIM "$T/old_python" > "$WORK/op.out" 2> "$WORK/op.err"
    cat "$WORK/op.err"
    [ "$(grep -c "no Python frames: CPython 3.10 not supported" "$WORK/op.err")" -eq 1 ]
    "$B/cltrace-report" "$(trace_of "$WORK/op")" | grep -q "api-errors: clCreateContext, called from main (tests/apps/old_python.c:18)"
}

t_python_frames_under_tsan() {
    # the same script's main thread (the GIL held, then released around a
    # blocking read) with the shim under ThreadSanitizer. (A second Python
    # thread is left out: at its end TSan's runtime crashes in libunwind's
    # thread-local cleanup, with or without Python frames.)
    pyopencl_ready || return $?
    local rt; rt=$(${CC:-cc} -print-file-name=libtsan.so)
    [ -f "$rt" ] || { echo "no libtsan"; return 77; }
    PRELOAD="$rt:$B/tsan/libcltrace.so" py_where "$WORK/pt" WHERE_THREAD=0 TSAN_OPTIONS="halt_on_error=1 exitcode=66"
    ! grep -q ThreadSanitizer "$WORK/pt.out" || return 1
    "$B/cltrace-report" --format json -o "$WORK/pt.json" "$(trace_of "$WORK/pt")" || [ $? -eq 1 ]
    $PY - "$WORK/pt.json" "$PWD/tests/apps/pywhere/where.py" <<'PYEOF'
import json, sys
f = json.load(open(sys.argv[1]))["findings"]
at = [x["where"] for x in f if x.get("stack")]
assert at and all("(%s:" % sys.argv[2] in w for w in at if "helper.py" not in w), at
print(len(at), "findings at the script's lines under TSan")
PYEOF
}

t_library_calls_are_the_librarys() {
    # an MPI library whose MPI_Init probes the devices through a plugin (as
    # hwloc's does in Open MPI) and fails there; then the program's own
    # failing call: the program's is the top finding, the library's is info,
    # named as the plugin's inside MPI_Init, outside the error count
    FAKEMPI_PLUGIN=$T/libfakeprobe.so traced "$WORK/mp" "$T/mpi_probe_app" > "$WORK/mp.out"
    local t; t=$(trace_of "$WORK/mp")
    "$B/cltrace-report" "$t" > "$WORK/mp.txt" || [ $? -eq 1 ]
    cat "$WORK/mp.txt" | head -24
    head -1 "$WORK/mp.txt" | grep -q "2 findings (1 error, 0 warnings, 1 info)"
    grep -A2 "^Top findings" "$WORK/mp.txt" | tail -1 | grep -q "error    api-errors .*clCreateBuffer, called from main"
    ! grep -A4 "^Top findings" "$WORK/mp.txt" | grep -q clGetDeviceInfo || return 1
    grep -q "\[info\] api-errors: clGetDeviceInfo, called by libfakeprobe.so inside MPI_Init, not by the program" \
        "$WORK/mp.txt"
    "$B/cltrace-report" --format json "$t" | $PY -c '
import json, sys
f = json.load(sys.stdin)["findings"]
assert [x["severity"] for x in f] == ["error", "info"] and f[1].get("by_library") and not f[0].get("by_library"), f'
    lint "$t"
}

t_opencl_inside_callbacks_opens() {
    # a build's notify callback and an event's callback call OpenCL and
    # fail there: their stacks run through the shim's own frames, every
    # mapping is whole (the trace_processor aborted its whole import on an
    # end of 0, pftrace-lint: mapping-end-before-start), the errors are at
    # the callbacks' lines; with TRACE_PROCESSOR set, it imports the trace
    # with no error
    "$T/callbacks" > "$WORK/cb.plain"
    traced "$WORK/cb" "$T/callbacks" > "$WORK/cb.out"
    diff "$WORK/cb.plain" "$WORK/cb.out"
    local t; t=$(trace_of "$WORK/cb")
    "$B/cltrace-report" "$t" > "$WORK/cb.txt" || [ $? -eq 1 ]
    grep -q "api-errors: clCreateKernel, called from built (tests/apps/callbacks.c:18)" "$WORK/cb.txt"
    grep -q "api-errors: clGetEventInfo, called from done (tests/apps/callbacks.c:31)" "$WORK/cb.txt"
    lint "$t"
    if [ -n "${TRACE_PROCESSOR:-}" ]; then
        [ -z "$("$TRACE_PROCESSOR" -Q "select name from stats where value > 0 and severity in ('error', 'data_loss')" \
               "$t" 2>/dev/null | tail -n +2)" ]
    fi
}
