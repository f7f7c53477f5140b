#!/bin/sh
# Seed corpora for the libFuzzer harnesses, taken from the scenario fixtures.
#
#   tests/fuzz/make-corpus.sh OUTDIR
#
# Builds every tests/scenarios/*/sysroot.spec into a temporary sysroot with
# mksysroot.py (as tests/run-scenarios.sh does) and copies what the parsers
# read into OUTDIR/<harness>/, one file per distinct content (named by its
# SHA-1, like libFuzzer's own corpus entries):
#   fuzz_parse    selector byte + parameter byte + a procfs/sysfs text
#                 (osrelease, limits, status, nvidia version, port state,
#                 resource, GIDs, cgroup)
#   fuzz_pcie     every PCI `config` file (4096/256/64 bytes, truncated,
#                 looping, garbage) and the NCCL_NET_GDR_LEVEL values
#   fuzz_sysroot  small sysfs/procfs files, and the sysroot's symlink
#                 targets joined by NULs (the harness's link-target format)
# Nothing is committed: the corpus follows the fixtures. One Python process
# does the copying (a process per file is minutes on a slow VM).
set -eu

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
exec python3 - "$top" "$1" <<'PY'
import concurrent.futures
import hashlib
import os
import subprocess
import sys
import tempfile

top, out = sys.argv[1], sys.argv[2]
scen = os.path.join(top, "tests", "scenarios")
harnesses = ("fuzz_parse", "fuzz_pcie", "fuzz_sysroot", "fuzz_render",
             "fuzz_vendor")
for h in harnesses:
    os.makedirs(os.path.join(out, h), exist_ok=True)

# Selectors of fuzz_parse.c.
(SEL_KERNEL_RELEASE, SEL_MEMLOCK, SEL_STATUS, SEL_NV_SMALL, SEL_NV_LARGE,
 SEL_NUM_NAME, SEL_RESOURCE_LINE, SEL_NTH_MEM_BAR, SEL_GID,
 SEL_CGROUP, SEL_LINK_SPEED, SEL_LINK_WIDTH) = range(12)


def put(harness, data):
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out, harness, name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def parse(sel, param, path):
    put("fuzz_parse", bytes([sel, param]) + read(path))


names = sorted(d for d in os.listdir(scen)
               if os.path.isfile(os.path.join(scen, d, "sysroot.spec")))


def build(tmp, name):
    return subprocess.run([sys.executable, os.path.join(scen, "mksysroot.py"),
                           os.path.join(scen, name, "sysroot.spec"),
                           os.path.join(tmp, name)],
                          capture_output=True, text=True)


