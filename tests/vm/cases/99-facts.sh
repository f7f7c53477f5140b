#!/bin/sh
# Not a test: facts about soft-RoCE's sysfs and config-space access that
# gate authors need (see the case log, VM_VERBOSE=1 or
# tests/vm/.cache/run/cases/99-facts.log). Fails only if a fact cannot be
# gathered at all.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh

show() {
	say "\$ $*"
	"$@" 2>&1 || say "(exit status $?)"
	say
}

check "rxe0 is up" rxe_ready rxe0
ib=/sys/class/infiniband/rxe0
ndevs=$ib/ports/1/gid_attrs/ndevs
show ls -la "$ib/"
# One file per GID table entry (1024 for rxe): the head, then a summary.
say "\$ ls -la $ndevs/ | head -n 8"
# shellcheck disable=SC2012 # the listing itself is the fact asked for
ls -la "$ndevs/" | head -n 8
say "... $(find "$ndevs" -mindepth 1 | wc -l) entries; mode/owner counts:"
# shellcheck disable=SC2012
ls -l "$ndevs/" | awk 'NR > 1 { print "  " $1, $3, $4 }' | sort | uniq -c
say "readable (populated) entries, grep -H . ndevs/*:"
grep -H . "$ndevs"/* 2>/dev/null | sed "s|^$ndevs/|  ndevs/|" || true
say
if [ -e "$ib/parent" ]; then
	show cat "$ib/parent"
else
	say "$ib/parent does not exist"
	say
fi
show ls -la "$ib/device"
show readlink -f "$ib"
show readlink -f "/sys/class/net/$VM_NETDEV/device"
show readlink -f "/sys/class/net/$VM_NETDEV/device/.."
show ls -l /dev/infiniband/

cfg=/sys/bus/pci/devices/$VM_NIC_RP_BDF/config
say "--- $cfg as root ($(id -u)):"
show ls -l "$cfg"
say "bytes readable: $(wc -c <"$cfg")"
od -A x -t x1z "$cfg" | head
say
say "--- $cfg as $VM_USER ($(as_user id -u)):"
# Opened by the user (the kernel checks the opener's credentials).
# shellcheck disable=SC2016 # expanded by the inner shell
user_n=$(as_user sh -c 'wc -c <"$1"' sh "$cfg")
say "bytes readable: $user_n"
# shellcheck disable=SC2016
as_user sh -c 'od -A x -t x1z "$1" | head' sh "$cfg"
say
root_n=$(wc -c <"$cfg")
say "config space: root reads $root_n bytes, an unprivileged user $user_n bytes"
check "an unprivileged user gets fewer config bytes than root" test "$user_n" -lt "$root_n"
