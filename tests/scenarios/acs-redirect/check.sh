# Cross-checks against pciutils itself, on the same fixture:
# 1. lspci decodes the generated config space as gdrcheck does (the fixture
#    is a real PCIe layout, not bytes only gdrcheck understands);
# 2. reading config space from an `lspci -xxxx` dump (--pci-dump, libpci's
#    dump method) gives the same ACS results as reading sysfs.
set -eu
lspci -A linux-sysfs -O sysfs.path="$SYSROOT/sys/bus/pci" -vvv -s 0000:04:00.0 \
	2>/dev/null >"$WORK/lspci-vvv.txt"
grep -q 'ACSCtl:.*ReqRedir+ CmpltRedir+' "$WORK/lspci-vvv.txt" ||
	{ echo "lspci does not see ReqRedir+ CmpltRedir+ on 04:00.0"; exit 1; }
grep -q 'Express (v2) Downstream Port' "$WORK/lspci-vvv.txt" ||
	{ echo "lspci does not see a downstream port at 04:00.0"; exit 1; }
lspci -A linux-sysfs -O sysfs.path="$SYSROOT/sys/bus/pci" -xxxx \
	2>/dev/null >"$WORK/lspci-xxxx.txt"
"$TOP/gdrcheck" --sysroot "$SYSROOT" --json >"$WORK/sysfs.json" || true
"$TOP/gdrcheck" --sysroot "$SYSROOT" --json --pci-dump "$WORK/lspci-xxxx.txt" \
	>"$WORK/dump.json" || true
for f in sysfs dump; do
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    if r["gate"] == "platform.acs":
        print(r["subject"], r["status"], r["reason_code"], json.dumps(r["evidence"], sort_keys=True))' \
		"$WORK/$f.json" >"$WORK/$f.acs"
done
# The redirect is seen either way; the doubles' transfer on the pair is
# verified, and that proof makes it a WARN about performance (ACS_REDIRECT).
grep -Eq 'GPU0~mlx5_0 (BLOCKED ACS_REDIRECT_IOMMU|WARN ACS_REDIRECT) .*"acs_0000:04:00.0": "ctl 0x000c' "$WORK/dump.acs" ||
	{ echo "--pci-dump run lost the redirect:"; cat "$WORK/dump.acs"; exit 1; }
diff -u "$WORK/sysfs.acs" "$WORK/dump.acs"

# 3. --capture then --sysroot on the extracted archive reproduces every
#    result (the doubles answer the vendor layers the same both times).
"$TOP/gdrcheck" --sysroot "$SYSROOT" --json --capture "$WORK/capture.tar.gz" \
	>"$WORK/captured.json" || true
rm -rf "$WORK/replay" && mkdir "$WORK/replay"
tar xzf "$WORK/capture.tar.gz" -C "$WORK/replay"
"$TOP/gdrcheck" --sysroot "$WORK/replay" --json >"$WORK/replayed.json" || true
python3 - "$WORK/captured.json" "$WORK/replayed.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["capture"] and b["capture"] is None
def rows(d):
    return [(r["gate"], r["subject"], r["status"], r["reason_code"], r["reason"],
             {k: v for k, v in r["evidence"].items()
              if not k.endswith("_ms") and not k.endswith("_gbps")})
            for r in d["results"]]
ra, rb = rows(a), rows(b)
bad = [(x, y) for x, y in zip(ra, rb) if x != y]
assert len(ra) == len(rb) and not bad, bad[:3]
assert a["paths"] == b["paths"], "verdicts differ"
PY
# Scrubbed: the hostname and the kernel command line beyond the IOMMU.
[ "$(tar xzf "$WORK/capture.tar.gz" -O proc/sys/kernel/hostname)" = captured-node ]
! tar xzf "$WORK/capture.tar.gz" -O proc/cmdline | grep -q root=
