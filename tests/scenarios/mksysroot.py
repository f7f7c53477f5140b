#!/usr/bin/env python3
"""Build a --sysroot fixture tree from a scenario's sysroot.spec.

The spec is line based, one directive per line ('#' comments). Paths are
absolute inside the sysroot. Values use shell-like quoting (shlex).

  set NAME VALUE                    define ${NAME} for later lines; ${NAME:-X}
                                    expands to X when NAME is not set
  include FILE                      read another spec (relative to this one)
  file PATH TEXT                    write TEXT + newline ("\\n", "\\t" escapes work)
  gzfile PATH TEXT                  as file, gzip-compressed (/proc/config.gz)
  touch PATH                        empty file (e.g. a /dev node stand-in)
  dir PATH                          empty directory
  link PATH TARGET                  symlink
  fifo PATH                         a named pipe (replacing what is there):
                                    opening it for reading blocks until a
                                    writer comes, i.e. forever
  socket PATH                       a listening Unix socket (replacing what
                                    is there): open() fails with ENXIO
  chardev PATH [MAJOR:MINOR]        a character device node (default 1:5,
                                    /dev/zero: endless NUL bytes); needs root
  kernel RELEASE                    /proc/sys/kernel/osrelease
  hostname NAME                     /proc/sys/kernel/hostname
  self uid=N memlock=BYTES|unlimited caps=HEX
                                    /proc/self/status and /proc/self/limits
  nvidia open|proprietary VERSION   /proc/driver/nvidia/version (+ module)
  module NAME... [version=V]        /sys/module/NAME (version file if given)
  pci BDF key=value...              a PCI function (see below)
  ibdev NAME key=value...           an RDMA device (see below)
  port DEV N key=value...           a port of an RDMA device
  pci-capture TGZ                   import a capture of /sys/bus/pci/devices
                                    (one dir per BDF holding its attribute
                                    files and `realpath`, the link target)

pci keys: path=<dirs under /sys/devices> (default pci0000:BB/BDF),
vendor, device, class (hex), bars=<bits:size>,... (e.g. 64:16M,64:256G),
subvendor=/subdevice= (subsystem ids, none unless given),
numa=N, speed="16.0 GT/s PCIe", width=16 (current = max unless
curspeed=/curwidth= say otherwise), driver=NAME, iommu=GROUP:TYPE,
port=endpoint|rootport|upstream|downstream (PCIe port type; class 0x060400
bridges default by depth), acs=0xCTL (an ACS extended capability with that
control register; capability 0x005f like QEMU's root ports),
cfg=4096|256|64|truncated|loop|garbage (what the config file holds; 64 is
what a non-root reader gets), ats=on|off (an ATS extended capability,
its Enable bit set or clear), relaxed=on (Device Control: Enable Relaxed
Ordering; off by default), totalvfs=N (an SR-IOV capable PF:
sriov_totalvfs N, sriov_numvfs 0 until VFs name it), pf=BDF (this function
is an SR-IOV VF of BDF, a function declared on an earlier line: a `physfn`
link to the PF here, `virtfnN` to this VF in the PF (N = 0, 1, ... in spec
order), the PF's sriov_numvfs counts it and its sriov_totalvfs is raised to
sriov_numvfs when smaller or absent). Every function also gets the
`subsystem` link (-> /sys/bus/pci) and its bus under /sys/class/pci_bus, as
the kernel makes them (NCCL's topology reader walks both).

The config file is a real PCIe layout: the standard type 0/1 header with a
capability list at 0x40 (the PCI Express capability: port type, link
capabilities and status), and extended capabilities from 0x100 (AER, then
ACS when asked for).

In any quoted word, \\xNN is that byte (file names and contents alike):
fixtures with hostile names (control bytes, invalid UTF-8).

Other directives:
  numa-nodes N                      /sys/devices/system/node/node0..N-1
                                    (cpumap: 32 CPUs per node)
  cpuinfo hypervisor|bare           /proc/cpuinfo flags (VM or not)
  cmdline TEXT                      /proc/cmdline
  iommu-unit NAME                   /sys/class/iommu/NAME
  dmi VENDOR PRODUCT                /sys/class/dmi/id/sys_vendor, product_name

ibdev keys: pci=BDF (omit for a device with no PCI parent), uverbs=uverbsN,
node=present|missing (/dev/infiniband/uverbsN), fw=VERSION, abi=N.

port keys: state=ACTIVE|DOWN|INIT|ARMED, phys=LinkUp|Polling|Disabled,
link=Ethernet|InfiniBand, rate=TEXT, gids=TYPE[:netdev],... where TYPE is
v2, v1 or zero (an unpopulated entry); v2ll (link-local fe80 with
RoCE v2), v1g6 and v2g6 (global IPv6 2001:db8:0:1::/64, RoCE v1 or v2).
"""
import gzip
import os
import re
import socket
import stat
import shlex
import struct
import sys
import tarfile

