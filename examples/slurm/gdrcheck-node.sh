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
# Each file is written to a fresh mktemp name in DIR (a dot name; never a
# fixed one, so nothing planted at a known name is written through), given
# the mode of the file it replaces (0644 for a new one) and renamed onto its
# name (a link there is replaced, not followed).
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

json=$(mktemp "$dir/.$node.json.XXXXXX")
err=$(mktemp "$dir/.$node.err.XXXXXX")
rcf=$(mktemp "$dir/.$node.rc.XXXXXX")
trap 'rm -f "$json" "$err" "$rcf"' EXIT

# publish TMP TARGET: TMP (ours, from mktemp) renamed onto TARGET, with
# TARGET's mode when it is a file.
publish() {
	mode=644
	if [ -f "$2" ] && [ ! -L "$2" ]; then
		mode=$(stat -c %a "$2" 2>/dev/null) || mode=644
	fi
	chmod "$mode" "$1" && mv -fT "$1" "$2"
}

rc=0
"$GDRCHECK" --json "$@" >"$json" 2>"$err" || rc=$?
if [ -s "$json" ]; then
	publish "$json" "$dir/$node.json"
else
	# No report (crash, usage error): leave no stale one from a last sweep.
	rm -f "$dir/$node.json"
fi
if [ -s "$err" ]; then
	publish "$err" "$dir/$node.err"
else
	rm -f "$dir/$node.err"
fi
echo "$rc" >"$rcf"
publish "$rcf" "$dir/$node.rc"
