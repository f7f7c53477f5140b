# shellcheck shell=sh
# Helpers for case scripts (sourced as /opt/vm/lib.sh in the guest).
#
#   . /opt/vm/lib.sh
#   check "rxe0 is registered" test -d /sys/class/infiniband/rxe0
#   jq_check "nic.port passes" report.json \
#       '.results[] | select(.gate=="nic.port" and .status=="PASS")'
#   need_gdrcheck            # exit 77 (SKIP) when the tool is not in the image
#
# More: jq_checks (many checks, one jq run), run_json/check_rc,
# report_checks/report_valid, gpu_scenario, nvidia_proc_fake/_restore, rxe_up/rxe_down,
# as_user, no_gdrcheck_left, wait_until (tests/vm/README.md has a table).
#
# Exit status of a case: 0 pass, 77 skip, anything else fail.
# Facts about the guest (from /run/vm/env, already in the environment):
#   VM_NETDEV VM_RXE VM_NIC_BDF VM_NIC_DN_BDF VM_NIC_UP_BDF VM_NIC_RP_BDF
#   VM_GPU_BDF VM_GPU_RP_BDF VM_RP3_BDF VM_ROOT_PORTS VM_NIC_SYSFS VM_GPU_SYSFS

if [ -z "${VM_NETDEV:-}" ] && [ -r /run/vm/env ]; then
	# shellcheck disable=SC1091
	. /run/vm/env
fi

export GDRCHECK=/opt/gdrcheck/gdrcheck
export GDRCHECK_DOUBLES=/opt/gdrcheck/doubles

say() { printf '%s\n' "$*"; }
fail() {
	printf 'FAIL: %s\n' "$*"
	exit 1
}
skip() {
	printf 'SKIP: %s\n' "$*"
	exit 77
}

# check DESCRIPTION COMMAND [ARGS...]: run the command, fail the case if it fails.
check() {
	_d=$1
	shift
	if "$@"; then
		say "ok: $_d"
	else
		fail "$_d ($*)"
	fi
}

# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then
		say "ok: $1 = $3"
	else
		fail "$1: expected '$2', got '$3'"
	fi
}

# jq_check DESCRIPTION FILE FILTER: jq -e FILTER FILE must succeed (the last
# output neither false nor null, and at least one output).
jq_check() {
	if jq -e "$3" "$2" >/dev/null; then
		say "ok: $1"
	else
		say "--- $2:"
		cat "$2"
		fail "$1 (jq -e '$3' $2)"
	fi
}

# jq_checks FILE [JQ-ARGS...] <<'CHECKS': many jq_check-style checks on
# FILE in a single jq run (one jq start costs ~0.3 s under TCG). The list:
# a line that does not start with a tab is a check's description, the
# tab-indented lines after it its jq filter (joined with spaces, so no jq
# comments). A check passes when its filter yields at least one output and
# the last one is neither false nor null, like jq -e. JQ-ARGS (--arg NAME
# VALUE, --argjson ...) define $NAME for the filters, so the list can be a
# quoted here-document. All checks are printed; the case fails after the
# list if any failed (the file is dumped once).
jq_checks() {
	_jq_checks plain "$@"
}

# report_checks FILE [JQ-ARGS...] <<'CHECKS': for a gdrcheck --json report,
# in the same single jq run: print its results and verdicts (one line
# each), check that it is a valid, complete report (valid against the
# schema the tool ships, guest/schema.jq; consistent with itself and with a
# result for every gate of --list-gates, guest/report.jq), then run the
# listed checks as jq_checks does.
report_checks() {
	[ -r "$GDRCHECK_SCHEMA" ] || fail "no $GDRCHECK_SCHEMA in the image"
	_rc_gates=$(mktemp)
	"$GDRCHECK" --list-gates >"$_rc_gates" || fail "gdrcheck --list-gates failed"
	_jq_checks report "$@"
	rm -f "$_rc_gates"
}

# report_valid FILE: report_checks without further checks.
report_valid() {
	report_checks "$1" </dev/null
}

