#!/usr/bin/env bash
# The pictures in the README and docs/TRACING.md, and the UI check of every
# kind of trace, made by scripts/perfetto-ui.sh (Perfetto's own UI): every
# example (its findings on the timeline: --annotate), a pyopencl script, a
# 4-rank job merged (mpirun where Open MPI is installed), a launch loop traced
# by default (estimated launches), known allocations (device memory) and a
# 1 M-call trace. Prints a line per trace (tracks, slices, flows, load time,
# trace processor's peak memory, any error dialog); writes docs/img/*.png.
#   scripts/ui-gallery.sh [OUTDIR]        (default build/ui-gallery; PERFETTO_GIT or TP_DIR: perfetto-ui.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/ui-gallery}
B=build T=build/tests
rm -rf "$OUT" && mkdir -p "$OUT/traces" "$OUT/job" docs/img
make -s all test-bins > /dev/null
export CLTRACE_QUIET=1 CLTRACE_PROBE_DIR=$OUT/no-probe
tr() {    # tr NAME cmd...: its trace as OUT/traces/NAME.pftrace.gz
    local name=$1; shift
    mkdir -p "$OUT/raw/$name"
    CLTRACE_OUTPUT="$OUT/raw/$name/" LD_PRELOAD=$PWD/$B/libcltrace.so "$@" > /dev/null
    mv "$(ls "$OUT/raw/$name"/*.pftrace.gz | head -n 1)" "$OUT/traces/$name.pftrace.gz"
}
for x in transfers matmul transpose copy nbody workgroup leaks sync underfill phases; do
    tr "$x-raw" "$B/examples/$x"
    "$B/cltrace-report" --annotate "$OUT/traces/$x.pftrace.gz" -o /dev/null "$OUT/traces/$x-raw.pftrace.gz" || true
    rm "$OUT/traces/$x-raw.pftrace.gz"
done
PYOPENCL_CTX=0 PYOPENCL_NO_CACHE=1 tr python /usr/bin/python3 tests/apps/pywhere/where.py || true
tr launch-loop "$T/bench_calls" launch 20000
tr memory "$T/memory_peak"
tr host-gap "$T/host_gap" 40
tr million-calls "$T/bench_calls" setarg 1000000
if command -v mpirun > /dev/null && [ -x "$B/examples/job" ]; then
    mpirun --allow-run-as-root --oversubscribe -n 4 "$B/cltrace" -q -o "$OUT/job/" -- "$B/examples/job" > /dev/null
else    # the launcher's variables by hand
    for r in 0 1 2 3; do
        OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=4 CLTRACE_OUTPUT="$OUT/job/" \
            LD_PRELOAD=$PWD/$B/libcltrace.so "$B/examples/job-nompi" > /dev/null
    done
fi
"$B/cltrace-report" merge -o "$OUT/traces/job-4-ranks.pftrace.gz" "$OUT/job" 2> /dev/null
rc=0
bash scripts/perfetto-ui.sh -o "$OUT/ui" "$OUT"/traces/*.pftrace.gz || rc=$?
# the pictures the docs show, 8-bit where ImageMagick is here (the README's ≤ 200 KB)
pic() {   # pic SOURCE NAME
    if convert -version 2> /dev/null | grep -q ImageMagick; then convert "$OUT/ui/$1" -colors 256 "PNG8:docs/img/$2"
    else cp "$OUT/ui/$1" "docs/img/$2"; fi
}
pic transfers-timeline.png timeline-findings.png
pic python-launch.png python-launch.png
pic job-4-ranks-timeline.png job-4-ranks.png
pic launch-loop-timeline.png estimated-launches.png
pic memory-timeline.png device-memory.png
pic host-gap-samples.png cpu-samples.png
/usr/bin/python3 - "$OUT/ui" <<'PY'
import glob, json, os, sys
print("%-16s %7s %8s %7s %8s %9s  %s" % ("trace", "tracks", "slices", "flows", "load s", "TP MiB", "error dialog"))
for p in sorted(glob.glob(sys.argv[1] + "/*-ui.json")):
    d = json.load(open(p))
    name = os.path.basename(p)[:-8]
    rss = open(p[:-8] + "-tp-rss-kb").read().strip() if os.path.exists(p[:-8] + "-tp-rss-kb") else "?"
    c = d.get("counts") or {}
    print("%-16s %7d %8s %7s %8.1f %9s  %s" % (name, len(d["tracks"]), c.get("slices"), c.get("flows"),
          d["load_ms"] / 1000, int(rss) // 1024 if rss.isdigit() else rss, "YES" if d["error_dialog"] else "none"))
PY
ls -l docs/img/
exit $rc
