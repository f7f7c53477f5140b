# The host answers a capture used to leave out replay too (issue 15 item
# 6): /proc/kallsyms (mech.peermem_api), the kernel config (host.kconfig),
# the kernel log lines of mech.peermem_api, and NCCL's inputs (the
# libnccl.so.2 the loader finds, the NCCL_* environment, HOME for
# ~/.nccl.conf; topo.nccl_config and every NCCL decision). The capture
# keeps the answers, not the sources (/gdrcheck/kallsyms, kernel-log,
# kconfig, libnccl, environ); a replay under another environment gives every result
# of the node; a capture without them says "not replayed" for those gates.
set -eu
env NCCL_IB_GID_INDEX=3 LD_LIBRARY_PATH=/opt/nccl/lib HOME=/home/gdrcheck \
	NCCL_COMM_ID=10.0.0.7:5555 NCCL_HOSTID=node7 \
	GDRCHECK_LIBNVML="$TOP/tests/doubles/libnvidia-ml-fake.so" \
	FAKE_NVML_SCENARIO=/dev/null "$TOP/gdrcheck" --sysroot "$SYSROOT" --json \
	--capture "$WORK/capture.tar.gz" >"$WORK/captured.json" || true
rm -rf "$WORK/replay" && mkdir "$WORK/replay"
tar xzf "$WORK/capture.tar.gz" -C "$WORK/replay"
g="$WORK/replay/gdrcheck"
for f in kallsyms kernel-log kconfig libnccl environ; do
	test -s "$g/$f" || { echo "the archive has no gdrcheck/$f"; exit 1; }
done
# Answers, not sources: kallsyms and the config are not in the archive.
for f in proc/kallsyms proc/config.gz; do
	test ! -e "$WORK/replay/$f" || { echo "the archive holds /$f"; exit 1; }
done
grep -qx 'lines 7' "$g/kallsyms" || { cat "$g/kallsyms"; exit 1; }
[ "$(grep -c CONFIG_ "$g/kconfig")" = 4 ] || { cat "$g/kconfig"; exit 1; }
if ! grep -qx 'NCCL_IB_GID_INDEX=3' "$g/environ" ||
	! grep -qx 'HOME=/home/gdrcheck' "$g/environ" ||
	grep -q '^LD_LIBRARY_PATH=\|^NCCL_COMM_ID=\|^NCCL_HOSTID=' "$g/environ" ||
	! grep -qx 'LD_LIBRARY_PATH	/opt/nccl/lib/libnccl.so.2	.*	22105' "$g/libnccl"; then
	cat "$g/environ" "$g/libnccl"; exit 1
fi

# The same keys in an NCCL configuration file are scrubbed there too; the
# settings stay.
if grep -q 'NCCL_COMM_ID' "$WORK/replay/etc/nccl.conf" ||
	! grep -qx 'NCCL_NET_GDR_READ=0' "$WORK/replay/etc/nccl.conf"; then
	echo "capture kept NCCL_COMM_ID (or lost a setting) in /etc/nccl.conf:"
	cat "$WORK/replay/etc/nccl.conf"; exit 1
fi
# The replay machine's own environment must not count.
replay() {
	rc=0
	env -u GDRCHECK_LIBCUDA -u GDRCHECK_LIBIBVERBS -u FAKE_CUDA_SCENARIO \
		-u FAKE_VERBS_SCENARIO -u GDRCHECK_LIBNVML -u FAKE_NVML_SCENARIO \
		-u LD_LIBRARY_PATH NCCL_IB_GID_INDEX=7 CUDA_VISIBLE_DEVICES=0 \
		NCCL_NET_GDR_LEVEL=SYS HOME=/nonexistent \
		"$TOP/gdrcheck" --sysroot "$WORK/replay" --json >"$WORK/$1.json" \
		2>"$WORK/$1.err" || rc=$?
	[ "$rc" -le 3 ] || { echo "$1: exit $rc (a crash?)"; cat "$WORK/$1.err"; exit 1; }
}
replay replayed
python3 - "$WORK/captured.json" "$WORK/replayed.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def row(r):
    ev = {k: v for k, v in r["evidence"].items() if k != "replayed_from"}
    return (r["gate"], r["subject"], r["status"], r["reason_code"], r["reason"],
            json.dumps(ev, sort_keys=True))
