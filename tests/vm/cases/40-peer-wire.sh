#!/bin/sh
# The peer cases' wire, proven with rdma-core's tools alone (no gdrcheck):
# end B (rxe1 on eth1) against end A (rxe0 on eth0) (guest/lib.sh peer_up;
# tests/vm/README.md "Two ends on a wire").
# 1. healthy: ibv_rc_pingpong, 200 round trips of 4 KiB, both exit 0;
#    rxe's sent/rcvd_pkts move on both ends, and eth0's tx / eth1's rx
#    packet counts move by at least as much: the RoCE packets crossed the
#    virtual wire, they were not looped back inside the kernel.
# 2. MTU mismatch (eth1 9000 -> rxe1 active_mtu 4096, eth0 1500 -> 1024).
# 3. GID family: IPv6 on one end and IPv4 on the other.
# 4. nftables drops UDP 4791 arriving on eth1.
# 5. the peer goes away mid-run.
# 2-5 with rc_pair (guest/rc_pair.c), which prints each verbs call's errno
# and each completion's status and time. What each fault does at the verbs
# level: README.md.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh

trap peer_down EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
check "end B: eth1 up, rxe1 on it (peer_up)" peer_up
gA=$(gid_index_of rxe0 "$PEER_A_IP") || fail "rxe0 has no GID for $PEER_A_IP"
gB=$(gid_index_of rxe1 "$PEER_B_IP") || fail "rxe1 has no GID for $PEER_B_IP"
say "rxe0 GID $gA: $(cat /sys/class/infiniband/rxe0/ports/1/gids/"$gA"), rxe1 GID $gB: $(cat /sys/class/infiniband/rxe1/ports/1/gids/"$gB")"
say "GID types in use on rxe0 and rxe1 (rxe has RoCE v2 only): $(cat /sys/class/infiniband/rxe[01]/ports/1/gid_attrs/types/* 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')"
say "route A -> B bound to $PEER_A_NET: $(ip route get "$PEER_B_IP" oif "$PEER_A_NET" | head -n 1)"
say "route B -> A bound to $PEER_B_NET: $(ip route get "$PEER_A_IP" oif "$PEER_B_NET" | head -n 1)"
# shellcheck disable=SC2012 # the listing is the fact
say "rxe1 counters/ directory: $(ls /sys/class/infiniband/rxe1/ports/1/counters 2>/dev/null | tr '\n' ' ' || echo absent)"
# shellcheck disable=SC2012
say "rxe1 hw_counters: $(ls /sys/class/infiniband/rxe1/ports/1/hw_counters | tr '\n' ' ')"

