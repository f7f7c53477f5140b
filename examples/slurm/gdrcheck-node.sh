#!/bin/sh
# gdrcheck-node.sh: the per-node step of sweep.sh (one Slurm task per node).
#
#   gdrcheck-node.sh DIR [GDRCHECK OPTION]...
#
# srun has no %hostname% pattern for --output, so this wrapper names the
# files itself:
#   DIR/NODE.json   gdrcheck --json, written to a temporary name first and
#                   renamed, so a reader never sees half a report
#   DIR/NODE.rc     gdrcheck's exit status (0 READY, 1 BLOCKED, 2 usage,
#                   3 undecided, >3 crashed)
#   DIR/NODE.err    gdrcheck's stderr, only when not empty
# NODE is $SLURMD_NODENAME (the name sinfo/scontrol use), else uname -n.
# Always exits 0 when the files were written: the verdict is in NODE.rc, and
# one BLOCKED node must not make srun kill the other tasks.
# Environment: GDRCHECK (the binary, default gdrcheck on PATH).
set -eu

[ $# -ge 1 ] || {
	echo "usage: gdrcheck-node.sh DIR [GDRCHECK OPTION]..." >&2
	exit 2
}
dir=$1
shift
GDRCHECK=${GDRCHECK:-gdrcheck}
node=${SLURMD_NODENAME:-$(uname -n)}
node=$(printf '%s' "$node" | tr -c 'A-Za-z0-9._-' '_')

tmp="$dir/.$node.json.tmp.$$"
rc=0
"$GDRCHECK" --json --output "$tmp" "$@" 2>"$dir/$node.err" || rc=$?
if [ -s "$tmp" ]; then
	mv -f "$tmp" "$dir/$node.json"
else
	# No report (crash, usage error): leave no stale one from a last sweep.
	rm -f "$tmp" "$dir/$node.json"
fi
[ -s "$dir/$node.err" ] || rm -f "$dir/$node.err"
echo "$rc" >"$dir/$node.rc.tmp.$$"
mv -f "$dir/$node.rc.tmp.$$" "$dir/$node.rc"
