#!/bin/sh
# The MemorySanitizer pass (make msan-check builds DIR first): the unit
# tests, the scenarios and the options test on DIR's MSan gdrcheck, with
# DIR's MSan-built libcuda/libibverbs doubles (MSan must see every write to
# the bytes it checks: an uninstrumented double filling a name buffer would
# look uninitialised). Reports go to files (log_path), the worker's too,
# whatever becomes of its stderr; any report file fails the pass.
#
# Not under MSan: what reads JSON back with Debian's uninstrumented jansson
# (test_json, test_report's test_json_* cases): json_loads and
# json_dumps trip on their own allocations; and --capture, which writes
# through Debian's uninstrumented zlib (check-options.sh says SKIP). The scenarios render JSON, text,
# JUnit and Prometheus for every fixture under MSan instead.
#
#   tests/msan-check.sh DIR      ends with "msan: N passed, N failed"
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
dir=${1:-build/msan}
case $dir in /*) ;; *) dir="$top/$dir" ;; esac
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
# handle_segv=0: the doubles' crash faults (and cuda-crash) raise SIGSEGV
# in the worker on purpose; it must die of it, not become a report.
export MSAN_OPTIONS="log_path=$log/msan:halt_on_error=1:exitcode=86:handle_segv=0"
# --capture gzips through Debian's uninstrumented zlib: MSan would flag
# deflate's own output as uninitialised when it is written.
export GDRCHECK_NO_ZLIB="zlib is not built with MemorySanitizer"
export GDRCHECK_BIN="$dir/gdrcheck" GDRCHECK_DOUBLES="$dir/doubles"
pass=0
fail=0

[ -x "$GDRCHECK_BIN" ] || { echo "msan: $GDRCHECK_BIN missing"; echo "msan: 0 passed, 1 failed"; exit 1; }

for t in "$dir"/tests/unit/test_*; do
	[ -x "$t" ] || continue
	CMOCKA_SKIP='test_json_*' "$t" >"$log/unit" 2>&1
	rc=$?
	p=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) test.*/\1/p' "$log/unit" | tail -n 1)
	f=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) test.*/\1/p' "$log/unit" | tail -n 1)
	p=${p:-0} f=${f:-0}
	if [ $rc -ne 0 ] || ls "$log"/msan.* >/dev/null 2>&1; then
		[ "$f" -eq 0 ] && f=1
		echo "FAIL unit $(basename "$t") (exit $rc):"
		grep -E -A20 'FAILED' "$log/unit" | head -n 20
		cat "$log"/msan.* 2>/dev/null | head -n 40
		rm -f "$log"/msan.*
	else
		echo "PASS unit $(basename "$t"): $p tests"
	fi
	pass=$((pass + p)) fail=$((fail + f))
done

suite() {
	name=$1
	shift
	"$@" >"$log/$name" 2>&1
	rc=$?
	line=$(grep -E '^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed' "$log/$name" | tail -n 1)
	p=$(echo "$line" | sed -nE 's/^[a-z0-9-]+: ([0-9]+) passed.*/\1/p')
	f=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
	p=${p:-0} f=${f:-1}
	[ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
	if ls "$log"/msan.* >/dev/null 2>&1; then
		echo "MemorySanitizer reports during $name:"
		head -n 60 "$log"/msan.*
		rm -f "$log"/msan.*
		f=$((f + 1))
	fi
	echo "$name under MSan: $p passed, $f failed"
	grep -E '^FAIL' "$log/$name" | head -n 20
	pass=$((pass + p)) fail=$((fail + f))
}

suite scenarios ./tests/run-scenarios.sh
suite options ./tests/check-options.sh

echo "msan: $pass passed, $fail failed"
[ $fail -eq 0 ]
