#!/bin/sh
# gdrcheck never writes config space or sysfs and loads no module, even in
# a full run (every layer: registration and a real loopback transfer, with
# host-backed "GPU memory" so the peermem MR and datapath really run).
#
# Two independent proofs:
#  1. state snapshots, as root, before and after the run must be identical:
#     - the whole config space of every PCI function (/sys/bus/pci/devices/
#       */config: 4096 bytes for the PCIe functions, 256 for the q35
#       built-ins), byte for byte (cmp -l shows any difference);
#     - every function's ACS Capability and Control words (located with
#       ecap_offset), listed apart so a change reads plainly;
#     - sha256 of every file under the devices behind /sys/class/infiniband
#       and /sys/class/infiniband_verbs (rxe0, uverbs0, abi_version) and
#       under /sys/module, with sha256sum's error line for the files that
#       do not read (unused GID entries' gid_attrs/{ndevs,types}: EINVAL;
#       write-only uevent files): which files read is state too.
#       Excluded: ports/*/counters/ and ports/*/hw_counters/ (packet and
#       error counters: the loopback transfer legitimately moves them;
#       25-reg-loopback asserts that it does);
#     - /proc/modules (names, sizes, reference counts, state): no module
#       appeared (the guest has no modprobe, so see also 2.) and none is
#       still held by a leftover reference.
#     A second snapshot before the run must equal the first: the noise
#     control for the exclusion list (if that fails, the list is wrong, not
#     gdrcheck).
#  2. the kernel's function tracer during the run, filtered to the write
#     paths: kernfs_fop_write_iter (any sysfs write), pci_user_write_config_
#     {byte,word,dword} (config writes through sysfs or /proc/bus/pci),
#     proc_bus_pci_write, iopl/ioperm (port-I/O config access),
#     __request_module (a module load the kernel would ask modprobe for),
#     init_module/finit_module. The window holds only the control and the
#     gdrcheck run (tool and workers), and nothing else in the guest writes
#     sysfs (no udev; tracefs writes are not kernfs), so every hit but the
#     control's fails the case. This also sees a write that was undone
#     before the run ended, which 1. cannot. The control: a setpci write of
#     rp3's ACSCtl with its own value, traced in the same window, proves the
#     tracer catches such writes.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

T=/sys/kernel/tracing
[ -e "$T/current_tracer" ] || T=/sys/kernel/debug/tracing
trace_off() {
	if [ -w "$T/tracing_on" ]; then
		echo 0 >"$T/tracing_on"
		echo nop >"$T/current_tracer"
		: >"$T/set_ftrace_filter"
		: >"$T/trace"
	fi
}
cleanup() {
	trace_off 2>/dev/null || true
	rm -f "${acs_at:-}"
	nvidia_proc_restore
}
trap cleanup EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
check "running as root (full config space)" test "$(id -u)" -eq 0
gpu_scenario cuda.conf host
nvidia_proc_fake

