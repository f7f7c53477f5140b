#!/usr/bin/env python3
"""Synthetic DGX-like sysroot with N GPUs and N RDMA NICs, for bench/run.

  bench/gen-sysroot.py N OUTDIR [NICS]

Writes OUTDIR/sysroot.spec (mksysroot.py's spec language, see
tests/scenarios/mksysroot.py), builds OUTDIR/sysroot from it, and writes
OUTDIR/cuda.conf and OUTDIR/verbs.conf for the libcuda / libibverbs test
doubles (FAKE_CUDA_SCENARIO / FAKE_VERBS_SCENARIO) so that CUDA and verbs
report the same GPUs and NICs as sysfs.

Layout: two sockets (NUMA 0 and 1), the pairs split between them. Per
socket, one root port per L1 switch; an L1 switch (upstream + downstream
ports) holds up to 8 L2 switches; each L2 (leaf) switch holds one GPU
(H100, 128 GiB BAR1) and one ConnectX-7 (RoCE, port ACTIVE, RoCE v2 GIDs).
Every switch level is a real PCIe bridge with config space (PCI Express
capability, AER, ACS with redirection off), IOMMU groups in identity mode,
and one NVMe per socket off every GPU-NIC path. Sockets share PCI domain
0000 (socket 1 from bus 0x80) while their buses fit, else each socket gets
its own domain.

NICS (default N, at least N): the NICs beyond the N paired ones are
storage/frontend NICs, each behind a root port of its own (half per
socket), so every GPU has one PIX NIC and the others are PXB/PHB/SYS away
(a Dell 8xH100 with 12 NICs is `8 DIR 12`).
"""
import math
import os
import subprocess
import sys

L2_PER_L1 = 8
MKSYSROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                         "tests", "scenarios", "mksysroot.py")
SW = 'class=0x060400 vendor=0x1000 device=0xc030 speed="32.0 GT/s PCIe" width=16'


def socket_buses(pairs):
    l1 = math.ceil(pairs / L2_PER_L1)
    # root bus, per L1: upstream + downstream bus, per leaf: 4 buses; NVMe: 1
    return 1 + 2 * l1 + 4 * pairs + 1


