#!/usr/bin/env bash
# Any command run many times under cltrace, beside load and signals, until
# it crashes or the runs are done: what a crash once in a hundred runs needs.
#   scripts/soak.sh [-n RUNS] [-l HOGS] [-s] [-a] [-u] [-o DIR] -- COMMAND...
#     -n RUNS   runs (default 100)          -l HOGS  CPU hogs beside it (default 2)
#     -s        a signal at a random time in each run: SIGTERM, SIGINT, SIGUSR1 or SIGHUP
#               (SIGUSR1/SIGHUP only where the program handles them: they kill it else)
#     -a        the shim built with ASan and UBSan (build/asan/libcltrace.so)
#     -u        untraced: the same runs without cltrace (is a crash the program's own?)
# Each run's exit status is counted; a run killed by SIGSEGV, SIGBUS, SIGILL,
# SIGFPE or SIGABRT (and not by our signal) keeps its core (DIR/core.N, with
# ulimit -c unlimited and the kernel's core_pattern where it may be set), its
# output, its trace and a backtrace by gdb where gdb is installed. Exit 0: no
# crash; 1: crashes (listed); 2: usage.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=100 HOGS=2 SIG=0 ASAN=0 PLAIN=0 OUT=build/soak
while [ $# -gt 0 ]; do
    case $1 in
        -n) RUNS=$2; shift 2 ;; -l) HOGS=$2; shift 2 ;; -o) OUT=$2; shift 2 ;;
        -s) SIG=1; shift ;; -a) ASAN=1; shift ;; -u) PLAIN=1; shift ;;
        --) shift; break ;; *) break ;;
    esac
done
[ $# -ge 1 ] || { sed -n '2,16p' "$0"; exit 2; }
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
rm -f "$OUT"/run.* "$OUT"/core.* "$OUT"/statuses
ulimit -c unlimited
# cores into the soak's folder where this machine lets us say so (root, not in a container that forbids it)
[ -w /proc/sys/kernel/core_pattern ] && echo "$OUT/core.%p" > /proc/sys/kernel/core_pattern 2> /dev/null
SHIM=$ROOT/build/libcltrace.so
[ "$ASAN" -eq 1 ] && SHIM="$(${CC:-cc} -print-file-name=libasan.so):$ROOT/build/asan/libcltrace.so"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:disable_coredump=0}
hogs=()
for _ in $(seq "$HOGS"); do (while :; do :; done) & hogs+=($!); done
trap 'kill "${hogs[@]}" 2> /dev/null' EXIT
crashes=0
for i in $(seq "$RUNS"); do
    dir=$OUT/run.$i
    mkdir -p "$dir"
    if [ "$PLAIN" -eq 1 ]; then
        "$@" > "$dir/out" 2>&1 &
    else
        CLTRACE_OUTPUT="$dir/trace.%p.pftrace" CLTRACE_QUIET=1 LD_PRELOAD="$SHIM" "$@" > "$dir/out" 2>&1 &
    fi
    pid=$! sent=""
    if [ "$SIG" -eq 1 ]; then        # somewhere in its first 2 s: start-up, the work, its exit
        sleep "0.$((RANDOM % 10))$((RANDOM % 10))$((RANDOM % 10))"
        [ $((RANDOM % 2)) -eq 1 ] && sleep 1
        sent=$(shuf -n 1 -e TERM INT)
        kill -s "$sent" "$pid" 2> /dev/null || sent=""
    fi
    wait "$pid"
    st=$?
    echo "$st${sent:+ $sent}" >> "$OUT/statuses"
    case $st in
        132|134|135|136|139)
            crashes=$((crashes + 1))
            echo "run $i: killed by signal $((st - 128))${sent:+ (after our SIG$sent)}: $dir"
            for c in "$OUT"/core.$pid /core core.$pid; do [ -f "$c" ] && mv "$c" "$dir/core" && break; done
            if [ -f "$dir/core" ] && command -v gdb > /dev/null; then
                gdb -batch -ex "thread apply all bt 20" "$(command -v "$1")" "$dir/core" > "$dir/backtrace" 2>&1
            fi ;;
        *) rm -rf "$dir" ;;       # an ordinary end: nothing kept
    esac
done
echo "soak: $RUNS runs of $*$([ "$PLAIN" -eq 1 ] && echo ' (untraced)')$([ "$ASAN" -eq 1 ] && echo ' (ASan shim)')," \
     "$HOGS CPU hogs$([ "$SIG" -eq 1 ] && echo ', a signal each'): exit statuses" \
     "$(sort "$OUT/statuses" | uniq -c | awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2 ($3 ? " after SIG" $3 : ""), $1}')"
[ "$crashes" -eq 0 ] || { echo "soak: $crashes crash(es), kept in $OUT"; exit 1; }
echo "soak: no crash"
