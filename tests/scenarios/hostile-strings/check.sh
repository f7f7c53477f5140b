# Hostile strings (tests/run-scenarios.sh runs this with WORK = the case's
# output directory): no output format carries a control byte, a C1 control
# or invalid UTF-8; a coloured text report holds no escape sequence but its
# own SGR colours; the hostname and names come out by the model's one rule
# (\xNN); distinct devices keep distinct ids. validate-formats.py (run for
# every scenario) parses the JUnit and runs promtool on the Prometheus file.
"$TOP/gdrcheck" --sysroot "$SYSROOT" --color=always -v \
	>"$WORK/out.color" 2>"$WORK/stderr.color"
[ -s "$WORK/stderr.color" ] && { echo "stderr:"; cat "$WORK/stderr.color"; exit 1; }
python3 - "$WORK" <<'PY'
import json, re, sys
work = sys.argv[1]
bad = 0
CTRL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ufffe\uffff]")
for fmt in ("txt", "json", "junit", "prom", "quiet", "color"):
    raw = open(f"{work}/out.{fmt}", "rb").read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"out.{fmt}: not UTF-8: {e}")
        bad = 1
        continue
    if fmt == "color":
        text = re.sub("\x1b\\[[0-9;]*m", "", text)   # our colours only
    m = CTRL.search(text)
    if m:
        at = m.start()
        print(f"out.{fmt}: control {text[at]!r} in {text[max(0, at - 30):at + 10]!r}")
        bad = 1
doc = json.load(open(f"{work}/out.json"))
want = ("node\\x1B]0;pwned\\x07\\x1B[2J\\x1B[H<t a='1'>&amp;\"]]>"
        "\\xFF\\xFE\\xC3(\\xEF\\xBF\\xBF")
if doc["host"]["hostname"] != want:
    print(f"hostname {doc['host']['hostname']!r}, expected {want!r}")
    bad = 1
ids = [s["id"] for s in doc["subjects"]]
if len(set(ids)) != len(ids):
    print(f"subject ids collide: {sorted(i for i in ids if ids.count(i) > 1)}")
    bad = 1
nics = [s["id"] for s in doc["subjects"] if s["kind"] == "nic"]
if len(nics) != 6 or any(len(i.encode()) >= 80 for i in ids):
    print(f"expected 6 NICs with ids under 80 bytes: {nics}")
    bad = 1
for want in ("dup\\x01", "dup\\x01#2", "evil\\x1B[2J\\x1B[H\\x1B]0;owned\\x07"):
    if want not in nics:
        print(f"no NIC {want!r} in {nics}")
        bad = 1
gpu0 = next(s for s in doc["subjects"] if s["id"] == "GPU0")
if not gpu0["label"].startswith("NVIDIA H100\\x1B[2J\\x1B]0;x\\x07<&>\"'\\xFF\\xC0\\xAF\\xC2\\x9B"):
    print(f"GPU0 label {gpu0['label']!r}")
    bad = 1
sys.exit(bad)
PY
