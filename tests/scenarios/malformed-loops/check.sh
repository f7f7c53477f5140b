# A symlink loop is an unreadable entry (ELOOP), not a missing one. Known to
# fail until fixed: mlx5_0 behind a loop is reported as a software RDMA
# device without a PCI function, and its ports as absent ("no RDMA port to
# check"); the NIC's PCI function silently leaves the tree (topo.tree PASS).
python3 - "$WORK/out.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
bad = 0
for r in res:
    g, s, why = r["gate"], r["status"], r["reason"]
    if "software RDMA device" in why or why == "no RDMA port to check":
        print(f"{g} {s}: a symlink loop taken for an absent entry: {why}")
        bad = 1
    if g == "topo.tree" and s == "PASS":
        print(f"topo.tree PASS without the NIC behind the loop: {why}")
        bad = 1
sys.exit(bad)
PY
