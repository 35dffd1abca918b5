#!/usr/bin/env bash
# benchbook's CPU memcpy/STREAM vs a plain-C reference (gcc -O3 -fopenmp),
# on this machine, same sizes, threads, buffer placement and byte counting.
# The whole comparison repeats REPS times, alternating benchbook and C, and
# compares per-point medians over the repetitions, so that a noisy moment
# of the machine does not decide a ratio. Target: ratio >= 0.9.
#
#   scripts/compare_c_reference.sh [SIZES] [THREADS] [REPS]
#   defaults: 64K,1M,64M,256M   1,<nproc>   3
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-64K,1M,64M,256M}
threads=${2:-1,$(nproc)}
reps=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gcc -O3 -march=native -fopenmp scripts/c_reference.c -o "$work/c_reference"
cargo build --release --quiet
bb="${CARGO_TARGET_DIR:-target}/release/benchbook"

to_bytes() { python3 -c "
import sys
s=sys.argv[1].strip(); m={'K':10,'M':20,'G':30}
print(int(s[:-1])<<m[s[-1]] if s[-1] in m else int(s))" "$1"; }

for rep in $(seq "$reps"); do
  echo "repetition $rep/$reps" >&2
  "$bb" run memcpy stream --sizes "$sizes" --stream-sizes "$sizes" --threads "$threads" \
    --archive "$work/archive" --quiet --json > /dev/null
  "$bb" show latest --archive "$work/archive" --json > "$work/show.$rep.json"
  for t in ${threads//,/ }; do
    for s in ${sizes//,/ }; do
      b=$(to_bytes "$s")
      for op in memcpy copy scale add triad; do
        "$work/c_reference" "$op" "$b" "$t" >> "$work/c.txt"
      done
    done
  done
done

python3 - "$work" "$reps" <<'PY'
import json, statistics, sys
work, reps = sys.argv[1], int(sys.argv[2])
bb = {}
for rep in range(1, reps + 1):
    for p in json.load(open(f"{work}/show.{rep}.json"))["points"]:
        op = "memcpy" if p["bench"] == "memcpy" else p["op"]
        bb.setdefault((op, p["size_bytes"], p["threads"]), []).append(p["gbps_moved"])
c = {}
for line in open(f"{work}/c.txt"):
    op, size, thr, v = line.split()
    c.setdefault((op, int(size), int(thr)), []).append(float(v))
ratios = []
print(f"{'op':<7} {'bytes':>11} {'thr':>4} {'benchbook GB/s':>15} {'C GB/s':>9} {'ratio':>6}   (medians of {reps} repetitions, bytes read + written)")
for key in sorted(c, key=lambda k: (k[2], k[1], ["memcpy","copy","scale","add","triad"].index(k[0]))):
    if key not in bb:
        continue
    b, r = statistics.median(bb[key]), statistics.median(c[key])
    ratios.append(b / r)
    print(f"{key[0]:<7} {key[1]:>11} {key[2]:>4} {b:>15.2f} {r:>9.2f} {b / r:>6.3f}")
ratios.sort()
print(f"\n{len(ratios)} points; ratio benchbook/C: min {ratios[0]:.3f}, median {statistics.median(ratios):.3f}, max {ratios[-1]:.3f}; "
      f"{sum(r >= 0.9 for r in ratios)} of {len(ratios)} at or above 0.9")
PY
