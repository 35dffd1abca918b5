#!/usr/bin/env python3
"""Do two independent runs' intervals hold each other's medians?

    python3 scripts/interval_check.py RUN_A RUN_B [--benchbook PATH] [--archive DIR]

Reads both runs with `benchbook show --json`, matches points by their
parameters, and prints, for each direction, the share of points whose 95 %
interval of the median (ci_low_seconds..ci_high_seconds) holds the other
run's median, with the points that miss. A well-calibrated interval holds
the other run's median at about 83 % of points, not 95 %: the other median
has its own noise.

It also prints the median absolute difference between the two runs'
medians, relative to their mean, beside each run's median half-width, and
their ratio. For a calibrated interval that ratio cannot be small: with
normal noise, the difference of two medians has √2 times the spread of one,
its median absolute value is 0.954 of that spread, and a 95 % half-width is
t(0.975, R − 1) ≈ 2.8 (5 rounds) to 1.96 (many) of it, so the ratio is
about 2.9 to 2.1. A ratio under 1.5 means intervals that hold the other
median at under about 70 % of points.
"""
import argparse
import json
import subprocess
import sys

KEY = ["bench", "backend", "device", "op", "variant", "dtype", "size_bytes", "m", "n", "k", "threads", "ranks", "peer", "method"]


def points(bb, archive, run):
    cmd = [bb, "-q", "--archive", archive, "show", run, "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {tuple(p.get(k) for k in KEY): p for p in json.loads(out)["points"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs=2)
    ap.add_argument("--benchbook", default="benchbook")
    ap.add_argument("--archive", default="data")
    a = ap.parse_args()
    pa, pb = (points(a.benchbook, a.archive, r) for r in a.runs)
    common = sorted(set(pa) & set(pb), key=lambda k: (str(k[0]), k[6] or 0))
    if not common:
        sys.exit("the two runs share no point")
    diffs = sorted(abs(pa[k]["median_seconds"] - pb[k]["median_seconds"])
                   / ((pa[k]["median_seconds"] + pb[k]["median_seconds"]) / 2) for k in common)
    med_diff = diffs[len(diffs) // 2] * 100
    print(f"median absolute difference between the runs' medians: {med_diff:.1f} % over {len(common)} points")
    for name, mine, other in ((a.runs[0], pa, pb), (a.runs[1], pb, pa)):
        held, missed = 0, []
        for k in common:
            p, q = mine[k], other[k]
            lo, hi = p.get("ci_low_seconds"), p.get("ci_high_seconds")
            if lo is not None and hi is not None and lo <= q["median_seconds"] <= hi:
                held += 1
            else:
                missed.append(
                    f"  {p['bench']} {p['op']} {p.get('size_bytes')} B: [{lo}, {hi}] vs {q['median_seconds']:.4g}"
                )
        widths = sorted((mine[k]["ci_high_seconds"] - mine[k]["ci_low_seconds"]) / 2 / mine[k]["median_seconds"]
                        for k in common if mine[k].get("ci_low_seconds") is not None)
        med_w = widths[len(widths) // 2] * 100 if widths else float("nan")
        print(f"{name}: its intervals hold the other run's median at {held}/{len(common)} points "
              f"({100 * held / len(common):.0f} %); median half-width ±{med_w:.1f} % "
              f"({med_w / med_diff:.1f}× the median difference)")
        for m in missed:
            print(m)


if __name__ == "__main__":
    main()
