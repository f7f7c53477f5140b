#!/usr/bin/env python3
"""Synthetic DGX-like sysroot with N GPUs and N RDMA NICs, for bench/run.

  bench/gen-sysroot.py N OUTDIR [NICS] [--vfs K]

Writes OUTDIR/sysroot.spec (mksysroot.py's spec language, see
tests/scenarios/mksysroot.py), builds OUTDIR/sysroot from it, and writes
OUTDIR/cuda.conf and OUTDIR/verbs.conf for the libcuda / libibverbs test
doubles (FAKE_CUDA_SCENARIO / FAKE_VERBS_SCENARIO) so that CUDA and verbs
report the same GPUs and NICs as sysfs.

Layout: two sockets (NUMA 0 and 1), the pairs split between them. Per
socket, one root port per L1 switch; an L1 switch (upstream + downstream
ports) holds up to 8 L2 switches; each L2 (leaf) switch holds one GPU
(H100, 128 GiB BAR1) and one ConnectX-7 (RoCE, port ACTIVE, RoCE v2 GIDs).
With NICS > N (a Dell XE9680 has 8 GPUs and 12 NICs), the extra NICs sit
one more per leaf switch, from the first leaf on, beside its GPU and NIC.
Every switch level is a real PCIe bridge with config space (PCI Express
capability, AER, ACS with redirection off), IOMMU groups in identity mode,
and one NVMe per socket off every GPU-NIC path. Sockets share PCI domain
0000 (socket 1 from bus 0x80) while their buses fit, else each socket gets
its own domain.

--vfs K (SR-IOV): each physical NIC (PF) gets K virtual functions, each an
RDMA device too: NICS x (1 + K) RDMA devices in all (at most 1024). A VF is
a ConnectX-family VF (15b3:101e, class 0x020000, driver mlx5_core) below the
PF's downstream port, numbered as with ARI: routing ID = the PF's + 1 + j
for VF j, i.e. function number f = 1 + j at bus PFbus + f // 256, device
(f % 256) >> 3, function f & 7, so a leaf reserves ceil((1 + K) / 256)
buses per NIC. The PF holds sriov_totalvfs = sriov_numvfs = K and virtfnJ
links, each VF a physfn link (mksysroot's pf= key); each VF has its own
IOMMU group. RDMA names as a real node: the PFs probe first (mlx5_0 ..
mlx5_{NICS-1}, as without --vfs), then PF 0's VFs, PF 1's, ...; VF j of PF
p has netdev ens{p}v{j}. cuda.conf is unchanged; verbs.conf lists every
device in that order (VFs with vendor_part_id 4126, 0x101e).
"""
import math
import os
import subprocess
import sys

L2_PER_L1 = 8
MAX_RDMA = 1024                            # PFs + VFs
MKSYSROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                         "tests", "scenarios", "mksysroot.py")
SW = 'class=0x060400 vendor=0x1000 device=0xc030 speed="32.0 GT/s PCIe" width=16'


def socket_buses(pairs, extra=0, nb=1):
    l1 = math.ceil(pairs / L2_PER_L1)
    # root bus, per L1: upstream + downstream bus, per leaf: 3 buses (L2
    # upstream, L2 internal, GPU) + nb per NIC (one NIC per leaf plus the
    # extra ones; nb buses hold a PF and its VFs); NVMe: 1
    return 1 + 2 * l1 + 3 * pairs + (pairs + extra) * nb + 1


def nic_buses(vfs):
    """Buses one NIC's functions span: the PF (function 0) and its VFs."""
    return (1 + vfs + 255) // 256


