#!/bin/sh
# gdrcheck-nfd.sh: gdrcheck's verdict as node labels, through
# node-feature-discovery's `local` source (a features.d file).
#
#   gdrcheck-nfd.sh [--from REPORT.json]
#
# Runs `gdrcheck --json` (or, with --from, reads a report a previous run
# wrote) and writes FEATURES_FILE, one key=value per line, with an expiry
# header so that the labels vanish when this script stops running:
#
#   # +expiry-time=2026-12-01T10:00:00Z
#   gdrcheck.ready=true                 exit status 0 under --require
#   gdrcheck.verdict=READY              READY, BLOCKED, UNKNOWN; ERROR when
#                                       gdrcheck left no usable report
#   gdrcheck.mechanism=dmabuf           the working paths (READY, or
#                                       READY-UNPROVEN under --no-alloc):
#                                       dmabuf, peermem, dmabuf_peermem,
#                                       dmabuf_peermem_nccl, or none
#   gdrcheck.rails=8                    GPUs with at least one READY NIC pair
#   gdrcheck.gpus=8                     GPUs CUDA sees (gpu.visible PASS)
#   gdrcheck.require=nccl               the policy the verdict is under (the
#                                       effective one under --require auto)
#   gdrcheck.gate=nic.devices           when not READY: the first decisive
#   gdrcheck.reason=NO_RDMA_DEVICE      gate and its reason code
#
# nfd-worker turns each key into the label feature.node.kubernetes.io/KEY
# (e.g. feature.node.kubernetes.io/gdrcheck.ready=true). Values are valid
# label values (<= 63 characters of [A-Za-z0-9._-]). The file is written
# to a fresh mktemp file in the same directory (a dot name: nfd-worker
# skips it; never a fixed name, so nothing planted there is written
# through), given the mode of the file it replaces (0644 for a new one),
# and renamed onto FEATURES_FILE (a link there is replaced, not followed),
# so nfd-worker never reads half of it.
#
# Environment:
#   GDRCHECK        the binary (default gdrcheck on PATH)
#   GDRCHECK_ARGS   gdrcheck options, word split (default --no-alloc: the
#                   node runs jobs; the policy is gdrcheck's default,
#                   --require auto)
#   FEATURES_FILE   default /etc/kubernetes/node-feature-discovery/features.d/gdrcheck
#   EXPIRY_SECONDS  the labels' lifetime (default 7200: two hourly runs)
#   GDRCHECK_INTERVAL  when set: run every that many seconds until TERM
#                   (the DaemonSet's loop, gdrcheck-nfd-daemonset.yaml);
#                   unset: run once
#   JQ              default jq
# Exit (run once): gdrcheck's status (0, 1, 3), 4 when it left no usable
# report (the file then says verdict ERROR, ready false), 2 usage error.
set -eu

GDRCHECK=${GDRCHECK:-gdrcheck}
GDRCHECK_ARGS=${GDRCHECK_ARGS---no-alloc}
FEATURES_FILE=${FEATURES_FILE:-/etc/kubernetes/node-feature-discovery/features.d/gdrcheck}
EXPIRY_SECONDS=${EXPIRY_SECONDS:-7200}
JQ=${JQ:-jq}
INTERVAL=${GDRCHECK_INTERVAL:-}
here=$(cd "$(dirname "$0")" && pwd)
# cause.jq sits next to this script in the image; in the source tree it
# is examples/slurm/cause.jq.
CAUSE_DIR=${CAUSE_DIR:-$here}
[ -r "$CAUSE_DIR/cause.jq" ] || CAUSE_DIR=$here/../slurm

from=
case ${1:-} in
--from)
	[ $# -eq 2 ] || {
		echo "usage: gdrcheck-nfd.sh [--from REPORT.json]" >&2
		exit 2
	}
	from=$2
	;;
'') ;;
*)
	echo "usage: gdrcheck-nfd.sh [--from REPORT.json]" >&2
	exit 2
	;;
esac
case $EXPIRY_SECONDS in
'' | *[!0-9]*)
	echo "gdrcheck-nfd: EXPIRY_SECONDS must be whole seconds" >&2
	exit 2
	;;
