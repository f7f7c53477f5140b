#!/bin/sh
# Install, from Debian packages only, what building gdrcheck and running every
# test needs (CI runs this on a fresh machine). Idempotent; needs root.
# prometheus: its promtool checks the --format prometheus output
# (tests/validate-formats.py runs `promtool check metrics` when present).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
pkgs="build-essential clang libclang-rt-dev pkg-config libibverbs-dev libpci-dev libjansson-dev \
libcmocka-dev zlib1g-dev python3 python3-jsonschema man-db groff-base \
pciutils \
shellcheck jq python3-yaml dpkg-dev debhelper time procps \
munge slurmctld slurmd slurm-client prometheus"
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
# The real-kernel harness: qemu, the Debian kernel, rdma-core for the guest.
"$top/tests/vm/setup.sh"
