#!/usr/bin/env python3
"""Seed 002's GPT-style transformer training, reporting to benchbook.

    benchbook run exec --repeat 3 -- python3 scripts/train_gpt.py --sizes tiny,small
    benchbook run exec -- python3 scripts/train_gpt.py --preset seed002 --steps 10 --deadline 300

For each model size: `tokens_per_s`, `samples_per_s`, `ms_per_step` and
`tflops` (6 · parameters · tokens per step / time, the usual estimate that
ignores attention's own FLOPs), `peak_memory_gb` on a GPU, and `loss` per
step. Needs PyTorch (skips with exit code 77 otherwise); runs on the GPU
when there is one, else on the CPU with the tiny size.

`--preset seed002` runs seed 002's model table instead (Small to 13B: its
layers, heads, width, FF width, batch and sequence length, GPT-2's vocabulary
of 50257 with the embedding tied to the output head and a learned position
embedding, as its parameter counts imply); `--sizes` then picks from that
table. Before each model the memory it needs is estimated (`memory_estimate_gb`);
a model that would not fit in the GPU's free memory, or that the
`--deadline` leaves no time for, is not run: the reason is printed and
emitted as a `model_skipped` metric whose `reason` parameter says why.
"""

import argparse
import contextlib
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

# Seed 002's "Transformer Training" tables: name: (layers, heads, d_model, ff, batch, seq_len).
SEED002 = {
    "small": (6, 6, 384, 1536, 32, 512),
    "medium": (12, 12, 768, 3072, 16, 512),
    "large": (24, 16, 1024, 4096, 8, 512),
    "xl": (36, 20, 1280, 5120, 4, 512),
    "1.5b": (48, 24, 1536, 6144, 4, 512),
    "3b": (32, 32, 2560, 10240, 2, 512),
    "7b": (32, 32, 4096, 11008, 8, 1024),
    "13b": (40, 40, 5120, 13824, 4, 1024),
}
SEED002_VOCAB = 50257


def memory_estimate_bytes(params, layers, d, batch, seq, vocab):
    """What a training step needs, roughly, under bf16 autocast with AdamW:
    18 B per parameter (FP32 weights 4, gradients 4, Adam's two moments 8,
    autocast's bf16 weight copies 2); about 40 B per token and d_model per
    layer of activations (flash attention, no dropout); the logits at about
    12 B per token and vocabulary entry (bf16 out, the FP32 copy, its
    gradient). Calibrated on the first H200 runs (`large`, 1.24 B
    parameters: 24.9 GB measured); then 10 % more as a margin."""
    tokens = batch * seq
    need = 18 * params + 40 * tokens * d * layers + 12 * tokens * vocab
    return int(need * 1.10)


