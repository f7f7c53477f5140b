#!/bin/sh
# reg.peermem without a peer-memory client: the libcuda double's "GPU
# memory" is a PROT_NONE reservation (mem = unmapped), as a real cuMemAlloc
# pointer is to the kernel when nvidia_peermem is not loaded. The real
# ibv_reg_mr_iova2 reaches rxe's ib_umem_get, whose pin_user_pages_fast
# finds no usable page there: EFAULT (14) from the real kernel. reg.peermem
# BLOCKED NO_PEER_MEMORY_CLIENT with errno 14 and the call named; the host
# MR of the same run PASSes (the device and memlock are fine: it is the
# memory); data.peermem SKIP NOT_REGISTERED; paths.peermem BLOCKED with
# reg.peermem among its blockers; exit 1.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

trap nvidia_proc_restore EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
gpu_scenario cuda.conf unmapped
check "the scenario says mem = unmapped" grep -qx 'mem = unmapped' cuda.conf
nvidia_proc_fake

run_json report.json env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"
no_gdrcheck_left

report_checks report.json <<'CHECKS'
reg.host_mr PASS on rxe0 (the control: host memory registers)
	.results[] | select(.gate == "reg.host_mr" and .subject == "rxe0" and .status == "PASS")
reg.peermem BLOCKED NO_PEER_MEMORY_CLIENT on GPU0~rxe0
	.results[] | select(.gate == "reg.peermem" and .subject == "GPU0~rxe0" and .status == "BLOCKED"
		and .reason_code == "NO_PEER_MEMORY_CLIENT")
reg.peermem evidence: errno 14 (the real kernel's EFAULT) from ibv_reg_mr_iova2
	.results[] | select(.gate == "reg.peermem") | .evidence.errno == 14 and .evidence.call == "ibv_reg_mr_iova2"
reg.peermem reason says EFAULT and nvidia_peermem; remediation: modprobe nvidia_peermem
	.results[] | select(.gate == "reg.peermem") | (.reason | contains("EFAULT") and contains("nvidia_peermem"))
		and (.remediation | contains("modprobe nvidia_peermem"))
data.peermem SKIP NOT_REGISTERED (no MR, no transfer)
	.results[] | select(.gate == "data.peermem" and .subject == "GPU0~rxe0" and .status == "SKIP"
		and .reason_code == "NOT_REGISTERED" and (.reason | contains("registration failed")))
paths.peermem BLOCKED, reg.peermem NO_PEER_MEMORY_CLIENT among its blockers (with mech.peermem)
	.paths.peermem | .verdict == "BLOCKED" and .gate == "mech.peermem"
		and any(.blockers[]; .gate == "reg.peermem" and .subject == "GPU0~rxe0" and .reason_code == "NO_PEER_MEMORY_CLIENT")
verdict BLOCKED, exit_code 1
	.verdict.status == "BLOCKED" and .verdict.exit_code == 1
CHECKS
check_rc "gdrcheck with unpinnable GPU memory" 1
