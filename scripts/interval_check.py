#!/usr/bin/env python3
"""Do independent runs' intervals hold each other's medians?

    python3 scripts/interval_check.py RUN_A RUN_B [--benchbook PATH] [--archive DIR]
    python3 scripts/interval_check.py --sweeps 3 [--load] [--json OUT] [-- RUN ARGS...]

With two run ids, reads both runs with `benchbook show --json`, matches
points by their parameters, and prints, for each direction, the share of
points whose interval holds the other run's median: the rerun interval
(ci_low_seconds..ci_high_seconds, what every table states: where a second
run's median should fall 95 % of the time) and the within-run interval of
the median (within_low_seconds..within_high_seconds: how precisely the run
pinned its own median), with the points the rerun interval misses.

With --sweeps N, runs N sweeps itself (by default `run memcpy --sizes
4K..256M --threads 1`) into a fresh archive, one after another, and checks
every ordered pair. --load starts one busy process per CPU before the first
sweep and stops them after the last: a reproducible background load, as a
fleet node beside other tenants or a CI runner sees. It also checks that
every measured point has at least 3 rounds or a note that says why, and
prints each sweep's wall time.

Beside coverage it prints the median absolute difference between two runs'
medians and each run's median half-width, and their ratio. For normal
noise, an interval that holds the other run's median at 80 % of points
needs a half-width of 1.28 σ of the difference, and the median absolute
difference is 0.674 σ: so a ratio of at least 1.9 at 80 %, and 2.9 for a
calibrated 95 % prediction interval. A ratio under 1.9 means an interval
that cannot hold 80 %.
"""
import argparse
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time

KEY = ["bench", "backend", "device", "op", "variant", "dtype", "size_bytes", "m", "n", "k", "threads", "ranks", "peer", "method"]
DEFAULT_RUN = ["run", "memcpy", "--sizes", "4K..256M", "--threads", "1"]


def show(bb, archive, run):
    cmd = [bb, "-q", "--archive", archive, "show", run, "--json"]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def points(doc):
    return {tuple(p.get(k) for k in KEY): p for p in doc["points"]}


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return float("nan")
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def holds(p, lo_key, hi_key, x):
    lo, hi = p.get(lo_key), p.get(hi_key)
    return lo is not None and hi is not None and lo <= x <= hi


def half(p, lo_key, hi_key):
    lo, hi = p.get(lo_key), p.get(hi_key)
    if lo is None or hi is None:
        return None
    return (hi - lo) / 2 / p["median_seconds"]


def direction(mine, other):
    """One direction of a pair: how often mine's intervals hold other's medians."""
    common = sorted(set(mine) & set(other), key=lambda k: (str(k[0]), str(k[3]), k[6] or 0))
    if not common:
        return None
    diffs = [abs(mine[k]["median_seconds"] - other[k]["median_seconds"])
             / ((mine[k]["median_seconds"] + other[k]["median_seconds"]) / 2) for k in common]
    rerun = sum(holds(mine[k], "ci_low_seconds", "ci_high_seconds", other[k]["median_seconds"]) for k in common)
    within = sum(holds(mine[k], "within_low_seconds", "within_high_seconds", other[k]["median_seconds"]) for k in common)
    hw_rerun = median([h for k in common if (h := half(mine[k], "ci_low_seconds", "ci_high_seconds")) is not None])
    hw_within = median([h for k in common if (h := half(mine[k], "within_low_seconds", "within_high_seconds")) is not None])
    missed = [
        f"  {mine[k]['bench']} {mine[k]['op']} {mine[k].get('size_bytes')} B: "
        f"[{mine[k].get('ci_low_seconds'):.4g}, {mine[k].get('ci_high_seconds'):.4g}] vs {other[k]['median_seconds']:.4g}"
        for k in common
        if mine[k].get("ci_low_seconds") is not None
        and not holds(mine[k], "ci_low_seconds", "ci_high_seconds", other[k]["median_seconds"])
    ]
    return {
        "points": len(common),
        "rerun_held": rerun,
        "within_held": within,
        "rerun_coverage": rerun / len(common),
        "within_coverage": within / len(common),
        "rerun_half_width": hw_rerun,
        "within_half_width": hw_within,
        "median_difference": median(diffs),
        "missed": missed,
    }


