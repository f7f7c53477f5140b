# pair-fixture.jq: a synthetic two-node report, for the pair summary's
# tests: a real one-node report (a scenario's expected.json) given the
# "peer" object and peer.* results in the shape gdrcheck --listen/--peer
# writes them (report/json.c: rail results on GPU k, the rail's ratio on
# the rail). A fixture, not gdrcheck's output:
#
#   jq --argjson spec SPEC -f pair-fixture.jq tests/scenarios/reg-ok/expected.json
#
# SPEC: {role, peer_host, exit, status (peer.status, default "ok"),
#        rails: [{rail, nic, peer_nic, ratio, mtu, peer_mtu}],
#        findings: [{gate, rail (null: the host), status, code, reason,
#                    remediation}]}
# Every gate of every rail not named in findings is PASS.
$spec as $s
# The rail gates and their PASS codes (gate/gates.def).
| {"peer.link": "LINK_MATCH", "peer.connect": "QP_CONNECTED",
   "peer.transfer": "WIRE_VERIFIED", "peer.bandwidth": "BANDWIDTH_OK"} as $pass
| ($pass | keys_unsorted) as $gates
| def finding($g; $k): [$s.findings[]? | select(.gate == $g and .rail == $k)][0];
  .peer = {
	role: $s.role, endpoint: (if $s.role == "listener" then "18515" else "\($s.peer_host):18515" end),
	status: ($s.status // "ok"), peer_host: $s.peer_host, peer_addr: "10.0.0.2:40000",
	peer_verdict: "READY", peer_summary: "dmabuf READY (exit 0)",
	verdict: (if $s.exit == 0 then "READY" else "BLOCKED" end), min_bandwidth: 0.5,
	rails: [$s.rails[]? | {
		rail, gpu: "GPU\(.rail)", nic, port: 1, peer_nic, peer_port: 1,
		gid_index: 3, peer_gid_index: 3,
		mtu: (.mtu // 4096), peer_mtu: (.peer_mtu // .mtu // 4096),
		path_mtu: ([.mtu // 4096, .peer_mtu // .mtu // 4096] | min),
		limit_gbps: 400, ratio,
		counters: {xmit: 1048576, rcv: 1048576, peer_xmit: 1048576, peer_rcv: 1048576},
		mechanisms: [{mechanism: "dmabuf", verified: true, write_ok: true,
			read_ok: true, write_verified: true, read_verified: true,
			reverse_write_verified: true, reverse_read_verified: true,
			gbps: (.ratio * 400), peer_gbps: (.ratio * 400), latency_us: 3.1}]}]}
| .results += [
	{gate: "peer.bootstrap", layer: "peer", subject: "host",
	 status: (if ($s.status // "ok") == "ok" then "PASS" else "ERROR" end),
	 reason_code: (finding("peer.bootstrap"; null).code // "PEER_CONNECTED"),
	 reason: (finding("peer.bootstrap"; null).reason // "connected to \($s.peer_host)"),
	 remediation: finding("peer.bootstrap"; null).remediation,
	 evidence: {}, duration_ms: 1}]
  + [$s.rails[]? as $r | $gates[] as $g
     | finding($g; $r.rail) as $f
     | {gate: $g, layer: "peer", subject: "GPU\($r.rail)",
	status: ($f.status // "PASS"), reason_code: ($f.code // $pass[$g]),
	reason: ($f.reason // "ok"), remediation: ($f.remediation // null),
	evidence: {rail: $r.rail}, duration_ms: 1}]
| .verdict.exit_code = $s.exit
