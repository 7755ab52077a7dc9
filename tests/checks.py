#!/usr/bin/python3
"""Assertions on decoded traces, one per test: checks.py CHECK TRACE [ARGS...]
Exit 0 when every expectation holds; otherwise print what differs, exit 1."""
import collections
import json
import math
import re
import os
import sys

from tracedump import decode

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def calls(t, name):
    return [s for s in t["slices"] if s["name"] == name]


def api_only(t):
    """The API-call slices (on thread tracks), without device commands."""
    return dict(t, slices=[s for s in t["slices"] if s["tid"] is not None])


def common(t, expected_calls=None):
    a = t["attributes"]
    expect(a.get("cltrace.calls") == len(t["slices"]),
           "cltrace.calls %s != %d slices" % (a.get("cltrace.calls"), len(t["slices"])))
    expect(all(s["dur"] is not None and s["dur"] >= 0 for s in t["slices"]), "a slice without an end")
    if expected_calls is not None:
        expect(len(t["slices"]) == expected_calls, "%d slices, want %d" % (len(t["slices"]), expected_calls))


def check_vecadd(t, n="1024", iters="3"):
    n_items, iters = int(n), int(iters)
    nbytes, gws = 4 * n_items, (n_items + 63) // 64 * 64
    common(t)
    expect(t["attributes"].get("cltrace.dropped_calls") == 0, "dropped calls")
    n = collections.Counter(s["name"] for s in t["slices"])
    want = {"clGetPlatformIDs": 1, "clGetDeviceIDs": 1, "clCreateContext": 1, "clCreateKernel": 2,
            "clCreateBuffer": 3, "clSetKernelArg": 6, "clEnqueueWriteBuffer": iters,
            "clEnqueueNDRangeKernel": iters, "clEnqueueReadBuffer": iters, "clReleaseEvent": 2 * iters,
            "clFinish": 2, "clReleaseMemObject": 3, "clBuildProgram": 1}
    for k, v in want.items():
        expect(n.get(k) == v, "%s called %s times, want %d" % (k, n.get(k), v))
    ok_k, bad_k = calls(t, "clCreateKernel")
    expect(ok_k["args"].get("kernel_name") == "vadd" and ok_k["args"].get("errcode_ret") == "CL_SUCCESS",
           "clCreateKernel args %r" % ok_k["args"])
    expect(bad_k["args"].get("kernel_name") == "no_such_kernel" and
           bad_k["args"].get("errcode_ret") == "CL_INVALID_KERNEL_NAME" and bad_k["args"].get("result") == 0,
           "failing clCreateKernel args %r" % bad_k["args"])
    kid = ok_k["args"]["result"]
    b = calls(t, "clCreateBuffer")
    expect(b[1]["args"].get("flags") == "CL_MEM_READ_ONLY|CL_MEM_COPY_HOST_PTR" and b[1]["args"].get("size") == nbytes,
           "clCreateBuffer args %r" % b[1]["args"])
    expect(len({x["args"]["result"] for x in b}) == 3, "buffers do not have distinct ids")
    sa = calls(t, "clSetKernelArg")
    expect(all(x["args"]["kernel"] == kid for x in sa[:4]), "clSetKernelArg kernel id != clCreateKernel result")
    expect(sa[0]["args"].get("arg_object") == b[0]["args"]["result"], "arg 0 is not buffer a: %r" % sa[0]["args"])
    expect(sa[3]["args"].get("arg_value") == n_items and sa[3]["args"].get("arg_size") == 4, "scalar arg %r" % sa[3]["args"])
    expect(sa[4]["args"].get("result") == "CL_INVALID_KERNEL", "NULL kernel: %r" % sa[4]["args"])
    expect(sa[5]["args"].get("result") == "CL_INVALID_ARG_INDEX", "bad index: %r" % sa[5]["args"])
    fin = calls(t, "clFinish")
    expect(fin[1]["args"].get("result") == "CL_INVALID_COMMAND_QUEUE", "clFinish(NULL): %r" % fin[1]["args"])
    for w, k, r in zip(calls(t, "clEnqueueWriteBuffer"), calls(t, "clEnqueueNDRangeKernel"),
                       calls(t, "clEnqueueReadBuffer")):
        expect(k["args"].get("global_work_size") == [gws] and k["args"].get("local_work_size") == [64] and
               k["args"].get("work_dim") == 1 and k["args"].get("global_work_offset") == 0,
               "NDRange args %r" % k["args"])
        expect(k["args"].get("event_wait_list") == [w["args"]["event"]], "kernel does not wait on the write event")
        expect(r["args"].get("event_wait_list") == [k["args"]["event"]], "read does not wait on the kernel event")
        expect(r["args"].get("blocking_read") is True and r["args"].get("size") == nbytes, "read args %r" % r["args"])
        expect(w["args"].get("blocking_write") is False, "write args %r" % w["args"])
    evs = [x["args"]["event"] for x in calls(t, "clEnqueueWriteBuffer") + calls(t, "clEnqueueNDRangeKernel")]
    expect(len(set(evs)) == len(evs), "event ids not unique")
    ts = [s["ts"] for s in t["slices"]]
    expect(ts == sorted(ts), "one thread's calls out of order")


def check_threads(t, nthreads, ncalls, setup="0"):
    nthreads, ncalls = int(nthreads), int(ncalls)
    common(t)
    expect(t["attributes"].get("cltrace.dropped_calls") == 0, "dropped calls")
    sa = calls(t, "clSetKernelArg")
    expect(len(sa) == nthreads * ncalls, "%d clSetKernelArg recorded, want %d" % (len(sa), nthreads * ncalls))
    per = collections.Counter(s["tid"] for s in sa)
    expect(len(per) == nthreads and set(per.values()) == {ncalls}, "per-thread counts %r" % dict(per))
    for tid in per:
        vals = [s["args"]["arg_value"] for s in sa if s["tid"] == tid]
        expect(vals == list(range(ncalls)), "thread %s: values out of order or lost" % tid)


def check_dropped(t, total):
    a = t["attributes"]
    dropped = a.get("cltrace.dropped_calls", 0)
    expect(dropped > 0, "nothing dropped: the test did not overflow the buffer")
    expect(a.get("cltrace.calls", 0) + dropped == int(total),
           "recorded %s + dropped %s != %s calls" % (a.get("cltrace.calls"), dropped, total))
    last = [c["value"] for c in t["counters"] if c["name"] == "cltrace dropped calls"]
    expect(last and last[-1] == dropped, "dropped counter %r != %d" % (last[-1:], dropped))


