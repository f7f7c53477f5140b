#!/bin/sh
# --capture on the real guest kernel, then --sysroot on the extracted
# archive: the offline layers (host, topology, platform: sysfs, procfs and
# config space read through libpci) give the same results in the replay.
# Both runs see the same GPU from the libcuda double and load no
# libibverbs, so only what the archive holds can differ. The archive is scrubbed: no
# hostname, no kernel command line beyond IOMMU words.
set -eu
# shellcheck source=../guest/lib.sh
. /opt/vm/lib.sh
need_gdrcheck
need_libcuda_fake

check "rxe0 is up" rxe_ready rxe0
gpu_scenario cuda.conf
FAKE_CUDA_SCENARIO=$PWD/cuda.conf
export FAKE_CUDA_SCENARIO
# mech.peermem_api reads the guest's real /proc/kallsyms and /dev/kmsg.
offline="--libcuda $LIBCUDA_FAKE --libibverbs /nonexistent/libibverbs.so.1 --only host,topo,platform,mech.peermem_api"
# shellcheck disable=SC2086 # offline is a word list
run_json live.json "$GDRCHECK" --json $offline --capture "$PWD/capture.tar.gz"
check "the archive was written" test -s capture.tar.gz
mkdir -p replay
check "the archive extracts" tar xzf capture.tar.gz -C replay
# shellcheck disable=SC2086
run_json replay.json "$GDRCHECK" --json $offline --sysroot "$PWD/replay"

jq_check "the live report names the archive" live.json '.capture | endswith("capture.tar.gz")'
jq -c '[.results[] | {gate, subject, status, reason_code, reason}]' live.json >live.rows
jq -c '[.results[] | {gate, subject, status, reason_code, reason}]' replay.json >replay.rows
check_eq "replayed results (gate, subject, status, code, reason)" "$(cat live.rows)" "$(cat replay.rows)"
jq_check "the replay found the PCIe tree" replay.json \
	'[.results[] | select(.gate == "topo.tree" and (.status == "PASS" or .status == "WARN"))] | length == 1'
jq_check "the replay has the GPU~rxe0 path through the captured tree" replay.json \
	'[.results[] | select(.gate == "topo.path" and .subject == "GPU0~rxe0" and .status == "PASS")] | length == 1'
jq_check "the replay decoded ACS from the captured config space" replay.json \
	'[.results[] | select(.gate == "platform.bridges" and .status == "PASS")] | length == 1'
check_eq "same ACS evidence per bridge" \
	"$(jq -c '.results[] | select(.gate == "platform.bridges") | .evidence' live.json)" \
	"$(jq -c '.results[] | select(.gate == "platform.bridges") | .evidence' replay.json)"
check_eq "hostname scrubbed" "captured-node" "$(tar xzf capture.tar.gz -O proc/sys/kernel/hostname)"
if tar xzf capture.tar.gz -O proc/cmdline | grep -q console=; then
	fail "the kernel command line was not scrubbed"
fi
say "ok: kernel command line reduced to IOMMU words"
# host.kconfig and topo.nccl_config replay from the answers the archive
# holds (issue 15 item 6), not from the kernel config or NCCL's sources.
tar tzf capture.tar.gz >archive.list
check "the archive holds the kernel config's answer" grep -qx gdrcheck/kconfig archive.list
check "the archive holds NCCL's inputs" grep -qx gdrcheck/libnccl archive.list
if grep -qx -e proc/config.gz -e proc/kallsyms archive.list; then
	fail "the archive holds /proc/config.gz or /proc/kallsyms whole"
fi
check "the archive holds kallsyms' answer" grep -qx gdrcheck/kallsyms archive.list
check "the archive holds the kernel log's answer" grep -qx gdrcheck/kernel-log archive.list
jq_check "mech.peermem_api decided from the real /proc/kallsyms" live.json \
	'[.results[] | select(.gate == "mech.peermem_api" and .evidence.kallsyms_lines > 1000)] | length == 1'
check_eq "mech.peermem_api replayed" \
	"$(jq -c '.results[] | select(.gate == "mech.peermem_api") | [.status, .reason, .evidence]' live.json)" \
	"$(jq -c '.results[] | select(.gate == "mech.peermem_api") | [.status, .reason, .evidence]' replay.json)"
check_eq "host.kconfig replayed" \
	"$(jq -c '.results[] | select(.gate == "host.kconfig") | [.status, .reason, .evidence]' live.json)" \
	"$(jq -c '.results[] | select(.gate == "host.kconfig") | [.status, .reason, .evidence]' replay.json)"
