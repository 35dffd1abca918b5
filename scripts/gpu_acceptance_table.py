#!/usr/bin/env python3
"""The GPU acceptance table: benchbook against PyTorch and plain CUDA C on the same GPU.

    python3 scripts/gpu_acceptance_table.py OUTDIR [BENCHBOOK]
    python3 scripts/gpu_acceptance_table.py --self-test

Reads what scripts/gpu-acceptance.sh left in OUTDIR:
  * benchbook's runs, as `show RUN --json` output: OUTDIR/show/*.json when
    present, else asked of BENCHBOOK (argv or $BB) with `--archive
    OUTDIR/archive list --json` and `show RUN --json`. The run labelled
    `gpu-acceptance` gives the copies, `interleaved-N` the GEMMs of round N;
  * PyTorch's: OUTDIR/torch/torch_memcpy.json, OUTDIR/torch-rN/torch_gemm.json;
  * CUDA C's: OUTDIR/cuda_c_memcpy.csv; the clocks: OUTDIR/clocks-{before,after}.csv.

Bandwidth = bytes copied once / median seconds; TFLOP/s = 2·m·n·k / median
seconds / 1e12. A ratio is benchbook / reference (above 1: benchbook faster).
For each GEMM dtype and shape, benchbook's fastest point over its axes
(layout, FP8 accumulation) is taken, and named. Prints the table and writes
OUTDIR/acceptance.md; a piece that is missing is said to be, with why.
"""
import csv
import glob
import json
import os
import re
import statistics
import subprocess
import sys

MIB = 1 << 20


# ---- reading -------------------------------------------------------------

def load_runs(outdir, bb):
    """[(show output, where from)] of every run, and a note when none could be read."""
    files = sorted(f for f in glob.glob(os.path.join(outdir, "show", "*.json")) if not f.endswith("list.json"))
    if files:
        runs = []
        for f in files:
            try:
                with open(f) as fh:
                    runs.append(json.load(fh))
            except (OSError, ValueError) as e:
                print(f"note: {f} unreadable: {e}", file=sys.stderr)
        return runs, None
    if not bb:
        return [], "no OUTDIR/show/*.json, and no benchbook binary given (argv or $BB)"
    archive = ["--archive", os.path.join(outdir, "archive")]
    try:
        listed = json.loads(subprocess.run([bb, *archive, "list", "--json"], check=True, capture_output=True,
                                           text=True, timeout=120).stdout)
        runs = []
        for r in listed:
            if r.get("status") == "damaged":
                continue
            out = subprocess.run([bb, *archive, "show", r["run_id"], "--json"], capture_output=True, text=True,
                                 timeout=120)
            if out.returncode == 0:
                runs.append(json.loads(out.stdout))
            else:
                print(f"note: show {r['run_id']} failed: {out.stderr.strip()[:200]}", file=sys.stderr)
        return runs, None
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        return [], f"benchbook list/show failed: {e}"


def label_of(run):
    return (run.get("manifest") or {}).get("label") or ""


def latest(runs, pred):
    """The last-started run whose label passes `pred`, or None."""
    chosen = [r for r in runs if pred(label_of(r))]
    chosen.sort(key=lambda r: r["manifest"].get("started_at", ""))
    return chosen[-1] if chosen else None


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, f"{os.path.basename(path)}: {e.strerror if isinstance(e, OSError) else e}"


def torch_memcpy_gbps(doc):
    """{bytes: GB/s copied once} from torch_reference.py's memcpy JSON."""
    return {int(v["bytes"]): v["bytes"] / v["time"] / 1e9
            for v in doc.values() if isinstance(v, dict) and "bytes" in v and v.get("time", 0) > 0}


def read_cuda_csv(path):
    """{test: {bytes: GB/s copied once}} from cuda_memcpy_reference's CSV."""
    out = {}
    with open(path) as f:
        rows = [line for line in f if line.strip() and not line.startswith("#")]
    for row in csv.DictReader(rows):
        try:
            b, t = int(row["bytes"]), float(row["seconds"])
        except (KeyError, TypeError, ValueError):
            continue
        if t > 0:
            out.setdefault(row["test"], {})[b] = b / t / 1e9
    return out


