#!/bin/sh
# gdrcheck-health.sh: gdrcheck as a Slurm HealthCheckProgram.
#
#   slurm.conf:  HealthCheckProgram=/usr/share/doc/gdrcheck/examples/slurm/gdrcheck-health.sh
#                HealthCheckInterval=3600
#
# slurmd runs it as root with an empty environment (SLURMD_NODENAME only),
# at start-up and every HealthCheckInterval, and kills it after 60 s. It runs
# gdrcheck --json within HEALTH_BUDGET seconds, by default with gdrcheck's
# own policy (--require auto: nccl where NCCL is installed, else any) and
# --no-alloc (no GPU memory taken from the jobs running there), and then:
#
#   READY    (exit 0, also READY-UNPROVEN: --no-alloc on a healthy node)
#                      resumes the node if, and only if, it is drained with a
#                      reason this script set (the prefix "gdrcheck:"); a
#                      drain by an operator or another check is left alone
#   BLOCKED  (exit 1)  drains the node, reason
#                        gdrcheck: BLOCKED <paths> at <gate> (<subject>) <CODE>: <why>
#                      taken from the report's decisive results (cause.jq
#                      cause_line; <why> names the port of a lost rail),
#                      cut to 240 bytes, unless someone else drained it first
#   ERROR    anything else: gdrcheck undecided (exit 3: a probe failed or
#                      timed out, the --deadline was spent), a usage error (2), a crash, a
#                      time-out, no or unreadable JSON, a failing scontrol.
#                      The check did not judge the node, so the node is left
#                      as it is (a drain of ours stays: no proof it is
#                      healthy) and the failure is logged (syslog tag
#                      gdrcheck-health, and stdout/stderr for slurmd's log).
#                      HEALTH_ON_ERROR=drain drains instead, with the
#                      distinct reason "gdrcheck: ERROR <what>".
#
# One line on stdout per run. Exit: 0 READY, 1 BLOCKED, 3 ERROR (slurmd
# only logs a non-zero status; the action is the scontrol call).
#
# Settings: environment, else the file GDRCHECK_HEALTH_CONF (default
# /etc/default/gdrcheck-health, shell assignments; slurmd passes none):
#   GDRCHECK           the binary (default gdrcheck on PATH)
#   GDRCHECK_ARGS      gdrcheck options, word split (default --no-alloc:
#                      nodes run jobs; the policy is gdrcheck's default,
#                      --require auto)
#   HEALTH_IDLE_PROOF  1: when slurmctld shows the node IDLE (no job), run
#                      the full proof (GDRCHECK_ARGS without --no-alloc:
#                      a 2 MiB allocation per GPU, registered, one RDMA
#                      transfer); default 0. Costs one more scontrol call
#                      (4 s) before the run. Or, instead, set
#                      HealthCheckNodeState=IDLE and GDRCHECK_ARGS="" (only
#                      idle nodes are checked, always fully).
#   HEALTH_BUDGET      seconds for gdrcheck (default 45: slurmd kills the
#                      program at 60, and the two scontrol calls get 4 s
#                      each after it). gdrcheck gets --deadline BUDGET-5
#                      when its --help lists that option, else --timeout
#                      (BUDGET-5)/4 (the per-stage limit, four vendor
#                      stages); coreutils timeout kills it at BUDGET (+3 s
#                      for KILL).
#   HEALTH_ON_ERROR    log (default) or drain
#   HEALTH_REPORT_DIR  keep NODE.json and NODE.rc there (summary.sh reads
#                      them); default: not kept. Each is written to a
#                      mktemp file in that directory and renamed onto its
#                      name (a link there is replaced, not followed; the
#                      file's mode is kept)
#   SCONTROL           default scontrol; JQ default jq
set -eu

conf=${GDRCHECK_HEALTH_CONF:-/etc/default/gdrcheck-health}
if [ -r "$conf" ]; then
	# shellcheck disable=SC1090 # the operator's settings file
	. "$conf"
fi
# slurmd gives no PATH.
PATH=${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}
export PATH
GDRCHECK=${GDRCHECK:-gdrcheck}
GDRCHECK_ARGS=${GDRCHECK_ARGS---no-alloc}
HEALTH_IDLE_PROOF=${HEALTH_IDLE_PROOF:-0}
HEALTH_BUDGET=${HEALTH_BUDGET:-45}
HEALTH_ON_ERROR=${HEALTH_ON_ERROR:-log}
HEALTH_REPORT_DIR=${HEALTH_REPORT_DIR:-}
SCONTROL=${SCONTROL:-scontrol}
JQ=${JQ:-jq}
here=$(cd "$(dirname "$0")" && pwd)
node=${SLURMD_NODENAME:-$(hostname -s 2>/dev/null || uname -n)}
prefix="gdrcheck:"

