#!/bin/sh
# rxe0 up, one GPU from the libcuda double at the stand-in's address: the
# real kernel verbs stack answers the NIC gates. nic.uverbs opens rxe0 with
# the real libibverbs, the port is ACTIVE on Ethernet with a RoCE v2 GID,
# and the real rxe provider refuses ibv_reg_dmabuf_mr(fd=-1) with
# EOPNOTSUPP (95): soft-RoCE has no dma-buf MRs, so the DMA-BUF path is
# BLOCKED there; peermem is BLOCKED too (no nvidia_peermem): exit 1.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

trap nvidia_proc_restore EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
# The libcuda double's scenario: one GPU, cc 9.0, GDR and DMA-BUF attrs 1.
cat >cuda.conf <<SCENARIO
device_count = 1
gpu0.name = VM stand-in GPU (libcuda double)
gpu0.pci = $VM_GPU_BDF
gpu0.cc = 9.0
gpu0.total_mem = 85899345920
# CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, _DMA_BUF_SUPPORTED
gpu0.attr.116 = 1
gpu0.attr.124 = 1
# Memory the kernel cannot pin, like GPU memory without nvidia_peermem
# (lib.sh gpu_scenario says why).
mem = unmapped
SCENARIO
nvidia_proc_fake

# The lowest non-zero RoCE v2 GID in sysfs is the one nic.gid must name.
# (The types of unused entries of rxe's 1024-entry table do not read.)
gid=$(cd /sys/class/infiniband/rxe0/ports/1 &&
	grep -l '^RoCE v2$' gid_attrs/types/* 2>/dev/null | while read -r t; do
		i=${t##*/}
		if [ "$(cat "gids/$i")" != 0000:0000:0000:0000:0000:0000:0000:0000 ]; then
			echo "$i"
		fi
	done | sort -n | head -n 1)
check "rxe0/1 has a RoCE v2 GID in sysfs" test -n "$gid"
say "sysfs: lowest non-zero RoCE v2 GID of rxe0/1: index $gid ($(cat "/sys/class/infiniband/rxe0/ports/1/gids/$gid"))"

# The real libibverbs: no --libibverbs.
run_json report.json env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"

report_checks report.json --arg bdf "$VM_GPU_BDF" --arg netdev "$VM_NETDEV" --argjson gid "$gid" <<'CHECKS'
every result has the schema's required keys
	all(.results[]; has("gate") and has("layer") and has("subject") and has("status") and has("reason_code")
		and has("reason") and has("remediation") and has("evidence") and has("duration_ms"))
subject rxe0 (kind nic)
	.subjects[] | select(.id == "rxe0" and .kind == "nic")
subject rxe0/1 (kind port, parent rxe0)
	.subjects[] | select(.id == "rxe0/1" and .kind == "port" and .parent == "rxe0")
subject GPU0 (kind gpu) at the stand-in's address
	.subjects[] | select(.id == "GPU0" and .kind == "gpu" and .pci == $bdf)
nic.libibverbs PASS, ibv_reg_dmabuf_mr@IBVERBS_1.12 present
	.results[] | select(.gate == "nic.libibverbs" and .status == "PASS" and .evidence["ibv_reg_dmabuf_mr@IBVERBS_1.12"] == true)
nic.kernel_verbs PASS
	.results[] | select(.gate == "nic.kernel_verbs" and .status == "PASS")
nic.devices PASS RDMA_DEVICES: rxe0 in sysfs, 1 device from libibverbs
	.results[] | select(.gate == "nic.devices" and .status == "PASS" and .reason_code == "RDMA_DEVICES"
		and .evidence.sysfs_devices == "rxe0" and .evidence.verbs_devices == 1)
nic.uverbs PASS UVERBS_OK on rxe0: ibv_open_device through uverbs0, 1 port
	.results[] | select(.gate == "nic.uverbs" and .subject == "rxe0" and .status == "PASS" and .reason_code == "UVERBS_OK"
		and .evidence.uverbs == "uverbs0" and .evidence.phys_ports == 1)
nic.port PASS PORT_ACTIVE on rxe0/1: state 4 ACTIVE, link_layer Ethernet
	.results[] | select(.gate == "nic.port" and .subject == "rxe0/1" and .status == "PASS" and .reason_code == "PORT_ACTIVE"
		and .evidence.state == 4 and .evidence.state_name == "ACTIVE" and .evidence.link_layer == "Ethernet")
nic.gid PASS ROCE_V2_GID on rxe0/1: the sysfs index, on the VM's netdev
	.results[] | select(.gate == "nic.gid" and .subject == "rxe0/1" and .status == "PASS" and .reason_code == "ROCE_V2_GID"
		and .evidence.gid_index == $gid and .evidence.netdev == $netdev)
mech.dmabuf_verbs PASS
	.results[] | select(.gate == "mech.dmabuf_verbs" and .status == "PASS")
mech.dmabuf_provider BLOCKED PROVIDER_LACKS_DMABUF on rxe0, errno 95 (the real rxe's EOPNOTSUPP)
	.results[] | select(.gate == "mech.dmabuf_provider" and .subject == "rxe0" and .status == "BLOCKED"
		and .reason_code == "PROVIDER_LACKS_DMABUF" and .evidence.errno == 95)
mech.peermem BLOCKED PEERMEM_NOT_LOADED on host
	.results[] | select(.gate == "mech.peermem" and .subject == "host" and .status == "BLOCKED" and .reason_code == "PEERMEM_NOT_LOADED")
gpu.driver PASS (open module: the faked /proc/driver/nvidia/version)
	.results[] | select(.gate == "gpu.driver" and .status == "PASS")
gpu.visible PASS for GPU0, evidence.pci is the stand-in's address, cc 9.0
	.results[] | select(.gate == "gpu.visible" and .subject == "GPU0" and .status == "PASS"
		and .evidence.pci == $bdf and .evidence.compute_capability == "9.0")
gpu.gdr_attr and gpu.dmabuf_attr PASS for GPU0
	[.results[] | select((.gate == "gpu.gdr_attr" or .gate == "gpu.dmabuf_attr") and .subject == "GPU0" and .status == "PASS")] | length == 2
paths.dmabuf BLOCKED with mech.dmabuf_provider (rxe0) among its blockers
	.paths.dmabuf | .verdict == "BLOCKED"
		and any(.blockers[]; .gate == "mech.dmabuf_provider" and .subject == "rxe0" and .reason_code == "PROVIDER_LACKS_DMABUF")
no gate claims that GPU memory registered through plain ibv_reg_mr (no peermem here)
	[.results[] | select((.gate | startswith("reg.peermem") or startswith("data.peermem")) and .status == "PASS")] | length == 0
paths.peermem BLOCKED with mech.peermem among its blockers
	.paths.peermem | .verdict == "BLOCKED" and any(.blockers[]; .gate == "mech.peermem" and .subject == "host")
verdict BLOCKED, exit_code 1
	.verdict.status == "BLOCKED" and .verdict.exit_code == 1
CHECKS
check_rc "gdrcheck on rxe0 with the GPU double" 1
