#!/usr/bin/env bash
# benchbook's CPU memcpy/STREAM vs a plain-C reference (gcc -O3 -fopenmp),
# measured back to back on this machine, same sizes and threads, same byte
# counting. Prints the ratio benchbook / C per point (target: >= 0.9).
#
#   scripts/compare_c_reference.sh [SIZES] [THREADS]    default: 1M,64M,256M  1,<nproc>
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${1:-1M,64M,256M}
threads=${2:-1,$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gcc -O3 -march=native -fopenmp scripts/c_reference.c -o "$work/c_reference"
cargo build --release --quiet
bb=target/release/benchbook
[ -n "${CARGO_TARGET_DIR:-}" ] && bb="$CARGO_TARGET_DIR/release/benchbook"

"$bb" run memcpy stream --sizes "$sizes" --stream-sizes "$sizes" --threads "$threads" \
  --archive "$work/archive" --quiet --json > "$work/run.json"
"$bb" show latest --archive "$work/archive" --json > "$work/show.json"

to_bytes() { python3 -c "
import sys
s=sys.argv[1].strip(); m={'K':10,'M':20,'G':30}
print(int(s[:-1])<<m[s[-1]] if s[-1] in m else int(s))" "$1"; }

: > "$work/c.txt"
for t in ${threads//,/ }; do
  for s in ${sizes//,/ }; do
    b=$(to_bytes "$s")
    for op in memcpy copy scale add triad; do
      OMP_PROC_BIND=close "$work/c_reference" "$op" "$b" "$t" >> "$work/c.txt"
    done
  done
done

python3 - "$work/show.json" "$work/c.txt" <<'PY'
import json, sys
points = json.load(open(sys.argv[1]))["points"]
bb = {}
for p in points:
    op = "memcpy" if p["bench"] == "memcpy" else p["op"]
    bb[(op, p["size_bytes"], p["threads"])] = p["gbps_moved"]
ratios = []
print(f"{'op':<7} {'bytes':>11} {'thr':>4} {'benchbook GB/s':>15} {'C GB/s':>9} {'ratio':>6}")
for line in open(sys.argv[2]):
    op, size, thr, c = line.split()
    v = bb.get((op, int(size), int(thr)))
    if v is None:
        continue
    r = v / float(c)
    ratios.append(r)
    print(f"{op:<7} {int(size):>11} {int(thr):>4} {v:>15.2f} {float(c):>9.2f} {r:>6.3f}")
ratios.sort()
print(f"\n{len(ratios)} points; ratio benchbook/C: min {ratios[0]:.3f}, median {ratios[len(ratios)//2]:.3f}, max {ratios[-1]:.3f}")
PY
