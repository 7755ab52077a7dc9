# A kernel launch captured, replayed, tuned and checked (sourced by
# tests/run.sh): cltrace --capture, cltrace replay, cltrace tune,
# cltrace replay --check and --emit-c. The kernels: tests/apps/replay_kernels.c
# and the examples.

cap_run() {   # cap_run PREFIX SPEC cmd...: traced, the chosen launches captured into PREFIX.cap/
    local p=$1 spec=$2; shift 2
    CLTRACE_CAPTURE="$spec" CLTRACE_CAPTURE_DIR="$p.cap" traced "$p" "$@"
}

replay_same() {   # replay_same DIR [replay args]: exit 0 and every output identical
    local out
    out=$("$B/cltrace" replay "$@") || { echo "$out"; echo "replay of $1 exited $?"; return 1; }
    echo "$out" | grep -q "result: the outputs are the captured ones" || { echo "$out"; return 1; }
    ! echo "$out" | grep -q DIFFERS
}

t_capture_replay_examples_and_vecadd() {
    # the first launch of every kernel of every problem/fix example and of
    # vecadd, captured (the app's answer unchanged, the trace lints) and
    # replayed on the same device with identical outputs
    local x d n=0
    local fixed
    for x in $(sed -n 's/^EXAMPLES := //p' Makefile | sed 's/\([a-z]*\)/\1 \1+fixed/g') vecadd; do
        fixed=""; [ "${x%+fixed}" = "$x" ] || fixed=--fixed
        "$B/examples/${x%+fixed}" $fixed > "$WORK/ex-$x.plain" 2> /dev/null || true
        cap_run "$WORK/ex-$x" '*@1' "$B/examples/${x%+fixed}" $fixed > "$WORK/ex-$x.out" 2> /dev/null || true
        diff "$WORK/ex-$x.plain" "$WORK/ex-$x.out"
        lint "$(trace_of "$WORK/ex-$x")"
        for d in "$WORK/ex-$x.cap"/*; do
            [ -d "$d" ] || { echo "$x: nothing captured"; return 1; }
            [ -f "$d/manifest" ] || { echo "$d: no manifest"; return 1; }
            "$B/cltrace" replay --repeat 2 "$d" > "$WORK/ex.replay" || { cat "$WORK/ex.replay"; return 1; }
            if grep "^  arg" "$WORK/ex.replay" | grep -v ": identical$"; then
                echo "$d: an output not identical on the device it was captured on"; return 1
            fi
            n=$((n + 1))
        done
    done
    echo "$n launches captured and replayed"
    [ "$n" -ge 21 ]
}

t_capture_local_image_sampler_binary_host_no_access() {
    # a __local argument, an image with a sampler, a program made from a
    # binary, an output buffer the host may not read: each captured and
    # replayed identically; the manifest says what each argument is
    "$T/replay_kernels" > "$WORK/rk.plain"
    cap_run "$WORK/rk" 'tile,shade,twice,wave,svm' "$T/replay_kernels" > "$WORK/rk.out"
    diff "$WORK/rk.plain" "$WORK/rk.out"
    local c=$WORK/rk.cap
    grep -q '^arg 2 local bytes=128 type=int\*$' "$c/tile@1/manifest"
    grep -q '^arg 0 image bytes=2048 flags=0x24 writes=0 image=0x10f1 order=0x10b5 data_type=0x10de width=16 height=8' \
        "$c/shade@1/manifest"
    grep -q '^arg 1 sampler bytes=0 normalized=0 addressing=0x1131 filter=0x1140 type=sampler_t$' "$c/shade@1/manifest"
    grep -q '^program binary$' "$c/twice@1/manifest"
    [ -f "$c/twice@1/program.bin" ]
    grep -q '^arg 1 buffer bytes=1024 flags=0x201 writes=1 type=float\*$' "$c/wave@1/manifest"   # HOST_NO_ACCESS
    for k in tile@1 shade@1 twice@1 twice@2 wave@1; do
        replay_same "$c/$k"
        "$B/cltrace" replay "$c/$k" | grep -q ": identical$"
    done
    # the sub-buffer: its own 512 bytes, replayed as a buffer of them
    grep -q '^arg 0 buffer bytes=512 flags=0x21 writes=1 sub_offset=512 type=int\*$' "$c/twice@2/manifest"
    # an SVM pointer (PoCL has SVM): not capturable, said in the manifest
    # and by replay (exit 2)
    if grep -q "^svm " "$WORK/rk.plain"; then
        grep -q '^arg 0 not_captured bytes=0 why=an SVM pointer' "$c/svm@1/manifest"
        local rc=0
        "$B/cltrace" replay "$c/svm@1" > "$WORK/rk.svm" 2>&1 || rc=$?
        cat "$WORK/rk.svm"
        [ $rc -eq 2 ]
        grep -q "argument 0 was not captured: an SVM pointer" "$WORK/rk.svm"
    fi
    # --local: vecadd's kernel gives the same outputs with 16; tile's sums
    # over its work-group: with 16 they differ (exit 1)
    replay_same "$c/wave@1" --local 16
    rc=0
    "$B/cltrace" replay --local 16 "$c/tile@1" > "$WORK/rk.local" || rc=$?
    cat "$WORK/rk.local"
    [ $rc -eq 1 ]
    grep -q "global 256, local 16, 10 runs" "$WORK/rk.local"
    lint "$(trace_of "$WORK/rk")"
}

t_replay_float_tolerance_and_integer_exact() {
    # a float output 3 ulp away from the captured one: the same within the
    # default tolerance (stated), different with --tolerance 0 (exit 1, the
    # first differing element named); an int output one off: different
    cap_run "$WORK/ft" 'wave,tile' "$T/replay_kernels" > /dev/null
    local c=$WORK/ft.cap
    $PY - "$c/wave@1/arg1.out" "$c/tile@1/arg1.out" <<'PY'
import struct, sys
f = open(sys.argv[1], "r+b"); f.seek(4 * 17); b = f.read(4)
(v,) = struct.unpack("<I", b); f.seek(4 * 17); f.write(struct.pack("<I", v + 3)); f.close()
f = open(sys.argv[2], "r+b"); f.seek(4 * 5); (v,) = struct.unpack("<i", f.read(4)); f.seek(4 * 5)
f.write(struct.pack("<i", v + 1)); f.close()
PY
    "$B/cltrace" replay "$c/wave@1" > "$WORK/ft.1"
    cat "$WORK/ft.1"
    grep -q "same within the tolerance (max error absolute" "$WORK/ft.1"
    grep -q "compared within relative 1e-05 plus absolute 1e-06" "$WORK/ft.1"
    local rc=0
    "$B/cltrace" replay --tolerance 0 "$c/wave@1" > "$WORK/ft.2" || rc=$?
    cat "$WORK/ft.2"
    [ $rc -eq 1 ]
    grep -q "DIFFERS at 1 elements, the first \[17\]" "$WORK/ft.2"
    rc=0
    "$B/cltrace" replay "$c/tile@1" > "$WORK/ft.3" || rc=$?
    [ $rc -eq 1 ]
    grep -q "DIFFERS at 1 elements, the first \[5\]" "$WORK/ft.3"
}

t_capture_on_pocl_replay_on_oclgrind() {
    # captured on PoCL, replayed on Oclgrind (a simulator, another
    # platform): the same outputs (the float ones within the tolerance); a
    # program captured as PoCL's binary cannot run there: exit 2, said why
    command -v oclgrind > /dev/null || { echo "oclgrind not installed (optional package)"; return 77; }
    cap_run "$WORK/og" 'tile,shade,wave,twice' "$T/replay_kernels" > /dev/null
    local k
    for k in tile shade wave; do
        oclgrind "$B/cltrace" replay --repeat 1 "$WORK/og.cap/$k@1" > "$WORK/og.$k" 2>&1 ||
            { cat "$WORK/og.$k"; return 1; }
        grep -q "on Oclgrind / Oclgrind Simulator" "$WORK/og.$k"
        grep -q "result: the outputs are the captured ones" "$WORK/og.$k"
    done
    local rc=0
    oclgrind "$B/cltrace" replay "$WORK/og.cap/twice@1" > "$WORK/og.twice" 2>&1 || rc=$?
    cat "$WORK/og.twice"
    [ $rc -eq 2 ]
    grep -q "a binary runs only on the device it was built for" "$WORK/og.twice"
}

t_replay_check_names_kernel_work_item_line() {
    # under Oclgrind: the write past the end and the local-memory race each
    # named with kernel, work-item and source line (exit 1); a clean kernel
    # gets none (exit 0)
    command -v oclgrind > /dev/null || { echo "oclgrind not installed (optional package)"; return 77; }
    cap_run "$WORK/ck" 'oob,race,tile' "$T/replay_kernels" --bug > /dev/null
    local rc=0
    "$B/cltrace" replay --check "$WORK/ck.cap/oob@1" > "$WORK/ck.oob" 2>&1 || rc=$?
    cat "$WORK/ck.oob"
    [ $rc -eq 1 ]
    grep -q "Invalid write of size 4 at global memory address" "$WORK/ck.oob"
    grep -q "kernel oob, work-item Global(255,0,0) Local(31,0,0) Group(7,0,0), line 20" "$WORK/ck.oob"
    grep -q "out\[i + 1\] = in\[i\];" "$WORK/ck.oob"
    rc=0
    "$B/cltrace" replay --check "$WORK/ck.cap/race@1" > "$WORK/ck.race" 2>&1 || rc=$?
    cat "$WORK/ck.race"
    [ $rc -eq 1 ]
    grep -q "data race at local memory" "$WORK/ck.race"
    grep -Eq "kernel race, work-item Global\([0-9]+,0,0\).* against work-item .*, line 23" "$WORK/ck.race"
    "$B/cltrace" replay --check "$WORK/ck.cap/tile@1" > "$WORK/ck.tile" 2>&1
    grep -q "no problem found" "$WORK/ck.tile"
}

t_replay_emit_c_compiles_and_reproduces() {
    # the emitted C file builds with nothing but libOpenCL (warnings as
    # errors), replays the launch and checks it (0); against a changed
    # captured output it says so (1)
    cap_run "$WORK/em" 'shade,tile' "$T/replay_kernels" > /dev/null
    local k
    for k in shade tile; do
        "$B/cltrace" replay --emit-c -o "$WORK/em-$k.c" "$WORK/em.cap/$k@1"
        ${CC:-cc} -Wall -Wextra -Werror -o "$WORK/em-$k" "$WORK/em-$k.c" -lOpenCL -lm
        (cd / && "$WORK/em-$k") | tee "$WORK/em-$k.out"
        grep -q "the outputs are the captured ones" "$WORK/em-$k.out"
    done
    printf '\x7f' | dd of="$WORK/em.cap/tile@1/arg1.out" bs=1 seek=9 conv=notrunc 2> /dev/null
    local rc=0
    "$WORK/em-tile" "$WORK/em.cap/tile@1" > "$WORK/em.bad" || rc=$?
    cat "$WORK/em.bad"
    [ $rc -eq 1 ]
    grep -q "DIFFERS" "$WORK/em.bad"
}

t_tune_workgroup_picks_a_preferred_multiple() {
    # examples/workgroup's local size 100 (the report: not a multiple of
    # the preferred size, a gain estimated): tune, each candidate's global
    # rounded up as the app rounds its own, names the fastest unless others
    # tie with it within noise (their least time at or under its median):
    # then the captured size, else the fastest multiple of the preferred
    # size (on PoCL most sizes tie; the gain itself is measured on a GPU:
    # scripts/gpu-replay.sh); every candidate's output checked; the JSON
    # where cltrace-report reads it
    cap_run "$WORK/tw" 'saxpy@1' "$B/examples/workgroup" > /dev/null
    "$B/cltrace-report" --format json "$(trace_of "$WORK/tw")" > "$WORK/tw.json"
    "$B/cltrace" tune --repeat 5 --round-global "$WORK/tw.cap/saxpy@1" | tee "$WORK/tw.out"
    $PY - "$WORK/tw.json" "$WORK/tw.cap/saxpy@1/tune.json" "$WORK/tw.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wg = [f for f in r["findings"] if f["rule"] == "work-group-multiple"]
assert wg, "the report has no work-group-multiple finding"
t = json.load(open(sys.argv[2]))
best = t["candidates"][t["best"]]
pref = t["preferred_multiple"]
ok = [c for c in t["candidates"] if not c["failed"] and c["valid"]]
fastest = min(ok, key=lambda c: c["median_ns"])
tied = [c for c in ok if c["min_ns"] <= fastest["median_ns"]]
assert [c["tied"] for c in ok] == [c in tied and len(tied) > 1 for c in ok], "tied marks differ"
cap = [c for c in tied if c["captured"]]
mult = [c for c in tied if c["local"] and c["local"][0] % pref == 0]
want = cap[0] if cap else mult[0] if mult else fastest
assert best is want, (best, want, len(tied))
assert pref > 1 and (best["captured"] or best["local"] is None or best["local"][0] % pref == 0
                     or not mult), (best, pref)
assert all(c["valid"] for c in t["candidates"] if not c["failed"]), "a candidate's output differs"
assert t["candidates"][t["captured"]]["local"] == [100]
assert t["speedup"] >= 1.0 or best["tied"], t["speedup"]    # slower than the captured size only by noise
out = open(sys.argv[3]).read()
assert ("best: keep local 100: no local size measurably faster" in out) == bool(cap), out[-300:]
print("best local", best["local"] or "(the driver's)", "speedup %.2f" % t["speedup"], "tied", len(tied))
assert "measure it: `cltrace --capture 'saxpy@1' -- ./app`, then `cltrace tune cltrace-capture/saxpy@1`" in wg[0]["fix"], wg
PY
    # the report given the tune result quotes it beside its estimate
    "$B/cltrace-report" --format json --tuned "$WORK/tw.cap/saxpy@1" "$(trace_of "$WORK/tw")" > "$WORK/tw2.json"
    $PY - "$WORK/tw2.json" <<'PY'
import json, re, sys
wg = [f for f in json.load(open(sys.argv[1]))["findings"] if f["rule"] == "work-group-multiple" and "local=100" in f["where"]]
assert len(wg) == 1 and re.search(r"measured by cltrace tune on .*: (?:local (?:\d+|the driver's) [0-9.]+ ms against "
                              r"[0-9.]+ ms \(local 100\), [0-9.]+x|no local size measurably faster than local 100 "
                              r"\([0-9.]+ ms\))", wg[0]["numbers"]), wg   # the sizes may tie on PoCL (above)
PY
    local rc=0
    "$B/cltrace-report" --tuned "$WORK/no-such" "$(trace_of "$WORK/tw")" > /dev/null 2> "$WORK/tw.err" || rc=$?
    [ $rc -eq 2 ] && grep -q "no tune result" "$WORK/tw.err"
}

t_tune_respects_a_required_work_group_size() {
    # a kernel with reqd_work_group_size: the only candidate is that size
    # (and the driver's choice)
    cat > "$WORK/rq.c" <<'C'
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
int main(void) {
    const char *s = "__attribute__((reqd_work_group_size(16,1,1))) kernel void k(global int *v) { v[get_global_id(0)] += 1; }";
    cl_platform_id p; cl_device_id d; cl_int e; size_t g = 256, l = 16;
    clGetPlatformIDs(1, &p, NULL); clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &e);
    cl_program pr = clCreateProgramWithSource(c, 1, &s, NULL, &e); clBuildProgram(pr, 1, &d, "", NULL, NULL);
    cl_kernel k = clCreateKernel(pr, "k", &e);
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, 1024, NULL, &e);
    int zero = 0; clEnqueueFillBuffer(q, m, &zero, 4, 0, 1024, 0, NULL, NULL);
    clSetKernelArg(k, 0, sizeof m, &m);
    e = clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL); clFinish(q);
    printf("%d\n", e); return e != 0;
}
C
    ${CC:-cc} -o "$WORK/rq" "$WORK/rq.c" -lOpenCL
    cap_run "$WORK/rq" 'k' "$WORK/rq" > /dev/null
    "$B/cltrace" tune --format json "$WORK/rq.cap/k@1" > "$WORK/rq.json"
    $PY - "$WORK/rq.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
locs = [c["local"] for c in t["candidates"]]
assert locs == [[16], None] or locs == [None, [16]], locs
PY
}

t_replay_cannot_replay_exit_2() {
    # a corrupt manifest, a partial capture (no manifest; a cut input), a
    # platform that is not there, a program that does not build on the
    # replay device: each a clear message and exit 2
    cap_run "$WORK/bad" 'tile' "$T/replay_kernels" > /dev/null
    local src=$WORK/bad.cap/tile@1 d rc
    expect2() {   # expect2 MESSAGE-PART replay-args...
        local want=$1; shift
        rc=0
        "$B/cltrace" replay "$@" > "$WORK/bad.out" 2>&1 || rc=$?
        cat "$WORK/bad.out"
        [ $rc -eq 2 ] || { echo "exit $rc, not 2"; return 1; }
        grep -q -- "$want" "$WORK/bad.out" || { echo "no '$want'"; return 1; }
    }
    d=$WORK/bad1; cp -r "$src" "$d"; echo "garbage" > "$d/manifest"
    expect2 "not a cltrace capture manifest" "$d"
    d=$WORK/bad2; cp -r "$src" "$d"; rm "$d/manifest"
    expect2 "no manifest (a partial capture" "$d"
    d=$WORK/bad3; cp -r "$src" "$d"; truncate -s 100 "$d/arg0.in"
    expect2 "arg0.in: 100 bytes, the manifest says 1024 (a partial capture?)" "$d"
    d=$WORK/bad4; cp -r "$src" "$d"; head -n 5 "$src/manifest" > "$d/manifest"
    expect2 "cut short" "$d"
    expect2 "no platform NoSuchPlatform here" --platform NoSuchPlatform "$src"
    expect2 "no device 7 on platform" --device 7 "$src"
    d=$WORK/bad5; cp -r "$src" "$d"; echo "kernel void tile( {" > "$d/program.cl"
    expect2 "the program does not build on" "$d"
    expect2 "not a capture folder" "$WORK/no-such-folder"
    # a program captured as IL (SPIR-V) on a platform that takes none (PoCL here)
    d=$WORK/bad6; cp -r "$src" "$d"; sed -i 's/^program source$/program il/' "$d/manifest"
    mv "$d/program.cl" "$d/program.il"
    expect2 "the program (program.il) is not taken by" "$d"
}

t_capture_and_replay_under_sanitizers() {
    # the shim built with ASan+UBSan captures every kernel (the bugs too);
    # the replay program built with them replays, tunes, emits each; the
    # arguments kept from 8 threads at once under TSan
    local rt
    rt=$(${CC:-cc} -print-file-name=libasan.so)
    [ -f "$rt" ] || { echo "no libasan"; return 77; }
    "$T/replay_kernels" --bug > "$WORK/sa.plain"
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=66 CLTRACE_CAPTURE='*' CLTRACE_CAPTURE_DIR=$WORK/sa.cap \
        CLTRACE_OUTPUT="$WORK/sa.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD="$rt:$B/asan/libcltrace.so" \
        "$T/replay_kernels" --bug > "$WORK/sa.traced"
    cmp "$WORK/sa.plain" "$WORK/sa.traced"
    # leaks of the driver's own (PoCL, LLVM, the loader) are not ours
    printf 'leak:libpocl\nleak:libLLVM\nleak:libOpenCL\nleak:libhwloc\nleak:libclang\n' > "$WORK/lsan.supp"
    local -x LSAN_OPTIONS=suppressions=$WORK/lsan.supp
    local d n=0
    for d in "$WORK/sa.cap"/*; do
        [ "${d##*/}" != svm@1 ] || continue      # not capturable (tested above)
        ASAN_OPTIONS=detect_leaks=1:exitcode=66 "$T/cltrace-replay-asan" replay --repeat 2 "$d" > "$WORK/sa.r" ||
            { cat "$WORK/sa.r"; return 1; }
        ASAN_OPTIONS=detect_leaks=1:exitcode=66 "$T/cltrace-replay-asan" replay --emit-c -o "$WORK/sa.c" "$d"
        n=$((n + 1))
    done
    [ $n -eq 7 ]
    ASAN_OPTIONS=detect_leaks=1:exitcode=66 "$T/cltrace-replay-asan" tune --repeat 1 "$WORK/sa.cap/tile@1" > /dev/null
    local out
    out=$(CLTRACE_LIBRARY=$T/libfakecl.so TSAN_OPTIONS="halt_on_error=1 exitcode=66" CLTRACE_CAPTURE=k \
          CLTRACE_OUTPUT="$WORK/st.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD=$B/tsan/libcltrace.so \
          "$T/threads-tsan" 8 5000 --fake 2>&1) || { echo "$out" | head -40; return 1; }
}

