#!/usr/bin/env bash
# What recording costs a program that makes many light calls, on a GPU
# host: 1M clSetKernelArg (NVIDIA platform by default) untraced and traced,
# interleaved, REPS rounds; wall and thread-CPU ns per call, min and median;
# the writer's own CPU per record (the trace's cltrace.writer_cpu_ns); and 3M
# calls' process wall time with the defaults (exit included), nothing
# dropped. Not part of `make test`.
#
#   scripts/gpu-calls.sh [OUTDIR]                  (default build/gpu-calls)
#   OCL_PLATFORM=NVIDIA N=1000000 REPS=5 scripts/gpu-calls.sh
#   LIBS="build/libcltrace.so /tmp/b/libcltrace.so" scripts/gpu-calls.sh
#       (builds compared A/B: each round runs every one, interleaved)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/gpu-calls}
N=${N:-1000000}
REPS=${REPS:-5}
LIBS=${LIBS:-build/libcltrace.so}
export OCL_PLATFORM=${OCL_PLATFORM:-NVIDIA} CLTRACE_QUIET=1
mkdir -p "$OUT"
rm -f "$OUT"/*.pftrace* "$OUT"/calls.txt
. scripts/nvidia-icd.sh
icd_only "$OCL_PLATFORM"      # its driver alone, also where the host lists several in OCL_ICD_FILENAMES
make -s all build/tests/bench_calls
BC=build/tests/bench_calls
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

counts() {   # counts TRACE: calls recorded, calls dropped, writer CPU ns (from the report: no protobuf module needed)
    build/cltrace-report --format json "$1" | python3 -c "
import json, re, sys
a = json.load(sys.stdin)
drop = [f for f in a['findings'] if f.get('rule', f.get('id')) == 'dropped-calls']
n = int(re.match(r'(\\d+)', drop[0]['numbers']).group(1)) if drop else 0
print(sum(c['count'] for c in a['api']), n, a['self_cost']['writer_cpu_ns'])"
}
for r in $(seq "$REPS"); do
    read -r _ c0 _ w0 < <("$BC" setarg "$N" | tr '\n' ' '; echo)
    for lib in $LIBS; do
        rm -f "$OUT"/s.*
        read -r _ c1 _ w1 < <(CLTRACE_OUTPUT="$OUT/s.%p.pftrace" LD_PRELOAD="$lib" "$BC" setarg "$N" | tr '\n' ' '; echo)
        t=$(ls "$OUT"/s.*)
        read -r calls dropped wcpu < <(counts "$t")
        echo "$r lib $lib untraced_wall $w0 traced_wall $w1 untraced_cpu $c0 traced_cpu $c1 calls $calls dropped $dropped writer_ns_per_record $(awk -v c="$wcpu" -v n="$calls" 'BEGIN{printf "%.1f", c / n}')" | tee -a "$OUT/calls.txt"
    done
done
rows() {   # rows LIB FIELD: the field's values of that build's rounds
    awk -v l="$1" -v f="$2" '$3 == l {for (i = 1; i < NF; i++) if ($i == f) print $(i + 1)}' "$OUT/calls.txt"
}
stat() {   # stat LIB FIELD: min / median over the rounds
    rows "$1" "$2" | sort -g | awk '{v[NR] = $1} END {printf "%s / %s", v[1], v[int((NR + 1) / 2)]}'
}
mn() { rows "$1" "$2" | sort -g | head -n 1; }
for lib in $LIBS; do
    echo
    echo "1M clSetKernelArg, ns per call (min / median of $REPS interleaved rounds), $lib:"
    echo "  wall:       untraced $(stat "$lib" untraced_wall)   traced $(stat "$lib" traced_wall)"
    echo "  thread CPU: untraced $(stat "$lib" untraced_cpu)   traced $(stat "$lib" traced_cpu)"
    echo "  writer CPU per record: $(stat "$lib" writer_ns_per_record)"
    echo "  added wall per call (min traced - min untraced): $(awk -v a="$(mn "$lib" traced_wall)" -v b="$(mn "$lib" untraced_wall)" 'BEGIN{printf "+%.1f", a - b}')   target <= +60"
done
wall() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b - a}'; }
lib=${LIBS%% *}
rm -f "$OUT"/w3.*
echo "3M clSetKernelArg, process wall s (defaults, exit included): untraced $(wall "$BC" setarg 3000000)," \
     "traced $(wall env CLTRACE_OUTPUT="$OUT/w3.%p.pftrace" LD_PRELOAD="$lib" "$BC" setarg 3000000)" \
     "(recorded, dropped, writer ns: $(counts "$(ls "$OUT"/w3.*)"))"
