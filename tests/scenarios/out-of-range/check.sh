# Out-of-domain values are findings, never a yes/no (tests/run-scenarios.sh
# runs this with WORK set).
python3 - "$WORK/out.json" <<'PY'
import json, sys
got = {r["gate"]: r for r in json.load(open(sys.argv[1]))["results"]}
want = {
    "gpu.gdr_attr": ("ERROR", "ATTR_VALUE_OUT_OF_RANGE", "returned 2"),
    "gpu.dmabuf_attr": ("ERROR", "ATTR_VALUE_OUT_OF_RANGE", "returned -1"),
    "gpu.visible": ("WARN", "CC_OUT_OF_RANGE", "-2147483648"),
    "platform.bar1": ("ERROR", "BAR1_VALUE_OUT_OF_RANGE", "line 3"),
    "platform.link": ("WARN", "LINK_VALUE_OUT_OF_RANGE", "current_link_width=0"),
    "topo.tree": ("WARN", "NUMA_NODE_OUT_OF_RANGE", "9999"),
    "nic.port": ("ERROR", "PORT_STATE_OUT_OF_RANGE", "4: DOWN"),
}
bad = 0
for gate, (status, code, text) in want.items():
    r = got[gate]
    if (r["status"], r["reason_code"]) != (status, code) or text not in r["reason"]:
        print(f"{gate}: want {status} {code} ({text}); got {r['status']} "
              f"{r['reason_code']}: {r['reason']}")
        bad = 1
if "Unknown" not in got["platform.link"]["reason"]:
    print("platform.link does not name the Unknown speed")
    bad = 1
if got["topo.path"]["evidence"].get("nic_numa") != "out of range: 9999":
    print(f"topo.path nic_numa: {got['topo.path']['evidence'].get('nic_numa')}")
    bad = 1
if got["topo.nccl"]["evidence"].get("gdr_read_reason") != \
        "default (compute capability unknown)":
    print("topo.nccl trusts an out-of-range compute capability")
    bad = 1
sys.exit(bad)
PY