STATES = {"DOWN": 1, "INIT": 2, "ARMED": 3, "ACTIVE": 4, "ACTIVE_DEFER": 5}
PHYS = {"Sleep": 1, "Polling": 2, "Disabled": 3, "LinkUp": 5,
        "LinkErrorRecovery": 6}
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class Builder:
    def __init__(self, root):
        self.root = root
        self.next_bar = 0x100000000000
        self.sriov = {}         # PF sysfs dir -> [numvfs, totalvfs]

    def p(self, path):
        assert path.startswith("/"), path
        return os.path.join(self.root, path.lstrip("/"))

    def write(self, path, text):
        full = self.p(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)

    def write_gz(self, path, text):
        full = self.p(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        # mtime 0: the same spec builds the same bytes.
        with gzip.GzipFile(full, "wb", mtime=0) as f:
            f.write(text.encode("utf-8", "surrogateescape"))

    def mkdir(self, path):
        os.makedirs(self.p(path), exist_ok=True)

    def link(self, path, target):
        full = self.p(path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if os.path.lexists(full):
            os.unlink(full)
        os.symlink(target, full)

    def rel_link(self, path, abs_target):
        """Symlink path -> abs_target, written relative like sysfs does."""
        rel = os.path.relpath(abs_target, os.path.dirname(path))
        self.link(path, rel)

    # --- directives -----------------------------------------------------
    def d_self(self, kv):
        uid = int(kv.get("uid", "0"))
        caps = kv.get("caps", "000001ffffffffff" if uid == 0 else "0")
        memlock = kv.get("memlock", "unlimited")
        self.write("/proc/self/status",
                   "Name:\tgdrcheck\nUmask:\t0022\nState:\tR (running)\n"
                   f"Uid:\t{uid}\t{uid}\t{uid}\t{uid}\n"
                   f"Gid:\t{uid}\t{uid}\t{uid}\t{uid}\n"
                   "CapInh:\t0000000000000000\n"
                   f"CapPrm:\t{int(caps, 16):016x}\n"
                   f"CapEff:\t{int(caps, 16):016x}\n")
        self.write("/proc/self/limits",
                   "Limit                     Soft Limit           Hard Limit           Units     \n"
                   "Max cpu time              unlimited            unlimited            seconds   \n"
                   "Max open files            1048576              1048576              files     \n"
                   f"Max locked memory         {memlock:<20} {memlock:<20} bytes     \n"
                   "Max address space         unlimited            unlimited            bytes     \n")

    def d_nvidia(self, flavour, version):
        if flavour == "open":
            line = (f"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                    f"{version}  Release Build  (dvs-builder@U16-I3-B03-4-3)  "
                    "Thu Oct 30 17:16:49 UTC 2025")
        else:
            line = (f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {version}  "
                    "Sat Aug 19 01:15:15 UTC 2023")
        self.write("/proc/driver/nvidia/version",
                   line + "\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n")
        self.d_module(["nvidia"], {"version": version})

    def d_module(self, names, kv):
        for n in names:
            self.mkdir(f"/sys/module/{n}")
            if "version" in kv:
                self.write(f"/sys/module/{n}/version", kv["version"] + "\n")

    def bar_lines(self, spec):
        lines = []
        for bar in spec.split(",") if spec else []:
            bits, size = bar.split(":")
            n = int(size[:-1]) * UNITS[size[-1]]
            start = (self.next_bar + n - 1) // n * n
            self.next_bar = start + n
            flags = 0x14220c if bits == "64" else 0x40200
            lines.append(f"0x{start:016x} 0x{start + n - 1:016x} 0x{flags:016x}")
            if bits == "64":
                lines.append("0x%016x 0x%016x 0x%016x" % (0, 0, 0))
        while len(lines) < 7:
            lines.append("0x%016x 0x%016x 0x%016x" % (0, 0, 0))
        return "\n".join(lines[:7]) + "\n"

    def config(self, bdf, kv, depth):
        """Config space bytes of a function, as the kernel would show them."""
        cfg = bytearray(4096)
        cls = int(kv.get("class", "0x000000"), 16)
        bridge = (cls >> 8) == 0x0604
        vendor, device = int(kv.get("vendor", "0x8086"), 16), int(kv.get("device", "0x0000"), 16)
        cfg[0:4] = struct.pack("<HH", vendor, device)
        cfg[4:8] = struct.pack("<HH", 0x0006, 0x0010)     # mem+master; cap list
        cfg[8] = 0x01
        cfg[9:12] = bytes([cls & 0xff, (cls >> 8) & 0xff, (cls >> 16) & 0xff])
        cfg[0x0e] = 0x01 if bridge else 0x00
        if bridge:
            bus = int(bdf.split(":")[-2], 16)   # 4- or 5-digit domains
            cfg[0x18:0x1b] = bytes([bus, bus + 1, bus + 1])
        cfg[0x34] = 0x40
        ports = {"endpoint": 0x0, "rootport": 0x4, "upstream": 0x5, "downstream": 0x6}
        if "port" in kv:
            ptype = ports[kv["port"]]
        elif bridge:
            ptype = 0x4 if depth == 0 else (0x5 if depth % 2 else 0x6)
        else:
            ptype = 0x0
        speeds = {"2.5": 1, "5.0": 2, "8.0": 3, "16.0": 4, "32.0": 5, "64.0": 6}
        mspeed = speeds.get(kv.get("speed", "16.0 GT/s").split()[0], 4)
        cspeed = speeds.get(kv.get("curspeed", kv.get("speed", "16.0 GT/s")).split()[0], 4)
        mwidth = int(kv.get("width", "16"))
        cwidth = int(kv.get("curwidth", kv.get("width", "16")))
        cfg[0x40] = 0x10                                   # PCI Express
        cfg[0x41] = 0x00                                   # last standard cap
        cfg[0x42:0x44] = struct.pack("<H", 0x0002 | ptype << 4 |
                                     (0x100 if ptype in (0x4, 0x6) else 0))
        cfg[0x4c:0x50] = struct.pack("<I", mspeed | mwidth << 4)
        cfg[0x52:0x54] = struct.pack("<H", cspeed | cwidth << 4)
        if kv.get("relaxed") == "on":                      # Device Control:
            cfg[0x48:0x4a] = struct.pack("<H", 0x0010)     # Enable Relaxed Ordering
        # Extended capabilities: AER at 0x100, then ACS at 0x148, then ATS
        # at 0x150 (ats=on|off: capability present, Enable bit set or not).
        acs = kv.get("acs")
        ats = kv.get("ats")
        ats_at = 0x150 if ats is not None else 0
        nxt = 0x148 if acs is not None else ats_at
        cfg[0x100:0x104] = struct.pack("<I", 0x0001 | 2 << 16 | nxt << 20)
        if acs is not None:
            cfg[0x148:0x14c] = struct.pack("<I", 0x000d | 1 << 16 | ats_at << 20)
            cfg[0x14c:0x150] = struct.pack("<HH", 0x005f, int(acs, 16))
        if ats is not None:
            cfg[0x150:0x154] = struct.pack("<I", 0x000f | 1 << 16)
            cfg[0x154:0x158] = struct.pack("<HH", 0x0020,
                                           0x8000 if ats == "on" else 0)
        mode = kv.get("cfg", "4096")
        if mode == "loop":          # AER's next pointer leads back to itself
            cfg[0x100:0x104] = struct.pack("<I", 0x0001 | 2 << 16 | 0x100 << 20)
        elif mode == "garbage":     # every extended header reads 0xa5a5a5a5
            cfg[0x100:] = b"\xa5" * (4096 - 0x100)
        size = {"4096": 4096, "256": 256, "64": 64, "truncated": 0x130,
                "loop": 4096, "garbage": 4096}[mode]
        return bytes(cfg[:size])

    def d_pci(self, bdf, kv):
        path = kv.get("path", f"pci{bdf.rsplit(':', 1)[0]}/{bdf}")
        dev = f"/sys/devices/{path}"
        assert path.endswith(bdf), (bdf, path)
        depth = sum(1 for c in path.split("/")[1:-1] if ":" in c)
        full = self.p(f"{dev}/config")
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(self.config(bdf, kv, depth))
        if "iommu" in kv:
            group, gtype = kv["iommu"].split(":")
            self.write(f"/sys/kernel/iommu_groups/{group}/type", gtype + "\n")
            self.rel_link(f"{dev}/iommu_group", f"/sys/kernel/iommu_groups/{group}")
        self.write(f"{dev}/vendor", kv.get("vendor", "0x8086") + "\n")
        self.write(f"{dev}/device", kv.get("device", "0x0000") + "\n")
        self.write(f"{dev}/class", kv.get("class", "0x000000") + "\n")
        if "subvendor" in kv:
            self.write(f"{dev}/subsystem_vendor", kv["subvendor"] + "\n")
            self.write(f"{dev}/subsystem_device", kv.get("subdevice", "0x0000") + "\n")
        self.write(f"{dev}/numa_node", kv.get("numa", "-1") + "\n")
        self.write(f"{dev}/irq", "0\n")
        self.write(f"{dev}/resource", self.bar_lines(kv.get("bars", "")))
        if "speed" in kv:
            self.write(f"{dev}/max_link_speed", kv["speed"] + "\n")
            self.write(f"{dev}/max_link_width", kv.get("width", "16") + "\n")
            self.write(f"{dev}/current_link_speed", kv.get("curspeed", kv["speed"]) + "\n")
            self.write(f"{dev}/current_link_width", kv.get("curwidth", kv.get("width", "16")) + "\n")
        if "driver" in kv:
            self.mkdir(f"/sys/bus/pci/drivers/{kv['driver']}")
            self.rel_link(f"{dev}/driver", f"/sys/bus/pci/drivers/{kv['driver']}")
        if "totalvfs" in kv:
            self.sriov[dev] = [0, int(kv["totalvfs"])]
            self.write(f"{dev}/sriov_totalvfs", f"{int(kv['totalvfs'])}\n")
            self.write(f"{dev}/sriov_numvfs", "0\n")
        if "pf" in kv:
            self.d_vf(dev, kv["pf"])
        self.rel_link(f"/sys/bus/pci/devices/{bdf}", dev)
        self.pci_links(bdf, dev)

    def pci_links(self, bdf, dev):
        """What the kernel adds beside each function and NCCL's topology
        reader relies on: `subsystem` (-> /sys/bus/pci: a NIC without it is
        no PCI device to NCCL) and the bus it sits on, pci_bus/DDDD:BB in
        its parent (bridge or root) with /sys/class/pci_bus/DDDD:BB linking
        there (NCCL finds a device as /sys/class/pci_bus/BUS/../../BDF)."""
        self.rel_link(f"{dev}/subsystem", "/sys/bus/pci")
        bus = bdf.rsplit(":", 1)[0]
        parent = os.path.dirname(dev)
        self.mkdir(f"{parent}/pci_bus/{bus}")
        if not os.path.lexists(self.p(f"/sys/class/pci_bus/{bus}")):
            self.rel_link(f"/sys/class/pci_bus/{bus}", f"{parent}/pci_bus/{bus}")

    def d_vf(self, dev, pf):
        """dev is an SR-IOV VF of PCI function pf (declared before)."""
        link = self.p(f"/sys/bus/pci/devices/{pf}")
        if not os.path.lexists(link):
            raise ValueError(f"pf={pf}: no such PCI function (declare it first)")
        pfdev = "/" + os.path.relpath(os.path.realpath(link), self.root)
        st = self.sriov.setdefault(pfdev, [0, 0])
        self.rel_link(f"{dev}/physfn", pfdev)
        self.rel_link(f"{pfdev}/virtfn{st[0]}", dev)
        st[0] += 1
        st[1] = max(st[1], st[0])
        self.write(f"{pfdev}/sriov_numvfs", f"{st[0]}\n")
        self.write(f"{pfdev}/sriov_totalvfs", f"{st[1]}\n")

    def d_ibdev(self, name, kv):
        if "pci" in kv:
            bdf = kv["pci"]
            dev = os.path.realpath(self.p(f"/sys/bus/pci/devices/{bdf}"))
            base = "/" + os.path.relpath(dev, self.root)
            ib = f"{base}/infiniband/{name}"
            self.rel_link(f"{ib}/device", base)
        else:
            ib = f"/sys/devices/virtual/infiniband/{name}"
        self.mkdir(ib + "/ports")
        self.write(f"{ib}/fw_ver", kv.get("fw", "") + "\n")
        self.write(f"{ib}/node_type", "1: CA\n")
        self.rel_link(f"/sys/class/infiniband/{name}", ib)
        uv = kv.get("uverbs")
        if uv:
            self.write(f"/sys/class/infiniband_verbs/{uv}/ibdev", name + "\n")
            self.write("/sys/class/infiniband_verbs/abi_version",
                       kv.get("abi", "6") + "\n")
            if kv.get("node", "present") == "present":
                self.write(f"/dev/infiniband/{uv}", "")

    def d_port(self, dev, num, kv):
        base = os.path.realpath(self.p(f"/sys/class/infiniband/{dev}"))
        base = "/" + os.path.relpath(base, self.root) + f"/ports/{num}"
        state = kv.get("state", "ACTIVE")
        phys = kv.get("phys", "LinkUp")
        self.write(f"{base}/state", f"{STATES[state]}: {state}\n")
        self.write(f"{base}/phys_state", f"{PHYS[phys]}: {phys}\n")
        self.write(f"{base}/link_layer", kv.get("link", "Ethernet") + "\n")
        self.write(f"{base}/rate", kv.get("rate", "100 Gb/sec (4X EDR)") + "\n")
        for i, g in enumerate(kv.get("gids", "").split(",") if kv.get("gids") else []):
            gtype, _, ndev = g.partition(":")
            if gtype == "zero":
                gid = "0000:0000:0000:0000:0000:0000:0000:0000"
            elif gtype in ("v1", "v2ll"):
                gid = f"fe80:0000:0000:0000:0202:c9ff:fe00:{i:04x}"
            elif gtype in ("v1g6", "v2g6"):
                gid = f"2001:0db8:0000:0001:0202:c9ff:fe00:{i:04x}"
            else:
                gid = f"0000:0000:0000:0000:0000:ffff:0a00:{i:04x}"
            self.write(f"{base}/gids/{i}", gid + "\n")
            if gtype != "zero":
                self.write(f"{base}/gid_attrs/types/{i}",
                           {"v1": "IB/RoCE v1", "v2": "RoCE v2", "v2ll": "RoCE v2",
                            "v1g6": "IB/RoCE v1", "v2g6": "RoCE v2"}[gtype] + "\n")
                if ndev:
                    self.write(f"{base}/gid_attrs/ndevs/{i}", ndev + "\n")

    def d_pci_capture(self, tgz):
        with tarfile.open(tgz) as t:
            for m in t.getmembers():
                parts = m.name.split("/")
                if not m.isfile() or len(parts) != 4 or parts[1] != "devices":
                    continue
                bdf, attr = parts[2], parts[3]
                if attr == "realpath":
                    continue
                real = t.extractfile(f"./devices/{bdf}/realpath").read().decode().strip()
                data = t.extractfile(m).read()
                full = self.p(real + "/" + attr)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "wb") as f:
                    f.write(data)
                if not os.path.lexists(self.p(f"/sys/bus/pci/devices/{bdf}")):
                    self.rel_link(f"/sys/bus/pci/devices/{bdf}", real)
                    self.pci_links(bdf, real)


def kvs(tokens):
    out = {}
    for t in tokens:
        k, sep, v = t.partition("=")
        if not sep:
            raise SystemExit(f"mksysroot: expected key=value, got {t!r}")
        out[k] = v
    return out


VAR = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def expand(line, env, where):
    def sub(m):
        if m.group(1) in env:
            return env[m.group(1)]
        if m.group(2) is not None:
            return m.group(2)
        raise SystemExit(f"{where}: ${{{m.group(1)}}} is not set")
    return VAR.sub(sub, line)


def unescape_bytes(word):
    """\\xNN: that byte; above 0x7f kept raw through surrogateescape."""
    return re.sub(r"\\x([0-9a-fA-F]{2})",
                  lambda m: bytes([int(m.group(1), 16)]).decode(
                      "utf-8", "surrogateescape"), word)


def run_spec(b, spec, env=None):
    env = {} if env is None else env
    here = os.path.dirname(os.path.abspath(spec))
    with open(spec) as f:
        for lineno, line in enumerate(f, 1):
            line = expand(line, env, f"{spec}:{lineno}")
            tok = [unescape_bytes(t) for t in shlex.split(line, comments=True)]
            if not tok:
                continue
            cmd, args = tok[0], tok[1:]
            try:
                if cmd == "set":
                    env[args[0]] = args[1]
                elif cmd == "include":
                    run_spec(b, os.path.join(here, args[0]), env)
                elif cmd == "file":
                    b.write(args[0], args[1].replace("\\n", "\n").replace("\\t", "\t") + "\n")
                elif cmd == "gzfile":
                    b.write_gz(args[0], args[1].replace("\\n", "\n").replace("\\t", "\t") + "\n")
                elif cmd == "touch":
                    b.write(args[0], "")
                elif cmd == "dir":
                    b.mkdir(args[0])
                elif cmd == "link":
                    b.link(args[0], args[1])
                elif cmd == "fifo":
                    full = b.p(args[0])
                    os.makedirs(os.path.dirname(full), exist_ok=True)
                    if os.path.lexists(full):
                        os.unlink(full)
                    os.mkfifo(full)
                elif cmd == "socket":
                    full = b.p(args[0])
                    os.makedirs(os.path.dirname(full), exist_ok=True)
                    if os.path.lexists(full):
                        os.unlink(full)
                    # bind() takes at most 107 bytes: bind the base name.
                    cwd = os.getcwd()
                    os.chdir(os.path.dirname(full))
                    try:
                        sock = socket.socket(socket.AF_UNIX)
                        sock.bind(os.path.basename(full))
                        sock.close()
                    finally:
                        os.chdir(cwd)
                elif cmd == "chardev":
                    full = b.p(args[0])
                    major, minor = (args[1] if len(args) > 1 else "1:5").split(":")
                    os.makedirs(os.path.dirname(full), exist_ok=True)
                    if os.path.lexists(full):
                        os.unlink(full)
                    os.mknod(full, 0o444 | stat.S_IFCHR,
                             os.makedev(int(major), int(minor)))
                elif cmd == "kernel":
                    b.write("/proc/sys/kernel/osrelease", args[0] + "\n")
                elif cmd == "hostname":
                    b.write("/proc/sys/kernel/hostname", args[0] + "\n")
                elif cmd == "self":
                    b.d_self(kvs(args))
                elif cmd == "nvidia":
                    b.d_nvidia(args[0], args[1])
                elif cmd == "module":
                    names = [a for a in args if "=" not in a]
                    b.d_module(names, kvs([a for a in args if "=" in a]))
                elif cmd == "pci":
                    b.d_pci(args[0], kvs(args[1:]))
                elif cmd == "ibdev":
                    b.d_ibdev(args[0], kvs(args[1:]))
                elif cmd == "port":
                    b.d_port(args[0], args[1], kvs(args[2:]))
                elif cmd == "numa-nodes":
                    # cpumap as the kernel writes it (32-bit words, highest
                    # first): 32 CPUs per node, node i owning word i.
                    n = int(args[0])
                    for i in range(n):
                        words = ["ffffffff" if w == i else "00000000" for w in reversed(range(n))]
                        b.write(f"/sys/devices/system/node/node{i}/cpumap", ",".join(words) + "\n")
                elif cmd == "cpuinfo":
                    flags = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr"
                    if args[0] == "hypervisor":
                        flags += " hypervisor"
                    b.write("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: "
                            "GenuineIntel\nmodel name\t: Intel(R) Xeon(R) "
                            f"Platinum 8480C\nflags\t\t: {flags}\n\n")
                elif cmd == "dmi":
                    b.write("/sys/class/dmi/id/sys_vendor", args[0] + "\n")
                    b.write("/sys/class/dmi/id/product_name", args[1] + "\n")
                elif cmd == "cmdline":
                    b.write("/proc/cmdline", args[0] + "\n")
                elif cmd == "iommu-unit":
                    b.mkdir(f"/sys/class/iommu/{args[0]}")
                elif cmd == "pci-capture":
                    b.d_pci_capture(os.path.join(here, args[0]))
                else:
                    raise SystemExit(f"unknown directive {cmd!r}")
            except (IndexError, KeyError, ValueError) as e:
                raise SystemExit(f"{spec}:{lineno}: {line.strip()}: {e!r}")


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: mksysroot.py SPEC OUTDIR")
    spec, out = sys.argv[1], sys.argv[2]
    if os.path.exists(out):
        raise SystemExit(f"mksysroot: {out} exists")
    os.makedirs(out)
    run_spec(Builder(out), spec)


if __name__ == "__main__":
    main()