# ---- the checks: pure functions on plain data ------------------------------

def copy_gbps(points, bench, method, variant):
    """{size_bytes: GB/s copied once} of benchbook's points of one kind."""
    out = {}
    for p in points:
        if (p.get("bench"), p.get("method"), p.get("variant")) == (bench, method, variant) \
                and p.get("size_bytes") and p.get("median_seconds"):
            out[p["size_bytes"]] = p["size_bytes"] / p["median_seconds"] / 1e9
    return out


def ratios(ours, refs, min_bytes):
    """[(bytes, ours, best reference, ratio)] at every size >= min_bytes that
    benchbook and at least one reference measured; the best (fastest)
    reference is taken."""
    out = []
    for b in sorted(ours):
        best = max((r[b] for r in refs if b in r), default=None)
        if b >= min_bytes and best:
            out.append((b, ours[b], best, ours[b] / best))
    return out


def verdict(values, low, high=None):
    """'pass' when every value is within [low, high], else 'FAIL'; '-' for none."""
    if not values:
        return "-"
    return "pass" if all(v >= low and (high is None or v <= high) for v in values) else "FAIL"


def span(rs):
    """'0.991–1.080× (min at 4 MiB)' for [(bytes, ours, ref, ratio)]."""
    lo, hi = min(rs, key=lambda r: r[3]), max(rs, key=lambda r: r[3])
    return f"{lo[3]:.3f}–{hi[3]:.3f}× (min at {size_text(lo[0])}, {len(rs)} sizes)"


def size_text(b):
    for unit, n in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1024)):
        if b >= n and b % n == 0:
            return f"{b // n} {unit}"
    return f"{b} B"


def gemm_best(points):
    """{(dtype, m, n, k): (TFLOP/s, what)} of benchbook's fastest GEMM point
    per dtype and shape, `what` naming its method and axes."""
    out = {}
    for p in points:
        if p.get("bench") != "gemm" or not p.get("median_seconds") or not p.get("m"):
            continue
        key = (p.get("dtype"), p["m"], p["n"], p["k"])
        tflops = 2 * p["m"] * p["n"] * p["k"] / p["median_seconds"] / 1e12
        what = " ".join(x for x in (p.get("method"), axes_text(p.get("axes"))) if x)
        if key not in out or tflops > out[key][0]:
            out[key] = (tflops, what)
    return out


def axes_text(axes):
    try:
        return " ".join(f"{k}={v}" for k, v in sorted(json.loads(axes).items())) if axes else ""
    except ValueError:
        return axes


def torch_gemm(doc, dtype, m, n, k, fast):
    """(TFLOP/s, library) of PyTorch's reference for one point: torch.matmul,
    or for fp8 torch._scaled_mm with the accumulation benchbook's point used
    (promoted unless it ran fast)."""
    if dtype == "fp8":
        keys = [f"{m}x{n}x{k}-fp8-scaled_mm-fast", f"{m}x{n}x{k}-fp8-scaled_mm"] if fast \
            else [f"{m}x{n}x{k}-fp8-scaled_mm"]
    else:
        keys = [f"{m}x{n}x{k}-{dtype}"]
    for key in keys:
        e = doc.get(key)
        if isinstance(e, dict) and e.get("time", 0) > 0:
            return 2 * m * n * k / e["time"] / 1e12, e.get("library", "?")
    return None, None


