#!/bin/sh
# Build the guest initramfs for the real-kernel VM tests (tests/vm).
#
# Output: tests/vm/.cache/initramfs.cpio.gz (override with VM_INITRAMFS).
# Needs: ./setup.sh run once (kernel extracted to .cache/kernel, host packages).
#
# Guest layout:
#   /init                    tests/vm/guest/init
#   /etc/vm/modules          kernel modules to insmod, dependency order
#   /opt/vm/lib.sh           helpers for case scripts
#   /opt/vm/*.jq             jq modules for lib.sh report_valid (schema, report)
#   /opt/vm/cases/*.sh       tests/vm/cases/*.sh
#   /opt/gdrcheck/gdrcheck   ./gdrcheck from the repo root, when built
#   /opt/gdrcheck/doubles/   tests/doubles/*.so, when built
#   /opt/gdrcheck/gdrcheck-report.schema.json   report/'s (VM_REPORT_SCHEMA)
#   /etc/passwd              root and gdrtest (uid/gid 1000, for non-root cases)
#   /bin/sh                  dash (so PATH lookups reach iproute2's ip, lspci,
#                            ...: busybox's own sh would run its applets first)
set -eu

VM_DIR=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
ROOT=$(CDPATH='' cd -- "$VM_DIR/../.." && pwd)
CACHE=${VM_CACHE:-$VM_DIR/.cache}
OUT=${VM_INITRAMFS:-$CACHE/initramfs.cpio.gz}
STAGE=$CACHE/initramfs.d
MULTIARCH=x86_64-linux-gnu
# Project artifacts (overridable, e.g. to test the harness with a stand-in).
GDRCHECK_BIN=${VM_GDRCHECK:-$ROOT/gdrcheck}
DOUBLES_DIR=${VM_DOUBLES_DIR:-$ROOT/tests/doubles}
# The report schema that belongs to that binary (lib.sh report_valid).
SCHEMA=${VM_REPORT_SCHEMA:-$ROOT/report/gdrcheck-report.schema.json}

# Modules to load in the guest; dependencies are added from modules.dep.
# nf_tables: the peer cases' firewall (nft dropping UDP 4791 on one end);
# crc32c_generic: libcrc32c (nf_tables needs it) asks the crypto API for crc32c.
MODULES="crc32_generic virtio_pci virtio_net veth ib_core ib_uverbs \
udp_tunnel ip6_udp_tunnel rdma_rxe crc32c_generic nf_tables"

# Userspace binaries (real ones, not busybox applets).
BINS="/bin/dash /usr/sbin/ip /usr/bin/rdma /usr/bin/lspci /usr/bin/setpci \
/usr/bin/ibv_devinfo /usr/bin/ibv_devices /usr/bin/ibv_rc_pingpong \
/usr/bin/ibv_ud_pingpong /usr/bin/jq /usr/bin/setpriv /usr/bin/od /usr/sbin/nft"

log() { printf 'build-initramfs: %s\n' "$*"; }
die() { printf 'build-initramfs: ERROR: %s\n' "$*" >&2; exit 1; }

[ -r "$CACHE/kernel-version" ] || die "no kernel in $CACHE: run tests/vm/setup.sh first"
KVER=$(cat "$CACHE/kernel-version")
KDIR=$CACHE/kernel
MODDIR=$KDIR/lib/modules/$KVER
[ -s "$MODDIR/modules.dep" ] || die "$MODDIR/modules.dep missing: run tests/vm/setup.sh"
[ -x /bin/busybox ] || die "/bin/busybox missing: run tests/vm/setup.sh"

rm -rf "$STAGE"
mkdir -p "$STAGE"
# Merged-/usr layout, like the host: ldd paths (/lib/..., /lib64/...) resolve.
mkdir -p "$STAGE/usr/bin" "$STAGE/usr/sbin" "$STAGE/usr/lib/$MULTIARCH" \
	"$STAGE/usr/lib64" "$STAGE/etc" "$STAGE/proc" "$STAGE/sys" "$STAGE/dev" \
	"$STAGE/tmp" "$STAGE/run" "$STAGE/root" "$STAGE/mnt" "$STAGE/var" \
	"$STAGE/opt/vm/cases" "$STAGE/etc/vm"
ln -s usr/bin "$STAGE/bin"
ln -s usr/sbin "$STAGE/sbin"
ln -s usr/lib "$STAGE/lib"
ln -s usr/lib64 "$STAGE/lib64"
ln -s ../run "$STAGE/var/run"

