#!/bin/sh
# examples/slurm/gdrcheck-health.sh against a real single-node Slurm: munged,
# slurmctld and slurmd from Debian (munge, slurmctld, slurmd, slurm-client),
# started here on localhost with a generated slurm.conf and munge key under a
# temporary directory, stopped on every exit. gdrcheck runs on the scenario
# fixtures of tests/scenarios (sysroot + test doubles), so the node's verdict
# is chosen by the test.
#
#   tests/slurm/run.sh        ends with "slurm: N passed, N failed"
#
# Needs root (slurmd runs the health check as root; SlurmUser=root), ./gdrcheck
# and the doubles (make gdrcheck doubles), jq, python3. A missing engine or
# one that does not come up is a FAILED check, never a skip. KEEP=1 keeps the
# work directory (logs of the three daemons).
#   1. direct runs of the wrapper, with slurmd's empty environment: BLOCKED
#      drains with the reason, READY resumes, ERROR (exit 3, usage error,
#      crash, time-out) leaves the node and says so, an operator's drain is
#      never touched, the time bound reaches gdrcheck
#   2. the same wrapper as slurmd's own HealthCheckProgram
# Checks are `sh -c '...$1...' sh ARG`: single quotes on purpose.
# drained() runs through check (SC2317).
# shellcheck disable=SC2016,SC2317
set -u

# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
slurm_test_begin slurm gdrcheck-slurm
health=$top/examples/slurm/gdrcheck-health.sh

# ---------------------------------------------------------------- prerequisites
slurm_prereqs "slurmd runs HealthCheckProgram as root" \
	munged slurmctld slurmd scontrol sinfo jq python3 timeout

# ------------------------------------------------------------------- fixtures
# fixture NAME: $work/bin/gd-NAME runs ./gdrcheck on the scenario's sysroot
# with the doubles, as the node's gdrcheck.
fixture() {
	sc=$1
	case=$top/tests/scenarios/$sc
	python3 tests/scenarios/mksysroot.py "$case/sysroot.spec" "$work/sysroots/$sc" \
		>"$work/mksysroot.$sc.log" 2>&1 || return 1
	cuda=/dev/null verbs=/dev/null
	[ -f "$case/cuda.conf" ] && cuda=$case/cuda.conf
	[ -f "$case/verbs.conf" ] && verbs=$case/verbs.conf
	extra=
	[ -f "$case/args" ] && extra=$(sed "s|@DOUBLES@|$doubles|g" "$case/args")
	cat >"$work/bin/gd-$sc" <<-EOF
		#!/bin/sh
		echo "\$*" >>"$work/args.$sc"
		exec env FAKE_CUDA_SCENARIO="$cuda" FAKE_VERBS_SCENARIO="$verbs" \\
			GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so" \\
			GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so" \\
			"$top/gdrcheck" --sysroot "$work/sysroots/$sc" "\$@" $extra
	EOF
	chmod +x "$work/bin/gd-$sc"
}
mkdir -p "$work/bin" "$work/sysroots"
for sc in reg-ok h200 cuda-crash peermem-proprietary; do
	if ! fixture $sc; then
		bad "fixture $sc: sysroot did not build: $(cat "$work/mksysroot.$sc.log")"
		finish
	fi
done
# Stand-ins: a crash, a hang (its --help lists --deadline or not).
cat >"$work/bin/segv" <<-'EOF'
	#!/bin/sh
	kill -SEGV $$
EOF
cat >"$work/bin/hang" <<-EOF
	#!/bin/sh
	if [ "\$1" = --help ]; then
		[ "\${HANG_DEADLINE:-0}" = 1 ] && echo "      --deadline SECONDS  bound the whole run"
		exit 0
	fi
	echo "\$*" >"$work/args.hang"
	exec sleep 300
EOF
# A stand-in that writes a synthetic report ($work/synth-NAME.json, NAME
# from its own file name) and exits with its exit_code: reports of
# gdrcheck's lost-rail gate (topo.rails), hand-made so that the drain reason
# is tested whatever the fixtures know.
cat >"$work/bin/synth" <<-EOF
	#!/bin/sh
	[ "\$1" = --help ] && exit 0
	echo "\$*" >"$work/args.synth"
	while [ "\$1" != --output ]; do shift; done
	src=$work/\$(basename "\$0").json
	cp "\$src" "\$2"
	exit "\$(jq .verdict.exit_code "\$src")"
