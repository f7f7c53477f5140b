#!/bin/sh
# shellcheck disable=SC2086 # $flags, $inc and $objs are word lists
# Build the NCCL oracle at one NCCL tag: extract NCCL's sources, generate
# nccl.h as NCCL's src/Makefile does, compile NCCL's topology code unmodified
# with our main and stubs.  Usage: build.sh TAG OUTDIR [NCCL_GIT]
set -eu
tag=$1 out=$2
git_dir=${3:-${NCCL_GIT:-/work/.mirror/NVIDIA+nccl/repo}}
here=$(cd "$(dirname "$0")" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/src-$tag
# Extracted once per OUTDIR; NCCL objects are rebuilt only when missing.
if [ ! -f "$src/.extracted" ]; then
	rm -rf "$src" "$out/obj-$tag" && mkdir -p "$src"
	git --git-dir="$git_dir" archive "$tag" src makefiles | tar -x -C "$src"
	touch "$src/.extracted"
fi
eval "$(sed -n 's/^\(NCCL_[A-Z]*\|PKG_REVISION\) *:= *\(.*\)$/\1="\2"/p' "$src/makefiles/version.mk")"
code=$(printf "%d%02d%02d" "$NCCL_MAJOR" "$NCCL_MINOR" "$NCCL_PATCH")
mkdir -p "$src/gen"
sed -e "s/\${nccl:Major}/$NCCL_MAJOR/g" -e "s/\${nccl:Minor}/$NCCL_MINOR/g" \
    -e "s/\${nccl:Patch}/$NCCL_PATCH/g" -e "s/\${nccl:Suffix}/$NCCL_SUFFIX/g" \
    -e "s/\${nccl:Version}/$code/g" "$src/src/nccl.h.in" >"$src/gen/nccl.h"
s=$src/src
# NCCL's own files: the topology model and what it calls for sysfs, NVML,
# parameters and logging, and NCCL's IB net plugin (run over the verbs
# double).  What they call beyond that is stubbed (stubs.cc).
files="graph/xml.cc graph/topo.cc graph/paths.cc misc/nvmlwrap.cc misc/param.cc misc/utils.cc debug.cc
	misc/ibvwrap.cc misc/ibvsymbols.cc misc/mlx5dvwrap.cc misc/mlx5dvsymbols.cc misc/socket.cc"
# The IB plugin: one file until 2.29, a directory since.
if [ -d "$s/transport/net_ib" ]; then
	for f in "$s"/transport/net_ib/*.cc; do files="$files transport/net_ib/${f##*/}"; done
else
	files="$files transport/net_ib.cc"
fi
# 2.30+: an OS layer (os/linux*.cc, built with -DNCCL_OS_LINUX as NCCL's
# makefiles/common.mk does) and a parameter registry (param/, less the
# ncclparam tool).
[ -d "$s/os" ] && files="$files os/linux.cc os/linux_ipcsocket.cc os/linux_socket_pair.cc"
if [ -d "$s/param" ]; then
	for f in "$s"/param/*.cc; do
		[ "${f##*/}" = ncclparam.cc ] || files="$files param/${f##*/}"
	done
fi
inc="-I$src/gen -I$s/include -I$s/include/plugin -I$s -I$cuda/include -I$cuda/include/cccl"
[ -d "$s/os" ] && inc="$inc -DNCCL_OS_LINUX"
flags="-std=c++17 -O1 -g -fPIC -w -DNCCL_ORACLE_CODE=$code"
# Before 2.27 cudawrap.h names driver entry points by unversioned PFN_x
# types, which CUDA 13's cudaTypedefs.h no longer defines: alias each to
# the newest versioned type the header has (types only; nothing calls them).
python3 - "$s/include/cudawrap.h" "$cuda/include/cudaTypedefs.h" >"$src/gen/pfn_compat.h" <<'PY'
import re, sys
wrap, tdefs = (open(f).read() for f in sys.argv[1:])
for sym in sorted(set(re.findall(r"DECLARE_CUDA_PFN_EXTERN\((\w+)\)", wrap))):
    if re.search(r"\bPFN_%s\b" % sym, tdefs):
        continue
    vers = [int(v) for v in re.findall(r"\bPFN_%s_v(\d+)\b" % sym, tdefs)]
    if vers:
        print("typedef PFN_%s_v%d PFN_%s;" % (sym, max(vers), sym))
PY
if [ -s "$src/gen/pfn_compat.h" ]; then
	sed -i '1i #include <cudaTypedefs.h>' "$src/gen/pfn_compat.h"
	flags="$flags -include $src/gen/pfn_compat.h"
fi
objs=""
for f in $files; do
	# mlx5dv wrappers (Data Direct) exist since 2.24 only.
	case $f in misc/mlx5dv*) [ -f "$s/$f" ] || continue ;; esac
	o=$out/obj-$tag/$(echo "$f" | tr / _).o
	mkdir -p "$(dirname "$o")"
	[ -f "$o" ] || g++ $flags $inc -c "$s/$f" -o "$o"
	objs="$objs $o"
done
g++ $flags $inc -c "$here/stubs.cc" -o "$out/obj-$tag/stubs.o"
g++ $flags $inc -c "$here/oracle.cc" -o "$out/obj-$tag/oracle.o"
g++ -o "$out/oracle-$tag" $objs "$out/obj-$tag/stubs.o" "$out/obj-$tag/oracle.o" -ldl -lpthread
# The verbs shim (see verbs_shim.c), one per build dir.
doubles=$here/../../tests/doubles
[ -f "$doubles/libibverbs-fake.so" ] || make -C "$here/../.." doubles >/dev/null
gcc -shared -fPIC -O1 -o "$out/libibverbs.so" "$here/verbs_shim.c" \
	-Wl,--version-script="$here/verbs_shim.map" -Wl,--no-as-needed "$doubles/libibverbs-fake.so"
gcc -shared -fPIC -O1 -o "$out/libnvidia-ml.so.1" "$here/nvml_shim.c" -ldl
echo "$out/oracle-$tag"
