#!/usr/bin/env python3
"""Cross-check platform.direct_acs against rdma-core's own rdma_topo.

  tests/rdma-topo-crosscheck.py RDMA_TOPO [SCENARIO...]

RDMA_TOPO is rdma-core's kernel-boot/rdma_topo (a checkout or the
installed /usr/sbin/rdma_topo); without it the check is skipped (exit 77).
For each Direct-NIC scenario (default: every direct-nic-* one whose
registers are readable) it builds the fixture, turns the sysroot's
/sys/bus/pci/devices into an rdma_topo dump (the JSON `rdma_topo dump`
writes and `-F` reads: realpath, config, modalias, iommu_group, VPD), runs
rdma_topo's PCITopo on it and compares with gdrcheck --json:

  - the pci=config_acs= line: rdma_topo write-grub-acs's formula
    (compute_acs, the masks that differ from kernel_acs_isolated, sorted)
    against the config_acs_line evidence;
  - per port: rdma_topo check's verdict (combine_acs(cur, mask) == cur)
    against the "ok"/"differs" of the acs_<bdf> evidence, and the same set
    of ports;
  - a layout rdma_topo rejects (CommandError) must be
    DIRECT_ACS_LAYOUT_UNKNOWN.

The fixtures carry no VPD; rdma_topo pairs a Data Direct function with its
PF by the VPD V3 UUID, so the dump gives the n-th DMA function (address
order) and the n-th ConnectX PF the same V3 -- that pairing changes no mask.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import types
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
SCEN = os.path.join(HERE, "scenarios")
PCI = "sys/bus/pci/devices"


def load_rdma_topo(path):
    src = open(path, encoding="utf-8").read().rstrip()
    if src.endswith("main()"):
        src = src[: -len("main()")]
    mod = types.ModuleType("rdma_topo")
    mod.__file__ = path
    sys.modules["rdma_topo"] = mod
    exec(compile(src, path, "exec"), mod.__dict__)
    return mod


def vpd(v3, sn):
    ident = b"ConnectX-8"
    kw = b"V3" + bytes([len(v3)]) + v3.encode() + b"SN" + bytes([len(sn)]) + sn.encode()
    return (bytes([0x82]) + len(ident).to_bytes(2, "little") + ident +
            bytes([0x90]) + len(kw).to_bytes(2, "little") + kw + bytes([0x78]))


def enc(b):
    return base64.b64encode(zlib.compress(b)).decode("ascii")


def dump(sysroot):
    devdir = os.path.join(sysroot, PCI)
    out, dma, pf = [], [], []
    for bdf in sorted(os.listdir(devdir)):
        d = os.path.join(devdir, bdf)
        rd = lambda a: open(os.path.join(d, a)).read().strip()
        ven, dev, cls = int(rd("vendor"), 16), int(rd("device"), 16), int(rd("class"), 16)
        real = os.path.realpath(d)[len(os.path.realpath(sysroot)):]
        item = {
            "realpath": real,
            "config": enc(open(os.path.join(d, "config"), "rb").read()),
            "modalias": "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" % (
                ven, dev, ven, 0, cls >> 16, (cls >> 8) & 0xFF, cls & 0xFF),
        }
        if os.path.islink(os.path.join(d, "iommu_group")):
            item["iommu_group"] = int(os.path.basename(os.readlink(os.path.join(d, "iommu_group"))))
        if (ven, dev) == (0x15B3, 0x2100):
            dma.append(item)
        if (ven, dev) in ((0x15B3, 0x1021), (0x15B3, 0x1023), (0x15B3, 0x1025)):
            pf.append(item)
        out.append(item)
    for i, (a, b) in enumerate(zip(dma, pf)):
        a["vpd"] = b["vpd"] = enc(vpd("uuid-%d" % i, "SN%d" % i))
    return out


def main(argv):
    if not argv or not os.path.isfile(argv[0]):
        print("SKIP rdma-topo-crosscheck: no rdma_topo given (rdma-core "
              "kernel-boot/rdma_topo)")
        return 77
    rt = load_rdma_topo(argv[0])
    names = argv[1:] or sorted(n for n in os.listdir(SCEN)
                               if n.startswith("direct-nic-") and "nonroot" not in n)
    failed = 0
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            sr = os.path.join(tmp, "sysroot")
            subprocess.run([sys.executable, os.path.join(SCEN, "mksysroot.py"),
                            os.path.join(SCEN, name, "sysroot.spec"), sr],
                           check=True, stdout=subprocess.DEVNULL)
            dfile = os.path.join(tmp, "dump.json")
            json.dump(dump(sr), open(dfile, "w"))
            res = subprocess.run([os.path.join(TOP, "gdrcheck"), "--sysroot", sr,
                                  "--json", "--only", "platform.direct_acs"],
                                 capture_output=True, text=True,
                                 env=dict(os.environ, SOURCE_DATE_EPOCH="0"))
            rep = json.loads(res.stdout)
            r = [x for x in rep["results"] if x["gate"] == "platform.direct_acs"][0]
            try:
                topo = rt.PCITopo(dfile, None)
            except rt.CommandError as e:
                # A layout rdma_topo rejects is one gdrcheck computes no masks for.
                if r["reason_code"] == "DIRECT_ACS_LAYOUT_UNKNOWN":
                    print(f"PASS {name}: both reject the layout ({e})")
                else:
                    failed += 1
                    print(f"FAIL {name}: rdma_topo rejects the layout ({e}), "
                          f"gdrcheck says {r['status']} {r['reason_code']}")
                continue
            acs = topo.compute_acs()
            line = ";".join(
                f"{m}@{p.bdf}" for p, m in sorted(acs.items(), key=lambda x: x[0].bdf)
                if m != rt.kernel_acs_isolated(p.device_type))
            want = {str(p.bdf): (m, rt.combine_acs(p.get_acs_ctrl(), m) == p.get_acs_ctrl())
                    for p, m in acs.items()}
            ev = r["evidence"]
            got = {k[4:]: (v.split("want ")[1].split(":")[0], v.endswith(": ok"))
                   for k, v in ev.items() if k.startswith("acs_")}
            errs = []
            if ev.get("config_acs_line") != f'pci=config_acs="{line}"':
                errs.append(f"line: gdrcheck {ev.get('config_acs_line')!r}, "
                            f"rdma_topo pci=config_acs=\"{line}\"")
            if got != want:
                errs.append(f"ports: gdrcheck {sorted(got.items())}, "
                            f"rdma_topo {sorted(want.items())}")
            if errs:
                failed += 1
                print(f"FAIL {name} ({r['status']} {r['reason_code']}): " + "; ".join(errs))
            else:
                print(f"PASS {name}: {r['status']} {r['reason_code']}, "
                      f"{len(want)} port(s), {sum(not ok for _, ok in want.values())} "
                      "differ, line agrees with rdma_topo")
    print(f"rdma-topo-crosscheck: {len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
