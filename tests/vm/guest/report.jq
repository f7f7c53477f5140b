# A gdrcheck JSON report: a readable summary, and checks beyond its schema
# (a jq module used by lib.sh report_checks): one line per problem, nothing
# when all is well.

# Folded results (schema 2.6: one result standing for every pair in its
# subjects) as one result per subject, as tests/unfold.py does on the host.
def unfolded:
	.results |= [.[] | if has("subjects") then (.subjects[] as $s | . + {subject: $s} | del(.subjects)) else . end];

# One line per result, per path verdict and the overall verdict.
def summary_lines:
	unfolded
	| (.results[] | "  \(.status)\t\(.gate)\t\(.subject)\t\(.reason_code): \(.reason)"),
	(.paths | to_entries[] | "  path \(.key): \(.value.summary)"),
	"  overall: \(.verdict.status), exit_code \(.verdict.exit_code)";

# The report is consistent with itself: subjects referenced exist, every
# BLOCKED result says how to fix it, no "unknown" sentinel (INT32_MIN) is
# printed as a value, every blocker is a BLOCKED result, a BLOCKED path's decisive result is one of
# its blockers, the exit code matches the overall verdict, and (with
# --require any) the overall verdict follows from the two paths.
def consistency_errors:
	unfolded
	| ([.subjects[].id]) as $ids
	| ([.results[] | select(.status == "BLOCKED") | [.gate, .subject, .reason_code]]) as $blocked
	| (if ($ids | length) != ($ids | unique | length) then "duplicate subject ids \($ids)" else empty end),
	  (.subjects[] | select(.parent != null and (.parent as $p | $ids | index($p) | not))
	   | "subject \(.id): unknown parent \(.parent)"),
	  (.subjects[] | select(.kind == "port" and .parent == null) | "port \(.id) has no parent"),
	  (.results[] | select(.subject as $s | $ids | index($s) | not)
	   | "result \(.gate): unknown subject \(.subject)"),
	  (.results[] | select(.status == "BLOCKED" and .remediation == null)
	   | "BLOCKED result \(.gate) (\(.subject)) has no remediation"),
	  (.results[] | select([(.reason // "" | tostring), (.evidence // {} | .[] | tostring)] | any(contains("-2147483648")))
	   | "result \(.gate) (\(.subject)) shows INT32_MIN (an unknown CUDA attribute printed as a number)"),
	  (.paths | to_entries[] | .key as $k | .value
	   | (.blockers[] | select([.gate, .subject, .reason_code] as $b | $blocked | index([$b]) | not)
	      | "path \($k): blocker \(.gate) (\(.subject)) \(.reason_code) is not a BLOCKED result"),
	     (select(.verdict == "BLOCKED")
	      | select([.gate, .subject, .reason_code] as $d | [.blockers[] | [.gate, .subject, .reason_code]] | index([$d]) | not)
	      | "path \($k): decisive \(.gate) (\(.subject)) is not among its blockers")),
	  ({"READY": 0, "BLOCKED": 1, "UNKNOWN": 3}[.verdict.status] as $want
	   | if .verdict.exit_code != $want then "verdict \(.verdict.status) with exit_code \(.verdict.exit_code)" else empty end),
	  (if .require == "any" and .peer == null then
		[.paths.dmabuf.verdict, .paths.peermem.verdict] as $v
		| (if ($v | index(["READY"])) then "READY" elif $v == ["BLOCKED", "BLOCKED"] then "BLOCKED" else "UNKNOWN" end) as $o
		| if .verdict.status != $o then "paths \($v) but overall \(.verdict.status)" else empty end
	   else empty end);

# Every gate id in $gates (the text of `gdrcheck --list-gates`) has at least
# one result (a gate with nothing to check still reports a SKIP); the peer
# layer's only in two-node mode (a report with a peer object).
def completeness_errors($gates):
	[.results[].gate] as $have
	| (.peer != null) as $two
	| $gates | split("\n")[] | capture("^  (?<g>[a-z]+\\.[a-z0-9_]+) ") | .g
	| select($two or (startswith("peer.") | not))
	| select(. as $g | $have | index([$g]) | not)
	| "no result for gate \(.)";

