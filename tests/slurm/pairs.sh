#!/bin/sh
# examples/slurm/pair-sweep.sh (two-node gdrcheck, issue 28) against a real
# Slurm: munged, slurmctld and FOUR slurmd on localhost (Debian's
# slurm-wlm is built with multiple-slurmd support, `scontrol show config`
# says MULTIPLE_SLURMD = Yes: each slurmd is `slurmd -N nK` with its own
# Port= in slurm.conf), so `srun -N2 -w n1,n2` runs one task on each of two
# Slurm nodes of this one host and the two sides talk over 127.0.0.1.
#
#   tests/slurm/pairs.sh      ends with "slurm-pairs: N passed, N failed"
#
#   1. the plan (pair-sweep.sh -n, pair-plan.awk): every node in a pair,
#      every named switch hop crossed, rounds without a shared node; the
#      switch file as "NODE SWITCH" lines and as topology.conf
#   2. pair-summary.sh over synthetic reports (tests/slurm/pair-fixture.jq:
#      a scenario's real report given the contract's "peer" object and
#      peer.* results; fixtures, not gdrcheck output): verdicts, rails,
#      causes, suspects, exit 0/1/2
#   3. the sweep on the real Slurm, first with a stand-in for gdrcheck that
#      checks the plumbing (roles by SLURM_PROCID, the listener's NodeAddr
#      and port reach the connector: a real TCP connection between the two
#      tasks; it writes no report, so the summary says MISSING), then with
#      the real ./gdrcheck --listen/--peer on the scenario fixtures
#      (tests/scenarios/healthy-dmabuf sysroot + doubles): the doubles
#      connect QPs but carry no data between processes, so every rail ends
#      in QP_RETRY_EXCEEDED (what tests/check-peer.py expects too), and the
#      summary must say so; a gdrcheck without --listen is a FAILED check
#      ("two-node mode not built"), never a skip and never a faked report.
# Needs root (SlurmdUser=root), ./gdrcheck and the doubles, munged,
# slurmctld, slurmd, srun, scontrol, jq, python3. KEEP=1 keeps the work
# directory.
# Checks are `sh -c '...$1...' sh ARG`: single quotes on purpose (SC2016).
# shellcheck disable=SC2016
set -u

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
slurm_test_begin slurm-pairs gdrcheck-pairs
ex=$top/examples/slurm

# ---------------------------------------------------------------- prerequisites
slurm_prereqs "SlurmdUser=root" \
	munged slurmctld slurmd srun scontrol sinfo jq python3 timeout

# ------------------------------------------------------------ slurm.conf
nnodes=4
ports=$(free_ports 5)
ctld_port=${ports%% *}
node_ports=${ports#* }
slurm_work
{
	slurm_conf_head gdrcheck-pairs "$ctld_port" "$work/spool/%n" slurmd.%n
	k=1
	for p in $node_ports; do
		echo "NodeName=n$k NodeHostname=localhost NodeAddr=127.0.0.1 Port=$p CPUs=1 RealMemory=1 State=UNKNOWN"
		k=$((k + 1))
	done
	echo "PartitionName=gpu Nodes=n[1-$nnodes] Default=YES State=UP"
} >"$conf"

# ------------------------------------------------------------------ 1. the plan
# plan_ok PLAN MAP: every node of MAP ("NODE SWITCH" lines) in a pair, every
# switch with two or more nodes has an inner pair, every two switches a
# pair across, no node twice in a round, no pair twice; prints why not.
plan_ok() {
	awk 'FNR == NR { sw[$1] = $2; if (!($2 in seen)) { seen[$2] = 1; s[++ns] = $2 }
		cnt[$2]++; next }
	{
		if (($1, $2) in busy || ($1, $3) in busy) { print "round " $1 ": a node twice"; bad = 1 }
		busy[$1, $2] = 1; busy[$1, $3] = 1
		if (($2, $3) in pr || ($3, $2) in pr) { print "pair twice: " $2 " " $3; bad = 1 }
		pr[$2, $3] = 1
		in_pair[$2] = 1; in_pair[$3] = 1
		a = sw[$2]; b = sw[$3]
		hop[a, b] = 1; hop[b, a] = 1
		want = (a == b ? a : a "~" b); alt = b "~" a
		if ($4 != want && $4 != alt) { print "pair " $2 " " $3 ": hop " $4 ", not " want; bad = 1 }
	}
	END {
		for (x in sw) if (!(x in in_pair)) { print "node " x " in no pair"; bad = 1 }
		for (i = 1; i <= ns; i++) {
			if (cnt[s[i]] >= 2 && !((s[i], s[i]) in hop)) { print "switch " s[i] ": no inner pair"; bad = 1 }
			for (j = i + 1; j <= ns; j++)
				if (!((s[i], s[j]) in hop)) { print "hop " s[i] "~" s[j] " not crossed"; bad = 1 }
		}
		exit bad
	}' "$2" "$1"
}

