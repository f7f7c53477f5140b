#!/usr/bin/env python3
"""Two-node mode (gdrcheck --listen / --peer) on one host, with the test
doubles: two gdrcheck processes over 127.0.0.1, or one against a scripted
peer that speaks the bootstrap protocol (access/peer_msg.h) and then
misbehaves.

  tests/check-peer.py        ends with "peer: N passed, N failed"

What the doubles can and cannot show: the libibverbs double moves data only
inside one process (a QP connected to itself), so two gdrcheck processes
get as far as connected QPs and then no answer from the far end
(IBV_WC_RETRY_EXC_ERR), which both sides must classify as such. Verified
transfers, counters and bandwidth between two real soft-RoCE devices are
the VM harness's cases (tests/vm/cases/*peer*).

Needs ./gdrcheck and the doubles (make gdrcheck doubles).
"""
import hashlib
import hmac
import json
import os
import shutil
import socket
import struct
import tarfile
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GDRCHECK = os.environ.get("GDRCHECK_BIN") or os.path.join(TOP, "gdrcheck")
DOUBLES = os.path.join(TOP, "tests", "doubles")
CASE = os.path.join(TOP, "tests", "scenarios", "healthy-dmabuf")
passed = failed = 0
port_base = 20000 + os.getpid() % 20000


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS {name}")
    else:
        failed += 1
        print(f"FAIL {name}{': ' + detail if detail else ''}")


def next_port():
    global port_base
    port_base += 1
    return port_base