EOF
chmod +x "$work/bin/segv" "$work/bin/hang" "$work/bin/synth"
ln -s synth "$work/bin/synth-rail"
ln -s synth "$work/bin/synth-rail-any"
# --require auto found NCCL (require nccl): GPU3's NCCL rail is down.
jq '.require = "nccl" | .require_source = "auto"
	| .verdict = {status: "BLOCKED", exit_code: 1}
	| .paths.nccl = {verdict: "BLOCKED", gate: "topo.rails", subject: "GPU3",
		reason_code: "RAIL_LOST", ready: [],
		summary: "BLOCKED at topo.rails (GPU3): GPU3 lost rail mlx5_6/1: port DOWN (Polling); NCCL uses mlx5_7/1 instead"}
	| .policy.violations = ["GPU3 lost rail mlx5_6/1: port DOWN (Polling)"]' \
	tests/scenarios/reg-ok/expected.json >"$work/synth-rail.json"
# No NCCL (require any), --no-alloc: dmabuf works, the lost rail is a
# policy violation.
jq '.require = "any" | .require_source = "auto"
	| .verdict = {status: "BLOCKED", exit_code: 1}
	| .paths.dmabuf.verdict = "READY-UNPROVEN"
	| .policy.violations = ["GPU3 lost rail mlx5_6/1: port DOWN (Polling)"]' \
	tests/scenarios/reg-ok/expected.json >"$work/synth-rail-any.json"

