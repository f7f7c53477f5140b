#!/bin/sh
# Scenario tests: a sysroot fixture (built from the case's sysroot.spec) plus
# the libcuda/libibverbs test doubles driven by cuda.conf / verbs.conf,
# loaded through gdrcheck's normal dlopen path (--libcuda/--libibverbs);
# a case with an nvml.conf also loads the NVML double (--libnvml; without
# one, NVML is not replayed, as for any --sysroot run).
# Golden text and JSON output and the exit status are diffed with diff -u;
# every JSON report is validated against the shipped schema.
#
#   tests/run-scenarios.sh [--update] [NAME...]
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cases="$top/tests/scenarios"
out="$top/tests/out/scenarios"
# GDRCHECK_DOUBLES: the doubles to load (make msan-check builds its own).
doubles=${GDRCHECK_DOUBLES:-$top/tests/doubles}
schema="$top/report/gdrcheck-report.schema.json"
update=0
[ "${1:-}" = "--update" ] && { update=1; shift; }

pass=0
fail=0
failed=""

# The binary under test (make sanitize-check / valgrind point this elsewhere;
# GDRCHECK_WRAP runs it under a tool such as valgrind).
bin=${GDRCHECK_BIN:-$top/gdrcheck}
wrap=${GDRCHECK_WRAP:-}

# Durations and worker pids vary run to run; everything else in a report is deterministic.
normalise_json() {
	python3 - "$1" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    doc = json.load(f)
def walk(v):
    if isinstance(v, dict):
        # Timings and worker pids change run to run.
        return {k: (0 if (k.endswith("_ms") or k.endswith("_gbps") or k == "pid")
                    and isinstance(x, (int, float)) else walk(x))
                for k, x in v.items()}
    if isinstance(v, list):
        return [walk(x) for x in v]
    return v
print(json.dumps(walk(doc), indent=2))
PY
}