_jq_checks() {
	_jc_mode=$1
	_jc_file=$2
	shift 2
	_jc_list=$(mktemp)
	cat >"$_jc_list"
	{
		if [ "$_jc_mode" = report ]; then
			# shellcheck disable=SC2016 # jq's $variables
			printf '%s\n' 'include "schema"; include "report";' \
				'(try summary_lines catch "(summary: \(.))" | "S\t\(.)"),' \
				'(try schema_errors($gdr_schema[0]) catch "validation stopped: \(.)" | "E\tschema: \(.)"),' \
				'(try consistency_errors catch "consistency checks stopped: \(.)" | "E\t\(.)"),' \
				'(try completeness_errors($gdr_gates) catch "gate list check stopped: \(.)" | "E\t\(.)"),'
		fi
		awk -v descs="$_jc_list.desc" '
			/^\t/ { sub(/^\t+/, ""); f[n] = f[n] " " $0; next }
			/^[[:space:]]*$/ { next }
			{ n++; d[n] = $0; f[n] = "" }
			END {
				printf "" > descs
				print "(["
				for (i = 1; i <= n; i++) {
					print d[i] > descs
					printf "%s(try ([%s] | if length > 0 and .[-1] != false and .[-1] != null then \"ok\" else \"FAIL\" end) catch \"ERROR \\(.)\")\n", (i > 1 ? ", " : ""), f[i]
				}
				print "] | .[] | \"C\\t\\(.)\")"
			}' "$_jc_list"
	} >"$_jc_list.jq"
	if [ "$_jc_mode" = report ]; then
		set -- -L "${VM_JQ_LIB:-/opt/vm}" --slurpfile gdr_schema "$GDRCHECK_SCHEMA" --rawfile gdr_gates "$_rc_gates" "$@"
	fi
	if ! jq -r "$@" -f "$_jc_list.jq" "$_jc_file" >"$_jc_list.out" 2>&1; then
		cat "$_jc_list.out" "$_jc_list.jq" "$_jc_file"
		rm -f "$_jc_list" "$_jc_list".*
		fail "jq could not run the checks on $_jc_file (not JSON?)"
	fi
	awk '/^S\t/ { sub(/^S\t/, ""); print }' "$_jc_list.out"
	awk '/^E\t/ { sub(/^E\t/, ""); print }' "$_jc_list.out" >"$_jc_list.problems"
	awk '/^C\t/ { sub(/^C\t/, ""); print }' "$_jc_list.out" >"$_jc_list.results"
	_jc_bad=0
	_jc_n=0
	: >"$_jc_list.failed"
	if [ "$_jc_mode" = report ]; then
		if [ -s "$_jc_list.problems" ]; then
			say "FAIL: $_jc_file is not a valid, complete report:"
			sed 's/^/  /' "$_jc_list.problems"
			_jc_bad=1
		else
			say "ok: $_jc_file validates against $GDRCHECK_SCHEMA, is consistent (subjects," \
				"blockers, verdict, exit code) and has a result for each of the" \
				"$(grep -c '^  [a-z]*\.[a-z0-9_]* ' "$_rc_gates") gates of --list-gates"
		fi
	fi
	while IFS= read -r _jc_d <&3 && IFS= read -r _jc_r <&4; do
		_jc_n=$((_jc_n + 1))
		case $_jc_r in
		ok) say "ok: $_jc_d" ;;
		*)
			say "FAIL: $_jc_d ($_jc_r)"
			echo "$_jc_n" >>"$_jc_list.failed"
			_jc_bad=$((_jc_bad + 1))
			;;
		esac
	done 3<"$_jc_list.desc" 4<"$_jc_list.results"
	if [ "$(wc -l <"$_jc_list.desc")" -ne "$(wc -l <"$_jc_list.results")" ]; then
		cat "$_jc_list.out"
		_jc_bad=$((_jc_bad + 1))
	fi
	if [ "$_jc_bad" -gt 0 ]; then
		say "--- the failed checks' filters:"
		# The N-th check is the N-th "(try ([...": print those lines.
		grep -E '^(, )?\(try \(\[' "$_jc_list.jq" |
			awk 'NR == FNR { want[$1] = 1; next } want[FNR]' "$_jc_list.failed" - |
			sed -e 's/^, //' -e 's/^(try (\[ *//' -e 's/\] | if length > 0 and .*$//' -e 's/^/  /'
		say "--- $_jc_file, compacted (one line per result, then the rest):"
		if ! jq -c '.results[]?, del(.results)' "$_jc_file" 2>/dev/null; then
			cat "$_jc_file"
		fi
		rm -f "$_jc_list" "$_jc_list".*
		fail "$_jc_bad of the checks on $_jc_file failed (FAIL lines above)"
	fi
	rm -f "$_jc_list" "$_jc_list".*
}

