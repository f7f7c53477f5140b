#!/bin/sh
# On a GPU node (the device machine): gdrcheck --json against the floor
# (bench/cuda-floor: cuInit, attributes, one cuMemAlloc and one dma-buf
# export per GPU), interleaved, REPS times each. Prints medians and the
# ratio. Run from the repository root with ./gdrcheck and the floor built:
#   cc -O2 -I. -o bench/cuda-floor bench/cuda-floor.c -ldl
set -eu
reps=${1:-9}
out=${2:-/dev/stdout}
t() { /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -n 1; }
: >/tmp/floor.times
: >/tmp/gdr.times
./bench/cuda-floor >/dev/null	# warm the driver's caches once
./gdrcheck --json >/dev/null || true
i=0
while [ $i -lt "$reps" ]; do
	t ./bench/cuda-floor >>/tmp/floor.times
	t ./gdrcheck --json >>/tmp/gdr.times || true
	i=$((i + 1))
done
python3 - /tmp/floor.times /tmp/gdr.times "$reps" >"$out" <<'PY'
import statistics, sys
def load(p):
    rows = [l.split() for l in open(p) if l.strip()]
    return [float(r[0]) for r in rows], [int(r[1]) / 1024 for r in rows]
ft, fm = load(sys.argv[1]); gt, gm = load(sys.argv[2])
fmed, gmed = statistics.median(ft), statistics.median(gt)
print(f"reps {sys.argv[3]} (interleaved)")
print(f"floor    median {fmed:.3f} s [{min(ft):.3f}..{max(ft):.3f}]  RSS {statistics.median(fm):.1f} MiB")
print(f"gdrcheck median {gmed:.3f} s [{min(gt):.3f}..{max(gt):.3f}]  RSS {statistics.median(gm):.1f} MiB")
r = gmed / fmed
print(f"ratio gdrcheck/floor {r:.2f} (target <= 1.20): {'PASS' if r <= 1.2 else 'MISS'}")
PY
