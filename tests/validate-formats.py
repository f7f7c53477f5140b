#!/usr/bin/env python3
"""Cross-check the JUnit XML and Prometheus renderings against the JSON
report of the same run: same results, same statuses, well-formed output.

JUnit (format 2, property gdrcheck.junit_format): one testcase per gate and
subject, then the path verdicts and "overall"; a <failure>/<error> only
for results that make the policy fail (none when the run exits 0), derived
here from the JSON independently of the renderer. Prometheus (format 2,
gdrcheck_info present): per-result series only for the host, GPUs, NICs and
ports, pair results counted per gate and status, the path verdicts with
their deciding gate; `promtool check metrics` must accept it when promtool
is installed. Recordings made before format 2 (examples/h200 until they
are recorded again) are checked by the earlier rules, with a note.

usage: validate-formats.py REPORT.json REPORT.junit.xml REPORT.prom
"""
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import unfold  # noqa: E402  tests/unfold.py: folded pair results, one per subject

STATUSES = ["PASS", "WARN", "BLOCKED", "SKIP", "ERROR"]
# Forbidden in XML 1.0 even as references; also C1 and DEL, which the
# model's rule escapes.
BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")


def fail(msg):
    print(msg)
    sys.exit(1)


def read_utf8(path):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        fail(f"{path}: not valid UTF-8: {e}")


def accepted(doc):
    return {"dmabuf": ["dmabuf"], "peermem": ["peermem"],
            "nccl": ["nccl"]}.get(doc["require"], ["dmabuf", "peermem"])


def failing(doc):
    """(gate, subject) of the results that make the policy fail."""
    out = set()
    if doc["verdict"]["exit_code"] == 0:
        return out
    acc = accepted(doc)
    if not any(doc["paths"][p]["verdict"] == "READY" for p in acc):
        sets = {}
        for p in acc:
            pv = doc["paths"][p]
            if pv["verdict"] == "READY":
                continue
            sets[p] = {(b["gate"], b["subject"]) for b in pv["blockers"]}
            if pv["gate"]:
                sets[p].add((pv["gate"], pv["subject"]))
        # A path whose blockers include all of another's is not needed
        # (equal sets: the first path stays).
        order = list(sets)
        for p in order:
            if not any(q != p and sets[q] and sets[q] <= sets[p] and
                       (sets[q] != sets[p] or order.index(q) < order.index(p))
                       for q in order):
                out.update(sets[p])
    if doc["policy"]["warn_fails"]:
        out.update((r["gate"], r["subject"]) for r in doc["results"]
                   if r["status"] == "WARN")
    # A lost or trained-down rail fails under every policy, with the
    # nic.port result of its port and the nic.uverbs result of its device
    # (report/failing.c).
    for r in doc["results"]:
        if r["gate"] != "topo.rails" or r["status"] != "BLOCKED":
            continue
        out.add((r["gate"], r["subject"]))
        ev = r.get("evidence", {})
        port = f"{ev.get('nic')}/{ev.get('port')}"
        out.update((x["gate"], x["subject"]) for x in doc["results"]
                   if x["status"] == "BLOCKED" and
                   ((x["gate"] == "nic.port" and x["subject"] == port) or
                    (x["gate"] == "nic.uverbs" and x["subject"] == ev.get("nic"))))
    # A failing result fails with the BLOCKED result it stands on.
    for r in doc["results"]:
        by = r.get("evidence", {}).get("caused_by")
        if (r["gate"], r["subject"]) in out and by and " " in by:
            gate, subject = by.split(" ", 1)
            out.update((x["gate"], x["subject"]) for x in doc["results"]
                       if x["gate"] == gate and x["subject"] == subject
                       and x["status"] == "BLOCKED")
    return out


def outcome(case):
    kinds = [c.tag for c in case if c.tag in ("failure", "error", "skipped")]
    if len(kinds) > 1:
        fail(f"testcase {case.get('name')!r} has {kinds}")
    return kinds[0] if kinds else None


