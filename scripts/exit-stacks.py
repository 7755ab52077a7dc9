#!/usr/bin/env python3
"""Where a process's end goes, in the kernel: the 0.05 s program
(bench_calls enqueue 100), untraced and under cltrace, shuffled in each
round, with every task's kernel stack (/proc/PID/task/*/stack: root only)
read over and over from the loop's end until the process is reaped.

    scripts/exit-stacks.py [--rounds N] [--platform SUBSTR] [--top K] [--timelines K]

Per condition: the end's median, how many runs ended under 60 ms, the
median of each stage of NVIDIA's end (the user space's end: cltrace's exit
and the destructors, up to the main thread's exit; then the kernel's:
mappings and channels let go, up to UVM's address space destroyed; up to
the RCU barrier of the GPU's de-initialization; the barrier; the rest,
the adapter's shutdown), and the stacks seen longest (ms per run that a
task showed each: inner frames, syscall and exit frames left out).
Stages of a driver without UVM (PoCL) are not found: stacks only. Exit 2
when stacks cannot be read (not root) or the program will not run.
scripts/gpu-selfcost.sh's measurement is explained with it
(docs/PERFORMANCE.md, "NVIDIA's end of a process").
"""
import argparse, collections, os, random, statistics, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BC = os.path.join(ROOT, "build/tests/bench_calls")
SHIM = os.path.join(ROOT, "build/libcltrace.so")
OUTER = ("entry_SYSCALL", "do_syscall", "__x64_sys", "x64_sys_call", "do_exit", "do_group_exit", "get_signal",
         "arch_do_signal", "exit_to_user", "syscall_exit", "__schedule", "schedule", "ret_from_fork", "task_work_run",
         "__fput", "____fput", "exit_mmap", "mmput", "exit_mm", "irqentry", "asm_", "kthread")
STAGES = ("user space", "mappings", "to barrier", "RCU barrier", "after")


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return None


def tasks(pid):
    """[(tid, comm, state, frames)] of every task of pid now; None once gone."""
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return None
    out = []
    for t in tids:
        st = read("/proc/%d/task/%s/stat" % (pid, t))
        if not st:
            continue
        frames = [ln.split()[1].split("+")[0] for ln in (read("/proc/%d/task/%s/stack" % (pid, t)) or "").splitlines()
                  if len(ln.split()) > 1]
        out.append((int(t), st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2], frames))
    return out


def label(comm, state, frames):
    inner = [f for f in frames if not f.startswith(OUTER)]
    return "%s %s %s" % (comm[:15], state, " < ".join(inner[:3]) if inner else "(running or idle)")


def stages(pid, loop_end, samples, reaped):
    """The stages' ms, or None where the run shows no UVM teardown."""
    zombie = uvm = b0 = b1 = None
    for t, ts in samples:
        if t < loop_end:
            continue
        if zombie is None and any(x[0] == pid and x[2] in "ZX" for x in ts):
            zombie = t
        frames = " ".join(" ".join(x[3]) for x in ts)
        if uvm is None and "uvm_va_space_destroy" in frames:
            uvm = t
        if "rcu_barrier" in frames:
            b0, b1 = b0 or t, t
    if zombie is None or uvm is None:
        return None
    b0, b1 = (b0, b1) if b0 else (uvm, uvm)
    return [(zombie - loop_end) / 1e6, (uvm - zombie) / 1e6, (b0 - uvm) / 1e6, (b1 - b0) / 1e6, (reaped - b1) / 1e6]


def run(env, args):
    """One run: (loop end, reaped, samples, pid), monotonic ns; None if it failed."""
    err = tempfile.TemporaryFile()
    p = subprocess.Popen([BC] + args, env=env, stdout=subprocess.PIPE, stderr=err)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(p.stdout.read().decode().splitlines()))
    reader.start()
    samples = []
    while p.poll() is None:
        ts = tasks(p.pid)
        if ts is not None:
            samples.append((time.monotonic_ns(), ts))
    reaped = time.monotonic_ns()
    reader.join()
    marks = [float(x) for ln in lines if ln.startswith("phases_mono_ns") for x in ln.split()[1:]]
    if p.returncode or len(marks) != 4:
        err.seek(0)
        return "exited %d, %s" % (p.returncode, err.read().decode(errors="replace")[-400:].strip() or "no output")
    return marks[2], reaped, samples, p.pid


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--platform", default=os.environ.get("OCL_PLATFORM", ""))
    ap.add_argument("--top", type=int, default=12, help="stacks shown per condition")
    ap.add_argument("--timelines", type=int, default=0, help="print this many runs' changes, per condition")
    a = ap.parse_args()
    if not os.access(BC, os.X_OK) or not os.access(SHIM, os.R_OK):
        sys.exit("exit-stacks: make all build/tests/bench_calls first")
    if not read("/proc/self/stack"):
        print("exit-stacks: kernel stacks cannot be read here (/proc/PID/stack needs root)", file=sys.stderr)
        return 2
    base = dict(os.environ, CLTRACE_QUIET="1")
    base.pop("LD_PRELOAD", None)
    if a.platform:
        base["OCL_PLATFORM"] = a.platform
    out_dir = "/tmp/cltrace-exit-stacks.%d" % os.getpid()
    os.makedirs(out_dir, exist_ok=True)
    conds = {"untraced": base, "traced": dict(base, LD_PRELOAD=SHIM, CLTRACE_OUTPUT=out_dir + "/t.pftrace")}
    ends = {k: [] for k in conds}
    stage = {k: [] for k in conds}
    seen = {k: collections.Counter() for k in conds}
    shown = collections.Counter()
    for _ in range(a.rounds):
        for k in random.sample(list(conds), len(conds)):
            r = run(conds[k], ["enqueue", "100"])
            for f in os.listdir(out_dir):
                os.unlink(os.path.join(out_dir, f))
            if isinstance(r, str):
                print("exit-stacks: bench_calls %s: %s" % (k, r), file=sys.stderr)
                return 2
            loop_end, reaped, samples, pid = r
            ends[k].append((reaped - loop_end) / 1e6)
            s = stages(pid, loop_end, samples, reaped)
            if s:
                stage[k].append(s)
            prev, last = loop_end, None
            for t, ts in samples:
                if t < loop_end:
                    continue
                for lb in {label(c, st, fr) for _, c, st, fr in ts}:
                    seen[k][lb] += (t - prev) / 1e6
                prev = t
                if shown[k] < a.timelines:
                    now = sorted("%d %s" % (x[0], label(x[1], x[2], x[3])) for x in ts)
                    if now != last:
                        print("  %s +%7.2f ms  %s" % (k, (t - loop_end) / 1e6, " | ".join(now)))
                        last = now
            shown[k] += 1
    os.rmdir(out_dir)
    for k in conds:
        e = ends[k]
        q = statistics.quantiles(e, n=4) if len(e) > 1 else [e[0]] * 3
        print("== %s: %d runs, the end %.1f ms (quartiles %.1f, %.1f), %d under 60 ms"
              % (k, len(e), statistics.median(e), q[0], q[2], sum(x < 60 for x in e)))
        if stage[k]:
            print("   stages, median ms of the %d runs with UVM's teardown: %s" % (len(stage[k]), ", ".join(
                "%s %.1f" % (n, statistics.median(r[i] for r in stage[k])) for i, n in enumerate(STAGES))))
        for lb, ms in seen[k].most_common(a.top):
            print("   %8.2f ms/run  %s" % (ms / len(e), lb))
    return 0


if __name__ == "__main__":
    sys.exit(main())
