#!/bin/sh
# pair-sweep.sh: gdrcheck between pairs of nodes (gdrcheck --listen/--peer),
# one `srun -N2` step per pair, pairs chosen to cover every node and every
# switch-to-switch hop named; then the pair table (pair-summary.sh).
#
#   pair-sweep.sh [-p PARTITION] [-w NODELIST] [-s SWITCHES] [-P PORT] [-O]
#                 [-c MAXPAR] [-t MINUTES] [-n] -d DIR [-- GDRCHECK OPTION...]
#
#   pair-sweep.sh -p gpu -s /etc/slurm/topology.conf \
#       -d /shared/gdrcheck/pairs-$(date -u +%Y%m%dT%H%M%SZ) -- --deadline 120
#
# Nodes: -w NODELIST (a Slurm host list, "gpu[01-16]"), else the
# responding nodes of -p PARTITION that can take a job (idle, mixed,
# allocated), else the nodes of the allocation this runs in
# (SLURM_JOB_NODELIST, inside salloc/sbatch).
# -s SWITCHES names the leaf switch of each node, either as lines
# "NODE SWITCH" or as Slurm's topology.conf ("SwitchName=leaf1
# Nodes=gpu[01-08]" lines; lines with Switches= only, the spines, are
# skipped). Nodes the file does not name share the switch "-".
# Pairs (pair-plan.awk): a ring under each switch (each node with the next,
# the last with the first), then one pair across every two switches,
# from the nodes with the fewest pairs so far. Without -s: one ring over
# all nodes. Every node is in two pairs where its switch has three or more
# nodes, so a bad node (both its pairs fail) is told from a bad link.
# Rounds: pairs that share no node run at the same time (-c MAXPAR caps a
# round; -c 1 runs one pair at a time, when the pairs of a round would
# share an oversubscribed spine and so lower each other's bandwidth).
# -n prints the plan (ROUND NODE_A NODE_B HOP) and runs nothing.
#
# Each pair is one step
#   srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --nodelist=A,B \
#        gdrcheck-pair.sh DIR PORT GDRCHECK-OPTION...
# whose task 0 runs `gdrcheck --listen PORT`, task 1 `gdrcheck --peer
# <task 0's NodeAddr>:PORT`; rail k of one node is tested against rail k
# of the other (GPU k and the NIC NCCL would give it; --pairs picks
# rails). The token: GDRCHECK_PEER_TOKEN if set here, --token-file if
# among the options, else a random one of this sweep's, exported for srun to
# pass on to both tasks (gdrcheck's own default, SLURM_JOB_ID, is guessable
# by anyone who can see the job).
# -P PORT: the listener's TCP port (default 18515, gdrcheck's); the
# bootstrap connection goes to NodeAddr, the RDMA traffic over the rails.
# -O: the k-th pair of a round listens on PORT+k-1 (nodes that share one
# host, as in a test with several slurmd on one machine).
# -t MINUTES: each step's --time (default 5).
#
# DIR (shared by every node, as the wrappers must be) receives
# pairs.plan (the plan), srun-A-B.log (each step's srun output),
# pair-L-C.{listener,connector}.{json,rc,err} (gdrcheck-pair.sh).
# Environment: SRUN, SINFO, SCONTROL, SRUN_ARGS (extra srun options, word
# split), GDRCHECK (the binary on the nodes), PAIR_WRAPPER.
# Exit: pair-summary.sh's (0 every pair good, 1 some link bad, 2 a report
# missing), 2 on a usage error or no nodes.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
SRUN=${SRUN:-srun}
SINFO=${SINFO:-sinfo}
SCONTROL=${SCONTROL:-scontrol}
SRUN_ARGS=${SRUN_ARGS:-}
PAIR_WRAPPER=${PAIR_WRAPPER:-$here/gdrcheck-pair.sh}

usage() {
	echo "usage: pair-sweep.sh [-p PARTITION] [-w NODELIST] [-s SWITCHES] [-P PORT] [-O] [-c MAXPAR] [-t MINUTES] [-n] -d DIR [-- GDRCHECK OPTION...]" >&2
	exit 2
}

part='' list='' switches='' port=18515 offset=0 maxpar=0 limit=5 dry=0 dir=''
while getopts p:w:s:P:Oc:t:nd: opt; do
	case $opt in
	p) part=$OPTARG ;;
	w) list=$OPTARG ;;
	s) switches=$OPTARG ;;
	P) port=$OPTARG ;;
	O) offset=1 ;;
	c) maxpar=$OPTARG ;;
	t) limit=$OPTARG ;;
	n) dry=1 ;;
	d) dir=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ -n "$dir" ] || [ $dry = 1 ] || usage