need_gdrcheck() {
	[ -x "$GDRCHECK" ] || skip "gdrcheck not built (no $GDRCHECK in the image)"
}

# ecap_offset BDF CAPID: offset (hex, no 0x) of extended capability CAPID
# (e.g. 0x0d = ACS), or empty. Walks the list with setpci.
ecap_offset() {
	_off=0x100
	_n=0
	while [ "$_n" -lt 64 ]; do
		_h=$(setpci -s "$1" "$(printf '%x' "$_off").l" 2>/dev/null) || return 0
		[ -n "$_h" ] || return 0
		_v=$((0x$_h))
		[ "$_v" -eq 0 ] || [ "$_v" -eq $((0xffffffff)) ] && return 0
		if [ $((_v & 0xffff)) -eq $(($2)) ]; then
			printf '%x\n' "$_off"
			return 0
		fi
		_off=$(((_v >> 20) & 0xffc))
		[ "$_off" -ge $((0x100)) ] || return 0
		_n=$((_n + 1))
	done
}

# acs_ctl_reg BDF: the setpci register name of BDF's ACS Control word
# (ACS extended capability + 6, found with ecap_offset), e.g. "14e.w";
# fails when BDF has no ACS capability. Read: setpci -s BDF "$reg";
# write: setpci -s BDF "$reg=000c".
acs_ctl_reg() {
	_ar_off=$(ecap_offset "$1" 0x000d)
	[ -n "$_ar_off" ] || return 1
	printf '%x.w\n' $((0x$_ar_off + 6))
}

# wait_until SECS CMD [ARGS...]: run CMD every 0.1 s until it succeeds;
# returns 1 if it still fails after SECS seconds.
wait_until() {
	_wu_n=$(($1 * 10))
	shift
	until "$@"; do
		[ "$_wu_n" -gt 0 ] || return 1
		_wu_n=$((_wu_n - 1))
		sleep 0.1
	done
}

# ------------------------------------------------------------ soft-RoCE
# uverbs_of IBDEV: the uverbsN interface that belongs to IBDEV (by its
# ibdev attribute); fails when there is none.
uverbs_of() {
	for _uo in /sys/class/infiniband_verbs/uverbs*; do
		[ -r "$_uo/ibdev" ] || continue
		if [ "$(cat "$_uo/ibdev")" = "$1" ]; then
			printf '%s\n' "${_uo##*/}"
			return 0
		fi
	done
	return 1
}

# roce_v2_ipv4_gid IBDEV [PORT]: lowest index of a RoCE v2 GID that maps an
# IPv4 address (::ffff:a.b.c.d); fails when there is none. (One grep over
# the 1024-entry table: the types of unused entries do not read.)
roce_v2_ipv4_gid() {
	_rg_i=$(cd "/sys/class/infiniband/$1/ports/${2:-1}" 2>/dev/null &&
		grep -l '^RoCE v2$' gid_attrs/types/* 2>/dev/null | while read -r _rg; do
			_rg=${_rg##*/}
			if grep -q '^0000:0000:0000:0000:0000:ffff:' "gids/$_rg" 2>/dev/null; then
				echo "$_rg"
			fi
		done | sort -n | head -n 1)
	[ -n "$_rg_i" ] || return 1
	printf '%s\n' "$_rg_i"
}

# rxe_ready IBDEV: the state guest/init leaves soft-RoCE in: the uverbs
# node exists, port 1 is ACTIVE and has a RoCE v2 IPv4 GID.
rxe_ready() {
	_rr_u=$(uverbs_of "$1") || return 1
	[ -c "/dev/infiniband/$_rr_u" ] || return 1
	case $(cat "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null) in
	*ACTIVE*) ;;
	*) return 1 ;;
	esac
	roce_v2_ipv4_gid "$1" >/dev/null
}

