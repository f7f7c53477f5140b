#!/bin/sh
# SIGINT/SIGTERM during a run: the worker is stopped, a complete but
# partial report comes out marked interrupted, the exit status is 3, and
# no process is left behind. The libcuda double hangs in cuInit so that the
# signal lands while a vendor stage runs.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0
fail=0
python3 "$top/tests/scenarios/mksysroot.py" \
	"$top/tests/scenarios/common/pix-node.spec" "$work/sysroot" || exit 1
printf 'device_count = 1\nhang.cuInit = 1\n' >"$work/cuda.conf"
printf 'device_count = 1\ndev0.name = mlx5_0\n' >"$work/verbs.conf"

for sig in INT TERM; do
	start=$(date +%s)
	FAKE_CUDA_SCENARIO="$work/cuda.conf" FAKE_VERBS_SCENARIO="$work/verbs.conf" \
	GDRCHECK_LIBCUDA="$top/tests/doubles/libcuda-fake.so" \
	GDRCHECK_LIBIBVERBS="$top/tests/doubles/libibverbs-fake.so" \
		"$top/gdrcheck" --sysroot "$work/sysroot" --json --timeout 60 \
		>"$work/out.$sig.json" 2>"$work/err.$sig" &
	pid=$!
	sleep 1
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	took=$(($(date +%s) - start))
	ok=1
	[ "$rc" = 3 ] || { echo "FAIL SIG$sig: exit $rc, expected 3"; ok=0; }
	[ "$took" -lt 10 ] || { echo "FAIL SIG$sig: took ${took}s"; ok=0; }
	python3 "$top/tests/validate-json.py" "$top/report/gdrcheck-report.schema.json" \
		"$work/out.$sig.json" || { echo "FAIL SIG$sig: report not valid"; ok=0; }
	python3 - "$work/out.$sig.json" <<'PY' || ok=0
import json, sys
d = json.load(open(sys.argv[1]))
assert d["interrupted"] is True, "not marked interrupted"
assert d["verdict"]["exit_code"] == 3, d["verdict"]
cuinit = [r for r in d["results"] if r["gate"] == "gpu.cuinit"][0]
assert cuinit["status"] == "ERROR" and "interrupted" in cuinit["reason"], cuinit
assert any(w["state"] == "interrupted" for w in d["workers"]), d["workers"]
PY
	# Every worker is gone (none reparented to init either).
	sleep 0.2
	if pgrep -f "$work/sysroot" >/dev/null; then
		echo "FAIL SIG$sig: a gdrcheck process is left"; ok=0
	fi
	if [ $ok = 1 ]; then
		echo "PASS SIG$sig: exit 3 after ${took}s, partial report marked interrupted"
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
	fi
done
echo "signals: $pass passed, $fail failed"
[ $fail = 0 ]
