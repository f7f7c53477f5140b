#!/usr/bin/env python3
"""Build examples/kubernetes/Dockerfile for real, without a container engine.

Each stage's FROM debian:<suite>[-slim] becomes a Debian root made by
mmdebstrap (minbase, from the machine's own apt sources); RUN steps run in
it through chroot (in a private mount namespace with /dev, /proc and /sys
bound in and the host's resolv.conf), COPY copies from the build context
(the checkout's tracked and unignored files, as `docker build .` with this
repository would send) or from an earlier stage (--from=NAME), ENV and
WORKDIR apply to later steps. Then the final stage's ENTRYPOINT runs with
--version and --list-gates: the image holds every library gdrcheck needs.

Needs root, mmdebstrap (tests/install-deps.sh installs it) and the Debian
mirror apt uses. Prints "image: N passed, N failed".

  tests/check-image.py [--keep DIR]
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCKERFILE = os.environ.get("GDRCHECK_DOCKERFILE",
                            os.path.join(TOP, "examples", "kubernetes", "Dockerfile"))


def instructions(path):
    """(keyword, argument text) per instruction, continuations joined."""
    out, cur = [], ""
    for raw in open(path):
        line = raw.rstrip("\n")
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        word, _, rest = cur.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        cur = ""
    return out


def context_files():
    r = subprocess.run(["git", "-C", TOP, "ls-files", "-co", "--exclude-standard",
                        "-z"], capture_output=True, check=True)
    return [f for f in r.stdout.decode().split("\0") if f and
            os.path.lexists(os.path.join(TOP, f))]


def make_context(dest):
    for f in context_files():
        d = os.path.join(dest, f)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        shutil.copy2(os.path.join(TOP, f), d, follow_symlinks=False)


def bootstrap(image, root):
    m = re.fullmatch(r"debian:([a-z]+)(-slim)?", image)
    if not m:
        raise RuntimeError("FROM %s: only debian:<suite>[-slim] is built here" % image)
    subprocess.run(["mmdebstrap", "--quiet", "--variant=minbase", m.group(1), root],
                   check=True)


def in_root(root, argv, env, cwd="/"):
    """Run argv inside root: private mounts, the host's DNS."""
    shutil.copy("/etc/resolv.conf", os.path.join(root, "etc", "resolv.conf"))
    script = ("set -e; for d in dev proc sys; do mount --rbind /$d %s/$d; done; "
              "exec chroot %s /usr/bin/env -i %s sh -c %s" %
              (shlex.quote(root), shlex.quote(root),
               " ".join(shlex.quote("%s=%s" % kv) for kv in env.items()),
               shlex.quote("cd %s && exec \"$@\"" % shlex.quote(cwd))) +
              ' "$@"')
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                           script, "sh"] + ["sh"] + argv,
                          capture_output=True, text=True)


def copy_into(src, root, dest, cwd):
    if not dest.startswith("/"):
        dest = os.path.join(cwd, dest)
    target = root + dest
    if os.path.isdir(src):
        shutil.copytree(src, target, symlinks=True, dirs_exist_ok=True)
    else:
        if dest.endswith("/"):
            os.makedirs(target, exist_ok=True)
            target = os.path.join(target, os.path.basename(src))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(src, target, follow_symlinks=False)


def build(work):
    ctx = os.path.join(work, "context")
    make_context(ctx)
    stages, names, entry = [], {}, None
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "DEBIAN_FRONTEND": "noninteractive"}
    cwd = "/"
    for word, arg in instructions(DOCKERFILE):
        if word == "FROM":
            parts = arg.split()
            root = os.path.join(work, "stage%d" % len(stages))
            print("  FROM %s -> %s" % (parts[0], root), flush=True)
            bootstrap(parts[0], root)
            stages.append(root)
            if len(parts) == 3 and parts[1].upper() == "AS":
                names[parts[2]] = root
            cwd, entry = "/", None
        elif word == "RUN":
            print("  RUN %s" % arg[:70], flush=True)
            r = in_root(stages[-1], ["sh", "-c", arg], env, cwd)
            if r.returncode:
                raise RuntimeError("RUN %s: exit %d\n%s" % (arg[:60], r.returncode,
                                                          (r.stdout + r.stderr)[-2000:]))
        elif word == "COPY":
            args = shlex.split(arg)
            src_root = ctx
            if args[0].startswith("--from="):
                src_root = names[args.pop(0)[len("--from="):]]
            *srcs, dest = args
            for s in srcs:
                copy_into(os.path.join(src_root, s.lstrip("/")) if s != "." else src_root,
                          stages[-1], dest, cwd)
        elif word == "ENV":
            k, _, v = arg.partition("=") if "=" in arg else arg.partition(" ")
            env[k.strip()] = v.strip()
        elif word == "WORKDIR":
            cwd = arg
        elif word == "ENTRYPOINT":
            entry = json.loads(arg)
        else:
            raise RuntimeError("%s: not an instruction this check runs" % word)
    return stages[-1], entry, env


def main(argv):
    keep = argv[argv.index("--keep") + 1] if "--keep" in argv else None
    if os.geteuid() != 0 or not shutil.which("mmdebstrap"):
        print("image: needs root and mmdebstrap (tests/install-deps.sh)")
        print("image: 0 passed, 1 failed")
        return 1
    work = keep or tempfile.mkdtemp(prefix="check-image.")
    passed = failed = 0
    try:
        root, entry, env = build(work)
        print("PASS the image builds (%s)" % os.path.relpath(DOCKERFILE, TOP))
        passed += 1
        for args, want in ((["--version"], r"^gdrcheck \d"),
                           (["--list-gates"], r"host\.kernel")):
            r = in_root(root, entry + args, env)
            out = r.stdout.strip()
            if r.returncode == 0 and re.search(want, out, re.M):
                print("PASS %s %s: %s" % (" ".join(entry), args[0],
                                          out.splitlines()[0]))
                passed += 1
            else:
                print("FAIL %s %s: exit %d: %s" % (" ".join(entry), args[0],
                                                   r.returncode,
                                                   (out + r.stderr)[-400:]))
                failed += 1
    except (RuntimeError, subprocess.CalledProcessError, KeyError, OSError) as e:
        print("FAIL the image does not build: %s" % e)
        failed += 1
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    print("image: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
