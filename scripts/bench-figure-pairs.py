#!/usr/bin/env python3
"""What the report says cltrace added, run by run, against what pairs of runs
measure, for programs with host work between few calls: tests/apps/host_gap.c
(C) and tests/apps/pyhost_gap.py (pyopencl, skipped where it is missing); and
a launch-bound loop (bench_calls launch 20000: its targets, 1.10x untraced by
the pairs' median and 10 % by its own account).

Each program runs PAIRS times untraced and traced, interleaved (each first in
turn); each run is timed whole, from fork to exit. Per program: the pairs' slowdown (the median
of traced - untraced) and as a ratio of the untraced median, with that median's 90 % interval
(bootstrap: where it is wider than the bounds' 40 ms, the pairs cannot tell a figure's error from
the program's own noise, and the verdict says so), each traced run's figure
(self_cost.total_ns; where that interval is wider than 40 ms, up to three more batches of pairs),
how many figures lie within [slowdown - 15 ms, slowdown + 25 ms],
the figure's median share of its run (self_cost.percent: its own account) and the exit's
share of the figure (self_cost.exit_ns). make bench runs it; it reports and
exits 0 (the machine's noise is in the table: the untraced runs' spread).

With --examples: every example, problem and fixed (on a GPU host its whole
run by default is to stay within 1.05x untraced: medians), in rounds of three
runs, untraced, by default and untraced again, each first in turn: the pairs'
median slowdown as a ratio, its 90 % interval, and what that tells: within
1.05x (the interval's top under it), over (its bottom above), or not; and the
same for the untraced runs against each other, in the same rounds: the spread
the host gives that ratio with no cltrace at all (2026-12-01, an H200 host, 27
rounds: 6 of 54 sets of 9 over 1.05x untraced against untraced).
With --aa (the programs): both runs of each pair untraced, the ratio as above.
With --hold-gpu: an idle process holds a context on the platform (CLBENCH_PLATFORM) for the
whole measurement, as a GPU server's other jobs often do: no run is then the GPU's only user
(on an H200 with persistence mode on, each example ran ~130 ms shorter, 2026-12-02).

    scripts/bench-figure-pairs.py [--pairs N] [--aa] [--hold-gpu] [--examples [NAME ...]]
    (after make test-bins)
"""
import argparse
import glob
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = os.path.join(ROOT, "build")
_spec = importlib.util.spec_from_file_location("selfcost_check", os.path.join(ROOT, "scripts", "selfcost-check.py"))
_sc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_sc)


def timed_run(cmd, env):
    t = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t) * 1e3


def self_cost(trace):
    """(figure ms, exit ms, figure % of the run)"""
    out = subprocess.run([os.path.join(B, "cltrace-report"), "--format", "json", trace], capture_output=True,
                         text=True, check=True).stdout
    c = json.loads(out)["self_cost"]
    return c["total_ns"] / 1e6, c.get("exit_ns", 0) / 1e6, c.get("percent", 0)


def runs_of(name, cmd, n, work, arms):
    """Each of n rounds: the ms of each arm's run (arms: True for traced), each arm first in turn,
    then the traced run's (figure ms, exit ms, figure %) (zeros where no arm is traced)"""
    env = dict(os.environ, CLTRACE_QUIET="1")
    rows = []
    for i in range(n):
        out = os.path.join(work, "%s-%d" % (name.split()[0], i))
        os.makedirs(out)
        tenv = dict(env, LD_PRELOAD=os.path.join(B, "libcltrace.so"), CLTRACE_OUTPUT=out + "/t.%p.pftrace")
        ms = [0.0] * len(arms)
        order = list(range(len(arms)))
        for k in order[i % len(arms):] + order[:i % len(arms)]:
            ms[k] = timed_run(cmd, tenv if arms[k] else env)
        rows.append(tuple(ms) + (self_cost(glob.glob(out + "/t.*")[0]) if any(arms) else (0, 0, 0)))
        shutil.rmtree(out)
    return rows


