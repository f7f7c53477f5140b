#!/bin/sh
# Fault matrix: every libcuda / libibverbs / NVML call gdrcheck makes (grep
# 'enter(' in access/*.c) x each relevant failure, injected through the test
# doubles' fault keys (tests/doubles/fake_scenario.h):
#   fail.NAME = V   the call returns an error (a CUresult, or an errno)
#   hang.NAME = 1   the call never returns       (run with --timeout 1)
#   crash.NAME = 1  the call raises SIGSEGV
#   exit.NAME = 0   the library calls _exit(0) mid-call (status 0: the
#                   nastiest, it looks like success)
# and, as a second axis on a few calls of each stage, libraries that misbehave
# without failing (tests/doubles/fake_scenario.h): print junk to stdout and
# stderr (escapes, bad UTF-8, a NUL), fork a helper that holds the worker's
# pipes (in or out of its process group), close every descriptor above 2,
# ignore SIGTERM; alone (the verdict must be the clean run's) or before a
# hang, crash or exit (kinds joined by '+', e.g. forkhold+hang),
# on the PIX fixture of the registration scenarios (tests/scenarios/reg-ok:
# one GPU, one ConnectX RoCE port, DMA-BUF path READY, peermem BLOCKED).
# ibv_reg_mr is only called when libibverbs lacks ibv_reg_mr_iova2 (rdma-core
# < v29): its cases use a double built here without that symbol.
#
# Every case asserts:
#   - gdrcheck finished within $FAULT_BOUND s (default 30; the time is shown)
#   - exit status is one the case allows, always within {0,1,3}: never 2
#     (usage), never a signal, never the bound's 124
#   - stdout is JSON valid against report/gdrcheck-report.schema.json and
#     nothing was written to stderr
#   - each gate depending on the faulted call has results, none of them PASS,
#     and one of them names the failure: for fail the call or its error (a
#     regex per call below), for hang "timed out after 1 s in CALL" (5 s
#     for the VMM release calls at the registration stage's end), for
#     crash "crashed with signal 11 (...) in CALL", for exit "exited
#     unexpectedly in CALL"
#   - no process of the run is left behind (found by the run's unique
#     FAKE_LEDGER_DIR in /proc/PID/environ: workers and library helpers)
#   - second axis: done within 4 s (a parent waiting for the pipe's end of
#     file would sit out --timeout 5); alone, every result's status equals
#     the clean run's (case "clean"); stdout holds no byte of the junk
#     outside the JSON strings that carry it, and what was printed is
#     evidence (library_output, _bytes, _truncated) on the stage's gate
#   - the doubles' ledgers ($FAKE_LEDGER_DIR/{cuda,verbs}.PID, "name acquired
#     released") balance in every process except workers the report lists
#     as timeout/crashed/interrupted (the kernel reclaims what a killed
#     process held); a `fail` of a release call may leave only the rows the
#     library refused to release (leak-ok column) unbalanced.
#
#   tests/fault-matrix.sh [-j N] [-k] [PATTERN]   (PATTERN: grep -E on case ids)
# -j: parallel cases (default 2); -k keeps the work directory; env
# GDRCHECK_BIN: the binary to test (default ./gdrcheck), FAULT_BOUND. Ends with "fault-matrix: N passed, N failed".
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
self="$top/tests/fault-matrix.sh"
doubles="$top/tests/doubles"
bound=${FAULT_BOUND:-30}
# The binary under test (make sanitize-check points this at an ASan build).
bin=${GDRCHECK_BIN:-$top/gdrcheck}
unset NCCL_NET_GDR_LEVEL NCCL_NET_GDR_READ GDRCHECK_LIBCUDA GDRCHECK_LIBIBVERBS \
	GDRCHECK_LIBNVML GDRCHECK_LIBMLX5