esac
case $INTERVAL in
*[!0-9]*)
	echo "gdrcheck-nfd: GDRCHECK_INTERVAL must be whole seconds" >&2
	exit 2
	;;
esac

dir=$(dirname "$FEATURES_FILE")
mkdir -p "$dir"
tmp=
report=$(mktemp)
sleeper=
trap 'rm -f "$report"; [ -z "$tmp" ] || rm -f "$tmp"' EXIT
# TERM (the kubelet stopping the pod) ends the wait at once.
trap '[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null; exit 0' TERM INT

label() {
	rc=0
	if [ -n "$from" ]; then
		cp "$from" "$report" || rc=4
		rc_from=$("$JQ" -er '.verdict.exit_code' "$report" 2>/dev/null) || rc=4
		[ $rc = 4 ] || rc=$rc_from
	else
		: >"$report" # no report from a previous round
		# shellcheck disable=SC2086 # GDRCHECK_ARGS is a word list by design
		"$GDRCHECK" --json --output "$report" $GDRCHECK_ARGS || rc=$?
	fi

	expiry=$(date -u -d "@$(($(date +%s) + EXPIRY_SECONDS))" +%Y-%m-%dT%H:%M:%SZ)
	labels=
	if [ "$rc" = 0 ] || [ "$rc" = 1 ] || [ "$rc" = 3 ]; then
		# shellcheck disable=SC2016 # a jq program
		labels=$("$JQ" -r -L "$CAUSE_DIR" --argjson rc "$rc" '
			include "cause";
			def lv: tostring | gsub("[^A-Za-z0-9._-]"; "_") | .[0:63]
				| sub("^[^A-Za-z0-9]+"; "") | sub("[^A-Za-z0-9]+$"; "");
			if .verdict.exit_code != $rc then error("exit status disagrees") else . end
			| ([.paths | to_entries[] | select(.value.verdict | path_ready) | .key]) as $ready
			| (causes[0] // {}) as $c
			| "gdrcheck.ready=\(if $rc == 0 then "true" else "false" end)",
			  "gdrcheck.verdict=\(.verdict.status | lv)",
			  "gdrcheck.mechanism=\(if ($ready | length) == 0 then "none" else ($ready | join("_")) end)",
			  "gdrcheck.rails=\([.paths[].ready[]?.gpu] | unique | length)",
			  "gdrcheck.gpus=\([.results[] | select(.gate == "gpu.visible" and .status == "PASS") | .subject] | unique | length)",
			  "gdrcheck.require=\(.require | lv)",
			  (if $c.gate then "gdrcheck.gate=\($c.gate | lv)" else empty end),
			  (if $c.reason_code then "gdrcheck.reason=\($c.reason_code | lv)" else empty end)
		' "$report" 2>/dev/null) || labels=
	fi
	if [ -z "$labels" ]; then
		echo "gdrcheck-nfd: no usable report (gdrcheck status $rc): labels say ERROR" >&2
		rc=4
		labels=$(printf 'gdrcheck.ready=false\ngdrcheck.verdict=ERROR')
	fi
	# features.d reads every file: a dot file is skipped by nfd-worker.
	tmp=$(mktemp "$dir/.$(basename "$FEATURES_FILE").XXXXXX")
	{
		echo "# +expiry-time=$expiry"
		printf '%s\n' "$labels"
	} >"$tmp"
	mode=644
	if [ -f "$FEATURES_FILE" ] && [ ! -L "$FEATURES_FILE" ]; then
		mode=$(stat -c %a "$FEATURES_FILE" 2>/dev/null) || mode=644
	fi
	chmod "$mode" "$tmp"
	mv -fT "$tmp" "$FEATURES_FILE"
	tmp=
	echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) gdrcheck-nfd: exit $rc: $(printf '%s' "$labels" | tr '\n' ' ')"
	return "$rc"
}

if [ -z "$INTERVAL" ] || [ -n "$from" ]; then
	rc=0
	label || rc=$?
	exit "$rc"
fi
while :; do
	label || :
	sleep "$INTERVAL" &
	sleeper=$!
	wait "$sleeper" || :
	sleeper=
done
