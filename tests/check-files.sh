#!/bin/sh
# The file rule, for every file gdrcheck reads whole or streams: a FIFO, a
# directory, an endless device (/dev/zero's numbers) and an unreadable file
# at each such path never block the run, never crash it, and the report is
# complete (exit 0, 1 or 3; the JSON parses). The paths: /proc/kallsyms,
# /proc/config.gz, /boot/config-RELEASE, /etc/nccl.conf, /etc/ld.so.cache,
# a capture's gdrcheck/vendor-facts.json, gdrcheck/libnccl and
# gdrcheck/kallsyms, --libnccl; and a run with 4 to 6 file descriptors.
#
#   tests/check-files.sh   ends with "files: N passed, N failed"
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${GDRCHECK_BIN:-$top/gdrcheck}
doubles=${GDRCHECK_DOUBLES:-$top/tests/doubles}
work=$(mktemp -d "${TMPDIR:-/tmp}/check-files.XXXXXX")
trap 'rm -rf "$work"' EXIT
pass=0
fail=0
sc=$top/tests/scenarios/reg-ok

if ! python3 "$top/tests/scenarios/mksysroot.py" "$sc/sysroot.spec" \
	"$work/base" >/dev/null; then
	echo "files: 0 passed, 1 failed"
	exit 1
fi
rel=$(cat "$work/base/proc/sys/kernel/osrelease")

# plant KIND PATH: put a hostile KIND at PATH (below the sysroot).
plant() {
	rm -rf "$2"
	mkdir -p "$(dirname "$2")"
	case $1 in
	fifo) mkfifo "$2" ;;
	dir) mkdir "$2" ;;
	zero) mknod "$2" c 1 5 2>/dev/null || mkfifo "$2" ;;
	unreadable) echo secret >"$2" && chmod 000 "$2" ;;
	esac
}

# one LABEL ARGS...: the run ends in time with a complete JSON report.
one() {
	label=$1
	shift
	SOURCE_DATE_EPOCH=0 NO_COLOR=1 FAKE_CUDA_SCENARIO=$sc/cuda.conf \
		FAKE_VERBS_SCENARIO=$sc/verbs.conf \
		timeout -k 5 40 "$bin" --deadline 20 --json "$@" \
		>"$work/out" 2>"$work/err"
	rc=$?
	if [ $rc -ge 124 ]; then
		echo "FAIL $label: hung or killed (exit $rc)"
		fail=$((fail + 1))
	elif [ $rc -ne 0 ] && [ $rc -ne 1 ] && [ $rc -ne 3 ]; then
		echo "FAIL $label: exit $rc"
		head -n 3 "$work/err"
		fail=$((fail + 1))
	elif ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' \
		"$work/out" 2>/dev/null; then
		echo "FAIL $label: no complete JSON report"
		fail=$((fail + 1))
	else
		echo "PASS $label: exit $rc"
		pass=$((pass + 1))
	fi
}

for kind in fifo dir zero unreadable; do
	for p in /proc/kallsyms /proc/config.gz "/boot/config-$rel" \
		/etc/nccl.conf /etc/ld.so.cache; do
		rm -rf "$work/s"
		cp -a "$work/base" "$work/s"
		plant $kind "$work/s$p"
		one "$kind at $p" --sysroot "$work/s" \
			--libcuda "$doubles/libcuda-fake.so" \
			--libibverbs "$doubles/libibverbs-fake.so"
	done
	# A capture's members: the replay reads them, no library named.
	for m in vendor-facts.json libnccl kallsyms; do
		rm -rf "$work/s"
		cp -a "$work/base" "$work/s"
		plant $kind "$work/s/gdrcheck/$m"
		one "$kind at capture member gdrcheck/$m" --sysroot "$work/s"
	done
	rm -rf "$work/s"
	cp -a "$work/base" "$work/s"
	plant $kind "$work/lib.$kind"
	one "$kind at --libnccl" --sysroot "$work/s" --only topo \
		--libnccl "$work/lib.$kind"
done
# A large /proc/kallsyms (a big kernel's 30 MB) with a worker that ends at
# once: the pass over it runs beside the worker and is still read to the
# end (the worker's orphan sweep once killed it: "Connection timed out").
big=$top/tests/scenarios/peermem-api-mofed
rm -rf "$work/s"
python3 "$top/tests/scenarios/mksysroot.py" "$big/sysroot.spec" "$work/s" \
	>/dev/null &&
	python3 - "$work/s/proc/kallsyms" <<'PY'
import sys
p = sys.argv[1]
tail = open(p).read()
with open(p, "w") as f:
    for i in range(600000):
        f.write("0000000000000000 t filler_symbol_%07d\t[filler]\n" % i)
    f.write(tail)
PY
SOURCE_DATE_EPOCH=0 timeout -k 5 40 "$bin" --sysroot "$work/s" --json \
	--only host,topo,platform,mech.peermem_api \
	--libcuda "$doubles/libcuda-fake.so" \
	--libibverbs /nonexistent/libibverbs.so.1 >"$work/out" 2>"$work/err"
code=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(*[r["reason_code"] for r in d["results"]
        if r["gate"] == "mech.peermem_api"])' "$work/out" 2>/dev/null)
if [ "$code" = PEERMEM_API_PRESENT ]; then
	echo "PASS a 30 MB kallsyms beside a worker that ends at once: $code"
	pass=$((pass + 1))
else
	echo "FAIL a 30 MB kallsyms beside a worker that ends at once:" \
		"${code:-no report}, expected PEERMEM_API_PRESENT"
	fail=$((fail + 1))
fi
# Starved of descriptors: a complete report or one line on stderr, exit 3.
for n in 4 5 6; do
	SOURCE_DATE_EPOCH=0 timeout -k 5 40 prlimit --nofile=$n:$n "$bin" \
		--sysroot "$work/base" --json >"$work/out" 2>"$work/err"
	rc=$?
	if [ $rc -ne 3 ]; then
		echo "FAIL RLIMIT_NOFILE=$n: exit $rc, expected 3"
		fail=$((fail + 1))
	elif python3 -c 'import json,sys; json.load(open(sys.argv[1]))' \
		"$work/out" 2>/dev/null ||
		{ [ ! -s "$work/out" ] && [ "$(wc -l <"$work/err")" -eq 1 ]; }; then
		echo "PASS RLIMIT_NOFILE=$n: exit 3, $( [ -s "$work/out" ] &&
			echo report || echo one-line error)"
		pass=$((pass + 1))
	else
		echo "FAIL RLIMIT_NOFILE=$n: neither a report nor one line"
		fail=$((fail + 1))
	fi
done
echo "files: $pass passed, $fail failed"
[ $fail -eq 0 ]
