#!/usr/bin/env python3
"""Mutation fuzzer over whole capture archives (issue 24 item 2).

A capture (gdrcheck --capture FILE.tar.gz) is what an operator extracts and
replays with --sysroot; replay must trust nothing in it. Each iteration
takes one capture, extracts it into a temporary tree, applies 1 to 3
mutations to its members (most often the gdrcheck/* answers: vendor-facts.json,
kallsyms, kconfig, kernel-log, libnccl, environ) and replays the tree with
no library named:

    gdrcheck --sysroot TREE --json --deadline 20

The run must end in time (no hang past the deadline, no timeout), exit 0, 1
or 3 (never a signal), print a JSON report with a "verdict" object, and
write no sanitizer report on stderr.

The inputs: every *.tar.gz capture under examples/, and captures made fresh
by gdrcheck --capture on scenario sysroots (reg-ok, capture-replay-host,
nccl-healthy-8gpu) with the test doubles.

The mutations: bytes flipped, inserted or deleted; truncated (to 0 too);
garbage appended; a huge file (20-64 MB, sparse), a huge/negative/NaN number;
the member replaced by a FIFO, a directory, /dev/zero (node or symlink), a
symlink out of the tree or to itself, an unreadable (mode 000) file, or
deleted; another capture's copy of the member (contradicting answers); and,
for gdrcheck/vendor-facts.json, JSON-aware ones: a number made huge, negative
or NaN, a key dropped or duplicated, a type changed, an array repeated many
times, counts that contradict their arrays, odd "caps", "version", "format",
a string made hostile or huge, deep nesting. The fuzzer writes only inside its temporary
directory: archive members with absolute paths, ".." or links out of the
tree are not extracted, and no mutation writes through a symlink.

Iteration I uses random.Random(SEED + I): reproducible. A failure prints
its seed, iteration, archive and mutations, keeps the mutated tree (and the
fresh captures) under REPRO-SEED-I/, and says how to rerun it.

Environment:
  GDRCHECK_BIN            the binary (default: gdrcheck at the top of the tree)
  GDRCHECK_DOUBLES        the test doubles for the fresh captures
                          (default tests/doubles)
  FUZZ_CAPTURE_ITERS      iterations (default 60)
  FUZZ_CAPTURE_SEED       seed (default 2412)
  FUZZ_CAPTURE_ONLY       run only these iterations (comma separated)
  FUZZ_CAPTURE_FRESH_DIR  keep the fresh captures here, reuse them if there
                          (a rerun of one iteration then sees the same bytes)
  FUZZ_CAPTURE_TIMEOUT    seconds a replay may take before it counts as a
                          hang (default 60; it runs with --deadline 20)
  FUZZ_CAPTURE_REPRO      prefix of the directories failures are kept in
                          (default $TMPDIR/capfuzz-repro)

    tests/fuzz-captures.py   ends with "fuzz-captures: N passed, N failed"
                             after "fuzz-captures: N runs, N failed"
"""
import glob
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.abspath(os.environ.get("GDRCHECK_BIN") or os.path.join(TOP, "gdrcheck"))
DOUBLES = os.path.abspath(os.environ.get("GDRCHECK_DOUBLES") or
                          os.path.join(TOP, "tests", "doubles"))
ITERS = int(os.environ.get("FUZZ_CAPTURE_ITERS", "60"))
SEED = int(os.environ.get("FUZZ_CAPTURE_SEED", "2412"))
ONLY = [int(x) for x in os.environ.get("FUZZ_CAPTURE_ONLY", "").split(",") if x.strip()]
FRESH_DIR = os.environ.get("FUZZ_CAPTURE_FRESH_DIR", "")
REPRO = os.environ.get("FUZZ_CAPTURE_REPRO") or os.path.join(tempfile.gettempdir(),
                                                             "capfuzz-repro")
DEADLINE = 20           # gdrcheck --deadline
TIMEOUT = int(os.environ.get("FUZZ_CAPTURE_TIMEOUT", "60"))  # past it: a hang
SLACK = 10              # seconds past the deadline that still pass
# Scenarios whose sysroots are captured fresh (the doubles answer).
SCENARIOS = ("reg-ok", "capture-replay-host", "nccl-healthy-8gpu")
MB = 1 << 20
SANITIZER = re.compile(r"Sanitizer|runtime error|AddressSanitizer")


