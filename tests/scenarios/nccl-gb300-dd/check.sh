# The Data Direct answers survive capture and replay: --capture records the
# libmlx5 facts (mlx5, fd -1 probe, Data Direct path) and the mlx5dv
# registration with its PCIe-mapped export; --sysroot on the extracted
# archive, no library named, gives the same nic.data_direct, reg.dmabuf,
# topo.nccl and data.nccl results. A capture made before these fields
# existed (the keys deleted) still replays: they read as "not asked".
set -eu
here=$(cd "$(dirname "$0")" && pwd)
FAKE_NVML_SCENARIO="$here/nvml.conf" "$TOP/gdrcheck" --sysroot "$SYSROOT" \
	--json --libmlx5 "$TOP/tests/doubles/libmlx5-fake.so" \
	--libnvml "$TOP/tests/doubles/libnvidia-ml-fake.so" \
	--capture "$WORK/capture.tar.gz" >"$WORK/captured.json" || true
rm -rf "$WORK/replay" && mkdir "$WORK/replay"
tar xzf "$WORK/capture.tar.gz" -C "$WORK/replay"
replay() {
	rc=0
	env -u GDRCHECK_LIBCUDA -u GDRCHECK_LIBIBVERBS -u GDRCHECK_LIBMLX5 \
		-u GDRCHECK_LIBNVML -u FAKE_CUDA_SCENARIO -u FAKE_VERBS_SCENARIO \
		"$TOP/gdrcheck" --sysroot "$WORK/replay" --json >"$WORK/$1.json" \
		2>"$WORK/$1.err" || rc=$?
	[ "$rc" -le 3 ] || { echo "$1: exit $rc (a crash?)"; cat "$WORK/$1.err"; exit 1; }
}
replay replayed
python3 - "$WORK/captured.json" "$WORK/replayed.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
gates = ("nic.data_direct", "reg.dmabuf", "reg.vmm_dmabuf", "topo.nccl", "data.nccl")
def rows(d):
    return [(r["gate"], r["subject"], r["status"], r["reason_code"], r["reason"],
             json.dumps({k: v for k, v in r["evidence"].items()
                         if k != "replayed_from" and not k.endswith("_ms")},
                        sort_keys=True))
            for r in d["results"] if r["gate"] in gates]
ra, rb = rows(a), rows(b)
# Two GPUs, two NICs: one data.nccl row per GPU, the others per NIC or pair.
assert len(ra) == 16, ra
assert ra == rb, "replayed results differ:\n" + "\n".join(
    f"- {x}\n+ {y}" for x, y in zip(ra, rb) if x != y)
dd = {(r[0], r[1]): r for r in ra}
for n in ("mlx5_0", "mlx5_1"):
    assert dd["nic.data_direct", n][3] == "DD_FOUND", dd["nic.data_direct", n]
for g in (0, 1):
    r = dd["reg.dmabuf", f"GPU{g}~mlx5_{g}"]
    assert r[3] == "DD_MR_OK" and '"pcie_mapping": true' in r[5], r
    r = dd["data.nccl", f"GPU{g}"]
    assert f'"rails": "mlx5_{g}_dma"' in r[5] and r[2] == "PASS", r
assert a["verdict"] == b["verdict"], (a["verdict"], b["verdict"])
PY
# A capture from before libmlx5 was asked: no DD keys at all.
facts="$WORK/replay/gdrcheck/vendor-facts.json"
python3 - "$facts" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
v = d["facts"]["verbs"]
for k in ("mlx5_lib", "have_mlx5_is_supported", "have_dd_sysfs_path",
          "have_mlx5_reg_dmabuf_mr"):
    del v[k]
for n in v["nics"]:
    for k in ("mlx5", "dd_probe_run", "dd_probe_errno", "dd_path_called",
              "dd_path_rc", "dd_path"):
        del n[k]
for pr in d["facts"]["reg"]["pairs"]:
    del pr["export_flags"]
    for m in ("peermem", "dmabuf", "vmm_peermem", "vmm_dmabuf"):
        del pr[m]["data_direct"]
json.dump(d, open(p, "w"))
PY
replay old
python3 - "$WORK/old.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["gate"]: r for r in d["results"]}
assert rows["nic.libibverbs"]["status"] == "PASS", rows["nic.libibverbs"]
assert "replayed_from" in rows["nic.libibverbs"]["evidence"], rows["nic.libibverbs"]
assert rows["nic.data_direct"]["reason_code"] == "DD_NOT_ASKED", rows["nic.data_direct"]
# Without the Data Direct facts the model sees mlx5_N at its own function
# (P2C through Grace), but the tree holds Data Direct functions: NCCL may
# use mlx5_N_dma through mlx5dv, which the replayed plain registration
# does not prove, so data.nccl cannot PASS.
nccl = [r for r in d["results"] if r["gate"] == "data.nccl"]
assert len(nccl) == 2, nccl
for g, r in enumerate(nccl):
    assert r["evidence"].get("rails") == f"mlx5_{g}", r
    assert r["status"] != "PASS" and "nic.data_direct" in r["reason"], r
PY
