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
mkdir -p "$out"
make -C "$top" doubles >/dev/null || exit 1
for tag in "$@"; do
	if ! "$here/build.sh" "$tag" "$build" >"$build.$tag.log" 2>&1; then
		echo "$tag: build failed (see $build.$tag.log)"
		continue
	fi
	mkdir -p "$out/$tag"
	for d in "$top"/tests/scenarios/nccl-* "$top"/tests/scenarios/node-*; do
		[ -f "$d/sysroot.spec" ] || continue   # generated (gen) cases: not recorded
		name=$(basename "$d")
		"$here/run.sh" "$tag" "$d" "$build" >"$out/$tag/$name.json" 2>"$build.$tag.$name.err"
		echo "$tag $name: $(sed -n 's/^  "status": "\(.*\)",*$/\1/p' "$out/$tag/$name.json" | cut -c1-100)"
	done
done
