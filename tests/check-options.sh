#!/bin/sh
# Command-line contract: a bad option is a usage error (exit 2) with a clear
# message on stderr naming the offending option or value, and nothing on
# stdout (no half report a script could mistake for a result); the good ones
# work: --help and --version exit 0, --list-gates lists every gate a report
# can hold. Runs against the PIX fixture of the registration scenarios with
# the test doubles, so an option wrongly accepted still ends quickly.
#
#   tests/check-options.sh      env GDRCHECK_BIN: the binary (default ./gdrcheck),
#                               GDRCHECK_WRAP: a command to run it under
# Ends with "options: N passed, N failed".
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
bin=${GDRCHECK_BIN:-$top/gdrcheck}
wrap=${GDRCHECK_WRAP:-}	# e.g. valgrind (make valgrind)
work=$(mktemp -d "${TMPDIR:-/tmp}/check-options.XXXXXX")
trap 'rm -rf "$work"' EXIT
pass=0
fail=0

if ! python3 "$top/tests/scenarios/mksysroot.py" \
	"$top/tests/scenarios/reg-ok/sysroot.spec" "$work/sysroot" >/dev/null; then
	echo "options: fixture build failed"
	echo "options: 0 passed, 1 failed"
	exit 1
fi
doubles=${GDRCHECK_DOUBLES:-$top/tests/doubles}
export GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so"
export GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so"
export FAKE_CUDA_SCENARIO="$top/tests/scenarios/reg-ok/cuda.conf"
export FAKE_VERBS_SCENARIO="$top/tests/scenarios/reg-ok/verbs.conf"
export NO_COLOR=1 SOURCE_DATE_EPOCH=0
unset FAKE_LEDGER_DIR

ok() {
	echo "PASS $1"
	pass=$((pass + 1))
}

bad() {
	echo "FAIL $1: $2"
	sed 's/^/     stderr: /' "$work/err" | head -n 3
	fail=$((fail + 1))
}

run() {
	# shellcheck disable=SC2086 # $wrap is a command line
	timeout -k 5 120 $wrap "$bin" "$@" >"$work/out" 2>"$work/err"
}

# usage TOKEN ARG...: exit 2, stdout empty, stderr names TOKEN (fixed string).
usage() {
	token=$1
	shift
	label="usage: $*"
	run "$@"
	rc=$?
	if [ $rc -ne 2 ]; then
		bad "$label" "exit status $rc, expected 2"
	elif [ -s "$work/out" ]; then
		bad "$label" "wrote $(wc -c <"$work/out") bytes to stdout"
	elif ! head -n 1 "$work/err" | grep -q '^gdrcheck: '; then
		bad "$label" "no 'gdrcheck: ' message on stderr"
	elif ! head -n 1 "$work/err" | grep -qF -- "$token"; then
		bad "$label" "the message does not name '$token'"
	else
		ok "$label"
	fi
}

S="--sysroot $work/sysroot"
# shellcheck disable=SC2086 # $S is two words
{
usage "'--bogus'" $S --bogus
usage "'-Z'" $S -Z
usage "--timeout" $S --timeout
usage "-t" $S -t
usage "--require" $S --require
usage "'bogus'" $S --require bogus
usage "'0'" $S --timeout 0
usage "'-5'" $S --timeout -5
usage "'abc'" $S --timeout abc
usage "'1e9'" $S --timeout 1e9
usage "'nan'" $S --timeout nan
usage "'0.05'" $S --timeout 0.05
usage "'3'" $S --reg-size 3
usage "'5K'" $S --reg-size 5K
usage "'2T'" $S --reg-size 2T
usage "'-1'" $S --reg-size -1
usage "'0'" $S --reg-size 0
usage "'1025M'" $S --reg-size 1025M
usage "'xml'" $S --format xml
usage "--format" $S --format=
usage "'bogus.gate'" $S --only bogus.gate
usage "'nope'" $S --skip nope
usage "--only" $S --only gpu,,nic
usage "--only" $S --only=
usage "'FOO'" $S --max-distance FOO
usage "'/nonexistent'" --sysroot /nonexistent
usage "--sysroot" --sysroot ''
usage "--sysroot" --sysroot=
usage "'/nonexistent'" $S --pci-dump /nonexistent
usage "'foo'" $S foo bar
usage "'sometimes'" $S --color=sometimes
usage "--libcuda" $S --libcuda=
# Short-option clusters: the message names the option, not the word.
usage "'-t'" $S -jt
usage "'-t'" $S -vqt
usage "'-x'" $S -jx
usage "'-x'" $S -vxq
# Numbers that overflow are refused, never wrapped into range.
usage "'18014398509481985M'" $S --reg-size 18014398509481985M
usage "'17179869184K'" $S --reg-size 17179869184K
usage "'1099511627776G'" $S --reg-size 1099511627776G
usage "'18446744073709551616'" $S --reg-size 18446744073709551616
usage "'+2M'" $S --reg-size +2M
usage "'1e999'" $S --timeout 1e999
usage "'0x10'" $S --timeout 0x10
usage "'inf'" $S --timeout inf
usage "'99999999999999999999999'" $S --timeout 99999999999999999999999
# The user's words come back cleaned: no escape sequence on the terminal.
usage "'\\x1B[2J'" $S --require "$(printf '\033[2J')"
usage "'-\\x1B'" $S -j"$(printf '\033')"
}
if LC_ALL=C grep -q "$(printf '\033')" "$work/err"; then
	bad "usage errors" "an escape byte reached stderr"
