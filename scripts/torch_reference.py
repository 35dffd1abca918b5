#!/usr/bin/env python3
"""The seed write-ups' own method, on the same GPU, for a side-by-side check.

Measures what users run today:
  * memcpy: PyTorch `b.copy_(a)` in a ~`--seconds` loop timed with CUDA events
    (seed 001's method: time per copy = elapsed / iterations, bytes counted
    once);
  * gemm: for each dtype and shape (m, n, k), C = A·B in three calls:
      - `torch.matmul(a, b)`, a m×k and b k×n, both row-major (f32, tf32, f16,
        bf16). cuBLAS is column-major: it sees a and b as their transposes and
        computes Cᵀ = Bᵀ·Aᵀ with neither operand transposed, layout "nn";
      - `torch.nn.functional.linear(x, w)` = x·wᵀ, x m×k and w n×k row-major
        (what seed 002 times): w's memory is a column-major k×n matrix that
        cuBLAS must transpose, x's a column-major k×m one it takes as is,
        layout "tn";
      - fp8 (E4M3): `torch._scaled_mm(a, w.t(), scale_a, scale_b,
        out_dtype=torch.bfloat16, use_fast_accum=False)`, a m×k row-major, w
        n×k row-major (so its transpose is column-major), layout "tn", the
        only one Hopper's FP8 tensor cores take; `--fp8-fast-accum` adds
        `use_fast_accum=True` entries.
    Each point: random-normal inputs, warm-up calls, then the median of
    `--rounds` timings of up to `--calls` back-to-back calls (CUDA events).
    TFLOP/s = 2·m·n·k / seconds per call / 1e12.

Writes JSON in the seed scripts' shape, which `benchbook import` reads
(format `seed-json`); each file is rewritten atomically after every point,
so a killed run keeps what it measured:
  memcpy: {"<size>": {"bytes", "time", "iterations", "GB/s"}}
  gemm:   {"<m>x<n>x<k>-<dtype>[-linear|-scaled_mm|-scaled_mm-fast]":
           {"m", "n", "k", "dtype", "time", "iterations", "TFLOP/s", "library", "layout", "rounds", "calls",
            "accum" (fp8: "promoted" or "fast")}}
Points not measured (out of memory, a dtype this GPU lacks, the deadline)
go in "skipped": a list of {"key", "reason"} (a list, not an object, so that
the seed-json importer passes over it).

Usage (on the GPU machine):
  python3 scripts/torch_reference.py --out torch-out [--max-size 2G] [--seconds 1] [--deadline 600]
  python3 scripts/torch_reference.py --out torch-gemm --gemm-only --shapes 1024,4096,8192 --dtypes bf16,fp8
  benchbook import torch-out/torch_memcpy.json torch-out/torch_gemm.json --label torch-h200
"""
import argparse
import json
import os
import statistics
import sys
import time

LLAMA70B = [(8192, 8192, 8192), (16384, 8192, 7168), (16384, 16384, 16384), (16384, 1024, 8192),
            (16384, 3584, 8192), (4096, 4096, 4096), (16384, 8192, 1280)]
DEFAULT_SHAPES = [(s, s, s) for s in (1024, 2048, 4096, 8192, 16384)] + [s for s in LLAMA70B if len(set(s)) > 1]
DTYPES = ("f32", "tf32", "f16", "bf16", "fp8")


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B").rstrip("I")
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def parse_shapes(text):
    """`1024,8192x8192x7168` → [(1024, 1024, 1024), (8192, 8192, 7168)] (MxNxK)."""
    shapes = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        if item == "llama70b":
            shapes += [s for s in LLAMA70B if s not in shapes]
            continue
        dims = [int(d) for d in item.lower().split("x")]
        if len(dims) == 1:
            dims *= 3
        if len(dims) != 3 or min(dims) < 1:
            sys.exit(f"--shapes: `{item}` is not N or MxNxK")
        shapes.append(tuple(dims))
    return shapes


