#!/bin/sh
# platform.acs as an unprivileged user (gdrtest through setpriv, no
# capabilities): the kernel shows a non-root reader only the first 64 bytes
# of config space, so no bridge's ACS capability (extended config space,
# >= 0x100) can be read. platform.acs must say so (SKIP ACS_NEEDS_ROOT with
# every path bridge "unreadable: only 64 bytes of config space"), never
# PASS. To make "never PASS" bite, rp1 ($VM_NIC_RP_BDF, on the GPU-NIC
# path) really redirects during the run (ReqRedir+CmpltRedir set by root
# with setpci, restored afterwards, also on failure): a PASS would hide it.
# host.privileges WARN NOT_ROOT; exit 1 as in 15-non-root.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

rp=$VM_NIC_RP_BDF
reg=$(acs_ctl_reg "$rp") || fail "$rp has no ACS capability"
orig=$(setpci -s "$rp" "$reg")
cleanup() {
	setpci -s "$rp" "$reg=$orig" || true
	nvidia_proc_restore
}
trap cleanup EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
# shellcheck disable=SC2016 # expanded by the inner shell
user_n=$(as_user sh -c 'wc -c <"$1"' sh "/sys/bus/pci/devices/$rp/config")
check_eq "$VM_USER reads only the 64-byte header of $rp's config space" 64 "$user_n"
new=$(printf '%04x' $((0x$orig | 0x000c)))
setpci -s "$rp" "$reg=$new"
check_eq "$rp ACSCtl (redirecting during the run, as root sees it)" "$new" "$(setpci -s "$rp" "$reg")"
gpu_scenario cuda.conf
nvidia_proc_fake

# The case's directory belongs to root: gdrcheck only writes to stdout.
run_json report.json as_user env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"

setpci -s "$rp" "$reg=$orig"
check_eq "$rp ACSCtl restored (reads back as before)" "$orig" "$(setpci -s "$rp" "$reg")"
no_gdrcheck_left

report_checks report.json --argjson uid "$VM_USER_UID" \
	--arg rp1 "$VM_NIC_RP_BDF" --arg rp2 "$VM_GPU_RP_BDF" --arg up "$VM_NIC_UP_BDF" --arg dn "$VM_NIC_DN_BDF" <<'CHECKS'
host.privileges WARN NOT_ROOT: euid 1000, no CAP_IPC_LOCK, no CAP_SYS_ADMIN
	.results[] | select(.gate == "host.privileges" and .status == "WARN" and .reason_code == "NOT_ROOT"
		and .evidence.euid == $uid and .evidence.cap_ipc_lock == false and .evidence.cap_sys_admin == false)
platform.acs SKIP ACS_NEEDS_ROOT on GPU0~rxe0, with a remediation (run as root)
	.results[] | select(.gate == "platform.acs" and .subject == "GPU0~rxe0" and .status == "SKIP"
		and .reason_code == "ACS_NEEDS_ROOT" and (.remediation | contains("root")))
platform.acs never PASSes (rp1 does redirect, unseen)
	[.results[] | select(.gate == "platform.acs" and .status == "PASS")] | length == 0
platform.acs reason: 4 bridges unreadable, only the 64-byte header visible
	.results[] | select(.gate == "platform.acs") | .reason | contains("4 bridge(s)") and contains("64-byte header")
platform.acs evidence: each path bridge (rp1, rp2, switch up and down) "unreadable: only 64 bytes of config space"
	.results[] | select(.gate == "platform.acs") | .evidence as $e
		| [$rp1, $rp2, $up, $dn] | all($e["acs_" + .] == "unreadable: only 64 bytes of config space")
platform.acs: 0 bridges with a readable ACS capability
	.results[] | select(.gate == "platform.acs") | .evidence.with_acs == 0 and .evidence.bridges == 4
platform.bridges: 4 unreadable, 0 with ACS, 0 redirecting (it cannot know)
	.results[] | select(.gate == "platform.bridges") | .reason | contains("0 with ACS, 0 redirecting, 4 unreadable")
platform.acs is no path's blocker (a SKIP closes nothing)
	[.paths[].blockers[] | select(.gate == "platform.acs")] | length == 0
verdict BLOCKED, exit_code 1
	.verdict.status == "BLOCKED" and .verdict.exit_code == 1
CHECKS
check_rc "gdrcheck as $VM_USER" 1
