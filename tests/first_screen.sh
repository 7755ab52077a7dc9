# The first screen (sourced by tests/run.sh): what a person, and CI, sees
# first of every example's report; device timing that cannot be true.

FS="$PY tests/first_screen.py"
SCHEMA=tests/fixtures/sarif-schema-2.1.0.json

# every example's problem version, traced here, in every format
first_screen_traces() {
    # every command timed: what the first screen must hold is judged on the
    # findings a full timeline gives, which the budget's sample (its share
    # of a run that a loaded machine slows) could change from run to run
    local n
    for n in transfers matmul transpose copy nbody workgroup leaks sync underfill phases; do
        CLTRACE_SAMPLE=all traced "$WORK/$n" "$B/examples/$n" > /dev/null
        echo "$n $(trace_of "$WORK/$n")"
    done
}

t_first_screen_of_every_example() {
    # text: the first line <= 200 characters, no prose line over 100
    # columns, the summary and the top finding with its gain in the first
    # 25 lines; Markdown: the summary table in the first 15 lines
    local n t
    while read -r n t; do
        "$B/cltrace-report" --format json -o "$WORK/$n.json" "$t" || [ $? -eq 1 ]
        "$B/cltrace-report" -o "$WORK/$n.txt" "$t"
        "$B/cltrace-report" --format markdown -o "$WORK/$n.md" "$t"
        # a failure: the page first, the reason last (the runner shows the last lines)
        local why
        why=$($FS text "$WORK/$n.txt" "$WORK/$n.json" 2>&1) || { cat "$WORK/$n.txt"; echo "$n: $why"; return 1; }
        why=$($FS markdown "$WORK/$n.md" "$WORK/$n.json" 2>&1) ||
            { head -n 20 "$WORK/$n.md"; echo "$n: $why"; return 1; }
        # the cost account one flag away, its rows summing to the figure
        "$B/cltrace-report" --explain cost "$t" > "$WORK/$n.cost"
        grep -q "^cltrace added .* at most .* on this machine$" "$WORK/$n.cost"
        grep -q "^    the figure  *[0-9.]*$" "$WORK/$n.cost"
        grep -q "^    upper bound  *[0-9.]*$" "$WORK/$n.cost"
        ! grep -q "2-vCPU\|16-core\|us each" "$WORK/$n.cost" || return 1
        echo "$n: $(head -n 1 "$WORK/$n.txt")"
    done < <(first_screen_traces)
    # the JSON's figures: the bound at least the figure
    $PY -c '
import json, sys
for p in sys.argv[1:]:
    c = json.load(open(p))["self_cost"]
    assert c["upper_ns"] >= c["total_ns"] > 0, (p, c["upper_ns"], c["total_ns"])' "$WORK"/*.json
}

t_sarif_and_github_formats_for_ci() {
    # SARIF 2.1.0 that validates against the OASIS schema, one result per
    # finding, each with a stack located at a file of this checkout; the
    # GitHub format one workflow command per finding; --fail-on in both
    [ -f "$SCHEMA" ] || return 1
    $PY -c 'import jsonschema' 2> /dev/null || { echo "python3-jsonschema not installed (scripts/deps.sh)"; return 77; }
    local n t rc located=0
    while read -r n t; do
        "$B/cltrace-report" --format json -o "$WORK/$n.json" "$t" || [ $? -eq 1 ]
        "$B/cltrace-report" --format sarif -o "$WORK/$n.sarif" "$t"
        "$B/cltrace-report" --format github -o "$WORK/$n.gh" "$t"
        $FS sarif "$WORK/$n.sarif" "$WORK/$n.json" "$SCHEMA" "$ROOT" || return 1
        $FS github "$WORK/$n.gh" "$WORK/$n.json" || { cat "$WORK/$n.gh"; return 1; }
        local k; k=$(grep -o "\"startLine\"" "$WORK/$n.sarif" | wc -l); echo "$n: $k located"; located=$((located + k))
    done < <(first_screen_traces)
    echo "$located results located at a source line"
    [ "$located" -ge 9 ]
    grep -q '^::error file=examples/common/example.h,line=[0-9]*,title=cltrace leaks::' "$WORK/leaks.gh"
    grep -q '^::warning file=examples/underfill/underfill.c,line=[0-9]*,title=cltrace under-filled-device::' \
        "$WORK/underfill.gh"
    for f in sarif github; do
        set +e
        "$B/cltrace-report" --format $f --fail-on error -o /dev/null "$(trace_of "$WORK/leaks")"; rc=$?
        "$B/cltrace-report" --format $f --fail-on error -o /dev/null "$(trace_of "$WORK/underfill")"; local rc2=$?
        set -e
        [ $rc -eq 1 ] && [ $rc2 -eq 0 ] || { echo "--fail-on error with $f: $rc, $rc2"; return 1; }
    done
}

t_html_summary_above_the_fold_in_chromium() {
    # each example's page in a real browser at 1280x800: the summary panel
    # (figures, the device's time, the top findings) inside the first screen
    local browser
    browser=$(command -v chromium || command -v chromium-browser || true)
    [ -n "$browser" ] || { echo "chromium not installed (optional in scripts/deps.sh)"; return 77; }
    local n t names=() pages=()
    while read -r n t; do
        "$B/cltrace-report" --format html -o "$WORK/$n.html" "$t"
        names+=("$n") pages+=("$n=$WORK/$n.html")
    done < <(first_screen_traces)
    # every page in one start of the browser, each measured in a frame of its first screen
    $FS html-page "$WORK/all.html" "${pages[@]}"
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --window-size=1280,800 \
        --dump-dom "file://$WORK/all.html" > "$WORK/all.dom" 2> /dev/null
    $FS html-geometry "$WORK/all.dom" "${names[@]}"
}

t_device_timing_that_cannot_be_true() {
    # a fake ICD (PoCL whose profiling answers QUEUED 0, SUBMIT 1, START 2,
    # END 3; then END before START): one statement in every format, no
    # bandwidth, device time or gain; the host-side findings stay
    mkdir -p "$WORK/icd"
    echo "$T/libfaketiming.so" > "$WORK/icd/fake.icd"
    local mode f
    for mode in zero-one-two-three backwards; do
        OCL_ICD_VENDORS=$WORK/icd FAKE_TIMING=$mode traced "$WORK/fk-$mode" "$B/examples/transfers" > /dev/null
        local t
        t=$(trace_of "$WORK/fk-$mode")
        for f in text json markdown html; do
            "$B/cltrace-report" --format $f -o "$WORK/fk-$mode.$f" "$t"
            $FS unusable $f "$WORK/fk-$mode.$f" || { head -n 30 "$WORK/fk-$mode.$f"; return 1; }
        done
        grep -q '"rule":"small-transfers"' "$WORK/fk-$mode.json"    # counted on the host: it stays
        head -n 6 "$WORK/fk-$mode.text"
    done
    # (of the commands timed: all 514 where the budget's 3 ms hold them, some on a slow machine)
    grep -Eq "every one of the [0-9]+ commands took 1 ns" "$WORK/fk-zero-one-two-three.text"
    grep -Eq "([0-9]+) of \1 commands end before they start" "$WORK/fk-backwards.text"
    # the same program on PoCL as it is: its timing used
    traced "$WORK/fk-real" "$B/examples/transfers" > /dev/null
    "$B/cltrace-report" --format json "$(trace_of "$WORK/fk-real")" | grep -q '"device_timing":{"usable":true'
}
