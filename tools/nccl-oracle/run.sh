#!/bin/sh
# Run the NCCL oracle (built by build.sh) on one scenario and print its
# answer as sorted, indented JSON.  Usage: run.sh TAG SCENARIO_DIR [BUILD_DIR]
# The scenario's tree is mounted over /sys in a private mount namespace
# (unshare -m, needs root), so NCCL's unmodified sysfs reads see that node.
set -eu
tag=$1 dir=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${3:-${ORACLE_BUILD:-$top/tools/nccl-oracle/build}}
# Absolute: the library links made below point into it from elsewhere.
build=$(cd "$build" && pwd) || exit 1
bin=$build/oracle-$tag
[ -x "$bin" ] || "$here/build.sh" "$tag" "$build" >/dev/null
name=$(basename "$dir")
doubles=$top/tests/doubles
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$top/tests/scenarios/mksysroot.py" "$dir/sysroot.spec" "$work/root" >"$work/mksysroot.log" 2>&1 ||
	{ cat "$work/mksysroot.log" >&2; exit 1; }
# NCCL dlopens libibverbs/libmlx5/libnvidia-ml by soname: point those at
# the test doubles (libibverbs.so: the shim over the verbs double).  A scenario without nvml.conf has no NVML library.
mkdir "$work/lib"
ln -s "$build/libibverbs.so" "$work/lib/libibverbs.so"
ln -s "$doubles/libibverbs-fake.so" "$work/lib/libibverbs.so.1"
# The current libmlx5 double, also for a case that names an older one
# (--libmlx5 .../libmlx5-fake-old.so): with that one NCCL's IB plugin
# finds no device at all here (an oracle limit; see the exceptions in
# tests/nccl-oracle/*/nccl-gb300-dd-oldrdma.json).
ln -s "$doubles/libmlx5-fake.so" "$work/lib/libmlx5.so"
ln -s "$doubles/libmlx5-fake.so" "$work/lib/libmlx5.so.1"
cuda=/dev/null verbs=/dev/null
[ -f "$dir/cuda.conf" ] && cuda=$dir/cuda.conf
ln -s "$build/libnvidia-ml.so.1" "$work/lib/libnvidia-ml.so.1"
# NCCL needs NVML (a driver always ships it).  A case without nvml.conf
# gets one naming cuda.conf's GPUs with no NVLink (preset none).
nvml=$dir/nvml.conf
if ! [ -f "$nvml" ]; then
	nvml=$work/nvml.conf
	sed -n 's/^\(device_count\|gpu[0-9]*\.pci\) *= */\1 = /p' "$cuda" >"$nvml"
fi
[ -f "$dir/verbs.conf" ] && verbs=$dir/verbs.conf
# Only the case's NCCL_* settings (and the tree's /etc/nccl.conf) reach NCCL.
for v in $(env | sed -n 's/^\(NCCL_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
caseenv=""
[ -f "$dir/env" ] && caseenv=$(grep -v '^#' "$dir/env" | grep '^NCCL_' || true)
# A Grace tree (NVIDIA PCI root ports, 10de:22xx bridges) has arm64 CPUs:
# see seedCpuArch in oracle.cc.  ORACLE_CPU_ARCH set by the caller wins.
arch=${ORACLE_CPU_ARCH:-}
if [ -z "$arch" ]; then
	for f in "$work"/root/sys/bus/pci/devices/*; do
		if [ "$(cat "$f/vendor" 2>/dev/null)" = 0x10de ] &&
			case $(cat "$f/class" 2>/dev/null) in 0x0604*) true ;; *) false ;; esac; then
			arch=arm64
			break
		fi
	done
fi
# NCCL reads $HOME/.nccl.conf (the tree's home of the scenario runner's
# user, /home/gdrcheck) and /etc/nccl.conf: the tree's, over a copy of the
# host's /etc (a bind mount needs a file to cover; the host may have none).
conf=""
if [ -f "$work/root/etc/nccl.conf" ]; then
	cp -a /etc "$work/etc" 2>/dev/null || true
	cp "$work/root/etc/nccl.conf" "$work/etc/nccl.conf"
	conf="mount --bind '$work/etc' /etc &&"
fi
# NCCL 2.21/2.23 recurse without end on some trees: bounded stack and time.
# shellcheck disable=SC2086 # caseenv is a word list
# NCCL logs to stdout unless told otherwise: keep stdout for the JSON.
env -i PATH="$PATH" HOME="$work/root/home/gdrcheck" NCCL_DEBUG_FILE=/dev/stderr ${ORACLE_DEBUG:+NCCL_DEBUG=INFO} $caseenv \
	LD_LIBRARY_PATH="$work/lib" ORACLE_LIBCUDA="$doubles/libcuda-fake.so" \
	ORACLE_LIBNVML="$doubles/libnvidia-ml-fake.so" ORACLE_CPU_ARCH="$arch" \
	FAKE_CUDA_SCENARIO="$cuda" FAKE_VERBS_SCENARIO="$verbs" FAKE_NVML_SCENARIO="$nvml" \
	FAKE_SYSROOT="$work/root" \
	unshare -m sh -c "mount --make-rprivate / && mount --bind '$work/root/sys' /sys && $conf
		ulimit -s 8192; exec timeout 60 ${ORACLE_WRAP:-} '$bin' '$name'" >"$work/out" 2>"$work/err" && rc=0 || rc=$?
if [ "$rc" -ne 0 ] || ! [ -s "$work/out" ]; then
	why="oracle exited $rc"
	[ "$rc" -eq 124 ] && why="NCCL did not finish in 60 s"
	[ "$rc" -gt 128 ] && why="NCCL crashed (signal $((rc - 128)); stack overflow under ulimit -s 8192 if SIGSEGV)"
	ver=$(echo "$tag" | sed 's/^v//; s/-[0-9]*$//')
	printf '{"nccl": "%s", "scenario": "%s", "status": "error: %s", "gpus": []}\n' "$ver" "$name" "$why" >"$work/out"
	sed 's/^/oracle: /' "$work/err" | tail -5 >&2
fi
[ -n "${ORACLE_WRAP:-}" ] && { cat "$work/out" "$work/err"; exit 0; }
python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), indent=2, sort_keys=True))' <"$work/out"
