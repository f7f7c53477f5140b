#!/bin/sh
# Prepare the host for the real-kernel VM tests (tests/vm).
#
# Idempotent. Installs the Debian packages the harness needs with apt-get and
# fetches the Debian kernel package into tests/vm/.cache (extracted with
# dpkg-deb -x, never installed on the host). Needs root (or sudo) the first
# time; later runs only check and return quickly.
set -eu

VM_DIR=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
CACHE=${VM_CACHE:-$VM_DIR/.cache}
KDIR=$CACHE/kernel

# Host tools + the userspace that build-initramfs.sh copies into the guest.
PKGS="qemu-system-x86 busybox-static rdma-core ibverbs-providers ibverbs-utils \
iproute2 pciutils cpio gzip jq kmod nftables libibverbs-dev"

log() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }

if [ "$(id -u)" -eq 0 ]; then
	SUDO=
elif command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	SUDO=
fi

as_root() {
	if [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
		die "need root (or sudo) to run: $*"
	fi
	$SUDO "$@"
}

export DEBIAN_FRONTEND=noninteractive

missing=
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing="$missing $p"
	fi
done

apt_updated=0
apt_update() {
	if [ "$apt_updated" -eq 0 ]; then
		log "apt-get update"
		as_root apt-get update -q
		apt_updated=1
	fi
}

if [ -n "$missing" ]; then
	log "installing:$missing"
	# shellcheck disable=SC2086 # word splitting of the package list is intended
	if ! as_root apt-get install -y -q --no-install-recommends $missing; then
		apt_update
		# shellcheck disable=SC2086
		as_root apt-get install -y -q --no-install-recommends $missing
	fi
else
	log "packages already installed"
fi

# Optional: shellcheck for linting these scripts.
if ! command -v shellcheck >/dev/null 2>&1; then
	as_root apt-get install -y -q --no-install-recommends shellcheck >/dev/null 2>&1 ||
		log "note: shellcheck not installed (optional)"
fi

# --- guest kernel -----------------------------------------------------------
# linux-image-amd64 is a metapackage; resolve the versioned image package it
# depends on and extract that .deb into the cache.
kver_of_cache() {
	for v in "$KDIR"/boot/vmlinuz-*; do
		[ -f "$v" ] || continue
		k=${v##*/vmlinuz-}
		if [ -d "$KDIR/lib/modules/$k/kernel" ]; then
			printf '%s\n' "$k"
			return 0
		fi
	done
	return 1
}

if kver=$(kver_of_cache); then
	log "kernel $kver already in $KDIR"
else
	imgpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\).*/\1/p' | head -n 1)
	if [ -z "$imgpkg" ]; then
		apt_update
		imgpkg=$(apt-cache depends linux-image-amd64 |
			sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\).*/\1/p' | head -n 1)
	fi
	[ -n "$imgpkg" ] || die "cannot resolve the kernel package behind linux-image-amd64"
	mkdir -p "$CACHE/debs"
	deb=$(find "$CACHE/debs" -name "${imgpkg}_*.deb" | head -n 1)
	if [ -z "$deb" ]; then
		log "downloading $imgpkg"
		# apt-get download writes to the current directory; as root it warns
		# that the _apt sandbox cannot write there, which is harmless.
		if ! (cd "$CACHE/debs" && apt-get download -q "$imgpkg"); then
			apt_update
			(cd "$CACHE/debs" && apt-get download -q "$imgpkg")
		fi
	fi
	deb=$(find "$CACHE/debs" -name "${imgpkg}_*.deb" | head -n 1)
	[ -n "$deb" ] || die "download of $imgpkg failed"
	log "extracting $deb"
	rm -rf "$KDIR.tmp"
	mkdir -p "$KDIR.tmp"
	dpkg-deb -x "$deb" "$KDIR.tmp"
	rm -rf "$KDIR"
	mv "$KDIR.tmp" "$KDIR"
	kver=$(kver_of_cache) || die "no vmlinuz/modules in $deb"
	log "kernel $kver extracted to $KDIR"
fi
# The .deb does not ship modules.dep (its postinst runs depmod); generate it
# inside the extracted tree.
if [ ! -s "$KDIR/lib/modules/$kver/modules.dep" ]; then
	log "depmod -b $KDIR $kver"
	depmod -b "$KDIR" "$kver"
fi
printf '%s\n' "$kver" >"$CACHE/kernel-version"

# --- sanity -------------------------------------------------------------------
for b in qemu-system-x86_64 cpio gzip; do
	command -v "$b" >/dev/null 2>&1 || die "$b not found after install"
done
[ -x /bin/busybox ] || die "/bin/busybox (busybox-static) not found"
log "ok (kernel $kver, $(qemu-system-x86_64 --version | head -n 1))"
