#!/bin/sh
# --redact masks identities and nothing else: each scenario below is run
# with adversarial hostnames (a device name, a GPU id, a common word, one
# letter) with and without --redact; subject ids, gate ids, statuses and
# reason codes must be equal, no GPU UUID and no hostname token (of two
# letters or more) may be left, and device names (mlx5_0, GPU0) must survive in the reasons.
#
#   tests/check-redact.sh   ends with "redact: N passed, N failed"
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${GDRCHECK_BIN:-$top/gdrcheck}
doubles=${GDRCHECK_DOUBLES:-$top/tests/doubles}
work=$(mktemp -d "${TMPDIR:-/tmp}/check-redact.XXXXXX")
trap 'rm -rf "$work"' EXIT
pass=0
fail=0

for sc in reg-ok nvml-hgx-h100 hostile-strings; do
	dir=$top/tests/scenarios/$sc
	if ! python3 "$top/tests/scenarios/mksysroot.py" "$dir/sysroot.spec" \
		"$work/$sc" >/dev/null 2>&1; then
		echo "FAIL $sc: fixture build failed"
		fail=$((fail + 1))
		continue
	fi
	nvml=
	[ -f "$dir/nvml.conf" ] && nvml="--libnvml $doubles/libnvidia-ml-fake.so"
	for host in mlx5 GPU0 host x; do
		echo "$host" >"$work/$sc/proc/sys/kernel/hostname"
		for mode in plain redact; do
			flag=
			[ $mode = redact ] && flag=--redact
			# shellcheck disable=SC2086 # nvml and flag are word lists
			SOURCE_DATE_EPOCH=0 FAKE_CUDA_SCENARIO="$dir/cuda.conf" \
				FAKE_VERBS_SCENARIO="$dir/verbs.conf" \
				FAKE_NVML_SCENARIO="$dir/nvml.conf" \
				timeout -k 5 120 "$bin" --sysroot "$work/$sc" --json \
				--libcuda "$doubles/libcuda-fake.so" \
				--libibverbs "$doubles/libibverbs-fake.so" $nvml \
				$flag >"$work/$mode.json" 2>/dev/null
		done
		if out=$(UNFOLD_DIR="$top/tests" python3 - "$work/plain.json" "$work/redact.json" "$host" <<'PY'
import json, os, re, sys
sys.path.insert(0, os.environ["UNFOLD_DIR"])
import unfold  # folded pair results (schema 2.6), one per subject
a, b = (json.load(open(p)) for p in sys.argv[1:3])
host = sys.argv[3]
bad = []
key = lambda d: [(s["id"], s["kind"]) for s in d["subjects"]]
if key(a) != key(b):
    bad.append("subject ids differ")
ra = sorted((r["gate"], r["subject"], r["status"], r["reason_code"]) for r in unfold.results(a))
rb = sorted((r["gate"], r["subject"], r["status"], r["reason_code"]) for r in unfold.results(b))
if ra != rb:
    bad.append("gates, subjects, statuses or reason codes differ")
if a["verdict"] != b["verdict"]:
    bad.append("verdict differs")
text = json.dumps(b)
if re.search(r"(GPU|MIG)-[0-9A-Za-z]{8}-[0-9A-Za-z]{4}-", text):
    bad.append("a GPU UUID is left")
tok = re.compile(r"(?<![A-Za-z0-9_-])" + re.escape(host) + r"(?![A-Za-z0-9_-])")
# A one-letter name is left alone (it identifies nothing, and " x " joins
# pair lists): only the ids and codes are checked for it.
for r in unfold.results(b) if len(host) > 1 else []:
    for s in [r["reason"], r.get("remediation") or ""]:
        if tok.search(s.replace("<host>", "")):
            bad.append(f"hostname token left in {r['gate']}: {s[:60]}")
            break
# Device names inside reasons survive: same count of mlx5_N and GPUN.
dev = re.compile(r"\b(mlx5_\d+|GPU\d+)\b")
na = sum(len(dev.findall(r["reason"])) for r in unfold.results(a))
nb = sum(len(dev.findall(r["reason"])) for r in unfold.results(b))
if host not in ("mlx5", "GPU0") and na != nb:
    bad.append(f"device names in reasons {na} -> {nb}")
if host == "mlx5" and na != nb:
    bad.append(f"a host named mlx5 masked device names ({na} -> {nb})")
print("; ".join(bad[:3]))
sys.exit(1 if bad else 0)
PY
		); then
			echo "PASS $sc as host '$host'"
			pass=$((pass + 1))
		else
			echo "FAIL $sc as host '$host': $out"
			fail=$((fail + 1))
		fi
	done
done
echo "redact: $pass passed, $fail failed"
[ $fail -eq 0 ]
