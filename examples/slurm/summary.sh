#!/bin/sh
# summary.sh: a fleet table from a directory of gdrcheck --json reports.
#
#   summary.sh [--tsv] DIR
#
# DIR holds NODE.json (gdrcheck --json) and, when the sweep wrapper wrote it,
# NODE.rc (gdrcheck's exit status on that node). No Slurm needed: it only
# reads files. One row per node:
#
#   NODE  OVERALL  MECH  DMABUF  PEERMEM  NCCL  PAIRS  EXIT  CAUSE
#
# MECH is the mechanism that works (dmabuf, peermem, dmabuf+peermem, -;
# READY-UNPROVEN, under --no-alloc, counts as working).
# DMABUF, PEERMEM and NCCL are the path verdicts (NCCL: the mechanism NCCL
# itself would pick, which --require auto demands where NCCL is installed),
# with the decisive gate after '@' when the path is not READY. PAIRS counts the distinct GPU x RDMA port
# pairs READY by either path. EXIT is the recorded exit status (NODE.rc),
# else the report's own. A node with an .rc but no readable JSON (gdrcheck
# crashed, or the file is empty or not JSON) gets OVERALL NO-REPORT.
# CAUSE numbers the node's cause group: after the table, the nodes that are
# not READY are grouped by cause (the decisive gates and reason codes,
# cause.jq; the subjects differ from node to node) and fix (one code can need
# different fixes), largest group first,
# each with its nodes and the fix. Then the counts: nodes, READY overall,
# READY-UNPROVEN (--no-alloc: ready as far as can be seen; counted apart,
# not as a failure), READY by dmabuf, by peermem, by both, by nccl,
# BLOCKED, UNKNOWN, NO-REPORT.
#
# --tsv prints tab-separated rows instead (header first: node overall dmabuf
# dmabuf_gate peermem peermem_gate dmabuf_pairs peermem_pairs pairs exit
# mechanism cause_key cause fix nccl nccl_gate; cause and fix carry the
# subjects and the whole remediation text), then the counts as "# key
# value" lines.
#
# Exit: 0 every node READY (or READY-UNPROVEN), 1 some node is not (or has
# no report),
# 2 usage error or no report in DIR.
# Needs: a POSIX sh, jq, awk, sort. summary.jq and cause.jq must sit next
# to this script (or set SUMMARY_JQ, and CAUSE_DIR for cause.jq).
set -eu

JQ=${JQ:-jq}
here=$(cd "$(dirname "$0")" && pwd)
SUMMARY_JQ=${SUMMARY_JQ:-$here/summary.jq}
CAUSE_DIR=${CAUSE_DIR:-$here}

usage() {
	echo "usage: summary.sh [--tsv] DIR" >&2
	exit 2
}

tsv=0
if [ "${1:-}" = --tsv ]; then
	tsv=1
	shift
fi
[ $# -eq 1 ] || usage
dir=$1
[ -d "$dir" ] || {
	echo "summary.sh: $dir is not a directory" >&2
	exit 2
}
command -v "$JQ" >/dev/null 2>&1 || {
	echo "summary.sh: jq not found (set JQ=...)" >&2
	exit 2
}
[ -r "$SUMMARY_JQ" ] || {
	echo "summary.sh: cannot read $SUMMARY_JQ" >&2
	exit 2
}

rows=$(mktemp)
trap 'rm -f "$rows" "$rows.nodes"' EXIT

# Node names: every NODE.json and every NODE.rc, once.
for f in "$dir"/*.json "$dir"/*.rc; do
	[ -e "$f" ] || continue
	b=${f##*/}
	echo "${b%.*}"
done | sort -u >"$rows.nodes"

while IFS= read -r node; do
	rc=
	if [ -f "$dir/$node.rc" ]; then
		rc=$(tr -d ' \n\r\t' <"$dir/$node.rc")
	fi
	if [ -s "$dir/$node.json" ] &&
		row=$("$JQ" -r -L "$CAUSE_DIR" --arg node "$node" --arg rc "$rc" -f "$SUMMARY_JQ" \
			"$dir/$node.json" 2>/dev/null) && [ -n "$row" ]; then
		printf '%s\n' "$row"
	else
		printf '%s\tNO-REPORT\t-\t-\t-\t-\t0\t0\t0\t%s\t-\tno report\t%s\t%s\t-\t-\n' \
			"$node" "${rc:--}" "gdrcheck left no readable report (exit ${rc:--})" \
			"read NODE.err; run gdrcheck on the node by hand"
	fi
done <"$rows.nodes" >"$rows"

if [ ! -s "$rows" ]; then
	echo "summary.sh: no NODE.json or NODE.rc in $dir" >&2
	exit 2
fi

