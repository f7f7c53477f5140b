#!/bin/sh
# Run each libFuzzer harness for a bounded time and sum up.
#
#   tests/fuzz/run-fuzz.sh SECONDS BUILDDIR HARNESS...
#
# BUILDDIR holds the harness binaries, seeds/<harness>/ (make-corpus.sh) and
# gets corpus/<harness>/ (what each run adds, kept between runs),
# artifacts/ (crash reproducers) and <harness>.log. A harness passes when it
# ran its time without a crash, leak, timeout or out-of-memory. Ends with
# "fuzz: N passed, N failed"; exit status 1 when any failed.
set -u

[ $# -ge 3 ] || { echo "usage: $0 SECONDS BUILDDIR HARNESS..." >&2; exit 2; }
secs=$1
dir=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
pass=0
fail=0
failed=""

for h in "$@"; do
	bin="$dir/$h"
	log="$dir/$h.log"
	mkdir -p "$dir/corpus/$h" "$dir/seeds/$h" "$dir/artifacts"
	dict=""
	[ -f "$here/$h.dict" ] && dict="-dict=$here/$h.dict"
	# fuzz_sysroot: files larger than sysroot_read_line's 4096-byte buffer.
	maxlen=4096
	[ "$h" = fuzz_sysroot ] && maxlen=8192
	# fuzz_vendor: a capture's vendor-facts.json (the H200's is ~20 KiB).
	[ "$h" = fuzz_vendor ] && maxlen=65536
	start=$(date +%s)
	# shellcheck disable=SC2086 # dict is empty or one word
	"$bin" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
		-rss_limit_mb=2048 -max_len=$maxlen $dict \
		-artifact_prefix="$dir/artifacts/$h-" \
		"$dir/corpus/$h" "$dir/seeds/$h" >"$log" 2>&1
	rc=$?
	took=$(( $(date +%s) - start ))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	corp=$(find "$dir/corpus/$h" -type f | wc -l)
	if [ "$rc" -eq 0 ] && ! grep -q '^==[0-9]*==ERROR\|^SUMMARY: \|Test unit written to' "$log"; then
		pass=$((pass + 1))
		echo "PASS $h: ${execs:-?} executions in ${took} s (${rate:-?}/s), corpus $corp"
	else
		fail=$((fail + 1))
		failed="$failed $h"
		echo "FAIL $h: exit $rc after ${execs:-?} executions in ${took} s; log $log"
		grep -m1 -A12 '^==[0-9]*==ERROR\|^SUMMARY: \|deadly signal\|ALARM\|out-of-memory' "$log" | sed 's/^/    /'
		sed -n 's/^.*Test unit written to /    reproducer: /p' "$log"
	fi
done

echo "fuzz: $pass passed, $fail failed${failed:+ (}${failed# }${failed:+)}"
[ "$fail" -eq 0 ]