"$ex/pair-sweep.sh" -n -w 'n[1-5]' >"$work/plan1" 2>"$work/plan1.err"
rc=$?
printf 'n%s -\n' 1 2 3 4 5 >"$work/map1"
check "plan, 5 nodes, no switches: exit 0, a ring of 5 pairs in 3 rounds" \
	sh -c '[ "$1" = 0 ] && [ "$(wc -l <"$2")" = 5 ] && [ "$(tail -n 1 "$2" | cut -d " " -f 1)" = 3 ] &&
		[ "$(head -n 1 "$2")" = "1 n1 n2 -" ]' sh "$rc" "$work/plan1"
check "plan, 5 nodes: every node in two pairs, no node twice in a round" \
	sh -c '[ "$(awk "{ c[\$2]++; c[\$3]++ } END { for (n in c) if (c[n] != 2) print n }" "$1")" = "" ]' \
	sh "$work/plan1"
check "plan, 5 nodes: the coverage checker agrees" plan_ok "$work/plan1" "$work/map1"

cat >"$work/map2" <<-EOF
	# node leaf-switch
	n1 leafA
	n2 leafA
	n3 leafA
	n4 leafB
	n5 leafB
	n6 leafC
EOF
"$ex/pair-sweep.sh" -n -w 'n[1-6]' -s "$work/map2" >"$work/plan2" 2>&1
rc=$?
check "plan, 6 nodes on 3 switches: exit 0, 7 pairs (ring of 3, pair of 2, 3 hops)" \
	sh -c '[ "$1" = 0 ] && [ "$(wc -l <"$2")" = 7 ]' sh "$rc" "$work/plan2"
grep -v '^#' "$work/map2" >"$work/map2.clean"
check "plan, 6 nodes on 3 switches: every node, every switch and every hop covered" \
	plan_ok "$work/plan2" "$work/map2.clean"
check "plan: the hops are named (leafA~leafB, leafA~leafC, leafB~leafC)" \
	sh -c 'for h in leafA~leafB leafA~leafC leafB~leafC leafA leafB; do
		grep -q " $h\$" "$1" || exit 1; done' sh "$work/plan2"
# The same as Slurm's topology.conf.
cat >"$work/topology.conf" <<-EOF
	# leaf switches and a spine
	SwitchName=leafA Nodes=n[1-3]
	SwitchName=leafB Nodes=n[4-5]
	SwitchName=leafC Nodes=n6
	SwitchName=spine Switches=leaf[A-C]
EOF
"$ex/pair-sweep.sh" -n -w 'n[1-6]' -s "$work/topology.conf" >"$work/plan3" 2>&1
check "plan: topology.conf gives the same plan as the NODE SWITCH file" \
	cmp "$work/plan2" "$work/plan3"
"$ex/pair-sweep.sh" -n -c 1 -w 'n[1-6]' -s "$work/map2" >"$work/plan4" 2>&1
check "plan -c 1: one pair per round (7 rounds)" \
	sh -c '[ "$(cut -d " " -f 1 "$1" | uniq -c | awk "\$1 != 1" | wc -l)" = 0 ] &&
		[ "$(tail -n 1 "$1" | cut -d " " -f 1)" = 7 ]' sh "$work/plan4"
# 40 nodes on 5 uneven switches, one switch of one node, some unnamed.
awk 'BEGIN { for (i = 1; i <= 37; i++) print "g" i, "sw" (i <= 1 ? 1 : (i % 4) + 2) }' >"$work/map5"
"$ex/pair-sweep.sh" -n -w 'g[1-40]' -s "$work/map5" >"$work/plan5" 2>&1
rc=$?
{
	cat "$work/map5"
	printf 'g%s -\n' 38 39 40
} >"$work/map5.all"
plan_ok "$work/plan5" "$work/map5.all" >"$work/plan5.why" 2>&1
prc=$?
check "plan, 40 nodes on 5 switches + 3 unnamed: exit $rc, every node/switch/hop covered, rounds disjoint" \
	sh -c '[ "$1" = 0 ] && [ "$2" = 0 ] || { cat "$3"; exit 1; }' sh "$rc" "$prc" "$work/plan5.why"
