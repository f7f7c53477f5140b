#!/bin/sh
# Every test layer, one summary. Called by `make check` (which builds the
# tool, the test doubles and the unit tests first) and by .ci/run.
#   1. unit      cmocka tests of parsers, classification, verdict folding
#   2. doubles   self-test of the libcuda/libibverbs test doubles
#   3. scenarios sysroot fixtures + doubles, golden text/JSON, schema
#      consistency  no two results of one report contradict each other
#   4. docs      every option and gate is in the man page
#      catalog   man REASON CODES and schema enum match --list-codes --json
#      layers    every #include points down the folders (check-layers.sh)
#      function-length  no product function over 120 lines
#      examples  committed real reports still match the schema
#      h200-replay  the real H200 capture replays to the node's results
#      slurm     the health-check wrapper against a real local Slurm
#      slurm-pairs  the two-node pair sweep on four local slurmd
#   5. fuzz      10 s of libFuzzer per parser family (tests/fuzz)
#   6. vm        the real kernel RDMA stack in a QEMU guest (tests/vm)
#      fault-matrix  every libcuda/libibverbs call x fail/hang/crash/exit
#      datapath-matrix  every faked transfer x NIC position x GPUs x paths
#      options   usage errors exit 2 with a message; good options work
#      fuzz-captures  whole capture archives mutated, then replayed (~10 s)
#   7. sanitize  unit, scenarios, fault matrix, options, files, peer and
#                fuzz-captures under ASan+UBSan
#      tsan      the threaded worker (per-GPU set-up, per-device pair loop)
#                under ThreadSanitizer: multi-GPU/NIC scenarios, an 8x8 node
# Ends with "N passed, N failed" over all layers; exits non-zero on failure.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
total_pass=0
total_fail=0

add() {
	total_pass=$((total_pass + $1))
	total_fail=$((total_fail + $2))
}

