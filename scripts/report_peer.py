#!/usr/bin/env python3
"""The Python peer of `benchbook report`, for scripts/scale_bench.py.

What a write-up's script does with pandas + matplotlib + jinja2, doing the
work benchbook's report does on the same rows:
  read the rows; keep measured samples; seconds per operation; per point the
  count, min, p20, median, p80, max, mean, std, CV and the 95 % interval of
  the median (round medians with a t quantile, widened to the order-statistic
  interval, as benchbook's src/vocab/interval.rs); GB/s at the median and its
  interval; per curve peak and plateau; one log-log chart with error bars
  (SVG); a Markdown report and an HTML page from jinja2 templates.

    python3 scripts/report_peer.py ROWS.parquet|ROWS.csv OUT_DIR [--vectorized]

`--vectorized` computes the same statistics as whole-column pandas/numpy
operations (grouped quantiles, one sort, order statistics picked by
index) instead of a Python function per point: what a pandas expert
would write, and the stronger peer. Both give the same report.

A `.parquet` path (the run's own results.parquet) is read with pyarrow,
only the columns used; a `.csv` one with pandas' CSV reader (for a Python
without a Parquet engine, as Debian 12's). Needs pandas, matplotlib and
jinja2 (and pyarrow for Parquet). Prints the seconds of each phase as JSON.
"""
import functools
import json
import math
import os
import sys
import time

T0 = time.perf_counter()
import jinja2  # noqa: E402
import matplotlib  # noqa: E402

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]


def order_stat_ci(n):
    """Largest l with 1 - 2 P(Binomial(n, 1/2) < l) >= 0.95 (1-based), or None."""
    below, best = 0.0, None
    ln_half_n = n * math.log(0.5)
    for l in range(1, n // 2 + 1):
        k = l - 1
        below += math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + ln_half_n)
        if 1.0 - 2.0 * below >= 0.95:
            best = l
        else:
            break
    return best


@functools.lru_cache(maxsize=None)
def order_stat_ci_cached(n):
    return order_stat_ci(n)


def vectorized_stats(m):
    """point_stats for every (run_id, point) at once, without a Python call per point."""
    keys = ["run_id", "point"]
    m = m.sort_values(keys + ["spo"], kind="stable")
    g = m.groupby(keys, sort=True)["spo"]
    out = g.agg(["count", "min", "max", "mean", "std"])
    q = g.quantile([0.2, 0.5, 0.8]).unstack()
    out["p20"], out["median"], out["p80"] = q[0.2], q[0.5], q[0.8]
    out["std"] = out["std"].fillna(0.0)
    n = out["count"].to_numpy()
    ls = np.array([order_stat_ci_cached(int(k)) or 0 for k in n])
    starts = np.concatenate([[0], np.cumsum(n)[:-1]])
    x = m["spo"].to_numpy()
    has = ls > 0
    lo = np.full(len(n), np.nan)
    hi = np.full(len(n), np.nan)
    lo[has] = x[starts[has] + ls[has] - 1]
    hi[has] = x[starts[has] + n[has] - ls[has]]
    rounds = m.groupby(keys + ["round"], sort=True)["spo"].median().groupby(level=[0, 1]).agg(["count", "std"])
    rounds = rounds.reindex(out.index)
    k = rounds["count"].fillna(0).to_numpy().astype(int)
    t = np.array([T975[min(max(c - 2, 0), 9)] for c in k])
    half = t * rounds["std"].to_numpy() / np.sqrt(np.maximum(k, 1))
    med = out["median"].to_numpy()
    two = k >= 2
    lo = np.where(two, np.where(has, np.minimum(med - half, lo), med - half), lo)
    hi = np.where(two, np.where(has, np.maximum(med + half, hi), med + half), hi)
    lo = np.where(two, np.maximum(lo, out["min"].to_numpy()), lo)
    hi = np.where(two, np.minimum(hi, out["max"].to_numpy()), hi)
    mean = out["mean"].to_numpy()
    return pd.DataFrame(
        {
            "samples": n,
            "min": out["min"].to_numpy(),
            "p20": out["p20"].to_numpy(),
            "median": med,
            "p80": out["p80"].to_numpy(),
            "max": out["max"].to_numpy(),
            "mean": mean,
            "std": out["std"].to_numpy(),
            "cv": np.where(mean != 0, out["std"].to_numpy() / np.where(mean != 0, mean, 1), np.inf),
            "ci_low": lo,
            "ci_high": hi,
        },
        index=out.index,
    )


def point_stats(g):
    x = np.sort(g["spo"].to_numpy())
    n = len(x)
    med = float(np.quantile(x, 0.5))
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if n > 1 else 0.0
    l = order_stat_ci(n)
    lo, hi = (float(x[l - 1]), float(x[n - l])) if l else (math.nan, math.nan)
    rounds = g.groupby("round")["spo"].median().to_numpy()
    if len(rounds) >= 2:
        half = T975[min(len(rounds) - 2, 9)] * rounds.std(ddof=1) / math.sqrt(len(rounds))
        lo = min(med - half, lo) if l else med - half
        hi = max(med + half, hi) if l else med + half
        lo, hi = max(lo, x[0]), min(hi, x[-1])
    return pd.Series(
        {
            "samples": n,
            "min": x[0],
            "p20": float(np.quantile(x, 0.2)),
            "median": med,
            "p80": float(np.quantile(x, 0.8)),
            "max": x[-1],
            "mean": mean,
            "std": std,
            "cv": std / mean if mean else math.inf,
            "ci_low": lo,
            "ci_high": hi,
        }
    )