def check_timeline(t, durations_file):
    api = [s for s in t["slices"] if s["tid"] is not None]
    dev = sorted((s for s in t["slices"] if (s["track_name"] or "").startswith("Device ")), key=lambda s: s["ts"])
    enq = [s for s in api if s["name"].startswith("clEnqueue") and
           "CL_SUCCESS" in (s["args"].get("result"), s["args"].get("errcode_ret"))]
    expect(len(enq) == 16, "%d successful enqueues, want 16" % len(enq))
    # each queue's track named for its device and the queue as the program knows it
    names = sorted({d["track_name"] for d in dev})
    expect(names and all(re.match(r"^Device \d+ queue \d+ \((in order|out of order)(, profiling)?\)$", n)
                         for n in names), "queue tracks: %r" % names)
    a = t["attributes"]
    untimed = a.get("cltrace.commands_untimed", 0)
    # a driver may give no profiling data for a command that moves nothing
    # (NVIDIA: a write-invalidate map): counted as untimed, not drawn
    expect(len(dev) + untimed == len(enq) and untimed <= 1,
           "%d device commands + %d untimed for %d enqueues" % (len(dev), untimed, len(enq)))
    by_flow = {f: s for s in enq for f in s["flows"]}
    expect(len(by_flow) == len(enq), "not every enqueue carries one flow id")
    for d in dev:
        src = [by_flow.get(f) for f in d["terminating_flows"]]
        expect(len(src) == 1 and src[0] is not None, "device command %s without a flow from its enqueue" % d["name"])
        if src and src[0]:
            expect(d["ts"] >= src[0]["ts"], "%s starts %d ns before its enqueue" % (d["name"], src[0]["ts"] - d["ts"]))
            expect(d["dur"] == d["args"]["duration_ns"], "%s: slice %s ns, device %s ns" % (d["name"], d["dur"], d["args"]["duration_ns"]))
    own = [l.split() for l in open(durations_file)]
    q0 = [d for d in dev if d["args"]["queue"] == dev[0]["args"]["queue"]][:6]
    names = ["WriteBuffer", "scale", "sum_local", "CopyBuffer", "FillBuffer", "ReadBuffer"]
    expect([d["name"].split(" ")[0] for d in q0] == names, "first queue's commands: %r" % [d["name"] for d in q0])
    expect(q0[0]["name"] == "WriteBuffer 256 KiB", "a transfer named by its size: %r" % q0[0]["name"])
    for (kind, ns), d in zip(own, q0):
        expect(int(ns) == d["args"]["duration_ns"], "%s: app read %s ns, trace has %s" % (kind, ns, d["args"]["duration_ns"]))
    w, sc, sl, cp, fl, rd = q0
    expect(w["args"].get("direction") == "host_to_device" and w["args"].get("bytes") == 4 << 16, "write: %r" % w["args"])
    expect(rd["args"].get("direction") == "device_to_host" and rd["args"].get("pinned") is True, "read: %r" % rd["args"])
    expect(cp["args"].get("direction") == "device_to_device", "copy: %r" % cp["args"])
    expect(fl["args"].get("direction") == "device", "fill: %r" % fl["args"])
    expect(w["args"].get("pinned") is False, "write buffer is not pinned: %r" % w["args"])
    expect(sc["args"].get("local_work_size") == "NULL" and sc["args"].get("global_work_size") == [1 << 16],
           "scale: %r" % sc["args"])
    expect(sl["args"].get("local_arg_bytes") == 256 and sl["args"].get("work_groups") == 1024 and
           sl["args"].get("work_group_size") == 64, "sum_local: %r" % sl["args"])
    expect(sl["args"].get("kernel_work_group_size", 0) > 0 and "preferred_work_group_size_multiple" in sl["args"],
           "kernel work-group info missing: %r" % sl["args"])
    # argument values: buffers as object ids, the __local one as its (absent) value
    expect(len(sl["args"].get("kernel_args", [])) == 3 and sl["args"]["kernel_args"][0] == w["args"].get("buffer"),
           "sum_local kernel_args %r" % sl["args"].get("kernel_args"))
    expect(sl["args"].get("kernel_buffers", "").startswith("arg 0: buffer %d, 256 KiB" % w["args"].get("buffer")),
           "sum_local's buffers by size: %r" % sl["args"].get("kernel_buffers"))
    mp = [d for d in dev if d["name"] == "MapBuffer"]
    um = [d for d in dev if d["name"].split(" ")[0] == "UnmapMemObject"]
    expect(len(mp) + untimed == 1 and all(m["args"].get("direction") is None for m in mp),
           "map for writing moves nothing: %r" % mp)
    expect(len(um) == 1 and um[0]["args"].get("direction") == "host_to_device" and um[0]["args"].get("bytes") == 4096,
           "unmap: %r" % [u["args"] for u in um])
    expect(a.get("cltrace.device_commands") == len(dev) and a.get("cltrace.commands_unmatched") == 0,
           "attributes %r" % {k: v for k, v in a.items() if "command" in k})
    expect(a.get("cltrace.device.0.compute_units", 0) > 0 and a.get("cltrace.device.0.name"), "device facts missing")
    expect(a.get("cltrace.device.0.clock_samples", 0) > 0, "no clock samples")
    mem = [c for c in t["counters"] if (c["name"] or "").startswith("device memory")]
    expect(mem and max(c["value"] for c in mem) == (4 << 16) * 2 + (4 << 16) // 64 and mem[-1]["value"] == 0,
           "device memory counter: %r" % [c["value"] for c in mem])


def check_launches(t, n, sample=""):
    """bench_calls launch N: every launch a host call; in default mode every
    one timed, with its device slice and flow; sampled: the first FIRST and 1
    in EVERY after (per kernel and configuration), the others marked."""
    n = int(n)
    api = [s for s in t["slices"] if s["tid"] is not None]
    enq = [s for s in api if s["name"] == "clEnqueueNDRangeKernel"]
    dev = [s for s in t["slices"] if (s["track_name"] or "").startswith("Device ") and s["name"] == "k"]
    expect(len(enq) == n + 1, "%d launches recorded, want %d" % (len(enq), n + 1))   # + the warm-up one
    out = [s for s in enq if s["args"].get("device_timed") is False]
    timed = [s for s in enq if s["flows"] and s not in out]   # an untimed launch's arrow ends at its estimate
    a = t["attributes"]
    if not sample:
        expect(len(timed) == n + 1 and not out, "%d of %d launches timed" % (len(timed), n + 1))
    else:
        first, every = (int(x) for x in sample.split(",")[:2])
        want = first + len(range(first, n + 1, every))
        expect(len(timed) == want and len(out) == n + 1 - want,
               "%d timed, %d sampled out; want %d timed" % (len(timed), len(out), want))
        expect(a.get("cltrace.sampling", "").startswith("first %d, then 1 in %d" % (first, every)),
               "sampling attribute %r" % a.get("cltrace.sampling"))
        expect(a.get("cltrace.sampled_out.0", "").endswith("|%d" % (n + 1 - want)),
               "sampled-out launches %r" % a.get("cltrace.sampled_out.0"))
    by_flow = {f: s for s in timed for f in s["flows"]}
    expect(len(dev) == len(timed), "%d device slices for %d timed launches" % (len(dev), len(timed)))
    est = [s for s in t["slices"] if (s["track_name"] or "").startswith("Device ") and s["args"].get("estimated")]
    expect(len(est) == len(out), "%d estimated slices for %d launches left untimed" % (len(est), len(out)))
    for d in dev:
        src = [by_flow.get(f) for f in d["terminating_flows"]]
        expect(len(src) == 1 and src[0] is not None and d["ts"] >= src[0]["ts"],
               "device slice at %d without its enqueue's flow" % d["ts"])
    expect(a.get("cltrace.commands_unmatched") == 0, "unmatched completions: %r" % a.get("cltrace.commands_unmatched"))
    # cltrace's own cost: stated, measured, with a per-thread counter
    expect(a.get("cltrace.self_ns", 0) > 0 and a.get("cltrace.run_ns", 0) > a.get("cltrace.self_ns", 0),
           "self cost %r of run %r" % (a.get("cltrace.self_ns"), a.get("cltrace.run_ns")))
    expect(a.get("cltrace.self_ns") == a.get("cltrace.self_hot_path_ns", 0) + a.get("cltrace.self_device_timing_ns", 0)
           + a.get("cltrace.self_waited_ns", 0), "self cost parts do not add up")
    selfc = [c for c in t["counters"] if (c["name"] or "").startswith("cltrace self time (ns), thread ")]
    expect(selfc and selfc[-1]["value"] == a.get("cltrace.self_ns"),
           "per-thread self-time counter %r" % [c["value"] for c in selfc][-3:])
    # an upper bound from the calibration's markers, or (a queue timed by
    # callbacks on a device whose clock is the host's raw one) reads of it
    expect(a.get("cltrace.device.0.clock_upper_bounds", 0) > 0 or a.get("cltrace.device.0.clock_host_reads", 0) > 1,
           "no clock evidence beyond the enqueues' brackets: %r" % {k: v for k, v in a.items() if "clock" in k})
    # the collector held the completions back while the app enqueued (a
    # backlog under its bound, no queue released): every one collected at
    # the app's pause (its clFinish) or at its exit, none while it enqueued
    got = {k: a.get("cltrace.completions_" + k) for k in ("at_pauses", "while_enqueuing", "at_exit")}
    expect(None not in got.values() and got["at_pauses"] + got["at_exit"] == len(timed)
           and got["while_enqueuing"] == 0, "completions collected %r, want %d at pauses or exit" % (got, len(timed)))
    expect(a.get("cltrace.exit_wait_ns", -1) >= 0, "no exit wait stated")
    expect(a.get("cltrace.device.0.write_event_cost_ns", -1) >= 0, "no write event cost measured")


def check_report_clock_kept(report_json, trace):
    """While commands run, the collector takes a marker every 10 ms on a
    queue of cltrace's own (capture/clock.c): more than the calibration's 16
    (4 on a CPU device: capture/hooks.c); on a device whose clock is the
    host's raw one (PoCL's queues timed by callbacks), reads of that clock
    instead: one as the queue is made, one at the collector's first look,
    one at the exit whether or not anything was left to collect there, more
    every 10 ms where it looks meanwhile, pending commands or not (a CPU
    device's collector stays out while the device runs: 8-12 in 7 runs of
    30,000 launches here; CI once read 2, with no exit read, 2026-12-02);
    the kept bounds never contradict each other."""
    d = json.load(open(report_json))["devices"][0]
    if d["clock_method"].startswith("host_raw_clock_reads"):
        a = decode(trace)["attributes"]
        expect(d["clock_markers"] == 0 and a.get("cltrace.device.0.clock_host_reads", 0) >= 3,
               "host clock reads: %r" % {k: v for k, v in a.items() if "clock" in k})
    else:
        calibration = 4 if d["device_type"] & 2 else 16    # CL_DEVICE_TYPE_CPU
        expect(d["clock_markers"] > calibration, "only the calibration's markers: %r" % d)
    expect(d["clock_contradictions"] == 0, "contradicting clock bounds: %r" % d)
    expect(0 < d["clock_residual_ns"] < 1000000, "clock residual %r" % d)
    expect(0 < d["clock_residual_median_ns"] <= d["clock_residual_ns"] + 100, "median clock residual %r" % d)
    # the narrowest the evidence ever was: no command's place can be surer
    # (a chord may beat it by the aging it leaves out: not by more than 100 ns)
    expect(0 < d["clock_floor_ns"] <= d["clock_residual_ns"] + 100, "clock floor %r" % d)