def check_verdict_cases(doc, path, root, suite, cases, pnames, n):
    """The path verdicts' and the overall testcases (the last ones), then the
    suite's counts against n, the outcomes counted so far (formats 2, 3)."""
    exit_code = doc["verdict"]["exit_code"]
    acc = accepted(doc)
    any_ready = any(doc["paths"][p]["verdict"] == "READY" for p in acc)
    for case, name in zip(cases[-len(pnames) - 1:-1], pnames):
        verdict = doc["paths"][name]["verdict"]
        kind = None
        if exit_code and name in acc and not any_ready and verdict != "READY":
            kind = "failure" if verdict == "BLOCKED" else "error"
        if case.get("name") != name or outcome(case) != kind:
            fail(f"{path}: verdict testcase {name} ({verdict}) has "
                 f"{outcome(case)}, expected {kind}")
        if kind:
            n[kind] += 1
    overall = cases[-1]
    kind = None if exit_code == 0 else "failure" if exit_code == 1 else "error"
    if overall.get("name") != "overall" or outcome(overall) != kind:
        fail(f"{path}: overall testcase has {outcome(overall)}, expected {kind} "
             f"(exit {exit_code})")
    if kind and overall.find(kind).get("type") != doc["verdict"]["status"]:
        fail(f"{path}: overall type is not {doc['verdict']['status']}")
    if kind:
        n[kind] += 1
    if exit_code == 0 and (n["failure"] or n["error"]):
        fail(f"{path}: an exit-0 run with {n['failure']} failures, {n['error']} errors")
    for el in (root, suite):
        for attr, key in (("failures", "failure"), ("errors", "error"),
                          ("skipped", "skipped")):
            if int(el.get(attr)) != n[key]:
                fail(f"{path}: <{el.tag}> {attr}={el.get(attr)}, counted {n[key]}")
        if int(el.get("tests")) != len(cases):
            fail(f"{path}: <{el.tag}> tests={el.get('tests')}, {len(cases)} testcases")


def check_junit(doc, path):
    text = read_utf8(path)
    if BAD_XML.search(text):
        fail(f"{path}: a character XML 1.0 forbids (or a C1 control)")
    try:
        root = ET.fromstring(text.encode("utf-8"))
    except ET.ParseError as e:
        fail(f"{path}: not well-formed XML: {e}")
    if root.tag != "testsuites":
        fail(f"{path}: root is <{root.tag}>")
    suite = root.find("testsuite")
    props = {p.get("name"): p.get("value")
             for p in root.findall("./testsuite/properties/property")}
    if props.get("gdrcheck.junit_format") == "3":
        return check_junit_v3(doc, path, root, suite)
    if props.get("gdrcheck.junit_format") != "2":
        print(f"{path}: legacy JUnit format (before format 2): record it again")
        return check_junit_v1(doc, path, root)
    print(f"{path}: legacy JUnit format 2 (one testcase per result): record it again")
    results = doc["results"]
    cases = root.findall("./testsuite/testcase")
    # One testcase per path (dmabuf, peermem and, since schema 1.1, nccl).
    pnames = list(doc["paths"])
    if len(cases) != len(results) + len(pnames) + 1:
        fail(f"{path}: {len(cases)} testcases for {len(results)} results + "
             f"{len(pnames) + 1} verdicts")
    names = [c.get("name") for c in cases]
    if len(set(names)) != len(names):
        fail(f"{path}: two testcases share a name (one per gate and subject)")
    if suite.get("hostname") != doc["host"]["hostname"]:
        fail(f"{path}: hostname {suite.get('hostname')!r} is not the JSON's")
    fails = failing(doc)
    exit_code = doc["verdict"]["exit_code"]
    n = {"failure": 0, "error": 0, "skipped": 0}
    for case, res in zip(cases, results):
        want = f"{res['gate']} {res['subject']}"
        if case.get("name") != want:
            fail(f"{path}: testcase {case.get('name')!r}, expected {want!r}")
        if case.get("classname") != f"gdrcheck.{res['layer']}":
            fail(f"{path}: {want} classname {case.get('classname')!r}")
        got = outcome(case)
        if (res["gate"], res["subject"]) in fails:
            kind = "failure" if res["status"] in ("BLOCKED", "WARN", "PASS") else "error"
        else:
            kind = "skipped" if res["status"] == "SKIP" else None
        if got != kind:
            fail(f"{path}: {want} ({res['status']}, exit {exit_code}) has "
                 f"{got}, expected {kind}")
        if kind in ("failure", "error") and case.find(kind).get("type") != res["reason_code"]:
            fail(f"{path}: {want} type is not {res['reason_code']}")
        if got:
            n[got] += 1
    check_verdict_cases(doc, path, root, suite, cases, pnames, n)


