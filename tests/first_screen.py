#!/usr/bin/python3
"""What a person, and CI, sees first of cltrace-report's outputs.

    first_screen.py text TEXT JSON        the verdict on one screen
    first_screen.py markdown MD JSON      the summary table first
    first_screen.py sarif SARIF JSON SCHEMA ROOT   valid SARIF 2.1.0, located in ROOT
    first_screen.py github LINES JSON     one workflow command a finding
    first_screen.py html-page OUT NAME=HTML...   the reports in one page for the browser
    first_screen.py html-geometry DOM     each report's summary panel inside the first screen
    first_screen.py unusable FORMAT FILE  the device-timing statement, no device figure

Exit 1 with the reason on a failed check."""
import html
import json
import os
import re
import sys

COLS = 100


def fail(msg):
    sys.exit("first_screen: " + msg)


def top_gain(finding):
    g = finding.get("estimated_gain_ns")
    return "-" if g is None else "%.3f ms" % (g / 1e6)


def tables(lines):
    """indices of lines in a table: a blank-line-separated block whose
    second line is a column header (three runs of two spaces or more)"""
    rows, block = set(), []
    for i, line in enumerate(lines + [""]):
        if line.strip():
            block.append(i)
            continue
        if len(block) > 1 and len(re.findall(r"\S {2,}(?=\S)", lines[block[1]])) >= 3:
            rows.update(block[1:])
        block = []
    return rows


def text(path, jpath):
    lines = open(path).read().split("\n")
    report = json.load(open(jpath))
    if len(lines[0]) > 200:
        fail("the first line has %d characters" % len(lines[0]))
    exempt = tables(lines)
    for i, line in enumerate(lines):
        if len(line) > COLS and i not in exempt:
            fail("line %d is prose over %d columns (%d): %s" % (i + 1, COLS, len(line), line))
    head = "\n".join(lines[:25])
    for want in ("cltrace report: ", "device: ", "cost:   cltrace added"):
        if want not in head:
            fail("no %r in the first 25 lines" % want)
    top = report["summary"]["top"]
    if top:
        row = [l for l in lines[:25] if re.match(r"  \S+ +%s +%s" % (re.escape(top[0]["rule"]),
                                                                    re.escape(top_gain(top[0]))), l)]
        if not row:
            fail("the top finding (%s, %s) is not in the first 25 lines" % (top[0]["rule"], top_gain(top[0])))


def markdown(path, jpath):
    lines = open(path).read().split("\n")[:15]
    report = json.load(open(jpath))
    head = "\n".join(lines)
    for want in ("| program |", "| findings |", "| device |", "| cltrace's cost |"):
        if want not in head:
            fail("the summary table's %r is not in the first 15 lines" % want)
    top = report["summary"]["top"]
    if top and not any(("`%s`" % top[0]["rule"]) in l and top_gain(top[0]) in l for l in lines):
        fail("the top finding is not in the first 15 lines")


def sarif(path, jpath, schema_path, root):
    import jsonschema
    doc = json.load(open(path))
    jsonschema.validate(doc, json.load(open(schema_path)))
    findings = json.load(open(jpath))["findings"]
    results = doc["runs"][0]["results"]
    if len(results) != len(findings):
        fail("%d results for %d findings" % (len(results), len(findings)))
    rules = [r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]]
    for r, f in zip(results, findings):
        if r["ruleId"] != f["rule"] or rules[r["ruleIndex"]] != f["rule"]:
            fail("result %s against finding %s" % (r["ruleId"], f["rule"]))
        stack = re.search(r"\((\S+):(\d+)\)", f["where"])
        if not stack:
            continue
        loc = r.get("locations")
        if not loc:
            fail("%s has a stack but no location" % f["rule"])
        uri = loc[0]["physicalLocation"]["artifactLocation"]["uri"]
        if not os.path.isfile(os.path.join(root, uri)):
            fail("%s located in %s, which is not in the checkout" % (f["rule"], uri))


GH = re.compile(r"^::(error|warning|notice) (file=(?:[^,:%]|%2C|%3A|%25)+,line=[1-9][0-9]*,)?"
                r"title=(?:[^,:%]|%2C|%3A|%25)+::(?:[^%\r\n]|%25|%0D|%0A)+$")


