#!/bin/sh
# ACS control on the pcie-root-ports can be read, toggled and restored with
# setpci; the XIO3130 switch ports have no ACS capability.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh

for rp in $VM_ROOT_PORTS; do
	off=$(ecap_offset "$rp" 0x000d)
	check "$rp has an ACS extended capability" test -n "$off"
	cap=$(setpci -s "$rp" ECAP_ACS+4.w)
	ctl=$(setpci -s "$rp" ECAP_ACS+6.w)
	say "$rp: ACS at 0x$off, ACSCap=0x$cap ACSCtl=0x$ctl"
	check_eq "$rp ECAP_ACS+6 is the register at offset+6" "$ctl" "$(setpci -s "$rp" "$(printf '%x' $((0x$off + 6))).w")"
	# SrcValid|ReqRedir|CmpltRedir|UpstreamFwd = 0x1d must be supported.
	check "$rp ACSCap has SV/RR/CR/UF" test $((0x$cap & 0x1d)) -eq $((0x1d))
done

rp=$VM_NIC_RP_BDF
orig=$(setpci -s "$rp" ECAP_ACS+6.w)
# Linux enables SV|RR|CR|UF (0x001d) on ACS-capable ports at boot only when
# an IOMMU is active (run.sh VM_IOMMU=1); otherwise QEMU's reset value 0 stays.
if [ "$VM_IOMMU" = 1 ]; then
	check_eq "ACSCtl at boot (IOMMU on: kernel enabled ACS)" 001d "$orig"
	new=0000
else
	check_eq "ACSCtl at boot (no IOMMU)" 0000 "$orig"
	new=001d
fi
setpci -s "$rp" "ECAP_ACS+6.w=$new"
check_eq "ACSCtl after writing $new" "$new" "$(setpci -s "$rp" ECAP_ACS+6.w)"
lspci -vvv -s "$rp" | grep -E 'ACSCap|ACSCtl'
if [ "$new" = 001d ]; then want='ReqRedir+'; else want='ReqRedir-'; fi
check "lspci decodes $want in ACSCtl" sh -c "lspci -vvv -s $rp | grep 'ACSCtl:' | grep -q '$want'"
setpci -s "$rp" "ECAP_ACS+6.w=$orig"
check_eq "ACSCtl restored" "$orig" "$(setpci -s "$rp" ECAP_ACS+6.w)"

for p in "$VM_NIC_DN_BDF" "$VM_NIC_UP_BDF"; do
	check "switch port $p has no ACS capability" test -z "$(ecap_offset "$p" 0x000d)"
done
