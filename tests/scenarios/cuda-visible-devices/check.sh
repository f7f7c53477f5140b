# GPU ids follow PCI order, not CUDA ordinals, whatever is visible:
# 1. without CUDA_VISIBLE_DEVICES and with both GPUs in CUDA (ordinals 0, 1),
#    GPU0 is 0000:03:00.0 and GPU1 0000:05:00.0, as in the case's own run
#    where CUDA listed only 0000:05:00.0 (as ordinal 0);
# 2. the same single-GPU CUDA without CUDA_VISIBLE_DEVICES: /dev/nvidia0
#    (GPU0's minor) is not in this /dev, so GPU0 is hidden by a container or
#    device cgroup: SKIP GPU_HIDDEN, never BLOCKED;
# 3. with the device node present and nothing hiding it, a GPU CUDA does not
#    list is the driver's fault: BLOCKED GPU_NOT_VISIBLE.
set -eu
unset CUDA_VISIBLE_DEVICES
nvml="GDRCHECK_LIBNVML=$TOP/tests/doubles/libnvidia-ml-fake.so"
nvconf="FAKE_NVML_SCENARIO=$TOP/tests/scenarios/cuda-visible-devices/nvml.conf"
sed -e 's/^device_count = 1/device_count = 2/' \
    -e 's/^gpu0.pci = 0000:05:00.0/gpu0.pci = 0000:03:00.0\ngpu1.name = NVIDIA H100 80GB HBM3\ngpu1.pci = 0000:05:00.0/' \
    "$FAKE_CUDA_SCENARIO" >"$WORK/both.conf"
env "$nvml" "$nvconf" FAKE_CUDA_SCENARIO="$WORK/both.conf" \
	"$TOP/gdrcheck" --sysroot "$SYSROOT" --json >"$WORK/both.json" || true
env "$nvml" "$nvconf" \
	"$TOP/gdrcheck" --sysroot "$SYSROOT" --json >"$WORK/cgroup.json" || true
cp -r "$SYSROOT" "$WORK/sysroot-node0"
: >"$WORK/sysroot-node0/dev/nvidia0"
env "$nvml" "$nvconf" \
	"$TOP/gdrcheck" --sysroot "$WORK/sysroot-node0" --json >"$WORK/lost.json" || true
python3 - "$WORK/both.json" "$WORK/cgroup.json" "$WORK/lost.json" \
	"$TOP/tests/scenarios/cuda-visible-devices/expected.json" <<'PY'
import json, sys
both, cgroup, lost, hidden = (json.load(open(p)) for p in sys.argv[1:5])
def gpus(d):
    return {s["id"]: (s["pci"], s["uuid"]) for s in d["subjects"] if s["kind"] == "gpu"}
def visible(d):
    return {r["subject"]: (r["status"], r["reason_code"], r["evidence"].get("hidden_by"))
            for r in d["results"] if r["gate"] == "gpu.visible"}
want = {"GPU0": ("0000:03:00.0", "GPU-3e7a5f0c-1111-4a2b-8c3d-000000000003"),
        "GPU1": ("0000:05:00.0", "GPU-3e7a5f0c-2222-4a2b-8c3d-000000000005")}
for name, d in (("both", both), ("cgroup", cgroup), ("lost", lost), ("hidden", hidden)):
    assert gpus(d) == want, (name, gpus(d))
assert visible(both) == {"GPU0": ("PASS", "GPU_VISIBLE", None),
                         "GPU1": ("PASS", "GPU_VISIBLE", None)}, visible(both)
assert visible(hidden)["GPU0"] == ("SKIP", "GPU_HIDDEN", "CUDA_VISIBLE_DEVICES"), visible(hidden)
assert visible(cgroup)["GPU0"] == ("SKIP", "GPU_HIDDEN", "cgroup"), visible(cgroup)
assert visible(lost)["GPU0"] == ("BLOCKED", "GPU_NOT_VISIBLE", None), visible(lost)
for d in (hidden, cgroup):
    assert visible(d)["GPU1"] == ("PASS", "GPU_VISIBLE", None)
    assert all(not (r["subject"] == "GPU0" and r["status"] == "BLOCKED")
               for r in d["results"]), "a hidden GPU is BLOCKED somewhere"
    assert d["verdict"]["status"] == "READY", d["verdict"]
PY

# 4. A capture replays the node's CUDA_VISIBLE_DEVICES (/gdrcheck/environ),
#    not the replaying host's: the hidden-by-variable capture replays
#    without it set, the cgroup capture with it set here.
capture() {	# NAME [VAR=value...]
	name=$1
	shift
	env "$@" "$nvml" "$nvconf" "$TOP/gdrcheck" --sysroot "$SYSROOT" --json \
		--capture "$WORK/$name.tar.gz" >/dev/null || true
	rm -rf "$WORK/$name.replay" && mkdir "$WORK/$name.replay"
	tar xzf "$WORK/$name.tar.gz" -C "$WORK/$name.replay"
}
capture cvd CUDA_VISIBLE_DEVICES=1
capture cg
grep -qx 'CUDA_VISIBLE_DEVICES=1' "$WORK/cvd.replay/gdrcheck/environ"
env -u GDRCHECK_LIBCUDA -u GDRCHECK_LIBIBVERBS "$TOP/gdrcheck" \
	--sysroot "$WORK/cvd.replay" --json >"$WORK/cvd.json" || true
env -u GDRCHECK_LIBCUDA -u GDRCHECK_LIBIBVERBS CUDA_VISIBLE_DEVICES=1 \
	"$TOP/gdrcheck" --sysroot "$WORK/cg.replay" --json >"$WORK/cg.json" || true
python3 - "$WORK/cvd.json" "$WORK/cg.json" <<'PY'
import json, sys
cvd, cg = (json.load(open(p)) for p in sys.argv[1:3])
def gpu0(d):
    r = [r for r in d["results"] if r["gate"] == "gpu.visible" and r["subject"] == "GPU0"][0]
    return (r["status"], r["reason_code"], r["evidence"].get("hidden_by"))
assert gpu0(cvd) == ("SKIP", "GPU_HIDDEN", "CUDA_VISIBLE_DEVICES"), gpu0(cvd)
assert gpu0(cg) == ("SKIP", "GPU_HIDDEN", "cgroup"), gpu0(cg)
PY
