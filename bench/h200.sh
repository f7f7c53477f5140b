#!/bin/sh
# On a GPU node (the device machine): gdrcheck --json and --no-alloc --json
# against the driver floor (bench/cuda-floor: cuInit, attributes, one
# cuMemAlloc and one dma-buf export per GPU) and --no-alloc against its own
# floor (bench/cuda-floor --no-alloc: cuInit and the attributes only),
# interleaved, REPS times each. Prints medians (wall time to the millisecond,
# from spawn to reap, and peak RSS), the ratio full/floor (target <= 1.05),
# --no-alloc's median (target <= 0.15 s) beside its floor's, and where one
# run of each kind spends its time (worker stages, slowest results). Run from the repository root with ./gdrcheck and the
# floor:
#   cc -O2 -I. -o bench/cuda-floor bench/cuda-floor.c -ldl
set -eu
reps=${1:-11}
out=${2:-/dev/stdout}
exec python3 - "$reps" >"$out" <<'PY'
import json, os, statistics, subprocess, sys, time

reps = int(sys.argv[1])
kinds = {
    "floor": ["./bench/cuda-floor"],
    "full": ["./gdrcheck", "--json"],
    "floor-na": ["./bench/cuda-floor", "--no-alloc"],
    "no-alloc": ["./gdrcheck", "--json", "--no-alloc"],
}


def run(cmd):
    """Wall seconds from spawn to reap, and the command's peak RSS (MiB)
    as /usr/bin/time saw it (python's own would leak into wait4's)."""
    rss = "/tmp/h200-bench.rss"
    argv = ["/usr/bin/time", "-f", "%M", "-o", rss] + cmd
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t = time.perf_counter() - t0
    with open(rss) as f:
        return t, int(f.read().split()[-1]) / 1024


for cmd in kinds.values():		# warm the driver's caches once
    run(cmd)
times = {k: [] for k in kinds}
rss = {k: [] for k in kinds}
for _ in range(reps):
    for k, cmd in kinds.items():
        t, m = run(cmd)
        times[k].append(t)
        rss[k].append(m)
med = {k: statistics.median(v) for k, v in times.items()}
print(f"reps {reps} (interleaved: {', '.join(kinds)}; wall from spawn to reap)")
for k in kinds:
    v = times[k]
    print(f"{k:<9} median {med[k]:.3f} s [{min(v):.3f}..{max(v):.3f}]"
          f"  RSS {statistics.median(rss[k]):.1f} MiB")
r = med["full"] / med["floor"]
print(f"ratio full/floor {r:.2f} (target <= 1.05): {'PASS' if r <= 1.05 else 'MISS'}")
n = med["no-alloc"]
print(f"no-alloc {n:.3f} s (target <= 0.15 s): {'PASS' if n <= 0.15 else 'MISS'};"
      f" its floor (cuInit, attributes, teardown) {med['floor-na']:.3f} s,"
      f" ratio {n / med['floor-na']:.2f}")
for k in ("full", "no-alloc"):
    res = subprocess.run(kinds[k] + ["-v"], capture_output=True, text=True)
    doc = json.loads(res.stdout)
    print(f"one {k} run: {doc['duration_ms']:.1f} ms to the report; worker "
          "stages (nvml beside the others):")
    for w in doc["workers"]:
        print(f"  {w['stage']:<13} {w['duration_ms']:8.1f} ms  {w['state']}")
    print("  slowest results:")
    for x in sorted(doc["results"], key=lambda x: -x.get("duration_ms", 0))[:5]:
        print(f"    {x['gate']:<18} {x['subject']:<10} {x.get('duration_ms', 0):8.1f} ms")
PY