def build(torch, dev, layers, d, heads, ff, vocab, seq, seed_style):
    """The model on `dev`. Seed 002's are built there directly (a 10 B-parameter
    model built on the CPU first would take minutes); the others on the CPU
    and moved, as before, so their initial weights and losses stay comparable."""
    torch.manual_seed(0)
    with torch.device(dev) if seed_style else contextlib.nullcontext():
        layer = torch.nn.TransformerEncoderLayer(d, heads, ff, batch_first=True, norm_first=True, dropout=0.0)
        parts = {
            "emb": torch.nn.Embedding(vocab, d),
            # enable_nested_tensor only matters for padded inference; off avoids its warning.
            "body": torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False),
            "head": torch.nn.Linear(d, vocab, bias=False),
        }
        if seed_style:
            parts["pos"] = torch.nn.Embedding(seq, d)
            parts["norm"] = torch.nn.LayerNorm(d)
            parts["head"].weight = parts["emb"].weight  # tied, as GPT-2 and the seed's counts
        return torch.nn.ModuleDict(parts).to(dev)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=["seed002"], help="seed 002's model table (sizes, batch, sequence length)")
    p.add_argument("--sizes", default=None, help="model sizes (default: tiny; with --preset seed002: all of it)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=8, help="batch size (the preset sets its own)")
    p.add_argument("--seq", type=int, default=128, help="sequence length (the preset sets its own)")
    p.add_argument("--vocab", type=int, default=8192, help="vocabulary (the preset uses 50257)")
    p.add_argument("--dtype", default="bf16", choices=["fp32", "bf16"])
    p.add_argument("--deadline", type=float, default=0,
                   help="seconds for the whole run: no model starts after it, and a model stops "
                        "timing steps once it passes (default: none)")
    a = p.parse_args()
    end = time.monotonic() + a.deadline if a.deadline > 0 else None
    table = SEED002 if a.preset else SIZES
    names = a.sizes.split(",") if a.sizes else (list(SEED002) if a.preset else ["tiny"])
    unknown = [n for n in names if n not in table]
    if unknown:
        sys.exit(f"--sizes: unknown {','.join(unknown)}; choose from {','.join(table)}")
    torch = torch_or_skip("GPT training")
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if a.dtype == "bf16" and dev == "cuda" else torch.float32
    for size in names:
        if a.preset:
            layers, heads, d, ff, batch, seq = SEED002[size]
            vocab = SEED002_VOCAB
        else:
            (layers, d, heads), ff, batch, seq, vocab = SIZES[size], 4 * SIZES[size][1], a.batch, a.seq, a.vocab
        # Parameters without building the model: 4·d² + 2·d·ff + 9·d + ff per
        # layer (attention and FF weights, biases, two norms), the embeddings.
        per_layer = 4 * d * d + 2 * d * ff + 9 * d + ff
        params = layers * per_layer + vocab * d + (seq * d + 2 * d if a.preset else vocab * d)
        base = {"model": size, "params_m": round(params / 1e6, 1), "batch": batch, "seq_len": seq,
                "vocab": vocab, "dtype": str(dtype).replace("torch.", ""), "device": dev}
        if a.preset:
            base["preset"] = a.preset
        reason = None
        if end is not None and time.monotonic() >= end:
            reason = f"--deadline {a.deadline:g} s passed before this model"
        elif dev == "cuda":
            need = memory_estimate_bytes(params, layers, d, batch, seq, vocab)
            torch.cuda.empty_cache()
            free, _total = torch.cuda.mem_get_info()
            emit("memory_estimate_gb", need / 1e9, "GB", base, better="lower")
            if need > free:
                reason = f"needs about {need / 1e9:.1f} GB (estimated), {free / 1e9:.1f} GB free on the GPU"
        if reason is None:
            reason = train(torch, a, dev, dtype, base, layers, d, heads, ff, batch, seq, vocab, end)
        if reason:
            print(f"skip {size}: {reason}", file=sys.stderr, flush=True)
            emit("model_skipped", 1, "1", {**base, "reason": reason}, better="lower")


def train(torch, a, dev, dtype, base, layers, d, heads, ff, batch, seq, vocab, end):
    """Train one model and emit its metrics; return why it could not, or None."""
    try:
        model = build(torch, dev, layers, d, heads, ff, vocab, seq, bool(a.preset))
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
        mask = torch.nn.Transformer.generate_square_subsequent_mask(seq, device=dev)
        data = torch.randint(0, vocab, (batch, seq + 1), device=dev, generator=None)
        positions = torch.arange(seq, device=dev)
        if dev == "cuda":
            torch.cuda.reset_peak_memory_stats()
        params = sum(p.numel() for p in model.parameters())  # tied weights counted once
        base["params_m"] = round(params / 1e6, 1)
        times = []
        for i in range(a.warmup + a.steps):
            t = time.perf_counter()
            with torch.autocast(device_type=dev, dtype=dtype, enabled=dtype != torch.float32):
                x = model["emb"](data[:, :-1])
                if "pos" in model:
                    x = x + model["pos"](positions)
                h = model["body"](x, mask=mask, is_causal=True)
                if "norm" in model:
                    h = model["norm"](h)
                logits = model["head"](h)
                loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1).float(), data[:, 1:].flatten())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if dev == "cuda":
                torch.cuda.synchronize()
            if i >= a.warmup:
                times.append(time.perf_counter() - t)
                emit("loss", loss.item(), "1", {**base, "step": i - a.warmup + 1}, better="lower")
            if end is not None and time.monotonic() >= end and times:
                print(f"{base['model']}: --deadline passed; {len(times)} of {a.steps} steps timed",
                      file=sys.stderr, flush=True)
                break
        if not times:
            return f"--deadline {a.deadline:g} s passed during the warm-up steps"
    except torch.cuda.OutOfMemoryError as e:
        return "out of GPU memory: " + (str(e).strip().splitlines() or ["OutOfMemoryError"])[0][:200]
    finally:
        model = opt = logits = loss = h = x = None
        if dev == "cuda":
            torch.cuda.empty_cache()
    med = statistics.median(times)
    tokens = batch * seq
    emit("ms_per_step", med * 1e3, "ms", base)
    emit("tokens_per_s", tokens / med, "tokens/s", base)
    emit("samples_per_s", batch / med, "samples/s", base)
    emit("tflops", 6 * params * tokens / med / 1e12, "TFLOP/s", base)
    if dev == "cuda":
        emit("peak_memory_gb", torch.cuda.max_memory_allocated() / 1e9, "GB", base, better="lower")
    return None


if __name__ == "__main__":
    main()
