#!/usr/bin/env bash
# The report's outputs on a fixed set of traces, against the outputs it gave
# before a change (tests/fixtures/report/expected/), in every format:
#   bash tests/report_golden.sh check    (make test runs it)
#   bash tests/report_golden.sh update   (after a change of output agreed on:
#                                          say which in the commit)
# The traces: tests/fixtures/*.pftrace.gz, tests/fixtures/report/*.pftrace.gz
# (the examples, problem and fixed, the phases example, programs with
# errors, leaks and threads, on PoCL; the rule vectors' synthetic traces),
# and one job (three ranks). What may differ is said in report_golden.py.
set -u
cd "$(dirname "$0")/.."
R=${REPORT:-build/cltrace-report}
EXP=tests/fixtures/report/expected
mode=${1:-check}
OUT=$(mktemp -d /tmp/cltrace-golden.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT/got"
cases() {   # NAME TRACE...
    for t in tests/fixtures/*.pftrace.gz tests/fixtures/report/*.pftrace.gz; do
        n=$(basename "$t" .pftrace.gz)
        case $n in job-rank*) continue ;; esac
        echo "$n $t"
    done
    echo "job $(ls tests/fixtures/report/job-rank*.pftrace.gz | xargs)"
}
while read -r name traces; do
    for fmt in text json markdown junit html; do
        # shellcheck disable=SC2086
        "$R" --format $fmt --fail-on error -o "$OUT/got/$name.$fmt" $traces 2> "$OUT/got/$name.$fmt.err"
        echo "exit $?" >> "$OUT/got/$name.$fmt.err"
    done
done < <(cases)
if [ "$mode" = update ]; then
    rm -rf "$EXP" && mkdir -p "$EXP" && cp "$OUT"/got/* "$EXP"/
    echo "report_golden: $(ls "$EXP" | wc -l) files written to $EXP"
    exit 0
fi
/usr/bin/python3 tests/report_golden.py "$EXP" "$OUT/got"
