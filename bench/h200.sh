#!/bin/sh
# On a GPU node (the device machine): gdrcheck --json and --no-alloc --json
# against the driver floor (bench/cuda-floor: cuInit, attributes, one
# cuMemAlloc and one dma-buf export per GPU), interleaved, REPS times each.
# Prints medians, the ratio full/floor (target <= 1.05), --no-alloc's median
# (target <= 0.15 s) and where one run's time goes (worker stages, slowest
# results). Run from the repository root with ./gdrcheck and the floor:
#   cc -O2 -I. -o bench/cuda-floor bench/cuda-floor.c -ldl
set -eu
reps=${1:-11}
out=${2:-/dev/stdout}
t() { /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -n 1; }
: >/tmp/floor.times
: >/tmp/gdr.times
: >/tmp/noalloc.times
./bench/cuda-floor >/dev/null	# warm the driver's caches once
./gdrcheck --json >/dev/null || true
i=0
while [ $i -lt "$reps" ]; do
	t ./bench/cuda-floor >>/tmp/floor.times
	t ./gdrcheck --json >>/tmp/gdr.times || true
	t ./gdrcheck --json --no-alloc >>/tmp/noalloc.times || true
	i=$((i + 1))
done
./gdrcheck --json -v >/tmp/stages.json || true
python3 - /tmp/floor.times /tmp/gdr.times /tmp/noalloc.times /tmp/stages.json \
	"$reps" >"$out" <<'PY'
import json, statistics, sys
def load(p):
    rows = [l.split() for l in open(p) if l.strip()]
    return [float(r[0]) for r in rows], [int(r[1]) / 1024 for r in rows]
ft, fm = load(sys.argv[1]); gt, gm = load(sys.argv[2]); nt, nm = load(sys.argv[3])
fmed, gmed, nmed = (statistics.median(x) for x in (ft, gt, nt))
print(f"reps {sys.argv[5]} (interleaved: floor, full, --no-alloc)")
print(f"floor     median {fmed:.3f} s [{min(ft):.3f}..{max(ft):.3f}]  RSS {statistics.median(fm):.1f} MiB")
print(f"full      median {gmed:.3f} s [{min(gt):.3f}..{max(gt):.3f}]  RSS {statistics.median(gm):.1f} MiB")
print(f"no-alloc  median {nmed:.3f} s [{min(nt):.3f}..{max(nt):.3f}]  RSS {statistics.median(nm):.1f} MiB")
r = gmed / fmed
print(f"ratio full/floor {r:.2f} (target <= 1.05): {'PASS' if r <= 1.05 else 'MISS'}")
print(f"no-alloc {nmed:.3f} s (target <= 0.15 s): {'PASS' if nmed <= 0.15 else 'MISS'}")
doc = json.load(open(sys.argv[4]))
print(f"one full run: {doc['duration_ms']:.1f} ms; worker stages:")
for w in doc["workers"]:
    print(f"  {w['stage']:<13} {w['duration_ms']:8.1f} ms  {w['state']}")
print("slowest results:")
for r in sorted(doc["results"], key=lambda r: -r.get("duration_ms", 0))[:6]:
    print(f"  {r['gate']:<18} {r['subject']:<10} {r.get('duration_ms', 0):8.1f} ms")
PY
