# Capture replays exactly (issue 15 item 6): --capture records the vendor
# answers the worker got (here the doubles') as /gdrcheck/vendor-facts.json;
# --sysroot on the extracted archive, with no library named, replays them
# and gives the node's own verdict, paths and results (evidence included),
# the library gates (gpu.libcuda, gpu.nvml, nic.libibverbs) saying
# replayed_from. A corrupt file, a version this
# gdrcheck does not know, or no file at all: SKIP NOT_REPLAYED with the
# reason, never a crash.
set -eu
# NVML too (the double, answering its defaults), so that its answers travel.
GDRCHECK_LIBNVML="$TOP/tests/doubles/libnvidia-ml-fake.so" \
	FAKE_NVML_SCENARIO=/dev/null \
	"$TOP/gdrcheck" --sysroot "$SYSROOT" --json \
	--capture "$WORK/capture.tar.gz" >"$WORK/captured.json"
rm -rf "$WORK/replay" && mkdir "$WORK/replay"
tar xzf "$WORK/capture.tar.gz" -C "$WORK/replay"
test -s "$WORK/replay/gdrcheck/vendor-facts.json" ||
	{ echo "the archive has no gdrcheck/vendor-facts.json"; exit 1; }
replay() {
	rc=0
	env -u GDRCHECK_LIBCUDA -u GDRCHECK_LIBIBVERBS -u FAKE_CUDA_SCENARIO \
		-u FAKE_VERBS_SCENARIO -u GDRCHECK_LIBNVML -u FAKE_NVML_SCENARIO \
		"$TOP/gdrcheck" --sysroot "$WORK/replay" --json >"$WORK/$1.json" \
		2>"$WORK/$1.err" || rc=$?
	echo "$rc" >"$WORK/$1.rc"
	[ "$rc" -le 3 ] || { echo "$1: exit $rc (a crash?)"; cat "$WORK/$1.err"; exit 1; }
}
replay replayed
python3 - "$WORK/captured.json" "$WORK/replayed.json" "$WORK/replay" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def row(r, drop):
    ev = {k: v for k, v in r["evidence"].items() if k != drop}
    return (r["gate"], r["subject"], r["status"], r["reason_code"], r["reason"],
            json.dumps(ev, sort_keys=True))
ra = [row(r, None) for r in a["results"]]
rb = [row(r, "replayed_from") for r in b["results"]]
assert ra == rb, "replayed results differ:\n" + "\n".join(
    f"- {x}\n+ {y}" for x, y in zip(ra, rb) if x != y) + f"\n({len(ra)} vs {len(rb)})"
assert a["verdict"] == b["verdict"], (a["verdict"], b["verdict"])
assert a["verdict"]["status"] == "READY", a["verdict"]
strip = lambda p: {k: v for k, v in p.items()}
assert a["paths"] == b["paths"], "path verdicts differ"
want = sys.argv[3] + "/gdrcheck/vendor-facts.json"
libs = ("gpu.libcuda", "gpu.nvml", "nic.libibverbs")
src = {r["gate"]: r["evidence"].get("replayed_from") for r in b["results"]
       if r["gate"] in libs}
assert src == {g: want for g in libs}, src
assert not any("replayed_from" in r["evidence"] for r in a["results"])
nvml = [r for r in a["results"] if r["gate"] == "gpu.nvml"][0]
assert nvml["status"] == "PASS", nvml
PY

# Not replayable: the reason says why, the libraries' gates SKIP.
not_replayed() {	# NAME TEXT
	python3 - "$WORK/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["gate"]: r for r in d["results"]}
# gpu.nvml says the same as the other library gates (not_replayed()).
for g in ("gpu.libcuda", "gpu.nvml", "nic.libibverbs"):
    r = rows[g]
    assert (r["status"], r["reason_code"]) == ("SKIP", "NOT_REPLAYED"), r
    assert sys.argv[2] in r["reason"], (sys.argv[2], r["reason"])
assert d["verdict"]["status"] != "READY", d["verdict"]
PY
}
facts="$WORK/replay/gdrcheck/vendor-facts.json"
cp "$facts" "$WORK/facts.good"
head -c 300 "$WORK/facts.good" >"$facts"
replay corrupt
not_replayed corrupt "cannot be read: /gdrcheck/vendor-facts.json: not JSON"
sed 's/"version": 1,/"version": 99,/' "$WORK/facts.good" >"$facts"
replay version
not_replayed version "version 99, this gdrcheck reads 1"
sed 's/"driver_version": \([0-9][0-9]*\)/"driver_version": "\1"/' "$WORK/facts.good" >"$facts"
replay wrongtype
not_replayed wrongtype "facts.cuda.driver_version: not an integer"
rm "$facts"
replay absent
not_replayed absent "its vendor answers are not in the capture"

# A capture of a run that never called the libraries (--only host): the
# replay says so, it does not turn "not run" into a failure.
"$TOP/gdrcheck" --sysroot "$SYSROOT" --json --only host \
	--capture "$WORK/host-only.tar.gz" >"$WORK/host-only.json" || true
rm -rf "$WORK/replay" && mkdir "$WORK/replay"
tar xzf "$WORK/host-only.tar.gz" -C "$WORK/replay"
replay notrun
not_replayed notrun "the captured run did not load lib"
