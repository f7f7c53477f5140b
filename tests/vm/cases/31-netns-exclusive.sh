#!/bin/sh
# nic.netns with the RDMA subsystem in exclusive network-namespace mode on a
# real kernel. The guest (not gdrcheck) switches the mode with `rdma system
# set netns exclusive` (ib_core refuses while other net namespaces exist,
# so it is switched before the namespace is made and back after it is
# deleted), then creates a netns without any RDMA device. gdrcheck in the
# init namespace (rxe0 belongs to it): PASS NETNS_EXCLUSIVE, 1 device; in
# the new namespace: WARN NETNS_EXCLUSIVE_HIDDEN, 0 devices, while
# `rdma dev` there lists nothing either. Mode and namespace are restored.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck

mode=/sys/module/ib_core/parameters/netns_mode
ns=gdrcheck-ns
cleanup() {
	ip netns del "$ns" 2>/dev/null || true
	rdma system set netns shared 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
check_eq "netns_mode at start (shared)" Y "$(cat "$mode")"
check "rdma system set netns exclusive" rdma system set netns exclusive
check_eq "netns_mode after the switch" N "$(cat "$mode")"
say "rdma system: $(rdma system show)"
check "ip netns add $ns" ip netns add "$ns"
say "rdma dev in $ns: '$(ip netns exec "$ns" rdma dev)'"
check_eq "RDMA devices visible in $ns" "" "$(ip netns exec "$ns" rdma dev)"

run_json init.json "$GDRCHECK" --json --only nic.netns
run_json hidden.json ip netns exec "$ns" "$GDRCHECK" --json --only nic.netns
jq_checks init.json <<'CHECKS'
init netns: nic.netns PASS NETNS_EXCLUSIVE with rxe0 here
	.results[] | select(.gate=="nic.netns") | .status=="PASS" and
	.reason_code=="NETNS_EXCLUSIVE" and .evidence.rdma_devices_here==1 and
	(.evidence.netns_mode | startswith("N (exclusive)"))
CHECKS
jq_checks hidden.json <<'CHECKS'
new netns: nic.netns WARN NETNS_EXCLUSIVE_HIDDEN, 0 devices
	.results[] | select(.gate=="nic.netns") | .status=="WARN" and
	.reason_code=="NETNS_EXCLUSIVE_HIDDEN" and .evidence.rdma_devices_here==0
the fix names rdma dev set ... netns
	.results[] | select(.gate=="nic.netns") | .remediation | contains("rdma dev set")
CHECKS

ip netns del "$ns"
check "rdma system set netns shared" rdma system set netns shared
check_eq "netns_mode restored" Y "$(cat "$mode")"
check "rxe0 is still up" rxe_ready rxe0
