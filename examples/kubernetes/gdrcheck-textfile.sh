#!/bin/sh
# gdrcheck-textfile.sh: the DaemonSet's loop (gdrcheck-daemonset.yaml).
#
# Every GDRCHECK_INTERVAL seconds: gdrcheck --format prometheus into a
# temporary file in TEXTFILE_DIR, this script's own metrics appended, then
# one rename onto gdrcheck.prom. node_exporter's textfile collector reads only
# *.prom files, and a rename within one directory is atomic, so it never
# scrapes half a file. A run that leaves no report (a crash, a usage error
# in GDRCHECK_ARGS) still replaces the file: the old gdrcheck metrics go
# away and gdrcheck_textfile_exit_code says why, so a stale READY never
# lingers.
#
# One log line per run on stdout: the node, the exit status and each path's
# verdict (kubectl logs). The exit status itself is in the metrics:
#   gdrcheck_exit_code{require=...}      gdrcheck's (absent after a crash)
#   gdrcheck_textfile_exit_code          what this script saw (always)
#   gdrcheck_textfile_last_run_timestamp_seconds
#
# Environment:
#   GDRCHECK           the binary (default gdrcheck on PATH)
#   GDRCHECK_ARGS      options for gdrcheck, word split (e.g. --require dmabuf)
#   GDRCHECK_INTERVAL  seconds between runs (default 3600)
#   GDRCHECK_ONCE      1: run once and exit with gdrcheck's status
#   TEXTFILE_DIR       default /var/lib/node_exporter/textfile
#   NODE_NAME          for the log line (default uname -n)
set -eu

GDRCHECK=${GDRCHECK:-gdrcheck}
GDRCHECK_ARGS=${GDRCHECK_ARGS:-}
INTERVAL=${GDRCHECK_INTERVAL:-3600}
ONCE=${GDRCHECK_ONCE:-0}
TEXTFILE_DIR=${TEXTFILE_DIR:-/var/lib/node_exporter/textfile}
NODE_NAME=${NODE_NAME:-$(uname -n)}

prom="$TEXTFILE_DIR/gdrcheck.prom"
# Not *.prom: the collector must not read it while it is being written.
tmp="$TEXTFILE_DIR/.gdrcheck.prom.tmp.$$"

sleeper=
trap 'rm -f "$tmp"' EXIT
# TERM (the kubelet stopping the pod) ends the wait at once, sleep included.
trap '[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null; exit 0' TERM INT

check() {
	rc=0
	rm -f "$tmp"
	# shellcheck disable=SC2086 # GDRCHECK_ARGS is a word list by design
	"$GDRCHECK" --format prometheus --output "$tmp" $GDRCHECK_ARGS || rc=$?
	case $rc in
	0 | 1 | 3) [ -s "$tmp" ] || : >"$tmp" ;;
	*) : >"$tmp" ;; # usage error or crash: drop whatever it left
	esac
	cat >>"$tmp" <<-METRICS
		# HELP gdrcheck_textfile_exit_code Exit status of the last gdrcheck run as the textfile wrapper saw it (>3: crashed, 2: usage error).
		# TYPE gdrcheck_textfile_exit_code gauge
		gdrcheck_textfile_exit_code $rc
		# HELP gdrcheck_textfile_last_run_timestamp_seconds When the last gdrcheck run ended.
		# TYPE gdrcheck_textfile_last_run_timestamp_seconds gauge
		gdrcheck_textfile_last_run_timestamp_seconds $(date +%s)
	METRICS
	chmod 0644 "$tmp"
	mv -f "$tmp" "$prom"
	verdicts=$(awk '/^gdrcheck_path_verdict\{/ && $2 == 1 {
		split($1, a, "\""); printf "; %s %s", a[2], a[4] }' "$prom")
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
