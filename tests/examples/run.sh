#!/bin/sh
# Tests of the operator examples (examples/ci-gate, examples/slurm,
# examples/kubernetes). Needs ./gdrcheck and the test doubles built
# (make gdrcheck doubles), shellcheck, jq, python3 with python3-yaml,
# promtool (Debian package prometheus).
#
#   tests/examples/run.sh        ends with "examples-ops: N passed, N failed"
#   KEEP_WORK=1 tests/examples/run.sh   keeps its work directory (reports,
#                      archives, textfiles) and prints where, for debugging
#
#   1. shellcheck      every example and test script (POSIX sh)
#   2. manifests       every YAML document parses; what the pod specs promise
#   3. summary         examples/slurm/summary.sh over the real reports
#                      (examples/h200/*.json, tests/scenarios/*/expected.json)
#                      against the same table computed in python
#   4. sweep           examples/slurm/sweep.sh end to end: a fake srun, the
#                      real ./gdrcheck on scenario sysroots
#   5. gate            examples/ci-gate/gdrcheck-gate.sh on scenario sysroots:
#                      archive, verdict line, exit status; crashes, usage
#   6. textfile        examples/kubernetes/gdrcheck-textfile.sh: atomic .prom
#   7. prometheus      promtool check metrics on the textfile output; the
#                      rules of examples/prometheus: promtool check rules,
#                      their metric names against real output, promtool
#                      test rules on real runs (tests/examples/prom-rules.py)
#   8. kubernetes      gdrcheck-nfd.sh (features.d format and labels against
#                      the report) and gdrcheck-npd.sh (NPD exit codes and
#                      message, the config's fields: tests/examples/k8s-node.py)
#   9. nhc             examples/nhc/check_gdrcheck.nhc under stand-ins of LBNL
#                      NHC's die/log/dbg (tests/examples/nhc-run.bash; NHC
#                      is not packaged in Debian)
# The Slurm health check runs against a real Slurm in tests/slurm/run.sh.
#
# Many checks are `sh -c '...$1...' sh ARG`: single quotes on purpose (SC2016);
# the file names counted with ls are the tests' own (SC2012).
# shellcheck disable=SC2016,SC2012
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
work=$(mktemp -d)
if [ "${KEEP_WORK:-0}" = 1 ]; then trap 'echo "work kept: $work"' EXIT; else trap 'rm -rf "$work"' EXIT; fi
doubles=$top/tests/doubles
# ok, bad, check NAME COMMAND... (passes when the command succeeds), finish.
# shellcheck source=SCRIPTDIR/../checks.sh
. tests/checks.sh
checks_begin examples-ops

# Build a scenario's sysroot once; print nothing.
sysroot() {
	[ -d "$work/sysroots/$1" ] && return 0
	mkdir -p "$work/sysroots"
	python3 tests/scenarios/mksysroot.py "tests/scenarios/$1/sysroot.spec" \
		"$work/sysroots/$1" >"$work/mksysroot.$1.log" 2>&1
}

# ---------------------------------------------------------------- prerequisites
missing=
[ -x ./gdrcheck ] || missing="$missing ./gdrcheck"
for so in libcuda-fake.so libibverbs-fake.so; do
	[ -f "$doubles/$so" ] || missing="$missing tests/doubles/$so"
done
if [ -n "$missing" ]; then
	bad "prerequisites: not built:$missing (run: make gdrcheck doubles)"
	finish
fi
have_jq=1
command -v jq >/dev/null 2>&1 || {
	have_jq=0
	bad "prerequisites: jq is not installed (Debian package jq)"
}

# ----------------------------------------------------------------- 1. shellcheck
scripts=$(ls examples/ci-gate/*.sh examples/slurm/*.sh examples/kubernetes/*.sh \
	examples/prometheus/*.sh tests/slurm/*.sh \
	tests/examples/*.sh tests/checks.sh 2>/dev/null)
if command -v shellcheck >/dev/null 2>&1; then
	for s in $scripts; do
		# -x: what a script sources (lib.sh, tests/checks.sh) is checked
		# with it; those are sourced, never run: no #!/bin/sh, not executable.
		check "shellcheck $s" shellcheck -x -s sh "$s"
		case $s in
		*/lib.sh | tests/checks.sh)
			if [ "$(head -c 2 "$s")" != "#!" ] && [ ! -x "$s" ]; then
				ok "$s: sourced (no #!, not executable)"
			else
				bad "$s: sourced, yet has #! or is executable"
			fi
			continue
			;;
		esac
		first=$(head -n 1 "$s")
		if [ "$first" = "#!/bin/sh" ] && [ -x "$s" ]; then
			ok "$s: #!/bin/sh and executable"
		else
			bad "$s: first line '$first', or not executable"
		fi
	done
	for s in examples/ci-gate/gdrcheck-gate.sh examples/slurm/sweep.sh \
		examples/slurm/summary.sh examples/slurm/gdrcheck-node.sh \
		examples/slurm/pair-sweep.sh examples/slurm/pair-summary.sh \
		examples/slurm/gdrcheck-pair.sh examples/kubernetes/gdrcheck-pair.sh \
		examples/kubernetes/gdrcheck-textfile.sh; do
		if grep -q '^set -eu$' "$s"; then ok "$s: set -eu"; else bad "$s: no 'set -eu'"; fi
	done
	# bash: NHC sources its checks with bash.
	for s in examples/nhc/*.nhc tests/examples/*.bash; do
		check "shellcheck -s bash $s" shellcheck -s bash "$s"
	done
else
	bad "shellcheck is not installed (Debian package shellcheck): cannot lint $(echo "$scripts" | wc -w) scripts"
fi

# ------------------------------------------------------------------ 2. manifests
if python3 -c 'import yaml' 2>/dev/null; then
	# The image's packages follow what the binary links: each library ldd
	# names (but the C library the base image has) comes from a package
	# the runtime stage installs, and each pkg-config module of the
	# Makefile from a -dev package the build stage installs.
	for lib in $(ldd ./gdrcheck | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do
		pkg=$({ dpkg -S "$lib" || dpkg -S "$(readlink -f "$lib")" ||
			dpkg -S "/usr$lib"; } 2>/dev/null | head -n 1 | cut -d: -f1)
		case $pkg in "" | libc6) continue ;; esac
		check "Dockerfile runtime stage installs $pkg (for $(basename "$lib"))" \
			sh -c 'sed -n "/^FROM .*slim/,\$p" examples/kubernetes/Dockerfile |
				grep -qw -- "$1"' sh "$pkg"
	done
	mods=$(sed -n 's/^LIBS *= *$(shell $(PKG_CONFIG) --libs \(.*\)).*/\1/p' Makefile)
	for mod in $mods; do
		dev=$(dpkg -S "$(pkg-config --variable=pcfiledir "$mod")/$mod.pc" 2>/dev/null |
			head -n 1 | cut -d: -f1)
		check "Dockerfile build stage installs $dev (pkg-config $mod)" \
			sh -c 'sed -n "/^FROM .*AS build/,/^FROM /p" examples/kubernetes/Dockerfile |
				grep -qw -- "$1"' sh "${dev:-unknown}"
	done
	python3 - examples/kubernetes <<'PY' >"$work/manifests.log" 2>&1
import glob, os, re, sys, yaml

d = sys.argv[1]
passed = failed = 0
def res(ok, what):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + what)
    if ok: passed += 1
    else: failed += 1

docker = open(os.path.join(d, "Dockerfile")).read()
copies = {}
for m in re.finditer(r"^COPY (?!--)(\S+) (\S+)$", docker, re.M):
    copies[m.group(2)] = m.group(1)
for dst, src in copies.items():
    res(os.path.exists(src), f"Dockerfile: COPY source {src} exists")

