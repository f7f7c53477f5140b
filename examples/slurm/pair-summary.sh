#!/bin/sh
# pair-summary.sh: the table of a two-node sweep (pair-sweep.sh), and the
# bad links grouped by cause.
#
#   pair-summary.sh [--tsv] DIR
#
# DIR holds pair-L-C.listener.{json,rc} and pair-L-C.connector.{json,rc}
# (gdrcheck-pair.sh; L the listener's node, C the connector's) and, from
# pair-sweep.sh, pairs.plan ("ROUND A B HOP" lines: every pair asked for,
# so that a pair that left nothing is seen). No Slurm needed: it reads
# files only. One row per pair:
#
#   PAIR  HOP  VERDICT  L  C  CAUSE  RAILS
#
# VERDICT: GOOD (both sides exit 0, every peer.* result PASS or SKIP),
# WARN (exit 0 with a peer.* WARN, e.g. MTU_MISMATCH: the rail runs at the
# smaller MTU), BAD (a side exited non-zero, a peer.* result is BLOCKED,
# UNKNOWN or ERROR, or neither side tested a rail: nothing proven),
# MISSING (a side left no report). L and C are the two sides' exit
# statuses ("-": no .rc). CAUSE: the pair's cause groups (below). RAILS:
# per rail k, rK=CODES/RATIO, the reason codes of its peer.* results that
# are not PASS or SKIP (PASS when none; both sides', once) and the lowest
# bandwidth ratio (measured / what the slower port or PCIe link allows)
# either side measured on it.
# Then the links that are not clean, grouped by cause (the peer.* gate and
# reason code, e.g. "peer.connect QP_RETRY_EXCEEDED"), largest group
# first, each with its links ("n1-n2 rail 0 (GPU0 mlx5_0/1 <-> GPU0
# mlx5_0/1)") and the fix; a side that failed with no peer.* result
# against it is grouped by its own cause ("node: ..." from cause.jq); a
# side without a report under "no report". A node in several bad pairs is
# named at the end ("nodes in more than one bad pair"): with the ring of
# pair-sweep.sh, a node whose two pairs both fail is the suspect, not the
# links.
# --tsv: the rows tab-separated (header first), then "# cause<TAB>link<TAB>
# fix" lines, then "# key value" counts.
# Exit: 0 every pair GOOD or WARN, 1 a pair BAD, 2 a report missing (or
# none at all, or a usage error).
# Needs: a POSIX sh, jq, awk, sort. pair-summary.jq and cause.jq next to
# this script (or set PAIR_SUMMARY_JQ, and CAUSE_DIR for cause.jq).
set -eu

JQ=${JQ:-jq}
here=$(cd "$(dirname "$0")" && pwd)
PAIR_SUMMARY_JQ=${PAIR_SUMMARY_JQ:-$here/pair-summary.jq}
CAUSE_DIR=${CAUSE_DIR:-$here}

usage() {
	echo "usage: pair-summary.sh [--tsv] DIR" >&2
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
	echo "pair-summary.sh: $dir is not a directory" >&2
	exit 2
}
command -v "$JQ" >/dev/null 2>&1 || {
	echo "pair-summary.sh: jq not found (set JQ=...)" >&2
	exit 2
}
[ -r "$PAIR_SUMMARY_JQ" ] || {
	echo "pair-summary.sh: cannot read $PAIR_SUMMARY_JQ" >&2
	exit 2
}

tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.pairs" "$tmp.seen"' EXIT
: >"$tmp.pairs"
: >"$tmp.seen"

# The pairs: PAIR LNODE CNODE HOP. The plan's first, in its order (the
# files tell which node listened), then any report the plan does not name.
if [ -f "$dir/pairs.plan" ]; then
	while read -r _ a b hop; do
		[ -n "$b" ] || continue
		if [ -e "$dir/pair-$b-$a.listener.json" ] || [ -e "$dir/pair-$b-$a.listener.rc" ] ||
			[ -e "$dir/pair-$b-$a.connector.json" ] || [ -e "$dir/pair-$b-$a.connector.rc" ]; then
			echo "pair-$b-$a $b $a $hop"
		else
			echo "pair-$a-$b $a $b $hop"
		fi
	done <"$dir/pairs.plan" >>"$tmp.pairs"
