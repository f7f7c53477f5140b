#!/usr/bin/env python3
"""No two results of one report may disagree on a shared fact.

  tests/check-consistency.py REPORT.json...
  tests/check-consistency.py --scenarios [NAME...]

Each rule below reads a fact from one result (the peermem state, the
memlock limit, a provider's DMA-BUF support, whether DMA between a GPU and
a NIC works) with the value that result states; the fact's key is the
subject it is about (the host, a NIC, a GPU x NIC pair). A report fails
when two results state different values for one key: the report contradicts
itself (peermem "loaded" in one gate and "not loaded" in the next, memlock
PASS "unlimited" beside "RLIMIT_MEMLOCK is too small", ACS "DMA faults"
beside a verified transfer). With --scenarios, every scenario's report
from tests/out/scenarios/<name>/out.json (tests/run-scenarios.sh writes
them) is checked. Ends with "consistency: N passed, N failed".
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import unfold  # noqa: E402  tests/unfold.py: folded pair results, one per subject


def nic_of(subject):
    """The NIC of a pair ("GPU0~mlx5_0") or port ("mlx5_0/1")."""
    if "~" in subject:
        subject = subject.split("~", 1)[1]
    return subject.split("/", 1)[0]


# (gate, predicate(result) -> value or None, fact, key(result) -> subject or None)
# Values: True/False. None: the result says nothing about the fact.
def status_is(*codes_true, codes_false=(), pass_true=False):
    def f(r):
        if r["reason_code"] in codes_true or (pass_true and r["status"] == "PASS"):
            return True
        if r["reason_code"] in codes_false:
            return False
        return None
    return f


def in_container(ev):
    """nic.netns's cited container fact: "yes (docker)", "no", or other."""
    v = ev.get("container", "")
    if v.startswith("yes"):
        return True
    if v == "no":
        return False
    return None


PORT = lambda r: r["subject"]
GPU = lambda r: r["subject"].split("~", 1)[0]
HOST = lambda r: "host"
NIC = lambda r: nic_of(r["subject"])
PAIR = lambda r: r["subject"]


def rail_port(r):
    """The port a topo.nccl rail names ("mlx5_6/1"), or None: not a rail."""
    ev = r.get("evidence") or {}
    if not ev.get("rail") or "port" not in ev:
        return None
    return f"{nic_of(r['subject'])}/{ev['port']}"

RULES = [
    # Does this process run in a container? host.container owns it; nic.netns
    # cites it in its evidence.
    ("host.container", status_is("IN_CONTAINER", "CONTAINER_NO_UVERBS",
                                 "CONTAINER_MEMLOCK_NO_IPC_LOCK",
                                 codes_false=("NO_CONTAINER",)),
     "in a container", HOST),
    ("nic.netns", lambda r: in_container(r.get("evidence", {})),
     "in a container", HOST),
    # Is a GPU peer-memory client loaded (can ibv_reg_mr take GPU memory)?
    ("mech.peermem", status_is("PEERMEM_REGISTERED", "PEERMEM_MODULE_ONLY",
                               codes_false=("PEERMEM_NOT_LOADED",)),
     "peer-memory client loaded", HOST),
    ("reg.peermem", status_is(pass_true=True,
                              codes_false=("NO_PEER_MEMORY_CLIENT",)),
     "peer-memory client loaded", HOST),
    ("data.peermem", lambda r: True if r["status"] == "PASS" else None,
     "peer-memory client loaded", HOST),
    # Is the memlock limit enough for the registrations?
    ("host.memlock", status_is("MEMLOCK_UNLIMITED", "MEMLOCK_CAP_IPC_LOCK"),
     "memlock limit sufficient", HOST),
    ("reg.host_mr", status_is("HOST_MR_OK", codes_false=("MEMLOCK_TOO_SMALL",)),
     "memlock limit sufficient", HOST),
    # Does the NIC's provider implement dma-buf MRs?
    ("mech.dmabuf_provider", status_is("PROVIDER_DMABUF_OK",
                                       codes_false=("PROVIDER_LACKS_DMABUF",)),
     "provider supports DMA-BUF", NIC),
    ("reg.dmabuf", status_is("DMABUF_MR_OK",
                             codes_false=("PROVIDER_LACKS_DMABUF",
                                          "REG_NOT_SUPPORTED")),
     "provider supports DMA-BUF", NIC),
    # Can the NIC DMA into this GPU's memory? (a proof outranks ACS)
    ("platform.acs", lambda r: False if r["status"] == "BLOCKED" else None,
     "GPU-NIC DMA works", PAIR),
    ("data.dmabuf", lambda r: True if r["status"] == "PASS" else None,
     "GPU-NIC DMA works", PAIR),
    ("data.peermem", lambda r: True if r["status"] == "PASS" else None,
     "GPU-NIC DMA works", PAIR),
    # Is the port ACTIVE? NCCL (ncclIbInitDevices) never makes a rail of a
    # port that is not (node-8x12-broken-rail once had DOWN mlx5_6 a rail).
    ("nic.port", status_is("PORT_ACTIVE", codes_false=("PORT_NOT_ACTIVE",)),
     "port ACTIVE", PORT),
    ("topo.nccl", lambda r: True if rail_port(r) else None,
     "port ACTIVE", rail_port),
    # Is a NIC within NCCL's default GDR reach (PXB) of the GPU, in NCCL's
    # own path types? (nccl-bcm-vlink: topo.nccl rail PXB after Broadcom
    # merging beside topo.best_nic "PHB away: beyond ... PXB")
    ("topo.best_nic", status_is(codes_false=("NO_NEAR_NIC",)),
     "a NIC within PXB for NCCL", GPU),
    ("topo.nccl", lambda r: True if rail_port(r) and
     (r.get("evidence") or {}).get("path") in ("PIX", "PXB") else None,
     "a NIC within PXB for NCCL", GPU),
]


