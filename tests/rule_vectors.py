#!/usr/bin/python3
"""Synthetic traces, one per rule the PoCL programs cannot show exactly, and
the findings cltrace-report must make of them (numbers included).
  rule_vectors.py REPORT_BINARY WORKDIR"""
import json
import subprocess
import sys

from tracedump import load_schema

pb = load_schema()
PID, SEQ = 77, 3


class Trace:
    def __init__(self):
        self.t = pb.Trace()
        p = self.t.packet.add()
        p.track_descriptor.uuid = PID << 32
        p.track_descriptor.process.pid = PID
        self.queue = (PID << 32) | 0xA0000000 | 1 << 4
        p = self.t.packet.add()
        p.track_descriptor.uuid = self.queue
        p.track_descriptor.parent_uuid = PID << 32
        p.track_descriptor.name = "Device 0 queue 1"
        self.thread = (PID << 32) | 78
        p = self.t.packet.add()
        p.track_descriptor.uuid = self.thread
        p.track_descriptor.thread.pid = PID
        p.track_descriptor.thread.tid = 78
        p = self.t.packet.add(trusted_packet_sequence_id=SEQ, sequence_flags=3)

    def slice(self, track, ts, dur, name, **args):
        b = self.t.packet.add(timestamp=ts, trusted_packet_sequence_id=SEQ, sequence_flags=2)
        b.track_event.type = 1
        b.track_event.track_uuid = track
        b.track_event.name = name
        for k, v in args.items():
            a = b.track_event.debug_annotations.add(name=k)
            if isinstance(v, bool):
                a.bool_value = v
            elif isinstance(v, int):
                a.uint_value = v
            elif isinstance(v, list):
                for x in v:
                    a.array_values.add(uint_value=x)
            else:
                a.string_value = v
        e = self.t.packet.add(timestamp=ts + dur, trusted_packet_sequence_id=SEQ, sequence_flags=2)
        e.track_event.type = 2
        e.track_event.track_uuid = track

    def instant(self, track, ts, name, **args):
        b = self.t.packet.add(timestamp=ts, trusted_packet_sequence_id=SEQ, sequence_flags=2)
        b.track_event.type = 3
        b.track_event.track_uuid = track
        b.track_event.name = name
        for k, v in args.items():
            a = b.track_event.debug_annotations.add(name=k)
            if isinstance(v, int):
                a.uint_value = v
            else:
                a.string_value = v

    def attrs(self, **kv):
        p = self.t.packet.add()
        for k, v in kv.items():
            a = p.trace_attributes.attribute.add(key=k.replace("__", "."))
            if isinstance(v, int):
                a.long_value = v
            else:
                a.string_value = v

    def save(self, path):
        open(path, "wb").write(self.t.SerializeToString())


def kernel(t, ts, dur, lws, gws=65536):
    t.slice(t.queue, ts, dur, "k", command_type="CL_COMMAND_NDRANGE_KERNEL", duration_ns=dur, work_dim=1,
            global_work_size=[gws], local_work_size=[lws], work_group_size=lws, work_groups=gws // lws,
            preferred_work_group_size_multiple=32)


