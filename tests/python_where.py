"""Checks a pyopencl program's findings against the lines its source marks
(tests/apps/pywhere: "# NAME-LINE"): tests/python.sh.

    python_where.py DIR JSON SARIF GITHUB DUMP SCHEMA
DIR: the program's folder; JSON, SARIF, GITHUB: cltrace-report's outputs;
DUMP: pftrace-lint --dump of the trace; SCHEMA: SARIF 2.1.0's JSON schema.
"""
import json
import os
import re
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def marks(folder):
    out = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            for i, line in enumerate(open(os.path.join(folder, name)), 1):
                m = re.search(r"# ([A-Z]+)-LINE", line)
                if m:
                    out[m.group(1)] = (os.path.join(folder, name), i)
    return out


def place(where):
    """The where's first frame: (file, line)."""
    m = re.search(r"\(([^()\s]+\.py):(\d+)\)", where)
    return (m.group(1), int(m.group(2))) if m else None


def main(folder, jpath, spath, gpath, dpath, schema):
    folder = os.path.abspath(folder)
    mk = marks(folder)
    report = json.load(open(jpath))
    findings = report["findings"]
    lines = {(f, l) for f, l in mk.values()}
    # every finding with a stack names the program's file and line first
    stacked = [f for f in findings if f.get("stack")]
    if len(stacked) < 6:
        fail("%d findings with a stack" % len(stacked))
    for f in stacked:
        p = place(f["where"])
        if not p or not p[0].startswith(folder):
            fail("%s: where is not the program's: %s" % (f["rule"], f["where"][:160]))
        if not any(not fr["library"] for fr in f["stack"]) or not any(fr["library"] for fr in f["stack"]):
            fail("%s: its stack has no program frame or no library frame" % f["rule"])
        if any(fr["library"] != bool(re.search(r"(dist|site)-packages|/lib/python3|python3\.\d+$|^<|\.so",
                                                fr.get("file", "") + " " + fr["function"]))
               and not fr.get("file", "").startswith(folder) for fr in f["stack"] if fr.get("file")):
            fail("%s: a frame misjudged: %s" % (f["rule"], f["stack"]))

    def at(rule, mark, text=None):
        want = mk[mark]
        for f in findings:
            if f["rule"] == rule and (text is None or text in f["where"]) and place(f["where"]) == want:
                return f
        fail("no %s finding at %s:%d (%s)" % (rule, want[0], want[1], mark))

    at("api-errors", "FAIL", "clCreateKernel")
    at("small-transfers", "SMALL")
    at("work-group-multiple", "ODD", "scale")
    at("leaks", "LEAK", "clCreateBuffer")                    # the second module's
    at("work-group-small", "ARRAY")                          # pyopencl's generated kernel: the user's line
    if report.get("summary", {}).get("ended_by") not in (None, "_exit"):
        fail("ended by %s" % report["summary"]["ended_by"])

    # SARIF: valid, each located result at the program's marked line, with its stack
    import jsonschema
    doc = json.load(open(spath))
    jsonschema.validate(doc, json.load(open(schema)))
    results = doc["runs"][0]["results"]
    located = 0
    for r in results:
        if "locations" not in r:
            continue
        pl = r["locations"][0]["physicalLocation"]
        uri, line = pl["artifactLocation"]["uri"], pl["region"]["startLine"]
        if (os.path.abspath(uri), line) not in lines and not (os.path.abspath(uri).startswith(folder)):
            fail("SARIF result %s at %s:%d" % (r["ruleId"], uri, line))
        frames = r["stacks"][0]["frames"]
        if not any(fr["properties"]["library"] for fr in frames):
            fail("SARIF %s: no library frame marked" % r["ruleId"])
        located += 1
    if located < 6:
        fail("%d SARIF results located" % located)
    gh = [l for l in open(gpath).read().split("\n") if l.startswith("::")]
    ghat = {(os.path.abspath(m.group(1)), int(m.group(2))) for m in
            (re.match(r"::\w+ file=([^,]+),line=(\d+),", l) for l in gh) if m}
    for mark in ("FAIL", "SMALL", "ODD", "LEAK", "ARRAY"):
        if mk[mark] not in ghat:
            fail("no GitHub annotation at %s (%s:%d)" % (mark, *mk[mark]))

    # the trace: the second thread's launches and the blocking read (GIL released) carry their lines
    dump = open(dpath).read()
    if dump.startswith("{"):     # tests/tracedump.py's JSON: the same lines the lint's --dump gives
        dump = lint_lines(json.loads(dump))
    wherepy = re.escape(mk["THREAD"][0])
    if not re.search(r"stack: .*<lambda> \(%s:%d\) > .*odd_groups \(%s:%d\)" %
                     (wherepy, mk["THREAD"][1], wherepy, mk["ODD"][1]), dump):
        fail("no launch from the second thread with its Python frames")
    blocking = re.findall(r"clEnqueueReadBuffer \{[^\n]*'debug.blocking_read': True[^\n]*\n\s*stack: ([^\n]*)", dump)
    if not any("main (%s:%d)" % mk["BLOCKING"] in b for b in blocking):
        fail("no blocking read with its line in its stack: %s" % [b[-200:] for b in blocking])
    print("ok: %d findings at the program's lines, %d SARIF results located, GitHub %d, thread and blocking read"
          % (len(stacked), located, len(ghat)))


def lint_lines(trace):
    """A slice and its stack as pftrace-lint --dump writes them (the parts read above)."""
    out = []
    for s in trace["slices"]:
        args = ", ".join("'debug.%s': %r" % (k, v) for k, v in (s.get("args") or {}).items())
        out.append("%s {%s}" % (s["name"], args))
        if s.get("stack"):
            out.append("    stack: " + " > ".join("%s (%s:%s)" % (f["function"], f["file"], f["line"]) if f["file"]
                                                    else f["function"] for f in s["stack"]))
    return "\n".join(out) + "\n"


def at_marks(folder, jpath, *wanted):
    """python_where.py marks DIR JSON RULE=MARK...: each rule's finding at its marked line"""
    folder = os.path.abspath(folder)
    mk = marks(folder)
    findings = json.load(open(jpath))["findings"]
    for w in wanted:
        rule, mark = w.split("=")
        if not any(f["rule"] == rule and place(f["where"]) == mk[mark] for f in findings):
            fail("no %s finding at %s:%d (%s): %s" % (rule, mk[mark][0], mk[mark][1], mark,
                                                     [f["where"][:120] for f in findings if f["rule"] == rule]))
    print("ok: %d findings at their lines" % len(wanted))


if __name__ == "__main__":
    if sys.argv[1] == "marks":
        at_marks(*sys.argv[2:])
    else:
        main(*sys.argv[1:])
