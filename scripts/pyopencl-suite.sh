#!/usr/bin/env bash
# pyopencl's own tests under cltrace, against the same tests untraced (not in
# `make test`: minutes, and it needs pyopencl's sources at the installed
# version's tag). Each test's outcome must be the same both ways; then how
# many findings name a file of the tests (their "where") and how many a
# library.
#   scripts/pyopencl-suite.sh PYOPENCL_GIT_DIR [TEST_FILE...]
# PYOPENCL_GIT_DIR: a clone (a bare one will do) of github.com/inducer/pyopencl;
# the default files: test_enqueue_copy.py test_arrays_in_structs.py
# test_clrandom.py test_wrapper.py. Needs python3-pytest and python3-pyopencl.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
GIT=${1:?usage: scripts/pyopencl-suite.sh PYOPENCL_GIT_DIR [TEST_FILE...]}
shift
FILES=${*:-test_enqueue_copy.py test_arrays_in_structs.py test_clrandom.py test_wrapper.py}
PY=/usr/bin/python3
ver=$($PY -c 'import pyopencl; print(pyopencl.VERSION_TEXT)') || { echo "no pyopencl"; exit 2; }
$PY -c 'import pytest' 2> /dev/null || { echo "no pytest (python3-pytest)"; exit 2; }
make -s all > /dev/null || exit 2
W=${OUT:-$(mktemp -d /tmp/cltrace-pyopencl.XXXXXX)}
mkdir -p "$W/src" "$W/traces"
git --git-dir="$GIT" archive "v$ver" test | tar -x -C "$W/src" || { echo "no tag v$ver in $GIT"; exit 2; }
cd "$W/src/test" || exit 2
export PYOPENCL_CTX=${PYOPENCL_CTX:-0} PYOPENCL_NO_CACHE=1 PYOPENCL_TEST=${PYOPENCL_TEST:-portable}
run() {   # run NAME [env...]: pytest over the files, each test's outcome in NAME.outcomes
    local name=$1; shift
    local t0; t0=$(date +%s.%N)
    env "$@" $PY -m pytest -q -p no:cacheprovider -rA $FILES > "$W/$name.log" 2>&1
    echo "$name: $(tail -n 1 "$W/$name.log") ($(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5) s)"
    grep -E "^(PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR) " "$W/$name.log" | sort > "$W/$name.outcomes"
}
run untraced
run traced CLTRACE_QUIET=1 CLTRACE_OUTPUT="$W/traces/" LD_PRELOAD="$OLDPWD/build/libcltrace.so"
rc=0
if diff "$W/untraced.outcomes" "$W/traced.outcomes" > "$W/outcomes.diff"; then
    echo "same outcome for each of $(wc -l < "$W/untraced.outcomes") tests"
else
    echo "outcomes differ:"; head -n 20 "$W/outcomes.diff"; rc=1
fi
n=0; own=0; lib=0
for t in "$W"/traces/*.pftrace.gz; do
    [ -e "$t" ] || continue
    n=$((n + 1))
    "$OLDPWD/build/cltrace-report" --format json "$t" 2> /dev/null | $PY -c '
import json, sys
for f in json.load(sys.stdin).get("findings", []):
    if f.get("stack"):
        print("own" if ".py:" in f["where"] and "/test/" in f["where"] else "lib")' >> "$W/where.txt"
done
own=$(grep -c own "$W/where.txt" 2> /dev/null); lib=$(grep -c lib "$W/where.txt" 2> /dev/null)
echo "$n traces; findings with a stack: ${own:-0} at a line of the tests, ${lib:-0} elsewhere"
echo "(logs and traces: $W)"
exit $rc