def generate(n, nnics=None):
    nnics = n if nnics is None else nnics
    extra = [(nnics - n) - (nnics - n) // 2, (nnics - n) // 2]
    pairs = [n - n // 2, n // 2]           # socket 0 gets the odd one
    shared = all(socket_buses(p) + e <= 0x80 for p, e in zip(pairs, extra))
    lines = [
        f"# gen-sysroot.py {n}: {n} GPUs x {nnics} NICs, two sockets, two switch levels",
        "kernel 6.5.0-35-generic",
        "hostname bench-node",
        "self uid=0 memlock=unlimited",
        "nvidia open 550.90.07",
        "module nvidia_uvm ib_core ib_uverbs mlx5_core mlx5_ib",
        "numa-nodes 2",
        "cpuinfo bare",
        'cmdline "BOOT_IMAGE=/vmlinuz-6.5.0-35-generic root=/dev/nvme0n1p2 ro quiet"',
        "touch /dev/infiniband/rdma_cm",
        "touch /dev/nvidiactl",
    ]
    gpus, nics = [], []
    group = 10
    for sock in range(2):
        dom = 0 if shared else sock
        base = (0x80 * sock) if shared else 0
        hb = f"pci{dom:04x}:{base:02x}"
        nxt = base + 1                     # next free bus number

        def bdf(bus, dev=0):
            return f"{dom:04x}:{bus:02x}:{dev:02x}.0"

        def pci(b, path, extra):
            lines.append(f"pci {b} {extra} numa={sock} path={'/'.join(path)}")

        nl1 = math.ceil(pairs[sock] / L2_PER_L1)
        left = pairs[sock]
        for i in range(nl1):
            rp = bdf(base, i + 1)
            p_rp = [hb, rp]
            pci(rp, p_rp, f'{SW} vendor=0x8086 device=0x352a acs=0x0000')
            up = bdf(nxt)
            p_up = p_rp + [up]
            pci(up, p_up, SW)
            dbus = nxt + 1
            nxt += 2
            for j in range(min(L2_PER_L1, left)):
                dn = bdf(dbus, j)
                p_dn = p_up + [dn]
                pci(dn, p_dn, f"{SW} acs=0x0000")
                l2u = bdf(nxt)
                p_l2u = p_dn + [l2u]
                pci(l2u, p_l2u, SW)
                g_dn, n_dn = bdf(nxt + 1, 0), bdf(nxt + 1, 1)
                pci(g_dn, p_l2u + [g_dn], f"{SW} acs=0x0000")
                pci(n_dn, p_l2u + [n_dn], f"{SW} acs=0x0000")
                gpu, nic = bdf(nxt + 2), bdf(nxt + 3)
                nxt += 4
                pci(gpu, p_l2u + [g_dn, gpu],
                    'vendor=0x10de device=0x2330 class=0x030200 '
                    'bars=64:16M,64:128G,64:32M speed="32.0 GT/s PCIe" '
                    f'width=16 iommu={group}:identity')
                pci(nic, p_l2u + [n_dn, nic],
                    'vendor=0x15b3 device=0x1021 class=0x020000 bars=64:32M '
                    'speed="32.0 GT/s PCIe" width=16 driver=mlx5_core '
                    f'iommu={group + 1}:identity')
                group += 2
                gpus.append(gpu)
                nics.append(nic)
            left -= min(L2_PER_L1, left)
        # An NVMe behind its own root port, off every GPU-NIC path.
        rp = bdf(base, 0x1f)
        pci(rp, [hb, rp], 'class=0x060400 vendor=0x8086 device=0x352b '
            'speed="16.0 GT/s PCIe" width=4 acs=0x0000')
        nvme = bdf(nxt)
        pci(nvme, [hb, rp, nvme], 'vendor=0x144d device=0xa80a '
            'class=0x010802 bars=64:16K speed="16.0 GT/s PCIe" width=4')
        nxt += 1
        # Extra (storage) NICs: one root port each, no GPU below it.
        for k in range(extra[sock]):
            rp = bdf(base, 0x10 + k)
            pci(rp, [hb, rp], f'{SW} vendor=0x8086 device=0x352a acs=0x0000')
            nic = bdf(nxt)
            pci(nic, [hb, rp, nic],
                'vendor=0x15b3 device=0x1021 class=0x020000 bars=64:32M '
                'speed="32.0 GT/s PCIe" width=16 driver=mlx5_core '
                f'iommu={group}:identity')
            group += 1
            nics.append(nic)
            nxt += 1
        assert nxt <= base + (0x80 if shared else 0x100), (sock, nxt)
    # Socket order interleaves NICs; CUDA and verbs list them in that order.
    for i, nic in enumerate(nics):
        lines.append(f"ibdev mlx5_{i} pci={nic} uverbs=uverbs{i} fw=28.39.1002")
        lines.append(f'port mlx5_{i} 1 state=ACTIVE link=Ethernet '
                     f'rate="400 Gb/sec (4X NDR)" '
                     f'gids=v1:ens{i}np0,v2:ens{i}np0,v1:ens{i}np0,v2:ens{i}np0,zero')
    cuda = ["driver_version = 12040", f"device_count = {n}"]
    for i, g in enumerate(gpus):
        cuda += [f"gpu{i}.name = NVIDIA H100 80GB HBM3", f"gpu{i}.pci = {g}",
                 f"gpu{i}.total_mem = 85029158912"]
    verbs = [f"device_count = {len(nics)}"]
    for i in range(len(nics)):
        verbs += [f"dev{i}.name = mlx5_{i}", f"dev{i}.dmabuf_errno = 9"]
    return lines, cuda, verbs


def main():
    if len(sys.argv) not in (3, 4):
        raise SystemExit("usage: gen-sysroot.py N OUTDIR [NICS]")
    n, out = int(sys.argv[1]), sys.argv[2]
    nnics = int(sys.argv[3]) if len(sys.argv) == 4 else n
    if not 1 <= n <= 64:
        raise SystemExit("gen-sysroot.py: N must be 1..64 (the CUDA double's limit)")
    if not n <= nnics <= 64:
        raise SystemExit("gen-sysroot.py: NICS must be N..64")
    spec, cuda, verbs = generate(n, nnics)
    os.makedirs(out, exist_ok=True)
    for name, body in (("sysroot.spec", spec), ("cuda.conf", cuda),
                       ("verbs.conf", verbs)):
        with open(os.path.join(out, name), "w") as f:
            f.write("\n".join(body) + "\n")
    subprocess.run([sys.executable, MKSYSROOT, os.path.join(out, "sysroot.spec"),
                    os.path.join(out, "sysroot")], check=True)


if __name__ == "__main__":
    main()
