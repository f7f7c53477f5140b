#!/bin/sh
# sweep.sh: run gdrcheck on every node of a Slurm allocation or partition,
# one task per node, then print the fleet table (summary.sh).
#
#   sweep.sh [-N NODES] [-p PARTITION] [-w NODELIST] [-t MINUTES] -d DIR \
#            [-- GDRCHECK OPTION...]
#
#   sweep.sh -N 16 -p gpu -d /shared/gdrcheck/$(date -u +%Y%m%dT%H%M%SZ) \
#            -- --require dmabuf
#
# DIR must be on a file system every node sees (it receives NODE.json,
# NODE.rc, NODE.err), and so must gdrcheck-node.sh (it sits next to this
# script; set NODE_WRAPPER to put it elsewhere, e.g. after
# `sbcast gdrcheck-node.sh /tmp/gdrcheck-node.sh` inside an allocation).
# Inside an salloc/sbatch allocation -N and -p can be left out: srun uses the
# allocation's nodes.
#
# What each task runs is, in effect,
#   srun -N NODES --ntasks-per-node=1 gdrcheck --json --output DIR/%hostname%.json
# except that srun has no %hostname%: gdrcheck-node.sh names the file.
# The nodes need the GPUs and RDMA devices free enough for a 2 MiB
# allocation per GPU; pass --no-alloc to gdrcheck for nodes running jobs
# (then no path can be proven READY), or --exclusive through SRUN_ARGS.
#
# Environment: SRUN (default srun), SRUN_ARGS (extra srun options, word
# split), GDRCHECK (the binary on the nodes), NODE_WRAPPER.
# Exit: summary.sh's (0 every node READY, 1 not, 2 no report).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
SRUN=${SRUN:-srun}
SRUN_ARGS=${SRUN_ARGS:-}
NODE_WRAPPER=${NODE_WRAPPER:-$here/gdrcheck-node.sh}

usage() {
	echo "usage: sweep.sh [-N NODES] [-p PARTITION] [-w NODELIST] [-t MINUTES] -d DIR [-- GDRCHECK OPTION...]" >&2
	exit 2
}

nodes='' part='' list='' dir='' limit=10
while getopts N:p:w:t:d: opt; do
	case $opt in
	N) nodes=$OPTARG ;;
	p) part=$OPTARG ;;
	w) list=$OPTARG ;;
	t) limit=$OPTARG ;;
	d) dir=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ -n "$dir" ] || usage

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

set -- "$NODE_WRAPPER" "$dir" "$@"
# srun's own options, in front of the wrapper.
[ -n "$list" ] && set -- --nodelist="$list" "$@"
[ -n "$part" ] && set -- --partition="$part" "$@"
[ -n "$nodes" ] && set -- --nodes="$nodes" "$@"
# The wrapper exits 0 whatever the verdict, so one BLOCKED node does not end
# the step. A node whose task never ran has neither NODE.json nor NODE.rc and
# so is absent from the table: compare "nodes:" with the count you asked for.
srun_rc=0
# shellcheck disable=SC2086 # SRUN_ARGS is a word list by design
"$SRUN" --ntasks-per-node=1 --time="$limit" --job-name=gdrcheck $SRUN_ARGS "$@" ||
	srun_rc=$?
if [ "$srun_rc" -ne 0 ]; then
	echo "sweep.sh: srun exited $srun_rc; some nodes may have no report" >&2
fi
"$here/summary.sh" "$dir"