fi

# SOURCE_DATE_EPOCH out of range or malformed: a usage error, never a
# year-10000 timestamp; the last second of 9999 is the largest accepted.
for epoch in 253402300800 -1 99999999999999999999 12abc 1e9 " 5"; do
	SOURCE_DATE_EPOCH=$epoch
	# shellcheck disable=SC2086
	usage "SOURCE_DATE_EPOCH" $S --json
done
SOURCE_DATE_EPOCH=253402300799
# shellcheck disable=SC2086
run $S --json
rc=$?
at=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["generated_at"])' \
	"$work/out" 2>/dev/null)
if [ "$at" = "9999-12-31T23:59:59Z" ] && [ $rc -ne 2 ]; then
	ok "SOURCE_DATE_EPOCH=253402300799 is 9999-12-31T23:59:59Z"
else
	bad "SOURCE_DATE_EPOCH=253402300799" "exit $rc, generated_at '$at'"
fi
SOURCE_DATE_EPOCH=0

# A reader that goes away (`gdrcheck | head -1`): the verdict's exit
# status, nothing on stderr, not death by SIGPIPE (141).
# shellcheck disable=SC2086
run $S
want=$?
for fmt in text json junit prometheus; do
	for reader in "head -n 1" "true"; do
		# shellcheck disable=SC2086
		{ timeout -k 5 120 $wrap "$bin" $S -v --format $fmt 2>"$work/err"
		  echo $? >"$work/rc"; } | $reader >/dev/null
		got=$(cat "$work/rc")
		if [ "$got" = "$want" ] && [ ! -s "$work/err" ]; then
			ok "--format $fmt | $reader: exit $got, quiet"
		else
			bad "--format $fmt | $reader" "exit $got (want $want)"
		fi
	done
done

# --help / --version: exit 0 on stdout, nothing on stderr.
if run --help && grep -q '^Usage: gdrcheck' "$work/out" && [ ! -s "$work/err" ]; then
	ok "--help"
else
	bad "--help" "exit status, Usage line or stderr wrong"
fi
if run -h && grep -q '^Usage: gdrcheck' "$work/out"; then ok "-h"; else bad "-h" "no usage"; fi
if run --version && grep -qE '^gdrcheck [0-9]+\.[0-9]+\.[0-9]+$' "$work/out" &&
	[ ! -s "$work/err" ]; then
	ok "--version"
else
	bad "--version" "exit status or 'gdrcheck X.Y.Z' line wrong"
fi
# Every option --help shows is in the option parser: none is a usage error.
run --help
for o in $(grep -oE -- '--[a-z][a-z-]+' "$work/out" | sort -u); do
	case $o in
	--help | --version | --list-gates) continue ;;
	--json | --quiet | --redact | --every-gpu | --warn-fails | --no-alloc | \
	--no-datapath | --no-color | --verbose | --color) args="$o" ;;
	--format) args="$o json" ;;
	--only) args="$o host" ;;
	--skip) args="$o host" ;;
	--output) args="$o $work/report.txt" ;;
	--require) args="$o dmabuf" ;;
	--max-distance) args="$o SYS" ;;
	--capture)
		# make msan-check: Debian's zlib is not instrumented (not a pass).
		if [ -n "${GDRCHECK_NO_ZLIB:-}" ]; then
			echo "SKIP $o: $GDRCHECK_NO_ZLIB"
			continue
		fi
		args="$o $work/cap.tar.gz" ;;
	--sysroot) continue ;;
	--libcuda) args="$o $GDRCHECK_LIBCUDA" ;;
	--libibverbs) args="$o $GDRCHECK_LIBIBVERBS" ;;
	--libpci) args="$o /nonexistent/libpci.so.3" ;;
	--pci-dump) continue ;;
	--timeout) args="$o 5" ;;
	--reg-size) args="$o 4K" ;;
	*) bad "help lists $o" "no good value known to this test: add it"; continue ;;
	esac
	# shellcheck disable=SC2086 # word lists
	run $S $args
	rc=$?
	case $rc in
	0 | 1 | 3) ok "accepted: $args" ;;
	*) bad "accepted: $args" "exit status $rc" ;;
	esac
done

# --list-gates: every gate a full report holds, in chain order, exit 0.
run -L
rc=$?
listed=$(awk 'NF >= 2 && $1 ~ /^[a-z]+\.[a-z0-9_]+$/ { print $1 }' "$work/out")
run $S --json --timeout 5
gates=$(python3 -c 'import json, sys
seen = []
for r in json.load(open(sys.argv[1]))["results"]:
    if r["gate"] not in seen:
        seen.append(r["gate"])
print("\n".join(seen))' "$work/out" 2>/dev/null)
if [ $rc -ne 0 ]; then
	bad "--list-gates" "exit status $rc"
elif [ -z "$gates" ]; then
	bad "--list-gates" "no JSON report to compare with"
elif [ "$listed" != "$gates" ]; then
	bad "--list-gates" "differs from the gates of a report (in order):
$(printf '%s\n' "$listed" >"$work/a"; printf '%s\n' "$gates" >"$work/b"; diff "$work/a" "$work/b")"
else
	ok "--list-gates ($(echo "$listed" | wc -l) gates, the report's order)"
fi

echo "options: $pass passed, $fail failed"
[ $fail -eq 0 ]