def github(path, jpath):
    lines = [l for l in open(path).read().split("\n") if l]
    findings = json.load(open(jpath))["findings"]
    if len(lines) != len(findings):
        fail("%d workflow commands for %d findings" % (len(lines), len(findings)))
    level = {"error": "error", "warning": "warning", "info": "notice"}
    for line, f in zip(lines, findings):
        if not GH.match(line):
            fail("not a workflow command: %s" % line)
        if not line.startswith("::%s " % level[f["severity"]]):
            fail("%s, a finding's %s" % (line[:40], f["severity"]))


# Each report in a frame the size of the browser's first screen, measured
# from the page around them once all have loaded: one start of the browser
# for every report (~4 s each on a 2-core VM). The reports forbid scripts
# (their CSP); the page around them runs the one that measures.
MEASURE = """<script>
window.onload = function () {
  for (const f of document.querySelectorAll("iframe")) {
    f.style.width = innerWidth + "px";
    f.style.height = innerHeight + "px";
    const d = f.contentDocument, r = d.getElementById("summary").getBoundingClientRect();
    const p = document.createElement("pre");
    p.id = "geometry-" + f.id;
    p.textContent = JSON.stringify({top: r.top, bottom: r.bottom, width: r.width, height: r.height,
      vw: f.contentWindow.innerWidth, vh: f.contentWindow.innerHeight,
      top_rows: d.querySelectorAll("#top tr").length - 1, findings: d.querySelectorAll("#findings tr").length - 1});
    document.body.appendChild(p);
  }
};
</script>"""


def html_page(out, *named):
    frames = []
    for item in named:
        name, _, path = item.partition("=")
        page = re.sub(r"<meta http-equiv=Content-Security-Policy[^>]*>", "", open(path, encoding="utf-8").read())
        frames.append('<iframe id="%s" style="border:0;display:block" srcdoc="%s"></iframe>'
                      % (name, html.escape(page, quote=True)))
    with open(out, "w", encoding="utf-8") as f:
        f.write("<!doctype html><html><body style='margin:0'>%s%s</body></html>" % ("".join(frames), MEASURE))


def html_geometry(path, *names):
    dom = open(path).read()
    for name in names:
        m = re.search(r'<pre id="geometry-%s">([^<]*)</pre>' % re.escape(name), dom)
        if not m:
            fail("%s: the page gave no geometry (the browser did not run its check)" % name)
        g = json.loads(m.group(1).replace("&quot;", '"'))
        print("%s: summary panel: top %.0f, bottom %.0f, %.0f x %.0f px in a %d x %d viewport" % (
            name, g["top"], g["bottom"], g["width"], g["height"], g["vw"], g["vh"]))
        if g["top"] < 0 or g["bottom"] > min(800, g["vh"]) or g["width"] < 600 or g["height"] < 80:
            fail("%s: the summary panel is not inside the first 1280 x 800 screen: %s" % (name, g))
        if g["top_rows"] < 1 and g["findings"] > 0:
            fail("%s: the summary panel shows no finding" % name)


def unusable(fmt, path):
    body = open(path).read()
    if fmt == "json":
        d = json.loads(body)
        if d["device_timing"]["usable"] or not d["summary"]["device_timing_unusable"]:
            fail("JSON does not say the device timing is unusable")
        for t in d["transfers"].values():
            if t["count"] and (t["gbps"] is not None or t["ns"] is not None):
                fail("JSON gives a transfer time or bandwidth")
        if any(k["device_ns"] is not None for k in d["kernels"]):
            fail("JSON gives a kernel's device time")
        if any(f["estimated_gain_ns"] is not None for f in d["findings"]):
            fail("JSON gives a gain")
        if any(f["rule"] in ("device-idle", "low-bandwidth") for f in d["findings"]):
            fail("a finding made of device time alone")
        if d["timeline"]["idle_ns"] is not None:
            fail("JSON gives device idle")
        return
    if not re.search(r"device timing\s+unusable\s+on\s+this\s+platform", body, re.I):
        fail("%s does not say the device timing is unusable" % fmt)
    if re.search(r"\d\s*GB/s", body):
        fail("%s gives a bandwidth: %s" % (fmt, re.search(r".{60}\d\s*GB/s", body).group(0)))
    if re.search(r"estimated gain:? \d", body, re.I):
        fail("%s gives a gain" % fmt)


if __name__ == "__main__":
    what, args = sys.argv[1], sys.argv[2:]
    {"text": text, "markdown": markdown, "sarif": sarif, "github": github, "html-page": html_page,
     "html-geometry": html_geometry, "unusable": unusable}[what](*args)
