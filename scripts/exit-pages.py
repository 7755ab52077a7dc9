#!/usr/bin/env python3
"""The kernel's end of a process, untraced and under cltrace, from tracefs.

teardown-check.py splits a run's end at the destructor of the last library
(bench_calls --last-dso): what follows is the kernel's. This says what the
kernel does there, from its own events (tracefs, root only, CLOCK_MONOTONIC):
from that destructor to exit_group, to the last thread's exit (the thread
that finds its group dead), to the last thread out (the process's end); the
pages the process's threads give back after exit_group (kmem:mm_page_free*,
counted by order: their tracing slows the end, so --pages runs are separate
rounds); the threads that exit; and any sleep a thread of the process takes
there, by the task that wakes it (a device's kernel threads, a disk).
Conditions, shuffled in each round: untraced, under cltrace, cltrace
switched off (CLTRACE_DISABLE=1).

    scripts/exit-pages.py [--rounds N] [--pages N] [--platform SUBSTR] [MODE COUNT]

MODE COUNT: a bench_calls program (default: enqueue 100, the 0.05 s program).
Exit 2 where tracefs cannot be used (not root, no tracefs).
docs/PERFORMANCE.md holds what it measured.
"""
import argparse, collections, importlib.util, os, random, re, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("selfcost_check", os.path.join(HERE, "selfcost-check.py"))
sc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sc)
LAST_FINI = os.path.join(os.path.dirname(sc.BC), "last_fini.so")
TRACEFS = "/sys/kernel/tracing"
EVENTS = ["sched:sched_process_exit", "sched:sched_switch", "sched:sched_wakeup", "syscalls:sys_enter_exit_group"]
PAGE_EVENTS = ["kmem:mm_page_free", "kmem:mm_page_free_batched"]
# comm-tid (tgid) [cpu] flags timestamp: event: fields  (options/record-tgid)
LINE = re.compile(r"^\s*(.*?)-(\d+)\s+\(\s*(\S+)\)\s+\[\d+\]\s+\S+\s+([\d.]+):\s+(\w+)[:(]\s*(.*)$")


def tracefs_write(name, value, append=False):
    # os.open: Python's append mode seeks to the end, which set_event refuses
    fd = os.open(os.path.join(TRACEFS, name), os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC))
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def tracefs_read(name):
    with open(os.path.join(TRACEFS, name)) as f:
        return f.read()


def tracefs_saved():
    """What this script changes in tracefs, as it was, for tracefs_restore."""
    try:
        clock = re.search(r"\[(\S+)\]", tracefs_read("trace_clock"))
        return {"tracing_on": tracefs_read("tracing_on").strip(), "trace_clock": clock.group(1) if clock else "local",
                "buffer_size_kb": tracefs_read("buffer_size_kb").split()[0],
                "options/record-tgid": tracefs_read("options/record-tgid").strip(),
                "set_event": tracefs_read("set_event").split()}
    except OSError:
        return None


def tracefs_restore(saved):
    """The tracefs settings as they were, the buffer emptied (20 MB a CPU
    kept would hold gigabytes on a large host)."""
    tracefs_write("tracing_on", "0")
    tracefs_write("set_event", "")
    tracefs_write("trace", "")
    for name in ("trace_clock", "buffer_size_kb", "options/record-tgid"):
        tracefs_write(name, saved[name])
    for e in saved["set_event"]:
        tracefs_write("set_event", e + "\n", append=True)
    tracefs_write("tracing_on", saved["tracing_on"])


def tracefs_setup(pages):
    try:
        tracefs_write("tracing_on", "0")
        tracefs_write("trace_clock", "mono")
        tracefs_write("buffer_size_kb", "20000")
        tracefs_write("options/record-tgid", "1")
        tracefs_write("set_event", "")
        for e in EVENTS + (PAGE_EVENTS if pages else []):
            tracefs_write("set_event", e + "\n", append=True)
    except OSError as e:
        print("exit-pages: tracefs cannot be used here (%s): run as root where tracefs is mounted" % e, file=sys.stderr)
        sys.exit(2)


