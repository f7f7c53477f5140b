# summary.jq: one gdrcheck --json report -> one tab-separated row
#
#   jq -r -L DIR --arg node NAME --arg rc EXIT -f summary.jq REPORT.json
#
#   (summary.jq includes cause.jq: run jq with -L DIR-OF-cause.jq)
#
# Columns: node, overall verdict, dmabuf verdict, dmabuf decisive gate,
# peermem verdict, peermem decisive gate, dmabuf ready pairs, peermem ready
# pairs, ready pairs (distinct GPU x port pairs READY by either path), exit,
# mechanism (the READY paths joined by "+", or "-"), cause key (decisive
# gates and reason codes, no subjects: the fleet groups by it; "-" when
# READY), cause (with subjects: "dmabuf at platform.acs (GPU0~mlx5_0)
# ACS_REDIRECT_IOMMU"), fix (the remediation of the first cause's gate),
# nccl verdict, nccl decisive gate (the path NCCL itself would take; last,
# so that scripts reading the earlier columns keep working).
# A gate is "-" when the path is READY (no gate decided against it).
# READY-UNPROVEN (--no-alloc: every gate passed, no registration proof) is
# a path that works, for the mechanism as for the cause.
# $rc is the exit status the node wrapper recorded; when empty, the report's
# own verdict.exit_code is used.
include "cause";
def gate: if . == null or . == "" then "-" else . end;
def path($p): .paths[$p] // {verdict: "-", gate: null, ready: []};

[ $node,
  (.verdict.status // "-"),
  (path("dmabuf").verdict), (path("dmabuf").gate | gate),
  (path("peermem").verdict), (path("peermem").gate | gate),
  (path("dmabuf").ready | length),
  (path("peermem").ready | length),
  ([.paths[]?.ready[]? | "\(.gpu)\t\(.port)"] | unique | length),
  (if $rc == "" then (.verdict.exit_code // "-") else $rc end),
  ([.paths | to_entries[] | select(.value.verdict | path_ready) | .key]
   | if length == 0 then "-" else join("+") end),
  (cause_key | if . == "" then "-" else . end),
  (cause_text | if . == "" then "-" else . end),
  (fix | if . == "" then "-" else . end),
  (path("nccl").verdict), (path("nccl").gate | gate)
] | map(tostring | gsub("[\t\n]"; " ")) | join("\t")