def print_direction(name, d, verbose=True):
    ratio = d["rerun_half_width"] / d["median_difference"] if d["median_difference"] > 0 else float("inf")
    print(f"{name}: rerun intervals hold the other run's median at {d['rerun_held']}/{d['points']} points "
          f"({100 * d['rerun_coverage']:.0f} %), median half-width ±{100 * d['rerun_half_width']:.1f} % "
          f"({ratio:.1f}× the median difference of {100 * d['median_difference']:.1f} %); "
          f"within-run intervals {d['within_held']}/{d['points']} ({100 * d['within_coverage']:.0f} %), "
          f"±{100 * d['within_half_width']:.1f} %")
    if verbose:
        for m in d["missed"]:
            print(m)


# The words a point's note carries when its first round showed that its
# minimum rounds do not fit (ROUNDS_FIT in src/vocab/kinds.rs).
ROUNDS_FIT = "rounds fit:"


def rounds_check(doc):
    """Measured points with fewer than 3 rounds and no note saying why."""
    bad = []
    for p in doc["points"]:
        if p.get("rounds", 0) < 3 and ROUNDS_FIT not in (p.get("note") or ""):
            bad.append(f"{p['bench']} {p['op']} {p.get('size_bytes')} B: {p.get('rounds')} rounds")
    return bad


BANDS = [("under 64 KiB", 0, 64 << 10), ("64 KiB to 2 MiB", 64 << 10, 2 << 20), ("2 MiB and up", 2 << 20, 1 << 62)]


def self_compare(bb, archive, runs):
    """`compare A B --json` of each sweep with the next: identical runs, so
    every faster/slower verdict is a false one, and every exit 1 a false
    regression. Also the detectable change per size band."""
    called = verdicts = exit0 = 0
    detect = {name: [] for name, _, _ in BANDS}
    for x, y in zip(runs, runs[1:]):
        out = subprocess.run([bb, "-q", "--archive", archive, "compare", x, y, "--json"],
                             capture_output=True, text=True)
        exit0 += out.returncode == 0
        doc = json.loads(out.stdout)
        for p in doc["points"]:
            verdicts += 1
            called += p["verdict"] in ("faster", "slower")
            size = p.get("size_bytes") or 0
            for name, lo, hi in BANDS:
                if lo <= size < hi and p.get("detectable") is not None:
                    detect[name].append(p["detectable"])
    return {"pairs": max(len(runs) - 1, 0), "verdicts": verdicts, "called": called, "exit0": exit0,
            "detectable": {k: median(v) for k, v in detect.items() if v}}


def spin():
    while True:
        pass


