#!/bin/sh
# gdrcheck run as an unprivileged user (gdrtest, uid 1000, no capabilities,
# util-linux setpriv): host.privileges warns NOT_ROOT, the tool still ends
# with a verdict (0, 1 or 3: no crash, no usage error) and the report is
# complete and valid.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

trap nvidia_proc_restore EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
check_eq "setpriv runs commands as $VM_USER" "$VM_USER_UID:$VM_USER_GID" "$(as_user id -u):$(as_user id -g)"
# shellcheck disable=SC2016 # awk, not the shell, expands $2
check_eq "... with no effective capabilities" 0000000000000000 "$(as_user awk '/^CapEff:/ { print $2 }' /proc/self/status)"
gpu_scenario cuda.conf
nvidia_proc_fake

# The case's directory belongs to root: gdrcheck only writes to stdout,
# which this (root) shell redirects.
run_json report.json as_user env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"
case $rc in
0 | 1 | 3) say "ok: exit status $rc is a verdict (0 READY, 1 BLOCKED, 3 undecided)" ;;
*) fail "exit status $rc: not a verdict (2 usage error, >= 128 killed by a signal)" ;;
esac
no_gdrcheck_left

report_checks report.json --argjson uid "$VM_USER_UID" --argjson rc "$rc" <<'CHECKS'
host.privileges WARN NOT_ROOT: euid 1000, no CAP_IPC_LOCK, no CAP_SYS_ADMIN
	.results[] | select(.gate == "host.privileges" and .subject == "host" and .status == "WARN" and .reason_code == "NOT_ROOT"
		and .evidence.euid == $uid and .evidence.cap_ipc_lock == false and .evidence.cap_sys_admin == false)
host.privileges has a remediation (run as root)
	.results[] | select(.gate == "host.privileges") | .remediation | length > 0
the verdict's exit_code is the exit status
	.verdict.exit_code == $rc
the NIC is still examined: rxe0 and rxe0/1 are subjects
	[.subjects[] | select(.id == "rxe0" or .id == "rxe0/1")] | length == 2
CHECKS
say "--- what an unprivileged run does not PASS (compare with 11-rxe-found as root):"
jq -r '.results[] | select(.status != "PASS") | "  \(.status) \(.gate) \(.subject) \(.reason_code)"' report.json
