#!/usr/bin/env python3
"""How fast, and in how much memory, does `benchbook report` handle 10^6
and 10^7 rows, against pandas + matplotlib + jinja2 doing the same work
(scripts/report_peer.py) on the same rows, in the same run?

    cargo build --release --examples --bin benchbook
    python3 scripts/scale_bench.py                      # 10^6 rows, both tools
    python3 scripts/scale_bench.py --rows 10000000 --no-peer

Each tool runs as its own process, --repeat times, alternating; wall time is
the median of the repeats, peak memory the largest resident set a run
reached (getrusage of that child). Two peers run: `peer` (a Python
function per point, as a write-up's script has it) and `peer-vectorized`
(the same statistics as whole-column pandas operations, what a pandas
expert would write; `--no-vectorized` leaves it out). The peers run under --peer-python
(default: the Python running this script) and reads the run's own
results.parquet with pyarrow, or with `--peer-reads csv` the same rows as
CSV (for a Python without a Parquet engine, as Debian 12's packages).
Prints a Markdown table; `--json FILE` keeps the numbers.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def run_measured(cmd):
    """Run cmd as a child and return (wall s, peak RSS MiB, stdout)."""
    r, w = os.pipe()
    err = tempfile.TemporaryFile()
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(w, 1)
        os.dup2(err.fileno(), 2)
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        err.seek(0)
        sys.exit(
            f"{' '.join(cmd)} failed with exit code {os.waitstatus_to_exitcode(status)}:\n"
            f"{err.read().decode(errors='replace')}\n"
            "Build both binaries first: cargo build --release --bin benchbook --example report_scale; "
            "the peer needs pandas, matplotlib and jinja2 under --peer-python."
        )
    return wall, usage.ru_maxrss / 1024.0, b"".join(chunks).decode()


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true", help="time benchbook only (e.g. 10^7 rows)")
    ap.add_argument("--no-vectorized", action="store_true", help="leave out the vectorized peer")
    ap.add_argument("--peer-python", default=sys.executable)
    ap.add_argument("--peer-reads", choices=["parquet", "csv"], default="parquet")
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    ap.add_argument("--benchbook", default=os.path.join(target, "release", "benchbook"))
    ap.add_argument("--example", default=os.path.join(target, "release", "examples", "report_scale"))
    ap.add_argument("--json", help="write the results here too")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    results = []
    for n in a.rows:
        tmp = tempfile.mkdtemp(prefix="benchbook-scale-")
        try:
            archive, csv = os.path.join(tmp, "archive"), os.path.join(tmp, "rows.csv")
            gen = [a.example, str(n), archive] + ([csv] if not a.no_peer and a.peer_reads == "csv" else [])
            run_id = subprocess.run(gen, check=True, capture_output=True, text=True).stdout.strip()
            if a.peer_reads == "parquet":
                csv = os.path.join(archive, "runs", run_id, "results.parquet")
            bb = [a.benchbook, "-q", "--archive", archive, "report", run_id, "--out", os.path.join(tmp, "bb")]
            peer = [a.peer_python, os.path.join(here, "report_peer.py"), csv, os.path.join(tmp, "peer")]
            peers = {} if a.no_peer else {"peer": peer}
            if not a.no_peer and not a.no_vectorized:
                peers["peer-vectorized"] = peer + ["--vectorized"]
            runs = {"benchbook": [], **{name: [] for name in peers}}
            for _ in range(a.repeat):
                runs["benchbook"].append(run_measured(bb)[:2])
                for name, cmd in peers.items():
                    wall, rss, out = run_measured(cmd)
                    runs[name].append((wall, rss, json.loads(out.strip().splitlines()[-1])))
            row = {"rows": n}
            for tool, rs in runs.items():
                if rs:
                    row[tool] = {
                        "median_s": median([r[0] for r in rs]),
                        "min_s": min(r[0] for r in rs),
                        "max_s": max(r[0] for r in rs),
                        "peak_rss_mib": max(r[1] for r in rs),
                    }
            for name in peers:
                phases = [r[2] for r in runs[name]]
                row[name]["phases_median_s"] = {
                    k: median([p[k] for p in phases]) for k in phases[0] if k != "points"
                }
                bb_s, peer_s = row["benchbook"]["median_s"], row[name]["median_s"]
                row[name]["ratio_over_benchbook"] = peer_s / bb_s
                no_read = peer_s - row[name]["phases_median_s"]["read"]
                row[name]["ratio_without_its_read_over_benchbook"] = no_read / bb_s
            results.append(row)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("| rows | tool | median wall s (min–max) | peak RSS MiB |")
    print("|---:|---|---:|---:|")
    for r in results:
        for tool in ("benchbook", "peer", "peer-vectorized"):
            if tool in r:
                t = r[tool]
                print(f"| {r['rows']:,} | {tool} | {t['median_s']:.2f} ({t['min_s']:.2f}–{t['max_s']:.2f}) | {t['peak_rss_mib']:.0f} |")
    for r in results:
        for name in ("peer", "peer-vectorized"):
            if name in r:
                p = r[name]
                print(
                    f"\n{r['rows']:,} rows: {name} takes {p['ratio_over_benchbook']:.1f}× benchbook's time "
                    f"({p['ratio_without_its_read_over_benchbook']:.1f}× without its {a.peer_reads} read); "
                    f"phases (median s): {json.dumps({k: round(v, 3) for k, v in p['phases_median_s'].items()})}"
                )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
