#!/bin/sh
# platform.iommu_group on a real kernel: the groups it reports for
# GPU0~rxe0 are the ones the kernel made in /sys/kernel/iommu_groups.
#
# With VM_IOMMU=1 (qemu q35 + intel-iommu, intel_iommu=on): the kernel puts
# the NIC (virtio-net under the switch) and the "GPU" (bochs-display under
# rp2) in groups of its own making; the case reads each function's
# iommu_group link, checks the group's devices/ directory lists the
# function, that the two differ (different root ports with ACS), and that
# the gate reports exactly these numbers with IOMMU_GROUPS_DIFFER_X86 (x86:
# the driver does not compare groups). Without an IOMMU
# (/sys/kernel/iommu_groups empty): IOMMU_GROUP_NONE, both groups "none".
# tests/run-all.sh boots the guest a second time with VM_IOMMU=1 for it.
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
run_json report.json env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE" --no-datapath
say "gdrcheck rc=$rc in ${secs}s"

groups=$(find /sys/kernel/iommu_groups -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
if [ "$VM_IOMMU" = 1 ]; then
	check "the kernel made IOMMU groups" test "$groups" -gt 0
	ng=$(basename "$(readlink "$VM_NIC_SYSFS/iommu_group")")
	gg=$(basename "$(readlink "$VM_GPU_SYSFS/iommu_group")")
	say "kernel: NIC $VM_NIC_BDF in group $ng, GPU $VM_GPU_BDF in group $gg ($groups groups)"
	check "group $ng lists the NIC" test -e "/sys/kernel/iommu_groups/$ng/devices/$VM_NIC_BDF"
	check "group $gg lists the GPU" test -e "/sys/kernel/iommu_groups/$gg/devices/$VM_GPU_BDF"
	check "NIC and GPU are in different groups" test "$ng" != "$gg"
	jq_checks report.json --arg ng "$ng" --arg gg "$gg" <<'CHECKS'
platform.iommu_group on GPU0~rxe0 PASS IOMMU_GROUPS_DIFFER_X86
	[.results[] | select(.gate=="platform.iommu_group")] | length == 1 and
	(.[0] | .status=="PASS" and .reason_code=="IOMMU_GROUPS_DIFFER_X86")
its groups are the kernel's
	.results[] | select(.gate=="platform.iommu_group") |
	.evidence.nic_group == $ng and .evidence.gpu_group == $gg
the reason names both groups
	.results[] | select(.gate=="platform.iommu_group") |
	(.reason | contains("group " + $gg) and contains($ng))
CHECKS
else
	check_eq "IOMMU groups without an IOMMU" 0 "$groups"
	check "the NIC has no iommu_group link" test ! -e "$VM_NIC_SYSFS/iommu_group"
	jq_checks report.json <<'CHECKS'
platform.iommu_group on GPU0~rxe0 PASS IOMMU_GROUP_NONE, both groups none
	[.results[] | select(.gate=="platform.iommu_group")] | length == 1 and
	(.[0] | .status=="PASS" and .reason_code=="IOMMU_GROUP_NONE" and
	 .evidence.nic_group=="none" and .evidence.gpu_group=="none")
CHECKS
fi
