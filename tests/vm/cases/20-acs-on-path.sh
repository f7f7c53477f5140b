#!/bin/sh
# ACS P2P redirect on the GPU-NIC path: ReqRedir+CmpltRedir (ACSCtl |=
# 0x000c) set with setpci on rp1 ($VM_NIC_RP_BDF), the NIC's root port; the
# GPU~rxe0 path (PHB: NIC under rp1, GPU under rp2) crosses it.
# platform.acs on GPU0~rxe0 names the port in its reason and in evidence
# acs_<bdf> ("ctl 0x000c"); platform.bridges counts it as redirecting.
# Without an IOMMU (the default guest) that is WARN ACS_REDIRECT: no path
# is closed by it, and the exit status stays 1 (mech.peermem and
# mech.dmabuf_provider close both paths, as in 11-rxe-found). With
# VM_IOMMU=1 the kernel already set 0x001d on every root port at boot and
# the IOMMU translates: BLOCKED ACS_REDIRECT_IOMMU. The register is
# restored (also on failure) and must read back as before.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

rp=$VM_NIC_RP_BDF
reg=$(acs_ctl_reg "$rp") || fail "$rp has no ACS capability"
orig=$(setpci -s "$rp" "$reg")
cleanup() {
	setpci -s "$rp" "$reg=$orig" || true
	nvidia_proc_restore
}
trap cleanup EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
new=$(printf '%04x' $((0x$orig | 0x000c)))
say "$rp: ACSCtl at ${reg%.w} (ecap_offset + 6) = 0x$orig; writing 0x$new (ReqRedir+ CmpltRedir+)"
setpci -s "$rp" "$reg=$new"
check_eq "$rp ACSCtl after the write" "$new" "$(setpci -s "$rp" "$reg")"
check "lspci decodes ReqRedir+ CmpltRedir+ on $rp" \
	sh -c "lspci -vvv -s $rp | grep 'ACSCtl:' | grep 'ReqRedir+' | grep -q 'CmpltRedir+'"
gpu_scenario cuda.conf
nvidia_proc_fake

run_json report.json env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"

setpci -s "$rp" "$reg=$orig"
check_eq "$rp ACSCtl restored (reads back as before)" "$orig" "$(setpci -s "$rp" "$reg")"

if [ "$VM_IOMMU" = 1 ]; then
	status=BLOCKED code=ACS_REDIRECT_IOMMU
else
	status=WARN code=ACS_REDIRECT
fi
pair=GPU0~rxe0
report_checks report.json --arg pair "$pair" --arg rp "$rp" --arg gpurp "$VM_GPU_RP_BDF" \
	--arg status "$status" --arg code "$code" --arg ctl "ctl 0x$new" --arg iommu "$VM_IOMMU" <<'CHECKS'
subject GPU0~rxe0 (kind pair)
	.subjects[] | select(.id == $pair and .kind == "pair")
topo.path PASS PHB for the pair (NIC and GPU under different root ports)
	.results[] | select(.gate == "topo.path" and .subject == $pair and .status == "PASS" and (.reason | startswith("PHB")))
platform.acs on the pair: WARN ACS_REDIRECT (BLOCKED ACS_REDIRECT_IOMMU with VM_IOMMU=1)
	.results[] | select(.gate == "platform.acs" and .subject == $pair and .status == $status and .reason_code == $code)
its reason names the NIC's root port and says "root port"
	.results[] | select(.gate == "platform.acs" and .subject == $pair) | .reason | contains("ACS redirect on") and contains($rp + " (root port)")
its evidence acs_<rp1> is the register written ("ctl 0x000c" without an IOMMU)
	.results[] | select(.gate == "platform.acs" and .subject == $pair) | .evidence["acs_" + $rp] == $ctl
its evidence counts the 4 bridges of the path, 2 with ACS (the root ports)
	.results[] | select(.gate == "platform.acs" and .subject == $pair) | .evidence.bridges == 4 and .evidence.with_acs == 2
without an IOMMU the GPU's root port (ACSCtl 0) is neither named nor in the evidence
	$iommu == "1" or (.results[] | select(.gate == "platform.acs" and .subject == $pair)
		| (.reason | contains($gpurp) | not) and (.evidence | has("acs_" + $gpurp) | not))
platform.acs has a remediation (clear ACS P2P redirect)
	.results[] | select(.gate == "platform.acs" and .subject == $pair) | .remediation | contains("ACS")
platform.bridges decodes rp1: ReqRedir CmpltRedir, and counts it as redirecting
	.results[] | select(.gate == "platform.bridges" and .subject == "host")
		| (.evidence["acs_" + $rp] | startswith($ctl + " cap 0x005f: ") and contains("ReqRedir") and contains("CmpltRedir"))
		and (.reason | test("[12] redirecting"))
without an IOMMU exactly 1 redirecting bridge
	$iommu == "1" or (.results[] | select(.gate == "platform.bridges") | .reason | contains(" 1 redirecting"))
the switch ports have no ACS capability (platform.bridges)
	.results[] | select(.gate == "platform.bridges") | .evidence | to_entries
		| map(select(.value == "no ACS capability")) | length == 2
without an IOMMU platform.acs is no path's blocker (a WARN closes nothing)
	$iommu == "1" or ([.paths[].blockers[] | select(.gate == "platform.acs")] | length == 0)
with VM_IOMMU=1 platform.acs blocks both paths
	$iommu != "1" or ([.paths[].blockers[] | select(.gate == "platform.acs" and .subject == $pair)] | length == 2)
verdict BLOCKED, exit_code 1 (mech.peermem, mech.dmabuf_provider as in 11-rxe-found)
	.verdict.status == "BLOCKED" and .verdict.exit_code == 1
CHECKS
check_rc "gdrcheck with ACS redirect on rp1" 1