PORT=18600
# tcp_listening PORT: a socket listens on PORT (/proc/net/tcp, state 0A).
tcp_listening() {
	grep -qi ":$(printf '%04X' "$1") 00000000:0000 0A" /proc/net/tcp
}
now() { cut -d' ' -f1 /proc/uptime; }
snap() {
	printf '%s %s %s %s %s %s' \
		"$(hw_counter rxe0 sent_pkts)" "$(hw_counter rxe0 rcvd_pkts)" \
		"$(hw_counter rxe1 sent_pkts)" "$(hw_counter rxe1 rcvd_pkts)" \
		"$(cat "/sys/class/net/$PEER_A_NET/statistics/tx_packets")" \
		"$(cat "/sys/class/net/$PEER_B_NET/statistics/rx_packets")"
}
# pp NAME SECS "SERVER ARGS" "CLIENT ARGS" [KILL_AFTER]: ibv_rc_pingpong,
# server on rxe1, client on rxe0 to 10.0.2.16, each under a SECS limit;
# sets $src $crc (exit statuses) and $csecs (the client's wall time).
# KILL_AFTER: SIGKILL the server that many seconds after the client
# started.
pp() {
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086 # argument lists
	timeout "$2" ibv_rc_pingpong -p "$PORT" -d rxe1 $3 >"$1.server" 2>&1 &
	_spid=$!
	wait_until 5 tcp_listening "$PORT" || say "($1: server not listening after 5 s)"
	_t0=$(now)
	if [ -n "${5:-}" ]; then
		(sleep "$5" && kill -KILL "$_spid") &
	fi
	crc=0
	# shellcheck disable=SC2086
	timeout "$2" ibv_rc_pingpong -p "$PORT" -d rxe0 $4 "$PEER_B_IP" >"$1.client" 2>&1 || crc=$?
	csecs=$(awk -v a="$_t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
	src=0
	wait "$_spid" || src=$?
	say "--- $1: server (-d rxe1 $3) exit $src:"
	sed 's/^/    /' "$1.server"
	say "--- $1: client (-d rxe0 $4) exit $crc after ${csecs}s:"
	sed 's/^/    /' "$1.client"
}

# 1. healthy
s0=$(snap)
pp healthy 30 "-g $gB -n 200 -s 4096" "-g $gA -n 200 -s 4096"
s1=$(snap)
check_eq "healthy: server exit status" 0 "$src"
check_eq "healthy: client exit status" 0 "$crc"
check "healthy: 200 iterations" grep -q '200 iters' healthy.client
# shellcheck disable=SC2086
set -- $s0 $s1
say "rxe0 sent +$(($7 - $1)) rcvd +$(($8 - $2)); rxe1 sent +$(($9 - $3)) rcvd +$((${10} - $4)); $PEER_A_NET tx +$((${11} - $5)); $PEER_B_NET rx +$((${12} - $6))"
# 200 x 4 KiB each way at 1024-byte MTU: >= 800 data packets per end.
check "rxe0 sent >= 800 packets" test $(($7 - $1)) -ge 800
check "rxe0 received >= 800 packets" test $(($8 - $2)) -ge 800
check "rxe1 sent >= 800 packets" test $(($9 - $3)) -ge 800
check "rxe1 received >= 800 packets" test $((${10} - $4)) -ge 800
check "$PEER_A_NET transmitted at least what rxe0 sent (the wire, not a loopback)" test $((${11} - $5)) -ge $(($7 - $1))
check "$PEER_B_NET received at least what rxe1 received" test $((${12} - $6)) -ge $((${10} - $4))

# rcp NAME ARGS...: rc_pair ARGS (guest/rc_pair.c); sets $prc, prints its
# output and the rxe counters (rxe0/rxe1) before and after.
counters() {
	for _c in sent_pkts rcvd_pkts send_err retry_exceeded_err completer_retry_err; do
		printf '%s=%s/%s ' "$_c" "$(hw_counter rxe0 $_c)" "$(hw_counter rxe1 $_c)"
	done
}
rcp() {
	_n=$1
	shift
	_c0=$(counters)
	prc=0
	timeout 60 rc_pair "$@" >"$_n.out" 2>&1 || prc=$?
	say "--- $_n: rc_pair $* -> exit $prc"
	sed 's/^/    /' "$_n.out"
	say "    counters rxe0/rxe1 before: $_c0"
	say "    counters rxe0/rxe1 after:  $(counters)"
}
# result NAME: rc_pair's last line, "result: ..."
result() { sed -n 's/^result: //p' "$1.out"; }
A="rxe0:$gA"
B="rxe1:$gB"

rcp healthy-rc -a "$A" -b "$B" -n 2
check_eq "rc_pair: WRITE/READ both ways, verified" "ok, 2 iterations verified" "$(result healthy-rc)"

# 2. MTU mismatch
check "eth1 mtu 9000 -> rxe1 active_mtu 4096" peer_mtu "$PEER_B_NET" 9000
check_eq "rxe0 active_mtu (eth0 mtu $(cat "/sys/class/net/$PEER_A_NET/mtu"))" 1024 "$(ib_active_mtu rxe0)"
rcp mtu-own -a "$A" -b "$B" -n 1 -w 10
check "MTU 1024 vs 4096, each QP at its port's: the first WRITE completes IBV_WC_REM_INV_REQ_ERR (9)" \
	grep -q '^result: wc status 9 .* on iter 0 A WRITE' mtu-own.out
rcp mtu-small -a "$A" -b "$B" -n 1 -m 1024 -w 10
check_eq "both QPs at the smaller MTU (1024): verified" "ok, 1 iterations verified" "$(result mtu-small)"
send_err0=$(hw_counter rxe0 send_err)
rcp mtu-large -a "$A" -b "$B" -n 1 -m 4096 -t 12 -r 3 -w 3
check "both at the larger (4096): no completion at all, even with retry_cnt 3" grep -q '^result: no completion after 3 s' mtu-large.out
check "rxe0 counted send errors (its 4 KiB packets exceed eth0's MTU)" test "$(hw_counter rxe0 send_err)" -gt "$send_err0"
check "eth1 mtu back to 1500" peer_mtu "$PEER_B_NET" 1500

# 3. GID family
check "IPv6 addresses and their GIDs on both ends" peer_ipv6_up
g6A=$(gid_index_of rxe0 "$PEER_A_IP6")
g6B=$(gid_index_of rxe1 "$PEER_B_IP6")
say "rxe0 $PEER_A_IP6 at GID $g6A, rxe1 $PEER_B_IP6 at GID $g6B"
rcp gid-mixed -a "$A" -b "rxe1:$g6B" -n 1 -w 5
check "A IPv4 GID, B IPv6 GID: A's ibv_modify_qp(RTR) fails with EINVAL" \
	grep -q '^A: ibv_modify_qp RTR failed .*errno 22' gid-mixed.out
rcp gid-mixed2 -a "rxe0:$g6A" -b "$B" -n 1 -w 5
check "A IPv6 GID, B IPv4 GID: the same" grep -q '^A: ibv_modify_qp RTR failed .*errno 22' gid-mixed2.out
rcp gid-linklocal -a rxe0:0 -b rxe1:0 -n 1 -w 5 -t 12 -r 3
check_eq "both on their link-local IPv6 GIDs (index 0): verified" "ok, 1 iterations verified" "$(result gid-linklocal)"
# A fact, not a check: the global IPv6 addresses of two netdevs of one
# kernel reach each other through lo, where no rxe listens.
rcp gid-v6-global -a "rxe0:$g6A" -b "rxe1:$g6B" -n 1 -w 5 -t 12 -r 3

# 4. nftables on end B drops UDP 4791
check "nftables drops UDP 4791 on $PEER_B_NET" peer_firewall "$PEER_B_NET"
rcp firewall -a "$A" -b "$B" -n 1 -w 10 -t 12 -r 3
check "firewall, timeout 12 retry 3: the first WRITE completes IBV_WC_RETRY_EXC_ERR (12)" \
	grep -q '^result: wc status 12 .* on iter 0 A WRITE' firewall.out
drops=$(peer_firewall_drops)
check "nftables dropped the tries ($drops packets)" test "$drops" -gt 0
rcp firewall-reverse -a "$B" -b "$A" -n 1 -w 10 -t 12 -r 3
check "the filtered end's own WRITE (rxe1 -> rxe0) fails the same way: its ACKs are dropped" \
	grep -q '^result: wc status 12 .* on iter 0 A WRITE' firewall-reverse.out
rcp firewall-14-6 -a "$A" -b "$B" -n 1 -w 10 -t 14 -r 6
check "timeout 14 (67 ms) retry 6: IBV_WC_RETRY_EXC_ERR too" grep -q '^result: wc status 12 ' firewall-14-6.out
rcp firewall-retry7 -a "$A" -b "$B" -n 1 -w 3 -t 12 -r 7
check "firewall, retry 7: rxe retries forever, no completion within 3 s" \
	grep -q '^result: no completion after 3 s' firewall-retry7.out
nft delete table inet "$PEER_NFT_TABLE"

# 5. the peer goes away mid-run
rcp gone -a "$A" -b "$B" -n 2 -k 1 -w 10 -t 12 -r 3
check "iteration 0 verified before B's QP went away" grep -q '^iter 0 B WRITE -> A: ok' gone.out
check "after it: A's WRITE completes IBV_WC_RETRY_EXC_ERR (12)" \
	grep -q '^result: wc status 12 .* on iter 1 A WRITE' gone.out
