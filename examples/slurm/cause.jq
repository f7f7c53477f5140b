# cause.jq: why a gdrcheck --json report is not READY, from its own verdict
# fields (paths.*.verdict/gate/subject/reason_code, policy.violations,
# remediations). Shared by gdrcheck-health.sh and summary.jq:
#
#   jq -L DIR 'include "cause"; cause' REPORT.json
#
# causes: the decisive results, one object per distinct (gate, subject,
# reason_code), with the paths it decides ("dmabuf+peermem"). Only the
# paths --require asks for count (`require` is the effective policy, also
# under --require auto: "nccl" or "any"); when one of them is READY (or
# READY-UNPROVEN: --no-alloc) the node was failed by the policy
# (--every-gpu, --max-distance, --warn-fails, a lost rail) and the first
# violation is the cause. Empty for a READY node.

# A path that works: READY, or READY-UNPROVEN (--no-alloc: every gate
# passed, the registration proof was not attempted).
def path_ready: . == "READY" or . == "READY-UNPROVEN";

def required_paths:
	(.require // "any") as $req
	| [(.paths // {}) | to_entries[]
	   # "any" accepts either mechanism (dmabuf, peermem); the nccl path
	   # counts only when --require nccl asks for it.
	   | select(($req == "any" and .key != "nccl") or .key == $req)];

def causes:
	if (.verdict.exit_code // 3) == 0 then []
	else required_paths as $req
	| if ($req | length) > 0 and ($req | any(.value.verdict | path_ready))
	  then [{paths: "policy", verdict: .verdict.status, gate: "policy",
		 subject: (.policy.violations[0] // "not READY"),
		 reason_code: null}]
	  else [$req[] | select(.value.verdict | path_ready | not)
		| {path: .key, verdict: .value.verdict, gate: .value.gate,
		   subject: .value.subject, reason_code: .value.reason_code,
		   summary: .value.summary}]
	       # Group by (gate, subject, reason_code), keeping path order.
	       | reduce .[] as $x ([];
		   (map([.gate, .subject, .reason_code]
			== [$x.gate, $x.subject, $x.reason_code]) | index(true)) as $i
		   | if $i == null then . + [$x + {paths: $x.path}]
		     else .[$i].paths += "+" + $x.path end)
	       | map(del(.path))
	  end
	end;

# One line: "dmabuf+peermem at nic.devices (host) NO_RDMA_DEVICE"; a path
# verdict other than BLOCKED (UNKNOWN) is named; a path no gate decided
# (UNKNOWN: nothing was checked) gives its summary.
def cause_text:
	[causes[]
	 | if .gate == "policy" then "policy: \(.subject)"
	   elif .gate == null then "\(.paths) \(.summary // .verdict)"
	   else "\(.paths)"
		+ (if .verdict == "BLOCKED" then "" else " \(.verdict)" end)
		+ " at \(.gate) (\(.subject // "-"))"
		+ (if .reason_code then " \(.reason_code)" else "" end)
	   end]
	| join("; ");

# cause_line: cause_text and what the first cause says, after ": " (the
# reason part of its path summary, which names the port of a lost rail:
# "nccl at topo.rails (GPU3) RAIL_LOST: GPU3 lost rail mlx5_6/1: port DOWN
# (Polling); NCCL uses mlx5_7/1 instead"); a policy cause carries its
# violation already. For one-line reasons (a Slurm drain, an NHC failure).
def cause_line:
	(causes[0] // null) as $c
	| cause_text as $t
	| if $c == null or $c.gate == "policy" or $c.gate == null then $t
	  else ($c.summary // "" | sub("^[A-Z-]+ at [^ ]+ \\([^)]*\\): "; "")
		| sub("^UNKNOWN: "; "")) as $d
		| if $d == "" then $t else "\($t): \($d)" end
	  end;

# The grouping key over a fleet: gate and reason code, without subjects
# (GPU3 on one node, GPU5 on the next are one cause).
def cause_key:
	[causes[]
	 | if .gate == "policy" then "policy"
	   elif .gate == null then "\(.verdict) (no gate decided)"
	   else "\(.gate) \(.reason_code // "-")" end]
	| reduce .[] as $k ([]; if index([$k]) then . else . + [$k] end)
	| join(" + ");

# The fix: the remediation of the first cause's gate that has one (for a policy
# failure, the first remediation of the results the policy counted: a WARN
# under --warn-fails, else the first one).
def fix:
	(causes[0] // null) as $c
	| if $c == null then ""
	  elif $c.gate == "policy" then
		((.remediations // []) | (map(select(.status == "WARN"))[0] // .[0])
		 | .text // "")
	  else (.remediations // []) as $r
		| [causes[].gate as $g | $r[] | select(.gate == $g) | .text][0] // ""
	  end;
