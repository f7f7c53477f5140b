#!/bin/sh
# SIGINT/SIGTERM during a run: the worker is stopped, a complete but
# partial report comes out marked interrupted, the exit status is 3, and
# no process is left behind. The libcuda double hangs in cuInit so that the
# signal lands while a vendor stage runs; in the "hostile" variant cuInit
# also ignores and blocks SIGTERM/SIGINT and forks two helpers holding the
# worker's pipes, one of them out of the process group (setsid).
# Then the process life cycle: the worker dies with a SIGKILLed gdrcheck
# (PR_SET_PDEATHSIG); --deadline bounds the whole run across stages; the
# progress line appears on a terminal's stderr only.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0
fail=0
python3 "$top/tests/scenarios/mksysroot.py" \
	"$top/tests/scenarios/common/pix-node.spec" "$work/sysroot" || exit 1
printf 'device_count = 1\nhang.cuInit = 1\n' >"$work/cuda.conf"
printf 'device_count = 1\nhang.cuInit = 1\nignterm.cuInit = 1\nforkhold.cuInit = 1\nforkescape.cuInit = 1\n' \
	>"$work/hostile.conf"
printf 'device_count = 1\ndev0.name = mlx5_0\n' >"$work/verbs.conf"

for sig in INT TERM INT.hostile TERM.hostile; do
	conf="$work/cuda.conf"
	case $sig in *.hostile) conf="$work/hostile.conf" ;; esac
	start=$(date +%s)
	FAKE_CUDA_SCENARIO="$conf" FAKE_VERBS_SCENARIO="$work/verbs.conf" \
	GDRCHECK_LIBCUDA="$top/tests/doubles/libcuda-fake.so" \
	GDRCHECK_LIBIBVERBS="$top/tests/doubles/libibverbs-fake.so" \
		"$top/gdrcheck" --sysroot "$work/sysroot" --json --timeout 60 \
		>"$work/out.$sig.json" 2>"$work/err.$sig" &
	pid=$!
	sleep 1
	kill -"${sig%.hostile}" "$pid"
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

run_bg() {	# CUDA-CONF VERBS-CONF OUT ARGS...: gdrcheck in the background
	c=$1 v=$2 o=$3
	shift 3
	FAKE_CUDA_SCENARIO="$c" FAKE_VERBS_SCENARIO="$v" \
	GDRCHECK_LIBCUDA="$top/tests/doubles/libcuda-fake.so" \
	GDRCHECK_LIBIBVERBS="$top/tests/doubles/libibverbs-fake.so" \
		"$top/gdrcheck" --sysroot "$work/sysroot" --json "$@" >"$o" 2>"$o.err" &
}

# PR_SET_PDEATHSIG: gdrcheck SIGKILLed (no handler runs) while the worker
# hangs; the kernel must take the worker down with it.
run_bg "$work/cuda.conf" "$work/verbs.conf" "$work/out.kill9" --timeout 60
pid=$!
sleep 1
workers=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null)
kill -9 "$pid"
wait "$pid" 2>/dev/null
sleep 0.5
ok=1
[ -n "$workers" ] || { echo "FAIL pdeathsig: no worker found under $pid"; ok=0; }
for w in $workers; do
	# Gone, or a zombie waiting for init: either way no longer running.
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$w/status" 2>/dev/null)
	if [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]; then
		echo "FAIL pdeathsig: worker $w still alive (state $st) after kill -9 $pid"
		kill -9 "$w"
		ok=0
	fi
done
if [ $ok = 1 ]; then
	echo "PASS pdeathsig: worker ($workers) died with its SIGKILLed parent"
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi

# --deadline bounds the run across stages: (a) two hanging stages, each
# allowed 5 s, in a 3 s budget: the first is cut at 3 s, the second never
# starts; (b) --timeout 2 ends the CUDA hang, the verbs hang gets only the
# second left of --deadline 3. Both: done in about 3 s, every stage reported.
printf 'device_count = 1\ndev0.name = mlx5_0\nhang.ibv_get_device_list = 1\n' \
	>"$work/verbs-hang.conf"
for c in "a 5" "b 2"; do
	set -- $c
	name=$1 to=$2
	t0=$(date +%s.%N)
	run_bg "$work/cuda.conf" "$work/verbs-hang.conf" "$work/out.dl$name" \
		--timeout "$to" --deadline 3
	pid=$!
	wait "$pid"
	rc=$?
	t1=$(date +%s.%N)
	ok=1
	[ "$rc" = 3 ] || { echo "FAIL deadline-$name: exit $rc, expected 3"; ok=0; }
	[ -s "$work/out.dl$name.err" ] && {
		echo "FAIL deadline-$name: stderr (not a terminal) has output"; ok=0; }
	python3 "$top/tests/validate-json.py" "$top/report/gdrcheck-report.schema.json" \
		"$work/out.dl$name" || { echo "FAIL deadline-$name: report not valid"; ok=0; }
	python3 - "$work/out.dl$name" "$name" "$t0" "$t1" <<'PY' || ok=0