check "plan, 40 nodes: $(wc -l <"$work/plan5") pairs in $(tail -n 1 "$work/plan5" | cut -d ' ' -f 1) rounds (at most 2 x max degree - 1)" \
	sh -c 'd=$(awk "{ c[\$2]++; c[\$3]++ } END { m = 0; for (n in c) if (c[n] > m) m = c[n]; print m }" "$1")
		[ "$(tail -n 1 "$1" | cut -d " " -f 1)" -le $((2 * d - 1)) ]' sh "$work/plan5"
"$ex/pair-sweep.sh" -n -w n1 >"$work/plan6" 2>&1
rc=$?
check "plan, one node: exit 2, says a pair needs two" \
	sh -c '[ "$1" = 2 ] && grep -q "a pair needs two" "$2"' sh "$rc" "$work/plan6"
"$ex/pair-sweep.sh" -n >"$work/plan7" 2>&1
rc=$?
check "plan, no nodes (no -w, -p, allocation): exit 2" \
	sh -c '[ "$1" = 2 ] && grep -q "no nodes" "$2"' sh "$rc" "$work/plan7"

# ------------------------------------------------------ 2. the summary, fixtures
# side DIR PAIR ROLE RC BASE SPEC: a synthetic report of one side (BASE a
# scenario's expected.json; SPEC for pair-fixture.jq) and its .rc.
side() {
	jq --argjson spec "$6" -f tests/slurm/pair-fixture.jq "tests/scenarios/$5/expected.json" \
		>"$1/$2.$3.json" && echo "$4" >"$1/$2.$3.rc"
}
rails2='[{"rail":0,"nic":"mlx5_0","peer_nic":"mlx5_0","ratio":0.93},{"rail":1,"nic":"mlx5_1","peer_nic":"mlx5_1","ratio":0.91}]'
mtu='{"gate":"peer.link","rail":0,"status":"WARN","code":"MTU_MISMATCH","reason":"active MTU 1024 here, 4096 on the peer","remediation":"set the same MTU on both ports (ip link set ... mtu 9000 on RoCE)"}'
qp0='{"gate":"peer.connect","rail":0,"status":"BLOCKED","code":"QP_RETRY_EXCEEDED","reason":"no answer from the far NIC","remediation":"open UDP 4791 between the nodes; check the route and the switch"}'
qp1='{"gate":"peer.connect","rail":1,"status":"BLOCKED","code":"QP_RETRY_EXCEEDED","reason":"no answer from the far NIC","remediation":"open UDP 4791 between the nodes; check the route and the switch"}'
gone='{"gate":"peer.bootstrap","rail":null,"status":"ERROR","code":"PEER_GONE","reason":"the peer closed the connection","remediation":"read the report of the other side"}'
bw='{"gate":"peer.bandwidth","rail":0,"status":"BLOCKED","code":"BANDWIDTH_LOW","reason":"21% of 400 Gb/s","remediation":"check the link width and speed of both ports and the PCIe links"}'
fx=$work/fx
mkdir -p "$fx"
# The plan of section 1 (6 nodes, 3 switches), as pair-sweep.sh leaves it.
cp "$work/plan2" "$fx/pairs.plan"
spec() { # ROLE PEER EXIT RAILS FINDINGS
	echo "{\"role\":\"$1\",\"peer_host\":\"$2\",\"exit\":$3,\"rails\":$4,\"findings\":[$5]}"
}
while read -r _ a b _; do
	# One story per pair; the file names are pair-LISTENER-CONNECTOR.
	case $a-$b in
	n1-n2) # good
		side "$fx" pair-n1-n2 listener 0 reg-ok "$(spec listener n2 0 "$rails2" "")"
		side "$fx" pair-n1-n2 connector 0 reg-ok "$(spec connector n1 0 "$rails2" "")" ;;
	n2-n3) # MTU differs on rail 0: WARN, exit 0
		side "$fx" pair-n2-n3 listener 0 reg-ok "$(spec listener n3 0 "$rails2" "$mtu")"
		side "$fx" pair-n2-n3 connector 0 reg-ok "$(spec connector n2 0 "$rails2" "$mtu")" ;;
	n3-n1) # n1 listened (the plan says n3 n1): rail 1 gets no answer
		side "$fx" pair-n1-n3 listener 1 reg-ok "$(spec listener n3 1 "$rails2" "$qp1")"
		side "$fx" pair-n1-n3 connector 1 reg-ok "$(spec connector n1 1 "$rails2" "$qp1")" ;;
	n4-n5) # bandwidth low on rail 0 (one side saw it)
		side "$fx" pair-n4-n5 listener 1 reg-ok "$(spec listener n5 1 "$(echo "$rails2" | sed 's/0.93/0.21/')" "$bw")"
		side "$fx" pair-n4-n5 connector 0 reg-ok "$(spec connector n4 0 "$rails2" "")" ;;
	n1-n4) # rail 0 gets no answer: same cause as n3-n1
		side "$fx" pair-n1-n4 listener 1 reg-ok "$(spec listener n4 1 "$rails2" "$qp0")"
		side "$fx" pair-n1-n4 connector 1 reg-ok "$(spec connector n1 1 "$rails2" "$qp0")" ;;
	n2-n6) # the connector crashed: an .rc, no report; the listener saw it go
		side "$fx" pair-n2-n6 listener 3 reg-ok "$(spec listener n6 3 "[]" "$gone" | jq -c '.status = "gone"')"
		echo 139 >"$fx/pair-n2-n6.connector.rc" ;;
	n5-n6) # n5 is BLOCKED on its own (no RDMA device), the connector fine
		cp tests/scenarios/h200/expected.json "$fx/pair-n5-n6.listener.json"
		echo 1 >"$fx/pair-n5-n6.listener.rc"
		side "$fx" pair-n5-n6 connector 0 reg-ok "$(spec connector n5 0 "[]" "")" ;;
	*) bad "fixture: the plan has an unexpected pair $a $b" ;;
	esac