MD = jinja2.Template(
    """# Report of {{ run }}

![bandwidth](bandwidth.svg)

## Saturation

| curve | peak GB/s | plateau GB/s |
|---|---:|---:|
{% for c in curves %}| {{ c.label }} | {{ "%.3g"|format(c.peak) }} | {{ "%.3g"|format(c.plateau) }} |
{% endfor %}
## Every point

| curve | size | median ± 95 % CI | GB/s (read + written) | CV | samples |
|---|---:|---:|---:|---:|---:|
{% for p in points %}| {{ p.label }} | {{ p.size }} | {{ "%.3g"|format(p.median) }} s ± {{ "%.2g"|format(p.ci_pct) }} % | {{ "%.3g"|format(p.gbps_moved) }} | {{ "%.2g"|format(p.cv_pct) }} % | {{ p.samples }} |
{% endfor %}
"""
)
HTML = jinja2.Template(
    """<!doctype html><html><head><meta charset="utf-8"><title>{{ run }}</title></head><body>
<h1>Report of {{ run }}</h1>{{ svg }}
<table>{% for p in points %}<tr><td>{{ p.label }}</td><td>{{ p.size }}</td><td>{{ "%.3g"|format(p.median) }}</td><td>{{ "%.3g"|format(p.gbps_moved) }}</td></tr>{% endfor %}</table>
</body></html>""",
    autoescape=True,
)


def main():
    path, out = sys.argv[1], sys.argv[2]
    vectorized = "--vectorized" in sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    phases = {"import": time.perf_counter() - T0}
    t = time.perf_counter()
    if path.endswith(".parquet"):
        cols = ["run_id", "point", "status", "seconds", "iterations", "round", "bench", "op", "threads",
                "size_bytes", "bytes_copied", "bytes_moved"]
        rows = pd.read_parquet(path, columns=cols)
    else:
        rows = pd.read_csv(path)
    phases["read"] = time.perf_counter() - t

    t = time.perf_counter()
    m = rows[rows["status"] == "measured"].copy()
    m["spo"] = m["seconds"] / m["iterations"]
    keys = ["run_id", "point"]
    params = m.groupby(keys, sort=True)[["bench", "op", "threads", "size_bytes", "bytes_copied", "bytes_moved"]].first()
    if vectorized:
        stats = vectorized_stats(m)
    else:
        stats = m.groupby(keys, sort=True)[["spo", "round"]].apply(point_stats)
    pts = params.join(stats).reset_index()
    pts["gbps_moved"] = pts["bytes_moved"] / pts["median"] / 1e9
    pts["gbps_low"] = pts["bytes_moved"] / pts["ci_high"] / 1e9
    pts["gbps_high"] = pts["bytes_moved"] / pts["ci_low"] / 1e9
    pts["label"] = pts["bench"] + " " + pts["op"] + ", " + pts["threads"].astype(str) + " threads"
    curves = []
    for label, c in pts.sort_values("size_bytes").groupby("label", sort=True):
        rates = c["gbps_moved"].to_numpy()
        curves.append({"label": label, "peak": float(rates.max()), "plateau": float(np.median(rates[-2:])), "c": c})
    phases["analyse"] = time.perf_counter() - t

    t = time.perf_counter()
    fig, ax = plt.subplots(figsize=(9, 5.4))
    for c in curves:
        d = c["c"]
        err = [d["gbps_moved"] - d["gbps_low"], d["gbps_high"] - d["gbps_moved"]]
        ax.errorbar(d["size_bytes"], d["gbps_moved"], yerr=err, marker="o", markersize=3, label=c["label"])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("size (bytes)")
    ax.set_ylabel("GB/s (bytes read + written)")
    ax.legend(fontsize=5, ncol=2)
    fig.savefig(os.path.join(out, "bandwidth.svg"))
    plt.close(fig)
    phases["chart"] = time.perf_counter() - t

    t = time.perf_counter()
    points = [
        {
            "label": r.label,
            "size": f"{int(r.size_bytes)} B",
            "median": r.median,
            "ci_pct": (r.ci_high - r.ci_low) / 2 / r.median * 100,
            "gbps_moved": r.gbps_moved,
            "cv_pct": r.cv * 100,
            "samples": int(r.samples),
        }
        for r in pts.itertuples()
    ]
    run = str(pts["run_id"].iloc[0])
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(MD.render(run=run, curves=curves, points=points))
    with open(os.path.join(out, "bandwidth.svg")) as f:
        svg = f.read()
    with open(os.path.join(out, "report.html"), "w") as f:
        f.write(HTML.render(run=run, svg=svg, points=points))
    phases["render"] = time.perf_counter() - t
    phases["total"] = time.perf_counter() - T0
    phases["points"] = len(points)
    print(json.dumps(phases))


if __name__ == "__main__":
    main()
