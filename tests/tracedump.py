#!/usr/bin/python3
"""Decode a cltrace .pftrace[.gz] into JSON for the tests.

    tracedump.py TRACE  ->  {"slices": [...], "attributes": {...}, "threads": {...},
                             "counters": [...], "packets": N}

Each slice: name, ts, dur, track, tid, args (debug annotations, names without
the "debug." prefix; arrays as lists). Interning and defaults are resolved per
sequence the way trace processor does. The schema is the committed
trace/cltrace.proto, compiled with protoc into a cache directory.
"""
import gzip
import hashlib
import importlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "..", "trace", "cltrace.proto")


def load_schema():
    src = open(PROTO, "rb").read()
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME", tempfile.gettempdir()),
                         "cltrace-tracedump-" + hashlib.sha1(src).hexdigest()[:12])
    if not os.path.exists(os.path.join(cache, "cltrace_pb2.py")):
        os.makedirs(cache, exist_ok=True)
        subprocess.check_call(["protoc", "-I", os.path.dirname(PROTO), "--python_out", cache,
                               os.path.basename(PROTO)])
    sys.path.insert(0, cache)
    return importlib.import_module("cltrace_pb2")


def frames(path):
    """The bytes of each whole TracePacket in the file (a cut tail is dropped)."""
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    pos = 0
    while pos < len(data):
        if data[pos] != 0x0A:
            raise ValueError("not a trace: byte %d" % pos)
        pos += 1
        n = shift = 0
        while pos < len(data):
            b = data[pos]
            pos += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        if pos + n > len(data):
            return
        yield data[pos:pos + n]
        pos += n


def read_packets(pb, path):
    out = []
    for raw in frames(path):
        p = pb.TracePacket()
        p.ParseFromString(raw)
        out.append(p)
    return out


def attributes(path):
    """Only the trace attributes (cheap on huge traces: other packets are skipped)."""
    pb = load_schema()
    attrs = {}
    for raw in frames(path):
        if raw[:2] == b"\xf2\x07":       # field 126 (trace_attributes), length-delimited
            p = pb.TracePacket()
            p.ParseFromString(raw)
            for a in p.trace_attributes.attribute:
                attrs[a.key] = a.string_value if a.HasField("string_value") else a.long_value
    return attrs


def ann_value(a, strings):
    if len(a.array_values):
        return [ann_value(x, strings) for x in a.array_values]
    if len(a.dict_entries):
        return {x.name: ann_value(x, strings) for x in a.dict_entries}
    kind = a.WhichOneof("value")
    if kind == "string_value_iid":
        return strings.get(a.string_value_iid, "<missing iid %d>" % a.string_value_iid)
    return getattr(a, kind) if kind else None


