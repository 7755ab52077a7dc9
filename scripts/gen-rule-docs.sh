#!/usr/bin/env bash
# The rule lists of report/README.md and man/cltrace-report.1, from the rule
# table (`cltrace-report --rules`): run after adding or changing a rule;
# make test checks both agree with the table.  bash scripts/gen-rule-docs.sh
set -eu
cd "$(dirname "$0")/.."
R=${REPORT:-build/cltrace-report}
/usr/bin/python3 - "$R" <<'PY'
import json, re, subprocess, sys
r = sys.argv[1]
md = subprocess.run([r, "--rules", "--format", "markdown"], capture_output=True, text=True, check=True).stdout
rules = json.loads(subprocess.run([r, "--rules", "--format", "json"], capture_output=True, text=True,
                                  check=True).stdout)["rules"]
p = "report/README.md"
s = open(p).read()
s = re.sub(r"(<!-- rules: [^\n]*-->\n).*?(<!-- end rules -->)", lambda m: m.group(1) + md + m.group(2), s, flags=re.S)
open(p, "w").write(s)
def roff(t):
    return t.replace("\\", "\\\\").replace("-", "\\-").replace("`", "")
sec = [".SH RULES", "Every rule, its default severity and when it fires (" + roff("cltrace-report --rules") +
       " prints the same list; report/README.md says where each threshold comes from):"]
for x in rules:
    sec += [".TP", ".B " + roff(x["id"]), ".RI (%s)" % x["severity"], roff(x["fires"]) +
            (" (" + roff(x["source"]) + ")" if x["source"] else "") + "."]
p = "man/cltrace-report.1"
s = open(p).read()
s = re.sub(r"\.SH RULES\n.*?(?=\.SH )", "", s, flags=re.S)
s = s.replace(".SH OPTIONS", "\n".join(sec) + "\n.SH OPTIONS", 1)
open(p, "w").write(s)
print("rule docs: %d rules into report/README.md and man/cltrace-report.1" % len(rules))
PY
