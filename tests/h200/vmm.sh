#!/bin/sh
# On the real H200 (the `device` machine, kind nvidia-h200; facts in
# shared/facts/h200-node.md): the NCCL-style VMM buffer of issue 14 item 5
# against the real driver. gdrcheck allocates it as NCCL's ncclCuMemAlloc
# does (cuMemGetAllocationGranularity, cuMemCreate with
# gpuDirectRDMACapable, cuMemAddressReserve, cuMemMap, cuMemSetAccess) and
# gives it back (cuMemUnmap, cuMemRelease, cuMemAddressFree). Asserts:
#   - reg.plan PASSes and its evidence counts a VMM buffer on every GPU
#     whose GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED is 1 (gpu.gdr_attr's
#     rdma_with_cuda_vmm), with the driver's granularity (> 0, a power of 2)
#   - no stage timed out or crashed, nothing on stderr, exit 0/1 (a verdict)
#   - every reg.vmm_* / data.vmm_* result is PASS or says why not (the H200
#     of the facts has no RDMA device: no pair, so none; on a node with
#     NICs they are listed)
#   - the same run with --no-alloc allocates nothing (vmm_gpus absent)
# Run from the repository root with ./gdrcheck built; the node has no
# libpci.so.3: put a copy in a folder and name it in GDRCHECK_LIBPCI.
#   tests/h200/vmm.sh [OUTDIR]     prints "h200-vmm: N passed, N failed"
set -u
out=${1:-${TMPDIR:-/tmp}/h200-vmm}
mkdir -p "$out"
bin=${GDRCHECK_BIN:-./gdrcheck}
"$bin" --json >"$out/report.json" 2>"$out/stderr"
echo $? >"$out/rc"
"$bin" --json --no-alloc >"$out/noalloc.json" 2>>"$out/stderr"
echo $? >"$out/rc-noalloc"
"$bin" -v --no-color >"$out/report-verbose.txt" 2>>"$out/stderr" || true
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
npass = nfail = 0
def check(ok, what):
    global npass, nfail
    print(("PASS " if ok else "FAIL ") + what)
    if ok:
        npass += 1
    else:
        nfail += 1
rc = int(open(os.path.join(out, "rc")).read())
check(rc in (0, 1), f"exit status {rc} is a verdict (0 or 1)")
err = open(os.path.join(out, "stderr"), errors="replace").read()
check(not err, "nothing on stderr" + (f": {err[:200]}" if err else ""))
doc = json.load(open(os.path.join(out, "report.json")))
res = doc["results"]
bad = [w for w in doc.get("workers", []) if w.get("state") not in ("done", "skipped")]
check(not bad, f"every worker stage finished ({bad[:2]})")
gdr = [r for r in res if r["gate"] == "gpu.gdr_attr"]
want = sum(1 for r in gdr if r["evidence"].get("rdma_with_cuda_vmm") == 1)
check(len(gdr) > 0, f"{len(gdr)} GPU(s), {want} with RDMA on CUDA VMM")
plan = [r for r in res if r["gate"] == "reg.plan"]
check(len(plan) == 1 and plan[0]["status"] == "PASS",
      "reg.plan PASS: " + (plan[0]["reason"] if plan else "absent"))
ev = plan[0]["evidence"] if plan else {}
check(ev.get("vmm_gpus") == want,
      f"VMM buffers on {ev.get('vmm_gpus')} GPU(s), want {want}"
      + (f" (first missing: {ev.get('vmm_missing_why')} "
         f"{ev.get('vmm_failed_call', '')})" if "vmm_missing_why" in ev else ""))
g = ev.get("vmm_granularity", 0)
check(not want or (g > 0 and g & (g - 1) == 0),
      f"granularity {g} from cuMemGetAllocationGranularity")
vmm = [r for r in res if r["gate"].split(".")[1].startswith("vmm_")]
for r in vmm:
    print(f"     {r['status']:7} {r['gate']:16} {r['subject']}: {r['reason']}")
check(all(r["status"] == "PASS" or r["reason"] for r in vmm),
      f"{len(vmm)} VMM pair result(s), each PASS or with its reason")
na = json.load(open(os.path.join(out, "noalloc.json")))
nap = [r for r in na["results"] if r["gate"] == "reg.plan"]
check(all("vmm_gpus" not in r["evidence"] for r in nap),
      "--no-alloc: no VMM buffer")
print(f"h200-vmm: {npass} passed, {nfail} failed")
sys.exit(1 if nfail else 0)
PY
