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
prometheus \
shellcheck jq python3-yaml dpkg-dev debhelper time procps"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# shellcheck disable=SC2086 # a word list by design
	apt-get install -y -q --no-install-recommends $missing
fi
# The real-kernel harness: qemu, the Debian kernel, rdma-core for the guest.
"$top/tests/vm/setup.sh"
