#!/bin/sh
# gdrcheck-pair.sh: one pod of the two-node Job (gdrcheck-pair-job.yaml),
# installed in the image as /usr/local/bin/gdrcheck-pair.
#
#   gdrcheck-pair [GDRCHECK OPTION]...
#
# The Indexed Job's JOB_COMPLETION_INDEX decides the role: index 0 runs
# `gdrcheck-gate --listen PAIR_PORT`, index 1 `gdrcheck-gate --peer
# PAIR_LISTENER:PAIR_PORT` (gdrcheck-gate: the JSON kept under ARCHIVE_DIR,
# the verdict line on stdout, its exit status). PAIR_LISTENER is index 0's
# name under the Job's headless Service (JOB-0.SERVICE); index 1 waits up to
# PAIR_DNS_WAIT seconds (default 60) for it to resolve, since the record
# appears only once index 0's pod exists. The token comes from
# GDRCHECK_PEER_TOKEN (a Secret, in the manifest), which gdrcheck reads
# itself. After the gate, the peer.* results of the report that are not
# PASS or SKIP are printed to stderr, one line each:
#   gdrcheck-pair: rail 0: peer.connect BLOCKED QP_RETRY_EXCEEDED: <reason>
# Exit: the gate's (0 every rail passed, 1 a rail failed or the node is
# BLOCKED, 2 usage, 3 undecided: the peer never came, 4 no usable report).
# Environment: JOB_COMPLETION_INDEX, PAIR_LISTENER, PAIR_PORT (default
# 18515), PAIR_DNS_WAIT, GATE (default gdrcheck-gate), ARCHIVE_DIR,
# GATE_HOSTNAME (as the gate uses them), JQ.
set -eu

GATE=${GATE:-gdrcheck-gate}
PAIR_PORT=${PAIR_PORT:-18515}
PAIR_DNS_WAIT=${PAIR_DNS_WAIT:-60}
ARCHIVE_DIR=${ARCHIVE_DIR:-/var/log/gdrcheck}
JQ=${JQ:-jq}
me=gdrcheck-pair

case ${JOB_COMPLETION_INDEX:-} in
0) set -- --listen "$PAIR_PORT" "$@" ;;
1)
	: "${PAIR_LISTENER:?the name of index 0: JOB-0.SERVICE}"
	i=0
	while ! getent hosts "$PAIR_LISTENER" >/dev/null 2>&1; do
		if [ "$i" -ge "$PAIR_DNS_WAIT" ]; then
			echo "$me: $PAIR_LISTENER does not resolve after ${PAIR_DNS_WAIT}s (headless Service, subdomain, publishNotReadyAddresses?)" >&2
			exit 3
		fi
		sleep 1
		i=$((i + 1))
	done
	set -- --peer "$PAIR_LISTENER:$PAIR_PORT" "$@"
	;;
*)
	echo "$me: JOB_COMPLETION_INDEX '${JOB_COMPLETION_INDEX:-}': run as index 0 or 1 of an Indexed Job" >&2
	exit 2
	;;
esac

rc=0
"$GATE" "$@" || rc=$?
# The report the gate just kept: the newest under this node's directory.
node=${GATE_HOSTNAME:-$(uname -n)}
last=
for d in "$ARCHIVE_DIR/$node"/*/; do
	[ -d "$d" ] && last=$d
done
if [ -n "$last" ] && [ -f "${last}report.json" ]; then
	"$JQ" -r '.results[]? | select((.gate // "") | startswith("peer."))
		| select(.status != "PASS" and .status != "SKIP")
		| "gdrcheck-pair: \(.subject): \(.gate) \(.status) \(.reason_code // "-"): \(.reason // "")"' \
		"${last}report.json" >&2 2>/dev/null || true
fi
exit "$rc"
