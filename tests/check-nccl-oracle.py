#!/usr/bin/env python3
"""gdrcheck's NCCL model against NCCL's own code.

tests/nccl-oracle/<tag>/<scenario>.json holds what NCCL's topology code
(src/graph/xml.cc, topo.cc, paths.cc at that tag, built and run by
tools/nccl-oracle) answered on the scenario's tree: per GPU every NET's path
type, the rails over channels 0..31, each rail's PXN relay and
ncclTopoCheckGdr both ways. This suite runs gdrcheck on the same tree with
--nccl-version of that tag and compares, GPU by GPU (matched by PCI address):

  rails    the set of NICs ncclTopoGetLocalNet hands the GPU
  path     each NET's path type from the GPU (every NET both sides name)
  relay    each rail's PXN relay GPU
  gdr      each rail's GPUDirect RDMA decision, send and receive

A difference fails unless the recorded file lists it under "exceptions"
with a reason that cites NCCL's code ({"gpu": BUSID, "what": "rails" |
"path NIC" | "relay NIC" | "gdr NIC", "reason": "..."}). No NCCL source is
needed here: the answers are recorded (make nccl-oracle-record).

  tests/check-nccl-oracle.py [-v] [SCENARIO...]
  ends with "nccl-oracle: N passed, N failed"
"""
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(TOP, "tests", "scenarios")
RECORDED = os.environ.get("NCCL_ORACLE_DIR", os.path.join(TOP, "tests", "nccl-oracle"))
BIN = os.environ.get("GDRCHECK_BIN", os.path.join(TOP, "gdrcheck"))
DOUBLES = os.environ.get("GDRCHECK_DOUBLES", os.path.join(TOP, "tests", "doubles"))


def tag_version(tag):
    """v2.28.9-1 -> 2.28.9"""
    return tag.lstrip("v").split("-")[0]


def nic_name(n):
    """A NET as NCCL names it; gdrcheck's port suffix is not part of it."""
    return n.split("/")[0]


def build_tree(name, work):
    """The scenario's fixture and double configurations, as run-scenarios."""
    d = os.path.join(CASES, name)
    confs = {}
    gen = os.path.join(d, "gen")
    if os.path.exists(gen):
        args = open(gen).read().split()
        subprocess.run([sys.executable, os.path.join(TOP, "bench", "gen-sysroot.py"),
                        args[0], work] + args[1:], check=True,
                       stdout=subprocess.DEVNULL)
        confs["cuda"] = os.path.join(work, "cuda.conf")
        confs["verbs"] = os.path.join(work, "verbs.conf")
    else:
        subprocess.run([sys.executable, os.path.join(CASES, "mksysroot.py"),
                        os.path.join(d, "sysroot.spec"),
                        os.path.join(work, "sysroot")], check=True,
                       stdout=subprocess.DEVNULL)
        for k in ("cuda", "verbs"):
            p = os.path.join(d, k + ".conf")
            confs[k] = p if os.path.exists(p) else "/dev/null"
    p = os.path.join(d, "nvml.conf")
    confs["nvml"] = p if os.path.exists(p) else None
    return os.path.join(work, "sysroot"), confs


def run_gdrcheck(name, version, work):
    d = os.path.join(CASES, name)
    root, confs = build_tree(name, work)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    env.pop("LD_LIBRARY_PATH", None)
    env.update(HOME="/home/gdrcheck", SOURCE_DATE_EPOCH="0", NO_COLOR="1",
               FAKE_CUDA_SCENARIO=confs["cuda"],
               FAKE_VERBS_SCENARIO=confs["verbs"], FAKE_SYSROOT=root,
               FAKE_NVML_SCENARIO=confs["nvml"] or "/dev/null",
               FAKE_LEDGER_DIR=work,
               GDRCHECK_LIBCUDA=os.path.join(DOUBLES, "libcuda-fake.so"),
               GDRCHECK_LIBIBVERBS=os.path.join(DOUBLES, "libibverbs-fake.so"))
    if confs["nvml"]:
        env["GDRCHECK_LIBNVML"] = os.path.join(DOUBLES, "libnvidia-ml-fake.so")
    p = os.path.join(d, "env")
    if os.path.exists(p):
        for line in open(p):
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                env[k] = v
    args = []
    p = os.path.join(d, "args")
    if os.path.exists(p):
        args = shlex.split(open(p).read().replace("@DOUBLES@", DOUBLES))
    # The release compared is the recording's, not the one the case pins.
    for i, a in enumerate(args):
        if a == "--nccl-version" and i + 1 < len(args):
            del args[i:i + 2]
            break
        if a.startswith("--nccl-version="):
            del args[i]
            break
    # The model only: no registrations or transfers are needed to compare.
    cmd = [BIN, "--sysroot", root, "--json", "--no-alloc"] + args + \
          ["--nccl-version", version]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                       timeout=300)
    try:
        return json.loads(r.stdout)
    except ValueError:
        raise RuntimeError("gdrcheck %s: exit %d, no JSON: %s" %
                           (name, r.returncode, r.stderr.strip()[:300]))


