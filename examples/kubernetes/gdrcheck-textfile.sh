#!/bin/sh
# gdrcheck-textfile.sh: the DaemonSet's loop (gdrcheck-daemonset.yaml).
#
# Every GDRCHECK_INTERVAL seconds: gdrcheck --format prometheus, bounded by
# TEXTFILE_BUDGET seconds, into a fresh mktemp file in TEXTFILE_DIR (a dot
# name without .prom, so the collector skips it), this script's own metrics
# appended, then one rename onto gdrcheck.prom (the file's mode kept; a link
# there is replaced, not followed). node_exporter's textfile collector reads
# only *.prom files, and a rename within one directory is atomic, so it
# never scrapes half a file. A run that leaves no report (a crash, a usage
# error in GDRCHECK_ARGS, a run killed at TEXTFILE_BUDGET) still replaces
# the file: the old gdrcheck metrics go away and gdrcheck_textfile_run_ok 0
# and gdrcheck_textfile_exit_code say why, so a stale READY never lingers.
# A wrapper that stops altogether leaves the timestamp to age: the alert
# GdrcheckStale (examples/prometheus) fires.
#
# One log line per run on stdout: the node, the exit status and each path's
# verdict (kubectl logs). The exit status itself is in the metrics:
#   gdrcheck_exit_code{require=...}      gdrcheck's (absent after a crash)
#   gdrcheck_textfile_exit_code          what this script saw (always; 124
#                                        when the run hit TEXTFILE_BUDGET)
#   gdrcheck_textfile_run_ok             1 when gdrcheck left its metrics
#                                        (exit 0, 1 or 3), else 0
#   gdrcheck_textfile_last_run_timestamp_seconds  when the run ended
#
# Environment:
#   GDRCHECK           the binary (default gdrcheck on PATH)
#   GDRCHECK_ARGS      options for gdrcheck, word split (default --no-alloc:
#                      the node runs jobs; the policy is gdrcheck's default,
#                      --require auto). The full proof belongs on an idle
#                      node: gdrcheck-job.yaml on a cordoned node.
#   TEXTFILE_BUDGET    seconds a run may take (default 120, at least 10):
#                      gdrcheck gets --deadline BUDGET-5 where its --help
#                      lists it, else --timeout (BUDGET-5)/4 per stage (an
#                      explicit --deadline or --timeout in GDRCHECK_ARGS
#                      wins), and timeout(1) kills it at BUDGET (+5 s KILL)
#   GDRCHECK_INTERVAL  seconds between runs (default 3600)
#   GDRCHECK_ONCE      1: run once and exit with gdrcheck's status
#   TEXTFILE_DIR       default /var/lib/node_exporter/textfile
#   NODE_NAME          for the log line (default uname -n)
set -eu

GDRCHECK=${GDRCHECK:-gdrcheck}
GDRCHECK_ARGS=${GDRCHECK_ARGS---no-alloc}
BUDGET=${TEXTFILE_BUDGET:-120}
INTERVAL=${GDRCHECK_INTERVAL:-3600}
ONCE=${GDRCHECK_ONCE:-0}
TEXTFILE_DIR=${TEXTFILE_DIR:-/var/lib/node_exporter/textfile}
NODE_NAME=${NODE_NAME:-$(uname -n)}

case $BUDGET in
'' | *[!0-9]*)
	echo "gdrcheck-textfile: TEXTFILE_BUDGET must be whole seconds, not '$BUDGET'" >&2
	exit 2
	;;
esac
[ "$BUDGET" -ge 10 ] || BUDGET=10

prom="$TEXTFILE_DIR/gdrcheck.prom"
tmp=

sleeper=
trap '[ -z "$tmp" ] || rm -f "$tmp"' EXIT
# TERM (the kubelet stopping the pod) ends the wait at once, sleep included.
trap '[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null; exit 0' TERM INT

# The time bound: gdrcheck's own --deadline where it has one.
case " $GDRCHECK_ARGS " in
*" --deadline"* | *" --timeout"* | *" -t "*) bound= ;;
*)
	if "$GDRCHECK" --help 2>/dev/null | grep -q -- '--deadline'; then
		bound="--deadline $((BUDGET - 5))"
	else
		bound="--timeout $(((BUDGET - 5) / 4))"
	fi
	;;
esac

check() {
	rc=0
	# Not *.prom (the collector must not read it while it is written), a
	# fresh name each run (nothing planted at a known name is written
	# through).
	tmp=$(mktemp "$TEXTFILE_DIR/.gdrcheck.prom.XXXXXX")
	# shellcheck disable=SC2086 # bound and GDRCHECK_ARGS are word lists
	timeout -k 5 "$BUDGET" "$GDRCHECK" --format prometheus $bound $GDRCHECK_ARGS \
		>"$tmp" || rc=$?
	ok=1
	case $rc in
	0 | 1 | 3) [ -s "$tmp" ] || ok=0 ;;
	*) # usage error, crash, time-out: drop whatever it left
		: >"$tmp"
		ok=0
		;;
	esac
	cat >>"$tmp" <<-METRICS
		# HELP gdrcheck_textfile_exit_code Exit status of the last gdrcheck run as the textfile wrapper saw it (>3: crashed, 2: usage error).
		# TYPE gdrcheck_textfile_exit_code gauge
		gdrcheck_textfile_exit_code $rc
		# HELP gdrcheck_textfile_run_ok 1 when the last gdrcheck run left its metrics (exit 0, 1 or 3), 0 when it crashed, failed or timed out.
		# TYPE gdrcheck_textfile_run_ok gauge
		gdrcheck_textfile_run_ok $ok
		# HELP gdrcheck_textfile_last_run_timestamp_seconds When the last gdrcheck run ended.
		# TYPE gdrcheck_textfile_last_run_timestamp_seconds gauge
		gdrcheck_textfile_last_run_timestamp_seconds $(date +%s)
	METRICS
	mode=644
	if [ -f "$prom" ] && [ ! -L "$prom" ]; then
		mode=$(stat -c %a "$prom" 2>/dev/null) || mode=644
	fi
	chmod "$mode" "$tmp"
	mv -fT "$tmp" "$prom"
	tmp=
	# gdrcheck_path_status: 0 READY, 1 READY-UNPROVEN, 2 UNKNOWN, 3 BLOCKED.
	verdicts=$(awk 'BEGIN { split("READY READY-UNPROVEN UNKNOWN BLOCKED", w, " ") }
		/^gdrcheck_path_status\{/ { split($1, a, "\"")
		printf "; %s %s", a[2], w[$2 + 1] }' "$prom")
	echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $NODE_NAME: gdrcheck exit $rc$verdicts"
	return "$rc"
}

mkdir -p "$TEXTFILE_DIR"
if [ "$ONCE" = 1 ]; then
	rc=0
	check || rc=$?
	exit "$rc"
fi
while :; do
	check || :
	sleep "$INTERVAL" &
	sleeper=$!
	wait "$sleeper" || :
	sleeper=
done