def vectors(work):
    v = {}
    # low-bandwidth: 8 pageable 1 MiB writes at 1 GB/s, one pinned at 10 GB/s
    t = Trace()
    for i in range(8):
        t.slice(t.queue, 1000 + 1048576 * i, 1048576, "WriteBuffer", command_type="CL_COMMAND_WRITE_BUFFER",
                direction="host_to_device", bytes=1048576, duration_ns=1048576, pinned=False)
    t.slice(t.queue, 1000 + 1048576 * 8, 104858, "WriteBuffer", command_type="CL_COMMAND_WRITE_BUFFER",
            direction="host_to_device", bytes=1048576, duration_ns=104858, pinned=True)
    t.attrs(cltrace__version="0.1")
    v["low-bandwidth"] = (t, "8 of 9 transfers on pageable memory ran at 1.00 GB/s, under half the best seen (10.00 GB/s)")
    # work-group-small: 32 work-items per group (a multiple of 32: no other rule)
    t = Trace()
    kernel(t, 1000, 5000, 32)
    t.attrs(cltrace__version="0.1", cltrace__device__0__compute_units=4)
    v["work-group-small"] = (t, "32 work-items per group (fewer than 64)")
    # serialization: 8 launches, each followed by clFinish; transfers never overlap
    t = Trace()
    for i in range(8):
        t.slice(t.thread, 100000 * i, 1000, "clEnqueueNDRangeKernel", result="CL_SUCCESS")
        t.slice(t.thread, 100000 * i + 2000, 50000, "clFinish", result="CL_SUCCESS")
        kernel(t, 100000 * i + 3000, 40000, 64)
    t.slice(t.queue, 900000, 1000, "ReadBuffer", command_type="CL_COMMAND_READ_BUFFER",
            direction="device_to_host", bytes=65536, duration_ns=1000, pinned=False)
    t.attrs(cltrace__version="0.1")
    v["serialization"] = (t, "8 of 8 launches followed by clFinish, clWaitForEvents or a blocking call before the "
                             "next launch; transfers never overlap kernels")
    # device-idle: 8 commands of 10 us spread over 8 ms
    t = Trace()
    for i in range(8):
        kernel(t, 1000000 * i, 10000, 64)
    t.attrs(cltrace__version="0.1")
    v["device-idle"] = (t, "idle 99% of 7.010 ms between its first and last command; largest gap 0.990 ms")
    # build-options: float math built without fast-math options
    t = Trace()
    t.instant(t.thread, 10, "program source", program=5,
              source="kernel void f(global float *a) { a[get_global_id(0)] = sqrt(a[get_global_id(0)]); }")
    t.slice(t.thread, 20, 100, "clBuildProgram", program=5, options="-O2", result="CL_SUCCESS")
    t.attrs(cltrace__version="0.1")
    v["build-options"] = (t, "float code built without -cl-mad-enable or -cl-fast-relaxed-math")
    # dropped-calls
    t = Trace()
    t.slice(t.thread, 10, 100, "clFinish", result="CL_SUCCESS")
    t.attrs(cltrace__version="0.1", cltrace__dropped_calls=1234)
    v["dropped-calls"] = (t, "1234 calls not recorded (the tracer's buffer was full): every count in this report is short by them")
    # halting-idle-cpus: a 2-CPU VM whose idle CPUs halt at once, the app's
    # threads put on a CPU 18,000 times in 0.2 s (small blocking transfers)
    t = Trace()
    t.slice(t.thread, 10, 100, "clFinish", result="CL_SUCCESS")
    t.attrs(cltrace__version="0.1", cltrace__cpus=2, cltrace__sched_span_ns=200000000, cltrace__sched_own_cpu_ns=5000000,
            cltrace__sched_app_cpu_ns=140000000, cltrace__sched_app_wait_ns=40000000, cltrace__sched_own_runs=200,
            cltrace__sched_app_runs=18000, cltrace__hypervisor=1, cltrace__cpuidle_driver="haltpoll",
            cltrace__guest_halt_poll_ns=0)
    v["halting-idle-cpus"] = (t, "the app's threads were put on a CPU 18000 times in 0.200 s (90000 a second: "
                              "hand-offs between threads) on a 2-CPU virtual machine whose idle CPUs halt at once "
                              "(cpuidle haltpoll, guest halt-polling 0 ns): each wake of an idle CPU goes through the "
                              "hypervisor")
    return v


def idle_findings(report, work, change):
    """halting-idle-cpus' numbers for its vector with some attributes changed."""
    t = vectors(work)["halting-idle-cpus"][0]
    for p in t.t.packet:
        for a in p.trace_attributes.attribute:
            if a.key in change and isinstance(change[a.key], int):
                a.long_value = change[a.key]
            elif a.key in change:
                a.string_value = change[a.key]
    t.save("%s/idle.pftrace" % work)
    out = json.loads(subprocess.run([report, "--format", "json", "%s/idle.pftrace" % work], capture_output=True,
                                    text=True).stdout)
    return [f["numbers"] for f in out["findings"] if f["rule"] == "halting-idle-cpus"]


