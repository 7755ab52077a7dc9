#!/usr/bin/env python3
"""What cltrace says it added to a run, against the slowdown measured.

Each program runs REPS times untraced and under cltrace, interleaved (paired
runs); the whole process is timed from fork to exit (start-up, the writer's
last flush, everything). Per program: the median of the paired slowdowns,
the median of what the trace's report states (cltrace-report --format json,
self_cost.total_ns) and of its bound (self_cost.upper_ns), and their ratio
to the slowdown; the target: the slowdown within [0.75 x the figure, 1.25 x
the bound]; --figure: within +-25 % of the figure (the GPU hosts' target,
whose bound should stay within 1.5 x the figure). A program whose runs
cannot tell its slowdown from the target (within noise) gets REPS more
pairs, batch by batch, up to MAX (default 4 x REPS).

    scripts/selfcost-check.py [--reps N] [--max-reps MAX] [--platform SUBSTR] [--long] [--sample]
                              [--out DIR [--keep]] [--only MODE[:COUNT],...] [--placebo] [--delay] [--figure]

Programs (build/tests/bench_calls): 4,000 small blocking transfers, a
0.05 s program (100 write + kernel + finish), the launch loop, a
device-bound loop (5,000 launches of ~0.1 ms on PoCL), the write loop,
1 M light calls (clSetKernelArg); --long adds ten times longer runs.
--placebo adds a third run to each round, with tests/bench/placebo.c
preloaded (threads that wake up every 1 ms and do nothing else): on a
virtual machine whose idle CPUs halt at once, that alone moved PoCL's
programs by as much as cltrace did, both ways. --delay adds another, with
tests/bench/delay.c preloaded: before each OpenCL call, a bare busy-wait as
long as cltrace's own time per call on the app's threads (the report's, over
the calls its loop adds, from traced runs first): what any tracer that took
that long would cost the program here.
Exit 1 when a program misses the target, 2 when it cannot run. make bench
runs it; scripts/gpu-selfcost.sh runs it on an NVIDIA GPU.
"""
import argparse, glob, json, os, random, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BC = os.path.join(ROOT, "build/tests/bench_calls")
SHIM = os.path.join(ROOT, "build/libcltrace.so")
REPORT = os.path.join(ROOT, "build/cltrace-report")
PLACEBO = os.path.join(ROOT, "build/tests/placebo.so")
DELAY = os.path.join(ROOT, "build/tests/delay.so")

PROGRAMS = [   # name, bench_calls arguments, in --long only
    ("small transfers (4,000 x 1 KiB)", ["small", "4000"], False),
    ("a 0.05 s program (100 x write+kernel+finish)", ["enqueue", "100"], False),
    ("launch loop (20,000 launches)", ["launch", "20000"], False),
    ("device-bound loop (5,000 launches of ~0.1 ms)", ["busy", "5000"], False),
    ("write loop (3,000 x write+kernel+finish)", ["enqueue", "3000"], False),
    ("1 M light calls (clSetKernelArg)", ["setarg", "1000000"], False),
    ("launch loop, long (200,000)", ["launch", "200000"], True),
    ("write loop, long (30,000)", ["enqueue", "30000"], True),
    ("10 M light calls", ["setarg", "10000000"], True),
]


PHASES = ("start", "context", "queue", "build", "set-up rest", "loop", "exit")


def untraced_env(who, platform, needed=()):
    """The environment of an untraced run (quiet, nothing preloaded, the
    platform picked), after checking the files a script needs are built."""
    for f in needed:
        if not os.access(f, os.R_OK if f.endswith(".so") else os.X_OK):
            sys.exit("%s: %s missing: make all %s" % (who, f, os.path.relpath(f, ROOT)))
    env = dict(os.environ, CLTRACE_QUIET="1")
    env.pop("LD_PRELOAD", None)
    if platform:
        env["OCL_PLATFORM"] = platform
    return env