manifests = sorted(glob.glob(os.path.join(d, "*.yaml")))
res(len(manifests) >= 2, f"{len(manifests)} manifests in {d}")
kinds = {}
for f in manifests:
    try:
        docs = [x for x in yaml.safe_load_all(open(f)) if x is not None]
    except yaml.YAMLError as e:
        res(False, f"{f}: parses ({e})")
        continue
    res(len(docs) > 0, f"{f}: parses, {len(docs)} document(s)")
    for doc in docs:
        kind = doc.get("kind")
        name = f"{f}: {kind}/{doc.get('metadata', {}).get('name')}"
        res(bool(doc.get("apiVersion")) and bool(kind), f"{name}: apiVersion and kind")
        kinds.setdefault(kind, []).append(doc)
        if kind not in ("DaemonSet", "Job"):
            continue
        res(doc["metadata"].get("namespace") == "gdrcheck", f"{name}: namespace gdrcheck")
        tpl = doc["spec"]["template"]
        spec = tpl["spec"]
        if kind == "DaemonSet":
            sel = doc["spec"]["selector"]["matchLabels"]
            labels = tpl["metadata"]["labels"]
            res(all(labels.get(k) == v for k, v in sel.items()),
                f"{name}: selector matches the pod labels")
        else:
            res(spec.get("restartPolicy") == "Never", f"{name}: restartPolicy Never")
            res(doc["spec"].get("completionMode") == "Indexed"
                and doc["spec"].get("backoffLimitPerIndex") == 0,
                f"{name}: Indexed, backoffLimitPerIndex 0")
            aff = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
            res(aff["topologyKey"] == "kubernetes.io/hostname"
                and all(tpl["metadata"]["labels"].get(k) == v
                        for k, v in aff["labelSelector"]["matchLabels"].items()),
                f"{name}: one pod per node (anti-affinity on the hostname)")
        res(spec.get("hostNetwork") is True, f"{name}: hostNetwork (RoCE netdevs, GIDs)")
        res(not spec.get("hostPID"), f"{name}: no hostPID (/proc/self stays the pod's)")
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        hostpaths = {v["hostPath"]["path"] for v in volumes.values() if "hostPath" in v}
        res(not ({"/proc", "/sys"} & hostpaths), f"{name}: no host /proc or /sys mount")
        for c in spec["containers"]:
            cn = f"{name} container {c['name']}"
            sc = c.get("securityContext", {})
            caps = sc.get("capabilities", {}).get("add", [])
            res("IPC_LOCK" in caps, f"{cn}: capabilities add IPC_LOCK")
            env = {e["name"]: e for e in c.get("env", [])}
            limits = c.get("resources", {}).get("limits", {})
            mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
            for m in mounts.values():
                res(m["name"] in volumes, f"{cn}: volumeMount {m['name']} has a volume")
            gpus = "nvidia.com/gpu" in limits or \
                env.get("NVIDIA_VISIBLE_DEVICES", {}).get("value") == "all"
            res(gpus, f"{cn}: GPUs (nvidia.com/gpu or NVIDIA_VISIBLE_DEVICES=all)")
            res("compute" in env.get("NVIDIA_DRIVER_CAPABILITIES", {}).get("value", ""),
                f"{cn}: NVIDIA_DRIVER_CAPABILITIES has compute (libcuda)")
            rdma_res = [k for k in limits if k.startswith("rdma/")]
            ib = mounts.get("/dev/infiniband")
            ib_host = ib is not None and \
                volumes.get(ib["name"], {}).get("hostPath", {}).get("path") == "/dev/infiniband"
            res(bool(rdma_res) or (ib_host and sc.get("privileged") is True),
                f"{cn}: RDMA devices (rdma/* resource, or privileged + hostPath /dev/infiniband)")
            res(not (ib_host and not sc.get("privileged")),
                f"{cn}: no hostPath /dev/infiniband without privileged (device cgroup)")
            cmd = c.get("command", [None])[0]
            res(cmd in copies, f"{cn}: command {cmd} is installed by the Dockerfile")
            res(c.get("env", []) and env.get("NODE_NAME", env.get("GATE_HOSTNAME", {}))
                .get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName",
                f"{cn}: node name from the downward API")
            if kind == "DaemonSet":
                # Where its output goes: node_exporter's textfile directory
                # or NFD's features.d, a writable hostPath at the same path.
                if "FEATURES_FILE" in env:
                    tf = os.path.dirname(env["FEATURES_FILE"]["value"])
                    what = "FEATURES_FILE's directory"
                    res(tf == "/etc/kubernetes/node-feature-discovery/features.d",
                        f"{cn}: FEATURES_FILE in nfd-worker's default features.d")
                else:
                    tf = env.get("TEXTFILE_DIR", {}).get("value")
                    what = "TEXTFILE_DIR"
                res(tf in mounts and volumes[mounts[tf]["name"]]["hostPath"]["path"] == tf
                    and not mounts[tf].get("readOnly"),
                    f"{cn}: {what} {tf} is a writable hostPath")
                res(sc.get("privileged") is False and "ALL" in sc.get("capabilities", {}).get("drop", []),
                    f"{cn}: unprivileged, drops ALL but IPC_LOCK")
                res(bool(rdma_res), f"{cn}: RDMA through a device plugin resource")
            else:
                res(sc.get("privileged") is True, f"{cn}: privileged (ACS config space, /dev/kmsg)")
                k = mounts.get("/dev/kmsg")
                res(k is not None and k.get("readOnly") is True
                    and volumes[k["name"]]["hostPath"]["path"] == "/dev/kmsg",
                    f"{cn}: /dev/kmsg hostPath, read-only")
                arch = env.get("ARCHIVE_DIR", {}).get("value")
                res(arch in mounts and "hostPath" in volumes[mounts[arch]["name"]],
                    f"{cn}: ARCHIVE_DIR {arch} is a hostPath")
                res(not any(a in ("--json", "--output", "-o", "--quiet", "--format")
                            for a in c.get("args", [])),
                    f"{cn}: args leave --json/--output to the gate")
res("DaemonSet" in kinds and "Job" in kinds and "Namespace" in kinds,
    "a Namespace, a DaemonSet and a Job")
print(f"manifests subtotal {passed} passed, {failed} failed")
PY
	cat "$work/manifests.log"
	p=$(sed -nE 's/^manifests subtotal ([0-9]+) passed, ([0-9]+) failed$/\1/p' "$work/manifests.log")
	f=$(sed -nE 's/^manifests subtotal ([0-9]+) passed, ([0-9]+) failed$/\2/p' "$work/manifests.log")
	if [ -z "$p" ]; then
		bad "manifests: the checker crashed"
	else
		pass=$((pass + p))
		fail=$((fail + f))
	fi
else
	bad "python3-yaml is not installed (Debian package python3-yaml): manifests unchecked"
fi