t_capture_spec_errors_and_off() {
    # a spec that cannot be read: said, nothing captured, the app runs; off
    # (no CLTRACE_CAPTURE): no folder
    CLTRACE_CAPTURE='tile@x' CLTRACE_CAPTURE_DIR=$WORK/sp.cap CLTRACE_OUTPUT=$WORK/sp.%p.pftrace \
        LD_PRELOAD=$SHIM "$T/replay_kernels" > /dev/null 2> "$WORK/sp.err"
    cat "$WORK/sp.err"
    grep -q "CLTRACE_CAPTURE=tile@x: .*nothing captured" "$WORK/sp.err"
    [ ! -e "$WORK/sp.cap" ]
    (cd "$WORK" && CLTRACE_QUIET=1 CLTRACE_OUTPUT=$WORK/off.%p.pftrace LD_PRELOAD=$SHIM "$T/replay_kernels" > /dev/null)
    [ ! -e "$WORK/cltrace-capture" ]
    # the launcher's spelling, and its message naming the folder
    (cd "$WORK" && "$B/cltrace" -o "$WORK/ln.pftrace" --capture 'twice' -- "$T/replay_kernels" > /dev/null 2> "$WORK/ln.err")
    grep -q "cltrace: captured twice launch 1 into cltrace-capture/twice@1" "$WORK/ln.err"
}
