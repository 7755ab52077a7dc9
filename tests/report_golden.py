#!/usr/bin/python3
"""Compare cltrace-report's outputs (GOT) with those it gave before a change
(EXPECTED), file by file: report_golden.py EXPECTED GOT.

Identical, except for these agreed differences:
  - a finding's text longer than the field that once held it: the old text
    was cut at 479 (where), 319 (numbers, fix) or 199 (gain_method)
    characters and the new one starts with it (texts are no longer cut);
  - findings of one severity in another order where neither carries an
    estimated gain or both carry the same (the rules run family by family:
    ranking is by severity, then gain, then the order the rules ran), and the
    JUnit test cases and a job's rule lists in the rule table's order.
Where the JSON of a case differs only so, the other formats of it are
compared line for line as multisets (a reorder, nothing added or lost) with
cut texts allowed to have grown."""
import json
import os
import sys

CUT = {"where": 479, "numbers": 319, "fix": 319, "gain_method": 199}


def grown(old, new, field):
    return old == new or (isinstance(old, str) and isinstance(new, str) and len(old) == CUT.get(field, -1)
                          and new.startswith(old))


def same_finding(a, b):
    if set(a) != set(b):
        return False
    return all(grown(a[k], b[k], k) if k in CUT else a[k] == b[k] for k in a)


def ranked(fs):
    """severity descending; within it, estimated gains first, largest first"""
    order = {"error": 0, "warning": 1, "info": 2}
    def key(f):
        g = f.get("estimated_gain_ns")
        return (order[f["severity"]], 0 if g is not None else 1, -(g or 0))
    keys = [key(f) for f in fs if f["rule"] != "dropped-calls"]
    return keys == sorted(keys)


def findings_agree(old, new):
    """the same findings, each matched once; the new order a valid ranking"""
    if len(old) != len(new):
        return "finding count %d -> %d" % (len(old), len(new))
    left = list(new)
    for f in old:
        m = next((g for g in left if same_finding(f, g)), None)
        if m is None:
            return "finding lost or changed: %s %s" % (f["rule"], f["where"][:120])
        left.remove(m)
    if not ranked(new):
        return "findings out of rank order"
    if old and old[0]["rule"] == "dropped-calls" and new[0]["rule"] != "dropped-calls":
        return "dropped-calls no longer first"
    return None


def json_agree(old, new, path="$"):
    if isinstance(old, dict) and isinstance(new, dict):
        if set(old) != set(new):
            return "%s: keys %s -> %s" % (path, sorted(set(old) - set(new)), sorted(set(new) - set(old)))
        for k in old:
            if k == "findings" and isinstance(old[k], list):
                why = findings_agree(old[k], new[k])
            elif k == "rules" and isinstance(old[k], str):      # a job row's rules, space separated
                why = None if sorted(old[k].split()) == sorted(new[k].split()) else "%s.rules" % path
            else:
                why = json_agree(old[k], new[k], "%s.%s" % (path, k))
            if why:
                return why
        return None
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return "%s: length %d -> %d" % (path, len(old), len(new))
        for i, (a, b) in enumerate(zip(old, new)):
            why = json_agree(a, b, "%s[%d]" % (path, i))
            if why:
                return why
        return None
    return None if old == new else "%s: %r -> %r" % (path, old, new)


def lines_agree(old, new):
    a, b = sorted(old.splitlines()), sorted(new.splitlines())
    if a == b:
        return None
    # a cut text that grew: each old line matched by a new line that starts with it
    left = list(b)
    for line in a:
        m = line if line in left else next((x for x in left if x.startswith(line[:60]) and len(x) > len(line)), None)
        if m is None:
            return "line lost or changed: %s" % line[:160]
        left.remove(m)
    return None if not left else "line added: %s" % left[0][:160]


def main(exp, got):
    bad = 0
    names = sorted(os.listdir(exp))
    cases = sorted({n.split(".")[0] for n in names})
    for case in cases:
        files = [n for n in names if n.split(".")[0] == case]
        old = {n: open(os.path.join(exp, n), encoding="utf-8", errors="replace").read() for n in files}
        try:
            new = {n: open(os.path.join(got, n), encoding="utf-8", errors="replace").read() for n in files}
        except OSError as e:
            print("FAIL  %s: %s" % (case, e))
            bad += 1
            continue
        differ = [n for n in files if old[n] != new[n]]
        if not differ:
            print("ok    %-28s identical (%d files)" % (case, len(files)))
            continue
        why = None
        jn = case + ".json"
        if jn in differ:
            try:
                why = json_agree(json.loads(old[jn]), json.loads(new[jn]))
            except ValueError as e:
                why = "json: %s" % e
        for n in differ:
            if why:
                break
            if n != jn:
                why = lines_agree(old[n], new[n]) and "%s: %s" % (n, lines_agree(old[n], new[n]))
        if why:
            print("FAIL  %-28s %s" % (case, why))
            bad += 1
        else:
            print("ok    %-28s agreed differences only in %s" % (case, ", ".join(differ)))
    print("report_golden: %d of %d cases as before" % (len(cases) - bad, len(cases)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
