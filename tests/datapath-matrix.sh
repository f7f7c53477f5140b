#!/bin/sh
# Datapath matrix: every way the libibverbs double can fake a transfer
# (tests/doubles/fake_verbs.c: completions that say success while the data
# never lands, lands in part, spills over, comes back stale or corrupt)
# x where the faulty NIC sits in the enumeration (the only one, first of
# two, last of two) x one or two GPUs x which paths transfer (mem = host:
# peermem and DMA-BUF; mem = unmapped: DMA-BUF only). One GPU with one path
# is where a NIC finds exactly the buffer the NIC before it verified. The
# fixtures are those of the data-silent-* scenarios (one GPU and one NIC;
# one or two GPUs and two NICs; nvidia_peermem loaded). Every case asserts:
#   - each data.peermem / data.dmabuf result of the faulty NIC is BLOCKED
#     with a DATA_* reason code (never PASS, whatever ran before it);
#   - each of the healthy NIC's is PASS TRANSFER_VERIFIED;
#   - the exit status is 1 when the faulty NIC is the only one, else 0;
#   - nothing on stderr, the report is schema-valid JSON, and the doubles'
#     resource ledgers balance.
#
#   tests/datapath-matrix.sh [PATTERN]   (grep -E on case ids)
# Ends with "datapath-matrix: N passed, N failed".
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
doubles="$top/tests/doubles"
scen="$top/tests/scenarios"
bin=${GDRCHECK_BIN:-$top/gdrcheck}
pattern=${1:-.}
unset NCCL_NET_GDR_LEVEL NCCL_NET_GDR_READ GDRCHECK_LIBCUDA GDRCHECK_LIBIBVERBS

work=$(mktemp -d "${TMPDIR:-/tmp}/datapath-matrix.XXXXXX")
trap 'rm -rf "$work"' EXIT
pass=0
fail=0

for f in "$bin" "$doubles/libcuda-fake.so" "$doubles/libibverbs-fake.so"; do
	if [ ! -e "$f" ]; then
		echo "datapath-matrix: $f missing (make gdrcheck doubles)"
		echo "datapath-matrix: 0 passed, 1 failed"
		exit 1
	fi
done
for fx in data-silent-drop data-silent-last-dmabuf data-silent-last; do
	if ! python3 "$scen/mksysroot.py" "$scen/$fx/sysroot.spec" \
		"$work/$fx" >"$work/$fx.log" 2>&1; then
		cat "$work/$fx.log"
		echo "datapath-matrix: 0 passed, 1 failed"
		exit 1
	fi
done

# cuda.conf: one or two GPUs, mem = host or unmapped.
cuda_conf() {
	echo "driver_version = 12080"
	echo "device_count = $1"
	echo "gpu0.pci = 0000:03:00.0"
	[ "$1" = 2 ] && echo "gpu1.pci = 0000:05:00.0"
	echo "mem = $2"
}

# verbs.conf: NIC $2 of $1 gets fault "$3".
verbs_conf() {
	echo "device_count = $1"
	i=0
	while [ $i -lt "$1" ]; do
		echo "dev$i.name = mlx5_$i"
		echo "dev$i.dmabuf_errno = 9"
		[ $i = "$2" ] && echo "dev$i.$3"
		i=$((i + 1))
	done
}

