"""`train-decoder` on several processes: DistributedDataParallel under `torchrun`, or one process alone.

    torchrun --standalone --nproc_per_node 2 -m solver.app.cli train-decoder --out ckpt.pt --threads 1 ...

Each process (rank) reads its own stream of generated batches (seeded by the seed and the rank) of
`--batch-size / world size` images, so the optimiser still steps on `--batch-size` images a step and the
recipe (learning rate, steps, warm-up) is the same as on one process. Gradients are averaged by DDP (gloo
on the CPU, NCCL on GPUs, one GPU per rank); rank 0 alone validates, logs and writes the checkpoint. Run
without torchrun, the same code trains on one process as before.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from perception.device import resolve_device

RANK_SEED_STRIDE = 100_003  # rank r's training stream is seeded with seed + r * this


@dataclass(frozen=True)
class Ranks:
    rank: int = 0
    world: int = 1
    device: str = "cpu"

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world > 1


def setup(device: str = "auto") -> Ranks:
    """The process group when started by torchrun (WORLD_SIZE > 1), else one process on `device`."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    resolved = resolve_device(device)
    if world <= 1:
        return Ranks(device=resolved)
    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    if resolved.startswith("cuda"):
        resolved = f"cuda:{local}"
        torch.cuda.set_device(local)
    dist.init_process_group("nccl" if resolved.startswith("cuda") else "gloo")
    return Ranks(rank, world, resolved)


def teardown(ranks: Ranks) -> None:
    if ranks.distributed:
        dist.destroy_process_group()


def per_rank_batch(batch_size: int, ranks: Ranks) -> int:
    if batch_size % ranks.world:
        raise ValueError(f"--batch-size {batch_size} does not split evenly over {ranks.world} processes")
    return batch_size // ranks.world


def wrap(model: torch.nn.Module, ranks: Ranks) -> torch.nn.Module:
    """The model DDP trains (gradients averaged over the ranks), or the model itself on one process."""
    if not ranks.distributed:
        return model
    devices = [ranks.device] if ranks.device.startswith("cuda") else None
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=devices, find_unused_parameters=True)


def on_device(batch: dict, ranks: Ranks) -> dict:
    if ranks.device == "cpu":
        return batch
    return {k: v.to(ranks.device, non_blocking=True) if torch.is_tensor(v) else v for k, v in batch.items()}


def device_context(ranks: Ranks):
    """Tensors the model makes in its forward are made on its device (nothing to do on the CPU)."""
    return contextlib.nullcontext() if ranks.device == "cpu" else torch.device(ranks.device)


def any_rank(flag: bool, ranks: Ranks) -> bool:
    """True on every rank when it is true on one (all ranks stop at the same step)."""
    if not ranks.distributed:
        return bool(flag)
    value = torch.tensor([int(bool(flag))], device=ranks.device)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return bool(value.item())