# rxe_up [NETDEV [IBDEV]]: `rdma link add IBDEV type rxe netdev NETDEV`
# (defaults $VM_NETDEV, rxe0) and wait up to 10 s for rxe_ready. Used by
# guest/init at boot and by cases that take the device down.
rxe_up() {
	_ru_net=${1:-$VM_NETDEV}
	_ru_ib=${2:-rxe0}
	if ! rdma link add "$_ru_ib" type rxe netdev "$_ru_net"; then
		echo "rdma link add $_ru_ib type rxe netdev $_ru_net failed"
		return 1
	fi
	if ! wait_until 10 rxe_ready "$_ru_ib"; then
		echo "$_ru_ib not ready after 10 s: port 1 $(cat "/sys/class/infiniband/$_ru_ib/ports/1/state" 2>/dev/null || echo absent)," \
			"uverbs $(uverbs_of "$_ru_ib" || echo none)," \
			"RoCE v2 IPv4 GID $(roce_v2_ipv4_gid "$_ru_ib" || echo none)"
		return 1
	fi
	echo "$_ru_ib port 1: $(cat "/sys/class/infiniband/$_ru_ib/ports/1/state")," \
		"/dev/infiniband/$(uverbs_of "$_ru_ib")," \
		"RoCE v2 IPv4 GID index $(roce_v2_ipv4_gid "$_ru_ib")"
}

# rxe_down [IBDEV]: `rdma link delete IBDEV` (default rxe0) and wait up to
# 10 s until the device and its uverbs interface are gone.
rxe_down() {
	_rd_ib=${1:-rxe0}
	if ! rdma link delete "$_rd_ib"; then
		echo "rdma link delete $_rd_ib failed"
		return 1
	fi
	if ! wait_until 10 rxe_gone "$_rd_ib"; then
		echo "$_rd_ib still registered 10 s after rdma link delete"
		return 1
	fi
}

rxe_gone() {
	[ ! -e "/sys/class/infiniband/$1" ] && ! uverbs_of "$1" >/dev/null
}

# ------------------------------------------------------------ gdrcheck runs
export GDRCHECK_SCHEMA=/opt/gdrcheck/gdrcheck-report.schema.json
export LIBCUDA_FAKE=$GDRCHECK_DOUBLES/libcuda-fake.so
# The unprivileged account in the image (build-initramfs.sh /etc/passwd).
export VM_USER=gdrtest VM_USER_UID=1000 VM_USER_GID=1000

need_libcuda_fake() {
	[ -r "$LIBCUDA_FAKE" ] || skip "libcuda double not built (no $LIBCUDA_FAKE in the image: make doubles)"
}

# as_user CMD [ARGS...]: run CMD as $VM_USER (no capabilities, no
# supplementary groups); the environment is kept.
as_user() {
	setpriv --reuid="$VM_USER_UID" --regid="$VM_USER_GID" --clear-groups -- "$@"
}

# gpu_scenario FILE [MEM]: the libcuda double's scenario for one GPU
# reported at the stand-in's address ($VM_GPU_BDF): compute capability 9.0,
# GPU_DIRECT_RDMA_SUPPORTED (116) and DMA_BUF_SUPPORTED (124) = 1, and by
# default "GPU memory" the kernel cannot pin (MEM unmapped: a PROT_NONE
# reservation), as real GPU memory without nvidia_peermem. MEM host: the
# "GPU pointer" is real host memory (memfd-backed) that the real rxe
# registers with plain ibv_reg_mr and really DMAs. Cases append their own
# keys (faults) to FILE.
gpu_scenario() {
	cat >"$1" <<-SCENARIO
		device_count = 1
		gpu0.name = VM stand-in GPU (libcuda double)
		gpu0.pci = $VM_GPU_BDF
		gpu0.cc = 9.0
		gpu0.total_mem = 85899345920
		gpu0.attr.116 = 1
		gpu0.attr.124 = 1
		mem = ${2:-unmapped}
	SCENARIO
}