def check_report_selfcost(report_dir, sampled=""):
    """Every format states cltrace's own cost, as a figure and a bound; the
    account (--explain cost, Markdown's and HTML's details) says what each
    counts; a sampled run's kernel table says its device time is
    extrapolated and from how many launches."""
    import html as htmllib
    import xml.etree.ElementTree as ET
    d = report_dir
    txt, md, html, cost = (open(os.path.join(d, "r." + e)).read() for e in ("txt", "md", "html", "cost"))
    html = htmllib.unescape(re.sub(r"<[^>]+>", " ", html))
    # prose is wrapped for a terminal: compared with its lines joined
    txt, md, html, cost = (re.sub(r"\s+", " ", t) for t in (txt, md, html, cost))
    js = json.load(open(os.path.join(d, "r.json")))
    junit = ET.parse(os.path.join(d, "r.xml"))
    sc = js.get("self_cost", {})
    expect(sc.get("known") and sc.get("self_ns", 0) > 0 and 0 < sc.get("percent", 0) < 100, "json self_cost %r" % sc)
    expect(sc.get("upper_ns", 0) >= sc.get("total_ns", 1), "json self_cost upper_ns %r" % sc)
    expect(js["summary"]["self_cost_ns"] == sc["total_ns"] and js["summary"]["self_cost_upper_ns"] == sc["upper_ns"],
           "json summary's cost %r" % js["summary"])
    line = re.compile(r"cltrace added [0-9.]+ m?s \([0-9.]+ %\), at most [0-9.]+ m?s \([0-9.]+ %\) on this machine")
    for name, text in (("text", txt), ("markdown", md), ("html", html), ("account", cost)):
        expect(line.search(text), name + ": no self-cost line with its bound")
    expect(line.search(txt[:2000]), "text: the cost is not on the first screen")
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    expect(int(props.get("cltrace.self_ns", "0")) == sc.get("self_ns"), "junit self_ns %r" % props.get("cltrace.self_ns"))
    expect(line.search(props.get("cltrace.self_cost", "")), "junit self_cost property")
    expect(sc.get("exit_wait_ns", -1) >= 0, "json self_cost without exit_wait_ns %r" % sc)
    # the account's figure and bound, in ms, where it is shown
    acc_md, acc_html = md[md.find("cltrace's own cost:"):], html[html.rfind("cltrace's own cost"):]
    for name, text in (("account", cost), ("markdown", acc_md), ("html", acc_html)):
        expect(re.search(r"the figure\W+%.3f" % (sc["total_ns"] / 1e6), text) and
               re.search(r"upper bound\W+%.3f" % (sc["upper_ns"] / 1e6), text), name + ": the account's totals")
        for part in ("at exit, collecting device times", "at exit, finishing the trace", "starting (its constructor, its first call)"):
            expect(part in text, name + ": the account lacks " + part)
        expect(not re.search(r"2-vCPU|16-core|us each", text), name + ": a price measured elsewhere")
    # the bound: its threads' CPU while the app ran beyond the estimate, and
    # a CPU device's idle starts (the median's excess each, at most all of it)
    if "competing_ns" in sc:
        share = min(1.0, max(0.0, sc["app_cpus_wanted"] / max(1, sc["cpus"] - 1)))
        bound = sc["total_ns"] + max(0, int(sc["sched_own_cpu_ns"] * share) - sc["competing_ns"])
    else:
        bound = sc["total_ns"] + sc["writer_cpu_ns"] + sc["collector_cpu_ns"]
    # a CPU device's commands that found their queue idle: their waits to
    # start, the median's beyond the quickest tenth's, each, in the bound
    for dev in js.get("devices", []):
        n, total, excess = dev.get("idle_starts", -1), dev.get("idle_start_ns", -1), dev.get("idle_start_excess_ns", -1)
        expect(n >= 0 and 0 <= excess <= total and 0 <= dev.get("idle_start_quick_ns", -1) <=
               dev.get("idle_start_median_ns", -1), "idle starts %r" % dev)
        typical = max(0, dev["idle_start_median_ns"] - dev["idle_start_quick_ns"])
        if dev.get("device_type", 0) & 2 and n > 0 and typical > 0 and excess > 0:
            bound += min(excess, typical * n)
            for name, text in (("account", cost), ("markdown", md), ("html", html)):
                expect("commands' waits for the driver's thread" in text, name + ": no idle starts row")
    expect(abs(sc["upper_ns"] - bound) <= 0.001 * bound + 2, "json upper_ns %d, its parts %d" % (sc["upper_ns"], bound))
    # the whole run: the app's threads, the exit (its wait for device times
    # in it), the constructor; the total is their sum
    expect(sc.get("exit_ns", 0) >= sc.get("exit_wait_ns", 0) and sc.get("exit_ns", 0) > 0 and
           sc.get("total_ns") == sc["self_ns"] + sc["exit_ns"] + sc.get("load_ns", -1) + sc.get("competing_ns", 0) and
           sc.get("load_ns", 0) > 0 and
           sc.get("cpus", 0) >= 1 and 0 <= sc.get("cpus_busy_percent", -1) <= 100, "json self_cost whole run %r" % sc)
    # what cltrace's threads took from the app: their CPU while it ran, all
    # of it in the share of the time the app wanted more than cpus - 1 CPUs,
    # elsewhere as much as the app waited for a CPU per CPU-ns run
    expect(os.path.exists("/proc/self/schedstat") <= ("competing_ns" in sc), "json self_cost: no scheduler's account %r" % sc)
    # (at idle priority only the latter: the scheduler gave them no CPU the app wanted)
    if "competing_ns" in sc:
        share = min(1.0, max(0.0, sc["app_cpus_wanted"] - (sc["cpus"] - 1)))
        share = 0 if sc.get("own_threads_priority") == "idle" else share
        wait = sc["sched_app_wait_ns"] / (sc["sched_app_cpu_ns"] + sc["sched_own_cpu_ns"])
        factor = min(1.0, share + (1 - share) * wait)
        expect(sc["sched_span_ns"] > 0 and sc["sched_app_cpu_ns"] > 0 and sc["app_cpus_wanted"] >= 0 and
               abs(sc["app_wait_per_cpu"] - wait) <= 0.0001 and
               abs(sc["competing_ns"] - sc["sched_own_cpu_ns"] * factor) <= 0.002 * sc["sched_own_cpu_ns"] + 1,
               "json self_cost competing_ns %r" % sc)
    # its threads' wake-ups: said in the account, with the app's turns, never
    # counted; the machine's idle policy beside them where it has one
    if "competing_ns" in sc:
        expect(sc.get("sched_own_runs", 0) > 0 and sc.get("sched_app_runs", 0) > 0 and
               isinstance(sc.get("hypervisor"), bool), "json self_cost runs %r" % sc)
        expect(("its threads woke %d times while the app ran (%d turns; the app's threads' turns: %d)"
                % (sc.get("sched_own_wakeups", -1), sc["sched_own_runs"], sc["sched_app_runs"])) in cost,
               "the account: the wake-ups are not said")
        # read after the turns, a file apart: a thread may have slept once more since
        expect(0 <= sc.get("sched_own_wakeups", -1) <= sc["sched_own_runs"] + 8, "json sched_own_wakeups %r" % sc)
        idle = "/sys/module/haltpoll/parameters/guest_halt_poll_ns"
        if os.path.exists(idle):
            expect(sc.get("guest_halt_poll_ns") == int(open(idle).read()), "json guest_halt_poll_ns %r" % sc)
            expect(not sc["hypervisor"] or int(open(idle).read()) or "idle CPUs halt at once" in cost,
                   "the account: the VM is not said")
    # the priority its threads ran at (writer/ownthreads.c)
    pri = {"idle": "its threads ran at idle priority", "normal": "its threads ran at normal priority ("}.get(
        sc.get("own_threads_priority"), "MISSING")
    if sc.get("own_threads_lifted"):
        pri = "put back at normal"
    expect(sc.get("own_threads_priority") in ("idle", "normal"), "json own_threads_priority %r" % sc)
    expect(pri in cost, "the account: the priority is not said (%s)" % pri)
    expect(int(props.get("cltrace.self_total_ns", "0")) == sc.get("total_ns"),
           "junit self_total_ns %r" % props.get("cltrace.self_total_ns"))
    expect(js.get("devices") and js["devices"][0].get("clock_residual_ns", -1) >= 0, "json devices %r" % js.get("devices"))
    floor = js["devices"][0].get("clock_floor_ns", 0)
    expect(floor > 0 and int(props.get("cltrace.device.0.clock_floor_ns", "0")) == floor,
           "clock floor: json %r, junit %r" % (floor, props.get("cltrace.device.0.clock_floor_ns")))
    for name, text in (("text", txt), ("markdown", md), ("html", html)):
        expect("its evidence never narrower than %.1f us" % (floor / 1e3) in text, name + ": the clock floor is not stated")
    if not js["kernels"]:       # a program of transfers alone
        return
    k = js["kernels"][0]
    if sampled:
        expect(k["extrapolated"] and k["timed_launches"] < k["launches"], "json kernel %r" % k)
        for name, text in (("text", txt), ("markdown", md), ("html", html)):
            expect("extrapolated from %d of %d launches" % (k["timed_launches"], k["launches"]) in text,
                   name + ": the kernel table does not say it extrapolated")
        # the untimed launches are drawn where they ran (estimated): the timeline, its idle time, stay
        expect("drawn where they ran" in txt, "the first screen does not say the untimed launches are estimated")
    else:
        expect(not k["extrapolated"] and k["timed_launches"] == k["launches"], "json kernel %r" % k)


