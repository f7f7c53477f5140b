#!/bin/sh
# gdrcheck-npd.sh: gdrcheck as a node-problem-detector custom plugin
# (gdrcheck-npd.json). NPD runs it every invoke_interval and reads:
#
#   exit 0  OK       gdrcheck READY (exit 0): condition GPUDirectRDMAProblem
#                    False
#   exit 1  NonOK    gdrcheck BLOCKED (exit 1): condition True, reason
#                    GPUDirectRDMABlocked, the message below
#   exit 2  Unknown  anything else: gdrcheck undecided (3), a usage error
#                    (2), a crash, a time-out, no verdict line. The check
#                    did not judge the node: NPD sets the condition Unknown
#                    (not True), with this script's message
#
# stdout: one line, gdrcheck's verdict line (`gdrcheck --quiet`), e.g.
#   gdrcheck: BLOCKED (--require any); dmabuf BLOCKED at nic.devices (host); ...
# or, for Unknown, what went wrong. NPD keeps max_output_length bytes of it.
#
# Environment: GDRCHECK (default gdrcheck on PATH), GDRCHECK_ARGS (word
# split, default --no-alloc: the node runs jobs; the policy is gdrcheck's
# default, --require auto; exit 0 READY-UNPROVEN is OK), NPD_BUDGET seconds (default 50: keep it
# below the rule's timeout; gdrcheck gets --timeout BUDGET/5 per vendor
# stage, or --deadline BUDGET-5 where its --help lists that option).
set -u

GDRCHECK=${GDRCHECK:-gdrcheck}
GDRCHECK_ARGS=${GDRCHECK_ARGS---no-alloc}
NPD_BUDGET=${NPD_BUDGET:-50}
OK=0
NONOK=1
UNKNOWN=2

case $NPD_BUDGET in
'' | *[!0-9]*)
	echo "gdrcheck-npd: NPD_BUDGET must be whole seconds"
	exit $UNKNOWN
	;;
esac
[ "$NPD_BUDGET" -ge 10 ] || NPD_BUDGET=10
case " $GDRCHECK_ARGS " in
*" --deadline"* | *" --timeout"* | *" -t "*) bound= ;;
*)
	if "$GDRCHECK" --help 2>/dev/null | grep -q -- '--deadline'; then
		bound="--deadline $((NPD_BUDGET - 5))"
	else
		bound="--timeout $(((NPD_BUDGET - 5) / 4))"
	fi
	;;
esac

rc=0
# shellcheck disable=SC2086 # bound and GDRCHECK_ARGS are word lists
line=$(timeout -k 3 "$NPD_BUDGET" "$GDRCHECK" --quiet $bound $GDRCHECK_ARGS 2>/dev/null) ||
	rc=$?
line=$(printf '%s\n' "$line" | head -n 1)
case $line in
"gdrcheck: "*) ;;
*) line= ;;
esac

case $rc in
0)
	if [ -n "$line" ]; then
		echo "$line"
		exit $OK
	fi
	;;
1)
	if [ -n "$line" ]; then
		echo "$line"
		exit $NONOK
	fi
	;;
3)
	echo "gdrcheck undecided (exit 3)${line:+: $line}"
	exit $UNKNOWN
	;;
124 | 137)
	echo "gdrcheck did not finish within ${NPD_BUDGET}s"
	exit $UNKNOWN
	;;
*)
	if [ "$rc" -gt 128 ]; then
		echo "gdrcheck died with signal $((rc - 128))"
	else
		echo "gdrcheck failed with exit $rc"
	fi
	exit $UNKNOWN
	;;
esac
echo "gdrcheck exited $rc without a verdict line"
exit $UNKNOWN
