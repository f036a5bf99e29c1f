"""Train the decoder on generated images: one flat loop, seeded, with periodic validation.

    bongard-solver train-decoder --out perception/checkpoints/decoder.pt --steps 3000 --seed 0

Batches come from `perception.data.TrainingStream` (programs sampled, rendered and cropped on the fly in
a DataLoader worker). Under `torchrun` the run is shared out over processes with
DistributedDataParallel, the same recipe (`perception.distributed`):

    torchrun --standalone --nproc_per_node 2 -m solver.app.cli train-decoder --out ckpt.pt --threads 1 ...

Validation uses a fixed set of held-out generated images (another seed); it reports
the loss, and the action-kind and stroke-type accuracy of teacher-forced steps on the most likely target
variant of each image. The checkpoint (config, weights, step, metrics, arguments) is written at every
validation, so a usable model exists if the run is cut short; `--time-limit` stops the run early.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from perception import distributed
from perception.data import TrainingStream, collate, make_example
from perception.model import Decoder, DecoderConfig

VALIDATION_SEED_OFFSET = 1_000_003


def learning_rate(step: int, minutes: float, args: argparse.Namespace) -> float:
    """Linear warm-up, then cosine decay to 2 % over the run; with --time-limit the run's progress is the
    larger of the step and the time fractions, so a run cut by time still ends at a low rate."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = (step - args.warmup) / max(1, args.steps - args.warmup)
    if args.time_limit:
        progress = max(progress, minutes / args.time_limit)
    return args.lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))))


@torch.no_grad()
def validate(model: Decoder, batches: list[dict]) -> dict[str, float]:
    """Loss and teacher-forced accuracy: argmax kind of every step after the first, argmax stroke type of
    every action given its true kind and values."""
    model.eval()
    losses, kind_ok, kind_n, stroke_ok, stroke_n = [], 0, 0, 0, 0
    for batch in batches:
        out, loss = model(batch)
        losses.append(loss.item())
        rows, act = out["rows"], out["act"]
        kind = batch["kind"][rows]
        later = rows[1] > 0
        kind_ok += int((out["kind_logits"].argmax(-1) == kind)[later].sum())
        kind_n += int(later.sum())
        stroke_ok += int((out["stroke_logits"].argmax(-1) == batch["stroke"][rows][act]).sum())
        stroke_n += int(act.sum())
    model.train()
    return {"loss": float(np.mean(losses)), "kind_accuracy": kind_ok / kind_n, "type_accuracy": stroke_ok / stroke_n}


def validation_batches(args: argparse.Namespace) -> list[dict]:
    rng = np.random.default_rng(args.seed + VALIDATION_SEED_OFFSET)
    examples = [make_example(rng, jittered=False) for _ in range(args.val_size)]
    return [collate(examples[i : i + 32]) for i in range(0, len(examples), 32)]


def save(model: Decoder, path: Path, step: int, metrics: dict, args: argparse.Namespace) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    state = model.checkpoint()
    # files by name only: a checkpoint carries no path of the machine it was trained on
    args = {k: v.name if isinstance(v, Path) else str(v) for k, v in vars(args).items() if k != "func"}
    state.update(step=step, metrics=metrics, args=args)
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.replace(path)


def train(args: argparse.Namespace) -> dict:
    """The training run; under torchrun, this rank's share of it (`perception.distributed`)."""
    ranks = distributed.setup(getattr(args, "device", "auto"))
    try:
        return _train(args, ranks)
    finally:
        distributed.teardown(ranks)


def _initial_model(args: argparse.Namespace, ranks: distributed.Ranks) -> Decoder:
    torch.manual_seed(args.seed)
    config = DecoderConfig(hidden=args.hidden, feature=args.feature, channels=tuple(int(c) for c in args.channels.split(",")))
    model = Decoder(config)
    if args.init is not None:  # parts new since that checkpoint start from scratch (reported)
        own = model.state_dict()
        state = {k: v for k, v in torch.load(args.init, weights_only=True)["model"].items() if k in own and own[k].shape == v.shape}
        missing, unexpected = model.load_state_dict(state, strict=False)
        if (missing or unexpected) and ranks.main:
            print(f"--init {args.init}: {len(missing)} new tensors ({', '.join(sorted({k.split('.')[0] + '.' + k.split('.')[1] for k in missing}))}), "
                  f"{len(unexpected)} unused")
    if ranks.main:
        print(f"decoder: {sum(p.numel() for p in model.parameters()) / 1e6:.2f} M parameters, config {dataclasses.asdict(config)}, "
              f"{ranks.world} process(es) on {ranks.device}")
    return model.to(ranks.device)


def _train(args: argparse.Namespace, ranks: distributed.Ranks) -> dict:
    torch.set_num_threads(args.threads)
    model = _initial_model(args, ranks)
    net = distributed.wrap(model, ranks)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    val = [distributed.on_device(b, ranks) for b in validation_batches(args)] if ranks.main else []
    stream = TrainingStream(args.seed + ranks.rank * distributed.RANK_SEED_STRIDE, distributed.per_rank_batch(args.batch_size, ranks))
    loader = torch.utils.data.DataLoader(stream, batch_size=None, num_workers=args.workers,
                                         prefetch_factor=4 if args.workers else None, persistent_workers=args.workers > 0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    log_path = args.out.with_suffix(".log.jsonl")
    start, metrics, step = time.time(), {}, 0
    bar = tqdm(total=args.steps, desc="train-decoder", mininterval=5, disable=not ranks.main)
    for step, batch in enumerate(loader, start=1):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step - 1, (time.time() - start) / 60, args)
        with distributed.device_context(ranks):
            _, loss = net(distributed.on_device(batch, ranks))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        bar.update(1)
        bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
        out_of_time = (args.time_limit and time.time() - start > 60 * args.time_limit) or step == args.stop_after
        out_of_time = distributed.any_rank(out_of_time, ranks) if args.time_limit else out_of_time
        if ranks.main and (step % args.val_every == 0 or step == args.steps or out_of_time):
            with distributed.device_context(ranks):
                metrics = {"step": step, "minutes": round((time.time() - start) / 60, 2), "train_loss": loss.item(), **validate(model, val)}
            tqdm.write(json.dumps(metrics))
            with open(log_path, "a") as log:
                log.write(json.dumps(metrics) + "\n")
            save(model, args.out, step, metrics, args)
        if step >= args.steps or out_of_time:
            break
    bar.close()
    return metrics
