#!/usr/bin/python3
"""The HTML report in a real browser (Debian's chromium, headless).
  html_check.py hostile OUT.pftrace [NS]   write a trace whose names are HTML
                                           (kernels of NS ns each, default 100 us)
  html_check.py check REPORT.html WORKDIR [CHART,...]
                                           render it; check charts and escaping
The check renders a screenshot and counts the pixels of each chart's colour
(a chart that does not render has none), reads the console log (no errors),
and dumps the DOM after parsing (no element the trace smuggled in)."""
import re
import subprocess
import sys
import zlib

from tracedump import load_schema

HOSTILE = "<script>alert(1)</script>"


def hostile_trace(path, dur=100000):
    pb = load_schema()
    t = pb.Trace()
    pid, tid, seq = 4242, 4243, 7

    def packet(**kw):
        p = t.packet.add(**kw)
        return p
    p = packet()
    p.track_descriptor.uuid = pid << 32
    p.track_descriptor.process.pid = pid
    p.track_descriptor.process.process_name = "<b>app</b>"
    queue = (pid << 32) | 0xA0000000 | 1 << 4
    p = packet()
    p.track_descriptor.uuid = queue
    p.track_descriptor.parent_uuid = pid << 32
    p.track_descriptor.name = "<i>queue</i>"
    p = packet(trusted_packet_sequence_id=seq, sequence_flags=3)
    p.first_packet_on_sequence = True
    for i in range(3):    # three launches of a kernel with an HTML name, 64 work-items
        ts = 1000000 + i * 200000
        b = packet(timestamp=ts, trusted_packet_sequence_id=seq, sequence_flags=2)
        e = b.track_event
        e.type = 1
        e.track_uuid = queue
        e.name = HOSTILE
        for k, v in (("command_type", "CL_COMMAND_NDRANGE_KERNEL"),):
            a = e.debug_annotations.add(name=k)
            a.string_value = v
        for k, v in (("duration_ns", dur), ("work_dim", 1), ("work_group_size", 64), ("work_groups", 1)):
            e.debug_annotations.add(name=k, uint_value=v)
        for k in ("global_work_size", "local_work_size"):
            a = e.debug_annotations.add(name=k)
            a.array_values.add(uint_value=64)
        x = packet(timestamp=ts + dur, trusted_packet_sequence_id=seq, sequence_flags=2)
        x.track_event.type = 2
        x.track_event.track_uuid = queue
    # a write of 4 KiB (a small transfer)
    b = packet(timestamp=1900000, trusted_packet_sequence_id=seq, sequence_flags=2)
    b.track_event.type = 1
    b.track_event.track_uuid = queue
    b.track_event.name = "WriteBuffer"
    b.track_event.debug_annotations.add(name="command_type", string_value="CL_COMMAND_WRITE_BUFFER")
    b.track_event.debug_annotations.add(name="direction", string_value="host_to_device")
    b.track_event.debug_annotations.add(name="bytes", uint_value=4096)
    x = packet(timestamp=1950000, trusted_packet_sequence_id=seq, sequence_flags=2)
    x.track_event.type = 2
    x.track_event.track_uuid = queue
    # a leak whose creation stack names an HTML function and file
    p = packet(trusted_packet_sequence_id=seq, sequence_flags=2)
    d = p.interned_data
    d.function_names.add(iid=1, str=b"<img src=x onerror=alert(2)>")
    d.source_paths.add(iid=1, str=b"\"><svg onload=alert(3)>.c")
    d.frames.add(iid=1, function_name_id=1, source_path_iid=1, line_number=7)
    d.callstacks.add(iid=1, frame_ids=[1])
    p = packet(timestamp=2000000, trusted_packet_sequence_id=seq, sequence_flags=2)
    e = p.track_event
    e.type = 3
    e.track_uuid = pid << 32
    e.name = "leaked cl_kernel"
    e.callstack_iid = 1
    for k, v in (("type", "cl_kernel"), ("created_by", "clCreateKernel"), ("kernel_name", HOSTILE)):
        e.debug_annotations.add(name=k, string_value=v)
    e.debug_annotations.add(name="reference_count", uint_value=1)
    p = packet()
    for k, v in (("cltrace.version", "0.1"), ("cltrace.device.0.name", "<i>device</i>")):
        p.trace_attributes.attribute.add(key=k, string_value=v)
    p.trace_attributes.attribute.add(key="cltrace.device.0.compute_units", long_value=4)
    open(path, "wb").write(t.SerializeToString())


def png_pixels(path):
    """RGB(A) tuples of an 8-bit PNG (what chromium writes), row by row."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height = int.from_bytes(body[:4], "big"), int.from_bytes(body[4:8], "big")
            assert body[8] == 8, "8-bit PNG expected"
            ctype = body[9]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = {2: 3, 6: 4}[ctype]
    raw, stride = zlib.decompress(idat), width * bpp
    prev, out, i = bytearray(stride), [], 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.append(bytes(line))
        prev = line
    return out, bpp


CHART_COLOURS = {"kernels": (0x1f, 0x77, 0xb4), "transfers": (0x2c, 0xa0, 0x2c), "threshold": (0xd6, 0x27, 0x28),
                 "occupancy": (0xff, 0x7f, 0x0e)}


def check(report, work, charts=("kernels", "transfers", "threshold")):
    html = open(report, encoding="utf-8").read()
    bad = []
    for needle in ("<script", "<img", "<svg onload", "<b>app", "<i>"):
        if needle in html:
            bad.append(needle)
    assert not bad, "unescaped trace text in the HTML: %s" % bad
    if "hostile" in report:
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, "the hostile kernel name is not shown as text"
        assert "&lt;img src=x onerror=alert(2)&gt;" in html, "the hostile stack frame is not shown as text"
    for chart in ("chart-kernels", "chart-transfers", "chart-timeline"):
        assert "id=%s" % chart in html, "no %s in the report" % chart
    chrome = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
              "--user-data-dir=%s/chrome-profile" % work, "--enable-logging=stderr", "--v=0"]
    url = "file://" + report
    # the screenshot and the DOM from one start of the browser (~4 s each here)
    shot = subprocess.run(chrome + ["--window-size=1100,2600", "--screenshot=%s/shot.png" % work, "--dump-dom", url],
                          capture_output=True, text=True, timeout=120)
    log, dom = shot.stderr, shot.stdout
    console = [l for l in log.splitlines() if "CONSOLE" in l or "Uncaught" in l or "Refused to" in l]
    assert not console, "browser console: %s" % console[:5]
    rows, bpp = png_pixels("%s/shot.png" % work)
    for name in charts:
        want = bytes(CHART_COLOURS[name])
        n = sum(1 for row in rows for x in range(0, len(row), bpp) if row[x:x + 3] == want)
        assert n >= 50, "chart colour of %s: %d pixels in the screenshot (not rendered?)" % (name, n)
        print("  %s: %d pixels" % (name, n))
    assert "<svg" in dom and "cltrace report" in dom, "empty DOM"
    smuggled = re.findall(r"<(script|img|iframe|object)\b", dom)
    assert not smuggled, "elements from the trace in the DOM: %s" % smuggled


if __name__ == "__main__":
    if sys.argv[1] == "hostile":
        hostile_trace(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 100000)
    else:
        check(sys.argv[2], sys.argv[3], *([sys.argv[4].split(",")] if len(sys.argv) > 4 else []))
