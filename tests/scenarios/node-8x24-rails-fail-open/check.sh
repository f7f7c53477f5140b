# A node whose first sixteen of 24 RDMA devices do not open (EIO): every
# rail of GPU0-3 as built. NCCL skips such devices (ncclIbInit), so the
# node is BLOCKED by lost rails (topo.rails RAIL_DEVICE_FAILED on GPU0-3,
# GPU4-7 as built), nic.uverbs blames the device, not permissions, and
# the devices that cannot open spend none of the full bandwidth bursts:
# every verified pair on a device that opens bursts in full (64 WRITEs of
# --reg-size 64K), as the serial loop did.
# args: --timeout 120 --deadline 300 for ASan on two busy cores.
set -eu
python3 - "$WORK/out.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
res = doc["results"]
def of(gate):
    return [r for r in res if r["gate"] == gate]
bad = []
rails = {}
for r in of("topo.rails"):
    rails.setdefault(r["subject"], set()).add((r["status"], r["reason_code"]))
for g in range(8):
    want = {("BLOCKED", "RAIL_DEVICE_FAILED")} if g < 4 else {("PASS", "RAILS_AS_BUILT")}
    if rails.get(f"GPU{g}") != want:
        bad.append(f"topo.rails GPU{g}: {rails.get(f'GPU{g}')}, want {want}")
lost = [r for r in of("topo.rails") if r["reason_code"] == "RAIL_DEVICE_FAILED"]
for r in lost:
    if r["evidence"].get("open_errno") != 5 or "ibv_open_device: Input/output error" not in r["reason"]:
        bad.append("RAIL_DEVICE_FAILED without the errno: " + r["reason"])
uv = {r["subject"]: r["reason_code"] for r in of("nic.uverbs")}
for n in range(24):
    want = "UVERBS_OPEN_FAILED" if n < 16 else "UVERBS_OK"
    if uv.get(f"mlx5_{n}") != want:
        bad.append(f"nic.uverbs mlx5_{n}: {uv.get(f'mlx5_{n}')}, want {want}")
bursts = [r["evidence"].get("bandwidth_writes") for r in of("data.dmabuf")
          if r["reason_code"] == "TRANSFER_VERIFIED"]
if not bursts or any(b != 64 for b in bursts):
    bad.append(f"verified data.dmabuf bursts {bursts}: every one should be 64")
if doc["verdict"]["exit_code"] != 1 if "verdict" in doc and "exit_code" in doc["verdict"] else False:
    bad.append("exit code")
for b in bad:
    print("FAIL", b)
print(f"{len(lost)} lost rails, {len(bursts)} verified pairs with full bursts")
sys.exit(1 if bad else 0)
PY
