#!/bin/sh
# reg.host_mr, the verbs control: the worker registers host memory (twice
# the --reg-size, 4 MiB by default) on rxe0 with the real ibv_reg_mr_iova2
# (rxe pins it with the kernel's ib_umem_get) and deregisters it.
# PASS HOST_MR_OK with real lkey/rkey (-v shows them), relaxed ordering
# requested, timings measured. The device's resource counts (rdma resource
# show: pd, cq, qp, mr, ctx) are the same before and after the run:
# gdrcheck left no MR, QP or context behind in the kernel.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

trap nvidia_proc_restore EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
gpu_scenario cuda.conf
nvidia_proc_fake

res_before=$(rdma resource show rxe0)
say "before: $res_before"
run_json report.json env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json -v --libcuda "$LIBCUDA_FAKE"
no_gdrcheck_left
res_after=$(rdma resource show rxe0)
check_eq "rxe0's kernel resources after the run (nothing leaked)" "$res_before" "$res_after"

report_checks report.json <<'CHECKS'
reg.plan PASS REG_PLAN: 2 MiB per GPU, 1 GPU, 1 pair
	.results[] | select(.gate == "reg.plan" and .status == "PASS" and .reason_code == "REG_PLAN"
		and .evidence.bytes_per_gpu == 2097152 and .evidence.gpus == 1 and .evidence.pairs == 1)
reg.host_mr PASS HOST_MR_OK on rxe0
	.results[] | select(.gate == "reg.host_mr" and .subject == "rxe0" and .status == "PASS" and .reason_code == "HOST_MR_OK")
reg.host_mr registered 4194304 bytes (2 x the 2 MiB --reg-size)
	.results[] | select(.gate == "reg.host_mr") | .evidence.bytes == 4194304
reg.host_mr: keys issued, lkey/rkey in -v evidence as 0x hex
	.results[] | select(.gate == "reg.host_mr") | .evidence | .keys_present == true
		and (.lkey | test("^0x[0-9a-f]+$")) and (.rkey | test("^0x[0-9a-f]+$"))
reg.host_mr: cold, warm and dereg times measured (> 0 ms)
	.results[] | select(.gate == "reg.host_mr") | .evidence | .cold_ms > 0 and .warm_ms > 0 and .dereg_ms > 0
reg.host_mr: relaxed ordering requested (ibv_reg_mr_iova2 exists in rdma-core 44)
	.results[] | select(.gate == "reg.host_mr") | .evidence.relaxed_ordering == true
reg.host_mr is no path's blocker
	[.paths[].blockers[] | select(.gate == "reg.host_mr")] | length == 0
verdict BLOCKED, exit_code 1 (mech.peermem, mech.dmabuf_provider)
	.verdict.status == "BLOCKED" and .verdict.exit_code == 1
CHECKS
check_rc "gdrcheck on rxe0" 1
