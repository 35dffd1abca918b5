#!/usr/bin/env python3
"""Seed 002's 3-layer MLP training loop, reporting to benchbook.

    benchbook run exec --repeat 5 -- python3 scripts/train_mlp.py --steps 30

Metrics per run: `samples_per_s` and `ms_per_step` (median over the timed
steps, after --warmup untimed ones), and `loss` at every step (parameter
`step`), so a report shows the throughput and the loss curve.

With PyTorch installed it trains torch.nn layers on the GPU when there is
one (else the CPU), as the seed does. Without PyTorch it trains the same
architecture in plain Python (parameter framework=python), so the protocol
and the loss curve can be checked on any machine; its throughput is a
Python interpreter's, not a framework's. --workers N (plain Python only)
splits each batch across N processes and averages their gradients, as
data-parallel training does.
"""

import argparse
import math
import random
import statistics
import sys
import time

sys.path.insert(0, __import__("os").path.dirname(__file__))
from benchbook_metrics import emit  # noqa: E402


def args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--width", type=int, default=32, help="hidden width (input = width // 2, 4 classes)")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--workers", default="1", help="worker processes, or a list to sweep: 1,2")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--python", action="store_true", help="use the plain-Python trainer even if torch is installed")
    return p.parse_args()


def dataset(n, d_in, classes, seed):
    """A fixed, learnable problem: the label is the argmax of a random linear map."""
    rng = random.Random(seed)
    w = [[rng.gauss(0, 1) for _ in range(d_in)] for _ in range(classes)]
    xs = [[rng.gauss(0, 1) for _ in range(d_in)] for _ in range(n)]
    ys = [max(range(classes), key=lambda c: sum(a * b for a, b in zip(w[c], x))) for x in xs]
    return xs, ys


# ---- plain Python: 3 linear layers, ReLU, softmax cross-entropy, SGD ----


def init(sizes, seed):
    rng = random.Random(seed + 1)
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        s = math.sqrt(2.0 / a)
        layers.append(([[rng.gauss(0, s) for _ in range(a)] for _ in range(b)], [0.0] * b))
    return layers


def grads(layers, xs, ys):
    """Summed gradients and summed loss over a shard."""
    g = [([[0.0] * len(w[0]) for _ in w], [0.0] * len(b)) for w, b in layers]
    total = 0.0
    for x, y in zip(xs, ys):
        acts = [x]
        for i, (w, b) in enumerate(layers):
            z = [sum(wi * ai for wi, ai in zip(row, acts[-1])) + bi for row, bi in zip(w, b)]
            acts.append(z if i == len(layers) - 1 else [max(0.0, v) for v in z])
        m = max(acts[-1])
        e = [math.exp(v - m) for v in acts[-1]]
        s = sum(e)
        total += -math.log(e[y] / s)
        delta = [v / s - (1.0 if k == y else 0.0) for k, v in enumerate(e)]
        for i in range(len(layers) - 1, -1, -1):
            w, _ = layers[i]
            gw, gb = g[i]
            a = acts[i]
            for r, d in enumerate(delta):
                gb[r] += d
                row = gw[r]
                for c, av in enumerate(a):
                    row[c] += d * av
            if i:
                back = [sum(w[r][c] * delta[r] for r in range(len(delta))) for c in range(len(a))]
                delta = [bv if a[c] > 0 else 0.0 for c, bv in enumerate(back)]
    return g, total


def shard_grads(job):
    layers, xs, ys = job
    return grads(layers, xs, ys)


def python_trainer(a):
    d_in, classes = max(2, a.width // 2), 4
    layers = init([d_in, a.width, a.width, classes], a.seed)
    xs, ys = dataset(1024, d_in, classes, a.seed)
    pool = None
    if a.workers > 1:
        import multiprocessing

        pool = multiprocessing.get_context("fork").Pool(a.workers)

    def step(i):
        lo = (i * a.batch) % len(xs)
        bx, by = xs[lo : lo + a.batch], ys[lo : lo + a.batch]
        if pool:
            k = math.ceil(len(bx) / a.workers)
            parts = pool.map(shard_grads, [(layers, bx[j : j + k], by[j : j + k]) for j in range(0, len(bx), k)])
        else:
            parts = [grads(layers, bx, by)]
        loss = sum(p[1] for p in parts) / len(bx)
        for li, (w, b) in enumerate(layers):
            for part, _ in parts:
                gw, gb = part[li]
                for r in range(len(w)):
                    b[r] -= a.lr * gb[r] / len(bx)
                    row, grow = w[r], gw[r]
                    for c in range(len(row)):
                        row[c] -= a.lr * grow[c] / len(bx)
        return loss

    try:
        return run(a, step, {"framework": "python", "device": "cpu", "workers": a.workers})
    finally:
        if pool:
            pool.close()


# ---- PyTorch, as the seed does ----


def torch_trainer(a, torch):
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    d_in, classes = max(2, a.width // 2), 4
    torch.manual_seed(a.seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(d_in, a.width), torch.nn.ReLU(), torch.nn.Linear(a.width, a.width), torch.nn.ReLU(),
        torch.nn.Linear(a.width, classes),
    ).to(dev)
    xs, ys = dataset(1024, d_in, classes, a.seed)
    x_all = torch.tensor(xs, device=dev)
    y_all = torch.tensor(ys, device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(i):
        lo = (i * a.batch) % len(xs)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x_all[lo : lo + a.batch]), y_all[lo : lo + a.batch])
        loss.backward()
        opt.step()
        if dev == "cuda":
            torch.cuda.synchronize()
        return loss.item()

    return run(a, step, {"framework": "torch", "device": dev, "workers": 1})


def run(a, step, params):
    base = {**params, "batch": a.batch, "width": a.width}
    times = []
    for i in range(a.warmup + a.steps):
        t = time.perf_counter()
        loss = step(i)
        dt = time.perf_counter() - t
        if i >= a.warmup:
            times.append(dt)
            emit("loss", loss, "1", {**base, "step": i - a.warmup + 1}, better="lower")
    med = statistics.median(times)
    emit("ms_per_step", med * 1e3, "ms", base)
    emit("samples_per_s", a.batch / med, "samples/s", base)
    print(f"{params['framework']} on {params['device']}: {a.batch / med:.1f} samples/s, final loss {loss:.4f}")


def main():
    a = args()
    counts = [int(w) for w in str(a.workers).split(",")]
    for w in counts:
        a.workers = w
        train(a, python=a.python or max(counts) > 1)


def train(a, python):
    if not python:
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:
            return torch_trainer(a, torch)
    return python_trainer(a)


if __name__ == "__main__":
    main()
