#!/bin/sh
# Two-node mode with RoCE v2 (UDP 4791) dropped by nftables on end B's
# input (eth1): the TCP bootstrap is untouched, the QPs reach RTS, but no
# RoCE packet from A gets in and none of B's gets ACKed. At the verbs
# level: IBV_WC_RETRY_EXC_ERR after ~(retry+1) x timeout, or no completion
# ever with retry_cnt 7 (rxe retries forever; README.md, "Two ends on a
# wire"). The contract: peer.connect BLOCKED QP_RETRY_EXCEEDED or
# QP_TIMEOUT whose fix names UDP port 4791, on both sides, exit 1, within
# the deadline.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
peer_gdr_setup
check "nftables drops UDP 4791 arriving on $PEER_B_NET" peer_firewall "$PEER_B_NET"

peer_gdr B rxe1 --listen "$PEER_B_IP:$PEER_PORT" --token "$PEER_TOKEN" --deadline 40 &
pidB=$!
peer_gdr A rxe0 --peer "$PEER_B_IP:$PEER_PORT" --token "$PEER_TOKEN" --deadline 40
wait "$pidB" || true
peer_show B
rcB=$rc
peer_show A
rcA=$rc
no_gdrcheck_left
drops=$(peer_firewall_drops)
check "nftables dropped RoCE packets ($drops)" test "$drops" -gt 0
check_eq "listener (B) exit status" 1 "$rcB"
check_eq "connector (A) exit status" 1 "$rcA"

bad=0
for side in A B; do
	say "=== report of side $side"
	(report_checks "$side.json" <<'CHECKS'
peer.status ok (TCP is not filtered)
	.peer.status == "ok"
peer.connect BLOCKED QP_RETRY_EXCEEDED or QP_TIMEOUT
	any(.results[]; .gate == "peer.connect" and .status == "BLOCKED" and (.reason_code == "QP_RETRY_EXCEEDED" or .reason_code == "QP_TIMEOUT"))
its fix names UDP port 4791
	.results[] | select(.gate == "peer.connect" and .status == "BLOCKED") | .remediation | test("4791")
no transfer claimed verified
	all(.peer.rails[0].mechanisms[]?; .verified != true)
verdict exit_code 1
	.verdict.exit_code == 1
CHECKS
	) || bad=$((bad + 1))
done
check_eq "reports with failed checks" 0 "$bad"