def sweeps(a):
    archive = a.archive_dir or tempfile.mkdtemp(prefix="interval-check-")
    load = []
    if a.load:
        load = [multiprocessing.Process(target=spin, daemon=True) for _ in range(os.cpu_count() or 1)]
        for p in load:
            p.start()
    runs, walls = [], []
    try:
        tag = "load" if a.load else "idle"
        for i in range(a.sweeps):
            label = f"check-{tag}-{i + 1}"
            t0 = time.monotonic()
            subprocess.run([a.benchbook, "-q", "--archive", archive, *a.run_args, "--label", label],
                           check=True, stdout=subprocess.DEVNULL)
            walls.append(time.monotonic() - t0)
            listing = subprocess.run([a.benchbook, "-q", "--archive", archive, "list", "--json"],
                                     check=True, capture_output=True, text=True).stdout
            ids = [r["run_id"] for r in json.loads(listing) if r.get("label") == label]
            runs.append(ids[-1])
            print(f"sweep {i + 1}/{a.sweeps} ({tag}): {ids[-1]} in {walls[-1]:.1f} s", flush=True)
    finally:
        for p in load:
            p.terminate()
    docs = {r: show(a.benchbook, archive, r) for r in runs}
    pts = {r: points(d) for r, d in docs.items()}
    dirs = []
    for x in runs:
        for y in runs:
            if x != y:
                d = direction(pts[x], pts[y])
                print_direction(f"{x} against {y}", d, verbose=False)
                dirs.append(d)
    selfcmp = self_compare(a.benchbook, archive, runs)
    allp = sum(d["points"] for d in dirs)
    summary = {
        "case": "load" if a.load else "idle",
        "sweeps": a.sweeps,
        "wall_seconds": walls,
        "directions": len(dirs),
        "rerun_coverage": sum(d["rerun_held"] for d in dirs) / allp,
        "rerun_coverage_worst": min(d["rerun_coverage"] for d in dirs),
        "within_coverage": sum(d["within_held"] for d in dirs) / allp,
        "rerun_half_width": median([d["rerun_half_width"] for d in dirs]),
        "within_half_width": median([d["within_half_width"] for d in dirs]),
        "median_difference": median([d["median_difference"] for d in dirs]),
        "short_of_rounds": {r: rounds_check(d) for r, d in docs.items() if rounds_check(d)},
        "self_compare": selfcmp,
        "archive": archive,
    }
    print(f"\n{summary['case']}: {a.sweeps} sweeps, {len(dirs)} directions, {allp} point pairs; "
          f"sweeps took {min(walls):.1f}–{max(walls):.1f} s")
    print(f"  rerun intervals held the other run's median at {100 * summary['rerun_coverage']:.0f} % of point pairs "
          f"(worst direction {100 * summary['rerun_coverage_worst']:.0f} %), median half-width "
          f"±{100 * summary['rerun_half_width']:.1f} %")
    print(f"  within-run intervals: {100 * summary['within_coverage']:.0f} %, ±{100 * summary['within_half_width']:.1f} %")
    print(f"  median absolute difference between two runs' medians: {100 * summary['median_difference']:.1f} %")
    sc = selfcmp
    print(f"  compare, one run a side, each sweep with the next ({sc['pairs']} comparisons): "
          f"{sc['called']} of {sc['verdicts']} point verdicts faster/slower "
          f"({100 * sc['called'] / max(sc['verdicts'], 1):.1f} %), {sc['exit0']} of {sc['pairs']} exit 0")
    for band, d in sc["detectable"].items():
        print(f"  detectable change (median over points and comparisons), {band}: {100 * d:.1f} %")
    if summary["short_of_rounds"]:
        print("  points with fewer than 3 rounds and no reason:", summary["short_of_rounds"])
    else:
        print("  every measured point has at least 3 rounds, or a note that says why")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1)
    if not a.archive_dir and not a.keep:
        shutil.rmtree(archive, ignore_errors=True)
    return summary


def main():
    argv = sys.argv[1:]
    run_args = DEFAULT_RUN
    if "--" in argv:
        i = argv.index("--")
        argv, run_args = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*")
    ap.add_argument("--benchbook", default="benchbook")
    ap.add_argument("--archive", default="data", help="the archive the two runs are in")
    ap.add_argument("--sweeps", type=int, help="run this many sweeps and check every pair")
    ap.add_argument("--load", action="store_true", help="one busy process per CPU during the sweeps")
    ap.add_argument("--archive-dir", help="archive for --sweeps (default: a temporary one, removed after)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary archive")
    ap.add_argument("--json", help="write the --sweeps summary here")
    a = ap.parse_args(argv)
    a.run_args = run_args
    if a.sweeps:
        if a.sweeps < 2:
            sys.exit("--sweeps needs at least 2 sweeps to make a pair")
        sweeps(a)
        return
    if len(a.runs) != 2:
        sys.exit("give two run ids, or --sweeps N")
    pa, pb = (points(show(a.benchbook, a.archive, r)) for r in a.runs)
    for name, mine, other in ((a.runs[0], pa, pb), (a.runs[1], pb, pa)):
        d = direction(mine, other)
        if d is None:
            sys.exit("the two runs share no point")
        print_direction(name, d)


if __name__ == "__main__":
    main()