# copy_file SRC [DEST]: copy SRC (following symlinks) to DEST inside the
# stage (default: same path as on the host).
copy_file() {
	dest=${2:-$1}
	mkdir -p "$STAGE$(dirname -- "$dest")"
	cp -L "$1" "$STAGE$dest"
}

# copy_bin SRC [DEST]: copy an executable or shared library plus the closure
# of shared libraries that ldd lists for it.
copy_bin() {
	[ -e "$1" ] || die "missing $1"
	copy_file "$1" "${2:-$1}"
	# ldd exits non-zero for static binaries ("not a dynamic executable").
	libs=$(ldd "$1" 2>/dev/null | sed -n \
		-e 's/^.*=> \(\/[^ ]*\) (0x.*$/\1/p' \
		-e 's/^[[:space:]]*\(\/[^ ]*\) (0x.*$/\1/p') || true
	for l in $libs; do
		[ -e "$STAGE$l" ] || copy_file "$l"
	done
}

# --- busybox + real tools ------------------------------------------------------
copy_file /bin/busybox /usr/bin/busybox
for b in $BINS; do
	copy_bin "$b"
done
ln -sf dash "$STAGE/usr/bin/sh"
# Busybox applets for everything the real tools above do not provide.
for a in $(/bin/busybox --list); do
	case $a in sh | ash | busybox | linuxrc) continue ;; esac
	[ -e "$STAGE/usr/bin/$a" ] || [ -e "$STAGE/usr/sbin/$a" ] ||
		ln -s busybox "$STAGE/usr/bin/$a"
done

# --- rdma-core: libibverbs + rxe provider ---------------------------------------
copy_bin "/usr/lib/$MULTIARCH/libibverbs.so.1"
copy_bin "/usr/lib/$MULTIARCH/libibverbs/librxe-rdmav34.so"
copy_file /etc/libibverbs.d/rxe.driver
# rc_pair (guest/rc_pair.c): the peer cases' verbs-level probe, two RC QPs
# on two devices with every call's errno and completion status.
if command -v cc >/dev/null 2>&1 && [ -r /usr/include/infiniband/verbs.h ]; then
	cc -O2 -Wall -Wextra -o "$CACHE/rc_pair" "$VM_DIR/guest/rc_pair.c" -libverbs ||
		die "cc guest/rc_pair.c failed"
	copy_bin "$CACHE/rc_pair" /usr/bin/rc_pair
else
	log "note: no cc or libibverbs-dev: rc_pair not built (40-peer-wire fails)"
fi
# libpci for gdrcheck (also in lspci's closure).
copy_bin "/usr/lib/$MULTIARCH/libpci.so.3"
if [ -r /usr/share/misc/pci.ids ]; then
	copy_file /usr/share/misc/pci.ids
fi

# --- kernel modules --------------------------------------------------------------
# mod_path NAME: the modules.dep path of module NAME ('-' and '_' are equal).
mod_path() {
	n=$(printf '%s' "$1" | tr '-' '_')
	awk -F: -v n="$n" '{
		p = $1; b = p; sub(/^.*\//, "", b); sub(/\.ko(\.[a-z]+)?$/, "", b);
		gsub(/-/, "_", b); if (b == n) { print p; exit } }' "$MODDIR/modules.dep"
}
# mod_deps PATH: the dependencies of PATH as listed in modules.dep.
mod_deps() {
	awk -F: -v p="$1" '$1 == p { print $2; exit }' "$MODDIR/modules.dep"
}
ORDER=$CACHE/modules.order.tmp
: >"$ORDER"
# add_mod PATH: append PATH after its dependencies (depth first).
add_mod() {
	grep -qxF "$1" "$ORDER" && return 0
	for d in $(mod_deps "$1"); do
		add_mod "$d"
	done
	grep -qxF "$1" "$ORDER" || printf '%s\n' "$1" >>"$ORDER"
}
for m in $MODULES; do
	if grep -qE "/$m\.ko" "$MODDIR/modules.builtin" 2>/dev/null; then
		continue # built into the kernel
	fi
	p=$(mod_path "$m")
	[ -n "$p" ] || die "module $m not in $MODDIR/modules.dep"
	add_mod "$p"