done <"$fx/pairs.plan"
check "fixtures: the synthetic pair reports validate against the report schema" \
	sh -c 'for f in "$1"/pair-*.json; do python3 tests/validate-json.py report/gdrcheck-report.schema.json "$f" >"$2" 2>&1 ||
		{ cut -c 1-300 "$2"; exit 1; }; done' sh "$fx" "$work/validate.log"
"$ex/pair-summary.sh" "$fx" >"$work/sum.txt" 2>&1
rc=$?
sed 's/^/    | /' "$work/sum.txt"
check "summary (fixtures): exit 2 (a report missing), got $rc" [ "$rc" = 2 ]
check "summary: a row per planned pair, the listener first (n1-n3 for the plan's n3 n1)" \
	sh -c 'for p in n1-n2 n2-n3 n1-n3 n4-n5 n1-n4 n2-n6 n5-n6; do grep -q "^$p " "$1" || exit 1; done' \
	sh "$work/sum.txt"
row() { grep "^$1 " "$work/sum.txt"; }
check "summary: n1-n2 GOOD, no cause, rails r0=PASS/0.93 r1=PASS/0.91" \
	sh -c 'echo "$1" | grep -q "^n1-n2  *leafA  *GOOD  *0  *0  *-  *r0=PASS/0.93 r1=PASS/0.91$"' sh "$(row n1-n2)"
check "summary: n2-n3 WARN, r0=MTU_MISMATCH" \
	sh -c 'echo "$1" | grep -q " WARN .*r0=MTU_MISMATCH/0.93 r1=PASS/0.91"' sh "$(row n2-n3)"
check "summary: n4-n5 BAD, r0=BANDWIDTH_LOW/0.21, exits 1 and 0" \
	sh -c 'echo "$1" | grep -q " BAD  *1  *0  *#[0-9]  *r0=BANDWIDTH_LOW/0.21 r1=PASS/0.91$"' sh "$(row n4-n5)"
check "summary: n2-n6 MISSING (connector exit 139), n5-n6 BAD" \
	sh -c 'echo "$1" | grep -q " MISSING  *3  *139  *#[0-9],#[0-9]  *-$" && echo "$2" | grep -q " BAD  *1  *0 "' \
	sh "$(row n2-n6)" "$(row n5-n6)"
check "summary: QP_RETRY_EXCEEDED groups 2 links (n1-n3 rail 1, n1-n4 rail 0) with the fix" \
	sh -c 'grep -A4 "^#1  2 links  peer.connect QP_RETRY_EXCEEDED$" "$1" >"$1.g" &&
		grep -qx "    n1-n3 rail 1 (GPU1 mlx5_1/1 <-> GPU1 mlx5_1/1)" "$1.g" &&
		grep -qx "    n1-n4 rail 0 (GPU0 mlx5_0/1 <-> GPU0 mlx5_0/1)" "$1.g" &&
		grep -qx "    fix: open UDP 4791 between the nodes; check the route and the switch" "$1.g"' \
	sh "$work/sum.txt"
check "summary: the WARN cause, the bandwidth cause, the node cause, the missing report" \
	sh -c 'grep -q "^#[0-9]  1 link  peer.link MTU_MISMATCH (WARN)$" "$1" &&
		grep -q "^#[0-9]  1 link  peer.bandwidth BANDWIDTH_LOW$" "$1" &&
		grep -A1 "^#[0-9]  1 link  node: nic.devices NO_RDMA_DEVICE$" "$1" | grep -qx "    n5 (listener of n5-n6)" &&
		grep -A1 "^#[0-9]  1 link  no report$" "$1" | grep -qx "    n6 (connector of n2-n6, exit 139)"' \
	sh "$work/sum.txt"
