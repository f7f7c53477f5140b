#!/bin/sh
# Build the Debian package from a copy of the tree and check it without
# installing it: dpkg-buildpackage -b -us -uc in a temporary directory,
# dpkg -x of the .deb into another, then the packaged binary is run from
# there (--version, --list-gates, and a full scenario run with the test
# doubles). Nothing is installed on this machine.
#
#   tests/examples/deb.sh        ends with "deb: N passed, N failed"
#
# Needs: dpkg-dev, debhelper, build-essential and the Build-Depends of
# debian/control (libibverbs-dev libjansson-dev libpci-dev zlib1g-dev pkg-config);
# python3 and the test doubles (make doubles) for the scenario run.
# KEEP=1 keeps the work directory.
# The checks are `sh -c '...$1...' sh ARG`: single quotes on purpose.
# shellcheck disable=SC2016
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
work=$(mktemp -d)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
# shellcheck source=SCRIPTDIR/../checks.sh
. tests/checks.sh
checks_begin deb

version=$(dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null)
upstream=${version%-*}
check "debian/changelog parses (version $version)" [ -n "$version" ]
check "Makefile VERSION ($upstream) matches debian/changelog" \
	grep -q "^VERSION *:= *$upstream\$" Makefile

for tool in dpkg-buildpackage dpkg-checkbuilddeps dh; do
	if ! command -v $tool >/dev/null 2>&1; then
		bad "$tool not found (Debian packages dpkg-dev, debhelper)"
		finish
	fi
done
if ! dpkg-checkbuilddeps >"$work/builddeps.log" 2>&1; then
	bad "build dependencies: $(cat "$work/builddeps.log")"
	finish
fi
ok "build dependencies installed"

# The sources only: tracked and untracked-but-not-ignored files (no build
# outputs, no VM images), as a source package would hold them.
src=$work/build/gdrcheck-$upstream
mkdir -p "$src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	# A tracked file deleted in the work tree only makes tar warn.
	git -C "$top" ls-files -z -c -o --exclude-standard |
		tar -C "$top" --null --no-recursion -T - -cf - 2>/dev/null |
		tar xf - -C "$src"
else
	tar cf - --exclude=./tests/vm --exclude=./tests/out --exclude=./build \
		--exclude='*.o' --exclude='*.so' . | tar xf - -C "$src"
fi
check "source copy has debian/rules and the Makefile" \
	sh -c '[ -x "$1/debian/rules" ] && [ -f "$1/Makefile" ]' sh "$src"

t0=$(date +%s)
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$work/build.log" 2>&1
rc=$?
t1=$(date +%s)
echo "dpkg-buildpackage -b -us -uc: exit $rc in $((t1 - t0)) s"
if [ $rc -ne 0 ]; then
	bad "dpkg-buildpackage failed:"
	tail -n 40 "$work/build.log"
	finish
fi
ok "dpkg-buildpackage -b -us -uc"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
deb=$work/build/gdrcheck_${version}_$arch.deb
check "built $(basename "$deb")" [ -f "$deb" ]
check "the smoke test ran (override_dh_auto_test)" \
	grep -q '^\./gdrcheck --list-gates' "$work/build.log"
check "hardening flags reached the compiler (-D_FORTIFY_SOURCE, -fstack-protector-strong)" \
	sh -c 'grep -E -- " -c -o gdrcheck.o gdrcheck.c$" "$1" >"$1.cc" &&
		grep -q -- "-D_FORTIFY_SOURCE=" "$1.cc" &&
		grep -q -- "-fstack-protector-strong" "$1.cc"' sh "$work/build.log"
check "linked with relro and now (BIND_NOW)" \
	sh -c 'readelf -d "$1" | grep -q BIND_NOW' sh "$src/debian/gdrcheck/usr/sbin/gdrcheck"

field() { dpkg-deb -f "$deb" "$1"; }
check "Depends: libc6, zlib1g and libjansson4 from shlibs (JSON is encoded by jansson)" \
	sh -c 'echo "$1" | grep -q "libc6" && echo "$1" | grep -q "zlib1g" &&
		echo "$1" | grep -q "libjansson"' sh "$(field Depends)"
