#!/bin/sh
# A real RC data path over soft-RoCE: ibv_rc_pingpong server and client on
# rxe0 (loopback through the kernel verbs stack and the UDP/RoCEv2 path).
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh

gid=$(for g in /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/*; do
	i=${g##*/}
	if [ "$(cat "$g" 2>/dev/null)" = "RoCE v2" ] &&
		grep -q '^0000:0000:0000:0000:0000:ffff:' "/sys/class/infiniband/rxe0/ports/1/gids/$i"; then
		echo "$i"
		break
	fi
done)
check "rxe0 has a RoCE v2 IPv4 GID" test -n "$gid"
say "using GID index $gid: $(cat "/sys/class/infiniband/rxe0/ports/1/gids/$gid")"

ibv_rc_pingpong -d rxe0 -g "$gid" -n 20 -s 4096 >server.txt 2>&1 &
srv=$!
sleep 1
rc=0
ibv_rc_pingpong -d rxe0 -g "$gid" -n 20 -s 4096 127.0.0.1 >client.txt 2>&1 || rc=$?
wait "$srv" || rc=$?
cat server.txt client.txt
check_eq "ibv_rc_pingpong exit status" 0 "$rc"
check "client moved 20 iterations" grep -q '20 iters' client.txt
