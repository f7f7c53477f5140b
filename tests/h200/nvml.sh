#!/bin/sh
# On the real H200 node (the device machine): gdrcheck loads the node's own
# libnvidia-ml.so.1 in its worker and what gpu.nvml and topo.nvlink say is
# checked against nvidia-smi, which reads NVML independently (this script
# may shell out; gdrcheck never does). Run from the repository root with a
# built ./gdrcheck:
#   sh tests/h200/nvml.sh [OUTDIR]
# Asserts: gpu.nvml PASS with as many GPUs as `nvidia-smi -L`; per GPU a
# topo.nvlink PASS whose UUID is the one nvidia-smi lists for that PCI
# address, whose active-link count equals the links `nvidia-smi nvlink -s`
# shows with a speed, and whose C2C answer agrees with `nvidia-smi c2c -s`
# where that subcommand exists. Also: --libnvml with a missing file gives
# SKIP NVML_NOT_FOUND, not a crash. Ends with "h200-nvml: N passed, N failed".
set -u
out=${1:-${OUT:-/tmp}}
mkdir -p "$out"
bin=${GDRCHECK_BIN:-./gdrcheck}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

"$bin" --only gpu,topo.nvlink --json >"$out/nvml.json" 2>"$out/nvml.stderr"
echo "gdrcheck exit $?"
"$bin" --only gpu,topo.nvlink -v >"$out/nvml.txt" 2>&1
nvidia-smi -L >"$out/smi-L.txt" 2>&1
nvidia-smi --query-gpu=pci.bus_id,uuid --format=csv,noheader >"$out/smi-uuid.txt" 2>&1
nvidia-smi nvlink -s >"$out/smi-nvlink.txt" 2>&1
echo "nvidia-smi nvlink -s exit $?" >>"$out/smi-nvlink.txt"
nvidia-smi c2c -s >"$out/smi-c2c.txt" 2>&1
echo "nvidia-smi c2c -s exit $?" >>"$out/smi-c2c.txt"
grep -E "gpu\.nvml|topo\.nvlink" -A12 "$out/nvml.txt" | head -60

python3 - "$out" <<'PY' >"$out/checks.txt" 2>&1
import json, re, sys
out = sys.argv[1]
doc = json.load(open(f"{out}/nvml.json"))
res = doc["results"]
def one(gate):
    return [r for r in res if r["gate"] == gate]
smi_l = [l for l in open(f"{out}/smi-L.txt") if l.startswith("GPU ")]
uuid_of = {}
for l in open(f"{out}/smi-uuid.txt"):
    if "," in l:
        bus, uuid = [x.strip() for x in l.split(",", 1)]
        d, b, rest = bus.split(":")
        uuid_of[f"{int(d, 16):04x}:{b.lower()}:{rest.lower()}"] = uuid
g = one("gpu.nvml")
if g and g[0]["status"] == "PASS" and g[0]["evidence"].get("gpus") == len(smi_l):
    print(f"PASS gpu.nvml: {g[0]['reason']}")
else:
    print(f"FAIL gpu.nvml: {g and (g[0]['status'], g[0]['reason'])} vs {len(smi_l)} GPU(s) in nvidia-smi -L")
# Active links per GPU in `nvidia-smi nvlink -s`: "Link N: 26.562 GB/s"
# lines under "GPU i: ... (UUID: GPU-...)"; "<inactive>" otherwise.
active, cur = {}, None
for l in open(f"{out}/smi-nvlink.txt"):
    m = re.search(r"\(UUID: (GPU-[0-9a-f-]+)\)", l)
    if m:
        cur = m.group(1); active[cur] = 0
    elif cur and re.match(r"\s+Link \d+: [0-9.]+ GB/s", l):
        active[cur] += 1
c2c_text = open(f"{out}/smi-c2c.txt").read()
subj = {s["id"]: s for s in doc["subjects"]}
for r in one("topo.nvlink"):
    s = subj[r["subject"]]
    ev = r["evidence"]
    want = uuid_of.get(s["pci"])
    if r["status"] != "PASS":
        print(f"FAIL topo.nvlink {r['subject']}: {r['status']} {r['reason']}")
        continue
    print(("PASS" if ev.get("uuid") == want else "FAIL") +
          f" topo.nvlink {r['subject']} uuid {ev.get('uuid')} (nvidia-smi {want})")
    if want in active:
        print(("PASS" if ev.get("links_active") == active[want] else "FAIL") +
              f" topo.nvlink {r['subject']} active links {ev.get('links_active')}"
              f" (nvidia-smi nvlink -s {active[want]})")
    else:
        print(f"INFO topo.nvlink {r['subject']}: nvidia-smi nvlink -s lists no links "
              f"({ev.get('links_active')} active per NVML): {r['reason']}")
    if "exit 0" in c2c_text and want and want in c2c_text:
        print(f"INFO c2c: gdrcheck {ev.get('c2c')}; nvidia-smi c2c -s above")
    print(f"INFO {r['subject']}: {r['reason_code']}: {r['reason']}")
PY
cat "$out/checks.txt"
n=$(grep -c '^PASS' "$out/checks.txt"); pass=$((pass + n))
n=$(grep -c '^FAIL' "$out/checks.txt"); fail=$((fail + n))
[ -s "$out/nvml.stderr" ] && bad "gdrcheck wrote to stderr: $(head -c 300 "$out/nvml.stderr")"

# A missing library is a finding, not a crash.
"$bin" --only gpu.nvml --libnvml /nonexistent/libnvidia-ml.so.1 --json >"$out/absent.json" 2>&1
if python3 -c 'import json,sys; r=[x for x in json.load(open(sys.argv[1]))["results"] if x["gate"]=="gpu.nvml"][0]; sys.exit(not (r["status"]=="SKIP" and r["reason_code"]=="NVML_NOT_FOUND"))' "$out/absent.json"; then
	ok "gpu.nvml SKIP NVML_NOT_FOUND with --libnvml /nonexistent"
else
	bad "gpu.nvml with a missing --libnvml: $(head -c 300 "$out/absent.json")"
fi
echo "h200-nvml: $pass passed, $fail failed"
[ $fail -eq 0 ]
