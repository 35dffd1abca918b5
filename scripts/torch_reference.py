#!/usr/bin/env python3
"""The seed write-ups' own method, on the same GPU, for a side-by-side check.

Measures what users run today:
  * memcpy: PyTorch `b.copy_(a)` in a ~1-second loop timed with CUDA events
    (seed 001's method: time per copy = elapsed / iterations, bytes counted
    once);
  * gemm: `torch.matmul` for the square and Llama-70B shapes of seed 002.

Writes JSON in the seed scripts' shape, which `benchbook import` reads
(format `seed-json`):
  memcpy: {"<size>": {"bytes", "time", "iterations", "GB/s"}}
  gemm:   {"<m>x<n>x<k>-<dtype>": {"m", "n", "k", "dtype", "time", "iterations", "TFLOP/s", "library"}}

Usage (on the GPU machine):
  python3 scripts/torch_reference.py --out torch-out [--max-size 2G] [--seconds 1]
  benchbook import torch-out/torch_memcpy.json torch-out/torch_gemm.json --label torch-h200
"""
import argparse
import json
import os
import sys
import time

LLAMA70B = [(8192, 8192, 8192), (16384, 8192, 7168), (16384, 16384, 16384), (16384, 1024, 8192),
            (16384, 3584, 8192), (4096, 4096, 4096), (16384, 8192, 1280)]


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B").rstrip("I")
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def timed_loop(torch, fn, seconds):
    """Run fn back to back for about `seconds`; return (seconds per call, calls)."""
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


def memcpy(torch, args):
    out = {}
    size = 4096
    while size <= args.max_size:
        a = torch.randint(0, 255, (size,), dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        t, n = timed_loop(torch, lambda: b.copy_(a), args.seconds)
        if not torch.equal(a, b):
            sys.exit(f"copy of {size} bytes did not validate")
        out[str(size)] = {"bytes": size, "time": t, "iterations": n, "GB/s": size / t / 1e9}
        print(f"memcpy {size:>12} B  {size / t / 1e9:9.2f} GB/s (copied once)", flush=True)
        del a, b
        size *= 2
    return out


def gemm(torch, args):
    out = {}
    shapes = [(s, s, s) for s in (1024, 2048, 4096, 8192, 16384)] + [s for s in LLAMA70B if len(set(s)) > 1]
    for dtype in args.dtypes.split(","):
        for (m, n, k) in shapes:
            torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
            tdt = {"f32": torch.float32, "tf32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}.get(dtype)
            if tdt is None:
                print(f"skip {dtype}: not a torch.matmul dtype here", flush=True)
                break
            try:
                a = torch.randn(m, k, device="cuda", dtype=tdt)
                b = torch.randn(k, n, device="cuda", dtype=tdt)
                t, iters = timed_loop(torch, lambda: torch.matmul(a, b), args.seconds)
            except RuntimeError as e:  # out of memory, unsupported dtype
                print(f"skip {m}x{n}x{k} {dtype}: {e}", flush=True)
                continue
            tflops = 2 * m * n * k / t / 1e12
            out[f"{m}x{n}x{k}-{dtype}"] = {"m": m, "n": n, "k": k, "dtype": dtype, "time": t, "iterations": iters,
                                          "TFLOP/s": tflops, "library": "torch.matmul"}
            print(f"gemm {dtype:>4} {m}x{n}x{k}: {tflops:8.1f} TFLOP/s", flush=True)
            del a, b
    torch.backends.cuda.matmul.allow_tf32 = False
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="directory for torch_memcpy.json and torch_gemm.json")
    p.add_argument("--max-size", default="2G", help="largest memcpy size (default 2G)")
    p.add_argument("--seconds", type=float, default=1.0, help="timed loop length per point (default 1)")
    p.add_argument("--dtypes", default="f32,tf32,f16,bf16", help="GEMM dtypes")
    p.add_argument("--skip-gemm", action="store_true")
    args = p.parse_args()
    args.max_size = parse_size(args.max_size)
    import torch
    if not torch.cuda.is_available():
        sys.exit("no CUDA GPU visible to PyTorch")
    os.makedirs(args.out, exist_ok=True)
    meta = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0)}
    print(json.dumps(meta), flush=True)
    with open(os.path.join(args.out, "torch_memcpy.json"), "w") as f:
        json.dump({"benchmark": "memcpy", **memcpy(torch, args)}, f, indent=1)
    if not args.skip_gemm:
        with open(os.path.join(args.out, "torch_gemm.json"), "w") as f:
            json.dump({"benchmark": "gemm", **gemm(torch, args)}, f, indent=1)


if __name__ == "__main__":
    main()
