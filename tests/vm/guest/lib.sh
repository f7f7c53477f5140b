# shellcheck shell=sh
# Helpers for case scripts (sourced as /opt/vm/lib.sh in the guest).
#
#   . /opt/vm/lib.sh
#   check "rxe0 is registered" test -d /sys/class/infiniband/rxe0
#   jq_check "nic.port passes" report.json \
#       '.results[] | select(.gate=="nic.port" and .status=="PASS")'
#   need_gdrcheck            # exit 77 (SKIP) when the tool is not in the image
#
# Exit status of a case: 0 pass, 77 skip, anything else fail.
# Facts about the guest (from /run/vm/env, already in the environment):
#   VM_NETDEV VM_RXE VM_NIC_BDF VM_NIC_DN_BDF VM_NIC_UP_BDF VM_NIC_RP_BDF
#   VM_GPU_BDF VM_GPU_RP_BDF VM_RP3_BDF VM_ROOT_PORTS VM_NIC_SYSFS VM_GPU_SYSFS

if [ -z "${VM_NETDEV:-}" ] && [ -r /run/vm/env ]; then
	# shellcheck disable=SC1091
	. /run/vm/env
fi

export GDRCHECK=/opt/gdrcheck/gdrcheck
export GDRCHECK_DOUBLES=/opt/gdrcheck/doubles

say() { printf '%s\n' "$*"; }
fail() {
	printf 'FAIL: %s\n' "$*"
	exit 1
}
skip() {
	printf 'SKIP: %s\n' "$*"
	exit 77
}

# check DESCRIPTION COMMAND [ARGS...]: run the command, fail the case if it fails.
check() {
	_d=$1
	shift
	if "$@"; then
		say "ok: $_d"
	else
		fail "$_d ($*)"
	fi
}

# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then
		say "ok: $1 = $3"
	else
		fail "$1: expected '$2', got '$3'"
	fi
}

# jq_check DESCRIPTION FILE FILTER: jq -e FILTER FILE must succeed (the last
# output neither false nor null, and at least one output).
jq_check() {
	if jq -e "$3" "$2" >/dev/null; then
		say "ok: $1"
	else
		say "--- $2:"
		cat "$2"
		fail "$1 (jq -e '$3' $2)"
	fi
}

need_gdrcheck() {
	[ -x "$GDRCHECK" ] || skip "gdrcheck not built (no $GDRCHECK in the image)"
}

# ecap_offset BDF CAPID: offset (hex, no 0x) of extended capability CAPID
# (e.g. 0x0d = ACS), or empty. Walks the list with setpci.
ecap_offset() {
	_off=0x100
	_n=0
	while [ "$_n" -lt 64 ]; do
		_h=$(setpci -s "$1" "$(printf '%x' "$_off").l" 2>/dev/null) || return 0
		[ -n "$_h" ] || return 0
		_v=$((0x$_h))
		[ "$_v" -eq 0 ] || [ "$_v" -eq $((0xffffffff)) ] && return 0
		if [ $((_v & 0xffff)) -eq $(($2)) ]; then
			printf '%x\n' "$_off"
			return 0
		fi
		_off=$(((_v >> 20) & 0xffc))
		[ "$_off" -ge $((0x100)) ] || return 0
		_n=$((_n + 1))
	done
}
