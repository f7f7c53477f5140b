#!/bin/sh
# The ThreadSanitizer pass (make tsan-check builds DIR first, out of tree).
# The worker runs threads in two places: the per-GPU set-up (contexts and
# allocations) and the pair loop, a thread per RDMA device sharing the GPU
# buffers. This runs DIR's TSan gdrcheck on scenarios with two GPUs or
# two RDMA devices (golden outputs as in tests/run-scenarios.sh) and on a
# synthetic 8 GPU x 8 NIC node, healthy and with one rail's data corrupted,
# whose results must be the plain build's. A race on memory fails the pass.
#
#   tests/tsan-check.sh DIR      ends with "tsan: N passed, N failed"
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
dir=${1:-build/tsan}
case $dir in /*) ;; *) dir="$top/$dir" ;; esac
tsan_bin="$dir/gdrcheck"
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
pass=0
fail=0

[ -x "$tsan_bin" ] || { echo "tsan: $tsan_bin missing"; echo "tsan: 0 passed, 1 failed"; exit 1; }

# exitcode=0: a race is found in the logs below, not by a changed exit
# status the goldens would blame on something else. handle_segv=0: the
# crash scenarios' worker must die of its signal, as with a real libcuda.
export TSAN_OPTIONS="halt_on_error=0 exitcode=0 handle_segv=0 log_path=$log/tsan"

# Scenarios whose worker starts more than one thread: every one with
# TSAN_ALL=1 (~7 min on 2 cores); by default those that reach each threaded
# path once: node-sized rails healthy, broken and lost, SR-IOV, per-device
# data faults (first, last, stale, duplicate names), a GPU that hangs in
# set-up, dma-buf and peermem pairs, EFA, PXN, an old libibverbs.
threaded="node-8x12-healthy node-8x12-broken-rail node-8x12-lost-rail
nccl-healthy-8gpu nccl-shape-sriov data-silent-first data-silent-last
data-read-stale data-dup-name-silent-first cuda-hang-one-gpu healthy-dmabuf
efa-p5 nccl-pxn-hgx old-verbs"
if [ "${TSAN_ALL:-0}" = 1 ]; then
	threaded=""
	for d in tests/scenarios/*/; do
		v=$(sed -nE 's/^device_count *= *([0-9]+).*/\1/p' "$d/verbs.conf" 2>/dev/null | head -n 1)
		c=$(sed -nE 's/^device_count *= *([0-9]+).*/\1/p' "$d/cuda.conf" 2>/dev/null | head -n 1)
		if [ "${v:-0}" -ge 2 ] || [ "${c:-0}" -ge 2 ]; then
			threaded="$threaded $(basename "$d")"
		fi
	done
fi
# shellcheck disable=SC2086 # one argument per scenario
GDRCHECK_BIN="$tsan_bin" tests/run-scenarios.sh $threaded >"$log/scenarios" 2>&1
line=$(grep -E '^scenarios: [0-9]+ passed' "$log/scenarios" | tail -n 1)
p=$(echo "$line" | sed -nE 's/^scenarios: ([0-9]+) passed.*/\1/p')
f=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
p=${p:-0} f=${f:-1}
echo "scenarios under TSan: $p passed, $f failed"
grep -E '^FAIL' "$log/scenarios" | head -n 20
pass=$((pass + p)) fail=$((fail + f))

# node NAME EXTRA: the 8x8 node (with EXTRA lines in its verbs.conf) under
# both builds; the (id, subject, status) of every result must agree.
node() {
	name=$1
	extra=$2
	n="$log/$name"
	python3 bench/gen-sysroot.py 8 "$n" >/dev/null || { echo "FAIL $name: gen-sysroot"; fail=$((fail + 1)); return; }
	printf '%b' "$extra" >>"$n/verbs.conf"
	for b in plain tsan; do
		bin=./gdrcheck
		[ $b = tsan ] && bin=$tsan_bin
		env FAKE_CUDA_SCENARIO="$n/cuda.conf" FAKE_VERBS_SCENARIO="$n/verbs.conf" \
			"$bin" --sysroot "$n/sysroot" --json --timeout 120 \
			--libcuda tests/doubles/libcuda-fake.so \
			--libibverbs tests/doubles/libibverbs-fake.so \
			>"$n/$b.json" 2>"$n/$b.err"
		echo $? >"$n/$b.rc"
	done
	if python3 - "$n" <<'PY'
import json, sys
n = sys.argv[1]
def facts(b):
    doc = json.load(open(f"{n}/{b}.json"))
    return sorted((r["gate"], json.dumps(r.get("subject")), r["status"],
                   str(r.get("reason_code"))) for r in doc["results"])
plain, tsan = facts("plain"), facts("tsan")
rc = [open(f"{n}/{b}.rc").read().strip() for b in ("plain", "tsan")]
if plain != tsan or rc[0] != rc[1]:
    print(f"  exit {rc[0]} (plain) vs {rc[1]} (tsan)")
    for x in sorted(set(plain) ^ set(tsan))[:10]:
        print("  ", "plain" if x in plain else "tsan ", x)
    sys.exit(1)
PY
	then
		echo "PASS node $name (exit $(cat "$n/tsan.rc"))"
		pass=$((pass + 1))
	else
		echo "FAIL node $name: the TSan build's results differ"
		fail=$((fail + 1))
	fi
}
node 8x8 ""
node 8x8-corrupt-rail "\ndev3.wc_corrupt = 1\n"

# Races on memory fail. Races on a file descriptor are counted, not
# failed: the sysroot opens files with the raw openat2 syscall, which TSan
# does not see, so a number the kernel hands out again reads to it as one
# descriptor used by two threads (and the libcuda double's fd ledger
# fstat()s numbers the caller's threads close).
cat "$log"/tsan.* 2>/dev/null | python3 -c '
import re, sys
text = sys.stdin.read()
blocks = [b for b in re.split(r"={18}\n", text) if "WARNING: ThreadSanitizer" in b]
fd = [b for b in blocks if "Location is file descriptor" in b]
mem = [b for b in blocks if b not in fd]
print(f"{len(mem)} {len(fd)}")
for b in mem[:3]:
    print(b[:2500], file=sys.stderr)
' >"$log/races" 2>"$log/race-reports"
read -r races fd_races <"$log/races"
if [ "${races:-1}" -gt 0 ]; then
	echo "FAIL ${races:-?} ThreadSanitizer race report(s) on memory:"
	cat "$log/race-reports"
	fail=$((fail + ${races:-1}))
else
	echo "PASS no ThreadSanitizer report on memory (${fd_races:-0} on file descriptors, not failed: see the comment above)"
	pass=$((pass + 1))
fi
echo "tsan: $pass passed, $fail failed"
[ $fail -eq 0 ]
