#!/usr/bin/python3
"""The Markdown a user reads: every relative link resolves (a file, and a
heading where the link names one), no figure is dated by a work-period
ordinal ("in the tenth session") instead of a date, the README stays short,
every README table cell is a sentence (at most 300 characters), the docs
that hold figures are references (docs/PERFORMANCE.md at most 400 lines;
each section of it and of docs/GPU.md with a table of figures names the
date they were measured), and every option `cltrace --help` lists is in
the README's table.
  scripts/check-docs.py [CLTRACE_BINARY]"""
import os
import re
import subprocess
import sys

ORD = ("first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
       "fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth")
PERIOD = re.compile(r"\b(%s)(\s+|-)(session|work[ -]period|sprint)s?\b" % ORD, re.I)
BARE = re.compile(r"\bin the (%s)\b(?=\s*[;,.)])" % ORD, re.I)   # "0.32 s in the fifth;"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    out = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^#+\s+(.*)$", line)
        if m:
            out.add(slug(m.group(1)))
    return out


def markdown_files():
    for root, dirs, files in os.walk("."):
        dirs[:] = [d for d in dirs if d not in (".git", "build", "fixtures", "node_modules")]
        for f in files:
            if f.endswith(".md"):
                yield os.path.normpath(os.path.join(root, f))


DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
CELL_MAX, PERF_MAX = 300, 400


def long_cells(md, text):
    """README tables: a sentence a cell; the long account is in the file's header comment"""
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        if line.startswith("|") and not re.match(r"^\|[-| :]+\|$", line):
            for cell in line.strip().strip("|").split(" | "):
                if len(cell.strip()) > CELL_MAX:
                    out.append("%s:%d: a table cell of %d characters (at most %d): %s..." %
                               (md, i, len(cell.strip()), CELL_MAX, cell.strip()[:50]))
    return out


def undated_sections(md, text):
    """each section with a table of figures says when they were measured"""
    out = []
    for sec in re.split(r"\n(?=#{2,4} )", text):
        head = sec.split("\n", 1)[0]
        rows = [l for l in sec.split("\n") if l.startswith("|") and re.search(r"\d", l)]
        if rows and not DATE.search(sec) and not re.match(r"^#{2,4} How ", head):
            out.append("%s: section %r has figures and no date" % (md, head.strip("# ")))
    return out


def main():
    bad = []
    n_links = 0
    for md in sorted(markdown_files()):
        text = open(md, encoding="utf-8").read()
        for i, line in enumerate(text.split("\n"), 1):
            for rx in (PERIOD, BARE):
                m = rx.search(line)
                if m:
                    bad.append("%s:%d: dated by a work-period ordinal, not a date: %r" % (md, i, m.group(0)))
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#") and not target[1:]:
                continue
            n_links += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            if not os.path.exists(dest):
                bad.append("%s: link to %s: no such file" % (md, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append("%s: link to %s: no such heading" % (md, target))
        if os.path.basename(md) == "README.md":
            bad += long_cells(md, text)
        if md in ("docs/PERFORMANCE.md", "docs/GPU.md"):
            bad += undated_sections(md, text)
        if md == "docs/PERFORMANCE.md" and text.count("\n") > PERF_MAX:
            bad.append("%s: %d lines (at most %d: a reference, today's figures; history in the changelog)" %
                       (md, text.count("\n"), PERF_MAX))
    readme = open("README.md", encoding="utf-8").read()
    if readme.count("\n") > 250:
        bad.append("README.md: %d lines (at most 250: the rest goes in docs/)" % readme.count("\n"))
    if len(sys.argv) > 1:
        help_text = subprocess.run([sys.argv[1], "--help"], capture_output=True, text=True).stdout
        table = readme[readme.index("## Options"):]
        table = table[:table.index("\n## ")]
        opts = set(re.findall(r"^\s+(CLTRACE_[A-Z_]+)", help_text, re.M))
        opts |= set(re.findall(r"^\s+(-[a-z]|--[a-z-]+)", help_text, re.M))
        for o in sorted(opts):
            if "`%s" % o not in table:
                bad.append("README.md: option %s of cltrace --help is not in the options table" % o)
        if len(opts) < 10:
            bad.append("cltrace --help listed only %d options: %s" % (len(opts), sorted(opts)))
    for b in bad:
        print(b)
    print("docs: %d Markdown links checked, %s" % (n_links, "%d problem(s)" % len(bad) if bad else "all resolve, "
                                                   "no work-period ordinals, README short, table cells a sentence, "
                                                   "figures dated, every option in it"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
