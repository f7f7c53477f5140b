#!/bin/sh
# ACS redirect off the path: ReqRedir+CmpltRedir (ACSCtl |= 0x000c) on rp3
# ($VM_RP3_BDF, an empty root port on no GPU-NIC path) only. platform.acs
# on GPU0~rxe0 still PASSes ACS_NO_REDIRECT, platform.bridges does not list
# rp3 and counts 0 redirecting bridges, and nothing in the report (reasons,
# evidence, remediations) mentions rp3. rp3's register is restored (also on
# failure) and must read back as before.
#
# With VM_IOMMU=1 the kernel set 0x001d (SV RR CR UF) on every root port at
# boot, so the path's own root ports redirect too: the case then clears
# the redirect bits (RR CR EC, 0x002c) on those for the run and restores
# them, so that rp3 is the only redirecting port in both guests.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

rp3=$VM_RP3_BDF
reg3=$(acs_ctl_reg "$rp3") || fail "$rp3 has no ACS capability"
orig3=$(setpci -s "$rp3" "$reg3")
# On-path root ports whose redirect bits are cleared for the run: "bdf reg orig" lines.
saved=$(mktemp)
cleanup() {
	setpci -s "$rp3" "$reg3=$orig3" || true
	while read -r b r v; do
		setpci -s "$b" "$r=$v" || true
	done <"$saved"
	rm -f "$saved"
	nvidia_proc_restore
}
trap cleanup EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
for rp in "$VM_NIC_RP_BDF" "$VM_GPU_RP_BDF"; do
	reg=$(acs_ctl_reg "$rp") || fail "$rp has no ACS capability"
	v=$(setpci -s "$rp" "$reg")
	if [ $((0x$v & 0x2c)) -ne 0 ]; then
		echo "$rp $reg $v" >>"$saved"
		setpci -s "$rp" "$reg=$(printf '%04x' $((0x$v & ~0x2c)))"
		say "on-path $rp: ACSCtl 0x$v has redirect bits (VM_IOMMU=$VM_IOMMU): cleared for the run"
	fi
	check "on-path $rp has no ACS redirect bit (RR CR EC) during the run" \
		test $((0x$(setpci -s "$rp" "$reg") & 0x2c)) -eq 0
done

new=$(printf '%04x' $((0x$orig3 | 0x000c)))
say "$rp3 (off the path): ACSCtl at ${reg3%.w} = 0x$orig3; writing 0x$new"
setpci -s "$rp3" "$reg3=$new"
check_eq "$rp3 ACSCtl after the write" "$new" "$(setpci -s "$rp3" "$reg3")"
gpu_scenario cuda.conf
nvidia_proc_fake

run_json report.json env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"

setpci -s "$rp3" "$reg3=$orig3"
check_eq "$rp3 ACSCtl restored (reads back as before)" "$orig3" "$(setpci -s "$rp3" "$reg3")"
while read -r b r v; do
	setpci -s "$b" "$r=$v"
	check_eq "$b ACSCtl restored" "$v" "$(setpci -s "$b" "$r")"
done <"$saved"

# rp3 as gdrcheck prints it, and its short form (bus:dev.fn).
short=${rp3#0000:}
report_checks report.json --arg rp3 "$rp3" --arg short "$short" <<'CHECKS'
platform.acs PASS ACS_NO_REDIRECT on GPU0~rxe0 (4 bridges, 2 with ACS)
	.results[] | select(.gate == "platform.acs" and .subject == "GPU0~rxe0" and .status == "PASS"
		and .reason_code == "ACS_NO_REDIRECT" and .evidence.bridges == 4 and .evidence.with_acs == 2)
platform.acs carries no acs_<bdf> evidence (nothing redirects on the path)
	.results[] | select(.gate == "platform.acs") | .evidence | keys | map(select(startswith("acs_"))) | length == 0
platform.bridges: 4 bridges on GPU-NIC paths, 0 redirecting, rp3 not among them
	.results[] | select(.gate == "platform.bridges" and .status == "PASS")
		| (.reason | contains("4 bridge(s)") and contains(" 0 redirecting"))
		and (.evidence | has("acs_" + $rp3) | not)
no remediation mentions rp3 (report.remediations and every result's remediation)
	[(.remediations[].text), (.results[].remediation // "")] | map(select(contains($short))) | length == 0
no platform-layer result mentions rp3 in its reason or evidence
	[.results[] | select(.layer == "platform") | (.reason, (.evidence | tostring))] | map(select(contains($short))) | length == 0
platform.acs is no path's blocker
	[.paths[].blockers[] | select(.gate == "platform.acs")] | length == 0
verdict BLOCKED, exit_code 1 (mech.peermem, mech.dmabuf_provider)
	.verdict.status == "BLOCKED" and .verdict.exit_code == 1
CHECKS
check_rc "gdrcheck with ACS redirect on rp3 only" 1