# ------------------------------------------------------------ munge and slurm
# Two free TCP ports on localhost (slurmctld, slurmd).
ports=$(free_ports 2)
ctld_port=${ports% *}
slurmd_port=${ports#* }
node=gdrnode
slurm_work
mkdir -p "$work/reports"
{
	slurm_conf_head gdrcheck-test "$ctld_port" "$work/spool" slurmd
	cat <<-EOF
		SlurmdPort=$slurmd_port
		NodeName=$node NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 RealMemory=1 State=UNKNOWN
		PartitionName=gpu Nodes=$node Default=YES State=UP
	EOF
} >"$conf"

start_munged
ok "munged up (socket $sock)"
slurmctld -D -f "$conf" >"$work/log/slurmctld.out" 2>&1 &
pids="$pids $!"
slurmd -D -f "$conf" -N "$node" >"$work/log/slurmd.out" 2>&1 &
pids="$pids $!"

# node_field FIELD: State or Reason of the node as slurmctld has it.
node_field() {
	timeout 10 scontrol show node "$node" 2>/dev/null |
		sed -n "s/^ *$1=//p" | sed 's/ .*//; s/ \[[^]]*\]$//' | head -n 1
}
node_reason() {
	timeout 10 scontrol show node "$node" 2>/dev/null |
		sed -n 's/^ *Reason=//p' | sed 's/ \[[^]]*\]$//'
}
# wait_state PATTERN SECONDS: until the node's State matches the grep -E
# PATTERN.
wait_state() {
	i=0
	while [ $i -lt $(($2 * 2)) ]; do
		node_field State | grep -qE "$1" && return 0
		sleep 0.5
		i=$((i + 1))
	done
	return 1
}
if ! wait_state '^IDLE$' 30; then
	bad "slurmctld + slurmd: node $node not IDLE within 30 s (state '$(node_field State)')"
	tail -n 20 "$work/log/slurmctld.log" "$work/log/slurmd.log" "$work/log/"*.out 2>&1 | sed 's/^/    /'
	finish
fi
ok "slurmctld and slurmd up: node $node IDLE ($(scontrol --version))"

# ------------------------------------------------------- 1. the wrapper itself
# health FIXTURE [VAR=VALUE...]: the wrapper as slurmd runs it (no
# environment but SLURMD_NODENAME), settings through its config file.
# Output in $work/out, exit status in $hrc.
health() {
	gd=$work/bin/$1
	shift
	{
		echo "GDRCHECK=$gd"
		echo "HEALTH_REPORT_DIR=$work/reports"
		echo "SCONTROL='scontrol'"
		for a in "$@"; do echo "$a"; done
	} >"$work/health.conf"
	env -i SLURMD_NODENAME=$node SLURM_CONF="$conf" \
		GDRCHECK_HEALTH_CONF="$work/health.conf" "$health" >"$work/out" 2>&1
	hrc=$?
}
drained() { node_field State | grep -q DRAIN; }

# The reason the test expects: from the fixture's golden JSON, not from the
# wrapper's code (the decisive gate, subject and code, then the reason part
# of the path's summary).
h200_reason=$(jq -r '.paths.dmabuf | "gdrcheck: BLOCKED dmabuf+peermem at \(.gate) (\(.subject)) \(.reason_code): \(.summary | sub("^BLOCKED at [^:]*: "; ""))"' tests/scenarios/h200/expected.json | cut -c 1-240)
check "fixture h200: both paths BLOCKED at the same gate (the reason merges them)" \
	sh -c '[ "$(jq -c "[.paths[] | [.gate, .subject]] | unique | length" "$1")" = 1 ]' \
	sh tests/scenarios/h200/expected.json

health gd-h200
check "BLOCKED (h200): exit 1, got $hrc" [ $hrc = 1 ]
check "BLOCKED: node drained" drained
check "BLOCKED: reason names the gate and subject: '$h200_reason'" \
	sh -c '[ "$1" = "$2" ]' sh "$(node_reason)" "$h200_reason"
check "BLOCKED: sinfo -R shows the reason" \
	sh -c 'timeout 10 sinfo -R -h -o "%E" | grep -qxF "$1"' sh "$h200_reason"
check "BLOCKED: the wrapper says so on stdout" grep -q "drained: $h200_reason" "$work/out"
check "BLOCKED: report kept in HEALTH_REPORT_DIR" \
	sh -c '[ "$(jq -r .verdict.status "$1/$2.json")" = BLOCKED ] && [ "$(cat "$1/$2.rc")" = 1 ]' \
	sh "$work/reports" "$node"

health gd-h200
check "BLOCKED again: exit 1, still drained, same reason, no new drain" \
	sh -c '[ "$1" = 1 ] && [ "$2" = "$3" ] && grep -q "still drained" "$4"' \
	sh "$hrc" "$(node_reason)" "$h200_reason" "$work/out"

health gd-cuda-crash
check "ERROR (exit 3) on a node we drained: exit 3, stays drained (no proof of health)" \
	sh -c '[ "$1" = 3 ] && [ "$2" = "$3" ]' sh "$hrc" "$(node_reason)" "$h200_reason"
check "ERROR: logged as undecided, node left" \
	grep -q "ERROR, node state left as is.*undecided (exit 3)" "$work/out"

health gd-reg-ok
check "READY (reg-ok): exit 0, got $hrc" [ $hrc = 0 ]
check "READY: the node it drained is resumed" \
	sh -c '! timeout 10 scontrol show node "$1" | grep -q "State=[^ ]*DRAIN"' sh "$node"
check "READY: reason cleared, 'resumed' logged" \
	sh -c '[ -z "$1" ] && grep -q "resumed" "$2"' sh "$(node_reason)" "$work/out"
wait_state '^IDLE$' 15
check "READY: node back to IDLE (state '$(node_field State)')" wait_state '^IDLE$' 1

# --require dmabuf on a node READY only by peermem: a GPU subject.
pm_reason=$(jq -r '.paths.dmabuf | "gdrcheck: BLOCKED dmabuf at \(.gate) (\(.subject)) \(.reason_code): \(.summary | sub("^BLOCKED at [^:]*: "; ""))"' tests/scenarios/peermem-proprietary/expected.json | cut -c 1-240)
health gd-peermem-proprietary "GDRCHECK_ARGS='--require dmabuf'"
check "BLOCKED --require dmabuf (peermem-proprietary): exit 1, reason '$pm_reason'" \
	sh -c '[ "$1" = 1 ] && [ "$2" = "$3" ]' sh "$hrc" "$(node_reason)" "$pm_reason"
health gd-peermem-proprietary "GDRCHECK_ARGS='--require peermem'"
check "READY --require peermem: exit 0, resumed" \
	sh -c '[ "$1" = 0 ] && ! timeout 10 scontrol show node "$2" | grep -q "State=[^ ]*DRAIN"' \
	sh "$hrc" "$node"

# A lost rail: the drain reason names the port, through the nccl path's
# decisive result or through the policy violation.
health synth-rail
check "lost rail (require nccl): exit 1, reason names GPU3's port mlx5_6/1" \
	sh -c '[ "$1" = 1 ] && [ "$2" = "gdrcheck: BLOCKED nccl at topo.rails (GPU3) RAIL_LOST: GPU3 lost rail mlx5_6/1: port DOWN (Polling); NCCL uses mlx5_7/1 instead" ]' \
	sh "$hrc" "$(node_reason)"
health synth-rail-any
check "lost rail (require any, dmabuf READY-UNPROVEN): reason is the violation, with the port" \
	sh -c '[ "$1" = 1 ] && [ "$2" = "gdrcheck: BLOCKED policy: GPU3 lost rail mlx5_6/1: port DOWN (Polling)" ]' \
	sh "$hrc" "$(node_reason)"
check "sinfo -R shows the lost port" \
	sh -c 'timeout 10 sinfo -R -h -o "%E" | grep -qF "mlx5_6/1"'
health gd-reg-ok
check "READY (--no-alloc by default: READY-UNPROVEN) after a lost rail: resumed" \
	sh -c '[ "$1" = 0 ] && [ -z "$2" ] && grep -q "resumed" "$3" &&
		tail -n 1 "$4" | grep -q -- "--no-alloc$"' sh "$hrc" "$(node_reason)" "$work/out" "$work/args.reg-ok"
health gd-reg-ok
check "READY-UNPROVEN on an undrained node: exit 0, the word logged" \
	sh -c '[ "$1" = 0 ] && grep -q ": READY-UNPROVEN$" "$2"' sh "$hrc" "$work/out"

# HEALTH_IDLE_PROOF=1: the full proof (no --no-alloc) when the node runs no
# job; the node here is IDLE.
health gd-reg-ok HEALTH_IDLE_PROOF=1
check "HEALTH_IDLE_PROOF=1 on an IDLE node: full proof, READY (not UNPROVEN)" \
	sh -c '[ "$1" = 0 ] && ! tail -n 1 "$2" | grep -q -- --no-alloc &&
		grep -q "idle: the full proof" "$3" && grep -q ": READY$" "$3"' \
	sh "$hrc" "$work/args.reg-ok" "$work/out"
# A job on the node: ALLOCATED, so --no-alloc stays.
jobid=$(timeout 10 sbatch --parsable -N 1 -w "$node" -o /dev/null --wrap "sleep 60" 2>"$work/sbatch.err")
if wait_state 'ALLOC|MIXED' 20; then
	health gd-reg-ok HEALTH_IDLE_PROOF=1
	check "HEALTH_IDLE_PROOF=1 on a node running a job ($(node_field State)): --no-alloc kept" \
		sh -c '[ "$1" = 0 ] && tail -n 1 "$2" | grep -q -- "--no-alloc$" && ! grep -q "idle:" "$3"' \
		sh "$hrc" "$work/args.reg-ok" "$work/out"
else
	bad "sbatch: node not ALLOCATED within 20 s (state '$(node_field State)', $(cat "$work/sbatch.err"))"
fi
[ -n "$jobid" ] && timeout 10 scancel "$jobid"
wait_state '^IDLE$' 20
health gd-reg-ok HEALTH_IDLE_PROOF=maybe
check "a bad HEALTH_IDLE_PROOF: exit 3" [ "$hrc" = 3 ]

# HEALTH_REPORT_DIR: links planted at the old fixed temporary names and at
# the targets are replaced, never written through; a file's mode is kept.
rd=$work/reports
rm -f "$rd"/* "$rd"/.[!.]*
echo victim >"$work/victim"
for n in ".$node.json.tmp" ".$node.rc.tmp" "$node.json" "$node.rc"; do
	ln -s "$work/victim" "$rd/$n"
done
health gd-h200
check "report dir with planted links: the victim untouched, NODE.json and NODE.rc regular files" \
	sh -c '[ "$(cat "$1/victim")" = victim ] && [ -f "$2/$3.json" ] && [ ! -L "$2/$3.json" ] &&
		[ ! -L "$2/$3.rc" ] && [ "$(cat "$2/$3.rc")" = 1 ] &&
		[ "$(jq -r .verdict.status "$2/$3.json")" = BLOCKED ]' sh "$work" "$rd" "$node"
check "report dir: no temporary file left (only the targets and the planted links)" \
	sh -c '[ "$(ls -A "$1" | sort | tr "\n" " ")" = "$(printf "%s\n" ".$2.json.tmp" ".$2.rc.tmp" "$2.json" "$2.rc" | sort | tr "\n" " ")" ]' \
	sh "$rd" "$node"
chmod 600 "$rd/$node.json"
chmod 640 "$rd/$node.rc"
health gd-h200
check "report dir: the targets' modes kept (600, 640)" \
	sh -c '[ "$(stat -c %a "$1/$2.json")" = 600 ] && [ "$(stat -c %a "$1/$2.rc")" = 640 ]' sh "$rd" "$node"
health gd-reg-ok

# ERROR on a healthy node: never a silent drain.
for t in "gd-cuda-crash undecided (exit 3)" "segv died with signal 11"; do
	fx=${t%% *}
	msg=${t#* }
	health "$fx"
	check "ERROR ($fx): exit 3, node not drained, log says '$msg'" \
		sh -c '[ "$1" = 3 ] && ! timeout 10 scontrol show node "$2" | grep -q "State=[^ ]*DRAIN" &&
			grep -q "ERROR, node state left as is.*$3" "$4"' sh "$hrc" "$node" "$msg" "$work/out"
done
health gd-reg-ok "GDRCHECK_ARGS='--bogus-option'"
check "ERROR (usage error): exit 3, not drained, logged with gdrcheck's message" \
	sh -c '[ "$1" = 3 ] && ! timeout 10 scontrol show node "$2" | grep -q "State=[^ ]*DRAIN" &&
		grep -q "usage error (exit 2).*bogus" "$3"' sh "$hrc" "$node" "$work/out"
health gd-reg-ok "HEALTH_ON_ERROR=sometimes"
check "a bad HEALTH_ON_ERROR: exit 3, not drained" \
	sh -c '[ "$1" = 3 ] && ! timeout 10 scontrol show node "$2" | grep -q "State=[^ ]*DRAIN"' sh "$hrc" "$node"

# HEALTH_ON_ERROR=drain: a distinct reason, and READY undoes it.
health segv HEALTH_ON_ERROR=drain
check "HEALTH_ON_ERROR=drain: a crash drains with 'gdrcheck: ERROR ...signal 11'" \
	sh -c '[ "$1" = 3 ] && [ "$2" = "gdrcheck: ERROR gdrcheck died with signal 11" ]' \
	sh "$hrc" "$(node_reason)"
health gd-reg-ok
check "READY after an ERROR drain of ours: resumed" \
	sh -c '[ "$1" = 0 ] && [ -z "$2" ]' sh "$hrc" "$(node_reason)"

# An operator's drain is not ours: neither resumed nor rewritten.
timeout 10 scontrol update nodename=$node state=drain reason="disk replacement"
health gd-reg-ok
check "operator drain + READY: left drained with the operator's reason" \
	sh -c '[ "$1" = 0 ] && [ "$2" = "disk replacement" ] && grep -q "drained by someone else" "$3"' \
	sh "$hrc" "$(node_reason)" "$work/out"
health gd-h200
check "operator drain + BLOCKED: reason not overwritten" \
	sh -c '[ "$1" = 1 ] && [ "$2" = "disk replacement" ]' sh "$hrc" "$(node_reason)"
timeout 10 scontrol update nodename=$node state=resume

# The time bound: --timeout per stage today, --deadline where gdrcheck has
# it; a hang ends at HEALTH_BUDGET and is an ERROR.
t0=$(date +%s)
health hang HEALTH_BUDGET=10
t1=$(date +%s)
check "hang, HEALTH_BUDGET=10: ends in $((t1 - t0)) s (<= 14), exit 3, not drained" \
	sh -c '[ "$1" -le 14 ] && [ "$2" = 3 ] && ! timeout 10 scontrol show node "$3" | grep -q "State=[^ ]*DRAIN" &&
		grep -q "did not finish within HEALTH_BUDGET=10s" "$4"' \
	sh "$((t1 - t0))" "$hrc" "$node" "$work/out"
check "no --deadline in gdrcheck --help: --timeout (10-5)/4 = 1 passed, --no-alloc by default" \
	grep -q -- "--json --output .* --timeout 1 --no-alloc$" "$work/args.hang"
HANG_DEADLINE=1
export HANG_DEADLINE
{ echo "GDRCHECK=$work/bin/hang"; echo HEALTH_BUDGET=10; } >"$work/health.conf"
env -i SLURMD_NODENAME=$node SLURM_CONF="$conf" HANG_DEADLINE=1 \
	GDRCHECK_HEALTH_CONF="$work/health.conf" "$health" >"$work/out" 2>&1
check "--deadline in gdrcheck --help: --deadline 5 passed, no --timeout" \
	sh -c 'grep -q -- "--deadline 5 --no-alloc$" "$1" && ! grep -q -- --timeout "$1"' sh "$work/args.hang"
unset HANG_DEADLINE
# Default HEALTH_BUDGET 45: --deadline 40 if this gdrcheck has it, else
# --timeout (45-5)/4 = 10.
want_bound="--timeout 10"
./gdrcheck --help 2>/dev/null | grep -q -- --deadline && want_bound="--deadline 40"
check "the real gdrcheck got '$want_bound' (default HEALTH_BUDGET 45)" \
	grep -q -- "--json --output .* $want_bound --no-alloc$" "$work/args.reg-ok"

# ------------------------------------------------- 2. slurmd runs it itself
# slurmd runs HealthCheckProgram with an empty environment: the launcher
# only names the settings file; the fixture is switched by rewriting it.
cat >"$work/bin/hc" <<-EOF
	#!/bin/sh
	GDRCHECK_HEALTH_CONF=$work/health.conf
	export GDRCHECK_HEALTH_CONF
	exec "$health" >>"$work/log/hc.log" 2>&1
EOF
chmod +x "$work/bin/hc"
{ echo "GDRCHECK=$work/bin/gd-h200"; echo "SCONTROL=scontrol"; echo "SLURM_CONF=$conf"; echo "export SLURM_CONF"; } >"$work/health.conf"
printf 'HealthCheckProgram=%s\nHealthCheckInterval=2\nHealthCheckNodeState=ANY\n' \
	"$work/bin/hc" >>"$conf"
timeout 20 scontrol reconfigure >"$work/reconf.log" 2>&1
check "scontrol reconfigure with HealthCheckProgram" sh -c '[ "$1" = 0 ]' sh $?
if wait_state DRAIN 30; then
	ok "slurmd's health check drained the node (h200)"
else
	bad "slurmd's health check did not drain within 30 s (state '$(node_field State)')"
	sed 's/^/    /' "$work/log/hc.log" 2>/dev/null | tail -n 5
fi
check "slurmd's run: reason '$h200_reason'" \
	sh -c '[ "$1" = "$2" ]' sh "$(node_reason)" "$h200_reason"
{ echo "GDRCHECK=$work/bin/gd-reg-ok"; echo "SLURM_CONF=$conf"; echo "export SLURM_CONF"; } >"$work/health.conf.new"
mv -f "$work/health.conf.new" "$work/health.conf"
if wait_state '^IDLE$' 30; then
	ok "slurmd's health check resumed the node (reg-ok)"
else
	bad "slurmd's health check did not resume within 30 s (state '$(node_field State)')"
	sed 's/^/    /' "$work/log/hc.log" 2>/dev/null | tail -n 5
fi
check "slurmd ran the wrapper as root with SLURMD_NODENAME=$node" \
	grep -q "gdrcheck-health: $node: resumed" "$work/log/hc.log"

stop_checked "munged, slurmctld, slurmd stopped"
finish