def pairs_of(name, cmd, pairs, work, aa=False):
    """(untraced ms, traced ms, figure ms, exit ms, figure %) of each pair, the two runs' order
    alternating (aa: the "traced" run untraced too, its figure 0)"""
    return runs_of(name, cmd, pairs, work, (False, not aa))


MORE_BATCHES = 3      # where the first batch cannot tell, up to this many more


def measure(name, cmd, pairs, work, aa=False):
    """The row; 1: every figure within its bounds, 0: some not, -1: the pairs cannot tell (the
    median slowdown's 90 % interval wider than the bounds' 40 ms: the program's own noise, after
    up to MORE_BATCHES more batches of pairs, as scripts/selfcost-check.py adds them); aa: both
    runs untraced, the slowdown only"""
    rows = pairs_of(name, cmd, pairs, work, aa)
    diffs = [t - p for p, t, *_ in rows]
    first = lo, hi = _sc.interval(diffs)
    for _ in range(MORE_BATCHES):
        if hi - lo <= 40:
            break
        rows += pairs_of(name, cmd, pairs, work, aa)
        diffs = [t - p for p, t, *_ in rows]
        lo, hi = _sc.interval(diffs)
    if len(rows) > pairs:
        name += " (%d pairs: the first %d's interval %+.0f to %+.0f ms)" % (len(rows), pairs, first[0], first[1])
    plain, traced, figs, exits, percents = zip(*rows)
    pairs = len(rows)
    slow = statistics.median(diffs)
    base = statistics.median(plain)
    pair = "| %s | %.0f (%.0f–%.0f) | %+.1f (%.3fx; %+.0f to %+.0f) |" % (name, base, min(plain), max(plain), slow,
                                                                       1 + slow / base, lo, hi)
    if aa:
        print(pair + " | | | |")
        return 1
    inside = sum(slow - 15 <= f <= slow + 25 for f in figs)
    share = statistics.median(e / f for e, f in zip(exits, figs) if f > 0) if any(figs) else 0
    print(pair + " %.1f–%.1f (median %.1f) | %d of %d | %.1f %% | %.0f %% |" % (
        min(figs), max(figs), statistics.median(figs), inside, pairs, statistics.median(percents), 100 * share))
    return 1 if inside == pairs else -1 if hi - lo > 40 else 0


def against(base, other):
    """ratio of the medians; the pairs' median as a ratio, its 90 % interval; the verdict"""
    b = statistics.median(base)
    diffs = [o - p for o, p in zip(other, base)]
    lo, hi = (1 + d / b for d in _sc.interval(diffs))
    verdict = "within" if hi <= 1.05 else "over" if lo > 1.05 else "cannot tell"
    return statistics.median(other) / b, 1 + statistics.median(diffs) / b, lo, hi, verdict