def run_once(cmd, env):
    """The kernel's end of one run: a dict of figures, or None."""
    tracefs_write("trace", "")
    tracefs_write("tracing_on", "1")
    p = subprocess.Popen(cmd + ["--last-dso", LAST_FINI], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    out, err = p.communicate()
    tracefs_write("tracing_on", "0")
    if p.returncode:
        sys.exit("exit-pages: %s exited %d: %s" % (" ".join(cmd), p.returncode, err[-300:]))
    fini = [int(l.split()[1]) / 1e9 for l in out.splitlines() if l.startswith("last_fini_mono_ns")]
    if not fini:
        sys.exit("exit-pages: %s printed no destructor's time" % " ".join(cmd))
    t_fini, pid = fini[0], str(p.pid)
    group_exit = dead = last_out = None
    pages = threads = 0
    asleep, sleeps = {}, collections.Counter()
    with open(os.path.join(TRACEFS, "trace")) as f:
        for line in f:
            m = LINE.match(line)
            if not m or float(m.group(4)) < t_fini:
                continue
            comm, tid, tgid, t, ev, rest = m.group(1), m.group(2), m.group(3), float(m.group(4)), m.group(5), m.group(6)
            ours = tgid == pid
            if ev in ("sys_exit_group", "sys_enter_exit_group") and ours and group_exit is None:
                group_exit = t
            elif ev == "sched_process_exit" and ours:
                threads += 1
                if re.search(r"group_dead=(1|true)", rest):
                    dead = t
            elif ev == "sched_switch" and ours:
                state = re.search(r"prev_state=(\S+)", rest)
                state = state.group(1) if state else "?"
                if state[0] in "XZ":
                    last_out = t
                elif state[0] in "DS" and group_exit is not None:
                    asleep[tid] = (t, state[0])
            elif ev == "sched_wakeup":
                woken = re.search(r"pid=(\d+)", rest)
                if woken and woken.group(1) in asleep:
                    t0, state = asleep.pop(woken.group(1))
                    sleeps[(state, comm)] += t - t0
            elif ev.startswith("mm_page_free") and ours and group_exit is not None:
                order = re.search(r"order=(\d+)", rest)
                pages += 1 << int(order.group(1)) if order else 1
    if group_exit is None or dead is None or last_out is None:
        return None
    return {"to exit_group": (group_exit - t_fini) * 1e3, "to group dead": (dead - t_fini) * 1e3,
            "to last out": (last_out - t_fini) * 1e3, "pages": pages, "threads": threads,
            "sleeps": {"%s %s" % k: v * 1e3 for k, v in sleeps.items()}}


def rounds(conds, n):
    got = {k: [] for k in conds}
    for _ in range(n):
        order = list(conds)
        random.shuffle(order)
        for k in order:
            r = run_once(*conds[k])
            if r:
                got[k].append(r)
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--pages", type=int, default=6, help="rounds with the page events on (0: none)")
    ap.add_argument("--platform", default=os.environ.get("OCL_PLATFORM", ""))
    ap.add_argument("program", nargs="*", default=["enqueue", "100"])
    a = ap.parse_args()
    base = sc.untraced_env("exit-pages", a.platform, (sc.BC, sc.SHIM, LAST_FINI))
    work = tempfile.mkdtemp(prefix="cltrace-exit-pages.")
    cmd = [sc.BC] + a.program
    conds = {"untraced": (cmd, base),
             "cltrace": (cmd, dict(base, LD_PRELOAD=sc.SHIM, CLTRACE_OUTPUT=os.path.join(work, "t.pftrace"))),
             "cltrace off": (cmd, dict(base, LD_PRELOAD=sc.SHIM, CLTRACE_DISABLE="1"))}
    if not os.path.isdir(os.path.join(TRACEFS, "events")):
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], stderr=subprocess.DEVNULL)
    saved = tracefs_saved()
    try:
        tracefs_setup(False)
        run_once(*conds["untraced"])                 # warm: the page cache, the kernel cache
        timed = rounds(conds, a.rounds)
        counted = {}
        if a.pages:
            tracefs_setup(True)
            counted = rounds(conds, a.pages)
    finally:
        if saved:
            try:
                tracefs_restore(saved)
            except OSError as e:
                print("exit-pages: tracefs settings not restored: %s" % e, file=sys.stderr)
        for f in os.listdir(work):
            os.remove(os.path.join(work, f))
        os.rmdir(work)
    print("the kernel's end: from the last library's destructor, ms, medians (%s, %d CPUs, %d rounds; pages: %d more)"
          % (" ".join(a.program), len(os.sched_getaffinity(0)), a.rounds, a.pages))
    print("%-12s %5s %14s %14s %12s %9s %8s" % ("", "runs", "to exit_group", "to group dead", "to last out",
                                              "pages", "threads"))
    for k in conds:
        v, c = timed[k], counted.get(k, [])
        if not v:
            print("%-12s     0 (no run's end was seen whole)" % k)
            continue
        med = lambda rs, x: statistics.median(r[x] for r in rs)
        print("%-12s %5d %14.3f %14.3f %12.3f %9s %8d" % (k, len(v), med(v, "to exit_group"), med(v, "to group dead"),
                                                         med(v, "to last out"), "%d" % med(c, "pages") if c else "-",
                                                         med(v, "threads")))
        slept = collections.Counter()
        for r in v:
            slept.update(r["sleeps"])
        if slept:
            print("    %s" % ", ".join("%s %.3f ms/run" % (s, t / len(v)) for s, t in slept.most_common(4)))
    print("(pages: given back by the process's threads after exit_group, in rounds of their own; to last out: the"
          " process's last thread off its CPU; a sleep: a thread of the process waiting there, by the task that"
          " woke it)")


if __name__ == "__main__":
    main()