# nvidia_proc_fake: make /proc/driver/nvidia/version say that the open
# NVIDIA kernel module is loaded, so gpu.driver passes and the verdict is
# decided by the gates under test (the libcuda double plays the rest of the
# GPU). A tmpfs over /proc/driver (procfs itself cannot be written);
# nvidia_proc_restore unmounts it. gdrcheck only reads nvidia/version there.
NV_FAKE_FS=vm-fake-nvidia
nvidia_proc_fake() {
	mount -t tmpfs -o mode=0755,size=64k "$NV_FAKE_FS" /proc/driver || return 1
	mkdir /proc/driver/nvidia
	printf '%s\n' \
		"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (vm-fake@tests-vm)  Thu Jan  1 00:00:00 UTC 2026" \
		"GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)" >/proc/driver/nvidia/version
	chmod 0444 /proc/driver/nvidia/version
}
nvidia_proc_restore() {
	if awk -v fs="$NV_FAKE_FS" '$1 == fs && $2 == "/proc/driver" { f = 1 } END { exit !f }' /proc/mounts; then
		umount /proc/driver
	fi
}

# run_json OUT CMD [ARGS...]: run CMD (a gdrcheck --json command line) with
# stdout to OUT and stderr to OUT.stderr; sets $rc and $secs (wall seconds,
# 0.01 resolution). report_checks OUT then prints the results.
run_json() {
	_rj_out=$1
	shift
	_rj_t0=$(cut -d' ' -f1 /proc/uptime)
	rc=0
	"$@" >"$_rj_out" 2>"$_rj_out.stderr" || rc=$?
	_rj_t1=$(cut -d' ' -f1 /proc/uptime)
	secs=$(awk -v a="$_rj_t0" -v b="$_rj_t1" 'BEGIN { printf "%.2f", b - a }')
	say "\$ $* >$_rj_out"
	say "exit status $rc after ${secs}s"
	if [ -s "$_rj_out.stderr" ]; then
		say "--- stderr:"
		cat "$_rj_out.stderr"
	fi
}

# check_rc DESCRIPTION EXPECTED: the $rc of the last run_json.
check_rc() {
	check_eq "$1 (exit status)" "$2" "$rc"
}

# no_gdrcheck_left: no gdrcheck process (the tool or a vendor worker,
# zombies included) exists any more.
gdrcheck_pids() {
	for _gp in /proc/[0-9]*; do
		if [ "$(cat "$_gp/comm" 2>/dev/null)" = gdrcheck ]; then
			printf '%s ' "${_gp#/proc/}"
		fi
	done
}
no_gdrcheck_left() {
	_ng=$(gdrcheck_pids)
	if [ -n "$_ng" ]; then
		ps -o pid,ppid,stat,comm,args 2>/dev/null || ps
		fail "gdrcheck processes still exist: $_ng"
	fi
	say "ok: no gdrcheck process (tool or worker) is left"
}

# ------------------------------------------------------------ two RDMA ends
# The peer cases' two "nodes" in one guest (tests/vm/README.md, "Two ends
# on a wire"): end A is rxe0 on $VM_NETDEV (eth0, 10.0.2.15), end B rxe1 on
# $VM_PEER_NETDEV (eth1, 10.0.2.16, the NIC under rp4). run.sh makes the two
# NICs the only ports of one qemu hub, so a frame eth0 sends arrives at
# eth1 and back: the wire. Both ends stay in the init network namespace:
# rxe in this kernel (6.1) opens its UDP 4791 sockets and looks up its
# routes in init_net only, so an rxe on a netdev moved to another
# namespace would never see a packet. Each end's packets still cross the
# wire, not the local route: rxe and ib_core's address resolution look the
# route up with the output interface bound to the rxe's own netdev, and a
# fib lookup bound to eth0 skips the local-table entry of eth1's address
# (its next hop is eth1), so it takes 10.0.2.0/24 dev eth0: ARP and the
# RoCE packets go out of eth0 and arrive on eth1. A packet whose source
# address is one of our own is a martian unless accept_local is set on
# the receiving interface: peer_up sets it on both (and restores it).
# Each end selects its NIC as NCCL would: NCCL_IB_HCA=rxe0 / rxe1.
export PEER_A_NET="${VM_NETDEV:-eth0}" PEER_A_IB=rxe0 PEER_A_IP=10.0.2.15
export PEER_B_NET="${VM_PEER_NETDEV:-eth1}" PEER_B_IB=rxe1 PEER_B_IP=10.0.2.16
export PEER_A_IP6=fd00:2::15 PEER_B_IP6=fd00:2::16
PEER_NFT_TABLE=gdrcheck_peer