def model_of(doc):
    """GPU PCI address -> {"rails": {nic: rail}, "paths": {nic: type}}."""
    pci = {s["id"]: s.get("pci") for s in doc.get("subjects", [])}
    gpus = {}
    # NCCL's name for a NIC's device (Data Direct `_dma`, fused ports
    # "a+b"): the rails say it (schema 2.5 nccl_device), and so does
    # topo.nccl's evidence where it differs from the NIC's name.
    device = {}
    for g in (doc.get("nccl") or {}).get("gpus") or []:
        rails = {}
        for r in g.get("rails") or []:
            name = r.get("nccl_device") or nic_name(r["nic"])
            device[(g["gpu"], nic_name(r["nic"]))] = name
            rails[name] = r
        gpus[pci.get(g["gpu"])] = {"rails": rails, "paths": {}}
    for r in doc.get("results", []):
        if r["gate"] != "topo.nccl" or "~" not in r["subject"]:
            continue
        gpu, nic = r["subject"].split("~", 1)
        ev = r.get("evidence") or {}
        path = ev.get("path")
        name = ev.get("nccl_device") or device.get((gpu, nic_name(nic)),
                                                    nic_name(nic))
        if path and pci.get(gpu) in gpus:
            gpus[pci[gpu]]["paths"][name] = path
    return gpus, pci


def compare(oracle, doc):
    """Differences as (gpu busid, what, text)."""
    diffs = []
    gpus, pci = model_of(doc)
    by_rank = {g["rank"]: g["busid"] for g in oracle.get("gpus", [])}
    cannot = [r for r in doc.get("results", [])
              if r.get("reason_code") == "NCCL_CANNOT_INIT"]
    if oracle.get("status", "ok") != "ok":
        if cannot:
            return []       # both say NCCL of this release cannot start
        return [(None, "status", "NCCL: %s; gdrcheck models rails for %d GPU(s)"
                 % (oracle["status"], len(gpus)))]
    if cannot:
        return [(None, "status", "NCCL initialises; gdrcheck: %s" %
                 cannot[0]["reason"])]
    for g in oracle.get("gpus", []):
        bus = g["busid"].lower()
        mine = gpus.get(bus)
        if mine is None:
            diffs.append((bus, "rails", "NCCL has GPU %s, gdrcheck no rails for it" % bus))
            continue
        theirs = list(dict.fromkeys(g.get("rails", [])))
        if sorted(theirs) != sorted(mine["rails"]):
            diffs.append((bus, "rails", "NCCL %s, gdrcheck %s" %
                          (",".join(theirs) or "-", ",".join(sorted(mine["rails"])) or "-")))
        for net in g.get("nets", []):
            name = net["name"]
            p = mine["paths"].get(name)
            if p is not None and p != net["path"]:
                diffs.append((bus, "path " + name, "NCCL %s, gdrcheck %s" % (net["path"], p)))
            rail = mine["rails"].get(name)
            if rail is None or name not in theirs:
                continue
            relay = (g.get("pxn") or {}).get(name)
            relay_bus = by_rank.get(relay) if relay is not None else None
            my_relay = pci.get(rail.get("relay_gpu")) if rail.get("relay_gpu") else None
            if (relay_bus or None) != (my_relay or None):
                diffs.append((bus, "relay " + name, "NCCL %s, gdrcheck %s" %
                              (relay_bus or "none", my_relay or "none")))
            for way in ("send", "recv"):
                a, b = net.get("gdr_" + way), rail.get("gdr_" + way)
                if a is not None and b is not None and bool(a) != bool(b):
                    diffs.append((bus, "gdr " + name, "%s: NCCL %s, gdrcheck %s" %
                                  (way, a, b)))
    return diffs


def excepted(oracle, diff):
    for e in oracle.get("exceptions", []):
        if e.get("what") == diff[1] and e.get("gpu") in (None, diff[0]) and \
                len(e.get("reason", "")) > 20:
            return e
    return None


def main(argv):
    verbose = "-v" in argv
    names = [a for a in argv if not a.startswith("-")]
    files = sorted(glob.glob(os.path.join(RECORDED, "v*", "*.json")))
    if not files:
        print("nccl-oracle: no recorded answers under %s" % RECORDED)
        print("nccl-oracle: 0 passed, 1 failed")
        return 1
    passed = failed = 0
    for f in files:
        tag = os.path.basename(os.path.dirname(f))
        name = os.path.basename(f)[:-5]
        if names and name not in names:
            continue
        oracle = json.load(open(f))
        label = "%s %s" % (tag, name)
        if not os.path.isdir(os.path.join(CASES, name)):
            print("FAIL %s: no scenario %s" % (label, name))
            failed += 1
            continue
        with tempfile.TemporaryDirectory(prefix="nccl-oracle.") as work:
            try:
                doc = run_gdrcheck(name, tag_version(tag), work)
            except (RuntimeError, subprocess.SubprocessError,
                    subprocess.CalledProcessError) as e:
                print("FAIL %s: %s" % (label, e))
                failed += 1
                continue
        diffs = compare(oracle, doc)
        open_diffs = [d for d in diffs if not excepted(oracle, d)]
        if open_diffs:
            print("FAIL %s" % label)
            for bus, what, text in open_diffs:
                print("    %s %s: %s" % (bus or "node", what, text))
            failed += 1
        else:
            extra = " (%d excepted)" % len(diffs) if diffs else ""
            print("PASS %s%s" % (label, extra))
            if verbose:
                for d in diffs:
                    print("    excepted %s %s: %s" % d)
            passed += 1
    print("nccl-oracle: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