with tempfile.TemporaryDirectory(prefix="gdrcheck-corpus.") as tmp:
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        built = list(pool.map(lambda n: build(tmp, n), names))
    for name, r in zip(names, built):
        if r.returncode:
            sys.exit(f"make-corpus: {name}: fixture build failed\n"
                     f"{r.stdout}{r.stderr}")
        sr = os.path.join(tmp, name)

        def p(rel):
            full = os.path.join(sr, rel)
            return full if os.path.isfile(full) else None

        # --- fuzz_parse: procfs --------------------------------------------
        for rel, sel, params in (
                ("proc/sys/kernel/osrelease", SEL_KERNEL_RELEASE, (0,)),
                ("proc/self/limits", SEL_MEMLOCK, (0,)),
                ("proc/self/status", SEL_STATUS, (0,)),
                # 10 bytes: "580.159.04" does not fit; 11: it just fits.
                ("proc/driver/nvidia/version", SEL_NV_SMALL, (10, 11)),
                ("proc/driver/nvidia/version", SEL_NV_LARGE, (0,)),
                ("proc/1/cgroup", SEL_CGROUP, (0,))):
            if p(rel):
                for param in params:
                    parse(sel, param, p(rel))

        links = []
        for d, dirs, files in os.walk(sr):
            for e in dirs + files:
                full = os.path.join(d, e)
                if os.path.islink(full):
                    links.append(full)
            for e in files:
                full = os.path.join(d, e)
                if os.path.islink(full) or not os.path.isfile(full):
                    continue
                rel = os.path.relpath(full, sr)
                # --- fuzz_parse: sysfs -------------------------------------
                if e in ("state", "phys_state"):
                    parse(SEL_NUM_NAME, 32, full)  # nic.c's 32-byte names
                    parse(SEL_NUM_NAME, 6, full)
                elif e == "resource":
                    parse(SEL_NTH_MEM_BAR, 1, full)  # BAR1 (platform.c)
                    parse(SEL_NTH_MEM_BAR, 0, full)
                    parse(SEL_RESOURCE_LINE, 0, full)
                    parse(SEL_RESOURCE_LINE, 2, full)
                elif os.path.basename(d) == "gids":
                    parse(SEL_GID, 0, full)
                elif e in ("current_link_speed", "max_link_speed"):
                    parse(SEL_LINK_SPEED, 0, full)
                elif e in ("current_link_width", "max_link_width"):
                    parse(SEL_LINK_WIDTH, 0, full)
                # --- fuzz_pcie ---------------------------------------------
                if e == "config":
                    put("fuzz_pcie", read(full))
                # --- fuzz_sysroot: small attribute and proc files ----------
                elif os.path.getsize(full) < 4096 and \
                        rel.split(os.sep)[0] in ("sys", "proc"):
                    put("fuzz_sysroot", read(full))
        # --- fuzz_sysroot: link targets, alone and three + a path --------
        links.sort()
        targets = [os.fsencode(os.readlink(l)) for l in links]
        for t in targets:
            put("fuzz_sysroot", t)
        if targets:
            put("fuzz_sysroot", b"\0".join(targets[:3] + [b""] * (3 - len(targets[:3])))
                + b"\0/sys/bus/pci/devices/l0/../l1")

# NCCL_NET_GDR_LEVEL values of the fixtures, and every documented form.
for name in names:
    env = os.path.join(scen, name, "env")
    if os.path.isfile(env):
        for line in read(env).splitlines():
            if line.startswith(b"NCCL_NET_GDR_LEVEL="):
                put("fuzz_pcie", line.split(b"=", 1)[1])
for v in (b"LOC", b"PIX", b"PXB", b"PHB", b"SYS", b"0", b"5"):
    put("fuzz_pcie", v)

# fuzz_render: hostname, GPU id/label, NIC id/label, reason, remedy,
# evidence, summary; the fixtures' hostnames and hostile names.
put("fuzz_render", b"\0".join([b"gpu-node-07", b"GPU0", b"NVIDIA H100", b"mlx5_0",
                               b"mlx5_0 (0000:06:00.0)", b"port is DOWN",
                               b"check the cable", b"4: ACTIVE", b"BLOCKED"]))
put("fuzz_render", b"\0".join([b"n\x1b]0;x\x07<&>\"'\xff", b"GPU\xc2\x9b",
                               b"\xef\xbf\xbf", b"dup\x01", b"dup\\x01",
                               b"a\nb\\\"c", b"]]>&amp;", b"\x7f\xc0\xaf",
                               b"cut \xe2\x82"]))

# fuzz_vendor: the vendor answers of the captures the project holds.
import glob, tarfile
for cap in sorted(glob.glob(os.path.join(top, "examples", "*", "*.tar.gz"))):
    try:
        with tarfile.open(cap) as t:
            m = t.extractfile("gdrcheck/vendor-facts.json")
            if m:
                put("fuzz_vendor", m.read())
    except (KeyError, tarfile.TarError, OSError):
        pass
put("fuzz_vendor", b'{"format": "gdrcheck-vendor-facts", "version": 1}')

# Inputs that once crashed a harness stay seeds: tests/fuzz/regressions/HARNESS-*.
reg = os.path.join(top, "tests", "fuzz", "regressions")
for f in sorted(os.listdir(reg)) if os.path.isdir(reg) else []:
    h = f.split("-", 1)[0]
    if h in harnesses:
        with open(os.path.join(reg, f), "rb") as src, \
             open(os.path.join(out, h, "regression-" + f), "wb") as dst:
            dst.write(src.read())

for h in harnesses:
    print(f"make-corpus: {h}: {len(os.listdir(os.path.join(out, h)))} seeds "
          f"from {len(names)} scenarios")
PY