run_case() {
	id=$1 nics=$2 bad=$3 fault=$4 mem=$5 gpus=$6
	d="$work/cases/$id"
	mkdir -p "$d/ledger"
	cuda_conf "$gpus" "$mem" >"$d/cuda.conf"
	want_rc=0
	if [ "$nics" = 1 ]; then
		root="$work/data-silent-drop"
		want_rc=1
	elif [ "$gpus" = 1 ]; then
		root="$work/data-silent-last-dmabuf"
	else
		root="$work/data-silent-last"
	fi
	verbs_conf "$nics" "$bad" "$fault" >"$d/verbs.conf"
	env SOURCE_DATE_EPOCH=0 NO_COLOR=1 \
		FAKE_CUDA_SCENARIO="$d/cuda.conf" FAKE_VERBS_SCENARIO="$d/verbs.conf" \
		FAKE_LEDGER_DIR="$d/ledger" \
		timeout -k 5 60 "$bin" --sysroot "$root" \
		--libcuda "$doubles/libcuda-fake.so" \
		--libibverbs "$doubles/libibverbs-fake.so" --json \
		>"$d/out.json" 2>"$d/stderr"
	rc=$?
	why=""
	[ "$rc" = "$want_rc" ] || why="exit $rc, expected $want_rc"
	[ -s "$d/stderr" ] && why="$why; stderr: $(head -c 200 "$d/stderr")"
	if ! python3 "$top/tests/validate-json.py" \
		"$top/report/gdrcheck-report.schema.json" "$d/out.json" \
		>"$d/schema.log" 2>&1; then
		why="$why; schema: $(head -c 200 "$d/schema.log")"
	fi
	for l in "$d"/ledger/*; do
		[ -f "$l" ] || continue
		if awk '$2 != $3 { bad = 1 } END { exit !bad }' "$l"; then
			why="$why; unbalanced $(basename "$l"): $(tr '\n' ' ' <"$l")"
		fi
	done
	res=$(UNFOLD_DIR="$top/tests" python3 - "$d/out.json" "mlx5_$bad" "$mem" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["UNFOLD_DIR"])
import unfold  # folded pair results (schema 2.6), one per subject
doc = json.load(open(sys.argv[1]))
bad, mem = sys.argv[2], sys.argv[3]
problems, seen = [], {}
for r in unfold.results(doc):
    if r["gate"] not in ("data.peermem", "data.dmabuf"):
        continue
    nic = r["subject"].split("~")[1]
    seen[(r["gate"], nic)] = seen.get((r["gate"], nic), 0) + 1
    if r["gate"] == "data.peermem" and mem == "unmapped":
        if r["status"] == "PASS":
            problems.append("%s %s PASS without a peermem MR" % (r["gate"], r["subject"]))
        continue
    if nic == bad:
        if r["status"] != "BLOCKED" or not r["reason_code"].startswith("DATA_"):
            problems.append("%s %s: %s %s (%s)" % (r["gate"], r["subject"],
                            r["status"], r["reason_code"], r["reason"]))
    elif r["status"] != "PASS" or r["reason_code"] != "TRANSFER_VERIFIED":
        problems.append("%s %s (healthy): %s %s (%s)" % (r["gate"], r["subject"],
                        r["status"], r["reason_code"], r["reason"]))
if not any(n == bad for (_, n) in seen):
    problems.append("no data result for %s" % bad)
print("; ".join(problems))
PY
)
	[ -n "$res" ] && why="$why; $res"
	if [ -z "$why" ]; then
		echo "PASS $id"
		pass=$((pass + 1))
	else
		echo "FAIL $id:${why#;}"
		fail=$((fail + 1))
	fi
}

for fault in "silent_drop = 1" "silent_drop = 2" "silent_drop = 3" \
	"read_stale = 1" "wc_short = 4096" "wc_overrun = 64" "wc_corrupt = 1"; do
	for pos in only first.1gpu last.1gpu first.2gpu last.2gpu; do
		for mem in host unmapped; do
			case $pos in
			only) nics=1 bad=0 gpus=1 ;;
			first.*) nics=2 bad=0 gpus=${pos#first.} ;;
			last.*) nics=2 bad=1 gpus=${pos#last.} ;;
			esac
			gpus=${gpus%gpu}
			id="$(echo "$fault" | tr -d ' ').$pos.$mem"
			echo "$id" | grep -Eq -- "$pattern" || continue
			run_case "$id" "$nics" "$bad" "$fault" "$mem" "$gpus"
		done
	done
done
echo "datapath-matrix: $pass passed, $fail failed"
[ "$fail" = 0 ]