log() {
	echo "gdrcheck-health: $node: $*"
	logger -t gdrcheck-health -- "$node: $*" 2>/dev/null || :
}

case $HEALTH_ON_ERROR in
log | drain) ;;
*)
	log "ERROR HEALTH_ON_ERROR must be log or drain, not '$HEALTH_ON_ERROR'"
	exit 3
	;;
esac
case $HEALTH_BUDGET in
'' | *[!0-9]*)
	log "ERROR HEALTH_BUDGET must be whole seconds, not '$HEALTH_BUDGET'"
	exit 3
	;;
esac
if [ "$HEALTH_BUDGET" -lt 10 ]; then
	log "ERROR HEALTH_BUDGET $HEALTH_BUDGET is below 10 s"
	exit 3
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gdrcheck-health.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The node as slurmctld sees it: "<STATE>\t<reason>" (reason without the
# " [user@time]" scontrol appends).
node_state() {
	timeout 4 "$SCONTROL" show node "$node" >"$work/node" 2>&1 || return 1
	st=$(sed -n 's/^ *State=\([^ ]*\).*/\1/p' "$work/node")
	rs=$(sed -n 's/^ *Reason=//p' "$work/node" | sed 's/ \[[^]]*\]$//')
	[ -n "$st" ] || return 1
	printf '%s\t%s\n' "$st" "$rs"
}

# drain REASON / resume: the node's state changes, logged.
drain() {
	if ! timeout 4 "$SCONTROL" update nodename="$node" state=drain reason="$1" \
		>"$work/scontrol" 2>&1; then
		log "ERROR scontrol drain failed: $(cat "$work/scontrol")"
		exit 3
	fi
	log "drained: $1"
}
resume() {
	if ! timeout 4 "$SCONTROL" update nodename="$node" state=resume \
		>"$work/scontrol" 2>&1; then
		log "ERROR scontrol resume failed: $(cat "$work/scontrol")"
		exit 3
	fi
	log "resumed (drained by gdrcheck before: $1)"
}

# publish SRC TARGET: SRC's content onto TARGET. A fresh mktemp file in
# TARGET's directory (never a fixed name: nothing planted there is written
# through), TARGET's mode kept (0644 for a new file), then one rename, which
# replaces a link at TARGET instead of following it (-T: nor into a
# directory it points to).
publish() {
	ptmp=$(mktemp "$(dirname "$2")/.${2##*/}.XXXXXX") || return 1
	pmode=644
	if [ -f "$2" ] && [ ! -L "$2" ]; then
		pmode=$(stat -c %a "$2" 2>/dev/null) || pmode=644
	fi
	if cat "$1" >"$ptmp" && chmod "$pmode" "$ptmp" && mv -fT "$ptmp" "$2"; then
		return 0
	fi
	rm -f "$ptmp"
	return 1
}

# The full proof on an idle node (HEALTH_IDLE_PROOF=1): GDRCHECK_ARGS
# without --no-alloc when slurmctld has no job on it (IDLE, also drained).
case $HEALTH_IDLE_PROOF in
0) ;;
1)
	if state=$(node_state); then
		case $(printf '%s' "$state" | cut -f 1) in
		IDLE | IDLE+*)
			args=
			for a in $GDRCHECK_ARGS; do
				[ "$a" = --no-alloc ] || args="$args $a"
			done
			GDRCHECK_ARGS=${args# }
			log "idle: the full proof (without --no-alloc)"
			;;
		esac
	fi
	;;
*)
	log "ERROR HEALTH_IDLE_PROOF must be 0 or 1, not '$HEALTH_IDLE_PROOF'"
	exit 3
	;;
esac

# The time bound: the whole-run --deadline where gdrcheck has it, else the
# per-stage --timeout; an option already in GDRCHECK_ARGS wins.
inner=$((HEALTH_BUDGET - 5))
case " $GDRCHECK_ARGS " in
*" --deadline"* | *" --timeout"* | *" -t "*) bound= ;;
*)
	if "$GDRCHECK" --help 2>/dev/null | grep -q -- '--deadline'; then
		bound="--deadline $inner"
	else
		bound="--timeout $((inner / 4))"
	fi
	;;