check "summary: suspects n1 (2 of 3), n4, n5, n6 (2 of 2)" \
	grep -qx "nodes in more than one bad pair: n1 (2 of 3 pairs bad), n4 (2 of 2 pairs bad), n5 (2 of 2 pairs bad), n6 (2 of 2 pairs bad)" "$work/sum.txt"
check "summary: counts 7 pairs, GOOD 1, WARN 1, BAD 4, MISSING 1" \
	sh -c 'grep -qx "pairs:    7" "$1" && grep -qx "GOOD:     1" "$1" && grep -qx "WARN:     1" "$1" &&
		grep -qx "BAD:      4" "$1" && grep -qx "MISSING:  1" "$1"' sh "$work/sum.txt"
"$ex/pair-summary.sh" --tsv "$fx" >"$work/sum.tsv" 2>&1
check "summary --tsv: header, 7 rows, cause lines, counts" \
	sh -c '[ "$(head -n 1 "$1")" = "pair	hop	verdict	listener_exit	connector_exit	rails" ] &&
		[ "$(grep -vc "^#" "$1")" = 8 ] && grep -q "^# cause	peer.connect QP_RETRY_EXCEEDED	n1-n4 rail 0" "$1" &&
		grep -qx "# missing 1" "$1" && grep -qx "# bad 4" "$1"' sh "$work/sum.tsv"
# Only the good and the WARN pair: exit 0; with a BAD one and no missing: 1.
mkdir -p "$work/fx0" "$work/fx1"
cp "$fx"/pair-n1-n2.* "$fx"/pair-n2-n3.* "$work/fx0/"
"$ex/pair-summary.sh" "$work/fx0" >"$work/sum0.txt" 2>&1
rc=$?
check "summary: GOOD + WARN only, no plan: exit 0, got $rc" [ "$rc" = 0 ]
cp "$fx"/pair-n1-n2.* "$fx"/pair-n4-n5.* "$work/fx1/"
"$ex/pair-summary.sh" "$work/fx1" >"$work/sum1.txt" 2>&1
rc=$?
check "summary: a BAD pair, nothing missing: exit 1, got $rc" [ "$rc" = 1 ]
echo "not json" >"$work/fx1/pair-n1-n2.connector.json"
"$ex/pair-summary.sh" "$work/fx1" >"$work/sum1.txt" 2>&1
rc=$?
check "summary: an unreadable report is a missing one: exit 2, got $rc" \
	sh -c '[ "$1" = 2 ] && grep -q "^n1-n2 .* MISSING" "$2"' sh "$rc" "$work/sum1.txt"
# A planned pair whose step never ran (srun refused it, a node down): no
# files at all.
mkdir -p "$work/fx2"
cp "$fx"/pair-n1-n2.* "$work/fx2/"
printf '1 n1 n2 leafA\n1 n7 n8 leafC\n' >"$work/fx2/pairs.plan"
"$ex/pair-summary.sh" "$work/fx2" >"$work/sum2.txt" 2>&1
rc=$?
check "summary: a planned pair that left nothing: MISSING, both sides 'never ran', exit 2" \
	sh -c '[ "$1" = 2 ] && grep -q "^n7-n8  *leafC  *MISSING  *-  *- " "$2" &&
		grep -qx "    n7 (listener of n7-n8, never ran)" "$2" &&
		grep -qx "    n8 (connector of n7-n8, never ran)" "$2"' sh "$rc" "$work/sum2.txt"
# Both sides exit 0 but neither tested a rail: nothing proven, BAD.
mkdir -p "$work/fx3"
side "$work/fx3" pair-n1-n2 listener 0 reg-ok "$(spec listener n2 0 "[]" "")"
side "$work/fx3" pair-n1-n2 connector 0 reg-ok "$(spec connector n1 0 "[]" "")"
"$ex/pair-summary.sh" "$work/fx3" >"$work/sum3.txt" 2>&1
rc=$?
check "summary: both exit 0, no rail tested: BAD, cause 'no rail tested', exit 1" \
	sh -c '[ "$1" = 1 ] && grep -q "^n1-n2  *?  *BAD  *0  *0 " "$2" &&
		grep -q "^#1  1 link  no rail tested$" "$2"' sh "$rc" "$work/sum3.txt"
mkdir -p "$work/fxe"
"$ex/pair-summary.sh" "$work/fxe" >/dev/null 2>&1
rc=$?
check "summary: an empty directory: exit 2, got $rc" [ "$rc" = 2 ]

# ------------------------------------------------------ 3. the real Slurm
start_munged
slurmctld -D -f "$conf" >"$work/log/slurmctld.out" 2>&1 &
pids="$pids $!"
k=1
while [ $k -le $nnodes ]; do
	mkdir -p "$work/spool/n$k"
	slurmd -D -f "$conf" -N "n$k" >"$work/log/slurmd.n$k.out" 2>&1 &
	pids="$pids $!"
	k=$((k + 1))
done
idle() { [ "$(timeout 10 sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" = $nnodes ]; }
i=0
while ! idle && [ $i -lt 60 ]; do
	sleep 0.5
	i=$((i + 1))
done
if ! idle; then
	bad "slurmctld + $nnodes slurmd: not all nodes IDLE within 30 s: $(timeout 10 sinfo -h -N -o '%N %t' | tr '\n' ' ')"
	tail -n 5 "$work/log/"*.log "$work/log/"*.out 2>&1 | sed 's/^/    /'
	finish
fi
ok "slurmctld and $nnodes slurmd on one host: n[1-$nnodes] IDLE ($(scontrol --version))"
check "this slurm is built for several slurmd on one host (MULTIPLE_SLURMD = Yes)" \
	sh -c 'timeout 10 scontrol show config | grep -q "^MULTIPLE_SLURMD *= Yes"'
check "srun -N2 -w n2,n3: task 0 on n2, task 1 on n3" \
	sh -c '[ "$(timeout 30 srun -N2 -n2 --ntasks-per-node=1 -w n2,n3 sh -c "echo \$SLURM_PROCID \$SLURMD_NODENAME" | sort | tr "\n" " ")" = "0 n2 1 n3 " ]'

# 3a. the plumbing, with a stand-in that is not gdrcheck: it records its
# arguments and makes a real TCP connection from task 1 to task 0's
# --listen port; it writes no report and exits 3.
cat >"$work/tcp.py" <<'PY'
import socket, sys, time
if sys.argv[1] == "listen":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", int(sys.argv[2])))
    s.listen(1)
    s.settimeout(20)
    c, _ = s.accept()
    c.settimeout(20)
    print("heard " + c.recv(64).decode())
else:
    h, p = sys.argv[2].rsplit(":", 1)
    for i in range(100):
        try:
            c = socket.create_connection((h, int(p)), 2)
            break
        except OSError:
            time.sleep(0.2)
    c.sendall(sys.argv[3].encode())
    print("sent to " + sys.argv[2])
PY
cat >"$work/standin" <<-EOF
	#!/bin/sh
	echo "\$SLURMD_NODENAME \$SLURM_PROCID \$SLURM_JOB_ID \$*" >>"$work/standin.log"
	echo "\$SLURMD_NODENAME \$SLURM_PROCID \${GDRCHECK_PEER_TOKEN:-}" >>"$work/standin.token"
	case " \$* " in
	*" --listen "*)
		port=\$(echo " \$* " | sed 's/.* --listen \([0-9]*\) .*/\1/')
		python3 "$work/tcp.py" listen "\$port" >>"$work/standin.\$SLURMD_NODENAME" 2>&1 ;;
	*" --peer "*)
		ep=\$(echo " \$* " | sed 's/.* --peer \([^ ]*\) .*/\1/')
		python3 "$work/tcp.py" connect "\$ep" "\$SLURMD_NODENAME" >>"$work/standin.\$SLURMD_NODENAME" 2>&1 ;;
	esac
	exit 3