case $port$maxpar in *[!0-9]*) usage ;; esac

# ------------------------------------------------------------------ the nodes
if [ -n "$list" ]; then
	nodes=$("$SCONTROL" show hostnames "$list")
elif [ -n "$part" ]; then
	nodes=$("$SINFO" -h -N -r -p "$part" -t idle,mixed,allocated -o %N | sort -u)
elif [ -n "${SLURM_JOB_NODELIST:-}" ]; then
	nodes=$("$SCONTROL" show hostnames "$SLURM_JOB_NODELIST")
else
	echo "pair-sweep.sh: no nodes: give -w or -p, or run inside an allocation" >&2
	exit 2
fi

# NODE SWITCH, from "NODE SWITCH" lines or topology.conf's SwitchName=.
switch_map() {
	grep -v '^[[:space:]]*#' "$1" | while read -r first rest; do
		case $first in
		SwitchName=*)
			sw=${first#SwitchName=}
			members=$(printf '%s\n' "$rest" | tr ' ' '\n' | sed -n 's/^Nodes=//p')
			[ -n "$members" ] || continue
			"$SCONTROL" show hostnames "$members" | sed "s/\$/ $sw/"
			;;
		'') ;;
		*) echo "$first ${rest%% *}" ;;
		esac
	done
}
if [ -n "$switches" ]; then
	[ -r "$switches" ] || {
		echo "pair-sweep.sh: cannot read $switches" >&2
		exit 2
	}
	map=$(switch_map "$switches")
else
	map=
fi
input=$(echo "$nodes" | awk -v map="$map" '
	BEGIN { n = split(map, l, "\n"); for (i = 1; i <= n; i++) { split(l[i], f, " ");
		if (f[1] != "" && !(f[1] in sw)) sw[f[1]] = f[2] } }
	NF { print $1, ($1 in sw ? sw[$1] : "-") }')
plan=$(echo "$input" | awk -v maxpar="$maxpar" -f "$here/pair-plan.awk") || exit 2
if [ $dry = 1 ]; then
	echo "$plan"
	exit 0
fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tmp=$(mktemp "$dir/.pairs.plan.XXXXXX")
echo "$plan" >"$tmp"
mv -fT "$tmp" "$dir/pairs.plan"

# ------------------------------------------------------------------ the token
case " $* " in
*" --token"*) ;;
*)
	if [ -z "${GDRCHECK_PEER_TOKEN:-}" ]; then
		GDRCHECK_PEER_TOKEN=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
		[ ${#GDRCHECK_PEER_TOKEN} = 64 ] || {
			echo "pair-sweep.sh: cannot read 32 bytes of /dev/urandom for the token" >&2
			exit 2
		}
		export GDRCHECK_PEER_TOKEN
	fi
	;;
esac

# ------------------------------------------------------------------ the rounds
npairs=$(echo "$plan" | wc -l)
nrounds=$(echo "$plan" | tail -n 1 | cut -d ' ' -f 1)
echo "pair-sweep.sh: $(echo "$nodes" | wc -l) nodes, $npairs pairs in $nrounds rounds -> $dir" >&2
# run_pair A B PORT GDRCHECK-OPTION...: one pair's step.
run_pair() {
	a=$1 b=$2 p=$3
	shift 3
	[ -n "$part" ] && set -- --partition="$part" "$PAIR_WRAPPER" "$dir" "$p" "$@"
	[ -z "$part" ] && set -- "$PAIR_WRAPPER" "$dir" "$p" "$@"
	# shellcheck disable=SC2086 # SRUN_ARGS is a word list by design
	"$SRUN" --nodes=2 --ntasks=2 --ntasks-per-node=1 --nodelist="$a,$b" \
		--time="$limit" --job-name=gdrcheck-pair $SRUN_ARGS "$@"
}
r=1
while [ "$r" -le "$nrounds" ]; do
	k=0
	pids=
	for pr in $(echo "$plan" | awk -v r="$r" '$1 == r { print $2 "," $3 }'); do
		p=$port
		[ $offset = 1 ] && p=$((port + k))
		k=$((k + 1))
		run_pair "${pr%,*}" "${pr#*,}" "$p" "$@" >"$dir/srun-${pr%,*}-${pr#*,}.log" 2>&1 &
		pids="$pids $!"
	done
	for pid in $pids; do
		wait "$pid" || echo "pair-sweep.sh: round $r: an srun exited $? (see $dir/srun-*.log)" >&2
	done
	r=$((r + 1))
done
"$here/pair-summary.sh" "$dir"