def check_nvidia(t):
    """NVIDIA specifics: warp width, registers from the hidden verbose build."""
    a = t["attributes"]
    dev = [s for s in t["slices"] if (s["track_name"] or "").startswith("Device ")]
    expect(a.get("cltrace.device.0.warp_size") == 32, "warp size %r" % a.get("cltrace.device.0.warp_size"))
    expect(a.get("cltrace.device.0.compute_capability", 0) >= 70, "compute capability missing")
    kern = [d for d in dev if d["args"].get("command_type") == "CL_COMMAND_NDRANGE_KERNEL"]
    expect(kern and all(d["args"].get("registers_per_work_item", 0) > 0 for d in kern),
           "register counts missing: %r" % [(d["name"], d["args"].get("registers_per_work_item")) for d in kern])


def check_registers(t, regs, kernels):
    """Every kernel's timed command carries its register count (regs; 0: none); kernels launched"""
    dev = [s for s in t["slices"] if (s["track_name"] or "").startswith("Device ")]
    kern = [d for d in dev if d["args"].get("command_type") == "CL_COMMAND_NDRANGE_KERNEL"]
    expect(len(kern) >= int(kernels), "%d kernel commands, expected %s" % (len(kern), kernels))
    got = collections.Counter(d["args"].get("registers_per_work_item", 0) for d in kern)
    expect(set(got) == {int(regs)}, "registers per work-item: %r, expected %s on each" % (dict(got), regs))


def check_estimates(t, kernel, regs):
    """A sampled loop of one kernel and configuration, then a transfer: every untimed launch drawn
    at the length of timed launches of its own configuration, the transfer after the last of them
    (its queue's order), every timed launch with its register count"""
    timed = [s for s in t["slices"] if s["name"] == kernel]
    est = [s for s in t["slices"] if s["name"] == kernel + " (estimated)"]
    expect(len(timed) >= 16 and len(est) >= 100, "%d timed, %d estimated launches" % (len(timed), len(est)))
    unsized = [s for s in est if not s["args"].get("timed_launches_averaged")]
    expect(not unsized, "%d of %d estimated launches sized by no timed launch of theirs" % (len(unsized), len(est)))
    got = collections.Counter(s["args"].get("registers_per_work_item", 0) for s in timed)
    expect(set(got) == {int(regs)}, "registers per work-item: %r, expected %s on each" % (dict(got), regs))
    reads = [s for s in t["slices"] if s["name"].startswith("ReadBuffer")]
    last = max((s["ts"] + s["dur"] for s in est + timed), default=0)
    expect(reads and reads[-1]["ts"] >= last, "the read after the loop drawn before the loop's end")
    print("%d timed launches, %d estimated (each sized by its configuration's timed ones), the read after them"
          % (len(timed), len(est)))


def check_held_order(t, kernel, regs):
    """More launches held for their counts than the writer keeps: drawn in their order (the slices'
    order in the trace is their start's), those before the counts came without, every later one
    with them"""
    k = [s for s in t["slices"] if s["name"] == kernel]
    back = sum(1 for a, b in zip(k, k[1:]) if b["ts"] < a["ts"])
    r = [s["args"].get("registers_per_work_item", 0) for s in k]
    first = next((i for i, x in enumerate(r) if x), len(r))
    expect(len(k) > 4096 and back == 0, "%d launches, %d drawn before one that started earlier" % (len(k), back))
    expect(first < len(r) and all(x == int(regs) for x in r[first:]),
           "registers by launch: %d without, then %r" % (first, collections.Counter(r[first:])))
    print("%d launches drawn in order: %d before the counts came, %d with them" % (len(k), first, len(r) - first))


def check_figures(t, durations_file):
    """Not a check: prints what was measured (for a person and an issue note)."""
    a = t["attributes"]
    for k in sorted(a):
        if k.startswith("cltrace.device.0.") or "command" in k:
            print("  %-45s %s" % (k, a[k]))
    dev = sorted((s for s in t["slices"] if (s["track_name"] or "").startswith("Device ")), key=lambda s: s["ts"])
    api = {f: s for s in t["slices"] if s["tid"] is not None for f in s["flows"]}
    own = [l.split() for l in open(durations_file)]
    print("  %-12s %12s %12s %14s %10s" % ("command", "app ns", "trace ns", "enqueue->start", "regs"))
    for i, d in enumerate(dev):
        src = [api[f] for f in d["terminating_flows"] if f in api]
        lead = d["ts"] - src[0]["ts"] if src else None
        print("  %-12s %12s %12d %14s %10s" % (d["name"][:12], own[i][1] if i < len(own) else "-",
                                               d["args"]["duration_ns"], lead, d["args"].get("registers_per_work_item", "")))


def check_dlopen_app(t, total=None):
    """hashcat-style loading (dlopen, dlsym), traced."""
    common(t, None if total is None else int(total))
    n = collections.Counter(s["name"] for s in t["slices"])
    for name, want in (("clGetPlatformIDs", 1), ("clBuildProgram", 1), ("clEnqueueNDRangeKernel", 4),
                       ("clEnqueueReadBuffer", 4), ("clReleaseContext", 1)):
        expect(n.get(name) == want, "%s recorded %s times, want %d" % (name, n.get(name), want))


def check_counted(t, count_file):
    """Every OpenCL call the program made, once: the trace's calls per function
    equal what tests/count's stand-in libOpenCL counted in an untraced run."""
    common(t)
    want = collections.Counter()
    for line in open(count_file):
        name, n = line.split()
        want[name] += int(n)
    got = collections.Counter(s["name"] for s in t["slices"])
    expect(sum(want.values()) > 0, "the untraced run counted no calls")
    for name in sorted(set(want) | set(got)):
        expect(got[name] == want[name], "%s: %d in the trace, %d made by the program" % (name, got[name], want[name]))


def check_own_calls(t, count_file, allowed_file):
    """cltrace's own calls (all that reached the library, minus the program's,
    which the trace holds) are only commands the platform's version has."""
    common(t)
    reached = collections.Counter()
    for line in open(count_file):
        name, n = line.split()
        reached[name] += int(n)
    allowed = set(open(allowed_file).read().split())
    expect(len(allowed) > 50, "only %d names in the OpenCL 1.2 header" % len(allowed))
    own = reached - collections.Counter(s["name"] for s in t["slices"])
    print("cltrace's own calls:", dict(own))
    for name in own:
        expect(name in allowed, "cltrace called %s, which OpenCL 1.2 does not have" % name)


