#!/bin/sh
# summary.sh: a fleet table from a directory of gdrcheck --json reports.
#
#   summary.sh [--tsv] DIR
#
# DIR holds NODE.json (gdrcheck --json) and, when the sweep wrapper wrote it,
# NODE.rc (gdrcheck's exit status on that node). No Slurm needed: it only
# reads files. One row per node:
#
#   NODE  OVERALL  DMABUF  PEERMEM  PAIRS  EXIT
#
# DMABUF and PEERMEM are the path verdicts, with the decisive gate after
# '@' when the path is not READY. PAIRS counts the distinct GPU x RDMA port
# pairs READY by either path. EXIT is the recorded exit status (NODE.rc),
# else the report's own. A node with an .rc but no readable JSON (gdrcheck
# crashed, or the file is empty or not JSON) gets OVERALL NO-REPORT.
# Then the counts: nodes, READY overall, READY by dmabuf, READY by peermem,
# BLOCKED, UNKNOWN, NO-REPORT.
#
# --tsv prints tab-separated rows instead (header first: node overall dmabuf
# dmabuf_gate peermem peermem_gate dmabuf_pairs peermem_pairs pairs exit),
# then the counts as "# key value" lines.
#
# Exit: 0 every node READY, 1 some node is not (or has no report),
# 2 usage error or no report in DIR.
# Needs: a POSIX sh, jq, awk, sort. summary.jq must sit next to this script
# (or set SUMMARY_JQ).
set -eu

JQ=${JQ:-jq}
here=$(cd "$(dirname "$0")" && pwd)
SUMMARY_JQ=${SUMMARY_JQ:-$here/summary.jq}

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
		row=$("$JQ" -r --arg node "$node" --arg rc "$rc" -f "$SUMMARY_JQ" \
			"$dir/$node.json" 2>/dev/null) && [ -n "$row" ]; then
		printf '%s\n' "$row"
	else
		printf '%s\tNO-REPORT\t-\t-\t-\t-\t0\t0\t0\t%s\n' "$node" "${rc:--}"
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
	dm[n] = cell($3, $4); pm[n] = cell($5, $6)
	pairs[n] = $9; ex[n] = $10; line[n] = $0
	count[$2]++
	if ($3 == "READY") dmabuf_ready++
	if ($5 == "READY") peermem_ready++
	if ($3 == "READY" && $5 == "READY") both_ready++
	if ($2 != "READY") notready++
}
END {
	if (tsv) {
		print "node\toverall\tdmabuf\tdmabuf_gate\tpeermem\tpeermem_gate\tdmabuf_pairs\tpeermem_pairs\tpairs\texit"
		for (i = 1; i <= n; i++) print line[i]
		printf "# nodes %d\n# ready %d\n# ready_dmabuf %d\n# ready_peermem %d\n# ready_both %d\n# blocked %d\n# unknown %d\n# no_report %d\n",
			n, count["READY"], dmabuf_ready, peermem_ready, both_ready,
			count["BLOCKED"], count["UNKNOWN"], count["NO-REPORT"]
	} else {
		w1 = 4; w2 = 7; w3 = 6; w4 = 7
		for (i = 1; i <= n; i++) {
			if (length(node[i]) > w1) w1 = length(node[i])
			if (length(overall[i]) > w2) w2 = length(overall[i])
			if (length(dm[i]) > w3) w3 = length(dm[i])
			if (length(pm[i]) > w4) w4 = length(pm[i])
		}
		fmt = "%-" w1 "s  %-" w2 "s  %-" w3 "s  %-" w4 "s  %5s  %4s\n"
		printf fmt, "NODE", "OVERALL", "DMABUF", "PEERMEM", "PAIRS", "EXIT"
		for (i = 1; i <= n; i++)
			printf fmt, node[i], overall[i], dm[i], pm[i], pairs[i], ex[i]
		printf "\n"
		printf "nodes:            %d\n", n
		printf "READY (overall):  %d\n", count["READY"]
		printf "READY by dmabuf:  %d\n", dmabuf_ready
		printf "READY by peermem: %d\n", peermem_ready
		printf "READY by both:    %d\n", both_ready
		printf "BLOCKED:          %d\n", count["BLOCKED"]
		printf "UNKNOWN:          %d\n", count["UNKNOWN"]
		printf "NO-REPORT:        %d\n", count["NO-REPORT"]
	}
	exit (notready > 0)
}' "$rows"
