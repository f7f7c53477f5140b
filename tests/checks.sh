# shellcheck shell=sh
# The counted checks of the shell test suites, sourced (never run) by
# tests/examples/run.sh, tests/examples/deb.sh and tests/slurm/lib.sh:
#   checks_begin NAME    zero the counters; finish's line names NAME
#   ok TEXT, bad TEXT    count a pass or a failure and print it
#   check TEXT CMD...    ok when CMD succeeds, else bad with CMD's output
#                        (kept in $work/check.log: the caller's work dir)
#   finish               "NAME: N passed, N failed"; exits 0 only when
#                        nothing failed
# $work is the caller's (SC2154).
# shellcheck disable=SC2154
checks_begin() {
	checks_name=$1
	pass=0
	fail=0
}
ok() {
	pass=$((pass + 1))
	echo "PASS $1"
}
bad() {
	fail=$((fail + 1))
	echo "FAIL $1"
}
check() {
	name=$1
	shift
	if "$@" >"$work/check.log" 2>&1; then
		ok "$name"
	else
		bad "$name"
		sed 's/^/    /' "$work/check.log"
	fi
}
finish() {
	echo "$checks_name: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}