# -------------------------------------------------------------------- 3. summary
if [ $have_jq = 1 ]; then
	fleet=$work/fleet
	mkdir -p "$fleet"
	# Distinct node names: the file name, and host.hostname rewritten to it.
	for f in examples/h200/*.json tests/scenarios/*/expected.json; do
		case $f in
		examples/*) node=$(basename "$f" .json) ;;
		*) node=$(basename "$(dirname "$f")") ;;
		esac
		jq --arg n "$node" '.host.hostname = $n' "$f" >"$fleet/$node.json"
	done
	nreports=$(ls "$fleet"/*.json | wc -l)
	# A node whose gdrcheck crashed (.rc, no JSON), one whose JSON is cut
	# short, and one whose recorded exit status overrides the report's.
	echo 139 >"$fleet/zz-crashed.rc"
	head -c 100 tests/scenarios/reg-ok/expected.json >"$fleet/zz-truncated.json"
	echo 1 >"$fleet/zz-truncated.rc"
	cp "$fleet/reg-ok.json" "$fleet/zz-rc-override.json"
	echo 3 >"$fleet/zz-rc-override.rc"
	# Synthetic, the one edited report: both paths READY on the same pairs,
	# so that PAIRS (distinct pairs) differs from the sum of the paths'.
	jq '.paths.peermem = .paths.dmabuf | .host.hostname = "zz-both"' \
		"$fleet/healthy-dmabuf.json" >"$fleet/zz-both.json"
	# Synthetic: a --no-alloc node that works (READY-UNPROVEN: not a
	# failure), and one whose NCCL rail is lost under --require auto
	# (require nccl; the NCCL column shows the gate).
	jq '.verdict.status = "READY-UNPROVEN" | .paths.dmabuf.verdict = "READY-UNPROVEN"
		| .paths.nccl.verdict = "READY-UNPROVEN" | .host.hostname = "zz-unproven"' \
		"$fleet/reg-ok.json" >"$fleet/zz-unproven.json"
	jq '.require = "nccl" | .require_source = "auto" | .verdict = {status: "BLOCKED", exit_code: 1}
		| .paths.nccl = {verdict: "BLOCKED", gate: "topo.rails", subject: "GPU3",
			reason_code: "RAIL_LOST", ready: [],
			summary: "BLOCKED at topo.rails (GPU3): GPU3 lost rail mlx5_6/1: port DOWN (Polling); NCCL uses mlx5_7/1 instead"}
		| .host.hostname = "zz-rail"' "$fleet/reg-ok.json" >"$fleet/zz-rail.json"

	examples/slurm/summary.sh --tsv "$fleet" >"$work/summary.tsv"
	rc=$?
	check "summary --tsv exits 1 (not every node READY), got $rc" [ $rc -eq 1 ]
	examples/slurm/summary.sh "$fleet" >"$work/summary.txt"
	rc=$?
	check "summary (table) exits 1, got $rc" [ $rc -eq 1 ]
	python3 - "$fleet" "$work/summary.tsv" "$work/summary.txt" "$nreports" <<'PY' >"$work/summary.log" 2>&1
import glob, json, os, sys
fleet, tsv, txt, nreports = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
passed = failed = 0
def res(ok, what):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + what)
    if ok: passed += 1
    else: failed += 1

# The expected table, computed from the JSON without jq.
WORKS = ("READY", "READY-UNPROVEN")  # READY-UNPROVEN: --no-alloc


def causes(d):
    """mechanism, cause key, cause text, fix: cause.jq's rules, restated."""
    ready = [k for k, v in d["paths"].items() if v["verdict"] in WORKS]
    mech = "+".join(ready) or "-"
    if d["verdict"]["exit_code"] == 0:
        return [mech, "-", "-", "-"]
    # "any" accepts dmabuf or peermem; nccl counts only when required.
    req = [(k, v) for k, v in d["paths"].items()
           if (d["require"] == "any" and k != "nccl") or k == d["require"]]
    if any(v["verdict"] in WORKS for _, v in req):
        viol = (d["policy"]["violations"] or ["not READY"])[0]
        rems = d["remediations"]
        fix = next((r["text"] for r in rems if r["status"] == "WARN"),
                   rems[0]["text"] if rems else "-")
        return [mech, "policy", f"policy: {viol}", fix]
    groups = []  # [paths, verdict, gate, subject, code], in path order
    for k, v in req:
        if v["verdict"] in WORKS:
            continue
        g = next((x for x in groups
                  if x[2:5] == [v["gate"], v["subject"], v["reason_code"]]), None)
        if g and g[2:5] == [v["gate"], v["subject"], v["reason_code"]]:
            g[0] += "+" + k
        else:
            groups.append([k, v["verdict"], v["gate"], v["subject"], v["reason_code"],
                           v["summary"]])
    text = "; ".join(
        f"{g[0]} {g[5]}" if g[2] is None else
        g[0] + ("" if g[1] == "BLOCKED" else " " + g[1]) + f" at {g[2]} ({g[3] or '-'})"
        + (f" {g[4]}" if g[4] else "") for g in groups)
    keys = []
    for g in groups:
        k = f"{g[1]} (no gate decided)" if g[2] is None else f"{g[2]} {g[4] or '-'}"
        if k not in keys:
            keys.append(k)
    fix = next((r["text"] for g in groups for r in d["remediations"]
                if r["gate"] == g[2]), "-")
    return [mech, " + ".join(keys), text, fix]

expect = {}
nodes = sorted({os.path.basename(p).rsplit(".", 1)[0]
                for p in glob.glob(fleet + "/*.json") + glob.glob(fleet + "/*.rc")})
for n in nodes:
    rc = None
    if os.path.exists(f"{fleet}/{n}.rc"):
        rc = open(f"{fleet}/{n}.rc").read().strip()
    try:
        d = json.load(open(f"{fleet}/{n}.json"))
    except (OSError, ValueError):
        expect[n] = [n, "NO-REPORT", "-", "-", "-", "-", "0", "0", "0", rc or "-",
                     "-", "no report", f"gdrcheck left no readable report (exit {rc or '-'})",
                     "read NODE.err; run gdrcheck on the node by hand", "-", "-"]
        continue
    p = d["paths"]
    pairs = {(r["gpu"], r["port"]) for v in p.values() for r in v["ready"]}
    expect[n] = [n, d["verdict"]["status"],
                 p["dmabuf"]["verdict"], p["dmabuf"]["gate"] or "-",
                 p["peermem"]["verdict"], p["peermem"]["gate"] or "-",
                 str(len(p["dmabuf"]["ready"])), str(len(p["peermem"]["ready"])),
                 str(len(pairs)), rc if rc is not None else str(d["verdict"]["exit_code"])]
    expect[n] += causes(d)
    expect[n] += [p["nccl"]["verdict"], p["nccl"]["gate"] or "-"]

lines = open(tsv).read().splitlines()
res(lines[0].split("\t")[0] == "node", "tsv header first")
rows = {l.split("\t")[0]: l.split("\t") for l in lines[1:] if not l.startswith("#")}
counts = {l.split()[1]: int(l.split()[2]) for l in lines if l.startswith("# ")}
res(sorted(rows) == nodes, f"one row per node: {len(rows)} rows, {len(nodes)} nodes")
res(len(nodes) == nreports + 6,
    f"{nreports} reports + crashed, truncated, rc-override, both, unproven, rail: {len(nodes)}")
for n in nodes:
    res(rows.get(n) == expect[n], f"row {n}: {rows.get(n)} == {expect[n]}")

v = [e for e in expect.values()]
want = {
    "nodes": len(v),
    "ready": sum(e[1] == "READY" for e in v),
    "ready_unproven": sum(e[1] == "READY-UNPROVEN" for e in v),
    "ready_nccl": sum(e[14] == "READY" for e in v),
    "ready_dmabuf": sum(e[2] == "READY" for e in v),
    "ready_peermem": sum(e[4] == "READY" for e in v),
    "ready_both": sum(e[2] == "READY" and e[4] == "READY" for e in v),
    "blocked": sum(e[1] == "BLOCKED" for e in v),
    "unknown": sum(e[1] == "UNKNOWN" for e in v),
    "no_report": sum(e[1] == "NO-REPORT" for e in v),
}
for k, x in want.items():
    res(counts.get(k) == x, f"count {k}: {counts.get(k)} == {x}")
# The fixtures must exercise both paths, or the counts prove little.
res(want["ready_dmabuf"] >= 2 and want["ready_peermem"] >= 1 and want["blocked"] >= 2
    and want["unknown"] >= 1 and want["ready_both"] >= 1, f"fixture mix: {want}")
res(expect["zz-both"][8] == "3", "zz-both: 3 distinct pairs, not 6")
res(expect["zz-unproven"][11] == "-" and expect["zz-rail"][11] == "topo.rails RAIL_LOST",
    "zz-unproven has no cause; zz-rail's cause is topo.rails RAIL_LOST")

# The human table carries the same rows and counts.
t = open(txt).read().splitlines()
res(t[0].split() == ["NODE", "OVERALL", "MECH", "DMABUF", "PEERMEM", "NCCL", "PAIRS", "EXIT", "CAUSE"],
    "table header")
end = t.index("")
trows = {l.split()[0]: l.split() for l in t[1:end]}
res(len(trows) == len(nodes), f"table: one row per node ({len(trows)})")
for n in nodes:
    e = expect[n]
    cell = lambda verdict, gate: verdict if gate == "-" else f"{verdict}@{gate}"
    want_row = [n, e[1], e[10], cell(e[2], e[3]), cell(e[4], e[5]), cell(e[14], e[15]), e[8], e[9]]
    res(trows.get(n, [])[:8] == want_row, f"table row {n}: {trows.get(n)} starts {want_row}")
# Cause groups: every node not READY in exactly the group of its cause key and fix,
# largest group first, with the fix; the row's CAUSE is the group's number.
bykey = {}
for n in nodes:
    if expect[n][1] not in WORKS:
        bykey.setdefault((expect[n][11], expect[n][13]), []).append(n)
g0 = t.index("not READY, by cause:")
groups = []
i = g0 + 1
while i + 2 < len(t) and t[i].startswith("#"):
    num, rest = t[i].split("  ", 1)
    size, key = rest.split("  ", 1)
    members = t[i + 1].split("nodes: ", 1)[1].split(", ")
    fix = t[i + 2].split("fix:   ", 1)[1]
    groups.append((num, int(size.split()[0]), key, members, fix))
    i += 3
res(sorted((g[2], g[4], sorted(g[3])) for g in groups)
    == sorted((k[0], k[1], sorted(v)) for k, v in bykey.items()),
    f"cause groups = nodes grouped by cause key and fix ({len(groups)} groups)")
res([g[1] for g in groups] == sorted((g[1] for g in groups), reverse=True)
    and all(g[1] == len(g[3]) for g in groups), "groups largest first, sizes match")
for num, size, key, members, fix in groups:
    res(all(trows[m][8] == num for m in members), f"group {num} ({key}): rows say CAUSE {num}")
    res(all(expect[m][13] == fix for m in members), f"group {num}: fix is its nodes' fix")
res(all(trows[n][8] == "-" for n in nodes if expect[n][1] in WORKS), "READY rows: CAUSE -")
res(len(groups) >= 5 and any(len(g[3]) > 1 for g in groups),
    "fixture mix: several causes, one shared by several nodes")
labels = {"nodes": "nodes", "READY (overall)": "ready", "READY-UNPROVEN": "ready_unproven",
          "READY by dmabuf": "ready_dmabuf", "READY by peermem": "ready_peermem",
          "READY by both": "ready_both", "READY by nccl": "ready_nccl",
          "BLOCKED": "blocked", "UNKNOWN": "unknown", "NO-REPORT": "no_report"}
for l in t:
    if ":" in l:
        k, x = l.split(":", 1)
        if k in labels:
            res(int(x) == want[labels[k]], f"table count '{k}': {x.strip()} == {want[labels[k]]}")
            del labels[k]
res(not labels, f"table has every count line (missing: {list(labels)})")
print(f"summary subtotal {passed} passed, {failed} failed")
PY
	cat "$work/summary.log"
	p=$(sed -nE 's/^summary subtotal ([0-9]+) passed, ([0-9]+) failed$/\1/p' "$work/summary.log")
	f=$(sed -nE 's/^summary subtotal ([0-9]+) passed, ([0-9]+) failed$/\2/p' "$work/summary.log")
	if [ -z "$p" ]; then
		bad "summary: the checker crashed"
	else
		pass=$((pass + p))
		fail=$((fail + f))
	fi

	# Every node READY: exit 0. No report at all: exit 2.
	mkdir -p "$work/allready" "$work/empty"
	for n in reg-ok healthy-dmabuf peermem-proprietary zz-unproven; do
		cp "$fleet/$n.json" "$work/allready/"
	done
	examples/slurm/summary.sh "$work/allready" >"$work/allready.txt"
	rc=$?
	check "summary: all READY (one READY-UNPROVEN) exits 0, got $rc" [ $rc -eq 0 ]
	check "summary: READY by dmabuf 2, by peermem 1, READY-UNPROVEN 1 (all-READY fleet)" \
		sh -c 'grep -q "^READY by dmabuf:  2$" "$1" && grep -q "^READY by peermem: 1$" "$1" &&
			grep -q "^READY-UNPROVEN:   1$" "$1"' \
		sh "$work/allready.txt"
	examples/slurm/summary.sh "$work/empty" >/dev/null 2>&1
	rc=$?
	check "summary: empty directory exits 2, got $rc" [ $rc -eq 2 ]
	examples/slurm/summary.sh >/dev/null 2>&1
	rc=$?
	check "summary: no argument exits 2, got $rc" [ $rc -eq 2 ]
fi

# ---------------------------------------------------------------------- 4. sweep
sweep_nodes="reg-ok h200 reg-no-alloc peermem-proprietary"
sweep_ok=1
for n in $sweep_nodes; do sysroot "$n" || sweep_ok=0; done
if [ $have_jq = 1 ] && [ $sweep_ok = 1 ]; then
	sd=$work/sweep/run1
	# Links planted at the files' names: replaced, never written through.
	mkdir -p "$sd"
	echo victim >"$work/sweep-victim"
	for f in reg-ok.json reg-ok.rc reg-ok.err .reg-ok.json.tmp.1 .reg-ok.rc.tmp.1; do
		ln -s "$work/sweep-victim" "$sd/$f"
	done
	SRUN="$top/tests/examples/fake-srun.sh" FAKE_SRUN_LOG="$work/srun.log" \
		FAKE_SRUN_NODES="$sweep_nodes" TOP="$top" SYSROOTS="$work/sysroots" \
		GDRCHECK="$top/tests/examples/scenario-gdrcheck.sh" \
		SOURCE_DATE_EPOCH=0 \
		examples/slurm/sweep.sh -N 4 -p gpu -d "$sd" -- --require dmabuf \
		>"$work/sweep.out" 2>"$work/sweep.err"
	rc=$?
	check "sweep: exits 1 (not every node READY), got $rc" [ $rc -eq 1 ]
	check "sweep: srun asked for one task per node on 4 nodes" \
		grep -q -- "--nodes=4 --partition=gpu .*--ntasks-per-node=1\|--ntasks-per-node=1.*--nodes=4 --partition=gpu" "$work/srun.log"
	for n in $sweep_nodes; do
		# --require dmabuf: the node READY only by peermem is BLOCKED.
		expect_rc=$(cat "tests/scenarios/$n/expected.rc")
		[ "$n" = peermem-proprietary ] && expect_rc=1
		check "sweep: $n.json (--require dmabuf) and $n.rc say exit $expect_rc" \
			sh -c '[ "$(jq -r .verdict.exit_code "$1/$2.json")" = "$3" ] &&
				[ "$(jq -r .require "$1/$2.json")" = dmabuf ] &&
				[ "$(cat "$1/$2.rc")" = "$3" ]' sh "$sd" "$n" "$expect_rc"
	done
	check "sweep: no temporary file left (only the two planted at old names)" \
		sh -c '[ "$(ls -A "$1" | grep -c "^[.]")" = 2 ]' sh "$sd"
	check "sweep: the links planted at NODE.json/.rc/.err replaced, the victim untouched" \
		sh -c '[ "$(cat "$1")" = victim ] && [ ! -L "$2/reg-ok.json" ] && [ ! -L "$2/reg-ok.rc" ] &&
			[ ! -e "$2/reg-ok.err" ]' sh "$work/sweep-victim" "$sd"
	check "sweep: table has the 4 nodes; READY 1, by dmabuf 1, by peermem 1" \
		sh -c 'for n in reg-ok h200 reg-no-alloc peermem-proprietary; do
			grep -q "^$n " "$1" || exit 1; done
			grep -q "^nodes:            4$" "$1" &&
			grep -q "^READY (overall):  1$" "$1" &&
			grep -q "^READY by dmabuf:  1$" "$1" &&
			grep -q "^READY by peermem: 1$" "$1"' sh "$work/sweep.out"
	check "sweep: h200 grouped under its cause with the report's fix" \
		sh -c 'n=$(grep "^h200 " "$1" | awk "{ print \$NF }") &&
			grep -A2 "^$n  1 node  nic.devices NO_RDMA_DEVICE$" "$1" >"$1.grp" &&
			grep -qx "    nodes: h200" "$1.grp" &&
			grep -qxF "    fix:   $(jq -r ".remediations[] | select(.gate == \"nic.devices\") | .text" "$2")" "$1.grp"' \
		sh "$work/sweep.out" "$sd/h200.json"
	# A node whose gdrcheck cannot start: an .rc, no JSON, a NO-REPORT row.
	SRUN="$top/tests/examples/fake-srun.sh" FAKE_SRUN_LOG="$work/srun.log" \
		FAKE_SRUN_NODES="reg-ok broken" TOP="$top" SYSROOTS="$work/sysroots" \
		GDRCHECK="$top/tests/examples/scenario-gdrcheck.sh" \
		examples/slurm/sweep.sh -d "$work/sweep/run2" >"$work/sweep2.out" 2>&1
	rc=$?
	check "sweep: a node that cannot run gdrcheck: exit 1, NO-REPORT row" \
		sh -c '[ "$1" = 1 ] && grep -q "^broken  *NO-REPORT" "$2" &&
			[ ! -e "$3/broken.json" ] && [ "$(cat "$3/broken.rc")" != 0 ]' \
		sh "$rc" "$work/sweep2.out" "$work/sweep/run2"
elif [ $sweep_ok = 0 ]; then
	bad "sweep: a scenario sysroot did not build: $(cat "$work"/mksysroot.*.log)"
fi

# ----------------------------------------------------------------------- 5. gate
gate=examples/ci-gate/gdrcheck-gate.sh
# run_gate SCENARIO ARCHIVE [GATE OPTION...]: the gate on a scenario's sysroot
# with the doubles; stdout to $work/gate.out, stderr to $work/gate.err.
run_gate() {
	sc=$1
	arch=$2
	shift 2
	sysroot "$sc" || return 99
	case=tests/scenarios/$sc
	cuda=/dev/null verbs=/dev/null
	[ -f "$case/cuda.conf" ] && cuda=$case/cuda.conf
	[ -f "$case/verbs.conf" ] && verbs=$case/verbs.conf
	extra=
	[ -f "$case/args" ] && extra=$(sed "s|@DOUBLES@|$doubles|g" "$case/args")
	# shellcheck disable=SC2086 # extra is a word list
	env GDRCHECK="$top/gdrcheck" ARCHIVE_DIR="$arch" GATE_HOSTNAME="node-$sc" \
		SOURCE_DATE_EPOCH=0 NO_COLOR=1 \
		FAKE_CUDA_SCENARIO="$cuda" FAKE_VERBS_SCENARIO="$verbs" \
		GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so" \
		GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so" \
		"$gate" --sysroot "$work/sysroots/$sc" $extra "$@" \
		>"$work/gate.out" 2>"$work/gate.err"
}
# quiet_line SCENARIO [OPTION...]: what gdrcheck --quiet says for it.
quiet_line() {
	sc=$1
	shift
	case=tests/scenarios/$sc
	cuda=/dev/null verbs=/dev/null
	[ -f "$case/cuda.conf" ] && cuda=$case/cuda.conf
	[ -f "$case/verbs.conf" ] && verbs=$case/verbs.conf
	extra=
	[ -f "$case/args" ] && extra=$(sed "s|@DOUBLES@|$doubles|g" "$case/args")
	# shellcheck disable=SC2086 # extra is a word list
	env SOURCE_DATE_EPOCH=0 NO_COLOR=1 \
		FAKE_CUDA_SCENARIO="$cuda" FAKE_VERBS_SCENARIO="$verbs" \
		GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so" \
		GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so" \
		./gdrcheck --quiet --sysroot "$work/sysroots/$sc" $extra "$@"
}
if [ $have_jq = 1 ]; then
	arch=$work/archive
	for t in "reg-ok 0" "h200 1" "reg-no-alloc 0" "peermem-proprietary 0" \
		"old-verbs 1" "cuda-crash 3"; do
		# shellcheck disable=SC2086 # split "scenario status"
		set -- $t
		sc=$1 want=$2
		run_gate "$sc" "$arch"
		rc=$?
		check "gate $sc: exit $want, got $rc" [ "$rc" = "$want" ]
		rep=$(ls -d "$arch/node-$sc"/*/report.json 2>/dev/null | tail -n 1)
		check "gate $sc: report archived as ARCHIVE_DIR/node-$sc/<UTC>/report.json" \
			sh -c '[ -n "$1" ] && echo "$1" | grep -qE "/node-[a-z0-9-]+/[0-9]{8}T[0-9]{6}Z(\.[0-9]+)?/report.json$" &&
				[ "$(jq -r .host.hostname "$1")" = "$2" ] &&
				[ "$(jq -r .verdict.exit_code "$1")" = "$3" ] &&
				[ "$(cat "$(dirname "$1")/exit-status")" = "$3" ]' \
			sh "$rep" "$(jq -r .host.hostname "tests/scenarios/$sc/expected.json")" "$(cat "tests/scenarios/$sc/expected.rc")"
		quiet_line "$sc" >"$work/quiet.out" 2>/dev/null
		check "gate $sc: prints the line gdrcheck --quiet prints" \
			sh -c '[ "$(wc -l <"$1")" = 1 ] && cmp -s "$1" "$2"' sh "$work/gate.out" "$work/quiet.out"
	done
	# --no-alloc on a healthy node is READY-UNPROVEN: exit 0 (issue 15).
	run_gate reg-no-alloc "$arch"
	rc=$?
	check "gate reg-no-alloc: READY-UNPROVEN is exit 0, got $rc" [ $rc = 0 ]
	run_gate cuda-hang "$arch"
	rc=$?
	check "gate cuda-hang: undecided is exit 3 by default, got $rc" [ $rc = 3 ]
	ALLOW_UNDECIDED=1 run_gate cuda-hang "$arch"
	rc=$?
	check "gate cuda-hang: ALLOW_UNDECIDED=1 passes, got $rc" [ $rc = 0 ]
	ALLOW_UNDECIDED=1 run_gate h200 "$arch"
	rc=$?
	check "gate h200: ALLOW_UNDECIDED=1 does not pass BLOCKED, got $rc" [ $rc = 1 ]
	ALLOW_UNDECIDED=yes run_gate reg-ok "$arch"
	rc=$?
	check "gate: ALLOW_UNDECIDED=yes is a usage error, got $rc" [ $rc = 2 ]
	n=$(ls -d "$arch/node-reg-no-alloc"/*/ | wc -l)
	check "gate: each run its own archive directory (2 runs of reg-no-alloc: $n)" [ "$n" = 2 ]
	# Options pass through: --require dmabuf on a node READY only by peermem.
	run_gate peermem-proprietary "$arch" --require dmabuf
	rc=$?
	check "gate peermem-proprietary --require dmabuf: exit 1, got $rc" [ $rc = 1 ]
	check "gate: --require reached gdrcheck" \
		grep -q '^gdrcheck: BLOCKED (--require dmabuf); dmabuf BLOCKED at gpu.dmabuf_attr (GPU0); peermem READY; nccl BLOCKED at data.nccl (GPU0)$' "$work/gate.out"
	# The reason on failure (stderr): only the paths --require needs.
	check "gate peermem-proprietary --require dmabuf: stderr says why, for dmabuf only" \
		sh -c 'grep -q "^gdrcheck-gate: why: dmabuf BLOCKED at gpu.dmabuf_attr (GPU0) DMABUF_NOT_SUPPORTED: DMA_BUF_SUPPORTED = 0" "$1" &&
			! grep -q "why: peermem\|why: nccl" "$1"' sh "$work/gate.err"
	run_gate h200 "$arch"
	check "gate h200: stderr gives the decisive gate, code and reason" \
		grep -qF "gdrcheck-gate: why: dmabuf BLOCKED at nic.devices (host) NO_RDMA_DEVICE: no RDMA device in /sys/class/infiniband" "$work/gate.err"
	run_gate reg-ok "$arch"
	check "gate reg-ok: READY prints no why line" sh -c '! grep -q "why:" "$1"' sh "$work/gate.err"
	run_gate reg-ok "$arch" --bogus-option
	rc=$?
	check "gate: a gdrcheck usage error is exit 2, got $rc" [ $rc = 2 ]
	for o in --quiet -q --format=text --output=/tmp/x -o --json --list-gates; do
		run_gate reg-ok "$arch" "$o"
		rc=$?
		check "gate: refuses $o (exit 2), got $rc" [ $rc = 2 ]
	done
	# Stand-ins for a gdrcheck that crashes, lies or is missing.
	mkdir -p "$work/bin"
	cat >"$work/bin/segv" <<-'EOF'
		#!/bin/sh
		while [ "$1" != --output ]; do shift; done
		echo '{"verdict": {"status": "READY", "exit_code": 0' >"$2"
		kill -SEGV $$
	EOF
	cat >"$work/bin/noreport" <<-'EOF'
		#!/bin/sh
		exit 0
	EOF
	cat >"$work/bin/liar" <<-'EOF'
		#!/bin/sh
		while [ "$1" != --output ]; do shift; done
		jq '.verdict.exit_code = 1' "$GOOD" >"$2"
		exit 0
	EOF
	cat >"$work/bin/exit5" <<-'EOF'
		#!/bin/sh
		exit 5
	EOF
	chmod +x "$work/bin"/*
	for t in "segv 4" "noreport 4" "liar 4" "exit5 4" "does-not-exist 4"; do
		# shellcheck disable=SC2086 # split "stand-in status"
		set -- $t
		GOOD=$top/tests/scenarios/reg-ok/expected.json GDRCHECK=$work/bin/$1 \
			ARCHIVE_DIR="$arch" GATE_HOSTNAME=fake "$gate" >"$work/gate.out" 2>"$work/gate.err"
		rc=$?
		check "gate: gdrcheck '$1' is exit $2 (never success), got $rc" [ "$rc" = "$2" ]
	done
	GDRCHECK=$work/bin/segv ARCHIVE_DIR="$arch" GATE_HOSTNAME=fake "$gate" >/dev/null 2>"$work/gate.err"
	check "gate: a crash is named as a signal on stderr" grep -q "died with signal 11" "$work/gate.err"
	mkdir -p "$work/ro" && : >"$work/ro/file"
	GDRCHECK=$work/bin/noreport ARCHIVE_DIR="$work/ro/file" "$gate" >/dev/null 2>&1
	rc=$?
	check "gate: an archive it cannot create is exit 4 (not 1), got $rc" [ $rc = 4 ]
	JQ=/nonexistent/jq GDRCHECK="$top/gdrcheck" ARCHIVE_DIR="$arch" "$gate" >/dev/null 2>&1
	rc=$?
	check "gate: no jq is exit 4 before running anything, got $rc" [ $rc = 4 ]
	check "gate: hostname with a slash stays one directory" \
		sh -c 'GDRCHECK="$1" ARCHIVE_DIR="$2" GATE_HOSTNAME="a/b" "$3" >/dev/null 2>&1; [ -d "$2/a_b" ]' \
		sh "$work/bin/noreport" "$arch" "$gate"
fi

# ------------------------------------------------------------------- 6. textfile
tf=examples/kubernetes/gdrcheck-textfile.sh
if sysroot reg-ok; then
	td=$work/textfile
	GDRCHECK_ONCE=1 TEXTFILE_DIR=$td NODE_NAME=node-a GDRCHECK="$top/gdrcheck" \
		GDRCHECK_ARGS="--sysroot $work/sysroots/reg-ok" \
		FAKE_CUDA_SCENARIO=tests/scenarios/reg-ok/cuda.conf \
		FAKE_VERBS_SCENARIO=tests/scenarios/reg-ok/verbs.conf \
		GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so" \
		GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so" \
		"$tf" >"$work/tf.out" 2>&1
	rc=$?
	check "textfile reg-ok: exit 0, got $rc" [ $rc = 0 ]
	check "textfile reg-ok: gdrcheck.prom has dmabuf ready, exit 0, the wrapper's metrics" \
		sh -c 'grep -q "^gdrcheck_path_ready{path=\"dmabuf\"} 1$" "$1" &&
			grep -q "^gdrcheck_exit_code{require=\"any\"} 0$" "$1" &&
			grep -q "^gdrcheck_textfile_exit_code 0$" "$1" &&
			grep -q "^gdrcheck_textfile_run_ok 1$" "$1" &&
			grep -qE "^gdrcheck_textfile_last_run_timestamp_seconds [0-9]+$" "$1"' \
		sh "$td/gdrcheck.prom"
	check "textfile: only gdrcheck.prom left in the directory" \
		sh -c '[ "$(ls -A "$1")" = gdrcheck.prom ]' sh "$td"
	check "textfile: every metric has HELP and TYPE, once" \
		sh -c 'awk "/^# TYPE/ { if (seen[\$3]++) exit 1; typed[\$3] = 1 }
			/^[a-z]/ { split(\$1, a, \"{\"); if (!typed[a[1]]) exit 1 }" "$1"' sh "$td/gdrcheck.prom"
	check "textfile: log line names the node and the verdicts" \
		grep -q "node-a: gdrcheck exit 0; dmabuf READY; peermem BLOCKED; nccl READY$" "$work/tf.out"
	# A crash replaces the metrics: no stale READY.
	printf '#!/bin/sh\nkill -SEGV $$\n' >"$work/tf-segv"
	chmod +x "$work/tf-segv"
	GDRCHECK_ONCE=1 TEXTFILE_DIR=$td GDRCHECK="$work/tf-segv" "$tf" >/dev/null 2>&1
	rc=$?
	check "textfile: a crash is exit 139, got $rc" [ $rc = 139 ]
	check "textfile: after a crash only the wrapper's metrics, exit code 139, run_ok 0" \
		sh -c '! grep -q "^gdrcheck_path_ready" "$1" && grep -q "^gdrcheck_textfile_exit_code 139$" "$1" &&
			grep -q "^gdrcheck_textfile_run_ok 0$" "$1" &&
			[ "$(ls -A "$2")" = gdrcheck.prom ]' sh "$td/gdrcheck.prom" "$td"
	# A hung run: killed at TEXTFILE_BUDGET, the last READY replaced by the
	# wrapper's metrics (exit 124, run_ok 0); --deadline BUDGET-5 passed
	# where --help lists it.
	GDRCHECK_ONCE=1 TEXTFILE_DIR=$td NODE_NAME=node-a GDRCHECK="$top/gdrcheck" \
		GDRCHECK_ARGS="--sysroot $work/sysroots/reg-ok" \
		FAKE_CUDA_SCENARIO=tests/scenarios/reg-ok/cuda.conf \
		FAKE_VERBS_SCENARIO=tests/scenarios/reg-ok/verbs.conf \
		GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so" \
		GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so" \
		"$tf" >/dev/null 2>&1
	printf '#!/bin/sh\nif [ "$1" = --help ]; then echo "  --deadline SECONDS"; exit 0; fi\necho "$*" >"$ARGS_LOG"\necho "gdrcheck_ready 1"\nexec sleep 300\n' >"$work/tf-hang"
	chmod +x "$work/tf-hang"
	t0=$(date +%s)
	ARGS_LOG=$work/tf-hang.args GDRCHECK_ONCE=1 TEXTFILE_DIR=$td TEXTFILE_BUDGET=10 \
		GDRCHECK="$work/tf-hang" "$tf" >/dev/null 2>&1
	rc=$?
	t1=$(date +%s)
	check "textfile: a hang ends at TEXTFILE_BUDGET=10 (+kill): exit 124, took $((t1 - t0)) s" \
		sh -c '[ "$1" = 124 ] && [ "$2" -le 16 ]' sh "$rc" "$((t1 - t0))"
	check "textfile: after a hang no stale READY: wrapper metrics only, exit 124, run_ok 0" \
		sh -c '! grep -q "^gdrcheck_ready\|^gdrcheck_path" "$1" &&
			grep -q "^gdrcheck_textfile_exit_code 124$" "$1" && grep -q "^gdrcheck_textfile_run_ok 0$" "$1" &&
			[ "$(ls -A "$2")" = gdrcheck.prom ]' sh "$td/gdrcheck.prom" "$td"
	check "textfile: the hang got --deadline 5 and --no-alloc (the default GDRCHECK_ARGS)" \
		grep -qx -- "--format prometheus --deadline 5 --no-alloc" "$work/tf-hang.args"
	# The loop: TERM ends it promptly, no temporary file left.
	GDRCHECK_INTERVAL=100 TEXTFILE_DIR=$td GDRCHECK="$work/bin/exit5" "$tf" >/dev/null 2>&1 &
	pid=$!
	i=0
	while ! grep -q "^gdrcheck_textfile_exit_code 5$" "$td/gdrcheck.prom" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	check "textfile loop: ran, and TERM ends it with 0, got $rc" \
		sh -c '[ "$1" = 0 ] && grep -q "^gdrcheck_textfile_exit_code 5$" "$2"' sh "$rc" "$td/gdrcheck.prom"
else
	bad "textfile: the reg-ok sysroot did not build"
fi

# ----------------------------------------------------------------- 7. prometheus
# The textfile wrapper's output through promtool, the alert rules of
# examples/prometheus against metrics rendered from real runs.
rules=examples/prometheus/gdrcheck.rules.yml
if ! command -v promtool >/dev/null 2>&1; then
	bad "prometheus: promtool is not installed (Debian package prometheus)"
else
	check "promtool check rules $rules" promtool check rules "$rules"
	check "promtool test rules examples/prometheus/gdrcheck.rules.test.yml (synthetic: each alert fires and stays quiet)" \
		sh -c 'cd examples/prometheus && promtool test rules gdrcheck.rules.test.yml'
	check "examples/prometheus/README.md shows $rules verbatim" \
		python3 -c 'import sys; r = open(sys.argv[1]).read(); d = open(sys.argv[2]).read()
sys.exit(0 if "```yaml\n" + r + "```" in d else 1)' "$rules" examples/prometheus/README.md
	nodes_arg=
	for sc in reg-ok h200 acs-redirect healthy-dmabuf node-phb peermem-proprietary; do
		sysroot "$sc" || { bad "prometheus: sysroot $sc did not build"; continue; }
		case=tests/scenarios/$sc
		cuda=/dev/null verbs=/dev/null
		[ -f "$case/cuda.conf" ] && cuda=$case/cuda.conf
		[ -f "$case/verbs.conf" ] && verbs=$case/verbs.conf
		td=$work/prom/$sc
		GDRCHECK_ONCE=1 TEXTFILE_DIR=$td NODE_NAME=node-$sc GDRCHECK="$top/gdrcheck" \
			GDRCHECK_ARGS="--sysroot $work/sysroots/$sc" \
			FAKE_CUDA_SCENARIO=$cuda FAKE_VERBS_SCENARIO=$verbs \
			GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so" \
			GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so" \
			"$tf" >"$work/tf.out" 2>&1
		rc=$?
		check "prometheus $sc: textfile wrapper exit $(cat "$case/expected.rc"), got $rc" \
			[ "$rc" = "$(cat "$case/expected.rc")" ]
		check "prometheus $sc: promtool check metrics accepts gdrcheck.prom" \
			sh -c 'promtool check metrics <"$1"' sh "$td/gdrcheck.prom"
		env FAKE_CUDA_SCENARIO=$cuda FAKE_VERBS_SCENARIO=$verbs \
			GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so" \
			GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so" \
			./gdrcheck --sysroot "$work/sysroots/$sc" --json >"$work/prom/$sc.json" 2>/dev/null
		nodes_arg="$nodes_arg node-$sc=$td/gdrcheck.prom:$work/prom/$sc.json"
	done
	# A run that left no report: only the wrapper's metrics.
	printf '#!/bin/sh\nkill -SEGV $$\n' >"$work/prom-segv"
	chmod +x "$work/prom-segv"
	GDRCHECK_ONCE=1 TEXTFILE_DIR=$work/prom/crash GDRCHECK="$work/prom-segv" "$tf" >/dev/null 2>&1
	check "prometheus crash: promtool check metrics accepts the wrapper-only file" \
		sh -c 'promtool check metrics <"$1"' sh "$work/prom/crash/gdrcheck.prom"
	nodes_arg="$nodes_arg node-crash=$work/prom/crash/gdrcheck.prom"
	# shellcheck disable=SC2086 # nodes_arg is a word list
	python3 tests/examples/prom-rules.py "$rules" "$work" $nodes_arg >"$work/prom-rules.log" 2>&1
	cat "$work/prom-rules.log"
	p=$(sed -nE 's/^prom-rules subtotal ([0-9]+) passed, ([0-9]+) failed$/\1/p' "$work/prom-rules.log")
	f=$(sed -nE 's/^prom-rules subtotal ([0-9]+) passed, ([0-9]+) failed$/\2/p' "$work/prom-rules.log")
	if [ -z "$p" ]; then
		bad "prometheus: the rule checker crashed"
	else
		pass=$((pass + p))
		fail=$((fail + f))
	fi
	# Atomic: gdrcheck writes a file in TEXTFILE_DIR that the collector
	# ignores (no .prom suffix), renamed onto gdrcheck.prom when complete.
	cat >"$work/prom-spy" <<-'EOF'
		#!/bin/sh
		[ "$1" = --help ] && exit 0
		out=$(readlink "/proc/$$/fd/1")
		echo "$out" >>"$SPY_LOG"
		ls -A "$(dirname "$out")" >>"$SPY_LOG"
		echo "gdrcheck_exit_code{require=\"any\"} 0"
	EOF
	chmod +x "$work/prom-spy"
	ad=$work/prom/atomic
	mkdir -p "$ad"
	echo 'gdrcheck_exit_code{require="any"} 1' >"$ad/gdrcheck.prom"
	SPY_LOG=$work/spy.log GDRCHECK_ONCE=1 TEXTFILE_DIR=$ad \
		GDRCHECK="$work/prom-spy" "$tf" >/dev/null 2>&1
	check "textfile: gdrcheck writes into TEXTFILE_DIR under a dot name without .prom, the old file still in place" \
		sh -c 'out=$(head -n 1 "$1"); [ "$(dirname "$out")" = "$2" ] &&
			case ${out##*/} in *.prom | [!.]*) exit 1 ;; esac &&
			grep -qx gdrcheck.prom "$1"' sh "$work/spy.log" "$ad"
	check "textfile: then renamed onto gdrcheck.prom (new content, nothing else left)" \
		sh -c 'grep -qx "gdrcheck_exit_code{require=\"any\"} 0" "$1/gdrcheck.prom" &&
			[ "$(ls -A "$1")" = gdrcheck.prom ]' sh "$ad"
	# The binary's file rules: a fresh temporary name each run, links planted
	# at the old fixed name and at the target not followed, the mode kept.
	echo victim >"$work/victim"
	for pid in $(seq $$ $(($$ + 200))); do
		ln -s "$work/victim" "$ad/.gdrcheck.prom.tmp.$pid"
	done
	chmod 600 "$ad/gdrcheck.prom"
	SPY_LOG=$work/spy.log GDRCHECK_ONCE=1 TEXTFILE_DIR=$ad \
		GDRCHECK="$work/prom-spy" "$tf" >/dev/null 2>&1
	check "textfile: a fresh temporary name per run (mktemp), never the old fixed one" \
		sh -c 'a=$(grep "^/" "$1" | sed -n 1p); b=$(grep "^/" "$1" | sed -n 2p);
			[ -n "$b" ] && [ "$a" != "$b" ] && case ${b##*/} in .gdrcheck.prom.tmp.*) exit 1 ;; esac' \
		sh "$work/spy.log"
	check "textfile: the target's mode kept (600), the victim behind the planted links untouched" \
		sh -c '[ "$(stat -c %a "$1/gdrcheck.prom")" = 600 ] && [ "$(cat "$2")" = victim ] &&
			[ ! -L "$1/gdrcheck.prom" ]' sh "$ad" "$work/victim"
	rm -f "$ad"/.gdrcheck.prom.tmp.* "$ad/gdrcheck.prom"
	ln -s "$work/victim" "$ad/gdrcheck.prom"
	SPY_LOG=$work/spy.log GDRCHECK_ONCE=1 TEXTFILE_DIR=$ad \
		GDRCHECK="$work/prom-spy" "$tf" >/dev/null 2>&1
	check "textfile: a link at gdrcheck.prom is replaced by a 0644 file, not written through" \
		sh -c '[ ! -L "$1/gdrcheck.prom" ] && [ "$(stat -c %a "$1/gdrcheck.prom")" = 644 ] &&
			[ "$(cat "$2")" = victim ] && [ "$(ls -A "$1")" = gdrcheck.prom ]' sh "$ad" "$work/victim"
fi

# ------------------------------------------------ 8. kubernetes node outputs
# NFD features.d labels and the node-problem-detector plugin, from real
# gdrcheck runs on the scenario sysroots.
nfd=examples/kubernetes/gdrcheck-nfd.sh
npd=examples/kubernetes/gdrcheck-npd.sh
# scen SCENARIO CMD...: CMD with the scenario's doubles in the environment
# and GDRCHECK_ARGS pointing gdrcheck at its sysroot.
scen() {
	sc=$1
	shift
	case=tests/scenarios/$sc
	cuda=/dev/null verbs=/dev/null
	[ -f "$case/cuda.conf" ] && cuda=$case/cuda.conf
	[ -f "$case/verbs.conf" ] && verbs=$case/verbs.conf
	env GDRCHECK="$top/gdrcheck" GDRCHECK_ARGS="--sysroot $work/sysroots/$sc ${ARGS:-}" \
		SOURCE_DATE_EPOCH=0 NO_COLOR=1 \
		FAKE_CUDA_SCENARIO="$cuda" FAKE_VERBS_SCENARIO="$verbs" \
		GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so" \
		GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so" "$@"
}
if [ $have_jq = 1 ]; then
	for sc in reg-ok h200 peermem-proprietary acs-redirect cuda-crash; do
		sysroot "$sc" || { bad "nfd: sysroot $sc did not build"; continue; }
		ff=$work/nfd/$sc/features.d/gdrcheck
		scen "$sc" env FEATURES_FILE="$ff" "$nfd" >"$work/nfd.out" 2>&1
		rc=$?
		check "nfd $sc: exit $(cat "tests/scenarios/$sc/expected.rc") (gdrcheck's), got $rc" \
			[ "$rc" = "$(cat "tests/scenarios/$sc/expected.rc")" ]
		scen "$sc" sh -c './gdrcheck --json $GDRCHECK_ARGS' >"$work/nfd/$sc.json" 2>/dev/null
		check "nfd $sc: features.d file valid, labels as the report says" \
			python3 tests/examples/k8s-node.py nfd "$ff" "$work/nfd/$sc.json"
		check "nfd $sc: only the feature file in features.d (temporary one renamed)" \
			sh -c '[ "$(ls -A "$1")" = gdrcheck ]' sh "$(dirname "$ff")"
	done
	ARGS="--require dmabuf"
	scen peermem-proprietary env FEATURES_FILE="$work/nfd/req/gdrcheck" "$nfd" >/dev/null 2>&1
	rc=$?
	ARGS=
	check "nfd: --require dmabuf reaches gdrcheck (peermem-proprietary: exit 1, got $rc)" \
		sh -c '[ "$1" = 1 ] && grep -qx "gdrcheck.ready=false" "$2" &&
			grep -qx "gdrcheck.gate=gpu.dmabuf_attr" "$2" &&
			grep -qx "gdrcheck.require=dmabuf" "$2"' sh "$rc" "$work/nfd/req/gdrcheck"
	# --no-alloc (the DaemonSet's default): READY-UNPROVEN is ready, and its
	# paths are the mechanism.
	ARGS="--no-alloc"
	scen reg-ok env FEATURES_FILE="$work/nfd/noalloc/gdrcheck" "$nfd" >/dev/null 2>&1
	rc=$?
	scen reg-ok sh -c './gdrcheck --json $GDRCHECK_ARGS' >"$work/nfd/noalloc.json" 2>/dev/null
	ARGS=
	check "nfd --no-alloc (reg-ok): exit 0, ready=true, verdict READY-UNPROVEN, labels as the report says" \
		sh -c '[ "$1" = 0 ] && grep -qx "gdrcheck.verdict=READY-UNPROVEN" "$2" &&
			grep -qx "gdrcheck.ready=true" "$2" && ! grep -qx "gdrcheck.mechanism=none" "$2" &&
			python3 tests/examples/k8s-node.py nfd "$2" "$3"' \
		sh "$rc" "$work/nfd/noalloc/gdrcheck" "$work/nfd/noalloc.json"
	# The binary's file rules: links at the old fixed temporary names and at
	# the target are not written through; the target's mode is kept.
	nd=$work/nfd/links
	mkdir -p "$nd"
	echo victim >"$work/nfd-victim"
	for pid in $(seq $$ $(($$ + 200))); do
		ln -s "$work/nfd-victim" "$nd/.gdrcheck.tmp.$pid"
	done
	ln -s "$work/nfd-victim" "$nd/gdrcheck"
	FEATURES_FILE="$nd/gdrcheck" "$nfd" --from tests/scenarios/h200/expected.json >/dev/null 2>&1
	check "nfd: links planted at the temporary names and the target: victim untouched, a 0644 file written" \
		sh -c '[ "$(cat "$1")" = victim ] && [ ! -L "$2/gdrcheck" ] &&
			[ "$(stat -c %a "$2/gdrcheck")" = 644 ] && grep -qx gdrcheck.ready=false "$2/gdrcheck" &&
			[ "$(ls -A "$2" | grep -vc "^[.]gdrcheck[.]tmp[.]")" = 1 ]' sh "$work/nfd-victim" "$nd"
	chmod 600 "$nd/gdrcheck"
	FEATURES_FILE="$nd/gdrcheck" "$nfd" --from tests/scenarios/reg-ok/expected.json >/dev/null 2>&1
	check "nfd: the feature file's mode kept (600, was widened to 644)" \
		sh -c '[ "$(stat -c %a "$1")" = 600 ] && grep -qx gdrcheck.ready=true "$1"' sh "$nd/gdrcheck"
	ff=$work/nfd/crash/gdrcheck
	printf 'gdrcheck.ready=true\n' >"$work/nfd-stale" && mkdir -p "$work/nfd/crash" &&
		cp "$work/nfd-stale" "$ff"
	printf '#!/bin/sh\nkill -SEGV $$\n' >"$work/nfd-segv"
	chmod +x "$work/nfd-segv"
	GDRCHECK="$work/nfd-segv" FEATURES_FILE="$ff" "$nfd" >/dev/null 2>&1
	rc=$?
	check "nfd crash: exit 4, got $rc; a stale ready=true replaced by ready=false, verdict=ERROR" \
		sh -c '[ "$1" = 4 ] && python3 tests/examples/k8s-node.py nfd "$2"' sh "$rc" "$ff"
	FEATURES_FILE="$work/nfd/from/gdrcheck" "$nfd" --from tests/scenarios/h200/expected.json >/dev/null 2>&1
	rc=$?
	check "nfd --from a saved report: exit 1, labels as the report says" \
		sh -c '[ "$1" = 1 ] && python3 tests/examples/k8s-node.py nfd "$2" "$3"' \
		sh "$rc" "$work/nfd/from/gdrcheck" tests/scenarios/h200/expected.json
	FEATURES_FILE="$work/nfd/x" "$nfd" --bogus >/dev/null 2>&1
	rc=$?
	check "nfd: a bad argument exits 2, got $rc" [ $rc = 2 ]
	# The DaemonSet's loop: labels appear, TERM ends it promptly with 0.
	GDRCHECK_INTERVAL=100 GDRCHECK="$work/nfd-segv" FEATURES_FILE="$work/nfd/loop/gdrcheck" \
		"$nfd" >/dev/null 2>&1 &
	pid=$!
	i=0
	while ! [ -s "$work/nfd/loop/gdrcheck" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	check "nfd loop: wrote the file, TERM ends it with 0, got $rc" \
		sh -c '[ "$1" = 0 ] && grep -qx gdrcheck.verdict=ERROR "$2"' sh "$rc" "$work/nfd/loop/gdrcheck"
fi

check "npd: examples/kubernetes/gdrcheck-npd.json is a valid custom-plugin-monitor config" \
	python3 tests/examples/k8s-node.py npd examples/kubernetes/gdrcheck-npd.json examples/kubernetes/Dockerfile
# NPD's protocol: 0 OK, 1 NonOK, 2 Unknown; stdout the message.
for t in "reg-ok 0" "h200 1" "peermem-proprietary 0" "cuda-crash 2"; do
	# shellcheck disable=SC2086 # split "scenario status"
	set -- $t
	sysroot "$1" || continue
	scen "$1" "$npd" >"$work/npd.out" 2>"$work/npd.err"
	rc=$?
	check "npd $1: exit $2 for NPD, got $rc" [ "$rc" = "$2" ]
	quiet_line "$1" >"$work/quiet.out" 2>/dev/null
	if [ "$2" = 2 ]; then
		check "npd $1: message says undecided and carries the verdict line" \
			sh -c '[ "$(wc -l <"$1")" = 1 ] && [ "$(cat "$1")" = "gdrcheck undecided (exit 3): $(cat "$2")" ]' \
			sh "$work/npd.out" "$work/quiet.out"
	else
		check "npd $1: message is gdrcheck's verdict line, one line" \
			sh -c '[ "$(wc -l <"$1")" = 1 ] && cmp -s "$1" "$2"' sh "$work/npd.out" "$work/quiet.out"
	fi
	check "npd $1: message fits max_output_length" \
		sh -c '[ "$(wc -c <"$1")" -le "$(jq .pluginConfig.max_output_length "$2")" ]' \
		sh "$work/npd.out" examples/kubernetes/gdrcheck-npd.json
done
ARGS=--bogus-option
scen reg-ok "$npd" >"$work/npd.out" 2>&1
rc=$?
ARGS=
check "npd: a gdrcheck usage error is Unknown (2), got $rc" [ $rc = 2 ]
GDRCHECK="$work/nfd-segv" "$npd" >"$work/npd.out" 2>&1
rc=$?
check "npd: a crash is Unknown (2) and says so, got $rc" \
	sh -c '[ "$1" = 2 ] && grep -qx "gdrcheck died with signal 11" "$2"' sh "$rc" "$work/npd.out"
printf '#!/bin/sh\n[ "$1" = --help ] && exit 0\necho "$*" >"$ARGS_LOG"\nexec sleep 300\n' >"$work/npd-hang"
chmod +x "$work/npd-hang"
t0=$(date +%s)
ARGS_LOG=$work/npd-hang.args NPD_BUDGET=10 GDRCHECK="$work/npd-hang" "$npd" >"$work/npd.out" 2>&1
rc=$?
t1=$(date +%s)
check "npd: a hang ends within NPD_BUDGET=10 (+kill), Unknown; took $((t1 - t0)) s, exit $rc" \
	sh -c '[ "$1" = 2 ] && [ "$2" -le 14 ] && grep -q "did not finish within 10s" "$3" &&
		grep -q -- "--quiet --timeout 1 --no-alloc$" "$4"' \
	sh "$rc" "$((t1 - t0))" "$work/npd.out" "$work/npd-hang.args"

# gdrcheck-pair.sh (the pair Job's pods): the role from JOB_COMPLETION_INDEX,
# through a stand-in gate that records its arguments, keeps a report (a
# scenario's, given one failed peer.* result: a fixture) and exits 1.
pairpod=examples/kubernetes/gdrcheck-pair.sh
cat >"$work/pair-gate" <<-EOF
	#!/bin/sh
	echo "\$*" >"$work/pair-gate.args"
	mkdir -p "\$ARCHIVE_DIR/\$GATE_HOSTNAME/20260101T000000Z"
	jq '.results += [{gate: "peer.connect", subject: "rail 0", status: "BLOCKED",
		reason_code: "QP_RETRY_EXCEEDED", reason: "no answer from the far NIC"}]' \
		"$top/tests/scenarios/reg-ok/expected.json" \
		>"\$ARCHIVE_DIR/\$GATE_HOSTNAME/20260101T000000Z/report.json"
	exit 1