_peer_conf() { printf '/proc/sys/net/ipv4/conf/%s/%s' "$1" "$2"; }

# peer_up: bring end B up (eth1 up with 10.0.2.16/24, rxe1 on it) and let
# both ends accept packets from each other's (local) address. Saves what it
# changes in /run/vm/peer.saved for peer_down. Cases: trap peer_down EXIT.
peer_up() {
	[ -n "${VM_PEER_NETDEV:-}" ] || {
		echo "no peer NIC in this guest (VM_PEER_NETDEV unset: run.sh's rp4 NIC missing)"
		return 1
	}
	{
		for _pu_n in "$PEER_A_NET" "$PEER_B_NET"; do
			echo "$_pu_n accept_local $(cat "$(_peer_conf "$_pu_n" accept_local)")"
			echo "$_pu_n mtu $(cat "/sys/class/net/$_pu_n/mtu")"
		done
	} >/run/vm/peer.saved
	for _pu_n in "$PEER_A_NET" "$PEER_B_NET"; do
		echo 1 >"$(_peer_conf "$_pu_n" accept_local)" || return 1
	done
	ip link set "$PEER_B_NET" up || return 1
	ip addr add "$PEER_B_IP/24" dev "$PEER_B_NET" || return 1
	rxe_up "$PEER_B_NET" "$PEER_B_IB" || return 1
	# The first RoCE packet waits for ARP; resolve it now so that timings
	# and counters of the cases start from a warm neighbour table.
	ping -c 1 -W 2 -I "$PEER_A_NET" "$PEER_B_IP" >/dev/null 2>&1 || true
}

# peer_down: undo peer_up and every fault knob (MTUs, IPv6 addresses,
# the nftables table); quiet, never fails (an EXIT trap).
peer_down() {
	nft delete table inet "$PEER_NFT_TABLE" 2>/dev/null || true
	ip -6 addr del "$PEER_A_IP6/64" dev "$PEER_A_NET" 2>/dev/null || true
	ip -6 addr del "$PEER_B_IP6/64" dev "$PEER_B_NET" 2>/dev/null || true
	if [ -e "/sys/class/infiniband/$PEER_B_IB" ]; then
		rxe_down "$PEER_B_IB" || true
	fi
	ip addr flush dev "$PEER_B_NET" 2>/dev/null || true
	ip link set "$PEER_B_NET" down 2>/dev/null || true
	if [ -r /run/vm/peer.saved ]; then
		while read -r _pd_n _pd_k _pd_v; do
			case $_pd_k in
			accept_local) echo "$_pd_v" >"$(_peer_conf "$_pd_n" accept_local)" 2>/dev/null || true ;;
			mtu) ip link set "$_pd_n" mtu "$_pd_v" 2>/dev/null || true ;;
			esac
		done </run/vm/peer.saved
		rm -f /run/vm/peer.saved
	fi
	ip neigh flush dev "$PEER_A_NET" 2>/dev/null || true
}

# peer_mtu NETDEV MTU: set a netdev's MTU and wait (5 s) until its rxe's
# port 1 active_mtu follows (rxe reads it on NETDEV_CHANGEMTU: 1500 ->
# 1024, 9000 -> 4096).
peer_mtu() {
	ip link set "$1" mtu "$2" || return 1
	case $1 in "$PEER_A_NET") _pm_ib=$PEER_A_IB ;; *) _pm_ib=$PEER_B_IB ;; esac
	_pm_want=$(ib_mtu_of "$2")
	wait_until 5 _peer_mtu_is "$_pm_ib" "$_pm_want"
}
_peer_mtu_is() {
	[ "$(ib_active_mtu "$1")" = "$2" ]
}
# ib_mtu_of ETH_MTU: the IB MTU rxe derives from a netdev MTU (the largest
# of 256..4096 that fits MTU minus the RoCE v2 headers, 14+20+8+12+4+4).
ib_mtu_of() {
	for _im in 4096 2048 1024 512 256; do
		if [ $(($1 - 62)) -ge "$_im" ]; then
			echo "$_im"
			return 0
		fi
	done
	echo 256
}
# ib_active_mtu IBDEV: port 1's active MTU in bytes (from ibv_devinfo).
ib_active_mtu() {
	ibv_devinfo -d "$1" -i 1 | sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p'
}