def examples(rounds, work, only=()):
    """Every example's whole run (or those named), untraced, by default and untraced again:
    medians, their ratio, the pairs' median slowdown as a ratio with its 90 % interval and what
    that interval tells against the 1.05x target, the same for untraced against untraced (the
    host's own spread, in the same rounds), the figure and its exit"""
    names = []
    for line in open(os.path.join(ROOT, "Makefile")):
        if line.startswith("EXAMPLES := "):
            names = [x for x in line.split()[2:] if not only or x in only]
    print("every example's whole run, %d rounds of three runs (ms; %s, %d cores)" % (
        rounds, time.strftime("%Y-%m-%d"), os.cpu_count()))
    print("| example | untraced, median | by default, median | ratio | pairs: ratio (90 % interval) "
          "| against 1.05x | untraced again: pairs' ratio (90 % interval) | figure, median | exit's share |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
    worst, told, told_aa = 0, {"within": 0, "over": 0, "cannot tell": 0}, {"within": 0, "over": 0, "cannot tell": 0}
    for x in names:
        for v in ([], ["--fixed"]):
            name = x + (" --fixed" if v else "")
            plain, traced, again, figs, exits, _ = zip(*runs_of(name, [os.path.join(B, "examples", x)] + v,
                                                                rounds, work, (False, True, False)))
            r, pr, lo, hi, verdict = against(plain, traced)
            _, pr_aa, lo_aa, hi_aa, verdict_aa = against(plain, again)
            worst = max(worst, r)
            told[verdict] += 1
            told_aa[verdict_aa] += 1
            print("| %s | %.1f | %.1f | %.3f | %.3f (%.3f–%.3f) | %s | %.3f (%.3f–%.3f) | %.1f | %.0f %% |" % (
                name, statistics.median(plain), statistics.median(traced), r, pr, lo, hi, verdict, pr_aa, lo_aa,
                hi_aa, statistics.median(figs),
                100 * statistics.median(e / f for e, f in zip(exits, figs) if f > 0) if any(figs) else 0))
    print("the slowest example by default: %.3fx untraced (target: 1.05x on a GPU host); by the pairs' intervals: "
          "%d within, %d over, %d cannot tell (untraced against untraced: %d, %d, %d)" % (
              worst, told["within"], told["over"], told["cannot tell"], told_aa["within"], told_aa["over"],
              told_aa["cannot tell"]))


def hold_gpu():
    """An idle process holding a context on the platform for the measurement (killed at the end),
    as scripts/gpu-selfcost.sh holds one"""
    holder = subprocess.Popen([os.path.join(B, "tests", "bench_calls"), "enqueue", "1", "--nap-us", "36000000000"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(3)
    if holder.poll() is not None:
        sys.exit("--hold-gpu: the holding process ended (%d): no context on the platform" % holder.returncode)
    print("(the GPU kept initialized by process %d for the whole measurement)" % holder.pid)
    return holder


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--examples", nargs="*", metavar="NAME", help="every example, or those named")
    ap.add_argument("--aa", action="store_true", help="the programs untraced against untraced: the host's own spread "
                    "(--examples holds that control in every round)")
    ap.add_argument("--hold-gpu", action="store_true", help="an idle process holds a context on the platform "
                    "throughout: no run is the GPU's only user")
    a = ap.parse_args()
    holder = hold_gpu() if a.hold_gpu else None
    try:
        return measure_all(a)
    finally:
        if holder:
            holder.kill()
            holder.wait()


def measure_all(a):
    if a.examples is not None:
        work = tempfile.mkdtemp(prefix="cltrace-figure-pairs.")
        try:
            examples(a.pairs, work, a.examples)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return 0
    programs = [("host_gap (C)", [os.path.join(B, "tests", "host_gap")]),
                ("launch loop (20,000)", [os.path.join(B, "tests", "bench_calls"), "launch", "20000"])]
    py = "/usr/bin/python3"
    if subprocess.run([py, "-c", "import pyopencl"], stderr=subprocess.DEVNULL).returncode == 0:
        programs.append(("pyhost_gap.py (pyopencl)", [py, os.path.join(ROOT, "tests", "apps", "pyhost_gap.py")]))
    else:
        print("pyhost_gap.py: skipped (no pyopencl for %s)" % py)
    print("cltrace's figure against %d interleaved pairs (ms; %s, %d cores)%s" % (
        a.pairs, time.strftime("%Y-%m-%d"), os.cpu_count(), ": untraced against untraced (A/A)" if a.aa else ""))
    print("| program | untraced (min–max) | pairs: traced - untraced, median (ratio; its 90 % interval) "
          "| figure, run by run | within [-15, +25] ms | its own account | exit's share |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    work = tempfile.mkdtemp(prefix="cltrace-figure-pairs.")
    try:
        verdicts = [measure(n, c, a.pairs, work, a.aa) for n, c in programs]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("the host's own spread: no figure to check" if a.aa else
          "every figure within its bounds" if all(v == 1 for v in verdicts) else
          "some figures outside their bounds (target: all)" if 0 in verdicts else
          "every figure within its bounds where the pairs can tell (an interval wider than 40 ms: more pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