import json, sys
d = json.load(open(sys.argv[1]))
name, took = sys.argv[2], float(sys.argv[4]) - float(sys.argv[3])
assert 2.7 <= took <= 4.5, f"took {took:.2f} s, expected about 3"
w = {x["stage"]: x for x in d["workers"]}
res = {r["gate"]: r for r in d["results"]}
cuinit, libv = res["gpu.cuinit"], res["nic.libibverbs"]
assert cuinit["status"] == "ERROR", cuinit
if name == "a":
    assert libv["status"] == "ERROR", libv
    assert w["cuda"]["state"] == "timeout", w
    assert w["verbs"]["state"] == "deadline", w
    assert "--deadline of 3 s was spent" in cuinit["reason"], cuinit["reason"]
    assert "not run: the run's --deadline of 3 s was spent before the verbs stage" \
        in libv["reason"], libv["reason"]
else:
    assert w["cuda"]["state"] == "timeout", w
    assert "timed out after 2 s in cuInit" in cuinit["reason"], cuinit["reason"]
    assert w["verbs"]["state"] == "timeout", w
    assert any(r["status"] == "ERROR" and "in ibv_get_device_list: the run's "
               "--deadline of 3 s was spent" in r["reason"]
               for r in d["results"]), [r["reason"] for r in d["results"]]
    assert w["registration"]["state"] == "deadline", w
print(f"PASS deadline-{name}: exit 3 after {took:.1f} s, every stage reported")
PY
	if pgrep -f "$work/sysroot" >/dev/null; then
		echo "FAIL deadline-$name: a gdrcheck process is left"; ok=0
	fi
	if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done

# The worker cannot start (descriptors exhausted: pipe2 fails): every
# vendor stage is "failed", and each reason names the call and errno (the
# reason buffers were once left unset on this path).
FAKE_CUDA_SCENARIO="$work/cuda.conf" FAKE_VERBS_SCENARIO="$work/verbs.conf" \
GDRCHECK_LIBCUDA="$top/tests/doubles/libcuda-fake.so" \
GDRCHECK_LIBIBVERBS="$top/tests/doubles/libibverbs-fake.so" \
	sh -c 'ulimit -n 6 && exec "$@"' sh "$top/gdrcheck" \
	--sysroot "$work/sysroot" --json >"$work/out.nofd" 2>"$work/out.nofd.err"
rc=$?
if [ "$rc" = 3 ] && [ ! -s "$work/out.nofd.err" ] &&
	python3 "$top/tests/validate-json.py" "$top/report/gdrcheck-report.schema.json" \
		"$work/out.nofd" &&
	python3 - "$work/out.nofd" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["workers"] and all(w["state"] == "failed" and w["call"] == "pipe2"
                            for w in d["workers"]), d["workers"]
res = {r["gate"]: r for r in d["results"]}
for g, what in (("gpu.libcuda", "libcuda"), ("nic.libibverbs", "libibverbs")):
    want = (f"loading {what}: could not start the isolated worker: pipe2 "
            "failed: Too many open files")
    assert res[g]["status"] == "ERROR" and res[g]["reason"] == want, res[g]
PY
then
	echo "PASS worker-start-failure: exit 3, every stage failed, reasons name pipe2"
	pass=$((pass + 1))
else
	echo "FAIL worker-start-failure: exit $rc"; fail=$((fail + 1))
fi

# Progress: on a terminal's stderr, once the run passes a second.
printf 'device_count = 1\nhang.cuInit = 1\n' >"$work/cuda-hang.conf"
if FAKE_CUDA_SCENARIO="$work/cuda-hang.conf" FAKE_VERBS_SCENARIO="$work/verbs.conf" \
	GDRCHECK_LIBCUDA="$top/tests/doubles/libcuda-fake.so" \
	GDRCHECK_LIBIBVERBS="$top/tests/doubles/libibverbs-fake.so" \
	python3 - "$top/gdrcheck" "$work" <<'PY'
import json, os, pty, subprocess, sys
gd, work = sys.argv[1:]
master, slave = pty.openpty()
with open(os.path.join(work, "out.tty"), "w") as out:
    p = subprocess.Popen([gd, "--sysroot", os.path.join(work, "sysroot"),
                          "--json", "--timeout", "2"], stdout=out,
                         stderr=slave)
os.close(slave)
text = b""
while True:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    text += chunk
rc = p.wait()
json.load(open(os.path.join(work, "out.tty")))
assert rc == 3, rc
assert b"\r\x1b[Kgdrcheck: cuda stage, 1 s (cuInit)" in text, text
assert text.endswith(b"\r\x1b[K"), text      # the line is cleared again
assert b"\n" not in text, text                # one line, overwritten
print("PASS progress: one overwritten line on a terminal's stderr")
PY
then pass=$((pass + 1)); else echo "FAIL progress"; fail=$((fail + 1)); fi

echo "signals: $pass passed, $fail failed"
[ $fail = 0 ]
