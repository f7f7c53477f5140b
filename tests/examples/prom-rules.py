#!/usr/bin/env python3
"""The Prometheus alert rules against metrics gdrcheck really emitted.

  prom-rules.py RULES WORKDIR NODE=PROMFILE[:JSONFILE]...

PROMFILE is what the textfile wrapper wrote for a node (gdrcheck's metrics
plus the wrapper's); JSONFILE the same run's --json report (left out for a
run that crashed). Checks:
  1. every metric name the rules use is in some PROMFILE (a rename in
     report/prometheus.c breaks this loudly)
  2. promtool test rules over the PROMFILEs as input series (one instance per
     NODE), with the alerts expected from the JSON reports:
       GdrcheckNodeNotReady    nodes whose exit status is not 0
       GdrcheckGpuWithoutRail  GPUs CUDA sees (gpu.visible PASS) that no
                               path lists in paths.*.ready (label subject)
       GdrcheckRailLost        nodes with a BLOCKED topo.rails result (a
                               port NCCL would use is not ACTIVE)
       GdrcheckNcclPathBlocked nodes whose paths.nccl is BLOCKED, with its
                               gate, subject and reason code
       GdrcheckStale           none (the runs are fresh; the timestamps
                               are left out of the series)
     The rules' synthetic unit tests are examples/prometheus/
     gdrcheck.rules.test.yml, run by tests/examples/run.sh.
     The rules' annotations are dropped for this run only (promtool compares
     them verbatim); `promtool check rules` checks the file as shipped.
Prints PASS/FAIL lines and "prom-rules subtotal N passed, N failed".
"""
import json
import os
import re
import subprocess
import sys

import yaml

passed = failed = 0


def res(ok, what):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + what)
    if ok:
        passed += 1
    else:
        failed += 1


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)')


def samples(path):
    out = []
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        m = SAMPLE.match(line)
        if m:
            out.append((m.group(1), m.group(2) or "{}", m.group(3)))
    return out


def main():
    rules_path, work = sys.argv[1], sys.argv[2]
    nodes = []
    for arg in sys.argv[3:]:
        node, files = arg.split("=", 1)
        prom, _, js = files.partition(":")
        nodes.append((node, prom, js or None))

    rules = yaml.safe_load(open(rules_path))
    exprs = {r["alert"]: r["expr"] for g in rules["groups"] for r in g["rules"]
             if "alert" in r}
    res(set(exprs) == {"GdrcheckNodeNotReady", "GdrcheckGpuWithoutRail", "GdrcheckRailLost",
                       "GdrcheckNcclPathBlocked", "GdrcheckStale"},
        f"rules: the five alerts ({sorted(exprs)})")

    emitted = set()
    for _, prom, _ in nodes:
        emitted |= {s[0] for s in samples(prom)}
    res(len(emitted) >= 3, f"rendered outputs emit {len(emitted)} metric names")
    for alert, expr in sorted(exprs.items()):
        used = set(re.findall(r"\b(gdrcheck_[a-z0-9_]+)", expr))
        res(bool(used), f"{alert}: uses gdrcheck metrics ({sorted(used)})")
        for name in sorted(used):
            res(name in emitted, f"{alert}: metric {name} is emitted by gdrcheck or the wrapper")

    # Expected alerts, from the JSON reports (not from the metrics).
    exp_notready, exp_norail, exp_raillost, exp_nccl = [], [], [], []
    for node, prom, js in nodes:
        if js is None:
            exp_notready.append({"instance": node})
            continue
        rep = json.load(open(js))
        if rep["verdict"]["exit_code"] != 0:
            exp_notready.append({"instance": node})
        visible = {r["subject"] for r in rep["results"]
                   if r["gate"] == "gpu.visible" and r["status"] == "PASS"}
        ready = {p["gpu"] for path in rep["paths"].values() for p in path.get("ready", [])}
        for gpu in sorted(visible - ready):
            exp_norail.append({"instance": node, "subject": gpu})
        if any(r["gate"] == "topo.rails" and r["status"] == "BLOCKED" for r in rep["results"]):
            exp_raillost.append({"instance": node})
        nccl = rep["paths"].get("nccl", {})
        if nccl.get("verdict") == "BLOCKED":
            exp_nccl.append({"instance": node, "gate": nccl["gate"] or "",
                             "subject": nccl["subject"] or "",
                             "reason_code": nccl["reason_code"] or ""})
    res(bool(exp_notready) and bool(exp_norail)
        and len(exp_notready) < len(nodes),
        f"fixtures exercise both alerts and a quiet node "
        f"(not ready: {exp_notready}; no rail: {exp_norail})")

    series = []
    for node, prom, _ in nodes:
        for name, labels, value in samples(prom):
            if name.endswith("_timestamp_seconds"):
                continue
            inner = labels[1:-1]
            lab = (inner + "," if inner else "") + f'instance="{node}"'
            series.append({"series": f"{name}{{{lab}}}", "values": f"{value}x40"})

    plain = yaml.safe_load(open(rules_path))
    for g in plain["groups"]:
        for r in g["rules"]:
            r.pop("annotations", None)
    plain_path = os.path.join(work, "rules-plain.yml")
    yaml.safe_dump(plain, open(plain_path, "w"))

    def alerts(lst):
        return [{"exp_labels": dict(x, severity="warning")} for x in lst]

    test = {
        "rule_files": [plain_path],
        "evaluation_interval": "1m",
        "tests": [{
            "interval": "1m",
            "input_series": series,
            "alert_rule_test": [
                {"eval_time": "20m", "alertname": "GdrcheckNodeNotReady",
                 "exp_alerts": alerts(exp_notready)},
                {"eval_time": "20m", "alertname": "GdrcheckGpuWithoutRail",
                 "exp_alerts": alerts(exp_norail)},
                {"eval_time": "20m", "alertname": "GdrcheckRailLost",
                 "exp_alerts": alerts(exp_raillost)},
                {"eval_time": "20m", "alertname": "GdrcheckNcclPathBlocked",
                 "exp_alerts": alerts(exp_nccl)},
                {"eval_time": "20m", "alertname": "GdrcheckStale", "exp_alerts": []},
                # "for: 15m": nothing fires after 10 minutes.
                {"eval_time": "10m", "alertname": "GdrcheckNodeNotReady", "exp_alerts": []},
            ],
        }],
    }
    test_path = os.path.join(work, "rules-test.yml")
    yaml.safe_dump(test, open(test_path, "w"))
    p = subprocess.run(["promtool", "test", "rules", test_path],
                       capture_output=True, text=True)
    res(p.returncode == 0,
        f"promtool test rules on {len(series)} real series of {len(nodes)} nodes: "
        f"GdrcheckNodeNotReady {[x['instance'] for x in exp_notready]}, "
        f"GdrcheckGpuWithoutRail {[x['instance'] + '/' + x['subject'] for x in exp_norail]}, "
        f"GdrcheckRailLost {[x['instance'] for x in exp_raillost]}, "
        f"GdrcheckNcclPathBlocked {[x['instance'] for x in exp_nccl]}")
    if p.returncode != 0:
        print(p.stdout + p.stderr)
    print(f"prom-rules subtotal {passed} passed, {failed} failed")


if __name__ == "__main__":
    main()
