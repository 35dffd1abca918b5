#!/usr/bin/env python3
"""Seed 002's DDP scaling: the same per-GPU batch on 1, 2, 4, 8 GPUs.

    for n in 1 2 4 8; do
      benchbook run exec --label ddp --param gpus=$n -- \
        torchrun --standalone --nproc-per-node $n scripts/train_ddp.py
    done

Rank 0 reports `samples_per_s` (all ranks together: world size × per-rank
batch / median step time) and `ms_per_step`, with parameter `gpus` = the
world size, so benchbook's scaling table gives throughput at N / (N ×
throughput at 1). Uses NCCL on GPUs and gloo on the CPU. Needs PyTorch
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
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch", type=int, default=64, help="per rank")
    p.add_argument("--width", type=int, default=4096)
    a = p.parse_args()
    torch = torch_or_skip("DDP scaling")
    import torch.distributed as dist

    if "RANK" not in os.environ:
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT="29511")
    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = torch.device(f"cuda:{int(os.environ['LOCAL_RANK'])}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(dev)
    torch.manual_seed(0)
    w = a.width
    model = torch.nn.Sequential(torch.nn.Linear(w, w), torch.nn.ReLU(), torch.nn.Linear(w, w), torch.nn.ReLU(),
                                torch.nn.Linear(w, 16)).to(dev)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[dev] if cuda else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(a.batch, w, device=dev)
    y = torch.randint(0, 16, (a.batch,), device=dev)
    times = []
    for i in range(a.warmup + a.steps):
        dist.barrier()
        t = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
        if cuda:
            torch.cuda.synchronize()
        if i >= a.warmup:
            times.append(time.perf_counter() - t)
    # The step time of the job is the slowest rank's.
    med = torch.tensor([statistics.median(times)], device=dev)
    dist.all_reduce(med, op=dist.ReduceOp.MAX)
    if rank == 0:
        base = {"gpus": world, "batch_per_rank": a.batch, "width": w, "backend": "nccl" if cuda else "gloo"}
        emit("ms_per_step", med.item() * 1e3, "ms", base)
        emit("samples_per_s", world * a.batch / med.item(), "samples/s", base)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