class Results:
    """One JSON file, rewritten whole (tmp file, then os.replace) after every
    point, so that it is always complete and parseable."""

    def __init__(self, path, benchmark, meta):
        self.path, self.data, self.skipped = path, {"benchmark": benchmark, **meta}, []
        self.write()

    def add(self, key, entry):
        self.data[key] = entry
        self.write()

    def skip(self, key, reason):
        print(f"skip {key}: {reason}", flush=True)
        self.skipped.append({"key": key, "reason": reason})
        self.write()

    def write(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({**self.data, "skipped": self.skipped}, f, indent=1)
        os.replace(tmp, self.path)


class Deadline:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds if seconds else None

    def passed(self):
        return self.end is not None and time.monotonic() >= self.end


def timed_loop(torch, fn, seconds):
    """Seed 001's loop: run fn back to back for about `seconds`; return
    (seconds per call, calls)."""
    for _ in range(3):  # warm-up
        fn()
    torch.cuda.synchronize()
    # Calibrate how many calls fill the time, then time them with events.
    start = time.perf_counter()
    n = 0
    while time.perf_counter() - start < min(0.1, seconds / 10):
        fn()
        n += 1
    torch.cuda.synchronize()
    per_call = (time.perf_counter() - start) / max(n, 1)
    iterations = max(1, int(seconds / max(per_call, 1e-9)))
    begin = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(iterations):
        fn()
    end.record()
    end.synchronize()
    return begin.elapsed_time(end) * 1e-3 / iterations, iterations


def timed_rounds(torch, fn, rounds, max_calls, warmup, deadline, round_seconds=0.1):
    """The median of `rounds` event timings of back-to-back calls; calls per
    timing = `max_calls`, fewer when one call is long (so a round stays near
    `round_seconds`). Rounds stop early once the deadline passes (at least
    one is kept). Returns (seconds per call, calls timed in all, rounds, calls per round)."""
    begin = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    # Warm up first: the first call of a shape pays for library set-up
    # (handles, heuristics, lazy module loads), and calibrating on it gave
    # one call per timing, where launch latency swamps a small GEMM.
    for _ in range(max(1, warmup)):
        fn()
    torch.cuda.synchronize()
    begin.record()
    fn()
    end.record()
    end.synchronize()
    first = begin.elapsed_time(end) * 1e-3
    calls = max(1, min(max_calls, int(round_seconds / max(first, 1e-9))))
    times = []
    for _ in range(rounds):
        begin.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) * 1e-3 / calls)
        if deadline.passed():
            break
    return statistics.median(times), calls * len(times), len(times), calls


def memcpy(torch, args, deadline, out):
    size = 4096
    while size <= args.max_size:
        if deadline.passed():
            out.skip(str(size), f"--deadline {args.deadline:g} s passed before this size")
            size *= 2
            continue
        try:
            a = torch.randint(0, 255, (size,), dtype=torch.uint8, device="cuda")
            b = torch.empty_like(a)
            t, n = timed_loop(torch, lambda: b.copy_(a), args.seconds)
            if not torch.equal(a, b):
                out.skip(str(size), "the copy did not validate (b != a)")
            else:
                out.add(str(size), {"bytes": size, "time": t, "iterations": n, "GB/s": size / t / 1e9})
                print(f"memcpy {size:>12} B  {size / t / 1e9:9.2f} GB/s (copied once)", flush=True)
        except RuntimeError as e:  # out of memory
            out.skip(str(size), first_line(e))
        a = b = None
        torch.cuda.empty_cache()
        size *= 2


def first_line(e):
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:300]


