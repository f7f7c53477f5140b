#!/bin/sh
# Boot the test guest once and run every case in tests/vm/cases/ inside it.
#
# Usage: tests/vm/run.sh [CASE...]     (CASE = file name without .sh)
# Env:   VM_TIMEOUT=SECS       whole boot+cases wall limit (default 720)
#        VM_CASE_TIMEOUT=SECS  per-case limit inside the guest (default 60)
#        VM_NO_BUILD=1         use the existing initramfs, do not rebuild
#        VM_VERBOSE=1          print every case's output, not only failures
#        VM_SHELL=1            interactive: shell on the console, no cases
#        VM_SMP=N              guest CPUs (default 1)
#        VM_IOMMU=1            add an emulated Intel IOMMU (intel_iommu=on)
#        VM_QEMU_EXTRA="..."   extra qemu arguments (word-split), e.g. more
#                              -device lines; VM_APPEND_EXTRA: kernel args
# Prints "PASS name" / "FAIL name" / "SKIP name" per case, then
# "vm: N passed, N failed"; exits 0 only if the guest finished, setup
# succeeded and no case failed. Logs: tests/vm/.cache/run/.
set -eu

VM_DIR=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
CACHE=${VM_CACHE:-$VM_DIR/.cache}
RUN=$CACHE/run
INITRD=${VM_INITRAMFS:-$CACHE/initramfs.cpio.gz}
TIMEOUT=${VM_TIMEOUT:-720}
CASE_TIMEOUT=${VM_CASE_TIMEOUT:-60}
SMP=${VM_SMP:-1}

err() { printf 'vm: ERROR: %s\n' "$*" >&2; }

if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
	err "qemu-system-x86_64 not found: run tests/vm/setup.sh (as root)"
	echo "vm: 0 passed, 1 failed"
	exit 1
fi
if [ ! -r "$CACHE/kernel-version" ]; then
	err "no guest kernel in $CACHE: run tests/vm/setup.sh (as root)"
	echo "vm: 0 passed, 1 failed"
	exit 1
fi
KVER=$(cat "$CACHE/kernel-version")
KERNEL=$CACHE/kernel/boot/vmlinuz-$KVER
[ -r "$KERNEL" ] || { err "missing $KERNEL: run tests/vm/setup.sh"; exit 1; }

# One run at a time per cache directory (the run dir and image are shared).
mkdir -p "$CACHE"
exec 9>"$CACHE/.run.lock"
if ! flock -w 600 9; then
	err "another tests/vm/run.sh holds $CACHE/.run.lock"
	exit 1
fi

if [ "${VM_NO_BUILD:-0}" != 1 ]; then
	"$VM_DIR/build-initramfs.sh" >&2 || { err "initramfs build failed"; echo "vm: 0 passed, 1 failed"; exit 1; }
fi
[ -r "$INITRD" ] || { err "missing $INITRD"; exit 1; }

# Cases expected to run (so a case that never reports cannot pass silently).
only=
expected=
for c in "$VM_DIR"/cases/*.sh; do
	[ -e "$c" ] || continue
	n=${c##*/}
	n=${n%.sh}
	if [ $# -gt 0 ]; then
		sel=0
		for a in "$@"; do
			[ "$a" = "$n" ] && sel=1
		done
		[ "$sel" -eq 1 ] || continue
	fi
	expected="$expected $n"
done
if [ $# -gt 0 ]; then
	for a in "$@"; do
		case " $expected " in *" $a "*) ;; *) err "no case named '$a' in $VM_DIR/cases"; exit 1 ;; esac
	done
	only=$(printf '%s' "${expected# }" | tr ' ' ',')
fi

APPEND="console=ttyS0 panic=-1 loglevel=4 edd=off vm.timeout=$CASE_TIMEOUT${only:+ vm.only=$only}"
MACHINE=q35
IOMMU_DEV=
if [ "${VM_IOMMU:-0}" = 1 ]; then
	MACHINE=q35,kernel-irqchip=split
	IOMMU_DEV="-device intel-iommu,intremap=on"
	APPEND="$APPEND intel_iommu=on iommu=nopt"