sys_dirs=$( (for x in /sys/class/infiniband/* /sys/class/infiniband_verbs/*; do readlink -f "$x"; done
	echo /sys/module) | sort -u)
say "sysfs trees summed: $(echo "$sys_dirs" | tr '\n' ' ')"

# The functions with an ACS capability and where it is ("BDF OFFSET"
# lines): walked once with setpci (each setpci start scans the whole bus:
# slow under TCG); the snapshots read the ACS words from their copy of the
# config space (od), and the check below compares them with setpci's.
acs_at=$(mktemp)
for c in /sys/bus/pci/devices/*/config; do
	b=${c%/config}
	b=${b##*/}
	off=$(ecap_offset "$b" 0x000d)
	if [ -n "$off" ]; then
		echo "$b $off"
	fi
done >"$acs_at"

# snapshot DIR: the state listed above, into DIR.
snapshot() {
	mkdir "$1"
	for c in /sys/bus/pci/devices/*/config; do
		b=${c%/config}
		cat "$c" >"$1/config.${b##*/}"
	done
	# ACSCap ACSCtl, the two words at ACS + 4, from the copy just taken.
	while read -r b off; do
		# shellcheck disable=SC2046 # split on purpose: od pads with spaces
		echo "$b ACSCap ACSCtl:" $(od -A n -t x2 -j $((0x$off + 4)) -N 4 "$1/config.$b")
	done <"$acs_at" >"$1/acs"
	for d in $sys_dirs; do
		find "$d" -type f ! -path '*/counters/*' ! -path '*/hw_counters/*'
	done | sort >"$1/files"
	# Unreadable files: sha256sum's error line (stderr) instead of a sum.
	xargs sha256sum <"$1/files" 2>&1 | sort >"$1/sysfs" || true
	cat /proc/modules >"$1/modules"
}

# same DESC DIR1 DIR2: the two snapshots are identical (details if not).
same() {
	_bad=0
	for f in "$2"/config.*; do
		n=${f##*/}
		if ! cmp -s "$f" "$3/$n"; then
			say "config space of ${n#config.} differs (offset, old, new; octal):"
			cmp -l "$f" "$3/$n" | head -n 20 || true
			_bad=1
		fi
	done
	[ "$(ls "$2")" = "$(ls "$3")" ] || { say "PCI functions differ: $(ls "$2") / $(ls "$3")"; _bad=1; }
	for f in acs files sysfs modules; do
		if ! cmp -s "$2/$f" "$3/$f"; then
			say "$f differs:"
			diff "$2/$f" "$3/$f" | head -n 40 || true
			_bad=1
		fi
	done
	[ "$_bad" -eq 0 ] || fail "$1"
	say "ok: $1"
}

t0=$(cut -d' ' -f1 /proc/uptime)
snapshot before
t1=$(cut -d' ' -f1 /proc/uptime)
set -- before/config.*
say "snapshot: $# PCI functions" \
	"($(cat before/config.* | wc -c) config bytes), $(wc -l <before/acs) with ACS," \
	"$(wc -l <before/sysfs) sysfs files ($(grep -c "can't read" before/sysfs || true) unreadable)," \
	"$(wc -l <before/modules) modules; took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
for b in $VM_ROOT_PORTS "$VM_NIC_BDF" "$VM_GPU_BDF"; do
	check_eq "config space of $b read in full" 4096 "$(wc -c <"before/config.$b")"
done
check "every root port's ACS registers are in the snapshot" \
	test "$(grep -c ' ACSCap ' before/acs)" -ge "$(echo "$VM_ROOT_PORTS" | wc -w)"
sed 's/^/  /' before/acs
reg1=$(acs_ctl_reg "$VM_NIC_RP_BDF") || fail "$VM_NIC_RP_BDF has no ACS capability"
check_eq "the snapshot's ACSCtl of $VM_NIC_RP_BDF is setpci's" "$(setpci -s "$VM_NIC_RP_BDF" "$reg1")" \
	"$(awk -v b="$VM_NIC_RP_BDF" '$1 == b { print $NF }' before/acs)"
snapshot control
same "two snapshots without gdrcheck between them are identical (the exclusions are complete)" before control

# The tracer: function tracing of the write paths only.
check "the function tracer is available ($T)" grep -qw function "$T/available_tracers"
echo 0 >"$T/tracing_on"
printf '%s\n' kernfs_fop_write_iter pci_user_write_config_byte pci_user_write_config_word \
	pci_user_write_config_dword proc_bus_pci_write __request_module \
	__x64_sys_iopl __x64_sys_ioperm __x64_sys_init_module __x64_sys_finit_module >"$T/set_ftrace_filter"
say "traced: $(tr '\n' ' ' <"$T/set_ftrace_filter")"
echo function >"$T/current_tracer"
: >"$T/trace"
echo 1 >"$T/tracing_on"
reg3=$(acs_ctl_reg "$VM_RP3_BDF") || fail "$VM_RP3_BDF has no ACS capability"
setpci -s "$VM_RP3_BDF" "$reg3=$(setpci -s "$VM_RP3_BDF" "$reg3")" # same value: a write, no change
run_json report.json env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"
echo 0 >"$T/tracing_on"
grep -v '^#' "$T/trace" >trace.txt || true
trace_off
no_gdrcheck_left
say "--- traced write-path calls during the window ($(wc -l <trace.txt)):"
sed 's/^ */  /' trace.txt | head -n 40
check "positive control: the tracer saw setpci's config write (pci_user_write_config_word)" \
	grep -q '^ *setpci-[0-9]* .*pci_user_write_config_word' trace.txt
# Strict: nothing but the control may appear (a comm the tracer could not
# resolve shows as <...>, so "not from gdrcheck" would not be enough).
if grep -v '^ *setpci-[0-9]* ' trace.txt >others.txt; then
	cat others.txt
	fail "write-path calls from gdrcheck (tool or worker) or an unknown process (lines above)"
fi
say "ok: no write-path call from any process but the control's setpci"

snapshot after
same "config space, ACS registers, sysfs (infiniband, module) and /proc/modules unchanged by the run" before after

# (The report's validity: 25-reg-loopback checks the same kind of run.)
jq_checks report.json <<'CHECKS'
the run was full: registration ran (reg.host_mr and reg.peermem PASS)
	[.results[] | select((.gate == "reg.host_mr" or .gate == "reg.peermem") and .status == "PASS")] | length == 2
the run was full: a real loopback transfer ran (data.peermem TRANSFER_VERIFIED)
	.results[] | select(.gate == "data.peermem" and .reason_code == "TRANSFER_VERIFIED")
platform.acs and platform.bridges read config space (root: neither SKIP nor ERROR)
	[.results[] | select(.gate == "platform.acs" or .gate == "platform.bridges")] | length == 2
		and all(.status != "SKIP" and .status != "ERROR")
verdict READY, exit_code 0 (the peermem transfer on host-backed memory outranks mech.peermem)
	.verdict.status == "READY" and .verdict.exit_code == 0
CHECKS
check_rc "full gdrcheck run" 0