def env_for(work, verbs_conf=None, extra=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NCCL_", "GDRCHECK_", "FAKE_", "SLURM_"))}
    env.update(NO_COLOR="1", SOURCE_DATE_EPOCH="0", HOME="/home/gdrcheck",
               FAKE_CUDA_SCENARIO=os.path.join(CASE, "cuda.conf"),
               FAKE_VERBS_SCENARIO=verbs_conf or os.path.join(CASE, "verbs.conf"),
               FAKE_SYSROOT=os.path.join(work, "sysroot"),
               GDRCHECK_LIBCUDA=os.path.join(DOUBLES, "libcuda-fake.so"),
               GDRCHECK_LIBIBVERBS=os.path.join(DOUBLES, "libibverbs-fake.so"))
    env.update(extra or {})
    return env


def gdrcheck(work, args, env):
    return subprocess.Popen(
        [GDRCHECK, "--sysroot", os.path.join(work, "sysroot"), "--libcuda",
         env["GDRCHECK_LIBCUDA"], "--json"] + args, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(p, timeout=60):
    out, err = p.communicate(timeout=timeout)
    try:
        rep = json.loads(out)
    except ValueError:
        rep = None
    return p.returncode, rep, err


def peer_results(rep, gate=None):
    return [r for r in rep["results"] if r["gate"].startswith("peer.")
            and (gate is None or r["gate"] == gate)]


def codes(rep, gate):
    return {(r["subject"], r["status"], r["reason_code"])
            for r in peer_results(rep, gate)}


def pair(work, lenv, cenv, largs=(), cargs=()):
    port = next_port()
    lp = gdrcheck(work, ["--listen", f"127.0.0.1:{port}", "--deadline", "20"]
                  + list(largs), lenv)
    time.sleep(0.3)
    cp = gdrcheck(work, ["--peer", f"127.0.0.1:{port}", "--deadline", "20"]
                  + list(cargs), cenv)
    return finish(cp), finish(lp)


# --- a scripted peer: the protocol from the connector's point of view -----

def msg(mtype, fields):
    body = b""
    for tag, val in fields:
        body += struct.pack(">HH", tag, len(val)) + val
    return struct.pack(">IHHI", 0x47445250, 1, mtype, len(body)) + body


def fields_of(body):
    out, off = {}, 0
    while off < len(body):
        tag, n = struct.unpack_from(">HH", body, off)
        out[tag] = body[off + 4:off + 4 + n]
        off += 4 + n
    return out


def recv_msg(sock):
    hdr = b""
    while len(hdr) < 12:
        chunk = sock.recv(12 - len(hdr))
        if not chunk:
            return None, None
        hdr += chunk
    _, _, mtype, n = struct.unpack(">IHHI", hdr)
    body = b""
    while len(body) < n:
        chunk = sock.recv(n - len(body))
        if not chunk:
            return None, None
        body += chunk
    return mtype, fields_of(body)


HELLO, CHALLENGE, PROOF, ENDPOINT, RESULT, ERROR, BYE, FINDINGS, RAIL = range(1, 10)


def u32(v):
    return struct.pack(">I", v)


def scripted_listener(port, token, behaviour, ready):
    """Serve one connector: 'garbage' answers like a web server; 'gone'
    completes the handshake and the findings, then hangs up."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(1)
    srv.settimeout(20)
    ready.set()
    try:
        conn, _ = srv.accept()
    except OSError:
        srv.close()
        return
    conn.settimeout(20)
    try:
        if behaviour == "garbage":
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            time.sleep(0.5)
            return
        t, f = recv_msg(conn)
        nonce_c = f[5]
        nonce_l = os.urandom(16)
        conn.sendall(msg(CHALLENGE, [(1, nonce_l)]))
        t, f = recv_msg(conn)
        want = hmac.new(token.encode(), b"gdrcheck-peer-1" + nonce_l + nonce_c,
                        hashlib.sha256).digest()
        if t != PROOF or f.get(1) != want:
            return
        conn.sendall(msg(HELLO, [(1, struct.pack(">H", 1)),
                                 (2, struct.pack(">H", 1)),
                                 (3, b"scripted-peer"), (5, os.urandom(16))]))
        conn.sendall(msg(FINDINGS, [(1, b"scripted-peer"), (2, b"READY"),
                                    (3, b"scripted"), (4, u32(0)), (5, u32(1))]))
        gid = bytes(10) + b"\xff\xff" + bytes([10, 0, 0, 2])
        conn.sendall(msg(RAIL, [(1, u32(0)), (3, b"mlx5_0"), (4, b"\x01"),
                                (5, b"\x02"), (6, b"\x02"), (7, b"\x04"),
                                (8, gid), (9, u32(1)), (15, b"\x01")]))
        # The connector's findings, then gone (or silent) before any
        # endpoint.
        t, f = recv_msg(conn)
        for _ in range(int.from_bytes(f.get(5, b"\0\0\0\0"), "big")):
            recv_msg(conn)
        if behaviour == "stall":
            time.sleep(12)
    finally:
        conn.close()
        srv.close()


def scripted(work, behaviour, cargs=(), deadline="15"):
    port = next_port()
    ready = threading.Event()
    th = threading.Thread(target=scripted_listener,
                          args=(port, "s3cret", behaviour, ready))
    th.start()
    ready.wait(5)
    t0 = time.time()
    cp = gdrcheck(work, ["--peer", f"127.0.0.1:{port}", "--deadline", deadline]
                  + list(cargs), env_for(work, extra={"GDRCHECK_PEER_TOKEN":
                                                      "s3cret"}))
    res = finish(cp)
    scripted.elapsed = time.time() - t0
    th.join(20)
    return res


def main():
    work = tempfile.mkdtemp(prefix="gdrcheck-peer.")
    try:
        subprocess.run([sys.executable, os.path.join(TOP, "tests", "scenarios",
                                                     "mksysroot.py"),
                        os.path.join(CASE, "sysroot.spec"),
                        os.path.join(work, "sysroot")], check=True,
                       stdout=subprocess.DEVNULL)
        run_cases(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"peer: {passed} passed, {failed} failed")
    return 1 if failed else 0


def with_token(work, token, **kw):
    return env_for(work, extra={"GDRCHECK_PEER_TOKEN": token}, **kw)


def run_cases(work):
    # 1. Two gdrchecks, the doubles: connected, then no answer.
    (crc, crep, cerr), (lrc, lrep, lerr) = pair(
        work, with_token(work, "s3cret"), with_token(work, "s3cret"))
    ok = crep and lrep
    check("doubles-pair: both reports are JSON", bool(ok), cerr + lerr)
    if ok:
        check("doubles-pair: exit 1 on both", crc == 1 and lrc == 1,
              f"{crc} {lrc}")
        for side, rep in (("connector", crep), ("listener", lrep)):
            check(f"doubles-pair: {side} bootstrap PASS",
                  ("host", "PASS", "PEER_CONNECTED") in
                  codes(rep, "peer.bootstrap"), str(codes(rep, "peer.bootstrap")))
            check(f"doubles-pair: {side} links agree",
                  {c for _, _, c in codes(rep, "peer.link")} == {"LINK_MATCH"},
                  str(codes(rep, "peer.link")))
            check(f"doubles-pair: {side} says retries exceeded on GPU0",
                  ("GPU0", "BLOCKED", "QP_RETRY_EXCEEDED") in
                  codes(rep, "peer.connect"), str(codes(rep, "peer.connect")))
            check(f"doubles-pair: {side} peer object",
                  rep.get("peer", {}).get("role") == side and
                  rep["peer"]["verdict"] == "BLOCKED" and
                  rep["peer"]["peer_verdict"] == "READY" and
                  len(rep["peer"]["rails"]) == 3, json.dumps(rep.get("peer"))[:300])
            fix = [r for r in rep["remediations"]
                   if "UDP port 4791" in (r.get("text") or r.get("remediation") or "")]
            check(f"doubles-pair: {side} fix names UDP 4791", bool(fix),
                  json.dumps(rep["remediations"])[:400])

    # 2. A wrong token: refused, the listener waits on for the right one.
    (crc, crep, _), (lrc, lrep, _) = pair(
        work, with_token(work, "right"), with_token(work, "wrong"),
        largs=("--deadline", "3"))
    check("wrong-token: connector exit 3, PEER_TOKEN_REJECTED",
          crc == 3 and crep and ("host", "ERROR", "PEER_TOKEN_REJECTED") in
          codes(crep, "peer.bootstrap"), f"{crc} {crep and codes(crep, 'peer.bootstrap')}")
    check("wrong-token: listener exit 3 at its deadline, nobody reached",
          lrc == 3 and lrep and ("host", "ERROR", "PEER_NOT_REACHED") in
          codes(lrep, "peer.bootstrap"), f"{lrc} {lrep and codes(lrep, 'peer.bootstrap')}")

    # 3. Nobody listening.
    p = gdrcheck(work, ["--peer", f"127.0.0.1:{next_port()}", "--deadline",
                        "2"], with_token(work, "x"))
    rc, rep, _ = finish(p)
    check("nobody-listening: exit 3, PEER_NOT_REACHED", rc == 3 and rep and
          ("host", "ERROR", "PEER_NOT_REACHED") in codes(rep, "peer.bootstrap"),
          f"{rc}")
    check("nobody-listening: the node's own results are all there",
          rep and any(r["gate"] == "data.dmabuf" for r in rep["results"]))

    # 4. Not gdrcheck on the other end.
    rc, rep, _ = scripted(work, "garbage")
    check("garbage-peer: exit 3, PEER_PROTOCOL", rc == 3 and rep and
          ("host", "ERROR", "PEER_PROTOCOL") in codes(rep, "peer.bootstrap"),
          f"{rc} {rep and codes(rep, 'peer.bootstrap')}")

    # 5. A peer that goes away after the findings.
    rc, rep, _ = scripted(work, "gone")
    check("peer-gone: exit 3, PEER_GONE", rc == 3 and rep and
          ("host", "ERROR", "PEER_GONE") in codes(rep, "peer.bootstrap"),
          f"{rc} {rep and codes(rep, 'peer.bootstrap')}")

    # 5b. A peer that stalls after the findings: the run's deadline ends it
    # (a second early, in the transfer stage's own wait), undecided.
    rc, rep, _ = scripted(work, "stall", deadline="6")
    check("peer-stall: exit 3, PEER_TIMEOUT within the deadline",
          rc == 3 and rep and ("host", "ERROR", "PEER_TIMEOUT") in
          codes(rep, "peer.bootstrap") and scripted.elapsed < 7.5,
          f"{rc} {rep and codes(rep, 'peer.bootstrap')} {scripted.elapsed:.1f}s")

    # 6. GID type: the listener's NCCL picks a RoCE v1 GID.
    tok = os.path.join(work, "token")
    with open(tok, "w") as f:
        f.write("from-a-file\n")
    (crc, crep, _), (lrc, lrep, _) = pair(
        work, env_for(work, extra={"NCCL_IB_GID_INDEX": "0"}),
        env_for(work), largs=("--token-file", tok),
        cargs=("--token-file", tok, "--min-bandwidth", "0.1"))
    check("token-file: both sides authenticated by the file's token",
          crep and lrep and ("host", "PASS", "PEER_CONNECTED") in
          codes(crep, "peer.bootstrap") and crep["peer"]["min_bandwidth"] == 0.1,
          str(crep and codes(crep, "peer.bootstrap")))
    for side, rep in (("connector", crep), ("listener", lrep)):
        check(f"gid-type: {side} BLOCKED GID_TYPE_MISMATCH on GPU0",
              rep and ("GPU0", "BLOCKED", "GID_TYPE_MISMATCH") in
              codes(rep, "peer.link"), str(rep and codes(rep, "peer.link")))

    # 7. MTU: the listener's port runs at 4096, the connector's at 1024.
    conf = os.path.join(work, "verbs-mtu.conf")
    with open(os.path.join(CASE, "verbs.conf")) as f:
        text = f.read()
    with open(conf, "w") as f:
        f.write(text + "\ndev0.port1.active_mtu=5\n")
    (crc, crep, _), (lrc, lrep, _) = pair(
        work, env_for(work, verbs_conf=conf,
                      extra={"GDRCHECK_PEER_TOKEN": "t"}),
        with_token(work, "t"))
    for side, rep in (("connector", crep), ("listener", lrep)):
        check(f"mtu: {side} WARN MTU_MISMATCH 4096 vs 1024",
              rep and ("GPU0", "WARN", "MTU_MISMATCH") in
              codes(rep, "peer.link"), str(rep and codes(rep, "peer.link")))

    # 8. --pairs: only GPU1's rail; --redact masks the peer's name, address
    # and GIDs too.
    (crc, crep, _), _ = pair(work, with_token(work, "t"), with_token(work, "t"),
                             largs=("--pairs", "1"),
                             cargs=("--pairs", "1", "--redact", "--capture",
                                    os.path.join(work, "cap.tar.gz")))
    check("pairs: only GPU1 compared",
          crep and {s for s, st, _ in codes(crep, "peer.link")
                    if st != "SKIP"} == {"GPU1"},
          str(crep and codes(crep, "peer.link")))
    text = json.dumps(crep)
    check("redact: no peer hostname, address or GID left",
          crep and "gpu-node-07" not in text and "127.0.0.1" not in text and
          "0a00:0001" not in text and "<peer-host>" in text,
          [w for w in ("gpu-node-07", "127.0.0.1", "0a00:0001") if w in text])

    # --capture records what the two sides told each other.
    kept = ""
    try:
        with tarfile.open(os.path.join(work, "cap.tar.gz")) as tf:
            for m in tf.getmembers():
                if m.name.endswith("gdrcheck/peer"):
                    kept = tf.extractfile(m).read().decode()
    except (OSError, tarfile.TarError) as e:
        kept = str(e)
    check("capture: the exchange is in the archive",
          "theirs rail 1" in kept and "xfer rail 1" in kept, kept[:300])

    # 9. Usage. A FIFO as --token-file must be refused at once, not read
    # (the timeout below would turn a hang into a failure).
    fifo = os.path.join(work, "token.fifo")
    os.mkfifo(fifo)
    empty = os.path.join(work, "token.empty")
    open(empty, "w").close()
    long_tok = os.path.join(work, "token.long")
    with open(long_tok, "w") as f:
        f.write("x" * 300 + "\n")
    for args, why in ((["--listen", "x:y:z"], "bad endpoint"),
                      (["--listen", "1", "--peer", "h"], "both sides"),
                      (["--peer", "h"], "no token"),
                      (["--peer", "h", "--token", "a", "--pairs", "1,,2"],
                       "bad --pairs"),
                      (["--peer", "h", "--token", "a", "--min-bandwidth", "2"],
                       "bad --min-bandwidth"),
                      (["--token", "a"], "token without two-node mode"),
                      (["--peer", "h", "--token-file", fifo], "--token-file a FIFO"),
                      (["--peer", "h", "--token-file", work], "--token-file a directory"),
                      (["--peer", "h", "--token-file", empty], "--token-file empty"),
                      (["--peer", "h", "--token-file", long_tok],
                       "--token-file's first line too long")):
        try:
            p = subprocess.run([GDRCHECK] + args, env=env_for(work),
                               capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            check(f"usage: {why} -> exit 2", False, "hung (killed after 20 s)")
            continue
        check(f"usage: {why} -> exit 2", p.returncode == 2 and p.stderr,
              f"{p.returncode} {p.stderr[:200]}")


if __name__ == "__main__":
    sys.exit(main())