EOF
chmod +x "$work/pair-gate"
pairenv() {
	env GATE="$work/pair-gate" ARCHIVE_DIR="$work/pair-archive" GATE_HOSTNAME=node-a \
		PAIR_DNS_WAIT=1 "$@"
}
pairenv JOB_COMPLETION_INDEX=0 "$pairpod" --deadline 5 >"$work/pair.out" 2>&1
rc=$?
check "pair pod index 0: gate --listen 18515 --deadline 5, the gate's exit 1, the failed peer.* result printed" \
	sh -c '[ "$1" = 1 ] && [ "$(cat "$2")" = "--listen 18515 --deadline 5" ] &&
		grep -qx "gdrcheck-pair: rail 0: peer.connect BLOCKED QP_RETRY_EXCEEDED: no answer from the far NIC" "$3"' \
	sh "$rc" "$work/pair-gate.args" "$work/pair.out"
pairenv JOB_COMPLETION_INDEX=1 PAIR_LISTENER=localhost PAIR_PORT=9000 "$pairpod" >"$work/pair.out" 2>&1
rc=$?
check "pair pod index 1: gate --peer localhost:9000, exit 1" \
	sh -c '[ "$1" = 1 ] && [ "$(cat "$2")" = "--peer localhost:9000" ]' sh "$rc" "$work/pair-gate.args"
