#!/usr/bin/env python3
"""How fast, and in how much memory, does benchbook query a fleet archive of
10^4 runs x 10^3 rows (10^7 rows), against pandas + pyarrow doing the same
work on the same files, in the same run?

    cargo build --release --bin benchbook --example synth_archive
    python3 scripts/fleet_scale_bench.py                # makes /tmp/benchbook-fleet10k once
    python3 scripts/fleet_scale_bench.py --archive DIR --repeat 3 --json out.json

Tasks (each tool is its own process; wall time is the median of --repeat
runs, alternating tools, memory the largest resident set a run reached):
  list     the runs of one node, from 10^4 runs
           (benchbook: `list --node`, from its catalog; peer: every
           manifest.json read with json, filtered by node)
  history  one node's medians of every memcpy point per run, oldest first,
           with change points (benchbook: `history --node`; peer: the
           manifests to find the node's runs, then pyarrow reads its
           Parquet files and pandas takes per-run, per-point medians; the
           peer finds no change points, so it does less)
  fleet    every node's median of every point against the fleet's
           (benchbook: `fleet check`; peer: pyarrow reads all 10^4 files'
           needed columns, pandas takes per-run then per-node medians and
           each node's ratio to the fleet median per point)
`cold` runs remove the catalog first (benchbook then reads every manifest,
and hashes every results file a query touches, once); `warm` runs keep it.
The peer never checks a hash, so it does less there too.
Prints a Markdown table.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PEER = r'''
import glob, json, os, sys
task, archive, node = sys.argv[1], sys.argv[2], sys.argv[3]
def manifests():
    for p in sorted(glob.glob(os.path.join(archive, "runs", "*", "manifest.json"))):
        try:
            with open(p) as f:
                m = json.load(f)
        except Exception:
            continue
        yield os.path.dirname(p), m
if task == "list":
    ids = [m["run_id"] for d, m in manifests() if (m.get("placement") or {}).get("node") == node]
    print(len(ids))
    sys.exit(0)
import pandas as pd, pyarrow.parquet as pq, pyarrow as pa
cols = ["run_id", "bench", "op", "size_bytes", "threads", "sample", "seconds", "iterations", "status"]
if task == "history":
    runs = [(m["started_at"], d) for d, m in manifests() if (m.get("placement") or {}).get("node") == node]
    frames = []
    for started, d in sorted(runs):
        t = pq.read_table(os.path.join(d, "results.parquet"), columns=cols).to_pandas()
        t["started_at"] = started
        frames.append(t)
    df = pd.concat(frames)
    df = df[(df.status == "measured") & (df.bench == "memcpy")]
    df["spo"] = df.seconds / df.iterations
    med = df.groupby(["op", "size_bytes", "threads", "started_at", "run_id"]).spo.median().reset_index()
    med = med.sort_values("started_at")
    print(len(med))
    sys.exit(0)
if task == "fleet":
    nodes = {}
    paths = []
    for d, m in manifests():
        nodes[m["run_id"]] = (m.get("placement") or {}).get("node")
        paths.append(os.path.join(d, "results.parquet"))
    frames = []
    for p in paths:
        try:
            frames.append(pq.read_table(p, columns=cols))
        except Exception:
            pass
    df = pa.concat_tables(frames).to_pandas()
    df = df[df.status == "measured"]
    df["spo"] = df.seconds / df.iterations
    df["node"] = df.run_id.map(nodes)
    keys = ["bench", "op", "size_bytes", "threads"]
    run_med = df.groupby(keys + ["node", "run_id"]).spo.median().reset_index()
    node_med = run_med.groupby(keys + ["node"]).spo.median().reset_index()
    fleet = node_med.groupby(keys).spo.median().rename("fleet").reset_index()
    node_med = node_med.merge(fleet, on=keys)
    node_med["ratio"] = node_med.fleet / node_med.spo
    slow = node_med[node_med.ratio < 0.95].node.unique()
    print(len(node_med), len(slow))
'''


def run_measured(cmd):
    """Run cmd as a child: (wall s, peak RSS MiB)."""
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    # `fleet check` exits 1 when it names a node: that is its answer.
    if code not in (0, 1):
        sys.exit(f"{' '.join(cmd)} exited with {code}")
    return wall, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--archive", default="/tmp/benchbook-fleet10k")
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--node", default="node0017")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/benchbook"))
    ap.add_argument("--synth", default=os.path.join(ROOT, "target/release/examples/synth_archive"))
    ap.add_argument("--peer-python", default=sys.executable)
    ap.add_argument("--json", help="also write the numbers here")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.archive, "runs")):
        print(f"making {a.runs} runs x {a.rows} rows in {a.archive} ...", file=sys.stderr)
        subprocess.run([a.synth, a.archive, str(a.runs), str(a.rows), str(a.nodes)], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL)
    peer = os.path.join(tempfile.mkdtemp(), "peer.py")
    with open(peer, "w") as f:
        f.write(PEER)
    bb = lambda *args: [a.bin, "-q", "--archive", a.archive, *args]  # noqa: E731
    tasks = {
        "list": (bb("list", "--node", a.node, "--json"), [a.peer_python, peer, "list", a.archive, a.node]),
        "history": (bb("history", "--node", a.node, "--bench", "memcpy", "--json"),
                    [a.peer_python, peer, "history", a.archive, a.node]),
        "fleet": (bb("fleet", "check", "synthetic", "--json"), [a.peer_python, peer, "fleet", a.archive, a.node]),
    }
    catalog = os.path.join(a.archive, "catalog.parquet")
    results = []
    # Cold: the first benchbook command reads every manifest and hashes what it touches.
    if os.path.exists(catalog):
        os.remove(catalog)
    cold_wall, cold_rss = run_measured(tasks["history"][0])
    results.append(("history (cold catalog)", "benchbook", [cold_wall], [cold_rss]))
    for name, (ours, theirs) in tasks.items():
        walls = {"benchbook": [], "peer": []}
        rss = {"benchbook": [], "peer": []}
        for _ in range(a.repeat):
            for tool, cmd in (("benchbook", ours), ("peer", theirs)):
                w, r = run_measured(cmd)
                walls[tool].append(w)
                rss[tool].append(r)
        for tool in ("benchbook", "peer"):
            results.append((name, tool, walls[tool], rss[tool]))
    print("| task | tool | median wall s (min–max) | peak RSS MiB |")
    print("|---|---|---:|---:|")
    out = []
    for name, tool, w, r in results:
        label = "pandas + pyarrow" if tool == "peer" else tool
        print(f"| {name} | {label} | {statistics.median(w):.2f} ({min(w):.2f}–{max(w):.2f}) | {max(r):.0f} |")
        out.append({"task": name, "tool": tool, "wall_s": w, "peak_rss_mib": max(r)})
    for name in tasks:
        ours = statistics.median(next(x[2] for x in results if x[0] == name and x[1] == "benchbook"))
        theirs = statistics.median(next(x[2] for x in results if x[0] == name and x[1] == "peer"))
        print(f"\n{name}: the peer takes {theirs / ours:.1f}x benchbook's time")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    shutil.rmtree(os.path.dirname(peer), ignore_errors=True)


if __name__ == "__main__":
    main()