def check_phases(t, out_file):
    """examples/phases: its ranges nest around the OpenCL calls they contain,
    with its instant and counter; every API call inside a range after setup."""
    ranges = [s for s in t["slices"] if "cltrace.range" in s.get("categories", [])]
    api = [s for s in t["slices"] if s["tid"] is not None and s not in ranges]
    names = collections.Counter(r["name"] for r in ranges)
    expect(names == {"setup": 1, "upload": 1, "solver": 1, "iteration": 40, "download": 1},
           "ranges %s" % dict(names))
    expect(t["attributes"].get("cltrace.ranges") == 44, "cltrace.ranges %s" % t["attributes"].get("cltrace.ranges"))
    expect(t["attributes"].get("cltrace.calls") == len(api), "cltrace.calls counts the ranges")
    expect(all(r["dur"] is not None and r["dur"] > 0 for r in ranges), "a range without its end")

    def inside(s, r):
        return s["track"] == r["track"] and r["ts"] <= s["ts"] and s["ts"] + s["dur"] <= r["ts"] + r["dur"]
    solver = [r for r in ranges if r["name"] == "solver"]
    its = [r for r in ranges if r["name"] == "iteration"]
    expect(solver and all(inside(i, solver[0]) for i in its), "an iteration outside the solver")
    launches = [s for s in api if s["name"] == "clEnqueueNDRangeKernel"]
    expect(len(launches) == 40 and all(any(inside(k, i) for i in its) for k in launches),
           "a launch outside its iteration")
    for name, fn in (("setup", "clBuildProgram"), ("upload", "clEnqueueWriteBuffer"), ("download", "clFinish")):
        r = [x for x in ranges if x["name"] == name]
        calls = [s for s in api if s["name"] == fn]
        if name == "download":
            calls = [s for s in api if s["name"] == "clEnqueueReadBuffer"][-1:]
        expect(r and calls and all(inside(c, r[0]) for c in calls), "%s not inside %s" % (fn, name))
    expect(all(any(inside(s, r) for r in ranges) for s in api if solver and s["ts"] < solver[0]["ts"]
               and s["name"] != "clReleaseMemObject"), "a call before the solver outside every range")
    marks = [i for i in t["instants"] if "cltrace.mark" in i.get("categories", [])]
    expect([m["name"] for m in marks] == ["solver done"], "marks %s" % [m["name"] for m in marks])
    probe = [c for c in t["counters"] if c["name"] == "probe"]
    expect(len(probe) == 40 and all(0 < c["value"] < 1 for c in probe), "probe counter %s" % probe[:3])
    expect(open(out_file).read().startswith("sum "), "the example's output")


def check_calls(t, name, n):
    """Exactly n calls of one function recorded (a trace cut by a crash too)."""
    got = len(calls(t, name))
    expect(got == int(n), "%d %s recorded, want %s" % (got, name, n))


def check_churn(t, rounds):
    """Objects made and released in a loop: every command drawn."""
    rounds = int(rounds)
    a = t["attributes"]
    dev = [s for s in t["slices"] if (s["track_name"] or "").startswith("Device ")]
    expect(len(dev) == 3 * rounds, "%d device commands, want %d" % (len(dev), 3 * rounds))
    expect(a.get("cltrace.commands_unmatched") == 0 and a.get("cltrace.commands_untimed") == 0,
           "unmatched/untimed: %r" % {k: v for k, v in a.items() if "commands" in k})
    mem = [c["value"] for c in t["counters"] if (c["name"] or "").startswith("device memory")]
    expect(mem and max(mem) == 256 and mem[-1] == 0, "device memory counter: max %s last %s" % (max(mem or [0]), mem[-1:]))
    # each round's commands name that round's queue, buffer and kernel, though
    # the driver hands their addresses out again (the writer's decoded
    # arguments are reused only while no object was made or let go)
    made, wrong, rounds_seen = {}, [], 0
    for s in sorted((s for s in t["slices"] if s.get("tid")), key=lambda s: s["ts"]):
        a, n = s["args"], s["name"]
        kind = {"clCreateCommandQueueWithProperties": "command_queue", "clCreateBuffer": "buffer",
                "clCreateKernel": "kernel"}.get(n)
        if kind:
            made[kind] = a.get("result")
        elif n.startswith("clEnqueue"):
            rounds_seen += n == "clEnqueueNDRangeKernel"
            wrong += [(n, k, a[k], made.get(k)) for k in ("command_queue", "buffer", "kernel") if k in a and a[k] != made.get(k)]
    expect(rounds_seen == rounds and not wrong, "%d launches; commands naming another round's object: %s" % (rounds_seen, wrong[:3]))


def check_forward(t, ncalls):
    common(t, int(ncalls))
    # the harness never releases: every object a call made is a leak at exit,
    # of that call's type, with its id -- for every creating command there is
    # (command buffers, semaphores, pipes, USM and SVM allocations included)
    leaks = {(i["args"]["created_by"], i["args"]["object"]): i["args"]["type"]
             for i in t["instants"] if i["name"].startswith("leaked ")}
    made = 0
    for s in t["slices"]:
        a = s["args"]
        oid = a.get("result") if s["name"].startswith(("clCreate", "clLink", "clClone", "clImport")) else None
        if s["name"].startswith("clEnqueue") and isinstance(a.get("event"), int) and a.get("result") == "CL_SUCCESS":
            oid = a["event"]
        if isinstance(oid, int) and oid and not isinstance(oid, bool) and a.get("errcode_ret", "CL_SUCCESS") == "CL_SUCCESS":
            made += 1
            expect((s["name"], oid) in leaks, "%s made object %d: no leak reported" % (s["name"], oid))
    expect(made >= 100 and len(leaks) >= made, "%d objects made, %d leaks" % (made, len(leaks)))


ERRORS = {-61: "CL_INVALID_BUFFER_SIZE", -38: "CL_INVALID_MEM_OBJECT", -30: "CL_INVALID_VALUE",
          -11: "CL_BUILD_PROGRAM_FAILURE", -46: "CL_INVALID_KERNEL_NAME"}


def functions(stack):
    return [f["function"] for f in stack or [] if isinstance(f, dict)]


def check_lifetimes(t, mode, out_file):
    """tests/apps/lifetimes.c: leaks, implicit references, errors."""
    common(t)
    lines = open(out_file).read().split("\n")
    leaks = [i for i in t["instants"] if i["name"].startswith("leaked ")]
    expect(t["attributes"].get("cltrace.leaks") == len(leaks),
           "cltrace.leaks %s != %d leak events" % (t["attributes"].get("cltrace.leaks"), len(leaks)))
    want = sorted(tuple(l.split()[1:3]) for l in lines if l.startswith("expect "))
    if mode == "leak":
        expect(len(want) >= 10, "the app made %d objects" % len(want))
        got = []
        for i in leaks:
            fns = functions(i["stack"])
            # the innermost app frame: the function that made the object
            maker = next((f for f in reversed(fns) if f and f.startswith("make_")), None)
            got.append((i["args"]["type"], maker))
            expect("main" in fns, "leak %s: stack without main: %s" % (i["name"], fns))
            expect(i["args"]["reference_count"] == 1, "leak %s: reference_count %s" % (i["name"], i["args"]))
            sizes = {"make_buffer": 4096, "make_sub_buffer": 1024, "make_image": 16 * 16 * 4, "make_svm": 4096}
            if maker in sizes:   # a sub-buffer's region, an image's extent x RGBA8 pixels
                expect(i["args"].get("size") == sizes[maker], "leak from %s: size %s" % (maker, i["args"].get("size")))
            if maker == "make_kernel":
                expect(i["args"].get("kernel_name") == "twice", "leaked kernel name %s" % i["args"])
            frame = next((f for f in i["stack"] if f["function"] == maker), None)
            expect(frame and frame["file"] and frame["file"].endswith("lifetimes.c") and frame["line"],
                   "leak %s: no file:line for %s: %s" % (i["name"], maker, frame))
        expect(sorted(got) == want, "leaks %s, want %s" % (sorted(got), want))
    else:
        expect(not leaks, "%s: leaks reported: %s" % (mode, [(i["name"], functions(i["stack"])) for i in leaks]))
    if mode == "implicit":
        printed = [int(l.split()[1]) for l in lines if l.startswith("refcount ")]
        sub = next(s for s in calls(t, "clCreateSubBuffer"))["args"]["result"]
        model = [s["args"].get("reference_count") for s in t["slices"]
                 if s["name"] in ("clRetainMemObject", "clReleaseMemObject") and s["args"]["memobj"] == sub]
        expect(model[:4] == printed, "reference counts %s, the driver said %s" % (model[:4], printed))
        flagged = [s for s in t["slices"] if "use_after_release" in s["args"]]
        prog = calls(t, "clCreateProgramWithSource")[0]["args"]["result"]
        expect([s["name"] for s in flagged] == ["clGetProgramInfo"], "flagged %s" % [s["name"] for s in flagged])
        expect(all(s["args"]["use_after_release"] == prog for s in flagged), "flagged object")
        # the context was released first: what the app still held then is listed (not as leaks)
        held = sorted(i["args"]["type"] for i in t["instants"] if i["name"].startswith("held at context release"))
        expect(held == ["cl_command_queue", "cl_kernel", "cl_mem"], "held at context release: %s" % held)
    if mode == "errors":
        for l in lines:
            if not l.startswith("error "):
                continue
            fn, code = l.split()[1], int(l.split()[2])
            hits = [s for s in calls(t, fn)
                    if ERRORS.get(code) in (s["args"].get("result"), s["args"].get("errcode_ret"))]
            expect(len(hits) == 1, "%s %s: %d slices with that error" % (fn, ERRORS.get(code), len(hits)))
            for h in hits:
                expect("errors" in functions(h.get("stack")), "%s: stack %s" % (fn, functions(h.get("stack"))))
        ok = [s for s in t["slices"] if s["args"].get("result", "CL_SUCCESS") == "CL_SUCCESS"
              and s["args"].get("errcode_ret", "CL_SUCCESS") == "CL_SUCCESS" and not s["name"].startswith("clCreate")]
        expect(all("stack" not in s for s in ok), "a successful non-creating call has a stack")


