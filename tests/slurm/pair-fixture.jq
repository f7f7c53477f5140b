# pair-fixture.jq: a synthetic two-node report, for the pair summary's
# tests: a real one-node report (a scenario's expected.json) given the
# "peer" object and peer.* results that /work/notes/peer-contract.md
# (issue 28) describes. A fixture, not gdrcheck's output:
#
#   jq --argjson spec SPEC -f pair-fixture.jq tests/scenarios/reg-ok/expected.json
#
# SPEC: {role, peer_host, exit, status (peer.status, default "ok"),
#        rails: [{rail, nic, peer_nic, ratio, mtu, peer_mtu}],
#        findings: [{gate, rail (null: the host), status, code, reason,
#                    remediation}]}
# Every gate of every rail not named in findings is PASS.
$spec as $s
| ["peer.link", "peer.connect", "peer.transfer", "peer.counters", "peer.bandwidth"] as $gates
| def finding($g; $k): [$s.findings[]? | select(.gate == $g and .rail == $k)][0];
  .peer = {
	role: $s.role, peer_host: $s.peer_host,
	endpoint: "\($s.peer_host):18515", status: ($s.status // "ok"),
	peer_verdict: "READY",
	rails: [$s.rails[]? | {
		rail, gpu: "GPU\(.rail)", nic, port: 1,
		peer_gpu: "GPU\(.rail)", peer_nic, peer_port: 1,
		mtu: (.mtu // 4096), peer_mtu: (.peer_mtu // .mtu // 4096),
		gid_index: 3, peer_gid_index: 3,
		mechanisms: [{mechanism: "dmabuf", write_ok: true, read_ok: true,
			verified: true, reverse_write_ok: true, reverse_read_ok: true,
			gbps: (.ratio * 400), limit_gbps: 400, ratio, latency_us: 3.1}],
		counters: {xmit_bytes: 1048576, rcv_bytes: 1048576,
			peer_xmit_bytes: 1048576, peer_rcv_bytes: 1048576}}]}
| .results += [
	{gate: "peer.bootstrap", layer: "peer", subject: "host",
	 status: (if ($s.status // "ok") == "ok" then "PASS" else "UNKNOWN" end),
	 reason_code: (finding("peer.bootstrap"; null).code // "PEER_CONNECTED"),
	 reason: (finding("peer.bootstrap"; null).reason // "connected to \($s.peer_host)"),
	 remediation: finding("peer.bootstrap"; null).remediation,
	 evidence: {}, duration_ms: 1}]
  + [$s.rails[]? as $r | $gates[] as $g
     | finding($g; $r.rail) as $f
     | {gate: $g, layer: "peer", subject: "rail \($r.rail)",
	status: ($f.status // "PASS"), reason_code: ($f.code // "PEER_OK"),
	reason: ($f.reason // "ok"), remediation: ($f.remediation // null),
	evidence: {rail: $r.rail}, duration_ms: 1}]
| .verdict.exit_code = $s.exit