def gemm_calls(torch, dtype, m, n, k, fast_accum):
    """[(key suffix, library, layout, FP8 accumulation or None, fn)] for one dtype and shape; raises
    RuntimeError (e.g. out of memory) while allocating."""
    F = torch.nn.functional
    if dtype == "fp8":
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        w = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
        one = torch.ones((), device="cuda", dtype=torch.float32)
        calls = [("-scaled_mm", "torch._scaled_mm", False)]
        if fast_accum:
            # A library name of its own keeps the two points apart on import.
            calls.append(("-scaled_mm-fast", "torch._scaled_mm+fast_accum", True))
        return [(suffix, lib, "tn", "fast" if fast else "promoted",
                 lambda fast=fast: torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.bfloat16,
                                                    use_fast_accum=fast))
                for suffix, lib, fast in calls]
    tdt = {"f32": torch.float32, "tf32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    a = torch.randn(m, k, device="cuda", dtype=tdt)
    b = torch.randn(k, n, device="cuda", dtype=tdt)
    w = torch.randn(n, k, device="cuda", dtype=tdt)
    return [("", "torch.matmul", "nn", None, lambda: torch.matmul(a, b)),
            ("-linear", "torch.nn.functional.linear", "tn", None, lambda: F.linear(a, w))]


def unsupported(torch, dtype):
    """Why this GPU or PyTorch cannot run `dtype`, or None."""
    cap = torch.cuda.get_device_capability(0)
    if dtype in ("tf32", "bf16") and cap < (8, 0):
        return f"{dtype} needs sm_80 or newer; this GPU is sm_{cap[0]}{cap[1]}"
    if dtype == "fp8":
        if cap < (8, 9):
            return f"fp8 (E4M3) GEMM needs sm_89 or newer; this GPU is sm_{cap[0]}{cap[1]}"
        if not (hasattr(torch, "float8_e4m3fn") and hasattr(torch, "_scaled_mm")):
            return f"torch {torch.__version__} has no float8_e4m3fn / _scaled_mm"
    return None


def gemm(torch, args, deadline, out):
    for dtype in args.dtypes:
        why = unsupported(torch, dtype)
        for (m, n, k) in args.shapes:
            key = f"{m}x{n}x{k}-{dtype}"
            if why:
                out.skip(key, why)
                continue
            if deadline.passed():
                out.skip(key, f"--deadline {args.deadline:g} s passed before this point")
                continue
            # TF32 only where asked: f32 must stay true FP32.
            torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
            calls = []
            try:
                calls = gemm_calls(torch, dtype, m, n, k, args.fp8_fast_accum)
                for suffix, library, layout, accum, fn in calls:
                    if deadline.passed():
                        out.skip(key + suffix, f"--deadline {args.deadline:g} s passed before this point")
                        continue
                    try:
                        t, iters, rounds, per_round = timed_rounds(torch, fn, args.rounds, args.calls, args.warmup,
                                                                   deadline)
                    except RuntimeError as e:  # unsupported shape or layout, out of memory
                        out.skip(key + suffix, first_line(e))
                        continue
                    tflops = 2 * m * n * k / t / 1e12
                    entry = {"m": m, "n": n, "k": k, "dtype": dtype, "time": t, "iterations": iters,
                             "TFLOP/s": tflops, "library": library, "layout": layout,
                             "rounds": rounds, "calls": per_round}
                    if accum:
                        entry["accum"] = accum
                    out.add(key + suffix, entry)
                    print(f"gemm {dtype:>4} {m}x{n}x{k} {library:<27} {layout}: {tflops:8.1f} TFLOP/s "
                          f"(median of {rounds} × {per_round} calls)", flush=True)
            except RuntimeError as e:  # out of memory while allocating the operands
                out.skip(key, first_line(e))
            calls = None
            torch.cuda.empty_cache()
    torch.backends.cuda.matmul.allow_tf32 = False


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="directory for torch_memcpy.json and torch_gemm.json")
    p.add_argument("--max-size", default="2G", help="largest memcpy size (default 2G)")
    p.add_argument("--seconds", type=float, default=1.0, help="memcpy: timed loop length per size (default 1)")
    p.add_argument("--shapes", default=None,
                   help="GEMM shapes, N or MxNxK, comma-separated; `llama70b` adds seed 002's "
                        "(default: squares 1024..16384 and the Llama-70B shapes)")
    p.add_argument("--dtypes", default=",".join(DTYPES), help="GEMM dtypes (default f32,tf32,f16,bf16,fp8)")
    p.add_argument("--rounds", type=int, default=7, help="GEMM: timings per point, median taken (default 7)")
    p.add_argument("--calls", type=int, default=20, help="GEMM: most calls per timing (default 20)")
    p.add_argument("--warmup", type=int, default=5, help="GEMM: warm-up calls per point (default 5)")
    p.add_argument("--fp8-fast-accum", action="store_true", help="also time _scaled_mm with use_fast_accum=True")
    p.add_argument("--deadline", type=float, default=0,
                   help="seconds for the whole run: later points are skipped, and said so (default: none)")
    only = p.add_mutually_exclusive_group()
    only.add_argument("--gemm-only", action="store_true", help="skip memcpy")
    only.add_argument("--skip-gemm", action="store_true", help="skip GEMM")
    args = p.parse_args()
    args.max_size = parse_size(args.max_size)
    args.shapes = parse_shapes(args.shapes) if args.shapes else DEFAULT_SHAPES
    args.dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    bad = [d for d in args.dtypes if d not in DTYPES]
    if bad:
        sys.exit(f"--dtypes: unknown {','.join(bad)}; choose from {','.join(DTYPES)}")
    if args.rounds < 1 or args.calls < 1:
        sys.exit("--rounds and --calls must be at least 1")
    deadline = Deadline(args.deadline)
    import torch
    if not torch.cuda.is_available():
        sys.exit("no CUDA GPU visible to PyTorch")
    os.makedirs(args.out, exist_ok=True)
    # Top-level strings, which the seed-json importer passes over.
    meta = {"torch": torch.__version__, "cuda": str(torch.version.cuda), "device": torch.cuda.get_device_name(0),
            "argv": " ".join(sys.argv)}
    print(json.dumps(meta), flush=True)
    files = []
    if not args.gemm_only:
        out = Results(os.path.join(args.out, "torch_memcpy.json"), "memcpy", meta)
        memcpy(torch, args, deadline, out)
        files.append(out)
    if not args.skip_gemm:
        out = Results(os.path.join(args.out, "torch_gemm.json"), "gemm", meta)
        gemm(torch, args, deadline, out)
        files.append(out)
    skipped = sum(len(f.skipped) for f in files)
    if skipped:
        print(f"{skipped} point(s) skipped, with their reasons under \"skipped\" in "
              + ", ".join(f.path for f in files), flush=True)


if __name__ == "__main__":
    main()
