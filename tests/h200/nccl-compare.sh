#!/bin/sh
# Compare gdrcheck's NCCL model with the node's own NCCL (PyTorch's wheel),
# on the real H200 (device tool; facts: /work/shared/facts/h200-nccl.md).
#
#   tests/h200/nccl-compare.sh OUTDIR
#
# 1. A one-rank all-reduce through PyTorch with NCCL_DEBUG=INFO and
#    NCCL_TOPO_DUMP_FILE: NCCL's version, its NET/IB and GDR lines, its
#    topology (OUTDIR/nccl.log, OUTDIR/nccl-topo.xml).
# 2. gdrcheck --json with --libnccl pointing at the same libnccl.so.2
#    (OUTDIR/gdrcheck.json).
# 3. The comparison (OUTDIR/compare.txt): the version both saw, whether NCCL
#    found an IB device (gdrcheck: rails per GPU), and NCCL's GDR decision
#    ("GPU Direct RDMA Enabled/Disabled") against gdrcheck's nccl object.
# Exit 0 when they agree, 1 when they differ, 2 when a step could not run.
set -u
out=${1:?usage: nccl-compare.sh OUTDIR}
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null) ||
	{ echo "no PyTorch NCCL wheel (nvidia.nccl)"; exit 2; }
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH,ENV \
NCCL_TOPO_DUMP_FILE="$out/nccl-topo.xml" MASTER_ADDR=127.0.0.1 MASTER_PORT=29511 \
	python3 - >"$out/nccl.log" 2>&1 <<'PY' || { echo "PyTorch all-reduce failed"; exit 2; }
import torch, torch.distributed as dist
dist.init_process_group("nccl", rank=0, world_size=1)
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print("NCCL", ".".join(map(str, torch.cuda.nccl.version())))
dist.destroy_process_group()
PY
"$top/gdrcheck" --json --libnccl "$lib" >"$out/gdrcheck.json"
rc=$?
[ $rc -le 3 ] || { echo "gdrcheck failed ($rc)"; exit 2; }
python3 - "$out/nccl.log" "$out/gdrcheck.json" >"$out/compare.txt" <<'PY'
import json, re, sys
log = open(sys.argv[1], errors="replace").read()
rep = json.load(open(sys.argv[2]))
m = re.search(r"NCCL version (\d+\.\d+\.\d+)", log)
nccl_ver = m.group(1) if m else None
ib = "NET/IB : No device found" not in log and re.search(r"NET/IB ?: ?Using", log) is not None
gdr_on = re.search(r"GPU Direct RDMA Enabled", log) is not None
n = rep["nccl"]
rails = sum(len(g["rails"]) for g in n["gpus"])
gdr_model = any(r["gdr_recv"] for g in n["gpus"] for r in g["rails"])
rows = [("version", nccl_ver, n["version"]),
        ("uses an IB device", ib, rails > 0),
        ("GPU Direct RDMA", gdr_on, gdr_model)]
bad = 0
for what, real, model in rows:
    same = real == model
    bad += not same
    print(f"{'ok  ' if same else 'DIFF'} {what}: NCCL {real}, gdrcheck {model}")
print(f"gdrcheck modelled {n['version']} from {n['version_source']}")
sys.exit(1 if bad else 0)
PY
rc=$?
cat "$out/compare.txt"
exit $rc
