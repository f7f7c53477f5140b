#!/bin/sh
# RLIMIT_MEMLOCK too small for the registrations. rxe pins user memory with
# the kernel's ib_umem_get, which adds the pages to mm->pinned_vm and fails
# with ENOMEM when that exceeds RLIMIT_MEMLOCK *unless the caller has
# CAP_IPC_LOCK* (capable(CAP_IPC_LOCK)): so `ulimit -l 64` alone does nothing
# to root. The real ENOMEM needs the capability gone:
#   1. root without CAP_IPC_LOCK: dash's `ulimit -l 64` (KiB; sets soft and
#      hard), then setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock:
#      uid 0 gets its permitted/effective sets from the bounding set at
#      exec, so gdrcheck runs as root (config space readable) minus that
#      one capability;
#   2. the unprivileged user (no capabilities at all) with the same limit;
#   3. the control: root with CAP_IPC_LOCK and the same 64 KiB limit
#      registers the 4 MiB host MR fine (the exemption), so the ENOMEM of
#      1 and 2 is the limit, not the device.
# 1 and 2: reg.host_mr BLOCKED MEMLOCK_TOO_SMALL (errno 12, the real
# ENOMEM), host.memlock WARN MEMLOCK_LIMITED (64 KiB soft and hard), and
# with "GPU memory" that is host memory (mem = host) the peermem
# registration gets the same real ENOMEM (reg.peermem BLOCKED PIN_LIMIT);
# both paths BLOCKED with reg.host_mr among the blockers; exit 1.
# The limits only apply inside the dash -c subshells: nothing to restore.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

trap nvidia_proc_restore EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
gpu_scenario cuda.conf host
nvidia_proc_fake

# Same limit and capability set as the gdrcheck run below, seen by a probe.
# shellcheck disable=SC2016 # expanded by the inner shell
lim=$(dash -c 'ulimit -l 64; exec setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock -- cat /proc/self/limits' |
	awk '/^Max locked memory/ { print $4, $5 }')
check_eq "RLIMIT_MEMLOCK in the subshell (soft hard, bytes)" "65536 65536" "$lim"
# shellcheck disable=SC2016
capeff=$(dash -c 'exec setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock -- awk "/^CapEff:/ { print \$2 }" /proc/self/status')
check "root without CAP_IPC_LOCK: bit 14 clear in CapEff $capeff" test $((0x$capeff & 0x4000)) -eq 0
check "... but still CAP_SYS_ADMIN (bit 21)" test $((0x$capeff & 0x200000)) -ne 0

say "--- 1. root without CAP_IPC_LOCK, ulimit -l 64"
# shellcheck disable=SC2016
run_json nocap.json dash -c 'ulimit -l 64 && exec setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock -- "$@"' sh \
	env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" "$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"
rc_nocap=$rc
say "--- 2. $VM_USER, ulimit -l 64"
# shellcheck disable=SC2016
run_json user.json dash -c 'ulimit -l 64 && exec setpriv --reuid="$0" --regid="$0" --clear-groups -- "$@"' "$VM_USER_UID" \
	env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" "$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"
rc_user=$rc
say "--- 3. control: root with CAP_IPC_LOCK, ulimit -l 64"
# shellcheck disable=SC2016
run_json cap.json dash -c 'ulimit -l 64 && exec "$@"' sh \
	env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" "$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"
rc_cap=$rc
no_gdrcheck_left

# The checks common to 1 and 2 ($euid: 0 or the user's).
checks=$(mktemp)
cat >"$checks" <<'CHECKS'
host.memlock WARN MEMLOCK_LIMITED: soft and hard 65536 bytes, "64 KiB" in the reason
	.results[] | select(.gate == "host.memlock" and .status == "WARN" and .reason_code == "MEMLOCK_LIMITED"
		and .evidence.soft_bytes == 65536 and .evidence.hard_bytes == 65536 and (.reason | contains("64 KiB")))
host.privileges: the expected euid, and no CAP_IPC_LOCK
	.results[] | select(.gate == "host.privileges") | .evidence.euid == $euid and .evidence.cap_ipc_lock == false
reg.host_mr BLOCKED MEMLOCK_TOO_SMALL on rxe0, errno 12 (the real kernel's ENOMEM)
	.results[] | select(.gate == "reg.host_mr" and .subject == "rxe0" and .status == "BLOCKED"
		and .reason_code == "MEMLOCK_TOO_SMALL" and .evidence.errno == 12)
reg.host_mr reason: 4194304 bytes, ENOMEM; remediation: ulimit -l unlimited
	.results[] | select(.gate == "reg.host_mr") | (.reason | contains("4194304 bytes") and contains("ENOMEM"))
		and (.remediation | contains("ulimit -l unlimited"))
reg.peermem BLOCKED PIN_LIMIT, errno 12 (the host-backed "GPU memory" hits the same limit)
	.results[] | select(.gate == "reg.peermem" and .status == "BLOCKED" and .reason_code == "PIN_LIMIT" and .evidence.errno == 12)
data.peermem SKIP NOT_REGISTERED
	.results[] | select(.gate == "data.peermem" and .status == "SKIP" and .reason_code == "NOT_REGISTERED")
both paths BLOCKED with reg.host_mr (rxe0) MEMLOCK_TOO_SMALL among the blockers
	[.paths.dmabuf, .paths.peermem] | all(.verdict == "BLOCKED"
		and any(.blockers[]; .gate == "reg.host_mr" and .subject == "rxe0" and .reason_code == "MEMLOCK_TOO_SMALL"))
verdict BLOCKED, exit_code 1
	.verdict.status == "BLOCKED" and .verdict.exit_code == 1
CHECKS
say "--- checks on 1 (root without CAP_IPC_LOCK):"
report_checks nocap.json --argjson euid 0 <"$checks"
check_eq "1: exit status" 1 "$rc_nocap"
say "--- checks on 2 ($VM_USER; the report's validity is 15-non-root's job):"
jq_checks user.json --argjson euid "$VM_USER_UID" <"$checks"
check_eq "2: exit status" 1 "$rc_user"
rm -f "$checks"

say "--- checks on 3 (the control: CAP_IPC_LOCK exempts from the limit):"
jq_checks cap.json <<'CHECKS'
host.privileges PASS ROOT with CAP_IPC_LOCK
	.results[] | select(.gate == "host.privileges" and .status == "PASS" and .evidence.cap_ipc_lock == true)
RLIMIT_MEMLOCK is the same 64 KiB
	.results[] | select(.gate == "host.memlock") | .evidence.soft_bytes == 65536
reg.host_mr PASS HOST_MR_OK: 4194304 bytes pinned past the 64 KiB limit
	.results[] | select(.gate == "reg.host_mr" and .status == "PASS" and .reason_code == "HOST_MR_OK" and .evidence.bytes == 4194304)
reg.peermem PASS and data.peermem PASS (the limit does not apply)
	[.results[] | select((.gate == "reg.peermem" or .gate == "data.peermem") and .status == "PASS")] | length == 2
CHECKS
# The peermem proof on host-backed "GPU memory" outranks mech.peermem's
# "not loaded" (WARN CONTRADICTED_BY_PROOF): READY, exit 0.
check_eq "3: exit status (the verified transfer outranks mech.*)" 0 "$rc_cap"
jq -r '.results[] | select(.gate == "host.memlock") | "control run: host.memlock says \(.status) \(.reason_code): \(.reason) (cap_ipc_lock is true)"' cap.json