def telemetry_lines(runs):
    """Markdown lines: what benchbook's sampler read at each copy curve's
    largest size and each GEMM point (clock range over rounds, power, energy
    per GB or per GFLOP), from `show --json`'s per-point telemetry."""
    rows = []
    for run in (r for r in runs if r):
        for p in run.get("points", []):
            t = p.get("telemetry")
            if not t:
                continue
            if p.get("bench") == "gemm":
                what = f"gemm {p.get('dtype')} {p.get('m')}×{p.get('n')}×{p.get('k')} {axes_text(p.get('axes'))}".strip()
            elif p.get("size_bytes") == max(
                    (q.get("size_bytes") or 0 for q in run["points"] if q.get("bench") == p.get("bench")), default=0):
                what = f"{p.get('bench')} {p.get('method')} {p.get('variant') or ''} {size_text(p['size_bytes'])}"
            else:
                continue
            lo, hi = t.get("clock_range_mhz") or (t.get("clock_mhz"), t.get("clock_mhz"))
            clock = "-" if lo is None else (f"{lo:.0f}" if lo == hi else f"{lo:.0f}–{hi:.0f}")
            power = f"{t['power_w']:.0f}" if t.get("power_w") else "no round ≥ 0.5 s"
            energy = (f"{t['j_per_gb']:.3g} J/GB" if t.get("j_per_gb") else
                      f"{t['gflop_per_j']:.0f} GFLOP/J" if t.get("gflop_per_j") else "-")
            rows.append(f"| {what} | {run['manifest']['run_id']} | {clock} | {power} | {energy} | "
                        f"{t.get('throttled') or 'no'} |")
    if not rows:
        return ["", "## Telemetry", "", "- none: the runs carry no sensor readings (before schema v7, or NVML missing)"]
    return ["", "## Telemetry (benchbook's sampler, per point)", "",
            "| point | run | SM clock (MHz) | power (W) | energy | throttled |", "|---|---|---|---|---|---|"] + rows


# ---- the table -------------------------------------------------------------