done
while read -r p; do
	mkdir -p "$STAGE/lib/modules/$KVER/$(dirname -- "$p")"
	case $p in
	*.ko) cp "$MODDIR/$p" "$STAGE/lib/modules/$KVER/$p" ;;
	*.ko.xz) xz -dc "$MODDIR/$p" >"$STAGE/lib/modules/$KVER/${p%.xz}" ;;
	*.ko.zst) zstd -qdc "$MODDIR/$p" >"$STAGE/lib/modules/$KVER/${p%.zst}" ;;
	*.ko.gz) gzip -dc "$MODDIR/$p" >"$STAGE/lib/modules/$KVER/${p%.gz}" ;;
	*) die "unknown module format: $p" ;;
	esac
	printf '/lib/modules/%s/%s\n' "$KVER" "${p%.ko*}.ko" >>"$STAGE/etc/vm/modules"
done <"$ORDER"
rm -f "$ORDER"
for f in modules.builtin modules.builtin.modinfo modules.order; do
	if [ -r "$MODDIR/$f" ]; then
		cp "$MODDIR/$f" "$STAGE/lib/modules/$KVER/"
	fi
done
# Indexes for just the included modules (lspci -k and libkmod want them).
depmod -b "$STAGE" "$KVER" 2>/dev/null || log "note: depmod for the image failed"
# The kernel's own build config, where Debian installs it (/boot/config-KVER;
# the Debian kernel has no CONFIG_IKCONFIG, so no /proc/config.gz): what
# host.kconfig reads on a real node (case 32-kconfig).
if [ -r "$KDIR/boot/config-$KVER" ]; then
	mkdir -p "$STAGE/boot"
	cp "$KDIR/boot/config-$KVER" "$STAGE/boot/"
fi

# --- project artifacts -------------------------------------------------------------
if [ -x "$GDRCHECK_BIN" ]; then
	# The ldd closure lands at the host paths (/lib/x86_64-linux-gnu/...).
	copy_bin "$GDRCHECK_BIN" /opt/gdrcheck/gdrcheck
	log "included $GDRCHECK_BIN as /opt/gdrcheck/gdrcheck"
else
	log "note: $GDRCHECK_BIN not built; not included (gdrcheck cases will SKIP)"
fi
found_double=0
for so in "$DOUBLES_DIR"/*.so; do
	[ -e "$so" ] || continue
	copy_bin "$so" "/opt/gdrcheck/doubles/${so##*/}"
	found_double=1
done
if [ "$found_double" -eq 1 ]; then
	log "included $DOUBLES_DIR/*.so as /opt/gdrcheck/doubles/"
fi
# Schema (if the tool ships one) for cases that want to look at it.
for s in "$ROOT"/*.schema.json "$ROOT"/schema/*.json; do
	if [ -e "$s" ]; then
		copy_file "$s" "/opt/gdrcheck/${s##*/}"
	fi
done
if [ -r "$SCHEMA" ]; then
	copy_file "$SCHEMA" /opt/gdrcheck/gdrcheck-report.schema.json
fi
cp "$VM_DIR/guest/lib.sh" "$STAGE/opt/vm/lib.sh"
cp "$VM_DIR"/guest/*.jq "$STAGE/opt/vm/"
for c in "$VM_DIR"/cases/*.sh; do
	if [ -e "$c" ]; then
		cp "$c" "$STAGE/opt/vm/cases/"
	fi
done
cp "$VM_DIR/guest/init" "$STAGE/init"
chmod 0755 "$STAGE/init" "$STAGE"/opt/vm/cases/* 2>/dev/null || true

# --- /etc -----------------------------------------------------------------------------
# gdrtest: the unprivileged user of the non-root cases (lib.sh as_user).
printf 'root:x:0:0:root:/root:/bin/sh\ngdrtest:x:1000:1000:gdrcheck test user:/tmp:/bin/sh\n' >"$STAGE/etc/passwd"
printf 'root:x:0:\ngdrtest:x:1000:\n' >"$STAGE/etc/group"
printf '127.0.0.1 localhost\n' >"$STAGE/etc/hosts"
printf '/lib/%s\n/usr/lib/%s\n/usr/lib\n' "$MULTIARCH" "$MULTIARCH" >"$STAGE/etc/ld.so.conf"
ldconfig -r "$STAGE" 2>/dev/null || log "note: ldconfig -r failed; relying on default paths"
printf '%s\n' "$KVER" >"$STAGE/etc/vm/kernel-version"

# --- pack -------------------------------------------------------------------------------
mkdir -p "$(dirname -- "$OUT")"
(cd "$STAGE" && find . -print | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) |
	gzip -1 >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
log "wrote $OUT ($(du -h "$OUT" | cut -f1), kernel $KVER, $(wc -l <"$STAGE/etc/vm/modules") modules)"
