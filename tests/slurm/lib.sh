# shellcheck shell=sh
# What tests/slurm/run.sh and tests/slurm/pairs.sh share, sourced (never
# run): a work directory under /tmp, munged, slurmctld and slurmd of this
# host started there and stopped by pid on every exit, and the counted
# checks of tests/checks.sh (ok, bad, check, finish).
#   slurm_test_begin NAME PREFIX  cd to the top of the tree; top, doubles;
#                  work=$(mktemp -d /tmp/PREFIX.XXXXXX), removed on exit
#                  unless KEEP=1; finish's line names NAME
#   slurm_prereqs WHY TOOL...     a FAILED check and finish when ./gdrcheck,
#                  the doubles or a TOOL is missing, or when not root (WHY:
#                  what needs root)
#   free_ports N   N free TCP ports on 127.0.0.1, one line
#   slurm_work     $work/munge (a new munge key), state, spool, log; sock,
#                  conf ($work/slurm.conf, exported as SLURM_CONF)
#   slurm_conf_head CLUSTER CTLD_PORT SPOOL SLURMD  the slurm.conf lines
#                  before the nodes: SlurmdSpoolDir=SPOOL, slurmd's pid and
#                  log files $work/SLURMD.pid, $work/log/SLURMD.log
#   start_munged   munged on $sock, its pid in $pids; up within 10 s, or a
#                  FAILED check and finish
#   stop_daemons   every pid in $pids: TERM, 10 s, KILL
#   stop_checked TEXT  stop_daemons, then a check TEXT that none is left
# stop_checked's check is `sh -c '...$1...' sh ARG`: single quotes on
# purpose.
# shellcheck disable=SC2016

# shellcheck source=SCRIPTDIR/../checks.sh
. "$(dirname "$0")/../checks.sh"

slurm_test_begin() {
	top=$(cd "$(dirname "$0")/../.." && pwd)
	cd "$top" || exit 1
	doubles=$top/tests/doubles
	work=$(mktemp -d "/tmp/$2.XXXXXX")
	chmod 755 "$work"
	pids=
	checks_begin "$1"
	trap cleanup EXIT
	trap 'exit 130' INT TERM
}
cleanup() {
	stop_daemons
	if [ "${KEEP:-0}" = 1 ]; then
		echo "work directory kept: $work"
	else
		rm -rf "$work"
	fi
}

slurm_prereqs() {
	why=$1
	shift
	missing=
	[ -x ./gdrcheck ] || missing="$missing ./gdrcheck"
	for so in libcuda-fake.so libibverbs-fake.so; do
		[ -f "$doubles/$so" ] || missing="$missing tests/doubles/$so"
	done
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
	done
	if [ -n "$missing" ]; then
		bad "prerequisites missing:$missing (make gdrcheck doubles; tests/install-deps.sh installs munge slurmctld slurmd slurm-client jq)"
		finish
	fi
	if [ "$(id -u)" != 0 ]; then
		bad "needs root: $why (this is uid $(id -u))"
		finish
	fi
}

free_ports() {
	python3 -c 'import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}

slurm_work() {
	mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/log"
	chmod 700 "$work/munge"
	if ! dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 2>/dev/null; then
		bad "cannot write a munge key"
		finish
	fi
	chmod 600 "$work/munge/munge.key"
	sock=$work/munge/munge.socket
	conf=$work/slurm.conf
	SLURM_CONF=$conf
	export SLURM_CONF
}

slurm_conf_head() {
	cat <<-EOF
		ClusterName=$1
		SlurmctldHost=localhost
		SlurmUser=root
		SlurmdUser=root
		SlurmctldPort=$2
		AuthType=auth/munge
		AuthInfo=socket=$sock
		CredType=cred/munge
		StateSaveLocation=$work/state
		SlurmdSpoolDir=$3
		SlurmctldPidFile=$work/slurmctld.pid
		SlurmdPidFile=$work/$4.pid
		SlurmctldLogFile=$work/log/slurmctld.log
		SlurmdLogFile=$work/log/$4.log
		ProctrackType=proctrack/linuxproc
		TaskPlugin=task/none
		JobAcctGatherType=jobacct_gather/none
		SwitchType=switch/none
		MpiDefault=none
		SelectType=select/linear
		ReturnToService=2
	EOF
}

start_munged() {
	munged -F --force --socket="$sock" --key-file="$work/munge/munge.key" \
		--pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" \
		--seed-file="$work/munge/munge.seed" >"$work/log/munged.out" 2>&1 &
	pids="$pids $!"
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ ! -S "$sock" ]; then
		bad "munged did not come up within 10 s: $(tail -n 5 "$work/log/munged.log" "$work/log/munged.out" 2>&1)"
		finish
	fi
}

stop_daemons() {
	for p in $pids; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $pids; do
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	pids=
}
stop_checked() {
	started=$pids
	stop_daemons
	check "$1" sh -c 'for p in $1; do ! kill -0 "$p" 2>/dev/null || exit 1; done' sh "$started"
}
