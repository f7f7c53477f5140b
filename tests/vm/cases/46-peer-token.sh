#!/bin/sh
# Two-node mode with a wrong token: the listener (B) waits with the right
# one, the connector (A) comes with another. The contract: A exits 3 with
# peer.bootstrap PEER_TOKEN_REJECTED (peer.status "rejected"); B refuses
# it, keeps waiting for the right peer (still running after A ended) and
# exits 3 at its deadline (peer.bootstrap not PASS). No RoCE traffic.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
peer_gdr_setup

deadlineB=35
peer_gdr B rxe1 --listen "$PEER_B_IP:$PEER_PORT" --token "$PEER_TOKEN" --deadline "$deadlineB" &
pidB=$!
peer_gdr A rxe0 --peer "$PEER_B_IP:$PEER_PORT" --token "wrong-$PEER_TOKEN" --deadline 30
peer_show A
rcA=$rc
check "B still waits after A was refused" kill -0 "$pidB"
wait "$pidB" || true
peer_show B
rcB=$rc
no_gdrcheck_left
check_eq "connector (A) exit status" 3 "$rcA"
check_eq "listener (B) exit status" 3 "$rcB"
report_checks A.json <<'CHECKS'
A: peer.status rejected
	.peer.status == "rejected"
A: peer.bootstrap PEER_TOKEN_REJECTED
	.results[] | select(.gate == "peer.bootstrap") | .reason_code == "PEER_TOKEN_REJECTED" and .status != "PASS"
A: verdict exit_code 3
	.verdict.exit_code == 3
CHECKS
report_checks B.json <<'CHECKS'
B: peer.bootstrap not PASS (the right peer never came)
	.results[] | select(.gate == "peer.bootstrap") | .status != "PASS"
B: no rail tested
	(.peer.rails // []) | length == 0
B: verdict exit_code 3
	.verdict.exit_code == 3
CHECKS
secsB=$(cut -d. -f1 B.secs)
check "B ran until about its deadline ($secsB s of $deadlineB)" test "$secsB" -ge $((deadlineB - 5)) -a "$secsB" -le $((deadlineB + 10))