# --- one case (run by xargs in a child of this script) ---------------------
if [ "${1:-}" = --one ]; then
	work=$2
	set -f	# the line holds regexes: no globbing
	# shellcheck disable=SC2086 # the case line is a word list
	set -- $3
	# (the expectations, fields 6-9, are checked later from cases.list)
	id=$1 call=$2 lib=$3 kind=$4 value=$5
	d="$work/cases/$id"
	mkdir -p "$d/ledger"
	cp "$top/tests/scenarios/reg-ok/cuda.conf" "$d/cuda.conf"
	cp "$top/tests/scenarios/reg-ok/verbs.conf" "$d/verbs.conf"
	# NVML: the reg-ok GPU on an NVSwitch board (every link active, so
	# every link call is made), C2C answered.
	printf '%s\n' "preset = nvswitch" "device_count = 1" \
		"gpu0.pci = 0000:03:00.0" "gpu0.c2c_rc = 0" >"$d/nvml.conf"
	conf="$d/verbs.conf"
	[ "$lib" = c ] && conf="$d/cuda.conf"
	[ "$lib" = n ] && conf="$d/nvml.conf"
	# libmlx5 (Data Direct): its double reads the verbs scenario; the NIC
	# gets a Data Direct function (its own, the one the fixture has) so
	# every mlx5dv call is made.
	if [ "$lib" = m ]; then
		conf="$d/verbs.conf"
		echo "dev0.dd_path = /devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0" >>"$conf"
	fi
	if [ "$value" = - ]; then	# second axis: kinds joined by '+'
		for k in $(echo "$kind" | tr + ' '); do
			case $k in
			none) continue ;;
			print) v=50000 ;;
			exit) v=0 ;;
			*) v=1 ;;
			esac
			echo "$k.$call = $v" >>"$conf"
		done
	else
		echo "$kind.$call = $value" >>"$conf"
	fi
	verbs="$doubles/libibverbs-fake.so"
	[ "$lib" = vi ] && verbs="$work/libibverbs-fake-noiova2.so"
	to=5
	case $kind in *hang*) to=1 ;; esac
	# Calls made only when the registration stage is done with every
	# transfer (the VMM buffers' release): the stage must get there first,
	# which takes longer than 1 s on a loaded machine.
	case "$kind.$call" in
	*hang*.cuMemUnmap | *hang*.cuMemRelease | *hang*.cuMemAddressFree) to=5 ;;
	esac
	t0=$(date +%s.%N)
	env SOURCE_DATE_EPOCH=0 NO_COLOR=1 \
		FAKE_CUDA_SCENARIO="$d/cuda.conf" FAKE_VERBS_SCENARIO="$d/verbs.conf" \
		FAKE_NVML_SCENARIO="$d/nvml.conf" FAKE_LEDGER_DIR="$d/ledger" \
		timeout -k 5 "$bound" "$bin" --sysroot "$work/sysroot" \
		--libcuda "$doubles/libcuda-fake.so" --libibverbs "$verbs" \
		--libnvml "$doubles/libnvidia-ml-fake.so" \
		--libmlx5 "$doubles/libmlx5-fake.so" \
		--json --timeout "$to" >"$d/out.json" 2>"$d/stderr"
	rc=$?
	t1=$(date +%s.%N)
	# Anything of this run still alive? (workers inherit the environment;
	# globbing back on, the case line needed it off)
	set +f
	left=$(grep -slxz "FAKE_LEDGER_DIR=$d/ledger" /proc/[0-9]*/environ 2>/dev/null |
		sed 's|^/proc/\([0-9]*\)/environ$|\1|' | tr '\n' ' ')
	for p in $left; do
		kill -9 "$p" 2>/dev/null
	done
	echo "$rc $t0 $t1 $left" >"$d/meta"
	exit 0
fi

# --- the matrix --------------------------------------------------------------
jobs=2 keep=0
while [ $# -gt 0 ]; do
	case $1 in
	-j) jobs=$2; shift 2 ;;
	-k) keep=1; shift ;;
	*) break ;;
	esac
done
pattern=${1:-.}

