#!/bin/sh
# gdrcheck-gate.sh: a provisioning CI gate around gdrcheck.
#
#   gdrcheck-gate.sh [GDRCHECK OPTION]...     e.g. --require dmabuf
#
# Runs `gdrcheck --json` once (options are passed through), keeps the report
# as evidence under
#
#   $ARCHIVE_DIR/<hostname>/<UTC timestamp>/report.json
#                                          /exit-status  (gdrcheck's own)
#                                          /stderr.txt   (kept when not empty)
#
# prints the one-line verdict (the line `gdrcheck --quiet` prints, derived
# from the JSON with jq: one run cannot have both) on stdout and, when the
# gate fails, the reason on stderr, one "why:" line per path --require
# needs that is not READY (its decisive gate, subject, reason code and
# reason) and per policy violation (--every-gpu, --max-distance,
# --warn-fails), e.g.
#
#   gdrcheck-gate: why: dmabuf BLOCKED at nic.devices (host) NO_RDMA_DEVICE: no RDMA device in /sys/class/infiniband ...
#
# and exits:
#
#   0  READY (the path --require asks for works), or undecided with
#      ALLOW_UNDECIDED=1
#   1  BLOCKED
#   2  usage error (gdrcheck's, or an option this gate owns: --json,
#      --format, --quiet, --output, --list-gates, --help, --version)
#   3  undecided: a probe failed or timed out and nothing is BLOCKED
#      (gdrcheck exit 3); --no-alloc on a healthy node is READY-UNPROVEN, exit 0
#   4  no usable report: gdrcheck missing, crashed (exit > 3), or its JSON
#      is absent, unparseable or disagrees with its exit status
#
# A crash is never success, and neither is a run that left no evidence.
#
# Environment:
#   GDRCHECK         the binary (default: gdrcheck on PATH)
#   ARCHIVE_DIR      where reports are kept (default /var/log/gdrcheck)
#   GATE_HOSTNAME    the directory name for this node (default: uname -n)
#   ALLOW_UNDECIDED  1: an undecided run (exit 3) passes the gate
#   JQ               the jq binary (default: jq on PATH)
#
# Needs: a POSIX sh, jq, date, mkdir, uname.
set -eu

GDRCHECK=${GDRCHECK:-gdrcheck}
ARCHIVE_DIR=${ARCHIVE_DIR:-/var/log/gdrcheck}
ALLOW_UNDECIDED=${ALLOW_UNDECIDED:-0}
JQ=${JQ:-jq}

me=gdrcheck-gate

say() {
	printf '%s: %s\n' "$me" "$*" >&2
}