fi
APPEND="$APPEND${VM_APPEND_EXTRA:+ $VM_APPEND_EXTRA}"

# Guest PCIe topology (q35):
#   pcie.0 -- rp1 (pcie-root-port) -- up1 (x3130-upstream) -- dn1 (xio3130-downstream) -- virtio-net-pci (the rxe NIC)
#          -- rp2 (pcie-root-port) -- bochs-display (display class: plays the GPU)
#          -- rp3 (pcie-root-port, empty: off the path)
#          -- rp4 (pcie-root-port) -- virtio-net-pci (the peer NIC: eth1, down
#             until a peer case brings it up as rxe1)
# The wire: both NICs are ports of one qemu hub (hubid 0) and of nothing
# else, so a frame one NIC sends reaches the other NIC and nothing leaves
# qemu (the peer cases, guest/lib.sh peer_up).
# shellcheck disable=SC2086 # IOMMU_DEV and VM_QEMU_EXTRA are word lists
set -- -accel tcg -M "$MACHINE" -m 1024 -smp "$SMP" -nographic -nodefaults -no-reboot \
	-kernel "$KERNEL" -initrd "$INITRD" $IOMMU_DEV \
	-device pcie-root-port,id=rp1,bus=pcie.0,addr=0x4,chassis=1,slot=1 \
	-device x3130-upstream,id=up1,bus=rp1 \
	-device xio3130-downstream,id=dn1,bus=up1,chassis=2,slot=0 \
	-netdev hubport,id=n1,hubid=0 \
	-device virtio-net-pci,netdev=n1,bus=dn1,addr=0x0,romfile= \
	-device pcie-root-port,id=rp2,bus=pcie.0,addr=0x5,chassis=3,slot=2 \
	-device bochs-display,id=gpu0,bus=rp2,addr=0x0 \
	-device pcie-root-port,id=rp3,bus=pcie.0,addr=0x6,chassis=4,slot=3 \
	-device pcie-root-port,id=rp4,bus=pcie.0,addr=0x7,chassis=5,slot=4 \
	-netdev hubport,id=n2,hubid=0 \
	-device virtio-net-pci,netdev=n2,bus=rp4,addr=0x0,romfile= \
	${VM_QEMU_EXTRA:-}

rm -rf "$RUN"
mkdir -p "$RUN/cases"

if [ "${VM_SHELL:-0}" = 1 ]; then
	exec qemu-system-x86_64 "$@" -append "$APPEND vm.shell" \
		-serial mon:stdio -serial "file:$RUN/results.log"
fi

printf 'vm: booting %s (kernel %s, limit %ss)\n' "${only:-all cases}" "$KVER" "$TIMEOUT" >&2
start=$(date +%s)
qrc=0
timeout -k 10 "$TIMEOUT" qemu-system-x86_64 "$@" -append "$APPEND" \
	-serial "file:$RUN/console.log" -serial "file:$RUN/results.log" \
	</dev/null >"$RUN/qemu.out" 2>&1 || qrc=$?
end=$(date +%s)
printf 'vm: guest ran %ss (qemu rc=%s)\n' "$((end - start))" "$qrc" >&2

# ------------------------------------------------------------ parse results
cr=$(printf '\r')
cur=
done_seen=0
setup_rc=
fatal=
: >"$RUN/status"
if [ -r "$RUN/results.log" ]; then
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%"$cr"}
		case $line in
		"@@SETUP rc="*)
			setup_rc=${line#@@SETUP rc=}
			cur=setup
			: >"$RUN/setup.b64"
			;;
		"@@CASE "*)
			cur=${line#@@CASE }
			: >"$RUN/cases/$cur.b64"
			;;
		"@@END "*)
			rest=${line#@@END }
			name=${rest%% *}
			if [ "$name" != setup ]; then
				printf '%s\n' "$rest" >>"$RUN/status"
			fi
			cur=
			;;
		"@@DONE") done_seen=1 ;;
		"@@FATAL "*) fatal=${line#@@FATAL } ;;
		*)
			if [ "$cur" = setup ]; then
				printf '%s\n' "$line" >>"$RUN/setup.b64"
			elif [ -n "$cur" ]; then
				printf '%s\n' "$line" >>"$RUN/cases/$cur.b64"
			fi
			;;
		esac
	done <"$RUN/results.log"