def idle_policy():
    """How this machine's idle CPUs wait: on a virtual machine whose idle
    CPUs halt at once (guest halt-polling 0) every hand-off between a
    program's threads may cost a trip through the hypervisor, and any
    thread's wake-ups (cltrace's among them) change how many: the slowdown
    measured there moves with that, both ways (docs/PERFORMANCE.md)."""
    def read(path):
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return ""
    vm = " hypervisor" in " " + read("/proc/cpuinfo").replace("\n", " ").replace("\t", " ")
    driver = read("/sys/devices/system/cpu/cpuidle/current_driver") or "none"
    poll = read("/sys/module/haltpoll/parameters/guest_halt_poll_ns")
    return "%s, cpuidle %s%s" % ("a virtual machine" if vm else "not a virtual machine", driver,
                                 ", guest halt-polling %s ns" % poll if poll and driver == "haltpoll" else "")


def wall(cmd, env, phases=None, pids=None, marks=None):
    """The run's seconds; into pids (a list) its pid (its trace is
    PREFIX.PID.pftrace*); into phases (a list), its own split: from fork to
    main, the context's creation, the queue's (cltrace's calibration), the
    program build, the rest of the set-up (kernels, buffers), the loop, the
    loop's end to exit (ours and the driver's teardown); into marks (a
    dict), every NAME_mono_ns line it printed, NAME_mono_ns -> its values."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()
    t1 = time.monotonic_ns()
    if p.returncode:
        sys.exit("selfcost-check: %s exited %d: %s" % (" ".join(cmd), p.returncode, err.decode()[-300:]))
    if pids is not None:
        pids.append(p.pid)
    if marks is None:
        marks = {}
    for line in out.decode().splitlines():
        w = line.split()
        if w and w[0].endswith("_mono_ns"):
            marks[w[0]] = [float(x) for x in w[1:]]
    if phases is not None and len(marks.get("phases_mono_ns", ())) == 4 and len(marks.get("setup_mono_ns", ())) == 3:
        (m0, l0, l1, _), (c, q, b) = marks["phases_mono_ns"], marks["setup_mono_ns"]
        phases.append((m0 - t0, c - m0, q - c, b - q, l0 - b, l1 - l0, t1 - l1))   # the exit: from the loop's end
    return (t1 - t0) / 1e9


def interval(xs, n=2000, seed=1):
    """90 % bootstrap interval of the median of xs."""
    rnd = random.Random(seed)
    meds = sorted(statistics.median(rnd.choices(xs, k=len(xs))) for _ in range(n))
    return meds[int(0.05 * n)], meds[int(0.95 * n)]


def report_json(trace):
    r = subprocess.run([REPORT, "--format", "json", trace], capture_output=True)
    if r.returncode not in (0, 1):
        sys.exit("selfcost-check: cltrace-report on %s: %s" % (trace, r.stderr.decode()[-300:]))
    return json.loads(r.stdout)


def stated(trace):
    return report_json(trace)["self_cost"]


def time_per_call(cmd, env_traced, work, pairs=3):
    """cltrace's own time per call in the program's loop, on the app's
    threads, in ns: what the reports state there, from a traced run of the
    loop as given and one five times as long, over the calls the second has
    more (the set-up's calls, the queue's calibration among them, cancel
    out; they vary by a ms or so from run to run: the median of three)."""
    def one(times):
        prefix = os.path.join(work, "per-call-%d" % times)
        pids = []
        wall(cmd[:2] + [str(int(cmd[2]) * times)] + cmd[3:], dict(env_traced, CLTRACE_OUTPUT=prefix + ".pftrace"),
             None, pids)
        trace = (glob.glob("%s.%d.pftrace*" % (prefix, pids[0])) or [None])[0]
        if not trace:
            sys.exit("selfcost-check: no trace written for %s" % " ".join(cmd))
        r = report_json(trace)
        os.remove(trace)
        return (r["self_cost"].get("hot_path_ns", r["self_cost"]["self_ns"]),
                sum(a.get("count", 0) for a in r.get("api", [])))
    got = []
    for _ in range(pairs):
        (ns1, calls1), (ns5, calls5) = one(1), one(5)
        if calls5 > calls1:
            got.append(max(0, (ns5 - ns1) / (calls5 - calls1)))
    return int(statistics.median(got)) if got else 0


def judge(slow, st, up, figure_only=False):
    """The medians, the ratio (figure / slowdown), the slowdown's 90 %
    interval and the verdict: ok, the median slowdown within [0.75 x the
    figure, 1.25 x the bound] (figure_only: within +-25 % of the figure);
    within noise, not, but the slowdown's interval reaches into it (the runs
    cannot tell them apart: more pairs narrow it); else MISSED."""
    ms, mst, mup = statistics.median(slow), statistics.median(st), statistics.median(up)
    ratio = mst / ms if ms > 0 else float("inf")
    lo, hi = interval(slow)
    top = mst / 0.75 if figure_only else 1.25 * mup
    bottom = mst / 1.25 if figure_only else 0.75 * mst
    verdict = "ok" if bottom <= ms <= top else "within noise" if lo <= top and hi >= bottom else "MISSED"
    return ms, mst, mup, ratio, lo, hi, verdict


def measure(cmd, args, env_traced, base_env, work, a):
    """Batches of a.reps rounds, each an untraced and a traced run (and with
    a.placebo a placebo run), their order turning from round to round;
    another batch while the runs cannot tell the ratio from the target
    (within noise), up to a.max_reps rounds."""
    m = {k: [] for k in ("un", "tr", "pl", "dl", "st", "up", "parts", "ph_un", "ph_tr", "batches")}
    placebo = getattr(a, "placebo", False)
    delay_ns = getattr(a, "delay_ns", None)
    while True:
        traces = []
        for _ in range(a.reps):
            rep = len(m["un"])
            prefix = os.path.join(work, "%s-%s-%d" % (args[0], args[1], rep))
            env = dict(env_traced, CLTRACE_OUTPUT=prefix + ".pftrace")
            pids = []
            arms = [lambda: m["un"].append(wall(cmd, base_env, m["ph_un"])),
                    lambda: m["tr"].append(wall(cmd, env, m["ph_tr"], pids))]
            if placebo:     # a third run: threads that only wake up (tests/bench/placebo.c)
                arms.append(lambda: m["pl"].append(wall(cmd, dict(base_env, LD_PRELOAD=PLACEBO))))
            if delay_ns is not None:    # cltrace's time per call, as a bare busy-wait (tests/bench/delay.c)
                arms.append(lambda: m["dl"].append(wall(cmd, dict(base_env, LD_PRELOAD=DELAY, DELAY_NS=str(delay_ns)))))
            for i in range(len(arms)):            # the order turns from one round to the next
                time.sleep(a.gap)
                arms[(rep + i) % len(arms)]()
            # this run's own (a folder reused with --out may hold others)
            trace = (glob.glob("%s.%d.pftrace*" % (prefix, pids[0])) or [None])[0]
            if not trace:
                sys.exit("selfcost-check: no trace written for %s" % " ".join(cmd))
            traces.append(trace)
        # read once the batch's runs are over: the report's work and the
        # traces' removal would otherwise sit between measured runs
        for trace in traces:
            sc = stated(trace)
            m["st"].append(sc.get("total_ns", sc["self_ns"]) / 1e9)
            m["up"].append(sc.get("upper_ns", sc.get("total_ns", sc["self_ns"])) / 1e9)
            m["parts"].append(sc)
            if not a.keep:
                os.remove(trace)
        slow = [t - u for t, u in zip(m["tr"], m["un"])]    # paired: each traced run against its neighbour
        m["ms"], m["mst"], m["mup"], m["ratio"], m["lo"], m["hi"], m["verdict"] = judge(
            slow, m["st"], m["up"], getattr(a, "figure", False))
        m["mu"] = statistics.median(m["un"])
        if m["pl"]:
            pl = [p - u for p, u in zip(m["pl"], m["un"])]
            m["mp"], m["plo"], m["phi"] = (statistics.median(pl),) + interval(pl)
        if m["dl"]:
            dl = [d - u for d, u in zip(m["dl"], m["un"])]
            m["md"], m["dlo"], m["dhi"] = (statistics.median(dl),) + interval(dl)
        m["batches"].append(m["verdict"])
        if m["verdict"] != "within noise" or len(m["un"]) + a.reps > a.max_reps:
            return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15, help="pairs a batch")
    ap.add_argument("--max-reps", type=int, help="pairs at most: batches go on while a program's ratio is within "
                    "noise (default: 4 batches)")
    ap.add_argument("--platform", default=os.environ.get("OCL_PLATFORM", ""))
    ap.add_argument("--long", action="store_true")
    ap.add_argument("--sample", action="store_true", help="CLTRACE_SAMPLE=1 (timing a sample)")
    ap.add_argument("--out", help="write the runs here as selfcost.json")
    ap.add_argument("--keep", action="store_true", help="keep the traces there too")
    ap.add_argument("--gap", type=float, default=0.0,
                    help="seconds idle before each run (on a GPU no other process holds, the driver's "
                         "de-initialization after a run may still be under way when the next one starts)")
    ap.add_argument("--placebo", action="store_true",
                    help="a third run in each round, with build/tests/placebo.so preloaded (two threads waking every "
                         "1 ms, nothing else): what such wake-ups alone cost each program here")
    ap.add_argument("--delay", action="store_true",
                    help="another run in each round, with build/tests/delay.so preloaded: cltrace's own time per call "
                         "(from a traced run) as a bare busy-wait before each OpenCL call, nothing else")
    ap.add_argument("--figure", action="store_true",
                    help="the target: within +-25 %% of the figure (the GPU hosts'), not [0.75 x figure, 1.25 x bound]")
    ap.add_argument("--only", help="programs whose bench_calls mode is one of these (small,enqueue,...); "
                    "MODE:COUNT picks one of a mode's programs (enqueue:100, the 0.05 s program)")
    a = ap.parse_args()
    a.max_reps = a.max_reps or 4 * a.reps
    base_env = untraced_env("selfcost-check", a.platform, (BC, SHIM, REPORT) + ((PLACEBO,) if a.placebo else ()) +
                            ((DELAY,) if a.delay else ()))
    work = a.out or tempfile.mkdtemp(prefix="cltrace-selfcost.")
    os.makedirs(work, exist_ok=True)
    progs = [p for p in PROGRAMS if a.long or not p[2]]
    if a.only:
        wanted = a.only.split(",")
        progs = [p for p in progs if p[1][0] in wanted or ":".join(p[1][:2]) in wanted]
    idle = idle_policy()
    print("what cltrace says it added, against the whole-process slowdown (%d CPUs, %s; %s, %d paired runs, up to %d "
          "within noise%s)" % (len(os.sched_getaffinity(0)), idle, time.strftime("%Y-%m-%d %H:%M"), a.reps,
                               a.max_reps, ", CLTRACE_SAMPLE=1" if a.sample else ""))
    print("%-46s %9s %9s %17s %9s %9s %9s  %s" % ("program", "untraced", "slowdown", "(90 % interval)", "stated",
                                                 "bound", "ratio", ""))
    rows, missed = [], 0
    env_traced = dict(base_env, LD_PRELOAD=SHIM)
    if a.sample:
        env_traced["CLTRACE_SAMPLE"] = "1"
    for name, args, _ in progs:
        cmd = [BC] + args
        wall(cmd, base_env)                       # warm: the kernel cache, the page cache
        a.delay_ns = time_per_call(cmd, env_traced, work) if a.delay else None
        m = measure(cmd, args, env_traced, base_env, work, a)
        un, tr, st, parts, ph_un, ph_tr = m["un"], m["tr"], m["st"], m["parts"], m["ph_un"], m["ph_tr"]
        ms, mst, mup, mu, ratio, lo, hi, verdict = (m[k] for k in ("ms", "mst", "mup", "mu", "ratio", "lo", "hi",
                                                                   "verdict"))
        batches = m["batches"]
        print("%-46s %8.3fs %8.3fs  (%6.3f-%6.3fs) %8.3fs %8.3fs %8.2fx  %s%s" % (
            name, mu, ms, lo, hi, mst, mup, ratio, verdict, "" if len(un) == a.reps else " (%d pairs)" % len(un)))
        if a.placebo:
            print("    placebo (threads that only wake up): %+.3fs (%.3f-%.3fs)" % (m["mp"], m["plo"], m["phi"]))
        if a.delay:
            print("    delay (%d ns before each call, nothing else): %+.3fs (%.3f-%.3fs)" % (
                a.delay_ns, m["md"], m["dlo"], m["dhi"]))
        missed += verdict == "MISSED"
        no_exit = sum("total_ns" not in p for p in parts)
        if no_exit:     # the trace ended without the exit's attributes: only the app threads' share stated
            print("    %d of %d traces state no exit part (their stated figure is the app threads' alone)"
                  % (no_exit, len(parts)))
        split = None
        if len(ph_un) == len(ph_tr) == len(un):
            split = [statistics.median(t[i] - u[i] for t, u in zip(ph_tr, ph_un)) / 1e6 for i in range(len(PHASES))]
        rows.append({"program": name, "args": args, "idle_policy": idle, "untraced_s": un, "traced_s": tr, "stated_s": st, "upper_s": m["up"], "upper_median_s": mup,
                     "stated_parts": [{k: v for k, v in p.items() if k != "text"} for p in parts],
                     "phases_ms": dict(zip(PHASES, split)) if split else None,
                     "phases_untraced_ns": ph_un, "phases_traced_ns": ph_tr,
                     "slowdown_median_s": ms, "slowdown_interval_s": [lo, hi], "stated_median_s": mst,
                     "ratio": ratio, "verdict": verdict, "verdict_after_each_batch": batches,
                     "placebo_s": m["pl"], "placebo_slowdown_median_s": m.get("mp"),
                     "placebo_slowdown_interval_s": [m["plo"], m["phi"]] if m["pl"] else None,
                     "delay_ns": a.delay_ns, "delay_s": m["dl"], "delay_slowdown_median_s": m.get("md"),
                     "delay_slowdown_interval_s": [m["dlo"], m["dhi"]] if m["dl"] else None,
                     "parts_median": {k: statistics.median(p[k] for p in parts)
                                      for k in parts[0] if isinstance(parts[0][k], (int, float))
                                      and not isinstance(parts[0][k], bool) and all(k in p for p in parts)},
                     "runs_without_exit_part": no_exit})
    print("\nwhere it lies: median paired difference by phase (ms), and what the report states for the parts")
    print("%-46s %s  | %12s %8s %8s" % ("program", " ".join("%8s" % p[:8] for p in PHASES), "app threads", "exit", "start"))
    for r in rows:
        pm = r["parts_median"]
        if r["phases_ms"]:
            print("%-46s %s  | %12.1f %8.1f %8.1f" % (
                r["program"][:46], " ".join("%+8.1f" % r["phases_ms"][k] for k in PHASES), pm.get("self_ns", 0) / 1e6,
                pm.get("exit_ns", 0) / 1e6, pm.get("load_ns", 0) / 1e6))
    with open(os.path.join(work, "selfcost.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("(ratio: stated / measured, medians of the paired runs; target: the slowdown within [0.75 x stated, "
          "%s]; the interval: 90 %%, bootstrap of the median paired slowdown)" %
          ("1.25 x stated" if a.figure else "1.25 x bound"))
    if not a.out:
        shutil.rmtree(work)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
