#!/usr/bin/env bash
# What CPU sampling costs (make bench runs it): the signal handler's time per
# sample for a 64-frame stack, C and Python (the trace's own account:
# cltrace.self_cpu_samples_ns over cltrace.cpu_samples), and the wall time of
# a CPU-bound program (fixed work under a 60-frame recursion) sampled at
# 100 Hz against not, 7 interleaved pairs, the median ratio. Python twice: a
# 0.6 s run pays for the unwinder's first look at each place the eval loop
# stops (its tables read once per place, then kept), a 3 s run mostly not.
#   bash scripts/bench-cpu-samples.sh        (after make test-bins)
set -eu
cd "$(dirname "$0")/.."
B=build T=build/tests SHIM=$PWD/build/libcltrace.so
W=$(mktemp -d /tmp/cltrace-bench-samples.XXXXXX); trap 'rm -rf "$W"' EXIT
export CLTRACE_QUIET=1
per_sample() {   # per_sample TRACE: "us_per_sample samples", from the report's account of itself
    "$B/cltrace-report" --format json "$1" | python3 -c '
import json, sys
c = json.load(sys.stdin)["self_cost"].get("cpu_samples", {})
n = c.get("samples", 0)
print("%.1f %d" % (c.get("handler_ns", 0) / n / 1e3 if n else 0, n))'
}
CLTRACE_OUTPUT="$W/c.%p.pftrace" LD_PRELOAD=$SHIM "$T/sample_stress" work > /dev/null
read -r c_us c_n < <(per_sample "$(ls "$W"/c.*)")
cat > "$W/deep.py" <<'PY'
import ctypes, sys, time
cl = ctypes.CDLL("libOpenCL.so.1")
n = ctypes.c_uint(0)
cl.clGetPlatformIDs(0, None, ctypes.byref(n))      # recording, and sampling, start here
def deep(k):
    if k:
        return deep(k - 1)
    end, acc = time.process_time() + float(sys.argv[1]), 0
    while time.process_time() < end:
        for i in range(1000):
            acc += i
    return acc
deep(60)
PY
CLTRACE_OUTPUT="$W/p.%p.pftrace" LD_PRELOAD=$SHIM "${PYTHON:-/usr/bin/python3}" "$W/deep.py" 0.6
read -r p_us p_n < <(per_sample "$(ls "$W"/p.*)")
CLTRACE_OUTPUT="$W/q.%p.pftrace" LD_PRELOAD=$SHIM "${PYTHON:-/usr/bin/python3}" "$W/deep.py" 3
read -r q_us q_n < <(per_sample "$(ls "$W"/q.*)")
printf "%-60s %8s %8s\n" "CPU samples (100 a second of a thread's CPU time)" "us each" samples
printf "  %-58s %8s %8s   target <= 20\n" "the handler, a 64-frame C stack" "$c_us" "$c_n"
printf "  %-58s %8s %8s\n" "the handler, 60 Python frames, 0.6 s (its places first seen)" "$p_us" "$p_n"
printf "  %-58s %8s %8s   target <= 20\n" "the handler, 60 Python frames and the interpreter's, 3 s" "$q_us" "$q_n"
ratios=()
for i in 1 2 3 4 5 6 7; do
    off=$(CLTRACE_CPU_SAMPLES=off CLTRACE_OUTPUT="$W/off.%p.pftrace" LD_PRELOAD=$SHIM "$T/sample_stress" work |
          awk '/^wall_s/ {print $2}')
    on=$(CLTRACE_OUTPUT="$W/on.%p.pftrace" LD_PRELOAD=$SHIM "$T/sample_stress" work | awk '/^wall_s/ {print $2}')
    ratios+=("$(awk -v a="$on" -v b="$off" 'BEGIN{printf "%.4f", a / b}')")
    rm -f "$W"/off.* "$W"/on.*
done
printf "  %-58s %8s   target <= 1.03 (pairs: %s)\n" "a CPU-bound program's wall time, sampled / not (median)" \
    "$(printf '%s\n' "${ratios[@]}" | sort -g | sed -n 4p)" "${ratios[*]}"