EOF
chmod +x "$work/standin"
printf 'n1 leafA\nn2 leafA\nn3 leafB\nn4 leafB\n' >"$work/map-sweep"
sd=$work/sweep-standin
t0=$(date +%s)
GDRCHECK=$work/standin "$ex/pair-sweep.sh" -w 'n[1-4]' -s "$work/map-sweep" -O \
	-P "$((20000 + $$ % 20000))" -d "$sd" -- --deadline 30 >"$work/sweep-standin.out" 2>&1
rc=$?
t1=$(date +%s)
sed 's/^/    | /' "$work/sweep-standin.out"
check "stand-in sweep over n[1-4] (2 switches): plan of 3 pairs in 2 rounds, $((t1 - t0)) s" \
	sh -c '[ "$(wc -l <"$1/pairs.plan")" = 3 ] && [ "$(tail -n 1 "$1/pairs.plan" | cut -d " " -f 1)" = 2 ]' sh "$sd"
check "stand-in sweep: exit 2 (the stand-in writes no report), got $rc; every pair MISSING" \
	sh -c '[ "$1" = 2 ] && grep -qx "MISSING:  3" "$2"' sh "$rc" "$work/sweep-standin.out"
check "stand-in sweep: each side's exit 3 recorded under pair-LISTENER-CONNECTOR.ROLE.rc" \
	sh -c 'for p in n1-n2 n3-n4 n1-n3; do for r in listener connector; do
		[ "$(cat "$1/pair-$p.$r.rc")" = 3 ] || exit 1; done; done' sh "$sd"
