#!/bin/sh
# The proof end to end on soft-RoCE: the libcuda double's "GPU memory" is
# real host memory (mem = host, memfd-backed), so the real rxe registers the
# CUDA pointer with plain ibv_reg_mr_iova2 (reg.peermem PASS PEERMEM_MR_OK)
# and data.peermem runs a loopback RC QP on rxe0 port 1: a real RDMA WRITE
# into and READ back from that MR through the kernel's rxe, data checked
# both by the READ and by cuMemcpyDtoH (TRANSFER_VERIFIED, verified_read,
# verified_gpu_copy, write_gbps > 0). rxe's own packet counters
# (hw_counters sent_pkts/rcvd_pkts) show that the bytes really crossed it:
# at least 2 MiB / 1024-byte path MTU = 2048 packets each way.
#
# reg.dmabuf: BLOCKED PROVIDER_LACKS_DMABUF, errno 95 (EOPNOTSUPP). That
# answer is not about the memfd the double exports instead of a dma-buf:
# rdma-core's rxe provider (rdma-core 44 in the guest) has no reg_dmabuf_mr
# in its verbs_context_ops, so ibv_reg_dmabuf_mr lands in libibverbs'
# dummy op, which sets errno = EOPNOTSUPP without a system call; the kernel
# would answer the same (ib_uverbs returns -EOPNOTSUPP when the driver has
# no reg_user_mr_dmabuf, and rxe in 6.1 has none). The same errno for fd -1
# (mech.dmabuf_provider) and for the exported fd (reg.dmabuf) shows that
# the fd is never looked at. (A provider that does import dma-bufs, e.g.
# mlx5, would reject the memfd itself: dma_buf_get() fails with EINVAL on a
# file that is not a dma-buf.)
#
# mech.peermem says no nvidia_peermem is loaded, yet the registration and
# transfer worked (this "GPU memory" is host memory): the proof outranks the
# inference, so mech.peermem and mech.peermem_api become WARN
# CONTRADICTED_BY_PROOF (their codes kept in evidence) and paths.peermem is
# READY. Exit 0.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

trap nvidia_proc_restore EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
gpu_scenario cuda.conf host
check "the scenario says mem = host" grep -qx 'mem = host' cuda.conf
nvidia_proc_fake

hw=/sys/class/infiniband/rxe0/ports/1/hw_counters
check "rxe0 has sent_pkts and rcvd_pkts counters" test -r "$hw/sent_pkts" -a -r "$hw/rcvd_pkts"
sent0=$(cat "$hw/sent_pkts")
rcvd0=$(cat "$hw/rcvd_pkts")
res_before=$(rdma resource show rxe0)
run_json report.json env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"
no_gdrcheck_left
sent=$(($(cat "$hw/sent_pkts") - sent0))
rcvd=$(($(cat "$hw/rcvd_pkts") - rcvd0))
check_eq "rxe0's kernel resources after the run (QPs, CQs, MRs freed)" "$res_before" "$(rdma resource show rxe0)"
say "rdma_rxe symbols mentioning dmabuf in /proc/kallsyms (fact, kernel $(uname -r)):" \
	"$(grep '\[rdma_rxe\]' /proc/kallsyms | grep -c dmabuf || true)"

report_checks report.json <<'CHECKS'
reg.host_mr PASS HOST_MR_OK on rxe0
	.results[] | select(.gate == "reg.host_mr" and .subject == "rxe0" and .status == "PASS" and .reason_code == "HOST_MR_OK")
reg.peermem PASS PEERMEM_MR_OK on GPU0~rxe0: 2 MiB registered, keys issued
	.results[] | select(.gate == "reg.peermem" and .subject == "GPU0~rxe0" and .status == "PASS" and .reason_code == "PEERMEM_MR_OK"
		and .evidence.bytes == 2097152 and .evidence.keys_present == true)
data.peermem PASS TRANSFER_VERIFIED on GPU0~rxe0, port 1
	.results[] | select(.gate == "data.peermem" and .subject == "GPU0~rxe0" and .status == "PASS"
		and .reason_code == "TRANSFER_VERIFIED" and .evidence.port == 1)
data.peermem: WRITE and READ completed, 2 MiB, verified_read and verified_gpu_copy true
	.results[] | select(.gate == "data.peermem") | .evidence | .write_ok == true and .read_ok == true
		and .bytes == 2097152 and .verified_read == true and .verified_gpu_copy == true