# The verdict line, as gdrcheck --quiet prints it (report/text.c).
VERDICT_JQ='"gdrcheck: \(.verdict.status) (--require "
	+ (if .require_source == "auto" then "auto: " else "" end)
	+ "\(.require))"
	+ ([.paths | to_entries[]
	    | "; \(.key) \(.value.verdict)"
	      + (if .value.gate then " at \(.value.gate) (\(.value.subject))"
		 else "" end)] | join(""))
	+ ([.results[] | select(.gate == "topo.rails" and .status == "BLOCKED")
	    | "; lost rail \(.subject) \(.evidence.nic)"
	      + (if (.evidence.port // 0) > 0 then "/\(.evidence.port)" else "" end)
	      + " (\(.evidence.cause))"] | join(""))
	+ (if .peer then "; wire \(.peer.verdict)" else "" end)
	+ (if .interrupted then "; INTERRUPTED" else "" end)'

# Why a run failed: the paths --require needs (any: dmabuf or peermem) that
# are not READY, with the gate, subject, code and reason that decided each,
# then the policy's violations, then (two-node mode) the wire's failures.
# shellcheck disable=SC2016 # $req is jq's, not the shell's
WHY_JQ='(.require // "any") as $req
	| ([(.paths // {}) | to_entries[]
	    | select((($req == "any" and .key != "nccl") or .key == $req)
		     and ((.value.verdict // "") | startswith("READY") | not))
	    | "why: \(.key) \(.value.verdict)"
	      + (if .value.gate then " at \(.value.gate) (\(.value.subject))"
		   + " \(.value.reason_code // "-")" else "" end)
	      + ": \((.value.summary // "") | sub("^[A-Z-]+ at [^:]*: "; ""))"]
	   + [(.policy.violations // [])[] | "why: policy: \(.)"]
	   + [.results[] | select(.layer == "peer"
				  and (.status == "BLOCKED" or .status == "ERROR"))
	      | "why: wire \(.status) at \(.gate) (\(.subject)) \(.reason_code): \(.reason)"])[]'

# This gate chooses the output format and file; refuse what would change them.
for arg in "$@"; do
	case $arg in
	--format | --format=* | --output | --output=* | -o* | --quiet | -q | \
		--json | -j | --list-gates | -L | --help | -h | --version | -V)
		say "option $arg is set by the gate itself; pass gdrcheck's check options only"
		exit 2
		;;
	esac
done

case $ALLOW_UNDECIDED in
0 | 1) ;;
*)
	say "ALLOW_UNDECIDED must be 0 or 1, not '$ALLOW_UNDECIDED'"
	exit 2
	;;
esac

if ! command -v "$JQ" >/dev/null 2>&1; then
	say "jq not found (set JQ=...): cannot read the report"
	exit 4
fi

host=${GATE_HOSTNAME:-$(uname -n)}
# One path component, whatever the hostname holds.
host=$(printf '%s' "$host" | tr -c 'A-Za-z0-9._-' '_')
[ -n "$host" ] || host=unknown-host
stamp=$(date -u +%Y%m%dT%H%M%SZ)

# Every failure of the gate itself is exit 4, never 1 (BLOCKED) from set -e.
if ! mkdir -p "$ARCHIVE_DIR/$host" 2>/dev/null; then
	say "cannot create $ARCHIVE_DIR/$host"
	exit 4
fi
# A second run within the same second gets its own directory.
dir="$ARCHIVE_DIR/$host/$stamp"
n=0
while ! mkdir "$dir" 2>/dev/null; do
	n=$((n + 1))
	if [ $n -gt 100 ]; then
		say "cannot create a report directory under $ARCHIVE_DIR/$host"
		exit 4
	fi
	dir="$ARCHIVE_DIR/$host/$stamp.$n"
done
report="$dir/report.json"

rc=0
"$GDRCHECK" --json --output "$report" "$@" 2>"$dir/stderr.txt" || rc=$?
if ! echo "$rc" >"$dir/exit-status"; then
	say "cannot write $dir/exit-status"
	exit 4
fi
if [ -s "$dir/stderr.txt" ]; then
	sed "s/^/$me: gdrcheck stderr: /" "$dir/stderr.txt" >&2
else
	rm -f "$dir/stderr.txt"
fi

case $rc in
0 | 1 | 3) ;;
2)
	say "gdrcheck usage error (exit 2); report dir $dir"
	exit 2
	;;
126 | 127)
	say "cannot run '$GDRCHECK' (exit $rc)"
	exit 4
	;;
*)
	if [ "$rc" -gt 128 ]; then
		say "gdrcheck died with signal $((rc - 128)) (exit $rc); report dir $dir"
	else
		say "gdrcheck failed with exit $rc; report dir $dir"
	fi
	exit 4
	;;
esac

# The report must exist, parse, and agree with the exit status.
if [ ! -s "$report" ] ||
	! json_rc=$("$JQ" -er '.verdict.exit_code' "$report" 2>/dev/null); then
	say "gdrcheck exited $rc but left no readable JSON report in $report"
	exit 4
fi
if [ "$json_rc" != "$rc" ]; then
	say "gdrcheck exited $rc but its report says exit_code $json_rc ($report)"
	exit 4
fi

"$JQ" -r "$VERDICT_JQ" "$report"
if [ "$rc" != 0 ]; then
	"$JQ" -r "$WHY_JQ" "$report" 2>/dev/null | while IFS= read -r line; do
		say "$line"
	done
fi
say "report archived in $report"

case $rc in
0) exit 0 ;;
1) exit 1 ;;
3)
	if [ "$ALLOW_UNDECIDED" = 1 ]; then
		say "undecided, allowed by ALLOW_UNDECIDED=1"
		exit 0
	fi
	exit 3
	;;
esac
