# Every planted node is named as not a regular file, and the userspace
# resolution (the fallback for kernels without openat2) reports the same.
bin=${GDRCHECK_BIN:-$TOP/gdrcheck}
python3 - "$WORK/out.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
text = json.dumps(doc)
bad = 0
for want in ("0000:01:00.0", "config space unreadable: not a regular file"):
    if want not in text:
        print(f"no mention of {want!r}")
        bad = 1
bar1 = [r for r in doc["results"] if r["gate"] == "platform.bar1"]
if not bar1 or "not a regular file" not in bar1[0]["reason"]:
    print(f"platform.bar1 does not refuse the device node: {bar1}")
    bad = 1
sys.exit(bad)
PY
GDRCHECK_SYSROOT_RESOLVE=walk timeout -k 5 60 "$bin" --sysroot "$SYSROOT" \
	--json >"$WORK/walk.json" 2>"$WORK/walk.err"
[ $? -le 3 ] || { echo "walk run failed"; cat "$WORK/walk.err"; exit 1; }
sed -i "s|$TOP|@TOP@|g" "$WORK/walk.json"
python3 - "$WORK/out.json" "$WORK/walk.json" <<'PY'
import json, sys
def load(p):
    d = json.load(open(p))
    return [(r["gate"], r["subject"], r["status"], r["reason"])
            for r in d["results"]]
a, b = load(sys.argv[1]), load(sys.argv[2])
if a != b:
    for x, y in zip(a, b):
        if x != y:
            print("openat2:", x, "\nwalk:   ", y)
    sys.exit(1)
PY
