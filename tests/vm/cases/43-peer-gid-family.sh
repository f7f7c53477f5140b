#!/bin/sh
# Two-node mode with the GID families crossed: end B gets an IPv6 address
# (fd00:2::16 on eth1, a RoCE v2 GID of family IPv6) and chooses it as NCCL
# would with NCCL_IB_ADDR_FAMILY=AF_INET6; end A stays on IPv4
# (::ffff:10.0.2.15). At the verbs level the first ibv_modify_qp(RTR)
# fails with EINVAL (README.md, "Two ends on a wire"). The contract:
# peer.link BLOCKED GID_FAMILY_MISMATCH naming both sides' GIDs, on both
# sides, exit 1. (GID_TYPE_MISMATCH, RoCE v1 against v2, cannot be built
# here: rxe registers RoCE v2 GIDs only.)
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
peer_gdr_setup
check "fd00:2::16/64 on $PEER_B_NET" ip -6 addr add "$PEER_B_IP6/64" dev "$PEER_B_NET" nodad
check "rxe1 lists it as a GID" wait_until 5 gid_index_of rxe1 "$PEER_B_IP6"
g6B=$(gid_index_of rxe1 "$PEER_B_IP6")
say "rxe1 GID $g6B: $(cat "/sys/class/infiniband/rxe1/ports/1/gids/$g6B") ($(cat "/sys/class/infiniband/rxe1/ports/1/gid_attrs/types/$g6B"))"

NCCL_IB_ADDR_FAMILY=AF_INET6 peer_gdr B rxe1 --listen "$PEER_B_IP:$PEER_PORT" --token "$PEER_TOKEN" --deadline 50 &
pidB=$!
peer_gdr A rxe0 --peer "$PEER_B_IP:$PEER_PORT" --token "$PEER_TOKEN" --deadline 50
wait "$pidB" || true
peer_show B
rcB=$rc
peer_show A
rcA=$rc
no_gdrcheck_left
check_eq "listener (B) exit status" 1 "$rcB"
check_eq "connector (A) exit status" 1 "$rcA"

bad=0
for side in A B; do
	say "=== report of side $side"
	(report_checks "$side.json" --argjson g6 "$g6B" <<'CHECKS'
peer.status ok (the bootstrap worked; the rail did not)
	.peer.status == "ok"
B's rail uses the IPv6 GID's index
	(.peer.role == "listener" and .peer.rails[0].gid_index == $g6) or (.peer.role == "connector" and .peer.rails[0].peer_gid_index == $g6)
peer.link BLOCKED GID_FAMILY_MISMATCH
	any(.results[]; .gate == "peer.link" and .status == "BLOCKED" and .reason_code == "GID_FAMILY_MISMATCH")
it names both GIDs (B's fd00:2::16, A's 10.0.2.15 in any spelling)
	.results[] | select(.gate == "peer.link" and .reason_code == "GID_FAMILY_MISMATCH") | (.reason + " " + (.evidence | tostring))
		| test("fd00:(0002|2):") and test("10\\.0\\.2\\.15|0a00:020f")
no transfer claimed verified
	all(.peer.rails[0].mechanisms[]?; .verified != true)
verdict BLOCKED, exit_code 1
	.verdict.exit_code == 1
CHECKS
	) || bad=$((bad + 1))
done
check_eq "reports with failed checks" 0 "$bad"