def check_report_leak_classes(report_json):
    """lifetimes classify: buffers made every iteration and never released,
    and buffers released on one path only, both over the loop, grow with the
    run (errors, with the site's counts); the context held to the end is
    still reachable (info)."""
    r = json.load(open(report_json))
    leaks = {}
    for x in r["findings"]:
        if x["rule"] == "leaks":
            fn = "grow_site" if " at grow_site " in x["where"] else "path_site" if " at path_site " in x["where"] \
                else "make_context" if " at make_context " in x["where"] else x["where"]
            leaks[fn] = x
    expect(sorted(leaks) == ["grow_site", "make_context", "path_site"], "leak sites %r" % sorted(leaks))
    g, p, c = leaks.get("grow_site", {}), leaks.get("path_site", {}), leaks.get("make_context", {})
    expect(g.get("severity") == "error" and g.get("class") == "growing" and "8 object(s)" in g.get("numbers", "") and
           "holds 8 of the 8 it made" in g.get("class_why", ""), "grow_site: %r" % g)
    expect(p.get("severity") == "error" and p.get("class") == "growing" and "4 object(s)" in p.get("numbers", "") and
           "holds 4 of the 8 it made" in p.get("class_why", ""), "path_site: %r" % p)
    expect(c.get("severity") == "info" and c.get("class") == "still_held" and "still reachable" in c.get("numbers", ""),
           "context: %r" % c)


LEAK_CLASSES = {   # leak_classes MODE: (class, severity, the sites it must name, words every format says)
    "lost": ("definitely_lost", "error", ["make_buffers", "lost"], "definitely lost at exit"),
    "loop": ("growing", "error", ["grow_site"], "growing with the run"),
    "last": ("still_held", "info", ["frame_site"], "still reachable"),
    "cache": ("still_held", "info", ["cached_program"], "still reachable"),
}


def check_report_leak_class(folder, mode):
    """tests/apps/leak_classes MODE, its report in every format (report_formats):
    the leaks of the mode's own sites get its class and severity, and every
    format says the class; no leak is an error unless its class is one."""
    klass, sev, sites, words = LEAK_CLASSES[mode]
    r = json.load(open(os.path.join(folder, "r.json")))
    leaks = [x for x in r["findings"] if x["rule"] == "leaks"]
    for site in sites:
        mine = [x for x in leaks if " %s (" % site in x["where"]]
        expect(mine, "%s: no leak at %s in %r" % (mode, site, [x["where"][:80] for x in leaks]))
        for x in mine:
            expect(x.get("class") == klass and x["severity"] == sev and x.get("class_why"),
                   "%s: %s is %s/%s (%s)" % (mode, site, x.get("class"), x["severity"], x.get("class_why")))
    for x in leaks:
        expect((x["severity"] == "error") == (x.get("class") in ("definitely_lost", "growing")),
               "%s: severity %s for class %s" % (mode, x["severity"], x.get("class")))
    if mode == "lost":
        lost = {x["where"].split(",")[0] for x in leaks if x.get("class") == "definitely_lost"}
        expect(lost >= {"cl_mem", "cl_kernel \"twice\"", "cl_event"}, "lost: %r" % lost)
    for f in ("r.txt", "r.md", "r.html"):
        text = open(os.path.join(folder, f)).read()
        expect(words in text, "%s: %r not in %s" % (mode, words, f))
    junit = open(os.path.join(folder, "r.xml")).read()
    failed = '<testcase classname="cltrace" name="leaks">\n    <failure' in junit
    expect(failed == (sev == "error"), "%s: JUnit's leaks test case %s" % (mode, "fails" if failed else "passes"))


def check_report_lifetimes(report_json, mode, out_file):
    """cltrace-report --format json on a lifetimes trace: leaks, errors, their stacks."""
    r = json.load(open(report_json))
    f = collections.defaultdict(list)
    for x in r["findings"]:
        f[x["rule"]].append(x)
    lines = open(out_file).read().split("\n")
    if mode == "leak":
        want = [l.split()[2] for l in lines if l.startswith("expect ")]
        expect(len(f["leaks"]) == len(want), "%d leak findings for %d objects" % (len(f["leaks"]), len(want)))
        for fn in want:
            expect(any(" at %s (" % fn in x["where"] and "lifetimes.c:" in x["where"] for x in f["leaks"]),
                   "no leak finding made at %s: %s" % (fn, [x["where"] for x in f["leaks"]]))
        # each made once and held to the end, its context too: still held, info
        expect(all(x["severity"] == "info" and x.get("class") == "still_held" and "still reachable" in x["numbers"]
                   for x in f["leaks"]),
               "leak severity %r" % [(x["severity"], x["numbers"]) for x in f["leaks"]])
    else:
        expect(not f["leaks"], "%s: leak findings %s" % (mode, f["leaks"]))
    if mode == "implicit":
        expect(len(f["use-after-release"]) == 1 and "clGetProgramInfo" in f["use-after-release"][0]["where"],
               "use-after-release findings: %s" % f["use-after-release"])
    if mode == "errors":
        for l in lines:
            if l.startswith("error "):
                fn, code = l.split()[1], int(l.split()[2])
                hit = [x for x in f["api-errors"] if x["where"].startswith(fn + ",") and ERRORS[code] in x["numbers"]]
                expect(len(hit) == 1 and "errors (" in hit[0]["where"] and "lifetimes.c:" in hit[0]["where"],
                       "%s %s: %s" % (fn, ERRORS[code], hit))


def check_report_readable(report_dir, name="", table=""):
    """A real program's report (r.txt, r.json, r.md, r.html in report_dir)
    reads well: no error-severity leak that is still reachable (an error is
    definitely lost or grows with the run, and says why; an older trace's
    says its site made several, or released some); no mangled C++
    name in what a person reads; every frame a name or library+offset, never
    a bare address; a warning is worth at least 1 % of the run. Appends a
    row "name|rules above info" to the table file."""
    rep = json.load(open(os.path.join(report_dir, "r.json")))
    for f in rep["findings"]:
        if f["rule"] == "leaks" and f["severity"] == "error" and "class" in f:
            expect(f["class"] in ("definitely_lost", "growing") and f.get("class_why"),
                   "%s: an error leak that is %s: %s" % (name, f["class"], f["numbers"]))
        elif f["rule"] == "leaks" and f["severity"] == "error":
            m = re.search(r"this site made (\d+) and released (\d+)", f["numbers"])
            grows = re.search(r"this site made (\d+) and released none", f["numbers"])
            expect((m and (int(m.group(1)) > 1 or int(m.group(2)) > 0)) or (grows and int(grows.group(1)) > 1),
                   "%s: an error leak for objects made once: %s" % (name, f["numbers"]))
        if f["severity"] == "warning" and f.get("estimated_gain_percent") is not None:
            expect(f["estimated_gain_percent"] >= 1.0,
                   "%s: a warning worth %.2f %% of the run: %s" % (name, f["estimated_gain_percent"], f["rule"]))
    wheres = [f["where"] for f in rep["findings"]]
    bare = re.compile(r"(?<![+\w])0x[0-9a-fA-F]{3,}")
    for w in wheres:
        for frame in w.split(" <- "):
            expect(not bare.search(frame), "%s: a frame without a name or library+offset: %s" % (name, frame[:120]))
    mangled = re.compile(r"(?<![\w])_Z[A-Z0-9][A-Za-z0-9_]{2,}")
    for fmt in ("txt", "md", "html"):
        text = open(os.path.join(report_dir, "r." + fmt), errors="replace").read()
        hit = mangled.search(text)
        expect(not hit, "%s: a mangled name in r.%s: %s" % (name, fmt, hit.group(0) if hit else ""))
    if table:
        above = sorted({"%s (%s)" % (f["rule"], f["severity"]) for f in rep["findings"] if f["severity"] != "info"})
        with open(table, "a") as t:
            t.write("%s|%s\n" % (name, ", ".join(above) or "none"))