work=$(mktemp -d "${TMPDIR:-/tmp}/fault-matrix.XXXXXX")
[ $keep = 1 ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work/res" "$work/cases"
if ! python3 "$top/tests/scenarios/mksysroot.py" \
	"$top/tests/scenarios/reg-ok/sysroot.spec" "$work/sysroot" >/dev/null; then
	echo "fault-matrix: fixture build failed"
	echo "fault-matrix: 0 passed, 1 failed"
	exit 1
fi
for f in "$bin" "$doubles/libcuda-fake.so" "$doubles/libibverbs-fake.so" \
	"$doubles/libnvidia-ml-fake.so" "$doubles/libmlx5-fake.so"; do
	if [ ! -e "$f" ]; then
		echo "fault-matrix: $f missing (make gdrcheck doubles)"
		echo "fault-matrix: 0 passed, 1 failed"
		exit 1
	fi
done
# An rdma-core older than v29: no ibv_reg_mr_iova2, so gdrcheck calls
# ibv_reg_mr (and no ibv_reg_dmabuf_mr either). Same source as the doubles,
# minus the symbol's version binding.
python3 - "$doubles/libibverbs-old.map" "$work/noiova2.map" <<'PY'
import sys
s = open(sys.argv[1]).read().replace("\tglobal:\n\t\tibv_reg_mr_iova2;\n", "")
open(sys.argv[2], "w").write(s)
PY
sed '/SYMVER(fake_reg_mr_iova2/d' "$doubles/fake_verbs.c" >"$work/fake_verbs_noiova2.c"
if ! ${CC:-cc} -std=gnu11 -O1 -g -fPIC -shared -D_GNU_SOURCE -I"$top" \
	-DFAKE_VERBS_OLD -Wl,-soname,libibverbs.so.1 \
	-Wl,--version-script="$work/noiova2.map" \
	-o "$work/libibverbs-fake-noiova2.so" "$work/fake_verbs_noiova2.c" \
	"$doubles/fake_scenario.c" >"$work/cc.log" 2>&1; then
	cat "$work/cc.log"
	echo "fault-matrix: 0 passed, 1 failed"
	exit 1
fi

# One row per vendor call. lib: c libcuda, v libibverbs, vi libibverbs
# without ibv_reg_mr_iova2, m libmlx5 (the NIC given a Data Direct
# function, so reg.dmabuf registers through mlx5dv), n NVML (informational gates: the verdict stays
# the clean run's, exit 0; a hang case may also end 3, as its --timeout 1
# also bounds the registration stage, which a loaded machine can overrun). fail-values: what `fail` injects (CUresult or
# errno), one case each. *-deps: the gates whose answer depends on the call
# ('-': none, e.g. a release call, whose failure leaves only a leak);
# *-rcs: the exit statuses allowed; fail-re: what the depending gate's
# reason must contain; leak-ok: ledger rows a refused release leaves.
# (cuDeviceGetAttribute: the attribute gates' ERROR is outranked by the
# transfer the run still verifies: WARN CONTRADICTED_BY_PROOF, exit 0.)
# call                         lib fail-values fail-deps                          fail-rcs fail-re                                     abort-deps                  abort-rcs leak-ok
matrix='
cuInit                         c   100,999    gpu.cuinit                          1        cuInit.failed:.CUDA_ERROR_(NO_DEVICE|UNKNOWN) gpu.cuinit                3         -
cuDriverGetVersion             c   999        gpu.dmabuf_attr                     0,3      cuDriverGetVersion                         gpu.cuinit                  3         -
cuDeviceGetCount               c   999        gpu.devices,gpu.visible             3        cuDeviceGetCount                           gpu.devices                 3         -
cuDeviceGet                    c   101        gpu.visible                         3        cuDeviceGet\b                              gpu.visible                 3         -
cuDeviceGetName                c   999        -                                   0        -                                          gpu.gdr_attr                3         -
cuDeviceGetAttribute           c   101        gpu.gdr_attr,gpu.dmabuf_attr        0        CUDA_ERROR_INVALID_DEVICE                  gpu.gdr_attr,gpu.dmabuf_attr 3        -
cuDeviceGetPCIBusId            c   999        topo.path                           0,3      cuDeviceGetPCIBusId                        gpu.gdr_attr                3         -
cuDeviceTotalMem_v2            c   999        platform.bar1                       0,3      cuDeviceTotalMem                           gpu.gdr_attr                3         -
cuDevicePrimaryCtxRetain       c   2,46       mech.dmabuf_export,reg.dmabuf       3        cuDevicePrimaryCtxRetain                   mech.dmabuf_export          3         -
cuCtxSetCurrent                c   201        mech.dmabuf_export,reg.dmabuf       3        cuCtxSetCurrent                            mech.dmabuf_export          3         -
cuMemAlloc_v2                  c   2          mech.dmabuf_export,reg.dmabuf       3        cuMemAlloc.*CUDA_ERROR_OUT_OF_MEMORY       mech.dmabuf_export          3         -
cuMemFree_v2                   c   700        -                                   0        -                                          reg.dmabuf                  3         mem
cuMemGetHandleForAddressRange  c   801,1      mech.dmabuf_export,reg.dmabuf       1        cuMemGetHandleForAddressRange.*CUDA_ERROR  mech.dmabuf_export          3         -
cuPointerGetAttribute          c   1          -                                   0        -                                          mech.dmabuf_export          3         -
cuMemGetAllocationGranularity  c   1          reg.vmm_dmabuf,data.vmm_dmabuf      0        cuMemGetAllocationGranularity.returned     reg.vmm_dmabuf              3         -
cuMemCreate                    c   2,1        reg.vmm_dmabuf,data.vmm_dmabuf      0        cuMemCreate.returned.CUDA_ERROR            reg.vmm_dmabuf              3         -
cuMemAddressReserve            c   2          reg.vmm_dmabuf,data.vmm_dmabuf      0        cuMemAddressReserve.returned               reg.vmm_dmabuf              3         -
cuMemMap                       c   2          reg.vmm_dmabuf,data.vmm_dmabuf      0        cuMemMap.returned                          reg.vmm_dmabuf              3         -
cuMemSetAccess                 c   1          reg.vmm_dmabuf,data.vmm_dmabuf      0        cuMemSetAccess.returned                    reg.vmm_dmabuf              3         -
cuMemUnmap                     c   1          -                                   0        -                                          reg.vmm_dmabuf              3         map,va
cuMemRelease                   c   1          -                                   0        -                                          reg.vmm_dmabuf              3         vmm
cuMemAddressFree               c   1          -                                   0        -                                          reg.vmm_dmabuf              3         va
cuMemcpyHtoD_v2                c   700        data.dmabuf                         3        cuMemcpyHtoD                               data.dmabuf                 3         -
cuMemcpyDtoH_v2                c   700        data.dmabuf                         3        cuMemcpyDtoH                               data.dmabuf                 3         -
ibv_get_device_list            v   38,1       nic.uverbs                          1,3      ibv_get_device_list                        mech.dmabuf_provider        3         -
ibv_get_device_name            v   19         nic.uverbs                          1,3      ibv_get_device_name                        mech.dmabuf_provider        3         -
ibv_open_device                v   13,19      nic.uverbs                          1        ibv_open_device.failed:.(Permission|No.such) mech.dmabuf_provider    3         -
ibv_query_device               v   5          -                                   0        -                                          mech.dmabuf_provider        3         -
ibv_alloc_pd                   v   12         mech.dmabuf_provider,reg.host_mr    3        ibv_alloc_pd                               mech.dmabuf_provider        3         -
ibv_reg_mr                     vi  14,12      reg.host_mr                         1        ibv_reg_mr\b                               reg.host_mr                 1,3       -
ibv_reg_mr_iova2               v   12,14      reg.host_mr                         1        ibv_reg_mr_iova2                           reg.host_mr                 3         -
ibv_reg_dmabuf_mr              v   95,12      mech.dmabuf_provider,reg.dmabuf     1,3      ibv_reg_dmabuf_mr.*(EOPNOTSUPP|ENOMEM)     mech.dmabuf_provider        3         -
ibv_query_port                 v   5          data.dmabuf                         3        ibv_query_port                             data.dmabuf                 3         -
ibv_query_gid                  v   22         data.dmabuf                         3        ibv_query_gid                              data.dmabuf                 3         -
ibv_create_cq                  v   12         data.dmabuf                         3        ibv_create_cq                              data.dmabuf                 3         -
ibv_create_qp                  v   12         data.dmabuf                         3        ibv_create_qp                              data.dmabuf                 3         -
ibv_modify_qp                  v   22         data.dmabuf                         3        ibv_modify_qp                              data.dmabuf                 3         -
ibv_post_send                  v   12         data.dmabuf                         3        ibv_post_send                              data.dmabuf                 3         -
ibv_poll_cq                    v   5          data.dmabuf                         3        ibv_poll_cq                                data.dmabuf                 3         -
ibv_dereg_mr                   v   16         -                                   0        -                                          reg.host_mr                 3         mr,pd
ibv_destroy_qp                 v   16         -                                   0        -                                          data.dmabuf                 3         qp,cq,pd
ibv_destroy_cq                 v   16         -                                   0        -                                          data.dmabuf                 3         cq
ibv_dealloc_pd                 v   16         -                                   0        -                                          reg.plan                    3         pd
ibv_close_device               v   5          -                                   0        -                                          reg.plan                    3         device
mlx5dv_is_supported            m   1          nic.data_direct                     0        not.an.mlx5.device                         nic.data_direct             3         -
mlx5dv_get_data_direct_sysfs_path m   5,13       nic.data_direct                     0        mlx5dv_get_data_direct_sysfs_path.failed   nic.data_direct             3         -
mlx5dv_reg_dmabuf_mr           m   12         reg.dmabuf                          1        mlx5dv_reg_dmabuf_mr.DATA_DIRECT.*Cannot.allocate nic.data_direct      3         -
nvmlInit_v2                    n   9,18       gpu.nvml                            0        nvmlInit_v2.failed:.NVML_ERROR_(DRIVER_NOT_LOADED|LIB_RM_VERSION_MISMATCH) gpu.nvml                    0,3       -
nvmlSystemGetDriverVersion     n   999        -                                   0        -                                          gpu.nvml                    0,3       -
nvmlDeviceGetCount_v2          n   999        gpu.nvml                            0        nvmlDeviceGetCount_v2.failed:.NVML_ERROR_UNKNOWN gpu.nvml                    0,3       -
nvmlDeviceGetHandleByIndex_v2  n   15         topo.nvlink                         0        nvmlDeviceGetHandleByIndex_v2.failed:.NVML_ERROR_GPU_IS_LOST gpu.nvml,topo.nvlink        0,3       -
nvmlDeviceGetUUID              n   999        topo.nvlink                         0        nvmlDeviceGetUUID.failed:.NVML_ERROR_UNKNOWN gpu.nvml,topo.nvlink        0,3       -
nvmlDeviceGetPciInfo_v3        n   999        topo.nvlink                         0        nvmlDeviceGetPciInfo_v3.failed:.NVML_ERROR_UNKNOWN gpu.nvml,topo.nvlink        0,3       -
nvmlDeviceGetNvLinkState       n   999,15     topo.nvlink                         0        nvmlDeviceGetNvLinkState.failed:.NVML_ERROR_(UNKNOWN|GPU_IS_LOST) gpu.nvml,topo.nvlink        0,3       -
nvmlDeviceGetNvLinkRemotePciInfo_v2 n   999        -                                   0        -                                          gpu.nvml,topo.nvlink        0,3       -
nvmlDeviceGetNvLinkRemoteDeviceType n   999        topo.nvlink                         0        nvmlDeviceGetNvLinkRemoteDeviceType.failed:.NVML_ERROR_UNKNOWN gpu.nvml,topo.nvlink        0,3       -
nvmlDeviceGetC2cModeInfoV      n   999        topo.nvlink                         0        nvmlDeviceGetC2cModeInfoV.failed:.NVML_ERROR_UNKNOWN gpu.nvml,topo.nvlink        0,3       -
nvmlShutdown                   n   999        -                                   0        -                                          gpu.nvml                    0,3       init
'

# Second axis: the calls and the gate whose result carries what the
# library printed in the stage the call is first made in; closefds: whether
# closing every descriptor leaves the double itself working (it keeps its
# exported dma-buf fds open across calls, so later calls lose them).
# call                 output-gate          closefds
hostile='
cuInit                 gpu.libcuda          yes
cuMemAlloc_v2          mech.dmabuf_export   no
ibv_get_device_list    nic.libibverbs       no
ibv_open_device        nic.libibverbs       no
ibv_reg_dmabuf_mr      nic.libibverbs       no
ibv_post_send          reg.plan             no
mlx5dv_get_data_direct_sysfs_path nic.libibverbs no
nvmlInit_v2            gpu.nvml             yes
'
# (the clean run, which the second axis compares with, always runs)
echo "clean cuInit c none - - 0 - - -" >"$work/cases.list"
{
printf '%s\n' "$matrix" | while read -r call lib fvals fdeps frcs fre adeps arcs leak; do
	[ -n "$call" ] || continue
	for v in $(echo "$fvals" | tr , ' '); do
		printf '%s\n' "$call.fail.$v $call $lib fail $v $fdeps $frcs $fre $leak -"
	done
	echo "$call.hang $call $lib hang 1 $adeps $arcs - - -"
	echo "$call.crash $call $lib crash 1 $adeps $arcs - - -"
	echo "$call.exit $call $lib exit 0 $adeps $arcs - - -"
	printf '%s\n' "$hostile" | while read -r hcall gate closefds; do
		[ "$hcall" = "$call" ] || continue
		kinds="print forkhold forkescape"
		[ "$closefds" = yes ] && kinds="$kinds closefds"
		for k in $kinds; do
			echo "$call.$k $call $lib $k - - 0 - - $gate"
		done
		for k in print+exit print+crash forkhold+hang forkhold+exit \
			forkescape+hang ignterm+hang closefds+hang; do
			echo "$call.$k $call $lib $k - $adeps $arcs - - $gate"
		done
	done
done
} | grep -E -- "^[^ ]*($pattern)[^ ]* " >>"$work/cases.list"

t0=$(date +%s)
xargs -d '\n' -P "$jobs" -n 1 sh "$self" --one "$work" <"$work/cases.list"
t1=$(date +%s)

echo "fault-matrix: $(wc -l <"$work/cases.list") cases run in $((t1 - t0)) s"
# --- the checks: one python for all cases (interpreter start-up is slow) ---
python3 - "$top" "$work" "$bound" <<'PY'
import glob, json, os, re, sys
import jsonschema
top, work, bound = sys.argv[1:]
sys.path.insert(0, os.path.join(top, "tests"))
import unfold  # folded pair results (schema 2.6), one per subject
with open(os.path.join(top, "report/gdrcheck-report.schema.json")) as f:
    validator = jsonschema.Draft202012Validator(json.load(f))
npass = nfail = 0

def statuses(doc):
    return {(r["gate"], r["subject"]): r["status"] for r in unfold.results(doc)}

clean = None
try:
    with open(os.path.join(work, "cases", "clean", "out.json")) as f:
        clean = statuses(json.load(f))
except (OSError, ValueError):
    pass
for line in open(os.path.join(work, "cases.list")):
    cid, call, lib, kind, value, deps, rcs, rex, leakok, outgate = line.split()
    d = os.path.join(work, "cases", cid)
    bad = []
    hostile = value == "-"
    parts = kind.split("+")
    if hostile:
        abort = [k for k in parts if k in ("hang", "crash", "exit")]
        kind = abort[0] if abort else "none"
    try:
        rc, t0, t1, *left = open(os.path.join(d, "meta")).read().split()
    except OSError:
        print(f"FAIL {cid}: did not run")
        nfail += 1
        continue
    rc = int(rc)
    secs = float(t1) - float(t0)
    if secs >= float(bound) or rc in (124, 137):
        bad.append(f"did not finish within {bound} s")
    elif hostile and secs >= 4:
        bad.append(f"took {secs:.1f} s (a wait without deadline?)")
    if rc not in (0, 1, 3):
        bad.append(f"exit status {rc} (" + ("a signal" if rc > 128 else
                   "usage error" if rc == 2 else "not 0/1/3") + ")")
    elif str(rc) not in rcs.split(","):
        bad.append(f"exit status {rc}, expected {rcs.replace(',', ' or ')}")
    if left:
        bad.append("processes left behind: " + " ".join(left))
    err = open(os.path.join(d, "stderr"), errors="backslashreplace").read()
    if err:
        bad.append("stderr: " + err.strip().replace("\n", " | ")[:200])
    doc = None
    raw = open(os.path.join(d, "out.json"), "rb").read()
    try:
        doc = json.loads(raw.decode("utf-8"))
    except Exception as e:
        bad.append(f"stdout is not JSON: {e}")
    if hostile:
        for b in (b"\x1b", b"\xff", b"\xfe", b"\x00", b"\x07"):
            if b in raw:
                bad.append(f"stdout holds the library's byte {b!r}")
    if hostile and doc is not None:
        outs = [(r["gate"], r["evidence"]) for r in unfold.results(doc)
                if "library_output" in r["evidence"]]
        kept = sum(e["library_output"].count("LIBJUNK") for g, e in outs)
        if raw.count(b"LIBJUNK") != kept:
            bad.append(f"LIBJUNK {raw.count(b'LIBJUNK')} times on stdout, "
                       f"{kept} inside library_output evidence")
        if "print" in parts:
            mine = [e for g, e in outs if g == outgate]
            if not mine:
                bad.append(f"{outgate}: no library_output evidence "
                           f"(found on {[g for g, e in outs]})")
            for e in mine:
                lo = e["library_output"]
                if not lo or e.get("library_output_bytes", 0) < 50000 or \
                        e.get("library_output_truncated") is not True:
                    bad.append(f"{outgate}: evidence {lo[:40]!r} "
                               f"bytes {e.get('library_output_bytes')} "
                               f"truncated {e.get('library_output_truncated')}")
                # 2047 bytes kept; a renderer may escape each up to 6x
                if len(lo.encode("utf-8")) > 2047 * 6:
                    bad.append(f"{outgate}: library_output not capped "
                               f"({len(lo)} chars)")
        elif outs:
            bad.append(f"library_output where nothing was printed: "
                       f"{[g for g, e in outs]}")
        if kind == "none" and cid != "clean":
            if clean is None:
                bad.append("no clean run to compare with")
            elif statuses(doc) != clean:
                diff = sorted(k for k in set(clean) | set(statuses(doc))
                              if clean.get(k) != statuses(doc).get(k))
                bad.append("results differ from the clean run: " +
                           " ".join(f"{g}({s}) {clean.get((g, s))}->"
                                    f"{statuses(doc).get((g, s))}"
                                    for g, s in diff[:6]))
    if doc is not None:
        for e in list(validator.iter_errors(doc))[:3]:
            bad.append("schema: " + "/".join(map(str, e.path)) + ": " + e.message[:120])
        res = unfold.results(doc)
        if kind == "hang":
            late = call in ("cuMemUnmap", "cuMemRelease", "cuMemAddressFree")
            rex = (r"timed out after 5 s in " if late else
                   r"timed out after 1 s in ") + re.escape(call) + r"\b"
        elif kind == "crash":
            rex = r"crashed with signal 11 \([^)]*\) in " + re.escape(call) + r"\b"
        elif kind == "exit":
            rex = r"exited unexpectedly in " + re.escape(call) + r"\b"
        if deps != "-":
            for g in deps.split(","):
                rs = [r for r in res if r["gate"] == g]
                if not rs:
                    bad.append(f"{g}: no result")
                    continue
                for r in rs:
                    if r["status"] == "PASS":
                        bad.append(f"{g} ({r['subject']}) PASS: {r['reason']}")
                if rex != "-" and not any(re.search(rex, r["reason"]) for r in rs):
                    bad.append(f"{g} does not name the failure (/{rex}/): "
                               + " | ".join(f"{r['status']} {r['reason']}" for r in rs)[:300])
        if kind in ("hang", "crash", "exit") and not any(
                re.search(rex, r["reason"]) and r["status"] == "ERROR" for r in res):
            bad.append(f"no ERROR result names the {kind} in {call}")
        killed = {str(w["pid"]) for w in doc.get("workers", [])
                  if w["state"] in ("timeout", "crashed", "interrupted")}
        ok_rows = set(leakok.split(",")) if kind == "fail" else set()
        for l in sorted(glob.glob(os.path.join(d, "ledger", "*.*"))):
            if l.rsplit(".", 1)[1] in killed:
                continue
            for row in open(l):
                name, acq, rel = row.split()
                if acq != rel and name not in ok_rows:
                    bad.append(f"ledger {os.path.basename(l)}: {name} acquired {acq} released {rel}")
    verdict = doc["verdict"]["status"] if doc else "?"
    print(("FAIL" if bad else "PASS") + f" {cid} exit {rc} {secs:.1f}s {verdict}")
    for b in bad:
        print("     " + b)
    if bad:
        nfail += 1
    else:
        npass += 1
print(f"fault-matrix: {npass} passed, {nfail} failed")
sys.exit(1 if nfail else 0)
PY
