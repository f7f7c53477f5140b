#!/bin/sh
# gdrcheck-pair.sh: one side of a two-node gdrcheck run, as one task of
#
#   srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --nodelist=A,B \
#        gdrcheck-pair.sh DIR PORT [GDRCHECK OPTION]...
#
# (pair-sweep.sh runs one such step per pair). SLURM_PROCID decides the
# role: task 0 runs `gdrcheck --listen PORT`, task 1 `gdrcheck --peer
# ADDR:PORT`, ADDR being the NodeAddr of task 0's node (scontrol show node;
# the node name when scontrol cannot say). The token is gdrcheck's own
# choice: --token/--token-file in the options, else GDRCHECK_PEER_TOKEN
# (srun passes the environment on; pair-sweep.sh exports a random one),
# else derived from SLURM_JOB_ID, which both tasks of the step share.
#
# Files, PAIR being pair-L-C (L task 0's node, the listener; C task 1's,
# the connector; SLURMD_NODENAME, the name sinfo uses):
#   DIR/PAIR.listener.json  DIR/PAIR.listener.rc  DIR/PAIR.listener.err
#   DIR/PAIR.connector.json DIR/PAIR.connector.rc DIR/PAIR.connector.err
# .json is gdrcheck --json (written to a fresh mktemp name, renamed: never
# half a report, never through a link planted at the name), .rc its exit
# status (0 every rail passed, 1 a rail failed or the node is BLOCKED,
# 2 usage, 3 undecided: the peer never came; >3 crashed), .err its stderr
# when not empty. Exits 0 when the files were written, whatever the
# verdict, so that one side's failure does not make srun kill the other
# before it has written its report.
# Environment: GDRCHECK (the binary, default gdrcheck), SCONTROL.
set -eu

[ $# -ge 2 ] || {
	echo "usage: gdrcheck-pair.sh DIR PORT [GDRCHECK OPTION]..." >&2
	exit 2
}
dir=$1
port=$2
shift 2
GDRCHECK=${GDRCHECK:-gdrcheck}
SCONTROL=${SCONTROL:-scontrol}
: "${SLURM_PROCID:?not a Slurm task}" "${SLURM_STEP_NODELIST:?not a Slurm step}"
clean() { printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '_'; }

# Task k of a block distribution with one task per node runs on the k-th
# node of the step's node list.
nodes=$("$SCONTROL" show hostnames "$SLURM_STEP_NODELIST")
first=$(echo "$nodes" | sed -n 1p)
second=$(echo "$nodes" | sed -n 2p)
me=${SLURMD_NODENAME:-$(uname -n)}
pair=pair-$(clean "$first")-$(clean "$second")
case $SLURM_PROCID in
0) role=listener ;;
1) role=connector ;;
*)
	echo "gdrcheck-pair.sh: task $SLURM_PROCID: a pair step has two tasks (-n2)" >&2
	exit 2
	;;
esac

json=$(mktemp "$dir/.$pair.$role.json.XXXXXX")
err=$(mktemp "$dir/.$pair.$role.err.XXXXXX")
rcf=$(mktemp "$dir/.$pair.$role.rc.XXXXXX")
trap 'rm -f "$json" "$err" "$rcf"' EXIT

publish() {
	mode=644
	if [ -f "$2" ] && [ ! -L "$2" ]; then
		mode=$(stat -c %a "$2" 2>/dev/null) || mode=644
	fi
	chmod "$mode" "$1" && mv -fT "$1" "$2"
}

rc=0
if [ -z "$second" ] || [ "$me" != "$(echo "$nodes" | sed -n "$((SLURM_PROCID + 1))p")" ]; then
	# Not the layout the roles rely on (one task on each of two nodes).
	echo "gdrcheck-pair.sh: task $SLURM_PROCID runs on $me, step nodes '$(echo "$nodes" | tr '\n' ' ')': run with --nodes=2 --ntasks=2 --ntasks-per-node=1" >"$err"
	rc=2
else
	if [ "$role" = listener ]; then
		set -- --listen "$port" "$@"
	else
		addr=$("$SCONTROL" show node "$first" 2>/dev/null |
			sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p' | head -n 1) || addr=
		[ -n "$addr" ] || addr=$first
		case $addr in *:*) addr="[$addr]" ;; esac
		set -- --peer "$addr:$port" "$@"
	fi
	"$GDRCHECK" --json "$@" >"$json" 2>"$err" || rc=$?
fi
if [ -s "$json" ]; then
	publish "$json" "$dir/$pair.$role.json"
else
	rm -f "$dir/$pair.$role.json"
fi
if [ -s "$err" ]; then
	publish "$err" "$dir/$pair.$role.err"
else
	rm -f "$dir/$pair.$role.err"
fi
echo "$rc" >"$rcf"
publish "$rcf" "$dir/$pair.$role.rc"
