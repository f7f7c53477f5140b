#!/bin/sh
# Smoke test of the libcuda/libibverbs test doubles, without make.
#
#   tests/doubles/selftest.sh [DOUBLES_DIR]
#
# Without DOUBLES_DIR the three doubles are built fresh into a scratch
# directory with the Makefile's flags (never a stale .so); with it, the
# .so files already there (e.g. tests/doubles after `make doubles`) are
# tested. CC defaults to cc. Prints "selftest: N passed, N failed".
set -eu

cd "$(dirname "$0")/../.."
CC=${CC:-cc}
WARN="-Wall -Wextra -Wmissing-prototypes -Wstrict-prototypes -Wshadow \
-Wformat=2 -Wformat-security -Wpointer-arith -Wcast-align -Wwrite-strings \
-Wundef -Wmissing-declarations -Wvla -Wnull-dereference -Wno-unused-parameter"
D=tests/doubles
SO="-std=gnu11 -O1 -g -fPIC -shared $WARN -D_GNU_SOURCE -I."

work=$(mktemp -d "${TMPDIR:-/tmp}/fake-selftest.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ $# -ge 1 ]; then
	dir=$1
else
	dir=$work
	$CC $SO -Wl,-soname,libcuda.so.1 -o "$dir/libcuda-fake.so" \
		$D/fake_cuda.c $D/fake_scenario.c
	$CC $SO -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=$D/libibverbs.map \
		-o "$dir/libibverbs-fake.so" $D/fake_verbs.c $D/fake_scenario.c
	$CC $SO -DFAKE_VERBS_OLD -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=$D/libibverbs-old.map \
		-o "$dir/libibverbs-fake-old.so" $D/fake_verbs.c $D/fake_scenario.c
	$CC $SO -Wl,-soname,libmlx5.so.1 \
		-Wl,--version-script=$D/libmlx5.map \
		-o "$dir/libmlx5-fake.so" $D/fake_mlx5.c $D/fake_scenario.c -ldl
	$CC $SO -DFAKE_MLX5_OLD -Wl,-soname,libmlx5.so.1 \
		-Wl,--version-script=$D/libmlx5-old.map \
		-o "$dir/libmlx5-fake-old.so" $D/fake_mlx5.c $D/fake_scenario.c -ldl
fi

$CC -std=gnu11 -O1 -g $WARN -D_GNU_SOURCE -I. -o "$work/selftest" \
	$D/selftest.c -ldl
mkdir "$work/run"
"$work/selftest" "$dir" "$work/run"