check "stand-in sweep: task 0 got --json --listen PORT, task 1 --json --peer 127.0.0.1:PORT (NodeAddr), options passed" \
	sh -c 'grep -q "^n1 0 [0-9]* --json --listen [0-9]* --deadline 30$" "$1" &&
		grep -q "^n2 1 [0-9]* --json --peer 127.0.0.1:[0-9]* --deadline 30$" "$1"' sh "$work/standin.log"
check "stand-in sweep: both tasks of a pair in one job (one SLURM_JOB_ID: gdrcheck's token)" \
	sh -c '[ "$(awk "\$1 == \"n3\" && \$2 == 0 { print \$3 }" "$1")" = "$(awk "\$1 == \"n4\" && \$2 == 1 { print \$3 }" "$1")" ]' \
	sh "$work/standin.log"
check "stand-in sweep: every task got the sweep's own token (64 hex digits from /dev/urandom, one for all), not a job id" \
	sh -c '[ "$(wc -l <"$1")" = 6 ] && [ "$(cut -d " " -f 3 "$1" | sort -u | grep -cx "[0-9a-f]\{64\}")" = 1 ] &&
		[ "$(cut -d " " -f 3 "$1" | sort -u | wc -l)" = 1 ]' sh "$work/standin.token"
check "stand-in sweep: the two pairs of round 1 got ports P and P+1 (-O)" \
	sh -c 'a=$(sed -n "s/^n1 0 .*--listen \([0-9]*\) .*/\1/p" "$1" | head -n 1)
		b=$(sed -n "s/^n3 0 .*--listen \([0-9]*\) .*/\1/p" "$1" | head -n 1)
		[ $((a + 1)) = "$b" ] || [ $((b + 1)) = "$a" ]' sh "$work/standin.log"
check "stand-in sweep: every connector reached its listener over TCP (n1 heard n2 and n3, n3 heard n4)" \
	sh -c 'grep -qx "heard n2" "$1/standin.n1" && grep -qx "heard n3" "$1/standin.n1" &&
		grep -qx "heard n4" "$1/standin.n3"' sh "$work"

# -p PARTITION: the partition's responding nodes that can take a job.
"$ex/pair-sweep.sh" -n -p gpu >"$work/plan-p" 2>&1
check "plan -p gpu: the 4 nodes of the partition in a ring (4 pairs)" \
	sh -c '[ "$(wc -l <"$1")" = 4 ] && for n in n1 n2 n3 n4; do grep -q " $n " "$1" || exit 1; done' \
	sh "$work/plan-p"
# Inside an allocation (salloc -N4): the nodes from SLURM_JOB_NODELIST, the
# steps in parallel within the one job.
: >"$work/standin.log"
rm -f "$work"/standin.n?
sd=$work/sweep-alloc
GDRCHECK=$work/standin timeout 120 salloc -N4 -w 'n[1-4]' --time=5 \
	"$ex/pair-sweep.sh" -s "$work/map-sweep" -O -P "$((22000 + $$ % 20000))" -d "$sd" -- --deadline 30 \
	>"$work/sweep-alloc.out" 2>&1
rc=$?
check "stand-in sweep inside salloc -N4: exit 2 (no reports), 3 pairs, all six sides ran" \
	sh -c '[ "$1" = 2 ] && [ "$(wc -l <"$2/pairs.plan")" = 3 ] && [ "$(wc -l <"$3")" = 6 ]' \
	sh "$rc" "$sd" "$work/standin.log"
check "stand-in sweep inside salloc: every step in the allocation's job, every connector reached its listener" \
	sh -c '[ "$(cut -d " " -f 3 "$1" | sort -u | wc -l)" = 1 ] &&
		grep -qx "heard n2" "$2/standin.n1" && grep -qx "heard n3" "$2/standin.n1" &&
		grep -qx "heard n4" "$2/standin.n3"' sh "$work/standin.log" "$work"

# 3b. the real gdrcheck, two-node mode, on the scenario fixtures.
if ! ./gdrcheck --help 2>/dev/null | grep -q -- --listen; then
	bad "two-node mode not built: ./gdrcheck --help lists no --listen (issue 28, not merged here)"
	finish
