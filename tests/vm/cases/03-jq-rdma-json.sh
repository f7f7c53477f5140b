#!/bin/sh
# jq works in the guest: assert on real JSON (iproute2's `rdma -j`).
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh

rdma -j link show >link.json
cat link.json
echo
jq_check "rdma link JSON has rxe0 port 1 ACTIVE on $VM_NETDEV" link.json \
	".[] | select(.ifname == \"rxe0\" and .port == 1 and .state == \"ACTIVE\" and .netdev == \"$VM_NETDEV\")"
# A filter that selects nothing must make jq -e fail (no false positives).
if jq -e '.[] | select(.ifname == "no-such-dev")' link.json >/dev/null; then
	fail "jq -e succeeded on an empty selection"
fi
say "ok: jq -e fails on an empty selection"