# peer_ipv6_up: fd00:2::15/64 on eth0 and fd00:2::16/64 on eth1 (nodad),
# then wait (5 s) for each rxe to list the address as a RoCE v2 GID.
peer_ipv6_up() {
	ip -6 addr add "$PEER_A_IP6/64" dev "$PEER_A_NET" nodad || return 1
	ip -6 addr add "$PEER_B_IP6/64" dev "$PEER_B_NET" nodad || return 1
	wait_until 5 gid_index_of "$PEER_A_IB" "$PEER_A_IP6" >/dev/null &&
		wait_until 5 gid_index_of "$PEER_B_IB" "$PEER_B_IP6" >/dev/null
}

# gid_index_of IBDEV ADDR: the lowest GID index of port 1 whose GID is
# ADDR: an IPv4 address (the GID ::ffff:a.b.c.d) or PEER_A_IP6/PEER_B_IP6
# (or any GID in sysfs's written-out form); fails when there is none.
gid_index_of() {
	case $2 in
	"$PEER_A_IP6") _gi_want=fd00:0002:0000:0000:0000:0000:0000:0015 ;;
	"$PEER_B_IP6") _gi_want=fd00:0002:0000:0000:0000:0000:0000:0016 ;;
	*.*.*.*) _gi_want=0000:0000:0000:0000:0000:ffff:$(printf '%s' "$2" | awk -F. '{ printf "%02x%02x:%02x%02x", $1, $2, $3, $4 }') ;;
	*) _gi_want=$2 ;;
	esac
	_gi=$(cd "/sys/class/infiniband/$1/ports/1/gids" 2>/dev/null &&
		grep -lx "$_gi_want" -- * 2>/dev/null | sort -n | head -n 1)
	[ -n "$_gi" ] || return 1
	printf '%s\n' "$_gi"
}

# peer_firewall NETDEV: nftables drops UDP to port 4791 (RoCE v2) arriving
# on NETDEV (table inet gdrcheck_peer, chain input, a counter on the rule).
peer_firewall() {
	nft -f - <<-NFT
		table inet $PEER_NFT_TABLE {
			chain input {
				type filter hook input priority 0; policy accept;
				iifname "$1" udp dport 4791 counter drop
			}
		}
	NFT
}
# peer_firewall_drops: packets the rule dropped so far.
peer_firewall_drops() {
	nft list table inet "$PEER_NFT_TABLE" | sed -n 's/.*counter packets \([0-9]*\) .*/\1/p'
}

# hw_counter IBDEV NAME: rxe's port 1 hw_counters/NAME (sent_pkts,
# rcvd_pkts, retry_exceeded_err, ...).
hw_counter() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"
}

# ------------------------------------------------------------ gdrcheck peer mode
# The two-node mode (gdrcheck --listen / --peer, issue 28) on the two ends:
# the listener is end B (NCCL_IB_HCA=rxe1, --listen 10.0.2.16:PORT), the
# connector end A (NCCL_IB_HCA=rxe0, --peer 10.0.2.16). Both use the
# libcuda double with host memory at $VM_GPU_BDF (gpu_scenario ... host, so
# the real rxe registers and DMAs the "GPU memory") and the faked open
# NVIDIA module, so that each side's own verdict is READY (25-reg-loopback).
export PEER_PORT=18515 PEER_TOKEN=vm-peer-token
# PEER_OPTS: options both sides get. --min-bandwidth: rxe under TCG moves a
# few MB/s. --require peermem: NCCL_IB_HCA in the environment makes the
# NCCL model count NCCL as present, so policy auto would be nccl, and NCCL
# itself would not use GDR here (PHB, and no nvidia_peermem module, which
# no proof can create): data.nccl BLOCKED NCCL_NO_GDR, exit 1 on a healthy
# pair. The peermem path is what the double's host memory really proves.
export PEER_OPTS="--min-bandwidth 0.0001 --reg-size 262144 --require peermem"

