#!/bin/sh
# host.container on a real kernel, with KUBERNETES_SERVICE_HOST as the only
# container marker (a containerd pod under cgroup v2 with a cgroup
# namespace: no /.dockerenv, /proc/1/cgroup "0::/"; the guest has neither
# either). Read live through getenv(), as on a node. `--only host` runs:
#   1. no marker (control): NO_CONTAINER, runtime none;
#   2. root, ulimit -l 8192 (containerd's 8 MiB default), marker: IN_CONTAINER
#      with host.memlock's MEMLOCK_CAP_IPC_LOCK cited;
#   3. gdrtest, the same limit, marker: the real kernel drops CAP_IPC_LOCK
#      from CapEff at the uid change though it stays in CapBnd (what a
#      non-root pod with capabilities add IPC_LOCK gets,
#      nvidia-container-toolkit#2037): WARN CONTAINER_MEMLOCK_NO_IPC_LOCK
#      citing MEMLOCK_LIMITED, euid 1000;
#   4. root, marker, /dev/infiniband/uverbs0 moved aside while rxe0 stays
#      in sysfs: WARN CONTAINER_NO_UVERBS, 1 device, 0 nodes; restored.
# shellcheck disable=SC2016 # awk programs and dash -c scripts: single quotes on purpose
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck

node=/dev/infiniband/uverbs0
hide=$(mktemp -d /dev/vm-hidden.XXXXXX)
cleanup() {
	if [ -e "$hide/uverbs0" ] && [ ! -e "$node" ]; then
		mv "$hide/uverbs0" "$node"
	fi
	rmdir "$hide" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
check "no /.dockerenv in the guest" test ! -e /.dockerenv
check "no /run/.containerenv in the guest" test ! -e /run/.containerenv
say "/proc/1/cgroup: $(cat /proc/1/cgroup)"
K=KUBERNETES_SERVICE_HOST=10.96.0.1

bnd=$(as_user awk '/^CapBnd:/ { print $2 }' /proc/self/status)
eff=$(as_user awk '/^CapEff:/ { print $2 }' /proc/self/status)
say "$VM_USER: CapBnd $bnd CapEff $eff"
check "CAP_IPC_LOCK (bit 14) in $VM_USER's bounding set" test $((0x$bnd >> 14 & 1)) -eq 1
check "and not in its CapEff" test $((0x$eff >> 14 & 1)) -eq 0

run_json plain.json "$GDRCHECK" --json --only host
run_json root.json dash -c 'ulimit -l 8192 && exec "$@"' sh \
	env "$K" "$GDRCHECK" --json --only host
run_json user.json dash -c 'ulimit -l 8192 && exec setpriv --reuid="$0" --regid="$0" --clear-groups -- "$@"' "$VM_USER_UID" \
	env "$K" "$GDRCHECK" --json --only host
mv "$node" "$hide/uverbs0"
check "$node is gone" test ! -e "$node"
check "rxe0 is still in sysfs" test -d /sys/class/infiniband/rxe0
run_json hidden.json env "$K" "$GDRCHECK" --json --only host
mv "$hide/uverbs0" "$node"
check "rxe0 is ready again" rxe_ready rxe0

jq_checks plain.json <<'CHECKS'
1. no marker: NO_CONTAINER, runtime none
	.results[] | select(.gate=="host.container") | .status=="PASS" and
	.reason_code=="NO_CONTAINER" and .evidence.runtime=="none"
CHECKS
jq_checks root.json <<'CHECKS'
2. root with the marker: IN_CONTAINER (kubernetes), memlock lifted by CAP_IPC_LOCK
	.results[] | select(.gate=="host.container") | .status=="PASS" and
	.reason_code=="IN_CONTAINER" and .evidence.runtime=="kubernetes" and
	.evidence.kubernetes==true and .evidence.cap_ipc_lock==true and
	.evidence.memlock=="MEMLOCK_CAP_IPC_LOCK" and .evidence.uverbs_nodes==1
CHECKS
jq_checks user.json --arg uid "$VM_USER_UID" <<'CHECKS'
3. non-root with the marker: WARN CONTAINER_MEMLOCK_NO_IPC_LOCK
	.results[] | select(.gate=="host.container") | .status=="WARN" and
	.reason_code=="CONTAINER_MEMLOCK_NO_IPC_LOCK" and
	.evidence.euid==($uid|tonumber) and .evidence.cap_ipc_lock==false and
	.evidence.memlock=="MEMLOCK_LIMITED"
it cites host.memlock's 8 MiB and names the daemon's limit
	.results[] | select(.gate=="host.container") |
	(.reason | contains("host.memlock says: RLIMIT_MEMLOCK is 8 MiB")) and
	(.remediation | contains("LimitMEMLOCK=infinity") and contains("non-root"))
host.memlock itself WARN MEMLOCK_LIMITED 8388608
	.results[] | select(.gate=="host.memlock") | .reason_code=="MEMLOCK_LIMITED" and .evidence.soft_bytes==8388608
CHECKS
jq_checks hidden.json <<'CHECKS'
4. uverbs0 hidden: WARN CONTAINER_NO_UVERBS, 1 device, 0 nodes
	.results[] | select(.gate=="host.container") | .status=="WARN" and
	.reason_code=="CONTAINER_NO_UVERBS" and .evidence.rdma_devices==1 and
	.evidence.uverbs_nodes==0
the fix names the device plugin and --device
	.results[] | select(.gate=="host.container") | .remediation |
	contains("device plugin") and contains("--device=/dev/infiniband/uverbsN")
CHECKS
