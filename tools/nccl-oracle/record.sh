#!/bin/sh
# Record the NCCL oracle's answers for every nccl-* and node-* scenario at
# every tag that builds: tests/nccl-oracle/<tag>/<scenario>.json.
# Usage: record.sh [TAG...]   (NCCL_GIT: NCCL's git dir; ORACLE_BUILD: build dir)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${ORACLE_BUILD:-$here/build}
[ $# -gt 0 ] || set -- v2.28.9-1 v2.30.7-1 v2.27.5-1 v2.23.4-1 v2.21.5-1
out=$top/tests/nccl-oracle
mkdir -p "$out" "$build"
make -C "$top" doubles >/dev/null || exit 1
git_dir=${NCCL_GIT:-/work/.mirror/NVIDIA+nccl/repo}
for tag in "$@"; do
	if ! "$here/build.sh" "$tag" "$build" >"$build/$tag.log" 2>&1; then
		echo "$tag: build failed (see $build/$tag.log)"
		continue
	fi
	mkdir -p "$out/$tag"
	for d in "$top"/tests/scenarios/nccl-* "$top"/tests/scenarios/node-*; do
		[ -f "$d/sysroot.spec" ] || continue   # generated (gen) cases: not recorded
		name=$(basename "$d")
		"$here/run.sh" "$tag" "$d" "$build" >"$build/$tag.$name.json" 2>"$build/$tag.$name.err"
		# The written exceptions (tests/check-nccl-oracle.py) outlive a
		# re-recording: carried into the new answers.
		python3 - "$out/$tag/$name.json" "$build/$tag.$name.json" <<'PY'
import json, sys
old, new = sys.argv[1], sys.argv[2]
doc = json.load(open(new))
try:
    exc = json.load(open(old)).get("exceptions")
except (OSError, ValueError):
    exc = None
if exc:
    doc["exceptions"] = exc
with open(old, "w") as f:
    f.write(json.dumps(doc, indent=2, sort_keys=True) + "\n")
PY
		echo "$tag $name: $(sed -n 's/^  "status": "\(.*\)",*$/\1/p' "$out/$tag/$name.json" | cut -c1-100)"
	done
done
# The README names every tag recorded so far (a run may redo only some).
{
	echo "# NCCL oracle recordings"
	echo
	echo "Last written by \`tools/nccl-oracle/record.sh $*\` (\`make nccl-oracle-record\`)"
	echo "on $(date -u +%Y-%m-%d), gdrcheck $(git -C "$top" rev-parse --short HEAD)."
	echo "Each <tag>/<scenario>.json is what NCCL's own topology code, compiled from"
	echo "that tag (see tools/nccl-oracle/README.md for what is NCCL's and what is a"
	echo "stub), answers on the scenario's tree. Tags and their commits:"
	echo
	for d in "$out"/v*/; do
		tag=$(basename "$d")
		echo "- $tag $(git --git-dir="$git_dir" rev-parse "$tag^{commit}" 2>/dev/null)"
	done
	echo
	echo "Re-record: \`make nccl-oracle-record NCCL_GIT=/path/to/nccl/.git\` (root:"
	echo "the oracle mounts each tree over /sys in a private mount namespace)."
} >"$out/README.md"