ra = [row(r) for r in a["results"]]
rb = [row(r) for r in b["results"]]
assert ra == rb, "replayed results differ:\n" + "\n".join(
    f"- {x}\n+ {y}" for x, y in zip(ra, rb) if x != y) + f"\n({len(ra)} vs {len(rb)})"
assert a["verdict"] == b["verdict"] and a["paths"] == b["paths"]
assert a["nccl"] == b["nccl"], (a["nccl"], b["nccl"])
st = {r["gate"]: (r["status"], r["reason_code"]) for r in a["results"]}
# The node's answers, not defaults: the gates decided.
assert st["mech.peermem_api"] == ("BLOCKED", "PEERMEM_API_MISSING"), st
assert st["host.kconfig"] == ("PASS", "KCONFIG_OK"), st
assert st["topo.nccl_config"][1] == "NCCL_CONFIG", st
cfg = [r for r in a["results"] if r["gate"] == "topo.nccl_config"][0]
assert "NCCL_IB_GID_INDEX=3 (environment)" in cfg["reason"], cfg["reason"]
assert "NCCL_NET_GDR_LEVEL=PHB (~/.nccl.conf" in cfg["reason"], cfg["reason"]
assert cfg["evidence"]["nccl_version"] == "2.21.5", cfg["evidence"]
PY

# A run that named the NCCL release (--nccl-version) replays with it.
env HOME=/home/gdrcheck "$TOP/gdrcheck" --sysroot "$SYSROOT" --json \
	--nccl-version 2.19.3 --capture "$WORK/named.tar.gz" >/dev/null || true
rm -rf "$WORK/named" && mkdir "$WORK/named"
tar xzf "$WORK/named.tar.gz" -C "$WORK/named"
env -u GDRCHECK_LIBCUDA -u GDRCHECK_LIBIBVERBS "$TOP/gdrcheck" \
	--sysroot "$WORK/named" --json >"$WORK/named.json" || true
python3 - "$WORK/named.json" <<'PY'
import json, sys
r = [r for r in json.load(open(sys.argv[1]))["results"] if r["gate"] == "topo.nccl_config"][0]
ev = r["evidence"]
assert (ev["nccl_version"], ev["nccl_version_source"]) == ("2.19.3", "--nccl-version"), r
PY

# Recorded answers are what the replay reads: an exported symbol (address
# masked) and a version-mismatch line of the node's kernel log.
cp "$g/kallsyms" "$WORK/kallsyms.good"
printf 'lines 9\nffffffffffffffff T ib_register_peer_memory_client\t[ib_core]\n' >"$g/kallsyms"
replay exported
printf 'error 0 count 2\n3,1700,8410000,-;nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client\n' >"$g/kernel-log"
replay mismatch
python3 - "$WORK/exported.json" "$WORK/mismatch.json" <<'PY'
import json, sys
def gate(p, g):
    return [r for r in json.load(open(p))["results"] if r["gate"] == g][0]
r = gate(sys.argv[1], "mech.peermem_api")
assert (r["status"], r["reason_code"]) == ("PASS", "PEERMEM_API_PRESENT"), r
assert r["evidence"]["module"] == "ib_core" and r["evidence"]["address"] == "non-zero", r
assert r["evidence"]["kallsyms_lines"] == 9, r
r = gate(sys.argv[2], "mech.peermem_api")
assert (r["status"], r["reason_code"]) == ("BLOCKED", "PEERMEM_API_VERSION_MISMATCH"), r
assert r["evidence"]["kernel_log"].startswith("2 line(s) like"), r
PY

# A capture without these answers (taken by an older gdrcheck): the gates
# say what is missing; none of them PASSes or BLOCKs on the local host.
rm "$g/kallsyms" "$g/kernel-log" "$g/kconfig" "$g/libnccl" "$g/environ"
replay old
python3 - "$WORK/old.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
st = {r["gate"]: r for r in d["results"]}
for gname, what in (("mech.peermem_api", "/proc/kallsyms"),
                    ("host.kconfig", "kernel config"),
                    ("topo.nccl_config", "libnccl.so.2")):
    r = st[gname]
    assert (r["status"], r["reason_code"]) == ("SKIP", "NOT_REPLAYED"), r
    assert "older gdrcheck" in r["reason"] and what in r["reason"], r["reason"]
assert d["nccl"]["version_assumed"] is True, d["nccl"]
PY