def check_junit_v3(doc, path, root, suite):
    """Format 3: one testcase per gate (results folded), the path verdicts,
    overall. A gate fails where one of its results makes the policy fail;
    it is skipped with a BLOCKED or ERROR result the policy does not need,
    or when all its results are SKIP; else it passes."""
    results = doc["results"]
    cases = root.findall("./testsuite/testcase")
    gates = list(dict.fromkeys(r["gate"] for r in results))
    pnames = list(doc["paths"])
    if len(cases) != len(gates) + len(pnames) + 1:
        fail(f"{path}: {len(cases)} testcases for {len(gates)} gates + "
             f"{len(pnames) + 1} verdicts")
    if suite.get("hostname") != doc["host"]["hostname"]:
        fail(f"{path}: hostname {suite.get('hostname')!r} is not the JSON's")
    fails = failing(doc)
    exit_code = doc["verdict"]["exit_code"]
    n = {"failure": 0, "error": 0, "skipped": 0}
    for case, gate in zip(cases, gates):
        rs = [r for r in results if r["gate"] == gate]
        if case.get("name") != gate:
            fail(f"{path}: testcase {case.get('name')!r}, expected {gate!r}")
        if case.get("classname") != f"gdrcheck.{rs[0]['layer']}":
            fail(f"{path}: {gate} classname {case.get('classname')!r}")
        failing_rs = [r for r in rs if (r["gate"], r["subject"]) in fails]
        if any(r["status"] in ("BLOCKED", "WARN", "PASS") for r in failing_rs):
            kind = "failure"
        elif failing_rs:
            kind = "error"
        elif any(r["status"] in ("BLOCKED", "ERROR") for r in rs) or \
                all(r["status"] == "SKIP" for r in rs):
            kind = "skipped"
        else:
            kind = None
        got = outcome(case)
        if got != kind:
            fail(f"{path}: {gate} ({sorted(set(r['status'] for r in rs))}, "
                 f"exit {exit_code}) has {got}, expected {kind}")
        if kind in ("failure", "error"):
            codes = {r["reason_code"] for r in failing_rs}
            if case.find(kind).get("type") not in codes:
                fail(f"{path}: {gate} type {case.find(kind).get('type')} "
                     f"is none of {sorted(codes)}")
        if got:
            n[got] += 1
    check_verdict_cases(doc, path, root, suite, cases, pnames, n)


def check_junit_v1(doc, path, root):
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


# The series budget of one node's report: low cardinality whatever the
# node's size (the 8-GPU x 12-NIC scenarios stay well under it).
MAX_SERIES = 500


def promtool(path):
    tool = shutil.which("promtool")
    if not tool:
        # The scenarios suite needs it (Debian: prometheus); only an
        # explicit opt-out skips the check.
        if os.environ.get("GDRCHECK_NO_PROMTOOL") == "1":
            return
        fail(f"{path}: promtool not found (install Debian's prometheus package, "
             "or set GDRCHECK_NO_PROMTOOL=1 to skip this check)")
    with open(path, "rb") as f:
        p = subprocess.run([tool, "check", "metrics"], stdin=f,
                           capture_output=True, text=True)
    if p.returncode != 0 or p.stdout.strip() or p.stderr.strip():
        fail(f"{path}: promtool check metrics rejects it (exit {p.returncode}):\n"
             f"{p.stdout}{p.stderr}")


def parse_prom(path):
    """[(name, labels, value)], checking the exposition syntax."""
    typed, seen, series = set(), set(), []
    for line in read_utf8(path).split("\n"):
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
        series.append((name, lab, float(m.group(4))))
    return series


STATUS_VALUE = {"PASS": 0, "SKIP": 1, "WARN": 2, "BLOCKED": 3, "ERROR": 4}
VERDICT_VALUE = {"READY": 0, "READY-UNPROVEN": 1, "UNKNOWN": 2, "BLOCKED": 3}
PROBLEM = ("WARN", "BLOCKED", "ERROR")
# The series budget of an 8 x 12 node (issue 26 item 6).
MAX_SERIES_8X12 = 300