def generate(n, nnic=None, vfs=0):
    nnic = n if nnic is None else nnic
    nb = nic_buses(vfs)
    pairs = [n - n // 2, n // 2]           # socket 0 gets the odd one
    # extra[leaf]: NICs beyond the leaf's own, leaves in global order
    extra = [0] * n
    for k in range(nnic - n):
        extra[k % n] += 1
    xs = [sum(extra[:pairs[0]]), sum(extra[pairs[0]:])]
    shared = all(socket_buses(p, x, nb) <= 0x80 for p, x in zip(pairs, xs))
    leaf = 0
    head = f"# gen-sysroot.py {n} {nnic}: {n} GPUs x {nnic} NICs, two sockets, two switch levels"
    if vfs:
        head = (f"# gen-sysroot.py {n} {nnic} --vfs {vfs}: {n} GPUs x {nnic} NICs "
                f"with {vfs} SR-IOV VFs each ({nnic * (1 + vfs)} RDMA devices), "
                "two sockets, two switch levels")
    lines = [
        head,
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
    gpus, nics, vfns = [], [], []           # vfns[k]: the VFs of nics[k]
    group = 10
    for sock in range(2):
        dom = 0 if shared else sock
        base = (0x80 * sock) if shared else 0
        hb = f"pci{dom:04x}:{base:02x}"
        nxt = base + 1                     # next free bus number

        def bdf(bus, dev=0, fn=0):
            return f"{dom:04x}:{bus:02x}:{dev:02x}.{fn}"

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
                g_dn = bdf(nxt + 1, 0)
                pci(g_dn, p_l2u + [g_dn], f"{SW} acs=0x0000")
                gpu = bdf(nxt + 2)
                pci(gpu, p_l2u + [g_dn, gpu],
                    'vendor=0x10de device=0x2330 class=0x030200 '
                    'bars=64:16M,64:128G,64:32M speed="32.0 GT/s PCIe" '
                    f'width=16 iommu={group}:identity')
                group += 1
                gpus.append(gpu)
                for x in range(1 + extra[leaf]):
                    n_dn = bdf(nxt + 1, 1 + x)
                    pci(n_dn, p_l2u + [n_dn], f"{SW} acs=0x0000")
                    nbus = nxt + 3 + x * nb
                    nic = bdf(nbus)
                    pci(nic, p_l2u + [n_dn, nic],
                        'vendor=0x15b3 device=0x1021 class=0x020000 bars=64:32M '
                        'speed="32.0 GT/s PCIe" width=16 driver=mlx5_core '
                        f'iommu={group}:identity' +
                        (f' totalvfs={vfs}' if vfs else ''))
                    group += 1
                    nics.append(nic)
                    vfns.append([])
                    # ARI: VF j is function 1 + j after the PF's routing ID.
                    for j in range(vfs):
                        f = 1 + j
                        vf = bdf(nbus + f // 256, (f % 256) >> 3, f & 7)
                        pci(vf, p_l2u + [n_dn, vf],
                            'vendor=0x15b3 device=0x101e class=0x020000 '
                            'bars=64:2M speed="32.0 GT/s PCIe" width=16 '
                            f'driver=mlx5_core iommu={group}:identity pf={nic}')
                        group += 1
                        vfns[-1].append(vf)
                nxt += 3 + (1 + extra[leaf]) * nb
                leaf += 1
            left -= min(L2_PER_L1, left)
        # An NVMe behind its own root port, off every GPU-NIC path.
        rp = bdf(base, 0x1f)
        pci(rp, [hb, rp], 'class=0x060400 vendor=0x8086 device=0x352b '
            'speed="16.0 GT/s PCIe" width=4 acs=0x0000')
        nvme = bdf(nxt)
        pci(nvme, [hb, rp, nvme], 'vendor=0x144d device=0xa80a '
            'class=0x010802 bars=64:16K speed="16.0 GT/s PCIe" width=4')
        nxt += 1
        assert nxt <= base + (0x80 if shared else 0x100), (sock, nxt)
    # Socket order interleaves NICs; CUDA and verbs list them in that order.
    # VFs after every PF, PF by PF (enabled after the PFs probed).
    rdma = [(nic, f"ens{i}np0") for i, nic in enumerate(nics)]
    rdma += [(vf, f"ens{p}v{j}") for p, vl in enumerate(vfns)
             for j, vf in enumerate(vl)]
    for i, (fn, nd) in enumerate(rdma):
        lines.append(f"ibdev mlx5_{i} pci={fn} uverbs=uverbs{i} fw=28.39.1002")
        lines.append(f'port mlx5_{i} 1 state=ACTIVE link=Ethernet '
                     f'rate="400 Gb/sec (4X NDR)" '
                     f'gids=v1:{nd},v2:{nd},v1:{nd},v2:{nd},zero')
    # No nvidia_peermem in the spec: ibv_reg_mr on GPU memory faults, as
    # on a real node (the peermem path is BLOCKED, consistently).
    cuda = ["driver_version = 12040", f"device_count = {n}", "mem = unmapped"]
    for i, g in enumerate(gpus):
        cuda += [f"gpu{i}.name = NVIDIA H100 80GB HBM3", f"gpu{i}.pci = {g}",
                 f"gpu{i}.total_mem = 85029158912"]
    verbs = [f"device_count = {len(rdma)}"]
    for i in range(len(rdma)):
        verbs += [f"dev{i}.name = mlx5_{i}", f"dev{i}.dmabuf_errno = 9"]
        if i >= nnic:
            verbs.append(f"dev{i}.vendor_part_id = 4126")
    return lines, cuda, verbs


USAGE = """usage: gen-sysroot.py N OUTDIR [NICS] [--vfs K]
  N      GPUs, 1..64 (the CUDA double's limit)
  NICS   physical NICs (PFs), N..64 (default N)
  --vfs K  SR-IOV: K virtual functions per PF, each an RDMA device;
         NICS x (1 + K) RDMA devices in all, at most 1024"""


def main():
    args, vfs = [], 0
    argv = sys.argv[1:]
    try:
        while argv:
            a = argv.pop(0)
            if a == "--vfs":
                vfs = int(argv.pop(0))
            elif a.startswith("--vfs="):
                vfs = int(a[len("--vfs="):])
            elif a.startswith("-") and not a.lstrip("-").isdigit():
                raise ValueError(a)
            else:
                args.append(a)
        if len(args) not in (2, 3):
            raise ValueError(args)
        n, out = int(args[0]), args[1]
        nnic = int(args[2]) if len(args) == 3 else n
    except (ValueError, IndexError):
        raise SystemExit(USAGE)
    if not 1 <= n <= 64 or not n <= nnic <= 64:
        raise SystemExit("gen-sysroot.py: N must be 1..64 (the CUDA double's "
                         "limit), NICS N..64\n" + USAGE)
    if vfs < 0:
        raise SystemExit(f"gen-sysroot.py: --vfs {vfs}: K must be >= 0\n" + USAGE)
    if nnic * (1 + vfs) > MAX_RDMA:
        raise SystemExit(f"gen-sysroot.py: --vfs {vfs} with {nnic} NICs gives "
                         f"{nnic * (1 + vfs)} RDMA devices; NICS x (1 + K) must be "
                         f"<= {MAX_RDMA}\n" + USAGE)
    spec, cuda, verbs = generate(n, nnic, vfs)
    os.makedirs(out, exist_ok=True)
    for name, body in (("sysroot.spec", spec), ("cuda.conf", cuda),
                       ("verbs.conf", verbs)):
        with open(os.path.join(out, name), "w") as f:
            f.write("\n".join(body) + "\n")
    subprocess.run([sys.executable, MKSYSROOT, os.path.join(out, "sysroot.spec"),
                    os.path.join(out, "sysroot")], check=True)


if __name__ == "__main__":
    main()