# need_peer_mode: SKIP (77) when this gdrcheck has no two-node mode (its
# --help does not mention --listen).
need_peer_mode() {
	"$GDRCHECK" --help 2>&1 | grep -q -- '--listen' ||
		skip "gdrcheck has no --listen (the two-node mode is not in this build)"
}

# peer_gdr_setup: the start of the gdrcheck peer cases (41-46): SKIP
# without gdrcheck, the libcuda double or the two-node mode; peer_gdr_cleanup
# on exit; peer_up, the double's scenario (./cuda.conf) and the faked NVIDIA
# module.
peer_gdr_setup() {
	need_gdrcheck
	need_libcuda_fake
	need_peer_mode
	trap peer_gdr_cleanup EXIT
	trap 'exit 143' TERM INT
	check "rxe0 is up" rxe_ready rxe0
	check "end B up: rxe1 on $PEER_B_NET (peer_up)" peer_up
	gpu_scenario cuda.conf host
	check "the faked open NVIDIA module" nvidia_proc_fake
}
peer_gdr_cleanup() {
	for _pc in $(gdrcheck_pids); do
		kill -KILL "$_pc" 2>/dev/null || true
	done
	nvidia_proc_restore
	peer_down
}

# peer_gdr NAME NIC ARGS...: one side: gdrcheck --json with NCCL_IB_HCA=NIC
# and the double; stdout NAME.json, stderr NAME.json.stderr, exit status in
# NAME.rc, wall seconds in NAME.secs. Run it in the background (&) for the
# side that must wait for the other.
peer_gdr() {
	_pg_n=$1
	_pg_nic=$2
	shift 2
	_pg_t0=$(cut -d' ' -f1 /proc/uptime)
	_pg_rc=0
	# shellcheck disable=SC2086 # PEER_OPTS is a word list
	env NCCL_IB_HCA="$_pg_nic" FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
		"$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE" $PEER_OPTS "$@" \
		>"$_pg_n.json" 2>"$_pg_n.json.stderr" || _pg_rc=$?
	echo "$_pg_rc" >"$_pg_n.rc"
	awk -v a="$_pg_t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f\n", b - a }' >"$_pg_n.secs"
}

# peer_show NAME: print how side NAME ended (its command's exit status,
# seconds, stderr) and its peer results; sets $rc.
peer_show() {
	rc=$(cat "$1.rc")
	say "--- $1: exit status $rc after $(cat "$1.secs") s"
	if [ -s "$1.json.stderr" ]; then
		say "stderr:"
		sed 's/^/    /' "$1.json.stderr"
	fi
	jq -r '(.results[]? | select(.gate | startswith("peer.")) |
		"  \(.gate) \(.subject) \(.status) \(.reason_code): \(.reason)"),
		(.peer? // {} | "  peer: role \(.role) status \(.status) endpoint \(.endpoint) peer_verdict \(.peer_verdict)"),
		(.peer.rails[]? | "  rail \(.rail): \(.gpu) \(.nic)/\(.port) mtu \(.mtu) gid \(.gid_index) <-> \(.peer_gpu) \(.peer_nic)/\(.peer_port) mtu \(.peer_mtu) gid \(.peer_gid_index); counters \(.counters // {} | tostring)",
			(.mechanisms[]? | "    \(.mechanism): verified \(.verified) write \(.write_ok) read \(.read_ok) reverse \(.reverse_write_ok)/\(.reverse_read_ok) \(.gbps) Gb/s of \(.limit_gbps): ratio \(.ratio), latency \(.latency_us) us"))' \
		"$1.json" 2>/dev/null || say "  (no JSON report)"
}

# tcp_established PORT: a TCP connection to or from PORT is established.
tcp_established() {
	awk -v p="$(printf '%04X' "$1")" 'NR > 1 && $4 == "01" &&
		(substr($2, length($2) - 3) == p || substr($3, length($3) - 3) == p) { f = 1 }
		END { exit !f }' /proc/net/tcp
}