fi
sc=${PAIR_SCENARIO:-healthy-dmabuf}
case=$top/tests/scenarios/$sc
python3 tests/scenarios/mksysroot.py "$case/sysroot.spec" "$work/sysroot-$sc" >"$work/mksysroot.log" 2>&1 || {
	bad "fixture $sc: sysroot did not build: $(cat "$work/mksysroot.log")"
	finish
}
cuda=/dev/null verbs=/dev/null
[ -f "$case/cuda.conf" ] && cuda=$case/cuda.conf
[ -f "$case/verbs.conf" ] && verbs=$case/verbs.conf
extra=
[ -f "$case/args" ] && extra=$(sed "s|@DOUBLES@|$doubles|g" "$case/args")
cat >"$work/gd" <<-EOF
	#!/bin/sh
	exec env FAKE_CUDA_SCENARIO="$cuda" FAKE_VERBS_SCENARIO="$verbs" \\
		FAKE_SYSROOT="$work/sysroot-$sc" \\
		GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so" \\
		GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so" \\
		"$top/gdrcheck" --sysroot "$work/sysroot-$sc" "\$@" $extra
EOF
chmod +x "$work/gd"
sd=$work/sweep-real
t0=$(date +%s)
GDRCHECK=$work/gd "$ex/pair-sweep.sh" -w 'n[1-4]' -s "$work/map-sweep" -O \
	-P "$((21000 + $$ % 20000))" -d "$sd" -- --deadline 60 >"$work/sweep-real.out" 2>&1
rc=$?
t1=$(date +%s)
sed 's/^/    | /' "$work/sweep-real.out"
for f in "$sd"/*.err; do
	[ -f "$f" ] && sed "s|^|    ${f##*/}: |" "$f" | head -n 5
done
check "real sweep ($sc, 3 pairs, $((t1 - t0)) s): every side left a report" \
	sh -c 'for p in n1-n2 n3-n4 n1-n3; do for r in listener connector; do
		jq -e .peer "$1/pair-$p.$r.json" >/dev/null || exit 1; done; done' sh "$sd"
check "real sweep: the reports validate against the schema" \
	sh -c 'for f in "$1"/pair-*.json; do python3 tests/validate-json.py report/gdrcheck-report.schema.json "$f" || exit 1; done' sh "$sd"
check "real sweep: roles and peers as planned (n1 listened to n2, n2 connected to n1)" \
	sh -c '[ "$(jq -r .peer.role "$1/pair-n1-n2.listener.json")" = listener ] &&
		[ "$(jq -r .peer.role "$1/pair-n1-n2.connector.json")" = connector ] &&
		[ "$(jq -r .peer.status "$1/pair-n1-n2.connector.json")" = ok ]' sh "$sd"
check "real sweep: the summary's exit ($rc) follows the reports' exit codes" \
	sh -c 'want=0; for f in "$1"/pair-*.rc; do [ "$(cat "$f")" = 0 ] || want=1; done; [ "$2" = "$want" ]' sh "$sd" "$rc"
# What the doubles can show (tests/check-peer.py): the libibverbs double
# moves data only inside one process, so two gdrchecks get connected QPs
# and then no answer from the far NIC, on every rail; both sides must say
# so, and the summary must put every link under that one cause.
check "real sweep: every side's bootstrap PASS with the token the sweep made (GDRCHECK_PEER_TOKEN; none given here)" \
	sh -c '[ -z "${GDRCHECK_PEER_TOKEN:-}" ] && for f in "$1"/pair-*.json; do
		[ "$(jq -r "[.results[] | select(.gate == \"peer.bootstrap\") | .reason_code, .evidence.token_source] | join(\",\")" "$f")" = PEER_CONNECTED,GDRCHECK_PEER_TOKEN ] || exit 1
		done' sh "$sd"
nrails=$(jq '.peer.rails | length' "$sd/pair-n1-n2.listener.json" 2>/dev/null)
check "real sweep (doubles): exit 1, 3 pairs BAD, one cause peer.connect QP_RETRY_EXCEEDED over 3 x $nrails rails" \
	sh -c '[ "$1" = 1 ] && [ "$2" -ge 1 ] && grep -qx "BAD:      3" "$3" &&
		grep -qx "#1  $((3 * $2)) links  peer.connect QP_RETRY_EXCEEDED" "$3" && ! grep -q "^#2 " "$3" &&
		grep -q "^n1-n3  *leafA~leafB  *BAD  *1  *1  *#1  *r0=QP_RETRY_EXCEEDED/- " "$3" &&
		grep -qx "    n1-n3 rail 0 (GPU0 mlx5_0/1 <-> GPU0 mlx5_0/1)" "$3"' \
	sh "$rc" "$nrails" "$work/sweep-real.out"

stop_checked "munged, slurmctld, $nnodes slurmd stopped"
finish
