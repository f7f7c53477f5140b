#!/usr/bin/env python3
"""Checks of the Kubernetes node outputs (examples/kubernetes).

  k8s-node.py nfd FEATURE_FILE [REPORT.json]
      FEATURE_FILE follows node-feature-discovery's features.d format as its
      local source parses it (source/local/local.go): "# +expiry-time=" with
      an RFC 3339 time in the future, no other directive, key=value lines,
      under 64 KiB; keys and values are valid label names and values (NFD
      prefixes feature.node.kubernetes.io/). With REPORT.json, the labels
      equal what the report says (computed here, not by the script's jq);
      without, the file is the no-report one (ready=false, verdict=ERROR).
  k8s-node.py npd CONFIG.json DOCKERFILE
      CONFIG.json is a node-problem-detector custom-plugin-monitor config
      with the fields NPD requires, and its plugin is installed by the image.
Prints PASS/FAIL lines; exit 1 on any failure.
"""
import datetime
import json
import re
import sys

failed = 0


def res(ok, what):
    global failed
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        failed += 1


NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$")


def seconds(d):
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * unit[u] for n, _, u in re.findall(r"([0-9]+(\.[0-9]+)?)(ns|us|ms|s|m|h)", d))


def nfd(path, report):
    raw = open(path, "rb").read()
    res(len(raw) <= 65536, f"{path}: {len(raw)} bytes <= 64 KiB")
    text = raw.decode()
    res(text.endswith("\n") and all(l == l.strip() for l in text.split("\n")),
        f"{path}: lines end in a newline, no stray blanks")
    lines = [l.strip() for l in text.split("\n") if l.strip()]
    res(bool(lines) and lines[0].startswith("# +expiry-time="),
        f"{path}: starts with '# +expiry-time='")
    labels = {}
    for l in lines:
        if l.startswith("#"):
            if l.startswith("# +"):
                key, _, val = l[3:].partition("=")
                res(key == "expiry-time", f"{path}: directive {key} is expiry-time")
                try:
                    t = datetime.datetime.strptime(val.strip(), "%Y-%m-%dT%H:%M:%SZ") \
                        .replace(tzinfo=datetime.timezone.utc)
                    res(t > datetime.datetime.now(datetime.timezone.utc),
                        f"{path}: expiry {val} is RFC 3339 and in the future")
                except ValueError:
                    res(False, f"{path}: expiry '{val}' is RFC 3339 (UTC)")
            continue
        key, eq, val = l.partition("=")
        res(eq == "=" and NAME.match(key) is not None and VALUE.match(val) is not None,
            f"{path}: '{l}' is key=value with a valid label name and value")
        res(key not in labels, f"{path}: {key} once")
        labels[key] = val
    if report is None:
        res(labels == {"gdrcheck.ready": "false", "gdrcheck.verdict": "ERROR"},
            f"{path}: no report: ready=false, verdict=ERROR only ({labels})")
        return
    rep = json.load(open(report))
    code = rep["verdict"]["exit_code"]
    ready_paths = [k for k, v in rep["paths"].items() if v["verdict"] in ("READY", "READY-UNPROVEN")]
    want = {
        "gdrcheck.ready": "true" if code == 0 else "false",
        "gdrcheck.verdict": rep["verdict"]["status"],
        "gdrcheck.mechanism": "_".join(ready_paths) or "none",
        "gdrcheck.rails": str(len({p["gpu"] for v in rep["paths"].values()
                                   for p in v.get("ready", [])})),
        "gdrcheck.gpus": str(len({r["subject"] for r in rep["results"]
                                  if r["gate"] == "gpu.visible" and r["status"] == "PASS"})),
        "gdrcheck.require": rep["require"],
    }
    if code != 0:
        # The first not-READY path --require counts, in report order; a
        # policy failure (a required path READY) names the policy.
        req = [(k, v) for k, v in rep["paths"].items()
               if rep["require"] == "any" or k == rep["require"]]
        if any(v["verdict"] in ("READY", "READY-UNPROVEN") for _, v in req):
            want["gdrcheck.gate"] = "policy"
        else:
            first = next(v for _, v in req if v["verdict"] not in ("READY", "READY-UNPROVEN"))
            want["gdrcheck.gate"] = first["gate"]
            if first.get("reason_code"):
                want["gdrcheck.reason"] = first["reason_code"]
    for k, v in want.items():
        res(labels.get(k) == v, f"{path}: {k}={labels.get(k)} (report says {v})")
    res(set(labels) == set(want), f"{path}: no other label ({sorted(set(labels) - set(want))})")


def npd(path, dockerfile):
    try:
        cfg = json.load(open(path))
    except ValueError as e:
        res(False, f"{path}: JSON ({e})")
        return
    res(cfg.get("plugin") == "custom", f"{path}: plugin custom")
    pc = cfg.get("pluginConfig", {})
    for k in ("invoke_interval", "timeout"):
        res(isinstance(pc.get(k), str) and DURATION.match(pc[k]) is not None,
            f"{path}: pluginConfig.{k} is a duration ({pc.get(k)})")
    res(isinstance(pc.get("max_output_length"), int) and pc["max_output_length"] >= 200,
        f"{path}: max_output_length >= 200 (the verdict line)")
    res(pc.get("concurrency") == 1, f"{path}: concurrency 1 (one gdrcheck at a time)")
    res(bool(cfg.get("source")), f"{path}: source")
    conds = {c.get("type"): c for c in cfg.get("conditions", [])}
    res(bool(conds) and all(c.get("reason") and c.get("message") for c in conds.values()),
        f"{path}: conditions with type, reason, message ({sorted(conds)})")
    rules = cfg.get("rules", [])
    res(bool(rules), f"{path}: rules")
    copies = dict((m.group(2), m.group(1)) for m in re.finditer(
        r"^COPY (?!--)(\S+) (\S+)$", open(dockerfile).read(), re.M))
    for i, r in enumerate(rules):
        n = f"{path}: rule {i}"
        res(r.get("type") in ("temporary", "permanent"), f"{n}: type {r.get('type')}")
        if r.get("type") == "permanent":
            res(r.get("condition") in conds, f"{n}: condition {r.get('condition')} is declared")
        res(bool(r.get("reason")), f"{n}: reason")
        res(r.get("path") in copies, f"{n}: path {r.get('path')} is installed by the Dockerfile")
        t = r.get("timeout", pc.get("timeout", ""))
        res(DURATION.match(t) is not None and 50 < seconds(t) <= seconds(pc.get("timeout", "0s")),
            f"{n}: timeout {t} above the plugin's 50 s budget, within pluginConfig.timeout")
        res(seconds(pc.get("invoke_interval", "0s")) > seconds(t),
            f"{n}: invoke_interval longer than the timeout (no overlap)")


if sys.argv[1] == "nfd":
    nfd(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
elif sys.argv[1] == "npd":
    npd(sys.argv[2], sys.argv[3])
else:
    sys.exit(2)
sys.exit(1 if failed else 0)