def build_table(outdir, bb):
    """Markdown lines of the whole check."""
    lines = [f"# GPU acceptance: benchbook against PyTorch and CUDA C ({os.path.abspath(outdir)})", ""]
    runs, why = load_runs(outdir, bb)
    main = latest(runs, lambda lab: lab == "gpu-acceptance")
    rounds = {}
    for r in runs:
        m = re.fullmatch(r"(?:gemm-)?interleaved-(\d+)", label_of(r))
        if m:
            rounds[int(m.group(1))] = r  # the last listed wins; one per round is expected
    lines += ["| check, same GPU | ratio | goal | verdict |", "|---|---|---|---|"]

    torch_doc, torch_why = read_json(os.path.join(outdir, "torch", "torch_memcpy.json"))
    torch_mem = torch_memcpy_gbps(torch_doc) if torch_doc else {}
    cuda_path = os.path.join(outdir, "cuda_c_memcpy.csv")
    try:
        cuda = read_cuda_csv(cuda_path)
        cuda_why = None if cuda else "cuda_c_memcpy.csv has no rows"
    except OSError as e:
        cuda, cuda_why = {}, f"cuda_c_memcpy.csv: {e.strerror}"
    missing_refs = "; ".join(w for w in (torch_why, cuda_why) if w)

    def row(check, rs, goal, low, high=None):
        if main is None:
            lines.append(f"| {check} | missing: no run labelled gpu-acceptance ({why or 'not in the archive'}) | {goal} | - |")
        elif not rs:
            lines.append(f"| {check} | missing: no size measured by both (benchbook and "
                         f"{missing_refs or 'the references'}) | {goal} | - |")
        else:
            lines.append(f"| {check} | {span(rs)} | {goal} | {verdict([r[3] for r in rs], low, high)} |")

    points = main["points"] if main else []
    row("device copy, copy engine (warm) vs best of torch copy_ and cudaMemcpyAsync, ≥ 1 MiB",
        ratios(copy_gbps(points, "memcpy", "copy_engine", "warm"), [torch_mem, cuda.get("d2d_ce", {})], MIB),
        "≥ 0.99", 0.99)
    row("device copy, SM kernel (warm) vs the same, ≥ 128 MiB",
        ratios(copy_gbps(points, "memcpy", "sm_kernel", "warm"), [torch_mem, cuda.get("d2d_ce", {})], 128 * MIB),
        "≥ 0.98", 0.98)
    for bench in ("h2d", "d2h"):
        for variant in ("pinned", "pageable"):
            row(f"{bench} {variant} vs cudaMemcpyAsync, ≥ 1 MiB",
                ratios(copy_gbps(points, bench, "copy_engine", variant), [cuda.get(f"{bench}_{variant}", {})], MIB),
                "within 2 % (0.98–1.02)", 0.98, 1.02)

    # GEMM: one row per round, dtype and shape, then the median of the rounds.
    per_point = {}
    gemm_rows = []
    for r in sorted(rounds) or [None]:
        if r is None:
            lines.append(f"| GEMM, interleaved rounds | missing: no run labelled interleaved-N "
                         f"({why or 'not in the archive'}) | ≥ 1.0 | - |")
            break
        doc, twhy = read_json(os.path.join(outdir, f"torch-r{r}", "torch_gemm.json"))
        best = gemm_best(rounds[r]["points"])
        if not best:
            lines.append(f"| GEMM round {r} | missing: run {rounds[r]['manifest']['run_id']} has no measured GEMM "
                         f"point | ≥ 1.0 | - |")
        for (dtype, m, n, k), (ours, what) in sorted(best.items(), key=lambda kv: (str(kv[0][0]), kv[0][1:])):
            shape = f"{m}×{n}×{k}"
            ref, lib = torch_gemm(doc, dtype, m, n, k, "accum=fast" in what) if doc else (None, None)
            if ref is None:
                gemm_rows.append(f"| GEMM {dtype} {shape}, round {r}: benchbook {ours:.0f} TFLOP/s ({what}) | "
                                 f"missing: {twhy or 'no torch entry for it'} | ≥ 1.0 | - |")
                continue
            ratio = ours / ref
            per_point.setdefault((dtype, m, n, k), []).append(ratio)
            gemm_rows.append(f"| GEMM {dtype} {shape}, round {r}: benchbook {ours:.0f} ({what}) vs {lib} {ref:.0f} "
                             f"TFLOP/s | {ratio:.3f}× | ≥ 1.0 | {verdict([ratio], 1.0)} |")
    lines += gemm_rows
    for (dtype, m, n, k), rs in sorted(per_point.items(), key=lambda kv: (str(kv[0][0]), kv[0][1:])):
        med = statistics.median(rs)
        lines.append(f"| **GEMM {dtype} {m}×{n}×{k}, median of {len(rs)} round(s)** | **{med:.3f}×** "
                     f"({min(rs):.3f}–{max(rs):.3f}) | ≥ 1.0 | {verdict([med], 1.0)} |")

    lines += telemetry_lines([main] + [rounds[r] for r in sorted(rounds)])
    lines += ["", "## Sources", ""]
    for label, run in [("copies", main)] + [(f"GEMM round {r}", rounds[r]) for r in sorted(rounds)]:
        if run:
            m = run["manifest"]
            lines.append(f"- {label}: run `{m['run_id']}` ({m.get('status', '?')}), "
                         f"{len(run.get('points', []))} points")
    lines.append(f"- PyTorch copy_: {'torch/torch_memcpy.json' if torch_doc else 'missing: ' + str(torch_why)}")
    lines.append(f"- CUDA C: {'cuda_c_memcpy.csv' if cuda else 'missing: ' + str(cuda_why)}")
    lines += ["", "## Clocks (nvidia-smi)", ""]
    for name in ("clocks-before.csv", "clocks-after.csv"):
        try:
            with open(os.path.join(outdir, name)) as f:
                text = f.read().strip()
            lines += [f"{name}:", "", "```", text, "```", ""]
        except OSError as e:
            lines.append(f"- {name}: missing ({e.strerror})")
    return lines


# ---- self-test on small hand-made inputs ------------------------------------

