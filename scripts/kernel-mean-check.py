#!/usr/bin/env python3
"""The default's kernel mean against the program's own sparse timing (issue 73's reference), interleaved.

Each round, shuffled: kerneltruth timing 1 launch in 1,000 itself, untraced (the reference); a loop
traced by default, its kernel's mean read from the report (device time / launches); with
--loop bench_calls, that loop untraced too (its wall per launch). Prints the median of the rounds'
means and of their own ratios. Needs `make all test-bins`; on an NVIDIA host source
scripts/nvidia-icd.sh and set CLBENCH_PLATFORM=NVIDIA first (elsewhere it runs on what is there).

  scripts/kernel-mean-check.py [--rounds 21] [--loop kerneltruth|bench_calls]
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import tempfile

B = "build"


def number(out, key):
    m = re.search(key + r"=?\s*(\S+)", out)
    if not m:
        raise SystemExit("no %s in: %s" % (key, out.strip()[-300:]))
    return float(m.group(1))


def traced_mean(cmd, work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ, LD_PRELOAD=B + "/libcltrace.so", CLTRACE_OUTPUT=work + "/t.pftrace", CLTRACE_QUIET="1")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    trace = glob.glob(work + "/t.*pftrace*")[0]
    rep = subprocess.run([B + "/cltrace-report", "--format", "json", trace], capture_output=True, text=True)
    k = json.loads(rep.stdout)["kernels"][0]
    return k["device_ns"] / k["launches"], out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--loop", choices=("kerneltruth", "bench_calls"), default="kerneltruth")
    a = ap.parse_args()
    kt, bc = B + "/tests/kerneltruth", B + "/tests/bench_calls"
    loop = [kt, "none"] if a.loop == "kerneltruth" else [bc, "launch", "20000"]
    work = tempfile.mkdtemp(prefix="kernel-mean-")
    res = {"sparse": [], "default": [], "wall": [], "untraced": []}
    for _ in range(a.rounds):
        arms = ["sparse", "default"] + (["untraced"] if a.loop == "bench_calls" else [])
        random.shuffle(arms)
        for arm in arms:
            if arm == "sparse":
                out = subprocess.run([kt, "sparse"], capture_output=True, text=True, check=True).stdout
                res["sparse"].append(number(out, "event_ns"))
            elif arm == "untraced":
                out = subprocess.run(loop, capture_output=True, text=True, check=True).stdout
                res["untraced"].append(number(out, "wall_ns_per_call"))
            else:
                mean, out = traced_mean(loop, work + "/t")
                res["default"].append(mean)
                if a.loop == "bench_calls":
                    res["wall"].append(number(out, "wall_ns_per_call"))
    shutil.rmtree(work, ignore_errors=True)
    med = statistics.median
    ref, got = med(res["sparse"]), med(res["default"])
    own = [x / y for x, y in zip(res["default"], res["sparse"])]
    print("%s, %d rounds: the default's kernel mean %.0f ns, %.3f of the program's sparse timing (%.0f ns);"
          " per round %.3f (%.2f-%.2f)" % (a.loop, a.rounds, got, got / ref, ref, med(own), min(own), max(own)))
    if res["wall"]:
        u, w = res["untraced"], res["wall"]
        print("its wall per launch: untraced %.0f ns (min %.0f), by default %.0f (min %.0f): %.3fx by the"
              " medians, %.3fx by the minimums" % (med(u), min(u), med(w), min(w), med(w) / med(u), min(w) / min(u)))

if __name__ == "__main__":
    main()