fi
cut -d ' ' -f 1 "$tmp.pairs" >"$tmp.seen"
for f in "$dir"/pair-*.listener.json "$dir"/pair-*.listener.rc \
	"$dir"/pair-*.connector.json "$dir"/pair-*.connector.rc; do
	[ -e "$f" ] || continue
	p=${f##*/}
	p=${p%.*}
	p=${p%.*}
	grep -qxF "$p" "$tmp.seen" && continue
	echo "$p" >>"$tmp.seen"
	echo "$p listener connector ?" >>"$tmp.pairs"
done
if [ ! -s "$tmp.pairs" ]; then
	echo "pair-summary.sh: no pairs.plan and no pair report in $dir" >&2
	exit 2
fi

# rc_of FILE: the recorded exit status, "" when none.
rc_of() {
	if [ -f "$1" ]; then tr -d ' \n\r\t' <"$1"; fi
}
# json_of FILE: the report when it parses, else /dev/null (no report).
json_of() {
	if [ -s "$1" ] && "$JQ" -e 'type == "object"' "$1" >/dev/null 2>&1; then
		echo "$1"
	else
		echo /dev/null
	fi
}
while read -r pair lnode cnode hop; do
	base=$dir/$pair
	"$JQ" -n -r -L "$CAUSE_DIR" \
		--slurpfile L "$(json_of "$base.listener.json")" \
		--slurpfile C "$(json_of "$base.connector.json")" \
		--arg pair "${pair#pair-}" --arg hop "$hop" \
		--arg lnode "$lnode" --arg cnode "$cnode" \
		--arg lrc "$(rc_of "$base.listener.rc")" --arg crc "$(rc_of "$base.connector.rc")" \
		-f "$PAIR_SUMMARY_JQ"
done <"$tmp.pairs" >"$tmp"

awk -F '\t' -v tsv="$tsv" '
$1 == "P" {
	n++
	pair[n] = $2; hop[n] = $3; verdict[n] = $4; lrc[n] = $5; crc[n] = $6; rails[n] = $7
	count[$4]++
	# Per node: its pairs, and how many are bad (nodes known from the plan).
	if ($8 != "listener") {
		for (j = 8; j <= 9; j++) {
			if (!($j in total)) nodes[++nn] = $j
			total[$j]++
			if ($4 == "BAD" || $4 == "MISSING") nbad[$j]++
		}
	}
	next
}
$1 == "C" {
	nc++
	ckey[nc] = $2; cpair[nc] = $3; clink[nc] = $4; cfix[nc] = $5
	# One group per cause and fix.
	g = $2 SUBSEP $5
	if (!(g in size)) { keys[++nkeys] = g; causeof[g] = $2; fixof[g] = $5; id[g] = nkeys; byid[nkeys] = g }
	size[g]++
	links[g] = links[g] (links[g] == "" ? "" : "\n") $4
	if (!(($3, g) in mark)) { mark[$3, g] = 1; causes[$3] = causes[$3] " " id[g] }
}
END {
	if (tsv) {
		print "pair\thop\tverdict\tlistener_exit\tconnector_exit\trails"
		for (i = 1; i <= n; i++)
			print pair[i] "\t" hop[i] "\t" verdict[i] "\t" lrc[i] "\t" crc[i] "\t" rails[i]
		for (i = 1; i <= nc; i++) print "# cause\t" ckey[i] "\t" clink[i] "\t" cfix[i]
		for (i = 1; i <= nn; i++)
			if (nbad[nodes[i]] >= 2) print "# suspect\t" nodes[i] "\t" nbad[nodes[i]] "\t" total[nodes[i]]
		printf "# pairs %d\n# good %d\n# warn %d\n# bad %d\n# missing %d\n# causes %d\n",
			n, count["GOOD"], count["WARN"], count["BAD"], count["MISSING"], nkeys
	} else {
		for (i = 2; i <= nkeys; i++) {
			k = keys[i]
			for (j = i - 1; j >= 1 && (size[keys[j]] < size[k] ||
				(size[keys[j]] == size[k] && keys[j] > k)); j--)
				keys[j + 1] = keys[j]
			keys[j + 1] = k
		}
		for (i = 1; i <= nkeys; i++) num[keys[i]] = i
		w1 = 4; w2 = 3; w6 = 5
		for (i = 1; i <= n; i++) {
			if (length(pair[i]) > w1) w1 = length(pair[i])
			if (length(hop[i]) > w2) w2 = length(hop[i])
			c = ""
			m = split(causes[pair[i]], gs, " ")
			for (j = 1; j <= m; j++) c = c (c == "" ? "" : ",") "#" num[byid[gs[j]]]
			cs[i] = (c == "" ? "-" : c)
			if (length(cs[i]) > w6) w6 = length(cs[i])
		}
		fmt = "%-" w1 "s  %-" w2 "s  %-7s  %3s  %3s  %-" w6 "s  %s\n"
		printf fmt, "PAIR", "HOP", "VERDICT", "L", "C", "CAUSE", "RAILS"
		for (i = 1; i <= n; i++)
			printf fmt, pair[i], hop[i], verdict[i], lrc[i], crc[i], cs[i], rails[i]
		if (nkeys > 0) {
			printf "\nlinks not clean, by cause:\n"
			for (i = 1; i <= nkeys; i++) {
				k = keys[i]
				printf "#%d  %d link%s  %s\n", i, size[k], size[k] == 1 ? "" : "s", causeof[k]
				m = split(links[k], ls, "\n")
				for (j = 1; j <= m; j++) printf "    %s\n", ls[j]
				printf "    fix: %s\n", fixof[k]
			}
		}
		sus = ""
		for (i = 1; i <= nn; i++)
			if (nbad[nodes[i]] >= 2)
				sus = sus (sus == "" ? "" : ", ") nodes[i] " (" nbad[nodes[i]] " of " total[nodes[i]] " pairs bad)"
		if (sus != "") printf "\nnodes in more than one bad pair: %s\n", sus
		printf "\npairs:    %d\nGOOD:     %d\nWARN:     %d\nBAD:      %d\nMISSING:  %d\n",
			n, count["GOOD"], count["WARN"], count["BAD"], count["MISSING"]
	}
	if (count["MISSING"] > 0) exit 2
	exit (count["BAD"] > 0)
}' "$tmp"
