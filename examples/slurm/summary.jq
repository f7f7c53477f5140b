# summary.jq: one gdrcheck --json report -> one tab-separated row
#
#   jq -r --arg node NAME --arg rc EXIT -f summary.jq REPORT.json
#
# Columns: node, overall verdict, dmabuf verdict, dmabuf decisive gate,
# peermem verdict, peermem decisive gate, dmabuf ready pairs, peermem ready
# pairs, ready pairs (distinct GPU x port pairs READY by either path), exit.
# A gate is "-" when the path is READY (no gate decided against it).
# $rc is the exit status the node wrapper recorded; when empty, the report's
# own verdict.exit_code is used.
def gate: if . == null or . == "" then "-" else . end;
def path($p): .paths[$p] // {verdict: "-", gate: null, ready: []};

[ $node,
  (.verdict.status // "-"),
  (path("dmabuf").verdict), (path("dmabuf").gate | gate),
  (path("peermem").verdict), (path("peermem").gate | gate),
  (path("dmabuf").ready | length),
  (path("peermem").ready | length),
  ([.paths[]?.ready[]? | "\(.gpu)\t\(.port)"] | unique | length),
  (if $rc == "" then (.verdict.exit_code // "-") else $rc end)
] | map(tostring) | join("\t")
