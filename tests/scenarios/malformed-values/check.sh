# Never a verdict built on garbage (tests/run-scenarios.sh runs this with
# WORK = the case's output directory). Known to fail until fixed: the GID
# files hold junk, yet nic.gid says BLOCKED "no IP address"; the bridge
# whose class is "0xzz0400" silently stops being a bridge, so the tree,
# the path class (PIX becomes PXB) and ACS PASS on a topology that is not
# the node's.
python3 - "$WORK/out.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
bad = 0
for r in res:
    g, s, why = r["gate"], r["status"], r["reason"]
    if g == "nic.gid" and s == "BLOCKED" and "gids/" not in why:
        print(f"nic.gid BLOCKED on junk GID files without naming them: {why}")
        bad = 1
    if g in ("topo.tree", "topo.path", "platform.acs", "platform.bridges") \
            and s == "PASS" and "class" not in why:
        print(f"{g} PASS although 0000:02:01.0/class is garbage: {why}")
        bad = 1
sys.exit(bad)
PY