def dangling_fixes(doc):
    """A fix that says "apply <gate>'s fix" needs that gate to have one on
    the same subject (reg-dmabuf-einval once sent reg.vmm_dmabuf's reader
    to a reg.dmabuf result with no fix)."""
    fix = {(r["gate"], r["subject"]): r.get("remediation")
           for r in doc.get("results", [])}
    bad = []
    for r in doc.get("results", []):
        m = re.search(r"apply ([a-z_]+\.[a-z_]+)'s fix", r.get("remediation") or "")
        if m and not fix.get((m.group(1), r["subject"])):
            bad.append(f"{r['subject']}: {r['gate']} says apply "
                       f"{m.group(1)}'s fix, which has none there")
    return bad


LAYER_RANK = {"host": 0, "gpu": 1, "nic": 2, "platform": 3, "mech": 4,
              "topo": 5, "reg": 6, "data": 7}
SECTIONS = ("to fix", "optional (not needed for the verdict)",
            "skipped checks (not needed for the verdict)")
SEVERITY = {"BLOCKED": 3, "ERROR": 2, "WARN": 1, "SKIP": 0, "PASS": 0}


def fix_lines(text):
    """{section: [(tags [(status, gate)], fix text)]} of a text report."""
    out, sec = {}, None
    for line in text.splitlines():
        if line in SECTIONS:
            sec = line
            out[sec] = []
            continue
        if not line.startswith("  ") or sec is None:
            sec = None if not line.startswith("  ") else sec
            continue
        m = re.match(r"^  \d+\. (.*)$", line)
        if not m:
            continue
        rest, tags, status = m.group(1), [], None
        while True:
            t = re.match(r"^\[([A-Z]+)\] ", rest)
            if t:
                status, rest = t.group(1), rest[t.end():]
            g = re.match(r"^([a-z_]+\.[a-z0-9_]+) \(", rest)
            if not g:
                break
            depth, i = 1, g.end()
            while i < len(rest) and depth:
                depth += {"(": 1, ")": -1}.get(rest[i], 0)
                i += 1
            tags.append((status, g.group(1)))
            rest = rest[i:]
            if rest.startswith("; "):
                rest = rest[2:]
                continue
            if rest.startswith(": "):
                rest = rest[2:]
            break
        out[sec].append((tags, rest))
    return out


