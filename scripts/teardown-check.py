#!/usr/bin/env python3
"""How long a program takes to end after its work, untraced and under cltrace.

The exit phase of a run is the time from its loop's end to the process
reaped: the program's return, cltrace's exit (the last completions, the
trace written) and the teardown that follows, the driver's and the
kernel's, which runs after the trace has closed and so cannot be timed from
inside. Each round runs, in a shuffled order: the program untraced; under
cltrace (its exit, as the trace states it, read back); with cltrace loaded
and switched off (CLTRACE_DISABLE=1); and untraced idling a while after
its loop (--naps, ms; the idle is taken out of its figure). Per condition:
the median exit phase and its 90 % interval, the median of the runs that
took --short-ms or longer, how many ended sooner (NVIDIA's teardown takes
~40 or ~100 ms), and the difference from untraced. Each run also loads a
library just before main returns (bench_calls --last-dso), finalized after
the driver's libraries and cltrace: the phase is split at its destructor
into the user space's end (the exit handlers and destructors, cltrace's
exit among them) and the kernel's (the device's files closed, the memory
let go, the parent woken).

    scripts/teardown-check.py [--rounds N] [--platform SUBSTR] [--naps MS,...]
                              [--short-ms MS] [--out FILE.json] [MODE COUNT]

MODE COUNT: a bench_calls program (default: enqueue 100, the 0.05 s program).
docs/PERFORMANCE.md holds what it measured on an NVIDIA GPU.
"""
import argparse, importlib.util, json, os, random, statistics, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("selfcost_check", os.path.join(HERE, "selfcost-check.py"))
sc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sc)
LAST_FINI = os.path.join(os.path.dirname(sc.BC), "last_fini.so")


def exit_phase(cmd, env):
    """ms from the loop's end to the process reaped, and of those, the ms
    after the last library's destructor."""
    phases, marks = [], {}
    sc.wall(cmd + ["--last-dso", LAST_FINI], env, phases, marks=marks)
    if not phases or "last_fini_mono_ns" not in marks:
        sys.exit("teardown-check: %s printed no phases or no destructor's time" % " ".join(cmd))
    whole = phases[0][-1] / 1e6
    return whole, whole - (marks["last_fini_mono_ns"][0] - marks["phases_mono_ns"][2]) / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--platform", default=os.environ.get("OCL_PLATFORM", ""))
    ap.add_argument("--naps", default="0.7,2.5", help="untraced runs idling this many ms after the loop")
    ap.add_argument("--short-ms", type=float, default=60.0)
    ap.add_argument("--out", help="every run's figures, as JSON")
    ap.add_argument("program", nargs="*", default=["enqueue", "100"])
    a = ap.parse_args()
    base = sc.untraced_env("teardown-check", a.platform, (sc.BC, sc.SHIM, sc.REPORT, LAST_FINI))
    naps = [float(x) for x in a.naps.split(",") if x]
    work = tempfile.mkdtemp(prefix="cltrace-teardown.")
    cmd = [sc.BC] + a.program
    # name -> (command, environment, the idle taken out, ms)
    conds = {"untraced": (cmd, base, 0.0),
             "cltrace": (cmd, dict(base, LD_PRELOAD=sc.SHIM, CLTRACE_OUTPUT=os.path.join(work, "t.pftrace")), 0.0),
             "cltrace off": (cmd, dict(base, LD_PRELOAD=sc.SHIM, CLTRACE_DISABLE="1"), 0.0)}
    for n in naps:
        conds["untraced, %g ms idle" % n] = (cmd + ["--nap-us", str(int(n * 1000))], base, n)
    runs = {k: [] for k in conds}
    kernel = {k: [] for k in conds}     # the part after the last destructor
    stated_exit = []
    exit_phase(cmd, base)                          # warm: the kernel cache, the page cache
    for _ in range(a.rounds):
        order = list(conds)
        random.shuffle(order)
        for k in order:
            c, env, idle = conds[k]
            whole, after = exit_phase(c, env)
            runs[k].append(whole - idle)
            kernel[k].append(after)
            if k == "cltrace":
                for f in os.listdir(work):
                    stated_exit.append(sc.stated(os.path.join(work, f)).get("exit_ns", 0) / 1e6)
                    os.remove(os.path.join(work, f))
    os.rmdir(work)
    print("the exit phase: the loop's end to the process reaped, ms (%s, %d CPUs, %s, %d rounds)"
          % (" ".join(a.program), len(os.sched_getaffinity(0)), time.strftime("%Y-%m-%d %H:%M"), a.rounds))
    print("%-26s %8s %17s %13s %9s %10s %10s %8s" % ("", "median", "(90 % interval)", "long median", "short",
                                                      "vs untraced", "user space", "kernel"))
    mu = statistics.median(runs["untraced"])
    for k, v in runs.items():
        lo, hi = sc.interval(v)
        long = [x for x in v if x >= a.short_ms]
        user = [w - x for w, x in zip(v, kernel[k])]
        print("%-26s %8.1f  (%6.1f-%6.1f) %13s %5d/%-3d %+10.1f %10.2f %8.1f"
              % (k, statistics.median(v), lo, hi, "%.1f" % statistics.median(long) if long else "-",
                 len(v) - len(long), len(v), statistics.median(v) - mu, statistics.median(user),
                 statistics.median(kernel[k])))
    if stated_exit:
        print("cltrace's exit as its trace states it: median %.2f ms; what the exit phase adds beyond it: %+.1f ms"
              % (statistics.median(stated_exit), statistics.median(runs["cltrace"]) - mu - statistics.median(stated_exit)))
    print("(the idle is taken out of its runs; 'short': runs under %g ms; user space: the loop's end to the last"
          " library's destructor, medians; kernel: from there to the process reaped)" % a.short_ms)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"program": a.program, "runs_ms": runs, "kernel_ms": kernel, "stated_exit_ms": stated_exit,
                       "short_ms": a.short_ms}, f)


if __name__ == "__main__":
    main()
