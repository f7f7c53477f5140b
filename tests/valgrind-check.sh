#!/bin/sh
# Memcheck pass (make valgrind): a representative subset of the scenarios
# and the options test run gdrcheck under valgrind, the forked worker
# included (valgrind follows fork by itself; --trace-children=yes also
# follows any exec). Any memcheck error or definite/indirect leak makes
# valgrind exit 99, which no golden expects; -q keeps stderr empty otherwise,
# and both suites fail on unexpected stderr. Suppressions (third-party noise
# only, each documented): tests/valgrind.supp.
#
#   tests/valgrind-check.sh [SCENARIO...]   ends "valgrind: N passed, N failed"
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
if ! command -v valgrind >/dev/null; then
	echo "valgrind: not installed (apt-get install valgrind)"
	echo "valgrind: 0 passed, 1 failed"
	exit 1
fi
# The registration path (real dma-buf MR and loopback through the doubles),
# a crash isolated in the worker, the old rdma-core, no driver, the real
# H200 capture, corrupted data, and the malformed sysfs fixtures. Cases with
# --timeout 1 are left out: valgrind's slow-down would time out healthy
# stages too.
if [ $# -eq 0 ]; then
	set -- reg-ok cuda-crash old-verbs no-nvidia-driver h200 data-corrupt \
		reg-dmabuf-eopnotsupp malformed-values malformed-huge malformed-fifo
fi
export GDRCHECK_WRAP="valgrind -q --leak-check=full \
--show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
--error-exitcode=99 \
--trace-children=yes --child-silent-after-fork=no \
--suppressions=$top/tests/valgrind.supp"
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
pass=0 fail=0
for s in scenarios options; do
	t0=$(date +%s)
	if [ $s = scenarios ]; then
		tests/run-scenarios.sh "$@" >"$log/$s" 2>&1
	else
		tests/check-options.sh >"$log/$s" 2>&1
	fi
	rc=$?
	line=$(grep -E '^[a-z]+: [0-9]+ passed, [0-9]+ failed' "$log/$s" | tail -n 1)
	p=$(echo "$line" | sed -nE 's/^[a-z]+: ([0-9]+) passed.*/\1/p')
	f=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
	p=${p:-0} f=${f:-1}
	[ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
	echo "$s under valgrind: $p passed, $f failed ($(($(date +%s) - t0)) s)"
	grep -E '^FAIL|^==[0-9]+==' "$log/$s" | head -n 60
	pass=$((pass + p)) fail=$((fail + f))
done
echo "valgrind: $pass passed, $fail failed"
[ $fail -eq 0 ]
