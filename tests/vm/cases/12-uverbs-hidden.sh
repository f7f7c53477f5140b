#!/bin/sh
# The container case: rxe0 is in sysfs but /dev/infiniband/uverbs0 is not
# there (moved aside, then restored with mv). nic.devices still passes
# (sysfs), nic.uverbs blocks rxe0 with UVERBS_NODE_MISSING and says how to
# expose the node; rxe0 is the only device, so both paths are BLOCKED: exit 1.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

node=/dev/infiniband/uverbs0
# On devtmpfs itself, so mv is a rename and the node comes back unchanged.
hide=$(mktemp -d /dev/vm-hidden.XXXXXX)
cleanup() {
	if [ -e "$hide/uverbs0" ] && [ ! -e "$node" ]; then
		mv "$hide/uverbs0" "$node"
	fi
	rmdir "$hide" 2>/dev/null || true
	nvidia_proc_restore
}
trap cleanup EXIT
trap 'exit 143' TERM INT

check "rxe0 is up" rxe_ready rxe0
check_eq "rxe0's uverbs interface" uverbs0 "$(uverbs_of rxe0)"
before=$(stat -c '%F %t:%T %a %u:%g' "$node")
say "$node: $before"
gpu_scenario cuda.conf
nvidia_proc_fake

mv "$node" "$hide/uverbs0"
check "$node is gone" test ! -e "$node"
check "rxe0 is still in sysfs" test -d /sys/class/infiniband/rxe0
run_json report.json env FAKE_CUDA_SCENARIO="$PWD/cuda.conf" \
	"$GDRCHECK" --json --libcuda "$LIBCUDA_FAKE"
mv "$hide/uverbs0" "$node"
check_eq "$node restored unchanged" "$before" "$(stat -c '%F %t:%T %a %u:%g' "$node")"
check "rxe0 is ready again" rxe_ready rxe0

report_checks report.json <<'CHECKS'
nic.devices still PASS (rxe0 is in sysfs)
	.results[] | select(.gate == "nic.devices" and .status == "PASS" and .evidence.sysfs_devices == "rxe0")
nic.uverbs BLOCKED UVERBS_NODE_MISSING on rxe0 (uverbs0, /dev/infiniband/uverbs0)
	.results[] | select(.gate == "nic.uverbs" and .subject == "rxe0" and .status == "BLOCKED" and .reason_code == "UVERBS_NODE_MISSING"
		and .evidence.uverbs == "uverbs0" and .evidence.node == "/dev/infiniband/uverbs0")
its remediation mentions --device=/dev/infiniband/uverbs0
	.results[] | select(.gate == "nic.uverbs" and .subject == "rxe0") | .remediation | contains("--device=/dev/infiniband/uverbs0")
the report's remediations carry it for rxe0
	.remediations[] | select(.gate == "nic.uverbs" and .status == "BLOCKED" and (.subjects | index(["rxe0"]))
		and (.text | contains("--device=/dev/infiniband/uverbs0")))
nic.port still PASS on rxe0/1 (sysfs)
	.results[] | select(.gate == "nic.port" and .subject == "rxe0/1" and .status == "PASS")
mech.dmabuf_provider does not BLOCK rxe0 (the device could not be opened)
	.results[] | select(.gate == "mech.dmabuf_provider" and .subject == "rxe0") | .status != "BLOCKED"
paths.dmabuf BLOCKED with nic.uverbs (rxe0) among its blockers
	.paths.dmabuf | .verdict == "BLOCKED"
		and any(.blockers[]; .gate == "nic.uverbs" and .subject == "rxe0" and .reason_code == "UVERBS_NODE_MISSING")
paths.peermem BLOCKED with nic.uverbs (rxe0) among its blockers
	.paths.peermem | .verdict == "BLOCKED"
		and any(.blockers[]; .gate == "nic.uverbs" and .subject == "rxe0" and .reason_code == "UVERBS_NODE_MISSING")
verdict BLOCKED, exit_code 1
	.verdict.status == "BLOCKED" and .verdict.exit_code == 1
CHECKS
check_rc "gdrcheck with the uverbs node hidden" 1
