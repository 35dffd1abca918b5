#!/usr/bin/env python3
"""The telemetry sampler's cost, from one `run ... --telemetry-ab` run.

Each point's rounds alternate with the sampler on (rows with
`sensor_readings`) and paused (rows without), in the run's shuffled order,
so both halves see the same GPU and clock state. For each point this prints
the median of the on-rounds' medians over the off-rounds' (seconds per
operation: > 1 means slower with the sampler), with the rounds' spread.

    scripts/telemetry_overhead.py RUN_DIR [RUN_DIR ...]

RUN_DIR: an archive run folder (`data/runs/<id>`). Needs pyarrow.
"""
import statistics
import sys
from collections import defaultdict

try:
    import pyarrow.parquet as pq
except ImportError:
    sys.exit("needs pyarrow (pip install pyarrow)")


def label(r):
    if r["bench"] == "gemm":
        return f"gemm {r['dtype']} {r['m']}x{r['n']}x{r['k']}"
    size = r["size_bytes"] or 0
    unit = next(u for u, s in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)) if size >= s or s == 1)
    div = {"GiB": 1 << 30, "MiB": 1 << 20, "KiB": 1 << 10, "B": 1}[unit]
    return f"{r['bench']} {r['method'] or ''} {r['variant'] or ''} {size // div} {unit}".replace("  ", " ")


def main(runs):
    for run in runs:
        rows = pq.read_table(f"{run}/results.parquet").to_pylist()
        rounds = defaultdict(lambda: defaultdict(list))
        names = {}
        for r in rows:
            if r["status"] != "measured" or r["metric"] is not None or r["round"] is None:
                continue
            on = r["sensor_readings"] is not None
            rounds[r["point"]][(r["round"], on)].append(r["seconds"] / r["iterations"])
            names[r["point"]] = label(r)
        print(f"## {run.rstrip('/').split('/')[-1]}\n")
        print("| point | rounds on / off | on / off (seconds per op) | spread of on, off round medians |")
        print("|---|---|---|---|")
        ratios = []
        for p in sorted(rounds):
            med = {True: [], False: []}
            for (_, on), xs in rounds[p].items():
                med[on].append(statistics.median(xs))
            if not med[True] or not med[False]:
                print(f"| {names[p]} | {len(med[True])} / {len(med[False])} | (needs rounds of both) | |")
                continue
            ratio = statistics.median(med[True]) / statistics.median(med[False])
            ratios.append(ratio)
            spread = [
                (max(v) - min(v)) / statistics.median(v) * 100 if len(v) > 1 else float("nan")
                for v in (med[True], med[False])
            ]
            print(f"| {names[p]} | {len(med[True])} / {len(med[False])} | {ratio:.4f} | "
                  f"±{spread[0] / 2:.2f} %, ±{spread[1] / 2:.2f} % |")
        if ratios:
            print(f"\nmedian on/off over {len(ratios)} points: {statistics.median(ratios):.4f} "
                  f"(range {min(ratios):.4f}–{max(ratios):.4f})\n")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