def log(*a):
    print(*a, flush=True)


# --- the environment --------------------------------------------------------

def clean_env():
    """The caller's environment without what would name a library (or
    change the report): the replay must use the capture's answers only."""
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("GDRCHECK_") or k.startswith("FAKE_") or
                   k.startswith("NCCL_") or k in ("LD_LIBRARY_PATH", "LD_PRELOAD",
                                                  "CUDA_VISIBLE_DEVICES"))}
    env.update(SOURCE_DATE_EPOCH="0", NO_COLOR="1", HOME="/nonexistent")
    return env


# --- the inputs -------------------------------------------------------------

def fresh_capture(name, work, outdir):
    """Capture scenario NAME's sysroot (doubles loaded) to OUTDIR/NAME.tar.gz;
    reused if already there. Returns (path, None) or (None, why)."""
    out = os.path.join(outdir, name + ".tar.gz")
    if os.path.isfile(out) and os.path.getsize(out) > 0:
        return out, None
    case = os.path.join(TOP, "tests", "scenarios", name)
    sysroot = os.path.join(work, "sysroot-" + name)
    r = subprocess.run([sys.executable, os.path.join(TOP, "tests", "scenarios", "mksysroot.py"),
                        os.path.join(case, "sysroot.spec"), sysroot],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode:
        return None, "mksysroot failed: " + r.stdout.decode(errors="replace")[-500:]
    for lib in ("libcuda-fake.so", "libibverbs-fake.so", "libnvidia-ml-fake.so"):
        if not os.path.isfile(os.path.join(DOUBLES, lib)):
            return None, "no %s in %s (make doubles)" % (lib, DOUBLES)
    ledger = os.path.join(work, "ledger-" + name)
    os.makedirs(ledger, exist_ok=True)
    env = clean_env()
    env["HOME"] = "/home/gdrcheck"
    cf = os.path.join(case, "env")
    if os.path.isfile(cf):
        for line in open(cf):
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                env[k] = v
    conf = lambda f: os.path.join(case, f) if os.path.isfile(os.path.join(case, f)) else "/dev/null"
    env.update(FAKE_CUDA_SCENARIO=conf("cuda.conf"), FAKE_VERBS_SCENARIO=conf("verbs.conf"),
               FAKE_NVML_SCENARIO=conf("nvml.conf"), FAKE_LEDGER_DIR=ledger,
               GDRCHECK_LIBCUDA=os.path.join(DOUBLES, "libcuda-fake.so"),
               GDRCHECK_LIBIBVERBS=os.path.join(DOUBLES, "libibverbs-fake.so"),
               GDRCHECK_LIBNVML=os.path.join(DOUBLES, "libnvidia-ml-fake.so"))
    args = []
    af = os.path.join(case, "args")
    if os.path.isfile(af):
        args = open(af).read().replace("@DOUBLES@", DOUBLES).split()
    tmp = out + ".part"
    try:
        r = subprocess.run([BIN, "--sysroot", sysroot, "--json"] + args + ["--capture", tmp],
                           env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "gdrcheck --capture timed out"
    if r.returncode not in (0, 1, 3) or not os.path.isfile(tmp):
        return None, "gdrcheck --capture: exit %d: %s" % (
            r.returncode, r.stderr.decode(errors="replace")[-500:])
    os.rename(tmp, out)
    return out, None


def read_members(archive):
    """Path -> bytes of an archive's small regular files (for swaps)."""
    got = {}
    try:
        with tarfile.open(archive, "r:*") as t:
            for m in t.getmembers():
                if m.isfile() and m.size <= MB and safe_name(m.name):
                    got[os.path.normpath(m.name)] = t.extractfile(m).read()
    except (tarfile.TarError, OSError):
        pass
    return got


# --- extraction, confined to the tree ---------------------------------------

def safe_name(name):
    parts = name.split("/")
    return not name.startswith("/") and ".." not in parts and name not in ("", ".")


def inside(root, path):
    """PATH, with its links resolved, is ROOT or below it."""
    real = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def extract(archive, root):
    """Extract ARCHIVE into ROOT, refusing anything that would land (or
    point) outside it, and special files. Returns the refused names."""
    refused = []
    have_filter = hasattr(tarfile, "data_filter")
    with tarfile.open(archive, "r:*") as t:
        for m in t.getmembers():
            if not safe_name(m.name) or not inside(root, os.path.join(root, os.path.dirname(m.name))):
                refused.append(m.name)
                continue
            if not have_filter:
                # The 'data' filter's rules, by hand (Python < 3.11.4).
                if not (m.isfile() or m.isdir() or m.issym() or m.islnk()):
                    refused.append(m.name)
                    continue
                if m.issym() or m.islnk():
                    base = os.path.dirname(m.name) if m.issym() else ""
                    tgt = os.path.normpath(os.path.join(root, base, m.linkname))
                    if m.linkname.startswith("/") or not (tgt == root or tgt.startswith(root + os.sep)):
                        refused.append(m.name)
                        continue
            try:
                if have_filter:
                    t.extract(m, root, filter="data")
                else:
                    t.extract(m, root)
            except (tarfile.TarError, OSError):
                refused.append(m.name)
    return refused


def members(root):
    """Every path below ROOT (files, directories, links), relative, sorted."""
    out = []
    for d, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        rel = os.path.relpath(d, root)
        for n in dirs + sorted(files):
            out.append(os.path.normpath(os.path.join(rel, n)))
    return sorted(out)


def rmtree(path):
    def retry(func, p, _exc):
        try:
            os.chmod(os.path.dirname(p), 0o700)
            if not os.path.islink(p) and os.path.isdir(p):
                os.chmod(p, 0o700)
        except OSError:
            pass
        try:
            func(p)
        except OSError:
            pass
    shutil.rmtree(path, onerror=retry)


# --- mutations ----------------------------------------------------------------

HUGE_NUMBERS = ["99999999999999999999999", "-1", "-9223372036854775809",
                "9223372036854775807", "18446744073709551616", "4294967296",
                "-2147483649", "NaN", "nan", "inf", "-inf", "1e999", "-0",
                "0x" + "f" * 40, "1" * 300, "2147483648", "65536", "0"]
JSON_NUMBERS = [2 ** 63 - 1, 2 ** 63, 2 ** 64, -2 ** 63 - 1, -2 ** 63, -1, -2 ** 31,
                2 ** 31, 2 ** 32, 10 ** 40, 1e308, -1e308, 5e-324, 0, 4096, 65536,
                1 << 20, (1 << 20) + 1, 4097, 65537, 1.5, -0.0,
                float("nan"), float("inf"), float("-inf")]
OTHER_VALUES = [None, True, False, "", "x", "-1", "\u00e9\x01\ufffd", 0, -1, 1.5,
                [], {}, [1, 2, 3], {"x": 1}, [[[]]], "A" * 65536]
# Not /proc/kmsg: a read there takes the host's kernel messages away.
OUTSIDE = ["/etc/passwd", "/", "/proc/self/mem", "/proc/self/fd/0", "/nonexistent/x",
           "/sys", "../" * 24 + "etc/passwd", "../" * 24 + "dev/zero", "/dev/urandom",
           "/dev/null"]


class Mutator:
    def __init__(self, rng, root, others):
        self.rng = rng
        self.root = root
        self.others = others        # other inputs' member bytes, for swaps

    # -- helpers
    def path(self, rel):
        return os.path.join(self.root, rel)

    def writable(self, rel):
        """REL's parent is inside the tree (no link out on the way)."""
        return inside(self.root, os.path.dirname(self.path(rel)))

    def regular(self, rel):
        st = os.lstat(self.path(rel))
        return stat.S_ISREG(st.st_mode)

    def read(self, rel):
        fd = os.open(self.path(rel), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            chunks = []
            while True:
                b = os.read(fd, MB)
                if not b:
                    break
                chunks.append(b)
                if sum(map(len, chunks)) > 64 * MB:
                    break
            return b"".join(chunks)
        finally:
            os.close(fd)

    def write(self, rel, data):
        """Replace REL (whatever it is) by a regular file holding DATA."""
        self.remove(rel)
        fd = os.open(self.path(rel), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)

    def remove(self, rel):
        p = self.path(rel)
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            rmtree(p)
        else:
            os.unlink(p)

    def randbytes(self, n):
        return bytes(self.rng.randrange(256) for _ in range(n))

    # -- byte-level mutations (regular files)
    def m_flip(self, rel, data):
        data = bytearray(data)
        if not data:
            return self.m_append(rel, bytes(data))
        n = self.rng.randint(1, 16)
        for _ in range(n):
            i = self.rng.randrange(len(data))
            data[i] ^= 1 << self.rng.randrange(8) if self.rng.random() < 0.7 else self.rng.randrange(1, 256)
        self.write(rel, bytes(data))
        return "flip %d byte(s)" % n

    def m_insert(self, rel, data):
        data = bytearray(data)
        n = self.rng.randint(1, 16)
        for _ in range(n):
            i = self.rng.randint(0, len(data))
            ins = self.rng.choice([b"\0", b"\n", b"\xff", b"{", b"[", b"\"", b"\\", b"9" * 30,
                                   b"-", b"\t", b"\xc3", self.randbytes(self.rng.randint(1, 8))])
            data[i:i] = ins
        self.write(rel, bytes(data))
        return "insert at %d place(s)" % n

    def m_delete(self, rel, data):
        data = bytearray(data)
        if not data:
            return self.m_append(rel, bytes(data))
        n = self.rng.randint(1, 8)
        for _ in range(n):
            if not data:
                break
            i = self.rng.randrange(len(data))
            del data[i:i + self.rng.randint(1, 32)]
        self.write(rel, bytes(data))
        return "delete %d run(s) of bytes" % n

    def m_truncate(self, rel, data):
        n = self.rng.choice([0, 0, 1, self.rng.randint(0, max(len(data) - 1, 0))])
        self.write(rel, data[:n])
        return "truncate to %d of %d bytes" % (n, len(data))

    def m_append(self, rel, data):
        kind = self.rng.choice(["random", "lines", "nul", "long-line"])
        if kind == "random":
            g = self.randbytes(self.rng.randint(1, 4096))
        elif kind == "lines":
            g = b"".join(self.rng.choice([b"x\n", b"\n", b"a b c\n", b"9999999999999999999999\n",
                                          b"=\n", b"\t\t\n", b"{}\n"])
                         for _ in range(self.rng.randint(1, 200)))
        elif kind == "nul":
            g = b"\0" * self.rng.randint(1, 8192)
        else:
            g = b"y" * self.rng.randint(4096, 1 << 18)
        self.write(rel, data + g)
        return "append %s garbage (%d bytes)" % (kind, len(g))

    def m_huge(self, rel, data):
        """20-64 MB: sparse (NULs) after the original bytes."""
        size = self.rng.randint(20, 64) * MB + self.rng.randrange(4096)
        keep = data if self.rng.random() < 0.5 else b""
        self.write(rel, keep)
        fd = os.open(self.path(rel), os.O_WRONLY | os.O_NOFOLLOW)
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)
        return "huge sparse file of %d bytes (%s)" % (size, "original first" if keep else "NULs")

    def m_number(self, rel, data):
        runs = [m.span() for m in re.finditer(rb"-?[0-9]+(\.[0-9]+)?", data)]
        val = self.rng.choice(HUGE_NUMBERS).encode()
        if not runs:
            self.write(rel, data + val + b"\n")
            return "append number %s" % val.decode()
        a, b = self.rng.choice(runs)
        self.write(rel, data[:a] + val + data[b:])
        return "number %r at %d -> %s" % (data[a:b].decode(errors="replace"), a, val.decode())

    def m_foreign(self, rel, data):
        """Another capture's copy of the member: answers contradicting the tree."""
        cands = [o[rel] for o in self.others if rel in o and o[rel] != data]
        if not cands:
            return self.m_flip(rel, data)
        self.write(rel, self.rng.choice(cands))
        return "replaced by another capture's copy"

    # -- type mutations (any member)
    def t_fifo(self, rel):
        self.remove(rel)
        os.mkfifo(self.path(rel), 0o644)
        return "replaced by a FIFO"

    def t_dir(self, rel):
        self.remove(rel)
        os.mkdir(self.path(rel))
        if self.rng.random() < 0.5:
            with open(os.path.join(self.path(rel), "x"), "w") as f:
                f.write("1\n")
        return "replaced by a directory"

    def t_devzero(self, rel):
        self.remove(rel)
        if self.rng.random() < 0.5:
            try:
                os.mknod(self.path(rel), 0o644 | stat.S_IFCHR, os.makedev(1, 5))
                return "replaced by a /dev/zero node (1:5)"
            except OSError:
                pass
        os.symlink("/dev/zero", self.path(rel))
        return "replaced by a symlink to /dev/zero"

    def t_outside(self, rel):
        tgt = self.rng.choice(OUTSIDE)
        self.remove(rel)
        os.symlink(tgt, self.path(rel))
        return "replaced by a symlink to %s" % tgt

    def t_loop(self, rel):
        self.remove(rel)
        name = os.path.basename(rel)
        if self.rng.random() < 0.5:
            os.symlink(name, self.path(rel))
            return "replaced by a symlink to itself"
        other = self.path(rel) + ".loop"
        if os.path.lexists(other):
            self.remove(rel + ".loop")
        os.symlink(name + ".loop", self.path(rel))
        os.symlink(name, other)
        return "replaced by a two-link loop"

    def t_mode000(self, rel):
        p = self.path(rel)
        if os.path.islink(p):
            return self.t_delete(rel)
        os.chmod(p, 0)
        return "mode 000"

    def t_delete(self, rel):
        self.remove(rel)
        return "deleted"

    # -- JSON-aware mutations (gdrcheck/vendor-facts.json)
    def nodes(self, v, path=()):
        """(path, value) of every node of V, containers included."""
        yield path, v
        if isinstance(v, dict):
            for k, x in v.items():
                yield from self.nodes(x, path + (k,))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                yield from self.nodes(x, path + (i,))

    @staticmethod
    def put(doc, path, val):
        if not path:
            return val
        o = doc
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = val
        return doc

    @staticmethod
    def pstr(path):
        return ".".join(str(p) for p in path) or "(document)"

    def j_number(self, doc):
        nums = [(p, v) for p, v in self.nodes(doc)
                if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if not nums:
            return doc, None
        p, v = self.rng.choice(nums)
        val = self.rng.choice(JSON_NUMBERS)
        return self.put(doc, p, val), "%s: %r -> %r" % (self.pstr(p), v, val)

    def j_count(self, doc):
        """A count key that contradicts its array."""
        keys = [(p, v) for p, v in self.nodes(doc)
                if p and isinstance(p[-1], str) and isinstance(v, int) and not isinstance(v, bool)
                and re.search(r"count|recorded|^n[a-z]+s$|gpus|nics|pairs|bytes", p[-1])]
        if not keys:
            return self.j_number(doc)
        p, v = self.rng.choice(keys)
        val = self.rng.choice([v + 1, v - 1, v * 2 + 7, 0, -1, 4096, 4097, 65537, 1 << 20,
                               (1 << 20) + 1, 2 ** 31 - 1, 2 ** 31, 2 ** 63 - 1])
        return self.put(doc, p, val), "count %s: %r -> %r" % (self.pstr(p), v, val)

    def j_drop(self, doc):
        objs = [(p, v) for p, v in self.nodes(doc) if isinstance(v, dict) and v]
        if not objs:
            return doc, None
        p, o = self.rng.choice(objs)
        k = self.rng.choice(sorted(o))
        del o[k]
        return doc, "drop key %s" % self.pstr(p + (k,))

    def j_type(self, doc):
        nodes = list(self.nodes(doc))
        p, v = self.rng.choice(nodes)
        cands = [x for x in OTHER_VALUES if type(x) is not type(v)]
        val = self.rng.choice(cands)
        return self.put(doc, p, val), "type of %s: %s -> %s" % (
            self.pstr(p), type(v).__name__, json.dumps(val)[:40])

    def j_dup_array(self, doc):
        arrs = [(p, v) for p, v in self.nodes(doc) if isinstance(v, list)]
        if not arrs:
            return doc, None
        p, a = self.rng.choice(arrs)
        times = self.rng.choice([2, 10, 100, 1000, 10000, 100000])
        base = a if a else [self.rng.choice([0, {}, "x", None])]
        # At most ~32 MB of text (and 300000 elements).
        size = len(json.dumps(base)) + 1
        times = max(1, min(times, 300000 // len(base), (32 * MB) // size))
        return self.put(doc, p, base * times), "array %s (%d) repeated %d times" % (
            self.pstr(p), len(a), times)

    def j_caps(self, doc):
        if not isinstance(doc, dict):
            return doc, None
        r = self.rng.random()
        if r < 0.15:
            old = doc.pop("caps", None)
            return doc, "drop caps (%s)" % json.dumps(old)
        if r < 0.3:
            val = self.rng.choice(OTHER_VALUES)
            doc["caps"] = val
            return doc, "caps -> %s" % json.dumps(val)[:40]
        caps = doc.get("caps")
        if not isinstance(caps, dict):
            caps = doc["caps"] = {"gpus": 128, "nics": 128, "pairs": 256}
        k = self.rng.choice(["gpus", "nics", "pairs", "extra"])
        val = self.rng.choice([0, 1, -1, 2, 4096, 4097, 65536, 65537, 1 << 20, (1 << 20) + 1,
                               2 ** 31, 2 ** 63 - 1, "8", None, 1.5, [], float("nan")])
        if k in caps and self.rng.random() < 0.2:
            del caps[k]
            return doc, "caps.%s dropped" % k
        caps[k] = val
        return doc, "caps.%s -> %s" % (k, json.dumps(val))

    def j_header(self, doc):
        if not isinstance(doc, dict):
            return doc, None
        k = self.rng.choice(["version", "format", "facts"])
        if k == "version":
            val = self.rng.choice([0, 2, 99, -1, "1", 1.0, None, 2 ** 64])
        elif k == "format":
            val = self.rng.choice(["", "gdrcheck-vendor-facts2", 1, None, "GDRCHECK-VENDOR-FACTS"])
        else:
            val = self.rng.choice([None, [], {}, "facts", 0])
        doc[k] = val
        return doc, "%s -> %s" % (k, json.dumps(val))

    def j_string(self, doc):
        """A string leaf (a call name, a PCI address, a device name, a path)
        made hostile: a valid document whose answers name odd things."""
        strs = [(p, v) for p, v in self.nodes(doc) if isinstance(v, str)]
        if not strs:
            return doc, None
        p, v = self.rng.choice(strs)
        val = self.rng.choice(["", "../../../../etc/passwd", "/dev/zero", "0000:zz:00.0",
                               "ffff:ff:1f.7", "0000:03:00.0", "mlx5_0", "%s%n%x%p", "\u0000",
                               "x\x00y", "\n\t\"", "\u00e9\u202e\udcff", "B" * 5000,
                               v + v, v[:len(v) // 2], v.upper()])
        return self.put(doc, p, val), "string %s: %r -> %r" % (self.pstr(p), v[:30], val[:30])

    def j_huge_string(self, doc):
        strs = [(p, v) for p, v in self.nodes(doc) if isinstance(v, str)]
        if not strs:
            return doc, None
        p, _ = self.rng.choice(strs)
        n = self.rng.randint(20, 40) * MB
        return self.put(doc, p, "A" * n), "string %s -> %d bytes" % (self.pstr(p), n)

    def apply_json(self, rel, data):
        try:
            doc = json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError):   # deep: bytes only
            return None
        kinds = [("number", self.j_number, 5), ("count", self.j_count, 4),
                 ("drop", self.j_drop, 4), ("type", self.j_type, 4),
                 ("dup-array", self.j_dup_array, 2), ("caps", self.j_caps, 4),
                 ("header", self.j_header, 1), ("string", self.j_string, 3),
                 ("huge-string", self.j_huge_string, 1),
                 ("dup-key", None, 1), ("deep", None, 1)]
        name, fn, _ = self.rng.choices(kinds, weights=[w for _, _, w in kinds])[0]
        if name == "dup-key":
            lines = data.decode(errors="replace").split("\n")
            idx = [i for i, l in enumerate(lines) if re.match(r'\s*"[^"]+": [^\[{]*,$', l)]
            if not idx:
                return None
            i = self.rng.choice(idx)
            val = json.dumps(self.rng.choice(OTHER_VALUES[:12]))
            lines.insert(i + 1, lines[i].split(":", 1)[0] + ": " + val + ",")
            self.write(rel, "\n".join(lines).encode())
            return "json dup-key %s" % lines[i].strip()[:60]
        if name == "deep":
            nodes = [p for p, _ in self.nodes(doc) if p]
            if not nodes:
                return None
            p = self.rng.choice(nodes)
            d = self.rng.choice([100, 2000, 2049, 100000])
            doc = self.put(doc, p, "@@DEEP@@")
            text = json.dumps(doc).replace('"@@DEEP@@"', "[" * d + "]" * d, 1)
            self.write(rel, text.encode())
            return "json deep: %s nested %d deep" % (self.pstr(p), d)
        doc, what = fn(doc)
        if what is None:
            return None
        # Compact: the C encoder (indent= takes the Python one, minutes
        # for a repeated array). NaN/Infinity stay bare (not JSON).
        self.write(rel, json.dumps(doc).encode())
        return "json " + what

    # -- one mutation
    def mutate(self, paths):
        rng = self.rng
        facts = "gdrcheck/vendor-facts.json"
        g = [p for p in paths if p.startswith("gdrcheck/")]
        r = rng.random()
        if r < 0.3 and facts in paths:
            rel = facts
        elif r < 0.65 and g:
            rel = rng.choice(g)
        else:
            rel = rng.choice(paths)
        if not self.writable(rel):
            return None
        if self.regular(rel):
            data = self.read(rel)
            if rel == facts and rng.random() < 0.5:
                what = self.apply_json(rel, data)
                if what:
                    return "%s: %s" % (rel, what)
            kinds = [(self.m_flip, 4), (self.m_insert, 3), (self.m_delete, 3),
                     (self.m_truncate, 4), (self.m_append, 3), (self.m_huge, 2),
                     (self.m_number, 3), (self.m_foreign, 2),
                     (self.t_fifo, 2), (self.t_dir, 1), (self.t_devzero, 2),
                     (self.t_outside, 2), (self.t_loop, 2), (self.t_mode000, 1),
                     (self.t_delete, 3)]
        else:
            data = None
            kinds = [(self.t_fifo, 1), (self.t_dir, 1), (self.t_devzero, 1),
                     (self.t_outside, 1), (self.t_loop, 1), (self.t_mode000, 1),
                     (self.t_delete, 2), (lambda rel: self.m_append(rel, b""), 1)]
        fn = rng.choices([k for k, _ in kinds], weights=[w for _, w in kinds])[0]
        what = fn(rel, data) if fn.__name__.startswith("m_") else fn(rel)
        return "%s: %s" % (rel, what)


# --- one run ------------------------------------------------------------------

def replay(tree):
    """Replay TREE. Returns (failure reason or None, exit status, seconds,
    stdout, stderr, whether gpu.libcuda replayed the vendor facts)."""
    env = clean_env()
    cmd = [BIN, "--sysroot", tree, "--json", "--deadline", str(DEADLINE)]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    timed_out = False
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:    # its own session: the worker and any helper go too
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
    secs = time.monotonic() - t0
    rc = p.returncode
    errt = err.decode(errors="replace")
    why = None
    facts = "?"     # did the replay use the vendor facts (gpu.libcuda)
    if timed_out:
        why = "no end after %d s (hang; --deadline %d)" % (TIMEOUT, DEADLINE)
    elif rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = "signal %d" % -rc
        why = "killed by %s" % name
    elif rc not in (0, 1, 3):
        why = "exit %d" % rc
    elif SANITIZER.search(errt):
        why = "sanitizer report on stderr"
    elif secs > DEADLINE + SLACK:
        why = "ran %.1f s, past its --deadline of %d s" % (secs, DEADLINE)
    else:
        try:
            doc = json.loads(out)
            if not isinstance(doc, dict) or not isinstance(doc.get("verdict"), dict) \
                    or "status" not in doc["verdict"]:
                why = "JSON report without a verdict object"
            else:
                for r in doc.get("results", []):
                    if r.get("gate") == "gpu.libcuda":
                        facts = "refused" if r.get("reason_code") == "NOT_REPLAYED" else "replayed"
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            why = "stdout is not JSON (%s)" % str(e)[:80]
    return why, rc, secs, out, err, facts


# --- main -----------------------------------------------------------------------

def main():
    if not os.access(BIN, os.X_OK):
        log("FAIL %s: not an executable (make, or set GDRCHECK_BIN)" % BIN)
        log("fuzz-captures: 0 runs, 1 failed")
        log("fuzz-captures: 0 passed, 1 failed")
        return 1
    work = tempfile.mkdtemp(prefix="fuzz-captures.")
    failed = 0
    passed = 0
    runs = 0
    stats = {}
    try:
        inputs = sorted(glob.glob(os.path.join(TOP, "examples", "**", "*.tar.gz"), recursive=True))
        fresh_dir = FRESH_DIR or os.path.join(work, "fresh")
        os.makedirs(fresh_dir, exist_ok=True)
        for name in SCENARIOS:
            path, why = fresh_capture(name, work, fresh_dir)
            if why:
                log("FAIL fresh capture of %s: %s" % (name, why))
                failed += 1
            else:
                inputs.append(path)
        if not inputs:
            log("FAIL no capture to fuzz")
            failed += 1
            inputs = []
        loaded = {a: read_members(a) for a in inputs}
        for a in inputs:
            log("input %s (%d members)" % (os.path.relpath(a, TOP) if a.startswith(TOP) else a,
                                           len(loaded[a])))
        iters = ONLY if ONLY else range(ITERS)
        total = 0.0
        for i in (iters if inputs else []):
            rng = random.Random(SEED + i)
            archive = inputs[rng.randrange(len(inputs))]
            tree = os.path.join(work, "tree")
            if os.path.lexists(tree):
                rmtree(tree)
            os.mkdir(tree)
            root = os.path.realpath(tree)
            refused = extract(archive, root)
            mut = Mutator(rng, root, [loaded[a] for a in inputs if a != archive])
            done = []
            for _ in range(rng.randint(1, 3)):
                paths = members(root)
                if not paths:
                    break
                try:
                    what = mut.mutate(paths)
                except Exception as e:     # a fuzzer bug: say so, replay anyway
                    what = "mutation failed (%s: %s)" % (type(e).__name__, e)
                if what:
                    done.append(what)
            why, rc, secs, out, err, facts = replay(root)
            stats[facts] = stats.get(facts, 0) + 1
            runs += 1
            total += secs
            label = "%d %s: %s" % (i, os.path.basename(archive), "; ".join(done) or "(none)")
            if refused:
                label += " [not extracted: %d]" % len(refused)
            if why is None:
                passed += 1
                log("PASS %s -> exit %d, vendor facts %s (%.2f s)" % (label, rc, facts, secs))
                continue
            failed += 1
            keep = "%s-%d-%d" % (REPRO, SEED, i)
            if os.path.lexists(keep):
                rmtree(keep)
            os.makedirs(keep)
            subprocess.run(["cp", "-a", root, os.path.join(keep, "tree")])
            fresh_keep = fresh_dir
            if not FRESH_DIR:
                fresh_keep = "%s-%d-inputs" % (REPRO, SEED)
                if not os.path.isdir(fresh_keep):
                    shutil.copytree(fresh_dir, fresh_keep)
            with open(os.path.join(keep, "stdout"), "wb") as f:
                f.write(out)
            with open(os.path.join(keep, "stderr"), "wb") as f:
                f.write(err)
            rerun = ("FUZZ_CAPTURE_SEED=%d FUZZ_CAPTURE_ONLY=%d FUZZ_CAPTURE_FRESH_DIR=%s "
                     "GDRCHECK_BIN=%s %s" % (SEED, i, fresh_keep, BIN, os.path.abspath(__file__)))
            direct = "%s --sysroot %s --json --deadline %d" % (BIN, os.path.join(keep, "tree"), DEADLINE)
            with open(os.path.join(keep, "README"), "w") as f:
                f.write("seed %d iteration %d\narchive %s\nmutations:\n%s\nresult: %s "
                        "(exit %s, %.2f s)\nreplay the kept tree (no GDRCHECK_*/FAKE_* set):\n  %s\n"
                        "rerun the iteration:\n  %s\n" % (
                            SEED, i, archive, "".join("  %s\n" % d for d in done), why, rc,
                            secs, direct, rerun))
            log("FAIL %s: %s (exit %s, %.2f s)" % (label, why, rc, secs))
            log("  seed %d iteration %d; tree kept in %s" % (SEED, i, keep))
            log("  rerun: %s" % rerun)
            log("  or:    %s" % direct)
            for line in err.decode(errors="replace").splitlines()[:20]:
                log("  stderr: " + line)
    finally:
        rmtree(work)
    per = (total / runs) if runs else 0.0
    log("fuzz-captures: %d runs, %d failed (seed %d, %.3f s a replay; vendor facts "
        "replayed in %d, refused in %d)" % (runs, failed, SEED, per, stats.get("replayed", 0),
                                            stats.get("refused", 0)))
    log("fuzz-captures: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
