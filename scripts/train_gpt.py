#!/usr/bin/env python3
"""Seed 002's GPT-style transformer training, reporting to benchbook.

    benchbook run exec --repeat 3 -- python3 scripts/train_gpt.py --sizes tiny,small

For each model size: `tokens_per_s`, `samples_per_s`, `ms_per_step` and
`tflops` (6 · parameters · tokens per step / time, the usual estimate that
ignores attention's own FLOPs), `peak_memory_gb` on a GPU, and `loss` per
step. Needs PyTorch (skips with exit code 77 otherwise); runs on the GPU
when there is one, else on the CPU with the tiny size.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from benchbook_metrics import emit, torch_or_skip  # noqa: E402

SIZES = {  # name: (layers, d_model, heads)
    "tiny": (2, 128, 4),
    "small": (6, 512, 8),
    "medium": (12, 1024, 16),
    "large": (24, 2048, 16),
}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="tiny")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--vocab", type=int, default=8192)
    p.add_argument("--dtype", default="bf16", choices=["fp32", "bf16"])
    a = p.parse_args()
    torch = torch_or_skip("GPT training")
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if a.dtype == "bf16" and dev == "cuda" else torch.float32
    for size in a.sizes.split(","):
        layers, d, heads = SIZES[size]
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, norm_first=True, dropout=0.0)
        body = torch.nn.TransformerEncoder(layer, layers)
        emb = torch.nn.Embedding(a.vocab, d)
        head = torch.nn.Linear(d, a.vocab, bias=False)
        model = torch.nn.ModuleDict({"emb": emb, "body": body, "head": head}).to(dev)
        params = sum(p.numel() for p in model.parameters())
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
        mask = torch.nn.Transformer.generate_square_subsequent_mask(a.seq, device=dev)
        data = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=dev, generator=None)
        if dev == "cuda":
            torch.cuda.reset_peak_memory_stats()
        base = {"model": size, "params_m": round(params / 1e6, 1), "batch": a.batch, "seq_len": a.seq,
                "dtype": str(dtype).replace("torch.", ""), "device": dev}
        times = []
        for i in range(a.warmup + a.steps):
            t = time.perf_counter()
            with torch.autocast(device_type=dev, dtype=dtype, enabled=dtype != torch.float32):
                h = model["body"](model["emb"](data[:, :-1]), mask=mask, is_causal=True)
                loss = torch.nn.functional.cross_entropy(model["head"](h).flatten(0, 1).float(), data[:, 1:].flatten())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if dev == "cuda":
                torch.cuda.synchronize()
            if i >= a.warmup:
                times.append(time.perf_counter() - t)
                emit("loss", loss.item(), "1", {**base, "step": i - a.warmup + 1}, better="lower")
        med = statistics.median(times)
        tokens = a.batch * a.seq
        emit("ms_per_step", med * 1e3, "ms", base)
        emit("tokens_per_s", tokens / med, "tokens/s", base)
        emit("samples_per_s", a.batch / med, "samples/s", base)
        emit("tflops", 6 * params * tokens / med / 1e12, "TFLOP/s", base)
        if dev == "cuda":
            emit("peak_memory_gb", torch.cuda.max_memory_allocated() / 1e9, "GB", base, better="lower")


if __name__ == "__main__":
    main()