# A suite that prints "name: N passed, N failed" as its last summary.
suite() {
	name=$1
	shift
	echo "== $name"
	"$@" >"$log/$name" 2>&1
	rc=$?
	cat "$log/$name"
	line=$(grep -E '^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed' "$log/$name" | tail -n 1)
	p=$(echo "$line" | sed -E 's/^[a-z0-9-]+: ([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	if [ -z "$line" ]; then
		echo "$name: no summary line (exit $rc): counted as failed"
		p=0 f=1
	elif [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "$name: exit status $rc with no failed test: counted as failed"
		f=1
	fi
	add "$p" "$f"
}

echo "== unit"
for t in tests/unit/test_*; do
	case $t in *.c) continue ;; esac
	[ -x "$t" ] || continue
	out=$("$t" 2>&1)
	rc=$?
	echo "$out"
	p=$(echo "$out" | sed -nE 's/^\[  PASSED  \] ([0-9]+) test.*/\1/p' | tail -n 1)
	f=$(echo "$out" | sed -nE 's/^\[  FAILED  \] ([0-9]+) test.*/\1/p' | tail -n 1)
	p=${p:-0}
	f=${f:-0}
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "$t: ran no test: counted as failed"
		f=1
	fi
	add "$p" "$f"
done

suite layers sh -c 'if tests/check-layers.sh; then echo "layers: 1 passed, 0 failed"; else echo "layers: 0 passed, 1 failed"; fi'
suite function-length sh -c 'if python3 tests/check-function-length.py; then echo "function-length: 1 passed, 0 failed"; else echo "function-length: 0 passed, 1 failed"; fi'
suite doubles tests/doubles/selftest.sh tests/doubles
suite scenarios tests/run-scenarios.sh
# No two results of a scenario's report disagree on a shared fact.
suite consistency python3 tests/check-consistency.py --scenarios
# The NCCL model against NCCL's own code: the answers tools/nccl-oracle
# recorded at each release (tests/nccl-oracle), no NCCL source needed.
suite nccl-oracle python3 tests/check-nccl-oracle.py
# make check-quick: the edit-test loop (unit, scenarios, consistency) stops here.
if [ "${GDRCHECK_QUICK:-0}" = 1 ]; then
	echo
	echo "== quick: the later layers (docs, matrices, examples, Slurm, VM, sanitize) not run"
	echo "$total_pass passed, $total_fail failed"
	[ "$total_fail" -eq 0 ]
	exit
fi
# platform.direct_acs against rdma-core's rdma_topo, where one is named
# (kernel-boot/rdma_topo; Debian's rdma-core 44 predates it).
if [ -n "${RDMA_TOPO:-}" ]; then
	suite rdma-topo-crosscheck python3 tests/rdma-topo-crosscheck.py "$RDMA_TOPO"
else
	echo "== rdma-topo-crosscheck: not run (set RDMA_TOPO to rdma-core's kernel-boot/rdma_topo)"
fi
suite docs tests/check-docs.sh
# The man page's codes section and the schema's code enum match the catalog.
suite catalog tests/check-catalog.sh
# Every vendor call x fail/hang/crash/exit; bad and good command lines.
suite fault-matrix tests/fault-matrix.sh
# A NIC whose data never (or only partly, or stale) lands is BLOCKED wherever it sits.
suite datapath-matrix tests/datapath-matrix.sh
suite options tests/check-options.sh
suite signals tests/check-signals.sh
suite files tests/check-files.sh
# Two-node mode on one host: pairs over 127.0.0.1 with the doubles, scripted
# peers that refuse, babble or vanish, link mismatches, usage.
suite peer python3 tests/check-peer.py
# Whole capture archives, mutated (bytes, truncation, huge members, FIFOs,
# links, bad vendor-facts.json) and replayed: never a crash, hang or
# non-JSON report (FUZZ_CAPTURE_ITERS, FUZZ_CAPTURE_SEED).
suite fuzz-captures python3 tests/fuzz-captures.py
suite redact tests/check-redact.sh
suite examples-ops tests/examples/run.sh
# The Kubernetes image, built for real: mmdebstrap roots run the
# Dockerfile's steps, then the image's gdrcheck runs (~2 min, Debian mirror).
suite image python3 tests/check-image.py
# The manifests against the Kubernetes API schemas (kubernetes-models, npm).
suite k8s tests/check-k8s.sh
# The real H200 capture replays to the node's own results (expected
# differences of an old archive stated in the script).
suite h200-replay tests/check-h200-replay.sh
# The Slurm health check against real munged + slurmctld + slurmd (root).
suite slurm tests/slurm/run.sh
# The two-node pair sweep: plan, summary, and srun -N2 steps across four
# slurmd on this host (Debian's Slurm runs several slurmd on one host).
suite slurm-pairs tests/slurm/pairs.sh
suite examples sh -c 'n=0; bad=0
	for f in examples/*/*.json; do
		# node-problem-detector config, not a report (checked by examples-ops)
		case $f in *-npd.json) continue ;; esac
		if python3 tests/validate-json.py report/gdrcheck-report.schema.json "$f"; then
			n=$((n + 1)); else echo "invalid: $f"; bad=$((bad + 1)); fi
	done
	for j in examples/*/*.junit.xml; do
		[ -f "$j" ] || continue
		base=${j%.junit.xml}
		if python3 tests/validate-formats.py "$base.json" "$j" "$base.prom"; then
			n=$((n + 1)); else echo "inconsistent: $j"; bad=$((bad + 1)); fi
	done
	echo "examples: $n passed, $bad failed"'
# A short libFuzzer pass over the parsers (make fuzz runs longer).
suite fuzz make -s fuzz-smoke
if [ "${GDRCHECK_SKIP_VM:-0}" = 1 ]; then
	echo "== vm: skipped because GDRCHECK_SKIP_VM=1 (not a pass)"
	total_fail=$((total_fail + 1))
else
	suite vm tests/vm/run.sh
	# The same guest with an emulated Intel IOMMU (intel_iommu=on): the
	# kernel's own IOMMU groups, read by platform.iommu_group (~16 s: boot and one case).
	suite vm-iommu env VM_IOMMU=1 VM_NO_BUILD=1 tests/vm/run.sh 30-iommu-group
fi
# Unit, scenarios, fault matrix and options again on an ASan+UBSan build in
# build/asan/ (the main build is left as it is).
suite sanitize make -s sanitize-check
# The worker's threads under ThreadSanitizer, build/tsan/ (~3 min).
suite tsan make -s tsan-check

echo
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
