#!/usr/bin/env python3
"""Cross-check the JUnit XML and Prometheus renderings against the JSON
report of the same run: same results, same statuses, well-formed output.

usage: validate-formats.py REPORT.json REPORT.junit.xml REPORT.prom
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

STATUSES = ["PASS", "WARN", "BLOCKED", "SKIP", "ERROR"]


def fail(msg):
    print(msg)
    sys.exit(1)


def check_junit(doc, path):
    root = ET.parse(path).getroot()
    if root.tag != "testsuites":
        fail(f"{path}: root is <{root.tag}>")
    cases = root.findall("./testsuite/testcase")
    results = doc["results"]
    if len(cases) != len(results) + 2:
        fail(f"{path}: {len(cases)} testcases for {len(results)} results + 2 verdicts")
    for case, res in zip(cases, results):
        want = f"{res['gate']} {res['subject']}"
        if case.get("name") != want:
            fail(f"{path}: testcase {case.get('name')!r}, expected {want!r}")
        kind = {"BLOCKED": "failure", "ERROR": "error", "SKIP": "skipped"}.get(res["status"])
        children = [c.tag for c in case]
        if kind and kind not in children:
            fail(f"{path}: {want} is {res['status']} but has {children}")
        if not kind and any(t in ("failure", "error", "skipped") for t in children):
            fail(f"{path}: {want} is {res['status']} but has {children}")
        if kind in ("failure", "error") and case.find(kind).get("type") != res["reason_code"]:
            fail(f"{path}: {want} type is not {res['reason_code']}")
    suite = root.find("testsuite")
    n_fail = sum(r["status"] == "BLOCKED" for r in results) + \
        sum(p["verdict"] == "BLOCKED" for p in doc["paths"].values())
    if int(suite.get("failures")) != n_fail:
        fail(f"{path}: failures={suite.get('failures')}, expected {n_fail}")
    for case, name in zip(cases[-2:], ("dmabuf", "peermem")):
        verdict = doc["paths"][name]["verdict"]
        bad = case.find("failure") is not None or case.find("error") is not None
        if bad != (verdict != "READY"):
            fail(f"{path}: verdict testcase {name} disagrees with {verdict}")


LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9.]+(e[-+]?[0-9]+)?)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def labels(text):
    out, pos = {}, 0
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m:
            fail(f"bad labels: {text!r}")
        out[m.group(1)] = re.sub(r'\\(.)', lambda x: {"n": "\n"}.get(x.group(1), x.group(1)), m.group(2))
        pos = m.end()
    return out


def check_prom(doc, path):
    gate = {}
    typed = set()
    seen = set()
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# HELP ") or not line:
                continue
            if line.startswith("# TYPE "):
                typed.add(line.split()[2])
                continue
            m = LINE.match(line)
            if not m:
                fail(f"{path}: not exposition format: {line!r}")
            name, lab = m.group(1), labels(m.group(3) or "")
            if name not in typed:
                fail(f"{path}: {name} has no TYPE line before it")
            key = (name, tuple(sorted(lab.items())))
            if key in seen:
                fail(f"{path}: duplicate series {key}")
            seen.add(key)
            if name == "gdrcheck_gate_status" and m.group(4) == "1":
                k = (lab["gate"], lab["subject"])
                if k in gate:
                    fail(f"{path}: two statuses for {k}")
                gate[k] = lab["status"]
            if name == "gdrcheck_path_ready":
                want = int(doc["paths"][lab["path"]]["verdict"] == "READY")
                if int(m.group(4)) != want:
                    fail(f"{path}: {line} disagrees with the JSON")
    want = {(r["gate"], r["subject"]): r["status"] for r in doc["results"]}
    if gate != want:
        fail(f"{path}: gate statuses differ from the JSON: "
             f"{set(gate.items()) ^ set(want.items())}")


def main():
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    check_junit(doc, sys.argv[2])
    check_prom(doc, sys.argv[3])


if __name__ == "__main__":
    main()
