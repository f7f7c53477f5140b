#!/bin/sh
# The real H200 node's capture (examples/h200/h200-capture.tar.gz) replayed
# here with --sysroot, no library named, none of this host's environment:
# every result of the node's own report (examples/h200/h200-report.json:
# gate, subject, status, code, reason, evidence) and its verdict.
#
# Expected differences, stated: an archive recorded before --capture kept
# the answers of /proc/kallsyms, the kernel log, the kernel config and
# NCCL's inputs (no gdrcheck/kallsyms, kernel-log, kconfig, libnccl, environ)
# cannot replay mech.peermem_api, host.kconfig and topo.nccl_config: those
# three must then say SKIP NOT_REPLAYED, and nothing else may differ. An
# archive that holds them must replay every result.
#
# Gates added after the recording (NEWER_GATES) have no result in the node's
# report: their replayed results are listed, each must be one per subject,
# and nothing else may differ. Re-record examples/h200 on the H200
# (tests/h200/record-examples.sh) and empty the list.
#
#   tests/check-h200-replay.sh   ends with "h200-replay: N passed, N failed"
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ex=examples/h200
tar xzf "$ex/h200-capture.tar.gz" -C "$work" || {
	echo "h200-replay: 0 passed, 1 failed"; exit 1; }
old=""
for f in kallsyms kernel-log kconfig libnccl environ; do
	[ -f "$work/gdrcheck/$f" ] ||
		old="host.kconfig mech.peermem_api topo.nccl_config"
done
rc=0
env -i PATH="$PATH" HOME=/nonexistent NO_COLOR=1 ./gdrcheck \
	--sysroot "$work" --json >"$work/replay.json" 2>"$work/replay.err" ||
	rc=$?
# None: the 2026-12-05 recording has every gate.
NEWER_GATES=""
if python3 - "$ex/h200-report.json" "$work/replay.json" "$rc" "$old" "$NEWER_GATES" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
rc, old = int(sys.argv[3]), sys.argv[4].split()
newer = sys.argv[5].split()
bad = []
for r in b["results"]:
    if r["gate"] in newer and not any(x["gate"] == r["gate"] for x in a["results"]):
        print(f"new since the recording: {r['gate']} {r['subject']}: "
              f"{r['status']} {r['reason']}")
b["results"] = [r for r in b["results"]
                if r["gate"] not in newer or
                any(x["gate"] == r["gate"] for x in a["results"])]
def row(r):
    ev = {k: v for k, v in r["evidence"].items() if k != "replayed_from"}
    return (r["status"], r["reason_code"], r["reason"], json.dumps(ev, sort_keys=True))
ra = {(r["gate"], r["subject"]): r for r in a["results"]}
rb = {(r["gate"], r["subject"]): r for r in b["results"]}
if list(ra) != list(rb):
    bad.append(f"results differ in number or order: {len(ra)} vs {len(rb)}")
for k in ra:
    if k not in rb:
        continue
    if k[0] in old:
        if (rb[k]["status"], rb[k]["reason_code"]) != ("SKIP", "NOT_REPLAYED"):
            bad.append(f"{k}: expected SKIP NOT_REPLAYED from an old archive, "
                       f"got {rb[k]['status']} {rb[k]['reason']}")
    elif row(ra[k]) != row(rb[k]):
        bad.append(f"{k}:\n  node:   {row(ra[k])}\n  replay: {row(rb[k])}")
if a["verdict"] != b["verdict"] or rc != a["verdict"]["exit_code"]:
    bad.append(f"verdict {b['verdict']} (exit {rc}), the node's {a['verdict']}")
for g in ("gpu.libcuda", "gpu.nvml", "nic.libibverbs"):
    r = [r for r in b["results"] if r["gate"] == g][0]
    if "replayed_from" not in r["evidence"]:
        bad.append(f"{g}: not replayed from the capture: {r['reason']}")
same = len(ra) - len(old)
print(f"{same} of {len(ra)} results as on the node"
      + (f"; expected to differ (old archive): {', '.join(old)}" if old else ""))
for x in bad:
    print("FAIL:", x)
sys.exit(1 if bad else 0)
PY
then
	echo "h200-replay: 1 passed, 0 failed"
else
	cat "$work/replay.err"
	echo "h200-replay: 0 passed, 1 failed"
	exit 1
fi
