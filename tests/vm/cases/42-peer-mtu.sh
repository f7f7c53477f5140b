#!/bin/sh
# Two-node mode across an MTU mismatch: eth1 at MTU 9000 gives rxe1 an
# active_mtu of 4096, eth0 stays at 1500 (rxe0: 1024). At the verbs level
# QPs at their own ports' MTUs fail (the 1024-side's first WRITE completes
# IBV_WC_REM_INV_REQ_ERR) and both at 4096 never complete (README.md, "Two
# ends on a wire"); both at the smaller pass. The contract: peer.link WARN
# MTU_MISMATCH naming both MTUs, the rail runs at the smaller and is
# verified, both sides exit 0 (warnings allowed).
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
peer_gdr_setup
check "eth1 mtu 9000 -> rxe1 active_mtu 4096" peer_mtu "$PEER_B_NET" 9000
check_eq "rxe0 active_mtu" 1024 "$(ib_active_mtu rxe0)"

peer_gdr B rxe1 --listen "$PEER_B_IP:$PEER_PORT" --token "$PEER_TOKEN" --deadline 50 &
pidB=$!
peer_gdr A rxe0 --peer "$PEER_B_IP:$PEER_PORT" --token "$PEER_TOKEN" --deadline 50
wait "$pidB" || true
peer_show B
rcB=$rc
peer_show A
rcA=$rc
no_gdrcheck_left
check_eq "listener (B) exit status" 0 "$rcB"
check_eq "connector (A) exit status" 0 "$rcA"

bad=0
for side in A B; do
	if [ "$side" = A ]; then mtu=1024 pmtu=4096; else mtu=4096 pmtu=1024; fi
	say "=== report of side $side"
	(report_checks "$side.json" --argjson mtu "$mtu" --argjson pmtu "$pmtu" <<'CHECKS'
peer.status ok
	.peer.status == "ok"
rail 0: this port's MTU and the peer's as the ports say
	.peer.rails[0] | .mtu == $mtu and .peer_mtu == $pmtu
peer.link WARN MTU_MISMATCH on the rail
	any(.results[]; .gate == "peer.link" and .status == "WARN" and .reason_code == "MTU_MISMATCH")
its reason names both MTUs
	.results[] | select(.gate == "peer.link" and .reason_code == "MTU_MISMATCH") | .reason | test("1024") and test("4096")
the rail still ran (at the smaller MTU) and verified peermem
	.peer.rails[0].mechanisms[] | select(.mechanism == "peermem") | .verified == true
peer.connect and peer.transfer PASS
	([.results[] | select(.gate == "peer.connect")] | length >= 1 and all(.[]; .status == "PASS"))
		and any(.results[]; .gate == "peer.transfer" and .status == "PASS")
verdict READY (warnings allowed), exit_code 0
	.verdict.status == "READY" and .verdict.exit_code == 0
CHECKS
	) || bad=$((bad + 1))
done
check_eq "reports with failed checks" 0 "$bad"
