#!/bin/bash
# Record examples/h200 on the real H200 (the device tool runs it in the
# repository root; carry .dev/ holding gdrcheck built here, libpci.so.3 and
# libjansson.so.4, which the node lacks).
#
#   tests/h200/record-examples.sh OUTDIR
#
# Writes every file of examples/h200 (see its README) into OUTDIR, plus
# rcs (each command's exit status), nvml.txt and vmm.txt (tests/h200/*.sh).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
o=${1:?usage: record-examples.sh OUTDIR}
rm -rf "$o"; mkdir -p "$o"
if [ -e "$top/.dev/libpci.so.3" ]; then
	export GDRCHECK_LIBPCI=$top/.dev/libpci.so.3 LD_LIBRARY_PATH=$top/.dev
	cp "$top/.dev/gdrcheck" "$top/gdrcheck"
fi
G=$top/gdrcheck
cd "$o" || exit 2
run() { local f=$1; shift; "$G" "$@" > "$f" 2> "$f.err"; echo "$f rc=$?" >> rcs; }
run h200-report.txt --no-color
run h200-report.json --json
run h200-report-verbose.txt --no-color -v
run h200-noalloc.json --json --no-alloc
run h200-noalloc.txt --no-color --no-alloc
run h200-require-nccl.txt --no-color --require nccl
(unset GDRCHECK_LIBPCI; "$G" --no-color --libpci /nonexistent/libpci.so.3 \
	> h200-report-nolibpci.txt 2>&1; echo "nolibpci rc=$?" >> rcs)
run h200-report.junit.xml --format junit
run h200-report.prom --format prometheus
run h200-redacted.json --json --redact --capture h200-capture.tar.gz
# An unredacted capture of the same node, replayed with no library named.
run full.json --json --capture full-capture.tar.gz
mkdir -p cap && tar xzf full-capture.tar.gz -C cap
run h200-replay.json --json --sysroot cap
python3 - full.json h200-replay.json > replay-compare.txt <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def key(d):
    return {(r["gate"], r["subject"]): (r["status"], r["reason_code"])
            for r in d["results"]}
ka, kb = key(a), key(b)
same = sum(1 for k in ka if kb.get(k) == ka[k])
print(f"{same} of {len(ka)} results identical; verdict node "
      f"{a['verdict']['status']} replay {b['verdict']['status']}")
for k in sorted(set(ka) | set(kb)):
    if ka.get(k) != kb.get(k):
        print("DIFF", k, ka.get(k), kb.get(k))
PY
mkdir -p nccl
bash "$top/tests/h200/nccl-compare.sh" "$o/nccl" > nccl/run.txt 2>&1
echo "nccl-compare rc=$?" >> rcs
(cd "$top" && bash tests/h200/nvml.sh "$o/nvml") > nvml.txt 2>&1
echo "nvml rc=$?" >> rcs
(cd "$top" && bash tests/h200/vmm.sh) > vmm.txt 2>&1
echo "vmm rc=$?" >> rcs
cat rcs replay-compare.txt