def fix_list_rules(doc, text):
    """The fix list's rules (issue 23 item 4): a fix's tag is its results'
    status; a fix appears once; fixes go by cause (gate chain, platform
    before mechanism); the root fix of a path the policy needs, and of what
    a failing result stands on (caused_by), is under "to fix"."""
    bad = []
    res = doc.get("results", [])
    order = {}
    for r in res:
        order.setdefault(r["gate"], len(order))
    layer = {r["gate"]: r.get("layer") for r in res}

    def rank(g):
        return LAYER_RANK.get(layer.get(g), 8) * 1000 + order.get(g, 999)

    lines = fix_lines(text)
    seen = {}
    for sec, fixes in lines.items():
        last = -1
        for tags, fix in fixes:
            if fix in seen:
                bad.append(f"fix listed twice ({seen[fix]}, {sec}): {fix[:60]}")
            seen[fix] = sec
            with_fix = [r for r in res if r.get("remediation") == fix]
            if not with_fix:
                continue
            for status, gate in tags:
                st = [r["status"] for r in with_fix if r["gate"] == gate]
                if st and status != max(st, key=lambda x: SEVERITY[x]):
                    bad.append(f"{gate}: tagged [{status}], its results "
                               f"with that fix are {sorted(set(st))}")
            k = min(rank(g) for _, g in tags) if tags else last
            if k < last:
                bad.append(f"{sec}: {tags[0][1]}'s fix after a later "
                           f"cause's: fixes go by cause")
            last = max(last, k)
    tofix = {f for _, f in lines.get("to fix", [])}
    # Under "any", a path whose blockers hold another's is not needed
    # (report/failing.c): the rule is for the one path a policy names.
    req = doc.get("require", "any")
    paths = [] if req == "any" else [req]
    if doc.get("verdict", {}).get("exit_code") == 1:
        key = {(r["gate"], r["subject"]): r for r in res}
        for p in paths:
            pv = doc.get("paths", {}).get(p, {})
            d = key.get((pv.get("gate"), pv.get("subject")))
            if pv.get("verdict") == "BLOCKED" and d and \
                    d.get("remediation") and d["remediation"] not in tofix and \
                    not any(doc["paths"][q]["verdict"] == "READY" for q in paths):
                bad.append(f"{p}: the fix of its decisive {d['gate']} is not "
                           f"under 'to fix'")
        for r in res:
            by = (r.get("evidence") or {}).get("caused_by")
            if r.get("remediation") in tofix and by and " " in by:
                g, subj = by.split(" ", 1)
                c = key.get((g, subj))
                if c and c["status"] == "BLOCKED" and c.get("remediation") \
                        and c["remediation"] not in tofix:
                    bad.append(f"{r['gate']} ({r['subject']}) stands on {by}, "
                               f"whose fix is not under 'to fix'")
    return bad


def check(doc, text=None):
    """The contradictions of one report, as strings."""
    facts = {}
    for r in doc.get("results", []):
        for gate, pred, fact, key in RULES:
            if r["gate"] != gate:
                continue
            v = pred(r)
            if v is None:
                continue
            k = (fact, key(r))
            facts.setdefault(k, {}).setdefault(v, []).append(r)
    bad = dangling_fixes(doc)
    if text is not None:
        bad += fix_list_rules(doc, text)
    for (fact, subj), by in sorted(facts.items(), key=lambda x: x[0]):
        if len(by) < 2:
            continue
        t, f = by[True][0], by[False][0]
        bad.append(f"{subj}: '{fact}' yes per {t['gate']} ({t['subject']}: "
                   f"{t['reason_code']}), no per {f['gate']} "
                   f"({f['subject']}: {f['reason_code']})")
    return bad


