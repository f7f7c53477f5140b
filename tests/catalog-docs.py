#!/usr/bin/env python3
"""The parts of the docs that the gate catalog owns, made from
`gdrcheck --list-codes --json`:

  man/gdrcheck.8                     the REASON CODES section (between the
                                     BEGIN/END REASON CODES comment lines)
  report/gdrcheck-report.schema.json $defs.reason_code's enum

  catalog-docs.py CATALOG.json check   print a diff, exit 1 on drift
  catalog-docs.py CATALOG.json update  rewrite both parts in place
"""
import difflib
import json
import re
import sys

MAN = "man/gdrcheck.8"
SCHEMA = "report/gdrcheck-report.schema.json"
BEGIN = '.\\" BEGIN REASON CODES (made by make catalog-docs from gate/gates.def)\n'
END = '.\\" END REASON CODES\n'


def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text[:1] in (".", "'"):
        text = "\\&" + text
    return text


def man_section(cat):
    out = [BEGIN, ".SH REASON CODES\n",
           "Every reason code a result can carry, with the statuses it comes "
           "with and what it means (... stands for a value read on the node); "
           "the same as\n", ".BR \"gdrcheck \\-\\-list\\-codes\" .\n"]
    by_gate = {}
    for c in cat["codes"]:
        by_gate.setdefault(c["gate"], []).append(c)
    groups = [(None, "Shared codes (any gate)")] + \
        [(g["id"], g["id"]) for g in cat["gates"]]
    for gid, title in groups:
        codes = by_gate.get(gid, [])
        if not codes:
            continue
        out.append(".SS %s\n" % roff(title))
        for c in codes:
            out.append(".TP\n.B %s\n" % c["code"])
            out.append("(%s) %s\n" % (", ".join(c["statuses"]),
                                      roff(c["meaning"].replace("…", "..."))))
            for r in c["remedies"]:
                out.append(".br\nRemedy: %s\n" % roff(r["text"].replace("…", "...")))
    out.append(END)
    return "".join(out)


def man_new(cat, text):
    section = man_section(cat)
    if BEGIN in text and END in text:
        a = text.index(BEGIN)
        b = text.index(END) + len(END)
        return text[:a] + section + text[b:]
    # First time: before EXIT STATUS.
    a = text.index(".SH EXIT STATUS\n")
    return text[:a] + section + text[a:]


def schema_new(cat, text):
    codes = [c["code"] for c in cat["codes"]]
    # One code a line: a new code adds a line, it rewraps nothing.
    lines = ['    "reason_code": {"type": "string", "enum": [\n']
    for i, c in enumerate(codes):
        lines.append("      %s%s\n" % (json.dumps(c),
                                        "," if i < len(codes) - 1 else ""))
    lines.append("    ]},\n")
    new = "".join(lines)
    pat = re.compile(r'^    "reason_code": \{.*?\},\n', re.M | re.S)
    m = pat.search(text)
    if not m:
        sys.exit("catalog-docs: no reason_code in %s" % SCHEMA)
    return text[:m.start()] + new + text[m.end():]


def main():
    cat = json.load(open(sys.argv[1]))
    mode = sys.argv[2]
    drift = 0
    for path, make in ((MAN, man_new), (SCHEMA, schema_new)):
        old = open(path, encoding="utf-8").read()
        new = make(cat, old)
        if new == old:
            print("PASS %s matches the catalog" % path)
            continue
        if mode == "update":
            open(path, "w", encoding="utf-8").write(new)
            print("updated %s" % path)
            continue
        print("FAIL %s differs from the catalog (make catalog-docs):" % path)
        sys.stdout.writelines(difflib.unified_diff(
            old.splitlines(True), new.splitlines(True),
            path, "gdrcheck --list-codes --json"))
        drift += 1
    if mode == "check":
        print("catalog: %d passed, %d failed" % (2 - drift, drift))
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main())