def check_switched(t, switched, iterations, by_callbacks="0"):
    """old_platform loop N sampled: every host call recorded; the queue's
    profiling switched per timed command (1) or not (0, a driver that cannot
    switch); left plain, timed by callbacks (by_callbacks 1: PoCL), its
    commands' profiling price not charged, its blocking reads timed too;
    every timed command has its device slice and flow,
    the others are marked sampled out; the app's own event is timed."""
    a = t["attributes"]
    n = int(iterations)
    expect(a.get("cltrace.queues_profiling_switched") == int(switched),
           "queues with profiling switched: %r, want %s" % (a.get("cltrace.queues_profiling_switched"), switched))
    expect(a.get("cltrace.queues_timed_by_callbacks") == int(by_callbacks),
           "queues timed by callbacks: %r, want %s" % (a.get("cltrace.queues_timed_by_callbacks"), by_callbacks))
    if by_callbacks == "1":
        # (that a timed blocking read is over when its call returns, the program's sums say: each
        # is read after the call, the output diffed with untraced; the timeline cannot, its
        # device-to-host placement being off by up to the clock's residual)
        expect(a.get("cltrace.device.0.commands_profiled_for_cltrace", 0) == 0, "profiling charged on a plain queue")
        reads = [s for s in t["slices"] if s["tid"] is not None and s["name"] == "clEnqueueReadBuffer" and s["flows"]]
        expect(len(reads) >= 4, "%d timed blocking reads, want the first 4 at least" % len(reads))
    api = [s for s in t["slices"] if s["tid"] is not None]
    enq = [s for s in api if s["name"].startswith("clEnqueue")]
    expect(len(enq) == 3 * n + 2, "%d enqueues recorded, want %d" % (len(enq), 3 * n + 2))
    out = [s for s in enq if s["args"].get("device_timed") is False]
    timed = [s for s in enq if s["flows"] and s not in out]   # an untimed launch's arrow ends at its estimate
    expect(timed and out and len(timed) + len(out) == len(enq),
           "%d timed + %d sampled out of %d enqueues" % (len(timed), len(out), len(enq)))
    expect(enq[0]["name"] == "clEnqueueNDRangeKernel" and enq[0] in timed,
           "the launch whose event the app asked for is not timed: %r" % enq[0]["name"])
    dev = [s for s in t["slices"] if (s["track_name"] or "").startswith("Device ") and not s["args"].get("estimated")]
    by_flow = {f: s for s in timed for f in s["flows"]}
    expect(len(dev) == len(timed), "%d device slices for %d timed commands" % (len(dev), len(timed)))
    for d in dev:
        src = [by_flow.get(f) for f in d["terminating_flows"]]
        expect(len(src) == 1 and src[0] is not None, "device slice at %d without its enqueue's flow" % d["ts"])
    expect(a.get("cltrace.commands_untimed") == 0 and a.get("cltrace.commands_unmatched") == 0,
           "untimed %r, unmatched %r" % (a.get("cltrace.commands_untimed"), a.get("cltrace.commands_unmatched")))


def check_by_callbacks(t, queues):
    """tests/apps/cbgate.c traced: its queues timed by callbacks (queues: how
    many, 0 where they got profiling instead); none charged a profiling
    price; every command drawn where it ran, with its flow, but the launch
    behind 20 events (not held by cltrace: its callbacks may come late); by
    callbacks each has its submit, start and end, QUEUED 0."""
    a = t["attributes"]
    n = int(queues)
    expect(a.get("cltrace.queues_timed_by_callbacks") == n,
           "queues timed by callbacks: %r, want %d" % (a.get("cltrace.queues_timed_by_callbacks"), n))
    expect(a.get("cltrace.device.0.commands_profiled_for_cltrace", 0) == 0 or not n, "profiling charged")
    dev = [s for s in t["slices"] if (s["track_name"] or "").startswith("Device ")]
    enq = [s for s in t["slices"] if s["tid"] is not None and s["name"].startswith("clEnqueue")]
    expect(len(enq) == 26 and len(dev) >= 25 and a.get("cltrace.commands_untimed", 0) == 26 - len(dev),
           "%d enqueues, %d drawn, %r untimed" % (len(enq), len(dev), a.get("cltrace.commands_untimed")))
    ends = {f for s in dev for f in s["terminating_flows"]}
    expect(sum(1 for s in enq if s["flows"] and s["flows"][0] in ends) == len(dev), "a drawn command without its flow")
    if n:
        bad = [s["name"] for s in dev if s["args"].get("queued_ns") != 0 or not s["args"].get("start_ns")]
        expect(not bad, "commands by callbacks with a QUEUED time or no start: %r" % bad[:3])
        held = [s for s in dev if s["name"] != "add" or s["args"].get("submit_ns")]
        expect(len(held) >= len(dev) - 1, "%d of %d without their submit time" % (len(dev) - len(held), len(dev)))


def check_kernel_facts(t, out_file):
    """tests/apps/kernel_facts.c traced: each launch drawn under its kernel's
    name, however the kernel was made (clCreateKernel, clCreateKernelsInProgram,
    clCloneKernel), with the work-group facts the driver gave the app; one
    kernel record per launch on a new queue, asked when the kernel was made."""
    want = [l.split() for l in open(out_file) if len(l.split()) == 3 and not l.startswith("kernels")]
    launched = [l for l in open(out_file) if l.startswith("kernels launched: ")]
    dev = sorted((s for s in t["slices"] if (s["track_name"] or "").startswith("Device ")), key=lambda s: s["ts"])
    expect(launched and len(dev) == int(launched[0].split()[-1]) == len(want),
           "%d launches drawn, the app printed %r" % (len(dev), launched))
    for (name, wg, mult), d in zip(want, dev):
        expect(d["name"] == name, "a launch of %s drawn as %r" % (name, d["name"]))
        expect(d["args"].get("kernel_work_group_size") == int(wg) and
               d["args"].get("preferred_work_group_size_multiple") == int(mult),
               "%s: the trace's facts %r, the driver's %s %s" % (name, {k: v for k, v in d["args"].items()
                                                                      if "work_group" in k}, wg, mult))


def check_switches(t, log):
    """The queue's profiling switches, as a driver saw them (tests/apps/
    profswitch.c: '+' on, '-' off): cltrace's trial of the switch (+-), then
    on at the first timed command after an untimed one (or the first of
    all), off at the first untimed one after a timed one; none between
    commands timed alike (a switch among commands in flight is dear)."""
    a = t["attributes"]
    expect(a.get("cltrace.queues_profiling_switched") == 1,
           "queues with profiling switched: %r, want 1" % a.get("cltrace.queues_profiling_switched"))
    enq = sorted((s for s in t["slices"] if s["tid"] is not None and s["name"].startswith("clEnqueue")),
                 key=lambda s: s["ts"])
    want, on = "+-", False
    for s in enq:
        timed = s["args"].get("device_timed") is not False
        if timed != on:
            want += "+" if timed else "-"
            on = timed
    with open(log) as f:
        got = f.read()
    expect(got == want, "switches %r (%d), want %r (%d) for %d enqueues" % (got, len(got), want, len(want), len(enq)))


def check_one_clock(t, n, report_json):
    """A clSetKernelArg loop: every call recorded in order; the durations of
    1 in 64 measured (slices), the others instants (untimed); every other
    call a slice; the report's total extrapolated from the measured ones."""
    n = int(n)
    common(t)
    sa = calls(t, "clSetKernelArg")
    expect(len(sa) == n + 3, "%d clSetKernelArg recorded, want %d" % (len(sa), n + 3))
    expect(all(a["ts"] <= b["ts"] for a, b in zip(sa, sa[1:])), "clSetKernelArg out of order")
    timed = [s for s in sa if not s.get("untimed")]
    # gaps of 1 to 127 calls (capture/rings.c next_gap): the count's spread is
    # sqrt(n * var / mean^3), ~10 for 20,000 calls; five of them either way
    spread = 5 * math.sqrt(n * (127 ** 2 - 1) / 12 / 64 ** 3)
    expect(abs(len(timed) - n / 64) <= spread, "%d of %d durations measured, want 1 in 64 (within %.0f)" % (len(timed), n, spread))
    expect(all(s["dur"] == 0 for s in sa if s.get("untimed")), "an untimed call with a duration")
    other = [s for s in t["slices"] if s["name"] != "clSetKernelArg"]
    expect(other and not any(s.get("untimed") for s in other), "a call other than a one-clock one left untimed")
    rep = {a["name"]: a for a in json.load(open(report_json))["api"]}
    r = rep.get("clSetKernelArg", {})
    expect(r.get("count") == len(sa) and r.get("timed") == len(timed),
           "report: count %r timed %r, trace %d and %d" % (r.get("count"), r.get("timed"), len(sa), len(timed)))
    if timed:
        want = sum(s["dur"] for s in timed) / len(timed) * len(sa)
        expect(abs(r.get("total_ns", 0) - want) <= 0.01 * want + 1000,
               "report total %r ns, the measured mean times the count is %.0f" % (r.get("total_ns"), want))
    expect(all(a["timed"] == a["count"] for name, a in rep.items() if name != "clSetKernelArg"),
           "a function other than clSetKernelArg with untimed calls in the report")