def decode(path):
    pb = load_schema()
    packets = read_packets(pb, path)
    seqs, tracks, slices, counters, attrs, open_, instants, samples = {}, {}, [], [], {}, {}, [], []
    for p in packets:
        kind = p.WhichOneof("data")
        if kind == "track_descriptor":
            t = p.track_descriptor
            tracks[t.uuid] = {"name": t.name, "tid": t.thread.tid if t.HasField("thread") else None,
                              "thread_name": t.thread.thread_name if t.HasField("thread") else None,
                              "parent": t.parent_uuid, "counter": t.HasField("counter")}
        if kind == "trace_attributes":
            for a in p.trace_attributes.attribute:
                attrs[a.key] = a.string_value if a.HasField("string_value") else a.long_value
        sid = p.trusted_packet_sequence_id
        if p.sequence_flags & 1:
            seqs[sid] = {"names": {}, "ann": {}, "str": {}, "cat": {}, "track": None, "fn": {}, "src": {},
                         "frames": {}, "stacks": {}, "mpath": {}, "maps": {}}
        st = seqs.get(sid)
        if st is None:
            continue
        if p.HasField("trace_packet_defaults"):
            st["track"] = p.trace_packet_defaults.track_event_defaults.track_uuid
        if p.HasField("interned_data"):
            d = p.interned_data
            st["names"].update({e.iid: e.name for e in d.event_names})
            st["cat"].update({e.iid: e.name for e in d.event_categories})
            st["ann"].update({e.iid: e.name for e in d.debug_annotation_names})
            st["str"].update({e.iid: e.str.decode() for e in d.debug_annotation_string_values})
            st["fn"].update({e.iid: e.str.decode() for e in d.function_names})
            st["src"].update({e.iid: e.str.decode() for e in d.source_paths})
            st["mpath"].update({e.iid: e.str.decode() for e in d.mapping_paths})
            st["maps"].update({m.iid: "/".join(st["mpath"].get(i, "?") for i in m.path_string_ids)
                               for m in d.mappings})
            st["frames"].update({f.iid: {"function": st["fn"].get(f.function_name_id),
                                         "file": st["src"].get(f.source_path_iid) if f.HasField("source_path_iid")
                                         else None,
                                         "line": f.line_number if f.HasField("line_number") else None,
                                         "binary": st["maps"].get(f.mapping_id) if f.mapping_id else None}
                                 for f in d.frames})
            st["stacks"].update({c.iid: [st["frames"].get(i) for i in c.frame_ids] for c in d.callstacks})
        if kind == "perf_sample":     # a CPU sample: its thread, its frames' names, outermost first
            ps = p.perf_sample
            stack = st["stacks"].get(ps.callstack_iid) if ps.HasField("callstack_iid") else None
            samples.append({"ts": p.timestamp, "tid": ps.tid,
                            "frames": [f and f["function"] for f in stack] if stack else []})
        if kind != "track_event":
            continue
        e = p.track_event
        track = e.track_uuid if e.HasField("track_uuid") else st["track"]
        # an API call as an instant: a one-clock call whose duration was not
        # measured (TRACE_FORMAT.md): a slice of duration 0, "untimed"
        untimed = e.type == 3 and e.HasField("name_iid")
        if e.type == 1 or untimed:
            name = e.name if e.HasField("name") else st["names"].get(e.name_iid)
            args = {}
            for a in e.debug_annotations:
                an = a.name if a.HasField("name") else st["ann"].get(a.name_iid)
                args[an] = ann_value(a, st["str"])
            s = {"name": name, "ts": p.timestamp, "dur": None, "track": track, "args": args,
                 "flows": list(e.flow_ids), "terminating_flows": list(e.terminating_flow_ids),
                 "categories": list(e.categories) + [st["cat"].get(i) for i in e.category_iids]}
            if e.HasField("callstack_iid"):   # outermost caller first
                s["stack"] = st["stacks"].get(e.callstack_iid, "<missing callstack %d>" % e.callstack_iid)
            if untimed:
                s["dur"], s["untimed"] = 0, True
            else:
                open_.setdefault(track, []).append(s)
            slices.append(s)
        elif e.type == 3:
            args = {}
            for a in e.debug_annotations:
                an = a.name if a.HasField("name") else st["ann"].get(a.name_iid)
                args[an] = ann_value(a, st["str"])
            instants.append({"name": e.name if e.HasField("name") else st["names"].get(e.name_iid),
                             "categories": list(e.categories) + [st["cat"].get(i) for i in e.category_iids],
                             "ts": p.timestamp, "track": track, "args": args,
                             "stack": st["stacks"].get(e.callstack_iid) if e.HasField("callstack_iid") else None})
        elif e.type == 2:
            if open_.get(track):
                s = open_[track].pop()
                s["dur"] = p.timestamp - s["ts"]
        elif e.type == 4:
            counters.append({"track": track, "name": tracks.get(track, {}).get("name"),
                             "ts": p.timestamp, "value": e.double_counter_value
                             if e.HasField("double_counter_value") else e.counter_value})
    for s in slices:
        s["tid"] = tracks.get(s["track"], {}).get("tid")
        s["track_name"] = tracks.get(s["track"], {}).get("name")
    threads = {str(u): t for u, t in tracks.items() if t["tid"] is not None}
    return {"packets": len(packets), "slices": slices, "attributes": attrs, "threads": threads,
            "counters": counters, "instants": instants, "samples": samples}


def put(obj):
    """obj as JSON on stdout, made in one piece: json.dump (and any indent)
    takes the pure-Python encoder and writes each token on its own, ~10 times
    slower (4.8 s of a 32,000-call snapshot's 5.8)."""
    sys.stdout.write(json.dumps(obj))
    sys.stdout.write("\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--attributes":
        put(attributes(sys.argv[2]))
        sys.exit(0)
    if len(sys.argv) == 3 and sys.argv[1] == "--samples":
        put(decode(sys.argv[2])["samples"])
        sys.exit(0)
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    try:
        put(decode(sys.argv[1]))
    except (OSError, ValueError) as e:
        print("tracedump: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        sys.exit(2)
