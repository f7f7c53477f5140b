#!/bin/sh
# Install, from Debian packages only, what building gdrcheck and running every
# test needs (CI runs this on a fresh machine). Idempotent. Runs as root;
# started by another user it re-runs itself through sudo.
#   tests/install-deps.sh           everything the tests need
#   tests/install-deps.sh --build   only what building and running gdrcheck needs
# prometheus: its promtool checks the --format prometheus output
# (tests/validate-formats.py runs `promtool check metrics` when present).
# mmdebstrap: tests/check-image.py builds the Kubernetes image in Debian roots.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || {
		echo "install-deps: not root and no sudo: run it as root" >&2
		exit 1
	}
	exec sudo "$0" "$@"
fi
build_only=0
case ${1:-} in
--build) build_only=1 ;;
"") ;;
*)
	echo "usage: tests/install-deps.sh [--build]" >&2
	exit 2
	;;
esac
# Building and running gdrcheck: libibverbs/libpci headers only (both are
# dlopen'd or linked as the Makefile says), jansson, zlib.
build_pkgs="build-essential pkg-config libibverbs-dev libpci-dev libjansson-dev zlib1g-dev"
pkgs="build-essential clang libclang-rt-dev pkg-config libibverbs-dev libpci-dev libjansson-dev \
libcmocka-dev zlib1g-dev python3 python3-jsonschema man-db groff-base \
pciutils \
shellcheck jq python3-yaml dpkg-dev debhelper time procps \
munge slurmctld slurmd slurm-client prometheus mmdebstrap"
# node and npm (tests/check-k8s.sh fetches its validator from npm): Debian's
# when the machine has none of its own.
if [ $build_only -eq 0 ] && ! { command -v node && command -v npm; } >/dev/null 2>&1; then
	pkgs="$pkgs nodejs npm"
fi
[ $build_only -eq 1 ] && pkgs=$build_pkgs
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# Only the programs: the daemons the tests need (munged, slurmctld,
	# slurmd, promtool's prometheus) are started by the tests themselves.
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	# shellcheck disable=SC2086 # a word list by design
	apt-get install -y -q --no-install-recommends $missing
fi
[ $build_only -eq 1 ] && exit 0
# The real-kernel harness: qemu, the Debian kernel, rdma-core for the guest.
"$top/tests/vm/setup.sh"