KEPT = re.compile(r"^cl(Create(?!UserEvent|Event)\w+|Release(?!Event)\w+|Retain(?!Event)\w+|BuildProgram|"
                  r"CompileProgram|LinkProgram|GetPlatformIDs|GetDeviceIDs|SVMAlloc|SVMFree)$")


def check_window(t, log_file, ranges, windows):
    """tests/apps/windows: the trace's calls inside its windows are exactly the
    program's calls numbered in RANGES ("A-B,C-D", from its log), in order;
    outside them only the calls that make or release objects, each marked
    outside_window; the trace says it holds WINDOWS windows; no device
    command outside a window."""
    made = []
    for line in open(log_file):
        f = line.split()
        if f and f[0] == "call":
            made.append((int(f[1]), f[2]))
    want = set()
    for r in ranges.split(","):
        a, b = r.split("-")
        want |= set(range(int(a), int(b) + 1))
    api = sorted((s for s in t["slices"] if s["tid"] is not None), key=lambda s: s["ts"])
    inside = [s["name"] for s in api if not s["args"].get("outside_window")]
    outside = [s["name"] for s in api if s["args"].get("outside_window")]
    want_in = [name for n, name in made if n in want]
    want_out = [name for n, name in made if n not in want and KEPT.match(name)]
    expect(inside == want_in, "inside the windows: %d calls, want %d; first difference at %r" % (
        len(inside), len(want_in), next(((i, a, b) for i, (a, b) in enumerate(zip(inside, want_in)) if a != b), None)))
    expect(outside == want_out, "outside: %r, want %r" % (outside, want_out))
    a = t["attributes"]
    expect(a.get("cltrace.window_count") == int(windows), "window_count %r, want %s" % (a.get("cltrace.window_count"), windows))
    spans = [tuple(map(int, w.split("-"))) for w in a.get("cltrace.windows", "").split(";") if w]
    expect(len(spans) == int(windows) and all(x < y for x, y in spans), "windows %r" % spans)
    dev = [s for s in t["slices"] if s["tid"] is None and s.get("track_name") != "cltrace windows"]
    launches = want_in.count("clEnqueueNDRangeKernel")
    expect(len(dev) == launches, "%d device commands, want the %d launches inside the windows" % (len(dev), launches))
    # a launch made in a window runs when the device gets to it: on a loaded
    # machine (make test's parallel tests) that was after the window closed
    late = 500e6
    outside = [s["ts"] for s in dev if not any(x <= s["ts"] <= y + late for x, y in spans)]
    expect(not outside, "a device command outside every window: %r, windows %r" % (outside[:3], spans))

def check_report_mpi_two_hosts(folder, merged, shift_s):
    """tests/jobs.sh: 4 ranks of tests/apps/mpi_halo, 2 and 3 on "hostB" (boot clock + shift_s): the offsets each
    rank measured, the merged trace's times against each rank's own, the MPI slices and their messages."""
    import glob
    sys.path.insert(0, os.path.dirname(__file__))
    from tracedump import load_schema, read_packets
    shift = int(shift_s) * 10**9
    tol = 50000                                     # 50 us
    own = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.pftrace.gz"))):
        t = decode(path)
        a = t["attributes"]
        r = a["cltrace.rank"]
        want = shift if r >= 2 else 0
        expect(a["cltrace.host"] == ("hostB" if r >= 2 else a["cltrace.host"]), "rank %d host %s" % (r, a["cltrace.host"]))
        for w in ("init", "final"):
            off = a.get("cltrace.mpi.%s_offset_ns" % w)
            expect(off is not None and abs(off - want) <= tol,
                   "rank %d: offset at %s %r, the namespaces' %d (within 50 us)" % (r, w, off, want))
        own[r] = (t, want)
    expect(sorted(own) == [0, 1, 2, 3], "ranks %r" % sorted(own))
    m = decode(merged)
    by_rank = collections.defaultdict(list)         # merge tags a rank's track uuids with (k + 1) << 56
    pb = load_schema()
    names = {}
    for p in read_packets(pb, merged):
        if p.HasField("track_descriptor") and p.track_descriptor.HasField("process"):
            names[p.track_descriptor.uuid >> 56] = p.track_descriptor.process.process_name
    for k, n in names.items():
        rk = int(n.split()[1])
        expect(("(hostB)" in n) == (rk >= 2), "process name %r" % n)
    rank_of = {k: int(n.split()[1]) for k, n in names.items()}
    for s in m["slices"]:
        by_rank[rank_of.get(s["track"] >> 56)].append(s)
    # each rank's enqueues and device commands (by flow) where its own clock put them, less the shift
    moved = 0
    for r, (t, want) in own.items():
        ts_own = {}
        for s in t["slices"]:
            for f in s["flows"] + s["terminating_flows"]:
                ts_own[(f, s["name"])] = s["ts"]
        for s in by_rank[r]:
            for f in s["flows"] + s["terminating_flows"]:
                key = (f ^ ((s["track"] >> 56) << 56), s["name"])     # merge's tag undone
                if key in ts_own:
                    d = s["ts"] - (ts_own[key] - want)
                    expect(abs(d) <= tol if r >= 2 else d == 0, "rank %d: %s (flow %x) %+d ns off its true time"
                           % (r, s["name"], key[0], d))
                    moved += 1
    expect(moved >= 4 * 5 * 2, "%d enqueues and commands compared" % moved)
    # MPI: the halo's slices and messages, each received after it was sent
    sends, recvs = {}, {}
    for r, sl in by_rank.items():
        mpi = [s for s in sl if "mpi" in s["categories"]]
        for s in mpi:
            if s["name"] == "MPI_Send":
                expect(s["args"].get("peer") == (r + 1) % 4 and s["args"].get("bytes") == 4096
                       and s["args"].get("comm_size") == 4, "rank %d: %r" % (r, s))
                sends[(r, s["args"]["peer"], s["args"]["tag"])] = s
            if s["name"] == "MPI_Recv":
                expect(s["args"].get("peer") == (r + 3) % 4 and s["args"].get("bytes") == 4096, "rank %d: %r" % (r, s))
                recvs[(s["args"]["peer"], r, s["args"]["tag"])] = s
        expect({"MPI_Barrier", "MPI_Allreduce"} <= {s["name"] for s in mpi}, "rank %d: %r" % (r, {s["name"] for s in mpi}))
    expect(len(sends) == 20 and sends.keys() == recvs.keys(), "%d sends, %d receives" % (len(sends), len(recvs)))
    for key, s in sends.items():
        if key in recvs:
            rv = recvs[key]
            expect(rv["ts"] + rv["dur"] + tol >= s["ts"], "message %r received %d ns before it was sent"
                   % (key, s["ts"] - rv["ts"] - rv["dur"]))
    print("mpi: offsets within 50 us, %d enqueues and commands in place, %d messages in order" % (moved, len(sends)))


def check_report_mpi_wait_idle(folder):
    """tests/jobs.sh: 2 ranks of tests/apps/mpi_halo, blocking and overlapped (JSON reports MODE-RANK.json)."""
    def found(mode, r):
        j = json.load(open(os.path.join(folder, "%s-%d.json" % (mode, r))))
        expect(j.get("mpi", {}).get("calls", 0) >= 12, "%s rank %d: mpi %r" % (mode, r, j.get("mpi")))
        return [f for f in j["findings"] if f["rule"] == "mpi-wait-idle-device"], j
    f, j = found("blocking", 1)
    expect(len(f) == 1 and f[0]["severity"] == "warning" and f[0].get("estimated_gain_ns", 0) > 1e6
           and "rank 1" in f[0]["where"], "blocking rank 1: %r" % f)
    expect(j["mpi"]["idle_in_waits_ns"] > 5e6 and j["mpi"]["device_busy_ns"] < j["mpi"]["idle_in_waits_ns"],
           "blocking rank 1: %r" % j["mpi"])
    for r in (0, 1):
        f, j = found("overlap", r)
        expect(not f, "overlap rank %d: %r (%r)" % (r, f, j["mpi"]))
    print("mpi-wait-idle-device: blocking rank 1, not the overlapped ranks")


if __name__ == "__main__":
    check, path = sys.argv[1], sys.argv[2]
    if check.startswith("report_"):
        globals()["check_" + check](path, *sys.argv[3:])
        for f in failures[:20]:
            print("  " + f)
        sys.exit(1 if failures else 0)
    trace = decode(path)
    whole = check in ("timeline", "nvidia", "registers", "estimates", "held_order", "figures", "churn", "phases", "launches", "switched", "switches",
                      "window", "by_callbacks", "kernel_facts")
    globals()["check_" + check](trace if whole else api_only(trace), *sys.argv[3:])
    for f in failures[:20]:
        print("  " + f)
    sys.exit(1 if failures else 0)