def self_test():
    """The checker must be able to fail: one synthetic report per rule kind."""
    def res(gate, subject, status, code, **ev):
        return {"gate": gate, "subject": subject, "status": status,
                "reason_code": code, "evidence": ev}
    bad = {"results": [
        res("mech.peermem", "host", "BLOCKED", "PEERMEM_NOT_LOADED"),
        res("reg.peermem", "GPU0~mlx5_0", "PASS", "PEERMEM_MR_OK"),
        res("host.memlock", "host", "PASS", "MEMLOCK_UNLIMITED"),
        res("reg.host_mr", "mlx5_0", "BLOCKED", "MEMLOCK_TOO_SMALL"),
        res("mech.dmabuf_provider", "mlx5_0", "BLOCKED", "PROVIDER_LACKS_DMABUF"),
        res("reg.dmabuf", "GPU0~mlx5_0", "PASS", "DMABUF_MR_OK"),
        res("platform.acs", "GPU0~mlx5_0", "BLOCKED", "ACS_REDIRECT_IOMMU"),
        res("data.dmabuf", "GPU0~mlx5_0", "PASS", "DATA_OK"),
        res("host.container", "host", "PASS", "NO_CONTAINER"),
        dict(res("nic.netns", "host", "WARN", "NETNS_EXCLUSIVE_HIDDEN"),
             evidence={"container": "yes (docker)"}),
        res("nic.port", "mlx5_6/1", "BLOCKED", "PORT_NOT_ACTIVE"),
        res("topo.nccl", "GPU3~mlx5_6", "PASS", "NCCL_GDR_ALLOWED",
            rail=True, port=1),
        res("topo.best_nic", "GPU0", "WARN", "NO_NEAR_NIC"),
        res("topo.nccl", "GPU0~mlx5_0", "PASS", "NCCL_GDR_ALLOWED",
            rail=True, port=1, path="PXB"),
    ]}
    vmm = res("reg.vmm_dmabuf", "GPU0~mlx5_0", "BLOCKED",
              "DMABUF_OFFSETS_REJECTED")
    vmm["remediation"] = ("the VMM buffer fails as cuMemAlloc memory does: "
                          "apply reg.dmabuf's fix; it clears both")
    bad["results"].append(vmm)
    good = {"results": [r for r in bad["results"]
                        if r["status"] == "PASS" and r["gate"] != "reg.peermem"]}
    found = check(bad)
    assert len(found) == 8, found
    assert not check(good), check(good)
    # A different NIC or pair is a different subject: no contradiction.
    other = {"results": [
        res("mech.dmabuf_provider", "mlx5_1", "BLOCKED", "PROVIDER_LACKS_DMABUF"),
        res("reg.dmabuf", "GPU0~mlx5_0", "PASS", "DMABUF_MR_OK"),
        res("platform.acs", "GPU1~mlx5_0", "BLOCKED", "ACS_REDIRECT_IOMMU"),
        res("data.dmabuf", "GPU0~mlx5_0", "PASS", "DATA_OK"),
        res("nic.port", "mlx5_6/2", "BLOCKED", "PORT_NOT_ACTIVE"),
        res("topo.nccl", "GPU3~mlx5_6", "PASS", "NCCL_GDR_ALLOWED",
            rail=True, port=1),
        res("topo.nccl", "GPU3~mlx5_6", "PASS", "NCCL_NET_NOT_IB"),
    ]}
    assert not check(other), check(other)
    # The fix list's rules can fail: a wrong tag, a fix twice, a
    # mechanism fix before the driver's.
    fixdoc = {"require": "any", "verdict": {"exit_code": 3}, "results": [
        dict(res("gpu.cuinit", "host", "ERROR", "CUINIT_HANG"),
             layer="gpu", remediation="reset the GPU"),
        dict(res("mech.peermem", "host", "BLOCKED", "PEERMEM_NOT_LOADED"),
             layer="mech", remediation="modprobe nvidia_peermem"),
        dict(res("topo.nccl", "GPU0~mlx5_0", "WARN", "NCCL_RAIL_NO_GDR"),
             layer="topo", remediation="make a mechanism work"),
    ]}
    text = ("to fix\n  1. [BLOCKED] mech.peermem (host): modprobe nvidia_peermem\n"
            "  2. [ERROR] gpu.cuinit (host): reset the GPU\n"
            "  3. [BLOCKED] topo.nccl (GPU0 x mlx5_0): make a mechanism work\n"
            "\noptional (not needed for the verdict)\n"
            "  1. [ERROR] gpu.cuinit (host): reset the GPU\n")
    assert len(fix_list_rules(fixdoc, text)) == 3, fix_list_rules(fixdoc, text)
    good = ("to fix\n  1. [ERROR] gpu.cuinit (host): reset the GPU\n"
            "  2. [BLOCKED] mech.peermem (host): modprobe nvidia_peermem\n"
            "  3. [WARN] topo.nccl (GPU0 x mlx5_0): make a mechanism work\n")
    assert not fix_list_rules(fixdoc, good), fix_list_rules(fixdoc, good)


def main(argv):
    self_test()
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if argv and argv[0] == "--scenarios":
        names = argv[1:] or sorted(
            os.path.basename(d) for d in glob.glob(f"{top}/tests/scenarios/*")
            if os.path.isfile(f"{d}/sysroot.spec") or os.path.isfile(f"{d}/gen"))
        files = [(n, f"{top}/tests/out/scenarios/{n}/out.json") for n in names]
    else:
        files = [(f, f) for f in argv]
    if not files:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    passed = failed = 0
    for name, path in files:
        try:
            with open(path) as f:
                doc = json.load(f)
                doc = unfold.unfold(doc)
        except (OSError, ValueError) as e:
            print(f"FAIL {name}: no report ({e}); run tests/run-scenarios.sh first")
            failed += 1
            continue
        text = None
        txt = os.path.join(os.path.dirname(path), "out.txt")
        if argv and argv[0] == "--scenarios" and os.path.isfile(txt):
            with open(txt) as f:
                text = f.read()
        bad = check(doc, text)
        if bad:
            failed += 1
            print(f"FAIL {name}: {len(bad)} contradiction(s)")
            for b in bad[:10]:
                print(f"  {b}")
            if len(bad) > 10:
                print(f"  ... and {len(bad) - 10} more")
        else:
            passed += 1
    print(f"consistency: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
