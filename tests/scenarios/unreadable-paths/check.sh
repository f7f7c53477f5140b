# Unreadable is not absent: EACCES (here), ELOOP and ENAMETOOLONG (the
# golden run) must never become "not loaded" (tests/run-scenarios.sh runs
# this with TOP, SYSROOT and WORK set).
#
# Root reads anything, so the EACCES run drops every capability (setpriv:
# uid 0 without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH obeys modes) after
# making the peermem module directory and /proc/driver/nvidia unsearchable.
set -u
if ! setpriv --bounding-set=-all --inh-caps=-all true 2>/dev/null; then
	echo "check.sh: setpriv cannot drop capabilities here: EACCES untested"
	exit 1
fi
rm -f "$SYSROOT/sys/module/nvidia_peermem" "$SYSROOT/proc/driver/nvidia/version"
mkdir -p "$SYSROOT/sys/module/nvidia_peermem"
echo 580.95.05 >"$SYSROOT/sys/module/nvidia_peermem/version"
printf 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build\n' \
	>"$SYSROOT/proc/driver/nvidia/version"
chmod 000 "$SYSROOT/sys/module/nvidia_peermem" "$SYSROOT/proc/driver/nvidia"
setpriv --bounding-set=-all --inh-caps=-all -- \
	"$TOP/gdrcheck" --sysroot "$SYSROOT" --json >"$WORK/eacces.json" \
	2>"$WORK/eacces.err"
echo $? >"$WORK/eacces.rc"
chmod 755 "$SYSROOT/sys/module/nvidia_peermem" "$SYSROOT/proc/driver/nvidia"
python3 - "$WORK/out.json" "$WORK/eacces.json" <<'PY'
import json, sys
want = {
    # gate: (status, code, text the reason must hold) per run
    "out.json": {
        "mech.peermem": ("ERROR", "PEERMEM_UNREADABLE", "Too many levels of symbolic links"),
        "gpu.driver": ("ERROR", "NVIDIA_VERSION_UNREADABLE", "File name too long"),
        "mech.dmabuf_module": ("SKIP", "NVIDIA_VERSION_UNREADABLE", "File name too long"),
        "nic.uverbs": ("ERROR", "UVERBS_NODE_UNREADABLE", "Too many levels of symbolic links"),
        "platform.iommu": ("ERROR", "IOMMU_UNREADABLE", "Too many levels of symbolic links"),
        "host.container": ("SKIP", "CONTAINER_MARKERS_UNREADABLE", ".dockerenv"),
    },
    "eacces.json": {
        "mech.peermem": ("ERROR", "PEERMEM_UNREADABLE", "Permission denied"),
        "gpu.driver": ("ERROR", "NVIDIA_VERSION_UNREADABLE", "Permission denied"),
        "mech.dmabuf_module": ("SKIP", "NVIDIA_VERSION_UNREADABLE", "Permission denied"),
    },
}
bad = 0
for path in sys.argv[1:]:
    name = path.rsplit("/", 1)[-1]
    doc = json.load(open(path))
    got = {r["gate"]: r for r in doc["results"]}
    for gate, (status, code, text) in want[name].items():
        r = got.get(gate)
        # An ERROR the run's verified transfer makes moot is a WARN
        # CONTRADICTED_BY_PROOF that keeps what it was in its evidence.
        ev = (r or {}).get("evidence") or {}
        if r and r["reason_code"] == "CONTRADICTED_BY_PROOF" and \
                r["status"] == "WARN":
            was = (ev.get("inferred_status"), ev.get("inferred_code"))
        else:
            was = r and (r["status"], r["reason_code"])
        if not r or was != (status, code) or text not in r["reason"]:
            print(f"{name}: {gate}: want {status} {code} ({text}), got "
                  f"{r and (r['status'], r['reason_code'], r['reason'])}")
            bad = 1
    # Nothing unreadable may be called absent.
    for r in doc["results"]:
        if r["status"] == "BLOCKED" and r["reason_code"] in (
                "PEERMEM_NOT_LOADED", "NVIDIA_DRIVER_NOT_LOADED",
                "UVERBS_NODE_MISSING", "KERNEL_VERBS_MISSING"):
            print(f"{name}: {r['gate']} BLOCKED as absent: {r['reason']}")
            bad = 1
    if name == "out.json" and got["gpu.devices"]["evidence"].get(
            "pci_first_unreadable") != \
            "0000:00:01.0/vendor: Too many levels of symbolic links":
        print(f"{name}: gpu.devices does not count the unreadable vendor: "
              f"{got['gpu.devices']['evidence']}")
        bad = 1
    if doc["verdict"]["status"] == "BLOCKED":
        print(f"{name}: verdict BLOCKED on unreadable inputs")
        bad = 1
sys.exit(bad)
PY
