#!/usr/bin/env python3
"""Seed 004's toy tensor-parallel inference: a stack of MLP blocks whose
weights are split column- then row-wise across the ranks (Megatron-style),
one all_reduce per block, timed against the batch size.

    benchbook run exec --param partition=whole -- \
      torchrun --standalone --nproc-per-node 8 scripts/tp_inference.py --batches 1,8,64

Rank 0 reports `tokens_per_s` and `latency_ms` per batch size (parameters
`batch`, `tp` = world size). NCCL on GPUs, gloo on the CPU. Needs PyTorch
(skips with exit code 77 otherwise).
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from benchbook_metrics import emit, torch_or_skip  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batches", default="1,8,64")
    p.add_argument("--width", type=int, default=4096)
    p.add_argument("--blocks", type=int, default=8)
    p.add_argument("--iters", type=int, default=50)
    a = p.parse_args()
    torch = torch_or_skip("tensor-parallel inference")
    import torch.distributed as dist

    if "RANK" not in os.environ:
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT="29512")
    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, tp = dist.get_rank(), dist.get_world_size()
    dev = torch.device(f"cuda:{int(os.environ['LOCAL_RANK'])}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(dev)
    dtype = torch.bfloat16 if cuda else torch.float32
    w, hidden = a.width, 4 * a.width // tp
    torch.manual_seed(rank)
    up = [torch.randn(w, hidden, device=dev, dtype=dtype) / w**0.5 for _ in range(a.blocks)]
    down = [torch.randn(hidden, w, device=dev, dtype=dtype) / hidden**0.5 for _ in range(a.blocks)]
    for batch in [int(b) for b in a.batches.split(",")]:
        x = torch.randn(batch, w, device=dev, dtype=dtype)
        times = []
        with torch.inference_mode():
            for i in range(a.iters + 5):
                dist.barrier()
                t = time.perf_counter()
                h = x
                for u, d in zip(up, down):
                    part = torch.relu(h @ u) @ d
                    dist.all_reduce(part)
                    h = h + part
                if cuda:
                    torch.cuda.synchronize()
                if i >= 5:
                    times.append(time.perf_counter() - t)
        med = torch.tensor([statistics.median(times)], device=dev)
        dist.all_reduce(med, op=dist.ReduceOp.MAX)
        if rank == 0:
            base = {"batch": batch, "tp": tp, "width": w, "blocks": a.blocks, "dtype": str(dtype).replace("torch.", "")}
            emit("latency_ms", med.item() * 1e3, "ms", base)
            emit("tokens_per_s", batch / med.item(), "tokens/s", base)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
