#!/bin/sh
# The emulated PCIe tree: NIC behind the XIO3130 switch behind root port rp1,
# the "GPU" directly behind rp2, rp3 on neither path, the peer cases' second
# NIC (eth1, down outside them) directly behind rp4.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh

ids() { printf '%s:%s' "$(cut -c3- "/sys/bus/pci/devices/$1/vendor")" "$(cut -c3- "/sys/bus/pci/devices/$1/device")"; }

lspci -tv
lspci -nn

nic=$(readlink -f "/sys/class/net/$VM_NETDEV/device/..")
say "NIC function: $nic"
check_eq "NIC driver" virtio-pci "$(basename "$(readlink -f "$nic/driver")")"
check_eq "NIC ids (virtio-net, modern)" 1af4:1041 "$(ids "${nic##*/}")"

dn=$(dirname "$nic")
up=$(dirname "$dn")
rp=$(dirname "$up")
check_eq "parent of NIC is the xio3130 downstream port" 104c:8233 "$(ids "${dn##*/}")"
check_eq "its parent is the x3130 upstream port" 104c:8232 "$(ids "${up##*/}")"
check_eq "its parent is a pcie-root-port" 1b36:000c "$(ids "${rp##*/}")"
check_eq "the root port hangs off the host bridge" pci0000:00 "$(basename "$(dirname "$rp")")"
check_eq "VM_NIC_BDF" "${nic##*/}" "$VM_NIC_BDF"
check_eq "VM_NIC_RP_BDF" "${rp##*/}" "$VM_NIC_RP_BDF"

# PCIe port types from the Express capability (CAP_EXP+2 bits 7:4):
# 4 root port, 5 upstream switch port, 6 downstream switch port.
ptype() { echo $(((0x$(setpci -s "$1" CAP_EXP+2.w) >> 4) & 0xf)); }
check_eq "rp1 port type" 4 "$(ptype "${rp##*/}")"
check_eq "switch upstream port type" 5 "$(ptype "${up##*/}")"
check_eq "switch downstream port type" 6 "$(ptype "${dn##*/}")"

gpu=$(readlink -f "/sys/bus/pci/devices/$VM_GPU_BDF")
check_eq "GPU stand-in class is display (0x03)" 0x03 "$(cut -c1-4 "$gpu/class")"
check_eq "GPU stand-in sits directly under a pcie-root-port" 1b36:000c "$(ids "$(basename "$(dirname "$gpu")")")"
check "GPU and NIC are under different root ports" test "$(dirname "$gpu")" != "$rp"
check "a third root port exists off both paths" test -n "${VM_RP3_BDF:-}"
check_eq "nothing behind rp3" "" "$(find "/sys/bus/pci/devices/$VM_RP3_BDF/" -mindepth 1 -maxdepth 1 -name '0000:??:??.?' | head -n 1)"
check_eq "four root ports" 4 "$(echo "$VM_ROOT_PORTS" | wc -w)"
peer=$(readlink -f "/sys/class/net/$VM_PEER_NETDEV/device/..")
check_eq "peer NIC ids (virtio-net, modern)" 1af4:1041 "$(ids "${peer##*/}")"
check_eq "peer NIC sits directly under rp4, a pcie-root-port" 1b36:000c "$(ids "$(basename "$(dirname "$peer")")")"
check_eq "VM_PEER_NIC_BDF" "${peer##*/}" "$VM_PEER_NIC_BDF"
check_eq "VM_PEER_NIC_RP_BDF" "$(basename "$(dirname "$peer")")" "$VM_PEER_NIC_RP_BDF"
check "peer NIC is down outside the peer cases" test "$(cat "/sys/class/net/$VM_PEER_NETDEV/operstate")" = down
check "no rxe1 outside the peer cases" test ! -e /sys/class/infiniband/rxe1
