# Tests of cltrace as an installed tool, its manual pages, and the program's
# own phases (include/cltrace.h). Sourced by tests/run.sh: its t_* functions
# join the suite.

t_install_run_anywhere_relocate_uninstall() {
    local prefix=$WORK/prefix elsewhere=$WORK/elsewhere
    make -s install PREFIX="$prefix" > /dev/null
    for f in bin/cltrace bin/cltrace-report bin/cltrace-view lib/cltrace/libcltrace.so lib/cltrace/cltrace-replay \
             include/cltrace.h \
             share/man/man1/cltrace.1 share/man/man1/cltrace-report.1 share/man/man1/cltrace-view.1 \
             share/doc/cltrace/TRACE_FORMAT.md share/bash-completion/completions/cltrace; do
        [ -e "$prefix/$f" ] || { echo "not installed: $f"; return 1; }
    done
    # the installed launcher, from another directory, finds its shim by itself
    mkdir -p "$elsewhere"
    "$T/vecadd" > "$WORK/inst.plain"
    (cd "$elsewhere" && env -u LD_PRELOAD "$prefix/bin/cltrace" -q -o "$elsewhere" -- "$T/vecadd") > "$WORK/inst.out"
    cmp "$WORK/inst.plain" "$WORK/inst.out"
    (cd "$elsewhere" && "$prefix/bin/cltrace" replay --list) | grep -q "^platform 0: "
    local trace; trace=$(ls "$elsewhere"/*.pftrace.gz)
    $PY tests/checks.py vecadd "$trace"
    "$prefix/bin/cltrace-report" --format json "$trace" | grep -q '"api"'
    # a program built against the installed header only, with and without cltrace
    printf '#include <cltrace.h>\n#include <stdio.h>\nint main(void) { cltrace_range_push("p"); cltrace_mark("m");\n'`
          `'cltrace_range_pop(); puts("ok"); return 0; }\n' > "$WORK/hdr.c"
    ${CC:-cc} -Wall -Werror -I"$prefix/include" -o "$WORK/hdr" "$WORK/hdr.c"
    [ "$("$WORK/hdr")" = ok ]
    [ "$(cd "$elsewhere" && "$prefix/bin/cltrace" -q -- "$WORK/hdr")" = ok ]
    # staged with DESTDIR, then moved: still finds its shim
    make -s install DESTDIR="$WORK/stage" PREFIX=/usr > /dev/null
    mv "$WORK/stage/usr" "$WORK/moved"
    (cd "$elsewhere" && "$WORK/moved/bin/cltrace" -q -o "$WORK/moved.%p.pftrace" -- "$T/vecadd") > "$WORK/moved.out"
    cmp "$WORK/inst.plain" "$WORK/moved.out"
    ls "$WORK"/moved.*.pftrace.gz
    # uninstall leaves nothing behind
    make -s uninstall PREFIX="$prefix" > /dev/null
    [ ! -e "$prefix" ] || { find "$prefix"; return 1; }
}

t_man_pages_render_and_match_help() {
    command -v groff > /dev/null || { echo "groff not installed (scripts/deps.sh)"; return 77; }
    for page in man/*.1; do
        groff -ww -man -z "$page" > "$WORK/groff.err" 2>&1
        [ ! -s "$WORK/groff.err" ] || { cat "$WORK/groff.err"; return 1; }
        if command -v man > /dev/null; then
            MANWIDTH=80 man -l --warnings=w "$page" > "$WORK/man.txt" 2> "$WORK/man.err"
            [ ! -s "$WORK/man.err" ] || { cat "$WORK/man.err"; return 1; }
            [ -s "$WORK/man.txt" ]
        fi
    done
    # every option --help lists is in the manual, with the same default
    "$B/cltrace" --help | sed -n 's/^  \(CLTRACE_[A-Z_]*\) .*(default: \([^)]*\))$/\1 \2/p' > "$WORK/opts"
    [ "$(wc -l < "$WORK/opts")" -ge 9 ]
    while read -r opt def; do
        grep -q "^\.B $opt\$" man/cltrace.1 || { echo "cltrace.1 lacks $opt"; return 1; }
        sed -n "/^\.B $opt\$/,/^\.TP/p" man/cltrace.1 | tr '\n' ' ' | sed 's/\\-/-/g; s/\\fI\|\\fP\|\.I //g' |
            grep -qF "Default: $def" || { echo "cltrace.1: $opt default is not $def"; return 1; }
    done < "$WORK/opts"
    grep -q "CLTRACE_" man/cltrace.1
    for tool in cltrace cltrace-report cltrace-view; do
        "$B/$tool" --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u | while read -r flag; do
            grep -qF -- "$(echo "$flag" | sed 's/-/\\-/g')" "man/$tool.1" || { echo "$tool.1 lacks $flag"; exit 1; }
        done
    done
    # bash completion loads and completes
    bash -c 'source completion/cltrace.bash; complete -p cltrace cltrace-report cltrace-view > /dev/null &&
             COMP_WORDS=(cltrace-report --for); COMP_CWORD=1; _cltrace_report; [ "${COMPREPLY[*]}" = --format ]'
}

t_phases_example_ranges_and_report() {
    # examples/phases marks its phases with cltrace.h: untraced and traced
    # print the same; the ranges nest around the calls; the report breaks
    # API time, device time, transfers and findings down by phase in every format
    local ex=$B/examples/phases
    "$ex" > "$WORK/ph.plain"
    CLTRACE_DISABLE=1 LD_PRELOAD=$SHIM CLTRACE_OUTPUT="$WORK/phd.%p.pftrace" "$ex" > "$WORK/ph.disabled"
    cmp "$WORK/ph.plain" "$WORK/ph.disabled"
    [ -z "$(ls "$WORK"/phd.* 2> /dev/null)" ]
    traced "$WORK/ph" "$ex" > "$WORK/ph.traced"
    cmp "$WORK/ph.plain" "$WORK/ph.traced"
    local trace; trace=$(trace_of "$WORK/ph")
    lint "$trace"
    $PY tests/checks.py phases "$trace" "$WORK/ph.traced"
    "$B/cltrace-report" --format json "$trace" > "$WORK/ph.json"
    $PY - "$WORK/ph.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ph = {p["path"]: p for p in r["phases"]}
assert set(ph) == {"setup", "upload", "solver", "solver/iteration", "download"}, ph.keys()
s, it = ph["solver"], ph["solver/iteration"]
assert s["device_pct"] > 50 and s["kernel_ns"] > 0, s                 # the kernels ran in the solver
assert it["times"] == 40 and it["calls"] == 40 * 5, it                 # 3 args, launch, probe read
assert ph["upload"]["transfer_bytes"] == ph["download"]["transfer_bytes"] == 65536 * 4
assert abs(sum(ph[p]["device_pct"] for p in ("setup", "upload", "solver", "download")) - 100) < 0.5
rules = {f["rule"]: f["phase"] for f in r["findings"]}
assert rules.get("small-transfers") == "solver/iteration" and rules.get("serialization") == "solver/iteration", rules
assert s["findings"] == 2 and ph["upload"]["findings"] == 0, s
PY
    "$B/cltrace-report" "$trace" | grep -q "phase solver: [0-9]* % of device time, 2 finding(s)"
    "$B/cltrace-report" --format markdown "$trace" | grep -q '^| solver/iteration | 40 |'
    "$B/cltrace-report" --format junit "$trace" | grep -q '<property name="phase.solver" value="api_ms='
    "$B/cltrace-report" --format html "$trace" | grep -q '<h2>Phases</h2>'
}

t_layers_one_way() {
    # every #include follows LAYERS (capture -> writer -> trace -> common,
    # report -> trace, ...): a folder never uses one that uses it; inside
    # capture/ and writer/ every call goes down the README's table of parts
    LAYERS_OBJ_CACHE=$WORK/layers-obj bash scripts/check-layers.sh
    # and the check fails where it should: a copy of the tree with a call up
    # each table and a file the table lacks (its other files not compiled again)
    local c=$WORK/tree
    mkdir -p "$c"
    git archive HEAD | tar -x -C "$c"    # its files as compiled above come from the cache
    printf 'void up_writer(void);\nvoid up_writer(void) { clt_writer_flush(0); }\n' >> "$c/writer/attrs.c"
    printf 'void clt_window_start(void);\nvoid up_capture(void);\nvoid up_capture(void) { clt_window_start(); }\n' \
        >> "$c/capture/real.c"
    printf 'int clt_unlisted(void);\nint clt_unlisted(void) { return 1; }\n' > "$c/writer/unlisted.c"
    local rc=0
    (cd "$c" && LAYERS_OBJ_CACHE=$WORK/layers-obj bash scripts/check-layers.sh) > "$WORK/layers.out" 2>&1 || rc=$?
    cat "$WORK/layers.out"
    [ $rc -eq 1 ]
    grep -q "^writer/attrs.c calls writer/file.c (clt_writer_flush): up writer/README.md's order" "$WORK/layers.out"
    grep -q "^capture/real.c calls capture/window.c (clt_window_start): up capture/README.md's order" "$WORK/layers.out"
    grep -q "^writer/unlisted.c: not in writer/README.md's table of parts" "$WORK/layers.out"
    grep -q "capture/ files that call each other in a circle: .*capture/real.c" "$WORK/layers.out"
}

t_sizes_whole_tree() {
    # every hand-written C file at most 700 lines, every function at most 80
    # (scripts/check-size.py); and the check fails where it should: a copy
    # of the tree with a file of 701 lines and a function of 81
    $PY scripts/check-size.py
    local c=$WORK/tree
    mkdir -p "$c"
    git archive HEAD | tar -x -C "$c"
    cp scripts/check-size.py "$c/scripts/"
    yes '/* */' | head -n 701 >> "$c/capture/queues.c"
    { printf 'int clt_long(void);\nint clt_long(void)\n{\n    int x = 0;\n'
      yes '    x++;' | head -n 76; printf '    return x;\n}\n'; } >> "$c/writer/attrs.c"
    local rc=0
    $PY "$c/scripts/check-size.py" "$c" > "$WORK/size.out" || rc=$?
    cat "$WORK/size.out"
    [ $rc -eq 1 ]
    grep -q "^capture/queues.c: [0-9]* lines (at most 700)" "$WORK/size.out"
    grep -q "^writer/attrs.c:[0-9]*: clt_long() is 81 lines (at most 80)" "$WORK/size.out"
}

t_docs_links_resolve_and_dated() {
    # every relative Markdown link resolves (file and heading), no figure is
    # dated by a work-period ordinal, the README is at most 250 lines and
    # its options table holds every option of `cltrace --help`
    $PY scripts/check-docs.py "$B/cltrace"
}

t_figure_pairs_add_batches_only_where_the_pairs_cannot_tell() {
    # scripts/bench-figure-pairs.py (make bench): a program whose pairs'
    # slowdown has a 90 % interval wider than the figure's bounds (40 ms)
    # gets another batch of pairs, up to three more, and says how many; one
    # the first batch decides gets none. Scripted runs: timings chosen, the
    # figure fixed
    $PY - <<'PYEOF'
import importlib.util, io, contextlib
spec = importlib.util.spec_from_file_location("fp", "scripts/bench-figure-pairs.py")
fp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fp)
def case(batches, figure=5.0):
    it, calls = iter(batches), []
    def pairs_of(name, cmd, pairs, work, aa=False):
        b = next(it)
        calls.append(len(b))
        return [(100.0, 100.0 + d, figure, 1.0, 2.0) for d in b]
    fp.pairs_of = pairs_of
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        v = fp.measure("prog", ["prog"], 7, "/nonexistent")
    return v, len(calls), out.getvalue()
steady = [4, 6, 5, 5.5, 4.5, 6, 5]
noisy = [-60, 80, -50, 90, 10, -70, 85]
v, n, row = case([steady])
assert (v, n) == (1, 1) and "| prog |" in row and "7 of 7" in row, (v, n, row)
v, n, row = case([noisy, steady, steady, steady])      # decided once the interval narrows
assert n >= 2 and "pairs: the first 7's interval" in row, (v, n, row)
v, n, row = case([noisy] * 4, figure=60.0)             # never decided: 3 more batches, then said
assert (v, n) == (-1, 4) and "(28 pairs" in row and "0 of 28" in row, (v, n, row)
v, n, row = case([[30] * 7], figure=5.0)                # decided, and the figure misses
assert (v, n) == (0, 1) and "0 of 7" in row, (v, n, row)
print("figure pairs: decided at once; more batches until the interval narrows; at most 3 more; a miss")
PYEOF
}