rm -f "$work/pair-gate.args"
pairenv JOB_COMPLETION_INDEX=1 PAIR_LISTENER=no-such-host.invalid "$pairpod" >"$work/pair.out" 2>&1
rc=$?
check "pair pod index 1, the listener never resolves: exit 3 after PAIR_DNS_WAIT, no gate run" \
	sh -c '[ "$1" = 3 ] && grep -q "does not resolve" "$2" && [ ! -e "$3" ]' \
	sh "$rc" "$work/pair.out" "$work/pair-gate.args"
pairenv JOB_COMPLETION_INDEX=2 "$pairpod" >"$work/pair.out" 2>&1
rc=$?
check "pair pod index 2: usage, exit 2" sh -c '[ "$1" = 2 ] && [ ! -e "$2" ]' sh "$rc" "$work/pair-gate.args"

# The same pods with the real gate and the real gdrcheck --listen/--peer on
# healthy-dmabuf (doubles), two processes over 127.0.0.1: the double
# connects the QPs but carries no data between processes, so every rail
# must end in QP_RETRY_EXCEEDED on both sides, exit 1, printed by the pod.
if ./gdrcheck --help 2>/dev/null | grep -q -- --listen && sysroot healthy-dmabuf; then
	hd=$top/tests/scenarios/healthy-dmabuf
	cat >"$work/pair-gd" <<-EOF
		#!/bin/sh
		exec env FAKE_CUDA_SCENARIO="$hd/cuda.conf" FAKE_VERBS_SCENARIO="$hd/verbs.conf" \\
			FAKE_SYSROOT="$work/sysroots/healthy-dmabuf" \\
			GDRCHECK_LIBCUDA="$doubles/libcuda-fake.so" GDRCHECK_LIBIBVERBS="$doubles/libibverbs-fake.so" \\
			"$top/gdrcheck" --sysroot "$work/sysroots/healthy-dmabuf" "\$@"
	EOF
	chmod +x "$work/pair-gd"
	pport=$((23000 + $$ % 9000))
	realpair() {
		env GATE="$top/examples/ci-gate/gdrcheck-gate.sh" GDRCHECK="$work/pair-gd" \
			ARCHIVE_DIR="$work/pair-real" GDRCHECK_PEER_TOKEN=pair-test PAIR_PORT=$pport "$@"
	}
	realpair JOB_COMPLETION_INDEX=0 GATE_HOSTNAME=node-a "$pairpod" --deadline 30 >"$work/pair-a.out" 2>&1 &
	apid=$!
	realpair JOB_COMPLETION_INDEX=1 GATE_HOSTNAME=node-b PAIR_LISTENER=127.0.0.1 "$pairpod" --deadline 30 \
		>"$work/pair-b.out" 2>&1
	brc=$?
	wait $apid
	arc=$?
	check "pair pods, real two-node mode through the gate: both exit 1, reports archived, QP_RETRY_EXCEEDED printed on GPU0" \
		sh -c '[ "$1" = 1 ] && [ "$2" = 1 ] &&
			for n in a b; do
				grep -q "^gdrcheck-pair: GPU0: peer.connect BLOCKED QP_RETRY_EXCEEDED: " "$3/pair-$n.out" || exit 1
				f=$(ls "$3"/pair-real/node-$n/*/report.json) &&
				[ "$(jq -r .peer.status "$f")" = ok ] || exit 1
			done' sh "$arc" "$brc" "$work"
else
	bad "pair pods with the real gdrcheck: two-node mode not built (./gdrcheck --help lists no --listen) or no sysroot"
fi

# ------------------------------------------------------------------------ 9. nhc
# The NHC check under stand-ins of NHC's die/log/dbg, on the real gdrcheck
# and the scenario fixtures, and on stand-ins (a synthetic lost rail, a
# crash, a hang).
nhc() {
	bash tests/examples/nhc-run.bash examples/nhc/check_gdrcheck.nhc check_gdrcheck \
		-L examples/slurm "$@" >"$work/nhc.out" 2>&1
}
if [ $have_jq = 1 ]; then
	scen reg-ok sh -c 'bash tests/examples/nhc-run.bash examples/nhc/check_gdrcheck.nhc \
		check_gdrcheck -L examples/slurm -a "$GDRCHECK_ARGS"' >"$work/nhc.out" 2>&1
	rc=$?
	check "nhc reg-ok: passes (0), no die, READY-UNPROVEN (--no-alloc by default), got $rc" \
		sh -c '[ "$1" = 0 ] && ! grep -q "^DIE" "$2" && grep -qx "DBG check_gdrcheck:  READY-UNPROVEN" "$2"' \
		sh "$rc" "$work/nhc.out"
	scen reg-ok sh -c 'bash tests/examples/nhc-run.bash examples/nhc/check_gdrcheck.nhc \
		check_gdrcheck -F -L examples/slurm -a "$GDRCHECK_ARGS"' >"$work/nhc.out" 2>&1
	rc=$?
	check "nhc reg-ok -F: the full proof, READY, got $rc" \
		sh -c '[ "$1" = 0 ] && grep -qx "DBG check_gdrcheck:  READY" "$2"' sh "$rc" "$work/nhc.out"
	want=$(jq -r '.paths.dmabuf | "DIE 1 check_gdrcheck:  BLOCKED dmabuf+peermem at \(.gate) (\(.subject)) \(.reason_code): \(.summary | sub("^BLOCKED at [^:]*: "; ""))"' tests/scenarios/h200/expected.json)
	scen h200 sh -c 'bash tests/examples/nhc-run.bash examples/nhc/check_gdrcheck.nhc \
		check_gdrcheck -L examples/slurm -a "$GDRCHECK_ARGS"' >"$work/nhc.out" 2>&1
	rc=$?
	check "nhc h200: die 1 with the cause line, returns 1, got $rc" \
		sh -c '[ "$1" = 1 ] && [ "$(cat "$2")" = "$3" ]' sh "$rc" "$work/nhc.out" "$want"
	scen cuda-crash sh -c 'bash tests/examples/nhc-run.bash examples/nhc/check_gdrcheck.nhc \
		check_gdrcheck -L examples/slurm -a "$GDRCHECK_ARGS"' >"$work/nhc.out" 2>&1
	rc=$?
	check "nhc cuda-crash (exit 3): logged, not a node failure, got $rc" \
		sh -c '[ "$1" = 0 ] && ! grep -q "^DIE" "$2" &&
			grep -q "^LOG check_gdrcheck:  not judged, node left as is: gdrcheck undecided (exit 3): " "$2"' \
		sh "$rc" "$work/nhc.out"
	scen cuda-crash sh -c 'bash tests/examples/nhc-run.bash examples/nhc/check_gdrcheck.nhc \
		check_gdrcheck -U -L examples/slurm -a "$GDRCHECK_ARGS"' >"$work/nhc.out" 2>&1
	rc=$?
	check "nhc cuda-crash -U: die 1 'ERROR gdrcheck undecided', got $rc" \
		sh -c '[ "$1" = 1 ] && grep -q "^DIE 1 check_gdrcheck:  ERROR gdrcheck undecided (exit 3)" "$2"' \
		sh "$rc" "$work/nhc.out"
	# A lost rail (synthetic report of the topo.rails gate): the port named.
	jq '.require = "nccl" | .require_source = "auto" | .verdict = {status: "BLOCKED", exit_code: 1}
		| .paths.nccl = {verdict: "BLOCKED", gate: "topo.rails", subject: "GPU3",
			reason_code: "RAIL_LOST", ready: [],
			summary: "BLOCKED at topo.rails (GPU3): GPU3 lost rail mlx5_6/1: port DOWN (Polling); NCCL uses mlx5_7/1 instead"}' \
		tests/scenarios/reg-ok/expected.json >"$work/nhc-rail.json"
	cat >"$work/nhc-synth" <<-'EOF'
		#!/bin/sh
		[ "$1" = --help ] && exit 0
		echo "$*" >"$ARGS_LOG"
		while [ "$1" != --output ]; do shift; done
		cp "$SYNTH" "$2"
		exit "$(jq .verdict.exit_code "$SYNTH")"
	EOF
	chmod +x "$work/nhc-synth"
	SYNTH=$work/nhc-rail.json ARGS_LOG=$work/nhc.args nhc -g "$work/nhc-synth" -a "--require nccl"
	rc=$?
	check "nhc lost rail: die 1 naming GPU3's port mlx5_6/1, got $rc" \
		sh -c '[ "$1" = 1 ] && [ "$(cat "$2")" = "DIE 1 check_gdrcheck:  BLOCKED nccl at topo.rails (GPU3) RAIL_LOST: GPU3 lost rail mlx5_6/1: port DOWN (Polling); NCCL uses mlx5_7/1 instead" ]' \
		sh "$rc" "$work/nhc.out"
	check "nhc: gdrcheck got --json --no-alloc, -a's options and --timeout (25-5)/4 (no --deadline in --help)" \
		grep -qx -- "--json --no-alloc --require nccl --timeout 5 --output .*/report.json" "$work/nhc.args"
	nhc -g "$work/nfd-segv"
	rc=$?
	check "nhc crash: logged with the signal, passes, got $rc" \
		sh -c '[ "$1" = 0 ] && grep -q "^LOG .*gdrcheck died with signal 11" "$2"' sh "$rc" "$work/nhc.out"
	printf '#!/bin/sh\n[ "$1" = --help ] && { echo "  --deadline SECONDS"; exit 0; }\necho "$*" >"$ARGS_LOG"\nexec sleep 300\n' >"$work/nhc-hang"
	chmod +x "$work/nhc-hang"
	t0=$(date +%s)
	ARGS_LOG=$work/nhc.args nhc -g "$work/nhc-hang" -t 10
	rc=$?
	t1=$(date +%s)
	check "nhc hang, -t 10: ends in $((t1 - t0)) s (<= 14), logged, --deadline 5 passed" \
		sh -c '[ "$1" = 0 ] && [ "$2" -le 14 ] && grep -q "^LOG .*did not finish within 10s" "$3" &&
			grep -q -- "--no-alloc --deadline 5 --output" "$4"' sh "$rc" "$((t1 - t0))" "$work/nhc.out" "$work/nhc.args"
	nhc -t 3
	rc=$?
	check "nhc: -t below 10 is a check failure, got $rc" \
		sh -c '[ "$1" = 1 ] && grep -q "^DIE 1 check_gdrcheck:  -t wants" "$2"' sh "$rc" "$work/nhc.out"
	check "examples/nhc/README.md shows the nhc.conf line" grep -q "^\* || check_gdrcheck" examples/nhc/README.md
fi

finish
