# The same report with the userspace resolution (the fallback for kernels
# without openat2), and nothing of the live host in either.
bin=${GDRCHECK_BIN:-$TOP/gdrcheck}
GDRCHECK_SYSROOT_RESOLVE=walk timeout -k 5 60 "$bin" --sysroot "$SYSROOT" \
	--json >"$WORK/walk.json" 2>"$WORK/walk.err"
[ $? -le 3 ] || { echo "walk run failed"; cat "$WORK/walk.err"; exit 1; }
sed -i "s|$TOP|@TOP@|g" "$WORK/walk.json"
python3 - "$WORK/out.json" "$WORK/walk.json" "$(uname -r)" "$(cat /proc/sys/kernel/hostname)" <<'PY'
import json, re, sys
def load(p):
    d = json.load(open(p))
    return d, [(r["gate"], r["subject"], r["status"], r["reason"])
               for r in d["results"]]
(da, a), (db, b) = load(sys.argv[1]), load(sys.argv[2])
bad = 0
if a != b:
    for x, y in zip(a, b):
        if x != y:
            print("openat2:", x, "\nwalk:   ", y)
    bad = 1
for d in (da, db):
    if d["host"]["hostname"] != "escape-node" or d["host"]["kernel"] != "6.8.0-inside":
        print("host facts not from the sysroot:", d["host"])
        bad = 1
    # Values only: a key ("vm" in platform.class) is no live fact.
    def values(o):
        if isinstance(o, dict):
            for v in o.values():
                yield from values(v)
        elif isinstance(o, list):
            for v in o:
                yield from values(v)
        elif o is not None:
            yield str(o)
    text = "\n".join(values(d["results"]))
    for live in sys.argv[3:]:
        if live and re.search(r"(?<![\w.-])" + re.escape(live) + r"(?![\w.-])", text):
            print(f"live host value {live!r} in the replay")
            bad = 1
sys.exit(bad)
PY