def main():
    report, work = sys.argv[1], sys.argv[2]
    failed = 0
    for rule, (t, numbers) in vectors(work).items():
        path = "%s/%s.pftrace" % (work, rule)
        t.save(path)
        out = subprocess.run([report, "--format", "json", path], capture_output=True, text=True)
        findings = json.loads(out.stdout)["findings"]
        got = [f for f in findings if f["rule"] == rule]
        others = sorted({f["rule"] for f in findings} - {rule})
        if len(got) != 1 or got[0]["numbers"] != numbers or others:
            print("FAIL %s: %s (others: %s)\n     want: %s" % (rule, [g["numbers"] for g in got], others, numbers))
            failed = 1
    # low-bandwidth with nothing faster in the trace: against what pinned
    # memory reaches on this device (a cltrace probe in the trace, first)
    t = Trace()
    t.attrs(cltrace__probe__0__device="dev", cltrace__probe__0__h2d_pinned_gbps="10.000")
    for i in range(8):
        t.slice(t.queue, 1000 + 1048576 * i, 1048576, "WriteBuffer", command_type="CL_COMMAND_WRITE_BUFFER",
                direction="host_to_device", bytes=1048576, duration_ns=1048576, pinned=False)
    t.attrs(cltrace__version="0.1", cltrace__calls=8)
    t.save("%s/probe-bw.pftrace" % work)
    out = json.loads(subprocess.run([report, "--format", "json", "%s/probe-bw.pftrace" % work], capture_output=True,
                                    text=True).stdout)
    got = [f for f in out["findings"] if f["rule"] == "low-bandwidth"]
    want = "8 of 8 transfers on pageable memory ran at 1.00 GB/s, under half pinned memory on this device " \
           "(cltrace probe) (10.00 GB/s)"
    if len(got) != 1 or got[0]["numbers"] != want or abs(got[0]["estimated_gain_ns"] - 8 * (1048576 - 104857.6)) > 2:
        print("FAIL low-bandwidth against the probe: %s\n     want: %s" % (got, want))
        failed = 1
    # small-transfers' gain: 20 writes of 4 KiB at 0.2 GB/s, less the same
    # bytes at the 1.00 GB/s this program's 1 MiB writes reached
    t = Trace()
    for i in range(20):
        t.slice(t.queue, 1000 + 30000 * i, 20000, "WriteBuffer", command_type="CL_COMMAND_WRITE_BUFFER",
                direction="host_to_device", bytes=4096, duration_ns=20000, pinned=False)
    for i in range(2):
        t.slice(t.queue, 700000 + 1100000 * i, 1048576, "WriteBuffer", command_type="CL_COMMAND_WRITE_BUFFER",
                direction="host_to_device", bytes=1048576, duration_ns=1048576, pinned=False)
    t.attrs(cltrace__version="0.1", cltrace__calls=22)
    t.save("%s/small-gain.pftrace" % work)
    out = json.loads(subprocess.run([report, "--format", "json", "%s/small-gain.pftrace" % work],
                                    capture_output=True, text=True).stdout)
    got = [f for f in out["findings"] if f["rule"] == "small-transfers"]
    method = "their 0.400 ms, less the same bytes at 1.00 GB/s (this program's transfers at or above the threshold)"
    if (len(got) != 1 or got[0]["severity"] != "warning" or got[0]["estimated_gain_ns"] != 400000 - 81920 or
            got[0]["gain_method"] != method or not 0 < got[0]["estimated_gain_percent"] < 100):
        print("FAIL small-transfers' gain: %s\n     want: %d ns, %s" % (got, 400000 - 81920, method))
        failed = 1
    # halting-idle-cpus: none where the idle CPUs poll, nor on bare metal,
    # nor for an app whose threads seldom hand off; another cpuidle driver
    # (none: HLT) halts at once whatever the parameter says
    for change, want in (({"cltrace.guest_halt_poll_ns": 200000}, None), ({"cltrace.hypervisor": 0}, None),
                         ({"cltrace.sched_app_runs": 900}, None),
                         ({"cltrace.cpuidle_driver": "none", "cltrace.guest_halt_poll_ns": 200000},
                          "(cpuidle none): each wake")):
        got = idle_findings(report, work, change)
        if (want is None and got) or (want is not None and (len(got) != 1 or want not in got[0])):
            print("FAIL halting-idle-cpus with %s: %s" % (change, got))
            failed = 1
    # and the build options that fix it: nothing
    t = vectors(work)["build-options"][0]
    for p in t.t.packet:
        for a in p.track_event.debug_annotations:
            if a.name == "options":
                a.string_value = "-cl-mad-enable"
    t.save("%s/fast.pftrace" % work)
    out = subprocess.run([report, "--format", "json", "%s/fast.pftrace" % work], capture_output=True, text=True)
    if json.loads(out.stdout)["findings"]:
        print("FAIL build-options with -cl-mad-enable: %s" % out.stdout)
        failed = 1
    sys.exit(failed)


if __name__ == "__main__":
    main()