fi

decode() { base64 -d "$1" 2>/dev/null || echo "(undecodable output in $1)"; }
indent() { sed 's/^/    /'; }

passed=0
failed=0
skipped=0
if [ -f "$RUN/setup.b64" ]; then
	decode "$RUN/setup.b64" >"$RUN/setup.log"
fi
if [ -z "$setup_rc" ]; then
	echo "FAIL setup (guest never reported setup)"
	failed=$((failed + 1))
elif [ "$setup_rc" != 0 ]; then
	echo "FAIL setup (rc=$setup_rc)"
	indent <"$RUN/setup.log"
	failed=$((failed + 1))
elif [ "${VM_VERBOSE:-0}" = 1 ]; then
	indent <"$RUN/setup.log"
fi

for n in $expected; do
	log=$RUN/cases/$n.log
	if [ -f "$RUN/cases/$n.b64" ]; then
		decode "$RUN/cases/$n.b64" >"$log"
	fi
	st=$(awk -v n="$n" '$1 == n { print; exit }' "$RUN/status")
	if [ -z "$st" ]; then
		if [ -f "$log" ]; then
			echo "FAIL $n (started, never finished: guest died or run timed out)"
			indent <"$log"
		else
			echo "FAIL $n (never ran)"
		fi
		failed=$((failed + 1))
		continue
	fi
	rc=$(printf '%s\n' "$st" | sed -n 's/.* rc=\([0-9]*\).*/\1/p')
	secs=$(printf '%s\n' "$st" | sed -n 's/.* secs=\([0-9.]*\).*/\1/p')
	if [ "$rc" = 0 ]; then
		echo "PASS $n (${secs}s)"
		passed=$((passed + 1))
		[ "${VM_VERBOSE:-0}" = 1 ] && indent <"$log"
	elif [ "$rc" = 77 ]; then
		echo "SKIP $n ($(grep -m1 '^SKIP:' "$log" | sed 's/^SKIP: //'))"
		skipped=$((skipped + 1))
	else
		why="rc=$rc"
		[ "$rc" = 143 ] && why="timed out after ${CASE_TIMEOUT}s"
		echo "FAIL $n ($why, ${secs}s)"
		indent <"$log"
		failed=$((failed + 1))
	fi
done

broken=0
if [ "$qrc" -ne 0 ] || [ "$done_seen" -ne 1 ] || [ -n "$fatal" ]; then
	broken=1
	if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
		err "guest did not finish within ${TIMEOUT}s (VM_TIMEOUT)"
	elif [ -n "$fatal" ]; then
		err "guest init failed: $fatal"
	elif [ "$qrc" -ne 0 ]; then
		err "qemu exited with rc=$qrc"
	else
		err "guest stopped before reporting the end of the run"
	fi
	if [ -s "$RUN/qemu.out" ]; then
		echo "--- qemu output:" >&2
		tail -n 20 "$RUN/qemu.out" >&2
	fi
	echo "--- last 40 lines of the guest console ($RUN/console.log):" >&2
	if [ -s "$RUN/console.log" ]; then
		# Drop the firmware's terminal escapes and CRs.
		tail -n 40 "$RUN/console.log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1bc//g; s/\r$//' >&2
	else
		echo "(no console output)" >&2
	fi
	if [ "$failed" -eq 0 ]; then
		failed=1
	fi
fi

[ "$skipped" -gt 0 ] && echo "vm: $skipped skipped (not counted)"
echo "vm: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$broken" -eq 0 ]