def self_test():
    import unittest

    class T(unittest.TestCase):
        def test_ratios_take_the_best_reference_and_skip_small_sizes(self):
            ours = {MIB // 2: 100.0, MIB: 300.0, 4 * MIB: 990.0}
            torch_ref = {MIB: 310.0, 4 * MIB: 1000.0}
            cuda_ref = {MIB: 290.0, MIB // 2: 1.0}
            rs = ratios(ours, [torch_ref, cuda_ref], MIB)
            self.assertEqual([r[0] for r in rs], [MIB, 4 * MIB])
            self.assertAlmostEqual(rs[0][3], 300 / 310)
            self.assertAlmostEqual(rs[1][3], 0.99)
            self.assertEqual(verdict([r[3] for r in rs], 0.99), "FAIL")
            self.assertEqual(verdict([0.99, 1.05], 0.99), "pass")
            self.assertEqual(verdict([0.99, 1.05], 0.98, 1.02), "FAIL")
            self.assertEqual(verdict([], 1.0), "-")

        def test_copy_gbps_counts_bytes_once(self):
            pts = [{"bench": "memcpy", "method": "copy_engine", "variant": "warm", "size_bytes": 2 * 10**9,
                    "median_seconds": 1.0},
                   {"bench": "memcpy", "method": "copy_engine", "variant": "cold", "size_bytes": 4096,
                    "median_seconds": 1.0}]
            self.assertEqual(copy_gbps(pts, "memcpy", "copy_engine", "warm"), {2 * 10**9: 2.0})

        def test_gemm_best_takes_the_fastest_axes(self):
            pts = [{"bench": "gemm", "dtype": "fp8", "m": 1000, "n": 1000, "k": 1000, "median_seconds": 2e-6,
                    "method": "cublaslt", "axes": '{"accum":"promoted","layout":"tn"}'},
                   {"bench": "gemm", "dtype": "fp8", "m": 1000, "n": 1000, "k": 1000, "median_seconds": 1e-6,
                    "method": "cublaslt", "axes": '{"accum":"fast","layout":"tn"}'}]
            tflops, what = gemm_best(pts)[("fp8", 1000, 1000, 1000)]
            self.assertAlmostEqual(tflops, 2000.0)
            self.assertEqual(what, "cublaslt accum=fast layout=tn")
            doc = {"1000x1000x1000-fp8-scaled_mm": {"time": 2e-6, "library": "torch._scaled_mm"},
                   "1000x1000x1000-fp8-scaled_mm-fast": {"time": 1.6e-6, "library": "torch._scaled_mm+fast_accum"}}
            self.assertEqual(torch_gemm(doc, "fp8", 1000, 1000, 1000, True)[1], "torch._scaled_mm+fast_accum")
            self.assertAlmostEqual(torch_gemm(doc, "fp8", 1000, 1000, 1000, False)[0], 1000.0)
            self.assertEqual(torch_gemm({"1x1x1-bf16": {"time": 1.0}}, "bf16", 1, 1, 1, False)[0], 2e-12)

        def test_cuda_csv_skips_comments_and_counts_bytes_once(self):
            import tempfile
            with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
                f.write("# device X\ntest,bytes,seconds,GBps_once,GBps_rw\nd2d_ce,1000,1e-6,1.00,2.00\n"
                        "# best SM kernel ...\nh2d_pinned,2000,1e-6,2.00,\n")
            try:
                self.assertEqual(read_cuda_csv(f.name), {"d2d_ce": {1000: 1.0}, "h2d_pinned": {2000: 2.0}})
            finally:
                os.unlink(f.name)

    result = unittest.TextTestRunner(verbosity=2).run(unittest.defaultTestLoader.loadTestsFromTestCase(T))
    return 0 if result.wasSuccessful() else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) not in (2, 3) or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    outdir = sys.argv[1]
    bb = sys.argv[2] if len(sys.argv) == 3 else os.environ.get("BB")
    lines = build_table(outdir, bb)
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(outdir, "acceptance.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
