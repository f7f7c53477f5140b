#!/bin/sh
# libcuda crashes (SIGSEGV) in cuDeviceGetAttribute (the double's
# crash.cuDeviceGetAttribute, at its first call: GPU0's compute capability).
# The worker dies; gpu.gdr_attr of GPU0 is an ERROR naming the signal and
# the call; the verbs stage still runs in a fresh worker; the report is
# complete and valid. Exit 1 for the reasons given in 13-cuda-hang.sh
# (rxe has no dma-buf MRs, no peermem: both paths BLOCKED without CUDA).
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

trap nvidia_proc_restore EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
gpu_scenario cuda.conf
echo 'crash.cuDeviceGetAttribute = 1' >>cuda.conf
nvidia_proc_fake

run_json report.json timeout 30 env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --timeout 10 --libcuda "$LIBCUDA_FAKE"
case $rc in
0 | 1 | 3) say "ok: exit status $rc is a verdict: gdrcheck itself survived" ;;
*) fail "exit status $rc: gdrcheck itself died or was killed" ;;
esac
no_gdrcheck_left

report_checks report.json <<'CHECKS'
gpu.cuinit PASS (the crash comes after it)
	.results[] | select(.gate == "gpu.cuinit" and .status == "PASS")
GPU0 is a subject (CUDA enumerated it before the crash)
	.subjects[] | select(.id == "GPU0" and .kind == "gpu")
gpu.gdr_attr ERROR on GPU0: reason contains "crashed with signal 11" and "cuDeviceGetAttribute"
	.results[] | select(.gate == "gpu.gdr_attr" and .subject == "GPU0" and .status == "ERROR"
		and (.reason | contains("crashed with signal 11")) and (.reason | contains("cuDeviceGetAttribute")))
nic.uverbs PASS on rxe0 (the verbs stage ran in a fresh worker)
	.results[] | select(.gate == "nic.uverbs" and .subject == "rxe0" and .status == "PASS")
nic.port PASS on rxe0/1
	.results[] | select(.gate == "nic.port" and .subject == "rxe0/1" and .status == "PASS")
mech.dmabuf_provider BLOCKED PROVIDER_LACKS_DMABUF on rxe0
	.results[] | select(.gate == "mech.dmabuf_provider" and .subject == "rxe0" and .status == "BLOCKED"
		and .reason_code == "PROVIDER_LACKS_DMABUF")
verdict BLOCKED, exit_code 1
	.verdict.status == "BLOCKED" and .verdict.exit_code == 1
CHECKS
check_rc "gdrcheck with libcuda crashing" 1
