#!/bin/sh
# gdrcheck runs on a real kernel verbs stack (rxe0, no GPU, no libcuda) and
# emits a well-formed JSON report. Skips when the tool is not built.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck

rc=0
"$GDRCHECK" --json >report.json 2>stderr.txt || rc=$?
say "gdrcheck --json exit status: $rc"
if [ -s stderr.txt ]; then
	say "--- stderr:"
	cat stderr.txt
fi
case $rc in
0 | 1 | 3) say "ok: exit status is a verdict (0 READY, 1 BLOCKED, 3 undecided)" ;;
*)
	cat report.json
	fail "unexpected exit status $rc (2 = usage error, >= 128 = killed by a signal)"
	;;
esac
jq_check "report is JSON with a schema_version" report.json 'has("schema_version")'
jq_check "report has a non-empty results array" report.json '.results | type == "array" and length > 0'
jq_check "every result has a gate and a known status" report.json \
	'all(.results[]; (.gate | type) == "string" and (.status | test("^(PASS|WARN|BLOCKED|SKIP|ERROR)$")))'
jq_check "the report mentions the rxe0 device" report.json '[.. | strings | select(test("rxe0"))] | length > 0'
