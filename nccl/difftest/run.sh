#!/bin/sh
# Differential check of nccl/rules.c and nccl/conf.c against NCCL's own
# functions: ncclGetLevel (src/graph/paths.cc), parseStringList/matchIfList
# (src/misc/utils.cc), setEnvFile (src/misc/param.cc) and mergePathType
# with the PATH_* numbers (src/graph/paths.cc, topo.h, graph.h) are extracted from
# a local NCCL git repository at two releases (old and new parsers), built
# beside our model and fed the same random inputs. Nothing of NCCL is kept
# in this tree: the functions are read from the repository given.
#
# usage: nccl/difftest/run.sh NCCL_GIT_DIR [OLD_TAG NEW_TAG]
#   e.g. nccl/difftest/run.sh /work/.mirror/NVIDIA+nccl/repo
# Needs gcc, g++ and zlib. Prints "difftest: N passed, N failed".
set -eu
git_dir=${1:?usage: $0 NCCL_GIT_DIR [OLD_TAG NEW_TAG]}
old=${2:-v2.29.7-1}
new=${3:-v2.30.7-1}
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/nccl/difftest
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# Function bodies by name, from the line that starts them to the first "}"
# in column 0.
extract() { # tag file start-regex suffix
	git --git-dir="$git_dir" show "$1:$2" |
		awk -v re="$3" '$0 ~ re { p = 1 } p { print } p && /^}/ { p = 0 }' |
		sed "s/\(parseStringList\|matchIfList\|matchIf\|matchPort\|ncclGetLevel\|levelsOldToNew\|topoPathTypeStr\|setEnvFile\)\b/\1_$4/g"
}
for v in old new; do
	eval tag=\$$v
	extract "$tag" src/misc/utils.cc \
		'^(int parseStringList|static bool matchIf\\(|static bool matchPort|bool matchIfList)' $v |
		sed 's/, int\* ifId = NULL)/, int* ifId)/' >"$work/utils_$v.inc"
	extract "$tag" src/graph/paths.cc \
		'^(static const int levelsOldToNew|ncclResult_t ncclGetLevel)' $v \
		>"$work/level_$v.inc"
	git --git-dir="$git_dir" show "$tag:src/graph/topo.cc" |
		grep '^const char\* topoPathTypeStr\[\] *=' |
		sed "s/topoPathTypeStr/topoPathTypeStr_$v/" >"$work/names_$v.inc"
	extract "$tag" src/misc/param.cc '^(static )?void setEnvFile' $v \
		>"$work/conf_$v.inc"
done
old_code=$(echo "$old" | sed 's/^v\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\).*/\1 \2 \3/' |
	   awk '{ print $1 * 10000 + $2 * 100 + $3 }')
new_code=$(echo "$new" | sed 's/^v\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\).*/\1 \2 \3/' |
	   awk '{ print $1 * 10000 + $2 * 100 + $3 }')

flags="-O1 -g -fsanitize=address,undefined -D_GNU_SOURCE -I$top -I$work"
for s in nccl/rules nccl/conf access/sysroot access/capture access/outfile; do
	gcc -std=gnu11 $flags -c -o "$work/$(basename $s).o" "$top/$s.c"
done
for h in levels_hca conf; do
	g++ -std=gnu++17 $flags -w -DOLD_VER="$old_code" -DNEW_VER="$new_code" \
		-o "$work/$h" "$here/$h.cc" "$work"/rules.o "$work"/conf.o \
		"$work"/sysroot.o "$work"/capture.o "$work"/outfile.o -lz
done
pass=0 fail=0
for h in levels_hca conf; do
	if (cd "$work" && "./$h"); then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
# mergePathType (2.27.5+; before, addInterStep's std::max) and the PATH_*
# numbers, and the no-GDR step's PHB guard (2.21.5+), one build per
# release; the defines moved from topo.h to include/graph.h in 2.29.
for tag in v2.12.7-1 v2.20.5-1 v2.21.5-1 v2.26.6-1 v2.27.3-1 v2.27.5-1 \
	   v2.28.9-1 v2.29.7-1 v2.30.7-1; do
	code=$(echo "$tag" | sed 's/^v\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\).*/\1 \2 \3/' |
	       awk '{ print $1 * 10000 + $2 * 100 + $3 }')
	d=$work/paths_$code
	mkdir -p "$d"
	for f in src/graph/topo.h src/include/graph.h; do
		git --git-dir="$git_dir" show "$tag:$f" 2>/dev/null || true
	done | grep '^#define PATH_[A-Z0-9]* *[0-9]' >"$d/path_defs.inc"
	extract "$tag" src/graph/paths.cc '^static int mergePathType' x |
		sed 's/mergePathType_x/mergePathType/' >"$d/merge.inc"
	git --git-dir="$git_dir" show "$tag:src/graph/paths.cc" >"$d/paths.cc"
	# No mergePathType: addInterStep must take the max itself.
	if [ ! -s "$d/merge.inc" ]; then
		grep -q 'paths\[t2\]\[i2\]\.type = std::max(srcNode->paths\[tx\]\[ix\]\.type, cpuNode->paths\[t2\]\[i2\]\.type)' \
			"$d/paths.cc" || { echo "paths $tag: addInterStep merge not found"; fail=$((fail + 1)); continue; }
		echo 'static int mergePathType(int a, int b) { return std::max(a, b); }' >"$d/merge.inc"
	fi
	# The no-GDR step itself, and whether it tests < PATH_PHB.
	grep -q 'addInterStep(system, CPU, localCpu, GPU, g, NET, n)' "$d/paths.cc" ||
		{ echo "paths $tag: no-GDR step not found"; fail=$((fail + 1)); continue; }
	guard=0
	grep -q 'if (gpu->paths\[NET\]\[n\]\.type < PATH_PHB)' "$d/paths.cc" && guard=1
	g++ -std=gnu++17 $flags -w -I"$d" -DVER="$code" -DNOGDR_GUARD=$guard -o "$d/paths" \
		"$here/paths.cc" "$work"/rules.o
	if "$d/paths"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "difftest: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