check "Depends: no libibverbs, libpci or libcuda (dlopen'd)" \
	sh -c '! echo "$1" | grep -qE "libibverbs|libpci|libcuda"' sh "$(field Depends)"
check "Recommends: libibverbs1, libpci3" \
	sh -c 'echo "$1" | grep -q "libibverbs1" && echo "$1" | grep -q "libpci3"' sh "$(field Recommends)"

dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$work/files"
for f in /usr/sbin/gdrcheck /usr/share/man/man8/gdrcheck.8.gz \
	/usr/share/gdrcheck/gdrcheck-report.schema.json \
	/usr/share/doc/gdrcheck/copyright \
	/usr/share/doc/gdrcheck/examples/ci-gate/gdrcheck-gate.sh \
	/usr/share/doc/gdrcheck/examples/slurm/summary.sh \
	/usr/share/doc/gdrcheck/examples/kubernetes/gdrcheck-daemonset.yaml \
	/usr/share/doc/gdrcheck/examples/nhc/check_gdrcheck.nhc \
	/usr/share/doc/gdrcheck/examples/prometheus/gdrcheck.rules.test.yml; do
	check "package holds $f" grep -qx "$f" "$work/files"
done
check "package holds nothing under /usr/local" sh -c '! grep -q "^/usr/local" "$1"' sh "$work/files"

# dpkg -i, the throwaway way: unpack into a directory and run from there.
root=$work/root
dpkg -x "$deb" "$root"
bin=$root/usr/sbin/gdrcheck
check "--version says $upstream" sh -c '[ "$("$1" --version)" = "gdrcheck $2" ]' sh "$bin" "$upstream"
check "--list-gates lists host.kernel .. data.kmsg" \
	sh -c '"$1" --list-gates >"$2" && grep -q "^  host.kernel " "$2" && grep -q "^  data.kmsg " "$2"' \
	sh "$bin" "$work/gates"
check "the man page formats" sh -c 'zcat "$1" | groff -man -Tutf8 -ww >/dev/null' \
	sh "$root/usr/share/man/man8/gdrcheck.8.gz"
check "the schema is JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' \
	"$root/usr/share/gdrcheck/gdrcheck-report.schema.json"

# The packaged binary on a scenario, with the doubles: READY, as the golden.
sc=tests/scenarios/reg-ok
if [ -f tests/doubles/libcuda-fake.so ] && [ -f tests/doubles/libibverbs-fake.so ] &&
	python3 tests/scenarios/mksysroot.py $sc/sysroot.spec "$work/sysroot" >/dev/null 2>&1; then
	SOURCE_DATE_EPOCH=0 FAKE_CUDA_SCENARIO=$sc/cuda.conf FAKE_VERBS_SCENARIO=$sc/verbs.conf \
		GDRCHECK_LIBCUDA="$top/tests/doubles/libcuda-fake.so" \
		GDRCHECK_LIBIBVERBS="$top/tests/doubles/libibverbs-fake.so" \
		"$bin" --sysroot "$work/sysroot" --quiet >"$work/quiet" 2>&1
	rc=$?
	check "packaged binary on $sc: exit $(cat $sc/expected.rc), got $rc" [ "$rc" = "$(cat $sc/expected.rc)" ]
	check "packaged binary on $sc: READY by dmabuf" grep -q "^gdrcheck: READY (--require auto: any); dmabuf READY;" "$work/quiet"
else
	bad "scenario run: test doubles not built (make doubles) or sysroot failed"
fi
if command -v lintian >/dev/null 2>&1; then
	lintian --no-tag-display-limit "$deb" >"$work/lintian.log" 2>&1
	check "lintian: no error" sh -c '! grep -q "^E:" "$1"' sh "$work/lintian.log"
	grep -E '^[EW]:' "$work/lintian.log" | head -n 20
else
	echo "(lintian not installed: not run)"
fi
echo "deb: built and checked in $(($(date +%s) - t0)) s"
finish