data.peermem: write_gbps > 0 over > 0 bandwidth writes, no error completion
	.results[] | select(.gate == "data.peermem") | .evidence | .write_gbps > 0 and .bandwidth_writes > 0 and (has("wc_status") | not)
data.peermem used the GID index that nic.gid chose
	(.results[] | select(.gate == "nic.gid" and .subject == "rxe0/1") | .evidence.gid_index) as $g
		| .results[] | select(.gate == "data.peermem") | .evidence.gid_index == $g
mech.dmabuf_export WARN EXPORT_FD_NOT_DMABUF (the double exports a memfd)
	.results[] | select(.gate == "mech.dmabuf_export" and .subject == "GPU0" and .status == "WARN" and .reason_code == "EXPORT_FD_NOT_DMABUF")
reg.dmabuf BLOCKED PROVIDER_LACKS_DMABUF, errno 95 (EOPNOTSUPP: rxe has no dma-buf MRs)
	.results[] | select(.gate == "reg.dmabuf" and .subject == "GPU0~rxe0" and .status == "BLOCKED"
		and .reason_code == "PROVIDER_LACKS_DMABUF" and .evidence.errno == 95)
the same errno for fd -1 (mech.dmabuf_provider) as for the exported fd: the fd is never examined
	(.results[] | select(.gate == "mech.dmabuf_provider" and .subject == "rxe0") | .evidence.errno) as $p
		| $p == 95 and (.results[] | select(.gate == "reg.dmabuf") | .evidence.errno == $p)
data.dmabuf SKIP NOT_REGISTERED
	.results[] | select(.gate == "data.dmabuf" and .status == "SKIP" and .reason_code == "NOT_REGISTERED")
data.kmsg PASS KMSG_CLEAN (no IOMMU/AER lines during the transfer)
	.results[] | select(.gate == "data.kmsg" and .status == "PASS" and .reason_code == "KMSG_CLEAN")
mech.peermem_api PEERMEM_API_MISSING: Debian's inbox ib_core exports no peer-memory API (real /proc/kallsyms), outranked by the verified transfer
	.results[] | select(.gate == "mech.peermem_api" and .status == "WARN" and .reason_code == "CONTRADICTED_BY_PROOF" and .evidence.inferred_code == "PEERMEM_API_MISSING")
paths.peermem READY: registration and transfer passed on host-backed "GPU memory" (mech.peermem outranked)
	.paths.peermem | .verdict == "READY" or (.verdict == "BLOCKED" and .gate == "platform.acs")
paths.dmabuf BLOCKED (mech.dmabuf_provider, reg.dmabuf)
	.paths.dmabuf | .verdict == "BLOCKED" and any(.blockers[]; .gate == "reg.dmabuf" and .reason_code == "PROVIDER_LACKS_DMABUF")
verdict READY (peermem), exit_code 0, or BLOCKED by platform.acs under VM_IOMMU=1
	(.verdict.status == "READY" and .verdict.exit_code == 0) or (.verdict.status == "BLOCKED" and .paths.peermem.gate == "platform.acs")
CHECKS
check_rc "gdrcheck with host-backed GPU memory" "$(jq .verdict.exit_code report.json)"
say "rxe0 port 1 during the run: sent_pkts +$sent, rcvd_pkts +$rcvd (now: $(cd "$hw" && grep -H . sent_pkts rcvd_pkts rdma_sends rdma_recvs 2>/dev/null | tr '\n' ' '))"
if [ "$sent" -eq 0 ]; then
	# Seen once in ~12 runs (both reads 0, report not kept): the core
	# caches hw_counters for their "lifespan"; read again to tell a stale
	# read from a transfer that bypassed rxe.
	sleep 1
	sent=$(($(cat "$hw/sent_pkts") - sent0))
	rcvd=$(($(cat "$hw/rcvd_pkts") - rcvd0))
	say "re-read 1 s later (lifespan $(cat "$hw/lifespan" 2>/dev/null || echo ?)): sent_pkts +$sent, rcvd_pkts +$rcvd"
fi
check "rxe sent >= 2048 packets (2 MiB at 1024-byte MTU)" test "$sent" -ge 2048
check "rxe received >= 2048 packets" test "$rcvd" -ge 2048
jq -r '.results[] | select(.gate == "data.peermem") | "real loopback through rxe0: \(.evidence.bytes) bytes, write \(.evidence.write_gbps) Gb/s over \(.evidence.bandwidth_writes) writes"' report.json
