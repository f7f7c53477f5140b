#!/bin/sh
# No RDMA device bound: rxe0 deleted (ib_core, ib_uverbs and rdma_rxe stay
# loaded). nic.kernel_verbs still passes, nic.devices blocks both paths with
# NO_RDMA_DEVICE, exit status 1. rxe0 is then re-created exactly as
# guest/init does it (lib.sh rxe_up) for the cases after this one.
#
# The GPU side is made healthy (libcuda double with one GPU at $VM_GPU_BDF,
# /proc/driver/nvidia/version of an open module), so the NIC is what closes
# the paths.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

cleanup() {
	nvidia_proc_restore
	# Only if the case died between rxe_down and the rxe_up below.
	if [ ! -e /sys/class/infiniband/rxe0 ]; then
		rxe_up "$VM_NETDEV" rxe0 || true
	fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT

check "rxe0 is up before the case" rxe_ready rxe0
gpu_scenario cuda.conf
nvidia_proc_fake

rxe_down rxe0 || fail "rxe_down rxe0"
check "rxe0 is gone from /sys/class/infiniband" test ! -e /sys/class/infiniband/rxe0
set -- /sys/class/infiniband_verbs/uverbs*
check "no uverbs interface is left" test ! -e "$1"
check "ib_uverbs is still loaded (abi_version)" test -e /sys/class/infiniband_verbs/abi_version

run_json report.json env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"

# rxe0 back before any assertion, so a failing one cannot leave the later
# cases without a device.
say "--- re-creating rxe0 (lib.sh rxe_up, as guest/init):"
rxe_up "$VM_NETDEV" rxe0 || fail "rxe_up: rxe0 did not come back"
check_eq "rxe0's uverbs interface" uverbs0 "$(uverbs_of rxe0)"
check "/dev/infiniband/uverbs0 is a char device again" test -c /dev/infiniband/uverbs0
check "rxe0 port 1 is ACTIVE again" grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state

report_checks report.json <<'CHECKS'
no RDMA device or port among the subjects
	[.subjects[] | select(.kind == "nic" or .kind == "port")] | length == 0
nic.kernel_verbs PASS KERNEL_VERBS_OK on host (ib_uverbs loaded)
	.results[] | select(.gate == "nic.kernel_verbs" and .subject == "host"
		and .status == "PASS" and .reason_code == "KERNEL_VERBS_OK")
nic.devices BLOCKED NO_RDMA_DEVICE on host, with a remediation
	.results[] | select(.gate == "nic.devices" and .subject == "host"
		and .status == "BLOCKED" and .reason_code == "NO_RDMA_DEVICE" and (.remediation | length > 0))
nic.devices names the loaded RDMA modules (ib_core ib_uverbs rdma_rxe)
	.results[] | select(.gate == "nic.devices") | .evidence.rdma_modules | split(" ") | contains(["ib_core", "ib_uverbs", "rdma_rxe"])
nic.devices: the real libibverbs listed 0 devices
	.results[] | select(.gate == "nic.devices") | .evidence.verbs_devices == 0
nic.uverbs, nic.port, nic.gid and mech.dmabuf_provider SKIP (nothing to check)
	[.results[] | select(.gate == "nic.uverbs" or .gate == "nic.port" or .gate == "nic.gid" or .gate == "mech.dmabuf_provider")]
		| length == 4 and all(.status == "SKIP")
the GPU side is healthy: gpu.driver PASS, gpu.visible PASS for GPU0
	[.results[] | select((.gate == "gpu.driver" or .gate == "gpu.visible") and .status == "PASS")] | length == 2
paths.dmabuf BLOCKED with nic.devices (host) NO_RDMA_DEVICE among its blockers
	.paths.dmabuf | .verdict == "BLOCKED"
		and any(.blockers[]; .gate == "nic.devices" and .subject == "host" and .reason_code == "NO_RDMA_DEVICE")
paths.peermem BLOCKED with nic.devices (host) NO_RDMA_DEVICE among its blockers
	.paths.peermem | .verdict == "BLOCKED"
		and any(.blockers[]; .gate == "nic.devices" and .subject == "host" and .reason_code == "NO_RDMA_DEVICE")
paths.dmabuf: nic.devices is its only blocker, so also its decisive gate
	.paths.dmabuf | .gate == "nic.devices" and .reason_code == "NO_RDMA_DEVICE" and (.blockers | length == 1)
verdict BLOCKED, exit_code 1
	.verdict.status == "BLOCKED" and .verdict.exit_code == 1
CHECKS
check_rc "gdrcheck without an RDMA device" 1