def check_prom(doc, path):
    """Format 3: a state is the sample value; reasons only of problems."""
    series = parse_prom(path)
    names = {name for name, _, _ in series}
    if "gdrcheck_info" not in names:
        print(f"{path}: legacy Prometheus format (before format 2): record it again")
        return check_prom_v1(doc, path)
    if "gdrcheck_path_verdict" in names:
        print(f"{path}: Prometheus format 2 (state as labels): record it again")
        return check_prom_v2(doc, path, series)
    promtool(path)
    kind = {s["id"]: s["kind"] for s in doc["subjects"]}
    nnic = sum(1 for k in kind.values() if k == "nic")
    ngpu = sum(1 for k in kind.values() if k == "gpu")
    if len(series) >= MAX_SERIES and nnic <= 64:
        fail(f"{path}: {len(series)} series, the budget is under {MAX_SERIES}")
    if ngpu <= 8 and nnic <= 12 and len(series) >= MAX_SERIES_8X12:
        fail(f"{path}: {len(series)} series on a node of at most 8 GPUs x 12 NICs, "
             f"the budget is under {MAX_SERIES_8X12}")
    single = {(r["gate"], r["subject"]): r for r in doc["results"]
              if kind[r["subject"]] != "pair"}
    pairs = {}
    for r in doc["results"]:
        if kind[r["subject"]] == "pair":
            w, n = pairs.get(r["gate"], (0, 0))
            pairs[r["gate"]] = (max(w, STATUS_VALUE[r["status"]]),
                                n + (r["status"] in PROBLEM))
    gate, reason, pstatus, pprob, blocked, pathv = {}, {}, {}, {}, {}, {}
    for name, lab, value in series:
        if "subject" in lab and kind.get(lab["subject"]) == "pair" and \
                name != "gdrcheck_path_blocked_by":
            fail(f"{path}: a series per pair: {name} {lab}")
        if name == "gdrcheck_gate_status":
            gate[(lab["gate"], lab["subject"])] = value
        elif name == "gdrcheck_gate_reason":
            reason[(lab["gate"], lab["subject"], lab["reason_code"])] = True
            if value != 1:
                fail(f"{path}: gate_reason {lab} = {value}, not 1")
        elif name == "gdrcheck_pair_status":
            pstatus[lab["gate"]] = int(value)
        elif name == "gdrcheck_pair_problems":
            pprob[lab["gate"]] = int(value)
        elif name == "gdrcheck_path_status":
            pathv[lab["path"]] = int(value)
        elif name == "gdrcheck_path_blocked_by":
            blocked[lab["path"]] = (lab["gate"], lab["subject"], lab["reason_code"])
        elif name == "gdrcheck_path_ready":
            want = int(doc["paths"][lab["path"]]["verdict"] == "READY")
            if value != want:
                fail(f"{path}: path_ready {lab} = {value}, JSON says {want}")
        elif name == "gdrcheck_exit_code":
            if value != doc["verdict"]["exit_code"]:
                fail(f"{path}: exit_code {value}, JSON says {doc['verdict']['exit_code']}")
        elif name == "gdrcheck_verdict":
            if value != VERDICT_VALUE[doc["verdict"]["status"]]:
                fail(f"{path}: verdict {value}, JSON says {doc['verdict']['status']}")
        elif name == "gdrcheck_gpu_ready":
            if lab["gpu"] != lab["subject"].removeprefix("GPU") or \
                    kind.get(lab["subject"]) != "gpu" or \
                    lab["Hostname"] != doc["host"]["hostname"]:
                fail(f"{path}: gpu_ready labels {lab}")
    # A gate with several results for one subject (topo.rails: a GPU's
    # lost rails) has one status series, the worst, and a reason series
    # per distinct code.
    want_gate, want_reason = {}, {}
    for r in doc["results"]:
        if kind[r["subject"]] == "pair":
            continue
        k = (r["gate"], r["subject"])
        want_gate[k] = max(want_gate.get(k, 0), STATUS_VALUE[r["status"]])
        if r["status"] in PROBLEM:
            want_reason[k + (r["reason_code"] or "",)] = True
    if gate != want_gate:
        fail(f"{path}: gate statuses differ from the JSON: "
             f"{set(gate.items()) ^ set(want_gate.items())}")
    if reason != want_reason:
        fail(f"{path}: gate reasons differ from the JSON: "
             f"{set(reason.items()) ^ set(want_reason.items())}")
    if pstatus != {g: w for g, (w, _) in pairs.items()} or \
            pprob != {g: n for g, (_, n) in pairs.items()}:
        fail(f"{path}: pair status/problems differ from the JSON: {pstatus} {pprob} vs {pairs}")
    want_paths = {p: VERDICT_VALUE[v["verdict"]] for p, v in doc["paths"].items()}
    if pathv != want_paths:
        fail(f"{path}: path_status {pathv}, JSON says {want_paths}")
    want_blocked = {p: (v["gate"] or "", v["subject"] or "", v["reason_code"] or "")
                    for p, v in doc["paths"].items() if v["verdict"] == "BLOCKED"}
    if blocked != want_blocked:
        fail(f"{path}: path_blocked_by {blocked}, JSON says {want_blocked}")
    # Bounded by devices: one series per non-pair result and one reason per
    # problem, 2 per pair gate, 4 per path, one gpu_ready per GPU, one
    # rail_lost per lost rail, a fixed rest.
    lost = sum(1 for r in doc["results"]
               if r["gate"] == "topo.rails" and r["status"] == "BLOCKED")
    limit = len(single) + len(want_reason) + 2 * len(pairs) + 4 * len(doc["paths"]) \
        + ngpu + lost + 16
    if len(series) > limit:
        fail(f"{path}: {len(series)} series, more than {limit}")


