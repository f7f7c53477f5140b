#!/bin/sh
# The sanitizer pass (make sanitize-check builds DIR first, out of tree):
# the unit tests, the scenarios, the fault matrix, the options and files
# tests and the capture fuzzer run on DIR's ASan+UBSan gdrcheck. Any
# sanitizer report fails: errors abort (abort_on_error, halt_on_error: a
# signal, never exit 0/1/3), leaks make LeakSanitizer exit non-zero, and
# every suite fails on unexpected stderr.
# The worker leaves by _exit(), so LeakSanitizer checks the parent only.
#
#   tests/sanitize-check.sh DIR      ends with "sanitize: N passed, N failed"
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
dir=${1:-build/asan}
case $dir in /*) ;; *) dir="$top/$dir" ;; esac
# handle_segv=0: the doubles' crash.NAME faults (and cuda-crash) raise
# SIGSEGV in the worker on purpose; ASan's own SEGV handler would turn that
# into a report and exit 1 instead of the signal the worker must die of (as
# with a real crashing libcuda). A real SEGV in gdrcheck still kills it with
# a signal, which fails the case.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:handle_segv=0:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export GDRCHECK_BIN="$dir/gdrcheck"
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
pass=0
fail=0

[ -x "$GDRCHECK_BIN" ] || { echo "sanitize: $GDRCHECK_BIN missing"; echo "sanitize: 0 passed, 1 failed"; exit 1; }

for t in "$dir"/tests/unit/test_*; do
	[ -x "$t" ] || continue
	"$t" >"$log/unit" 2>&1
	rc=$?
	p=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) test.*/\1/p' "$log/unit" | tail -n 1)
	f=$(sed -nE 's/^\[  FAILED  \] ([0-9]+) test.*/\1/p' "$log/unit" | tail -n 1)
	p=${p:-0} f=${f:-0}
	if [ $rc -ne 0 ] || grep -qE 'Sanitizer|runtime error' "$log/unit"; then
		[ "$f" -eq 0 ] && f=1
		echo "FAIL unit $(basename "$t") (exit $rc):"
		grep -E -A20 'ERROR: |runtime error|FAILED' "$log/unit" | head -n 40
	else
		echo "PASS unit $(basename "$t"): $p tests"
	fi
	pass=$((pass + p)) fail=$((fail + f))
done

# suite NAME CMD...: adds the "name: N passed, N failed" counts of CMD.
suite() {
	name=$1
	shift
	t0=$(date +%s)
	"$@" >"$log/$name" 2>&1
	rc=$?
	line=$(grep -E '^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed' "$log/$name" | tail -n 1)
	p=$(echo "$line" | sed -nE 's/^[a-z0-9-]+: ([0-9]+) passed.*/\1/p')
	f=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
	p=${p:-0} f=${f:-1}
	[ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
	echo "$name under ASan/UBSan: $p passed, $f failed ($(($(date +%s) - t0)) s)"
	# Show the failures, and any sanitizer report, in full.
	grep -E '^FAIL|Sanitizer|runtime error' "$log/$name" | head -n 40
	pass=$((pass + p)) fail=$((fail + f))
}

suite scenarios tests/run-scenarios.sh
suite fault-matrix tests/fault-matrix.sh
suite options tests/check-options.sh
suite files tests/check-files.sh
# Two-node mode: two sanitized processes, scripted peers.
suite peer python3 tests/check-peer.py
# The same iterations as the plain build's (seed and count: about 0.05 s a
# replay under ASan, 15 s in all); the fresh captures are made by this binary.
suite fuzz-captures python3 tests/fuzz-captures.py
echo "sanitize: $pass passed, $fail failed"
[ $fail -eq 0 ]