awk -F '\t' -v tsv="$tsv" '
function cell(v, g) { return g == "-" ? v : v "@" g }
{
	n++
	node[n] = $1; overall[n] = $2
	dm[n] = cell($3, $4); pm[n] = cell($5, $6); nc[n] = cell($15, $16)
	pairs[n] = $9; ex[n] = $10; mech[n] = $11; line[n] = $0
	count[$2]++
	if ($3 == "READY") dmabuf_ready++
	if ($5 == "READY") peermem_ready++
	if ($3 == "READY" && $5 == "READY") both_ready++
	if ($15 == "READY") nccl_ready++
	if ($2 != "READY" && $2 != "READY-UNPROVEN") {
		notready++
		# One group per cause and fix: one code can need different fixes
		# (data.nccl NCCL_NO_GDR: a level, NCCL_NET_GDR_C2C, a mechanism).
		g = $12 SUBSEP $14
		if (!(g in members)) { keys[++nkeys] = g; causeof[g] = $12; fixof[g] = $14 }
		members[g] = members[g] (members[g] == "" ? "" : ", ") $1
		size[g]++
		key[n] = g
	}
}
END {
	if (tsv) {
		print "node\toverall\tdmabuf\tdmabuf_gate\tpeermem\tpeermem_gate\tdmabuf_pairs\tpeermem_pairs\tpairs\texit\tmechanism\tcause_key\tcause\tfix\tnccl\tnccl_gate"
		for (i = 1; i <= n; i++) print line[i]
		printf "# nodes %d\n# ready %d\n# ready_unproven %d\n# ready_dmabuf %d\n# ready_peermem %d\n# ready_both %d\n# ready_nccl %d\n# blocked %d\n# unknown %d\n# no_report %d\n# causes %d\n",
			n, count["READY"], count["READY-UNPROVEN"], dmabuf_ready, peermem_ready, both_ready, nccl_ready,
			count["BLOCKED"], count["UNKNOWN"], count["NO-REPORT"], nkeys
		exit (notready > 0)
	}
	# Cause groups, largest first (then by key): a stable insertion sort.
	for (i = 2; i <= nkeys; i++) {
		k = keys[i]
		for (j = i - 1; j >= 1 && (size[keys[j]] < size[k] ||
			(size[keys[j]] == size[k] && keys[j] > k)); j--)
			keys[j + 1] = keys[j]
		keys[j + 1] = k
	}
	for (i = 1; i <= nkeys; i++) num[keys[i]] = i
	w1 = 4; w2 = 7; w3 = 6; w4 = 7; w5 = 4; w6 = 4
	for (i = 1; i <= n; i++) {
		if (length(node[i]) > w1) w1 = length(node[i])
		if (length(overall[i]) > w2) w2 = length(overall[i])
		if (length(dm[i]) > w3) w3 = length(dm[i])
		if (length(pm[i]) > w4) w4 = length(pm[i])
		if (length(mech[i]) > w5) w5 = length(mech[i])
		if (length(nc[i]) > w6) w6 = length(nc[i])
	}
	fmt = "%-" w1 "s  %-" w2 "s  %-" w5 "s  %-" w3 "s  %-" w4 "s  %-" w6 "s  %5s  %4s  %s\n"
	printf fmt, "NODE", "OVERALL", "MECH", "DMABUF", "PEERMEM", "NCCL", "PAIRS", "EXIT", "CAUSE"
	for (i = 1; i <= n; i++)
		printf fmt, node[i], overall[i], mech[i], dm[i], pm[i], nc[i], pairs[i], ex[i],
			(i in key ? "#" num[key[i]] : "-")
	if (nkeys > 0) {
		printf "\nnot READY, by cause:\n"
		for (i = 1; i <= nkeys; i++) {
			k = keys[i]
			printf "#%d  %d node%s  %s\n", i, size[k], size[k] == 1 ? "" : "s", causeof[k]
			printf "    nodes: %s\n", members[k]
			printf "    fix:   %s\n", fixof[k]
		}
	}
	printf "\n"
	printf "nodes:            %d\n", n
	printf "READY (overall):  %d\n", count["READY"]
	printf "READY-UNPROVEN:   %d\n", count["READY-UNPROVEN"]
	printf "READY by dmabuf:  %d\n", dmabuf_ready
	printf "READY by peermem: %d\n", peermem_ready
	printf "READY by both:    %d\n", both_ready
	printf "READY by nccl:    %d\n", nccl_ready
	printf "BLOCKED:          %d\n", count["BLOCKED"]
	printf "UNKNOWN:          %d\n", count["UNKNOWN"]
	printf "NO-REPORT:        %d\n", count["NO-REPORT"]
	exit (notready > 0)
}' "$rows"