def check_prom_v2(doc, path, series):
    """Format 2 (examples recorded before format 3): states as labels."""
    promtool(path)
    kind = {s["id"]: s["kind"] for s in doc["subjects"]}
    # The fixed budget holds for nodes up to 64 RDMA devices (the 8 x 12
    # scenarios); an SR-IOV node (hundreds of VFs) has a series per
    # device gate, still bounded by the device-scaled limit below.
    if len(series) >= MAX_SERIES and \
            sum(1 for k in kind.values() if k == "nic") <= 64:
        fail(f"{path}: {len(series)} series, the budget is under {MAX_SERIES}")
    single = {(r["gate"], r["subject"]): (r["status"], r["reason_code"])
              for r in doc["results"] if kind[r["subject"]] != "pair"}
    pairs = {}
    for r in doc["results"]:
        if kind[r["subject"]] == "pair":
            pairs.setdefault(r["gate"], {s: 0 for s in STATUSES})[r["status"]] += 1
    gate, counted, paths = {}, {}, {}
    for name, lab, value in series:
        if "subject" in lab and kind.get(lab["subject"]) == "pair" and \
                name != "gdrcheck_path_verdict":
            fail(f"{path}: a series per pair: {name} {lab}")
        if name == "gdrcheck_gate_status":
            k = (lab["gate"], lab["subject"])
            if k in gate or value != 1:
                fail(f"{path}: {k} twice or not 1")
            gate[k] = (lab["status"], lab["reason_code"])
        elif name == "gdrcheck_pair_results":
            counted.setdefault(lab["gate"], {})[lab["status"]] = int(value)
        elif name == "gdrcheck_path_ready":
            want = int(doc["paths"][lab["path"]]["verdict"] == "READY")
            if value != want:
                fail(f"{path}: path_ready {lab} = {value}, JSON says {want}")
        elif name == "gdrcheck_path_verdict":
            pv = doc["paths"][lab["path"]]
            paths[lab["path"]] = True
            if (lab["verdict"], lab["gate"], lab["subject"]) != \
                    (pv["verdict"], pv["gate"] or "", pv["subject"] or ""):
                fail(f"{path}: path_verdict {lab} disagrees with the JSON")
        elif name == "gdrcheck_exit_code":
            if value != doc["verdict"]["exit_code"]:
                fail(f"{path}: exit_code {value}, JSON says {doc['verdict']['exit_code']}")
        elif name == "gdrcheck_verdict":
            if value != (lab["verdict"] == doc["verdict"]["status"]):
                fail(f"{path}: verdict {lab} = {value}")
    if gate != single:
        fail(f"{path}: gate statuses differ from the JSON: "
             f"{set(gate.items()) ^ set(single.items())}")
    if counted != pairs:
        fail(f"{path}: pair counts differ from the JSON: {counted} vs {pairs}")
    if set(paths) != set(doc["paths"]):
        fail(f"{path}: path_verdict series {sorted(paths)}")
    # Bounded by devices: results of non-pair subjects, 5 per pair gate, a
    # fixed rest: 3 series per path, one gpu_ready per GPU.
    ngpu = sum(1 for s in doc["subjects"] if s["kind"] == "gpu")
    limit = len(single) + 5 * len(pairs) + 14 + 3 * len(doc["paths"]) + ngpu
    if len(series) > limit:
        fail(f"{path}: {len(series)} series, more than {limit}")


def check_prom_v1(doc, path):
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
        doc = unfold.unfold(doc)
    check_junit(doc, sys.argv[2])
    check_prom(doc, sys.argv[3])


if __name__ == "__main__":
    main()
