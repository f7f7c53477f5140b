#!/bin/sh
# Two-node mode when the peer goes away mid-run: once the connector (A) and
# the listener (B) are connected (an ESTABLISHED TCP connection on the
# port), B is killed with SIGKILL. At the verbs level A's next WRITE gets no
# ACK (rxe drops packets for a QP that no longer exists) and ends in
# IBV_WC_RETRY_EXC_ERR, or never with retry_cnt 7; the closed TCP
# connection tells sooner. The contract: A exits 3 (undecided) with
# peer.bootstrap PEER_GONE and peer.status "gone", within its deadline;
# no gdrcheck process (B's worker included) is left.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
peer_gdr_setup

# B started directly (env execs gdrcheck), so $! is gdrcheck's own pid.
# shellcheck disable=SC2086 # PEER_OPTS is a word list
env NCCL_IB_HCA=rxe1 FAKE_CUDA_SCENARIO="$PWD/cuda.conf" "$GDRCHECK" --json \
	--libcuda "$LIBCUDA_FAKE" $PEER_OPTS --listen "$PEER_B_IP:$PEER_PORT" \
	--token "$PEER_TOKEN" --deadline 50 >B.json 2>B.json.stderr &
pidB=$!
peer_gdr A rxe0 --peer "$PEER_B_IP:$PEER_PORT" --token "$PEER_TOKEN" --deadline 50 &
pidA=$!
check "A and B connected within 45 s" wait_until 45 tcp_established "$PEER_PORT"
sleep 1
check "B (pid $pidB) still running when it is killed" kill -0 "$pidB"
kill -KILL "$pidB"
say "killed B (SIGKILL) at $(cut -d' ' -f1 /proc/uptime)"
wait "$pidA" || true
wait "$pidB" 2>/dev/null || true
peer_show A
sleep 1
no_gdrcheck_left
check_eq "connector (A) exit status" 3 "$rc"
report_checks A.json <<'CHECKS'
peer.status gone
	.peer.status == "gone"
peer.bootstrap PEER_GONE (not PASS, not BLOCKED)
	.results[] | select(.gate == "peer.bootstrap") | .reason_code == "PEER_GONE" and .status != "PASS" and .status != "BLOCKED"
verdict exit_code 3
	.verdict.exit_code == 3
rails it lists carry the ports' IB MTUs (256 ... 4096, as a healthy run reports), not a netdev's 1500
	[256, 512, 1024, 2048, 4096, null] as $ib | all(.peer.rails[]?; (.mtu as $m | $ib | index([$m])) and (.peer_mtu as $m | $ib | index([$m])))
CHECKS
check "A ended well within its 50 s deadline" test "$(cut -d. -f1 A.secs)" -lt 50