run_case() {
	name=$1
	dir="$cases/$name"
	work="$out/$name"
	rm -rf "$work"
	mkdir -p "$work"
	# A node-sized case holds `gen`: bench/gen-sysroot.py's arguments
	# after OUTDIR's place (N [NICS] [--vfs K]); the fixture, cuda.conf
	# and verbs.conf are generated into the work directory, and the
	# case's own cuda.conf / verbs.conf, if any, appended (its faults:
	# a later key wins). Its JSON is too large for a golden: check.sh
	# asserts what it must hold.
	gen=""
	[ -f "$dir/gen" ] && gen=$(cat "$dir/gen")
	if [ -n "$gen" ]; then
		# shellcheck disable=SC2086 # gen is a word list
		set -- $gen
		n=$1
		shift
		if ! python3 "$top/bench/gen-sysroot.py" "$n" "$work" "$@" \
			>"$work/mksysroot.log" 2>&1; then
			echo "FAIL $name: fixture generation failed"
			cat "$work/mksysroot.log"
			return 1
		fi
		for c in cuda.conf verbs.conf; do
			[ -f "$dir/$c" ] && cat "$dir/$c" >>"$work/$c"
		done
	elif ! python3 "$cases/mksysroot.py" "$dir/sysroot.spec" "$work/sysroot" \
		>"$work/mksysroot.log" 2>&1; then
		echo "FAIL $name: fixture build failed"; cat "$work/mksysroot.log"
		return 1
	fi
	args=""
	[ -f "$dir/args" ] && args=$(sed "s|@DOUBLES@|$doubles|g" "$dir/args")
	# Only the case's own NCCL settings reach the tool: no NCCL_* from the
	# caller, and a fixed HOME so the host's ~/.nccl.conf is not read
	# (both conf files are read below the sysroot).
	for v in $(env | sed -n 's/^\(NCCL_[A-Za-z0-9_]*\)=.*/\1/p'); do
		unset "$v"
	done
	unset GDRCHECK_WIDTH GDRCHECK_LIBNVML GDRCHECK_LIBMLX5
	HOME=/home/gdrcheck
	export HOME
	unset LD_LIBRARY_PATH
	caseenv=""
	[ -f "$dir/env" ] && caseenv=$(grep -v '^#' "$dir/env")
	cuda_conf=/dev/null verbs_conf=/dev/null
	[ -f "$dir/cuda.conf" ] && cuda_conf="$dir/cuda.conf"
	[ -f "$dir/verbs.conf" ] && verbs_conf="$dir/verbs.conf"
	[ -n "$gen" ] && cuda_conf="$work/cuda.conf" verbs_conf="$work/verbs.conf"
	nvml_conf=/dev/null nvml_env=""
	if [ -f "$dir/nvml.conf" ]; then
		nvml_conf="$dir/nvml.conf"
		nvml_env="GDRCHECK_LIBNVML=$doubles/libnvidia-ml-fake.so"
	fi
	ok=0
	for fmt in txt json junit prom quiet; do
		case $fmt in
		txt) flag=--format=text ;;
		json) flag=--json ;;
		junit) flag=--format=junit ;;
		prom) flag=--format=prometheus ;;
		quiet) flag=--quiet ;;
		esac
		mkdir -p "$work/ledger.$fmt"
		# shellcheck disable=SC2086 # args and caseenv are word lists
		env $caseenv $nvml_env SOURCE_DATE_EPOCH=0 NO_COLOR=1 \
		FAKE_CUDA_SCENARIO="$cuda_conf" FAKE_VERBS_SCENARIO="$verbs_conf" \
		FAKE_SYSROOT="$work/sysroot" \
		FAKE_NVML_SCENARIO="$nvml_conf" \
		FAKE_LEDGER_DIR="$work/ledger.$fmt" \
		GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so" \
		GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so" \
			$wrap "$bin" --sysroot "$work/sysroot" $flag $args \
			>"$work/out.$fmt" 2>"$work/stderr.$fmt"
		echo $? >"$work/rc.$fmt"
		# Goldens must not depend on where the checkout lives.
		sed -i "s|$doubles|@TOP@/tests/doubles|g; s|$top|@TOP@|g" \
			"$work/out.$fmt"
	done
	for fmt in json junit prom quiet; do
		if [ "$(cat "$work/rc.txt")" != "$(cat "$work/rc.$fmt")" ]; then
			echo "FAIL $name: text exit $(cat "$work/rc.txt") != $fmt exit $(cat "$work/rc.$fmt")"
			ok=1
		fi
	done
	if ! python3 "$top/tests/validate-formats.py" "$work/out.json" \
		"$work/out.junit" "$work/out.prom" >"$work/formats.log" 2>&1; then
		echo "FAIL $name: JUnit/Prometheus output disagrees with the JSON:"
		cat "$work/formats.log"
		ok=1
	fi
	if [ "$(wc -l <"$work/out.quiet")" != 1 ] ||
		! grep -q "^gdrcheck: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"]["status"])' "$work/out.json") " "$work/out.quiet"; then
		echo "FAIL $name: --quiet is not the one verdict line:"
		cat "$work/out.quiet"
		ok=1
	fi
	if ! normalise_json "$work/out.json" >"$work/norm.json" 2>"$work/json.err"; then
		echo "FAIL $name: output is not JSON"; cat "$work/json.err"
		return 1
	fi
	if ! python3 "$top/tests/validate-json.py" "$schema" "$work/out.json" \
		>"$work/schema.log" 2>&1; then
		echo "FAIL $name: report does not match the schema"
		cat "$work/schema.log"
		ok=1
	fi
	for fmt in txt json junit prom quiet; do
		if [ -s "$work/stderr.$fmt" ]; then
			echo "FAIL $name: gdrcheck wrote to stderr ($fmt)"
			cat "$work/stderr.$fmt"
			ok=1
		fi
	done
	# The doubles count what the tool acquired and released. A worker the
	# watchdog killed (the report names its pid) is exempt: the kernel
	# releases what a killed process held.
	killed=$(python3 -c 'import json,sys
print(" ".join(str(w["pid"]) for w in json.load(open(sys.argv[1]))["workers"]
               if w["state"] in ("timeout", "crashed", "interrupted")))' "$work/out.json")
	for l in "$work"/ledger.json/cuda.* "$work"/ledger.json/verbs.* \
		"$work"/ledger.json/nvml.*; do
		[ -f "$l" ] || continue
		case " $killed " in *" ${l##*.} "*) continue ;; esac
		if awk '$2 != $3 { bad = 1 } END { exit !bad }' "$l"; then
			echo "FAIL $name: unbalanced resources in $(basename "$l"):"
			cat "$l"
			ok=1
		fi
	done
	goldens="txt json"
	[ -n "$gen" ] && goldens=txt
	if [ $update = 1 ]; then
		cp "$work/out.txt" "$dir/expected.txt"
		[ -n "$gen" ] || cp "$work/norm.json" "$dir/expected.json"
		cp "$work/rc.txt" "$dir/expected.rc"
	fi
	for f in $goldens; do
		got="$work/out.$f"
		[ $f = json ] && got="$work/norm.json"
		if ! diff -u "$dir/expected.$f" "$got" >"$work/diff.$f"; then
			echo "FAIL $name: $f output differs from expected.$f"
			cat "$work/diff.$f"
			ok=1
		fi
	done
	if [ "$(cat "$dir/expected.rc")" != "$(cat "$work/rc.txt")" ]; then
		echo "FAIL $name: exit status $(cat "$work/rc.txt"), expected $(cat "$dir/expected.rc")"
		ok=1
	fi
	# Extra assertions a case may carry (same environment as the run).
	# They run $TOP/gdrcheck, the main build: its doubles, whatever
	# GDRCHECK_DOUBLES gave the runs above.
	if [ -f "$dir/check.sh" ]; then
		if ! TOP="$top" SYSROOT="$work/sysroot" WORK="$work" \
			SOURCE_DATE_EPOCH=0 NO_COLOR=1 \
			FAKE_CUDA_SCENARIO="$cuda_conf" FAKE_VERBS_SCENARIO="$verbs_conf" \
			FAKE_SYSROOT="$work/sysroot" \
			GDRCHECK_LIBCUDA="$top/tests/doubles/libcuda-fake.so" \
			GDRCHECK_LIBIBVERBS="$top/tests/doubles/libibverbs-fake.so" \
			sh "$dir/check.sh" >"$work/check.log" 2>&1; then
			echo "FAIL $name: check.sh failed:"
			cat "$work/check.log"
			ok=1
		fi
	fi
	return $ok
}

if [ $# -eq 0 ]; then
	set --
	for d in "$cases"/*/; do
		[ -f "$d/sysroot.spec" ] || [ -f "$d/gen" ] &&
			set -- "$@" "$(basename "$d")"
	done
fi
for name in "$@"; do
	if run_case "$name"; then
		echo "PASS $name"
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $name"
	fi
done
echo "scenarios: $pass passed, $fail failed"
[ $fail -eq 0 ]
