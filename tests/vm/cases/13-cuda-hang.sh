#!/bin/sh
# libcuda hangs in cuInit (the double's hang.cuInit) with --timeout 2: the
# CUDA stage is killed at its deadline, gpu.cuinit is an ERROR naming the
# call, the verbs stage still runs in a fresh worker (the NIC results are
# all there), no gdrcheck process is left behind, and the run ends well
# within 20 s.
#
# Exit status (README "Exit status" and "Reading a BLOCKED verdict"): 3 is
# "could not decide: a probe error or timeout *and nothing BLOCKED*". The
# hang only leaves the GPU side unknown (an ERROR never closes a path), but
# both paths are closed by facts that do not depend on CUDA:
#   dmabuf:  mech.dmabuf_provider BLOCKED on rxe0, the only RDMA device (the
#            real rxe provider answers EOPNOTSUPP), so no GPU, whatever CUDA
#            would have said, has a port to pair with;
#   peermem: mech.peermem BLOCKED on the host (no nvidia_peermem).
# Both paths BLOCKED -> overall BLOCKED -> exit 1, not 3.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

trap nvidia_proc_restore EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
check "no gdrcheck process before the run" test -z "$(gdrcheck_pids)"
gpu_scenario cuda.conf
echo 'hang.cuInit = 1' >>cuda.conf
nvidia_proc_fake

t0=$(date +%s)
run_json report.json timeout 30 env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --timeout 2 --libcuda "$LIBCUDA_FAKE"
t1=$(date +%s)
say "wall time (date +%s): $((t1 - t0)) s"
# busybox timeout kills with SIGTERM (143); coreutils' would exit 124.
check "gdrcheck ended by itself, not killed by timeout 30 (exit $rc)" test "$rc" -lt 124
check "gdrcheck finished within 20 s ($((t1 - t0)) s)" test $((t1 - t0)) -le 20
no_gdrcheck_left

report_checks report.json <<'CHECKS'
gpu.libcuda PASS (the double loaded before it hung)
	.results[] | select(.gate == "gpu.libcuda" and .status == "PASS")
gpu.cuinit ERROR on host: reason contains "timed out after 2 s in cuInit"
	.results[] | select(.gate == "gpu.cuinit" and .subject == "host" and .status == "ERROR"
		and (.reason | contains("timed out after 2 s in cuInit")))
no GPU-layer gate after gpu.cuinit PASSes (nothing made up)
	[.results[] | select(.layer == "gpu" and .gate != "gpu.driver" and .gate != "gpu.libcuda" and .status == "PASS")] | length == 0
nic.uverbs PASS on rxe0: the verbs stage ran (fresh worker) and opened the device
	.results[] | select(.gate == "nic.uverbs" and .subject == "rxe0" and .status == "PASS")
nic.port PASS on rxe0/1
	.results[] | select(.gate == "nic.port" and .subject == "rxe0/1" and .status == "PASS")
nic.gid PASS on rxe0/1
	.results[] | select(.gate == "nic.gid" and .subject == "rxe0/1" and .status == "PASS")
mech.dmabuf_provider BLOCKED PROVIDER_LACKS_DMABUF on rxe0 (the provider probe ran)
	.results[] | select(.gate == "mech.dmabuf_provider" and .subject == "rxe0" and .status == "BLOCKED"
		and .reason_code == "PROVIDER_LACKS_DMABUF")
gpu.cuinit's ERROR is no path's blocker
	[.paths[].blockers[] | select(.gate == "gpu.cuinit")] | length == 0
paths.dmabuf BLOCKED by mech.dmabuf_provider (rxe0): every RDMA port is closed
	.paths.dmabuf | .verdict == "BLOCKED" and any(.blockers[]; .gate == "mech.dmabuf_provider" and .subject == "rxe0")
paths.peermem BLOCKED by mech.peermem
	.paths.peermem | .verdict == "BLOCKED" and any(.blockers[]; .gate == "mech.peermem")
verdict BLOCKED, exit_code 1 (both paths BLOCKED, so not 3)
	.verdict.status == "BLOCKED" and .verdict.exit_code == 1
CHECKS
check_rc "gdrcheck with cuInit hanging" 1
