#!/bin/sh
# soft-RoCE is up: rxe0 registered, uverbs node present, port active on Ethernet.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh

check "/sys/class/infiniband/rxe0 exists" test -d /sys/class/infiniband/rxe0
check "/dev/infiniband/uverbs0 is a char device" test -c /dev/infiniband/uverbs0
check_eq "rxe0 netdev" "$VM_NETDEV" "$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/0)"

ibv_devinfo -d rxe0 >devinfo.txt 2>&1 || { cat devinfo.txt; fail "ibv_devinfo -d rxe0"; }
cat devinfo.txt
check "ibv_devinfo: port PORT_ACTIVE" grep -q 'state:[[:space:]]*PORT_ACTIVE' devinfo.txt
check "ibv_devinfo: link_layer Ethernet" grep -q 'link_layer:[[:space:]]*Ethernet' devinfo.txt
check "rdma link shows rxe0 on $VM_NETDEV" sh -c "rdma link show | grep -q 'rxe0/1 state ACTIVE.*netdev $VM_NETDEV'"
