# pair-summary.jq: one pair of a two-node sweep (both sides' gdrcheck --json
# reports) -> tab-separated lines for pair-summary.sh.
#
#   jq -n -r -L DIR --slurpfile L LISTENER.json --slurpfile C CONNECTOR.json \
#      --arg pair PAIR --arg hop HOP --arg lnode NODE --arg cnode NODE \
#      --arg lrc EXIT --arg crc EXIT -f pair-summary.jq
#
# A side without a report gets an empty file (--slurpfile X /dev/null: $X
# is []); its EXIT is its .rc ("" when none was written).
# Lines:
#   P  pair hop verdict lrc crc rails lnode cnode
#      verdict GOOD (both exit 0, no peer.* result WARN or worse), WARN
#      (exit 0, a peer.* WARN), BAD (an exit not 0, a peer.* result
#      BLOCKED/UNKNOWN/ERROR, or no rail tested by either side: cause "no
#      rail tested"), MISSING (a side left no report);
#      rails "r0=PASS/0.93 r1=MTU_MISMATCH/0.90": per rail the codes of its
#      peer.* results that are not PASS or SKIP (both sides', once), and
#      the lowest bandwidth ratio either side measured on it ("-": none)
#   C  cause pair link fix
#      one per bad link: cause "peer.link MTU_MISMATCH" (WARN causes say
#      so: "peer.link MTU_MISMATCH (WARN)"), link "n1-n2 rail 0 (GPU0
#      mlx5_0/1 <-> GPU0 mlx5_0/1)" or the pair alone for a result on the
#      host (peer.bootstrap), fix the result's remediation ("-": none).
#      A side that failed with no peer.* result against it failed on its
#      own: cause "node: <its cause, cause.jq>", link "NODE (listener of
#      PAIR)"; a side with no report: cause "no report", link "NODE
#      (listener of PAIR, exit N)".
# A result's rail: its evidence.rail, else a number after "rail" in its
# subject, else after "GPU" at the subject's start (gdrcheck's rail results
# are on GPU k: rail k); none: the host. A rail's ratio: peer.rails[].ratio
# (measured / what the slower port or PCIe link allows), or a mechanism's.
include "cause";

def side($r; $role; $node; $rc):
	{report: ($r[0] // null), role: $role, node: $node, rc: $rc};

def rail_of:
	if (.evidence.rail | type) == "number" then .evidence.rail
	elif (.subject // "" | test("rail ?[0-9]+"; "i")) then
		(.subject | capture("rail ?(?<k>[0-9]+)"; "i").k | tonumber)
	elif (.subject // "" | test("^GPU[0-9]+")) then
		(.subject | capture("^GPU(?<k>[0-9]+)").k | tonumber)
	else null end;

def bad_status: . == "BLOCKED" or . == "UNKNOWN" or . == "ERROR";
def shown_status: bad_status or . == "WARN";

def clean: tostring | gsub("[\t\n]"; " ");

[side($L; "listener"; $lnode; $lrc), side($C; "connector"; $cnode; $crc)] as $sides
| [$sides[] | .report | select(. != null)] as $reports
# The rails both reports know, with their labels and lowest ratio.
| ([$reports[] | .peer.rails[]?] | group_by(.rail)
   | map({rail: .[0].rail,
	  # Rail k is GPU k on both sides (peer_gpu, where given, says so).
	  label: (.[0] | "GPU\(.gpu // "?" | tostring | ltrimstr("GPU")) \(.nic // "?")/\(.port // "?") <-> GPU\(.peer_gpu // .gpu // "?" | tostring | ltrimstr("GPU")) \(.peer_nic // "?")/\(.peer_port // "?")"),
	  ratio: ([.[] | .ratio, .mechanisms[]?.ratio | numbers] | min)})) as $rails
# peer.* results not PASS/SKIP, both sides', one per (rail, gate, code).
| ([$reports[] | .results[]? | select((.gate // "") | startswith("peer."))
    | select(.status | shown_status)
    | {rail: rail_of, gate, status, reason_code, remediation}]
   | unique_by([.rail, .gate, .reason_code])) as $findings
| ($sides | map(select(.report == null))) as $missing
| ($sides | map(select(.report != null and .rc != "" and .rc != "0"))) as $failed
# Both sides reported, neither tested a rail: nothing was proven.
| (($missing | length) == 0 and ($rails | length) == 0
   and ($findings | length) == 0) as $untested
| ($failed | length > 0 or ($findings | any(.status | bad_status)) or $untested) as $bad
| (if ($missing | length) > 0 then "MISSING"
   elif $bad then "BAD"
   elif ($findings | length) > 0 then "WARN"
   else "GOOD" end) as $verdict
| ([$rails[].rail] + [$findings[].rail | numbers] | unique) as $railids
| ($railids
   | map(. as $k
	 | ([$findings[] | select(.rail == $k) | .reason_code // .gate] | unique) as $codes
	 | ([$rails[] | select(.rail == $k) | .ratio][0]) as $ratio
	 | "r\($k)=\(if ($codes | length) == 0 then "PASS" else ($codes | join("+")) end)/\(if $ratio == null then "-" else ($ratio * 100 | round / 100 | tostring) end)")
   | if length == 0 then "-" else join(" ") end) as $railtext
| (["P", $pair, $hop, $verdict, ($lrc | if . == "" then "-" else . end),
    ($crc | if . == "" then "-" else . end), $railtext, $lnode, $cnode]
   | map(clean) | join("\t")),
  ($findings[]
   | . as $f
   | ["C",
      "\(.gate) \(.reason_code // "-")" + (if .status == "WARN" then " (WARN)" else "" end),
      $pair,
      (if .rail == null then $pair
       else "\($pair) rail \(.rail)"
	    + ([$rails[] | select(.rail == $f.rail) | " (\(.label))"][0] // "") end),
      (.remediation // "-")] | map(clean) | join("\t")),
  (if $untested and ($failed | length) == 0 then
     ["C", "no rail tested", $pair, $pair,
      "read both reports: no rail both sides have (--pairs, NCCL_IB_HCA, a NIC down)"]
     | map(clean) | join("\t")
   else empty end),
  ($missing[]
   | ["C", "no report", $pair,
      "\(.node) (\(.role) of \($pair), \(if .rc == "" then "never ran" else "exit \(.rc)" end))",
      "read the side's .err and srun log; run the pair by hand"] | map(clean) | join("\t")),
  (if ($findings | any(.status | bad_status)) then empty
   else $failed[]
   | .report as $r
   | ($r | cause_key) as $k
   | ["C", (if $k == "" then "node: exit \(.rc)" else "node: \($k)" end), $pair,
      "\(.node) (\(.role) of \($pair))",
      (($r | fix) | if . == "" then "-" else . end)] | map(clean) | join("\t")
   end)