esac

rc=0
# shellcheck disable=SC2086 # bound and GDRCHECK_ARGS are word lists
timeout -k 3 "$HEALTH_BUDGET" "$GDRCHECK" --json --output "$work/report.json" \
	$bound $GDRCHECK_ARGS 2>"$work/stderr" || rc=$?

if [ -n "$HEALTH_REPORT_DIR" ] && mkdir -p "$HEALTH_REPORT_DIR" 2>/dev/null; then
	if [ -s "$work/report.json" ]; then
		publish "$work/report.json" "$HEALTH_REPORT_DIR/$node.json" ||
			log "cannot write $HEALTH_REPORT_DIR/$node.json"
	else
		rm -f "$HEALTH_REPORT_DIR/$node.json"
	fi
	echo "$rc" >"$work/rc"
	publish "$work/rc" "$HEALTH_REPORT_DIR/$node.rc" ||
		log "cannot write $HEALTH_REPORT_DIR/$node.rc"
fi

# What the run says: READY, BLOCKED, or why it says nothing.
verdict=ERROR
what=
json_rc=
if [ -s "$work/report.json" ]; then
	json_rc=$("$JQ" -er '.verdict.exit_code' "$work/report.json" 2>/dev/null) ||
		json_rc=
fi
case $rc in
0 | 1)
	if [ "$json_rc" = "$rc" ]; then
		verdict=BLOCKED
		[ "$rc" != 0 ] || verdict=READY
	elif [ -z "$json_rc" ]; then
		what="gdrcheck exited $rc but left no readable JSON report"
	else
		what="gdrcheck exited $rc but its report says exit_code $json_rc"
	fi
	;;
2) what="gdrcheck usage error (exit 2): $(head -n 1 "$work/stderr")" ;;
3)
	cause=$("$JQ" -r -L "$here" 'include "cause"; cause_text' \
		"$work/report.json" 2>/dev/null) || cause=
	what="gdrcheck undecided (exit 3)${cause:+: $cause}"
	;;
124 | 137) what="gdrcheck did not finish within HEALTH_BUDGET=${HEALTH_BUDGET}s" ;;
126 | 127) what="cannot run '$GDRCHECK' (exit $rc)" ;;
*)
	if [ "$rc" -gt 128 ]; then
		what="gdrcheck died with signal $((rc - 128))"
	else
		what="gdrcheck failed with exit $rc"
	fi
	;;
esac

if ! state=$(node_state); then
	log "ERROR cannot read the node's state: $(head -n 1 "$work/node")"
	exit 3
fi
st=$(printf '%s' "$state" | cut -f 1)
reason=$(printf '%s' "$state" | cut -f 2-)
drained=0
case $st in *DRAIN*) drained=1 ;; esac
ours=0
case $reason in "$prefix"*) ours=$drained ;; esac

case $verdict in
READY)
	# READY, or READY-UNPROVEN (--no-alloc: the proof was not attempted).
	word=$("$JQ" -r '.verdict.status' "$work/report.json" 2>/dev/null) ||
		word=READY
	if [ $ours = 1 ]; then
		resume "$reason"
	elif [ $drained = 1 ]; then
		log "$word; drained by someone else ($reason): left drained"
	else
		log "$word"
	fi
	exit 0
	;;
BLOCKED)
	cause=$("$JQ" -r -L "$here" 'include "cause"; cause_line' "$work/report.json") ||
		cause="see gdrcheck --json"
	want=$(printf '%s BLOCKED %s' "$prefix" "$cause" | cut -c 1-240)
	if [ $drained = 1 ] && [ $ours = 0 ]; then
		log "BLOCKED ($cause); already drained by someone else ($reason): left as is"
	elif [ $ours = 1 ] && [ "$reason" = "$want" ]; then
		log "BLOCKED, still drained: $want"
	else
		drain "$want"
	fi
	exit 1
	;;
esac

sed "s/^/gdrcheck-health: $node: gdrcheck stderr: /" "$work/stderr" | head -n 5
if [ "$HEALTH_ON_ERROR" = drain ] && [ $drained = 0 ]; then
	drain "$(printf '%s ERROR %s' "$prefix" "$what" | cut -c 1-240)"
else
	log "ERROR, node state left as is ($st${reason:+, reason: $reason}): $what"
fi
exit 3
