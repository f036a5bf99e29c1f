"""Library-shape recognition: a CNN that names the human-designed shapes an image draws.

Basic and abstract images draw one or two of the 627 shapes of the library (`dsl.library`), with random
stroke types, poses and scales. The action decoder reads their continuous lengths, radii and angles only
roughly; naming the shape from the picture and fitting that shape's exact program is more reliable. The
classifier proposes library shapes; the enumerator (`search.refine`) fits and compares them like any other
proposal, so a wrong guess costs only its pixel score.

Classes are the library's geometric groups: shapes that draw the same picture (`search.categories`) share
one class (627 shapes, 626 groups). The input is the ink crop at `ShapeConfig.size` px (as
`perception.data.prepare_image` makes it); the output is a softmax over the groups. A picture of two shapes
is taught as half of each group; at inference a two-shape image is also classified part by part: its two
largest ink components, each cropped alone (`ink_parts`).

Training (`bongard-solver train-shapes`, recipe in docs/decoder.md): rendered images of random
library shapes in official poses (one shape at the abstract painter scales, two at the basic ones), with
the generators' stroke rules; the images are made once (in worker processes) and reused every epoch.
"""

from __future__ import annotations

import functools
import json
import math
import multiprocessing
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy import ndimage

from dsl.generate import ProblemKind, abstract_concepts, abstract_strokes, place, random_strokes
from dsl.library import load_library
from dsl.raster import render_drawing
from dsl.turtle import execute_image
from dsl.types import DATASET_STROKE_TYPES, ImageProgram, StrokeType
from perception.data import _as_official, prepare_image
from perception.settings import FULL_STROKES_SHARE, INK_THRESHOLD, PAIR_SHARE, PART_DILATION, PART_MIN_SHARE

DEFAULT_CHECKPOINT = Path(__file__).parent / "checkpoints" / "shapes.pt"


@dataclass
class ShapeConfig:
    size: int = 96  # side of the ink crop (pixels)
    channels: tuple[int, ...] = (24, 48, 96, 160, 256)  # stride-2 stages (one stride-1 conv after each)
    hidden: int = 384
    dropout: float = 0.2


@functools.cache
def shape_groups() -> tuple[tuple[str, ...], ...]:
    """The classes: library shapes grouped by drawing (a group's names in library order)."""
    from dsl.categories import exact_shape_categories

    groups: dict[tuple[str, ...], None] = {}
    for entry in load_library().values():
        groups.setdefault(exact_shape_categories(entry.shape) or (entry.name,), None)
    return tuple(groups)


@functools.cache
def group_of() -> dict[str, int]:
    return {name: k for k, group in enumerate(shape_groups()) for name in group}


def _block(c_in: int, c_out: int, stride: int) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True)]


class ShapeClassifier(nn.Module):
    """Conv stages (stride 2, then stride 1) -> flattened 3x3 grid -> MLP -> one logit per group."""

    def __init__(self, config: ShapeConfig | None = None, classes: int | None = None):
        super().__init__()
        self.config = config = config or ShapeConfig()
        self.classes = classes or len(shape_groups())
        layers, c = [], 1
        for width in config.channels:
            layers += _block(c, width, 2) + _block(width, width, 1)
            c = width
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(3), nn.Flatten())
        self.head = nn.Sequential(
            nn.Dropout(config.dropout), nn.Linear(c * 9, config.hidden), nn.ReLU(inplace=True),
            nn.Dropout(config.dropout), nn.Linear(config.hidden, self.classes),
        )

    def forward(self, crops: torch.Tensor) -> torch.Tensor:
        """(B, 1, S, S) ink crops in [0, 1] -> (B, groups) logits."""
        return self.head(self.features(crops))


# ------------------------------------------------------------------------------------------- images


def sample_library_image(rng: np.random.Generator) -> tuple[np.ndarray, tuple[str, ...]]:
    """A rendered 512 px image of one or two random library shapes, and their names."""
    library = load_library()
    names = list(library)
    pair = rng.random() < PAIR_SHARE
    chosen = tuple(names[i] for i in rng.choice(len(names), size=2 if pair else 1, replace=False))
    if pair or rng.random() < FULL_STROKES_SHARE:
        allowed = DATASET_STROKE_TYPES
    else:
        allowed = abstract_strokes(abstract_concepts()[rng.integers(len(abstract_concepts()))])
    shapes = [random_strokes(rng, library[n].shape, allowed if library[n].if_stamp else (StrokeType.NORMAL,)) for n in chosen]
    program = ImageProgram(tuple(shapes))
    kind = ProblemKind.BASIC if pair else (ProblemKind.ABSTRACT if rng.random() < 0.7 else ProblemKind.BASIC)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        poses = place(rng, program, kind.scale_range)
    return render_drawing(execute_image(program, poses)), chosen


def ink_parts(image: np.ndarray, parts: int = 2) -> list[np.ndarray]:
    """The `parts` largest ink components of a 512 px image (ink dilated first), each alone on a white
    image, if there are that many holding PART_MIN_SHARE of the ink each; else []."""
    image = _as_official(np.asarray(image))
    ink = (255 - image) > INK_THRESHOLD
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if not len(rows):
        return []
    # the ink's box widened by the dilation (the same components and sizes as over the whole image, at a
    # tenth of the cost: a drawing inks a small part of the frame)
    top, left = max(rows[0] - PART_DILATION - 1, 0), max(cols[0] - PART_DILATION - 1, 0)
    box = (slice(top, rows[-1] + PART_DILATION + 2), slice(left, cols[-1] + PART_DILATION + 2))
    ink = ink[box]
    labels, count = ndimage.label(ndimage.binary_dilation(ink, iterations=PART_DILATION))
    if count < parts:
        return []
    sizes = ndimage.sum(ink, labels, index=np.arange(1, count + 1))
    order = np.argsort(sizes)[::-1][:parts]
    if sizes[order[-1]] < PART_MIN_SHARE * ink.sum():
        return []
    out = []
    for k in order:
        alone = np.full_like(image, 255)
        mask = labels == k + 1
        alone[box][mask] = image[box][mask]
        out.append(alone)
    return out


def _make_chunk(job: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    seed, count, size = job
    rng = np.random.default_rng(seed)
    crops = np.zeros((count, size, size), np.uint8)
    labels = np.full((count, 2), -1, np.int32)
    index = group_of()
    for i in range(count):
        image, names = sample_library_image(rng)
        crop, _ = prepare_image(image, size)
        crops[i] = np.round(crop * 255).astype(np.uint8)
        labels[i, : len(names)] = [index[n] for n in names]
    return crops, labels


def make_images(count: int, seed: int, size: int, workers: int = 2, chunk: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """`count` rendered training crops (uint8) and their group labels ((count, 2), -1 = no second shape)."""
    jobs = [(seed * 100_003 + k, min(chunk, count - start), size) for k, start in enumerate(range(0, count, chunk))]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        done = pool.map(_make_chunk, jobs)
    return np.concatenate([c for c, _ in done]), np.concatenate([y for _, y in done])


def soft_targets(labels: torch.Tensor, classes: int) -> torch.Tensor:
    """(B, 2) group labels (-1 = none) -> (B, classes) target distributions (two shapes: half each)."""
    valid = labels >= 0
    target = torch.zeros(labels.shape[0], classes)
    weight = valid.float() / valid.float().sum(1, keepdim=True)
    target.scatter_add_(1, labels.clamp(min=0), weight)
    return target


def _augment(crops: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Thicker or thinner ink on a random third each (the official renderer's pen is not ours exactly)."""
    pick = torch.rand(crops.shape[0], generator=generator)
    thick = F.max_pool2d(crops, 3, 1, 1)
    thin = -F.max_pool2d(-crops, 2, 1, 0)
    thin = F.pad(thin, (0, 1, 0, 1))
    crops = torch.where((pick < 0.2)[:, None, None, None], thick, crops)
    return torch.where((pick > 0.85)[:, None, None, None], torch.maximum(thin, crops * 0.6), crops)


# ------------------------------------------------------------------------------------------ training


def evaluate(model: ShapeClassifier, crops: np.ndarray, labels: np.ndarray, batch: int = 256) -> dict[str, float]:
    """Top-1 / top-5 of single-shape crops (the true group first), and for two-shape crops the share whose
    two groups are both among the top 5."""
    model.eval()
    with torch.no_grad():
        logits = torch.cat([model(torch.from_numpy(crops[i : i + batch]).float()[:, None] / 255.0) for i in range(0, len(crops), batch)])
    top = logits.topk(5, dim=1).indices.numpy()
    single = labels[:, 1] < 0
    top1 = float(np.mean(top[single, 0] == labels[single, 0])) if single.any() else math.nan
    top5 = float(np.mean([(labels[i, 0] in top[i]) for i in np.flatnonzero(single)])) if single.any() else math.nan
    pair5 = float(np.mean([(labels[i, 0] in top[i]) and (labels[i, 1] in top[i]) for i in np.flatnonzero(~single)])) if (~single).any() else math.nan
    model.train()
    return {"top1": top1, "top5": top5, "pair_top5": pair5}


def save(model: ShapeClassifier, path: Path, metrics: dict, args: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.half() if v.is_floating_point() else v for k, v in model.state_dict().items()}
    torch.save({"config": asdict(model.config), "groups": shape_groups(), "state": state, "metrics": metrics, "args": args}, path)


def train(args) -> dict:
    """Make the images (or read them from `args.cache`), train, save after every epoch; the last metrics.
    `args`: the options of `bongard-solver train-shapes` (`perception.commands`)."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    config = ShapeConfig()
    cache = Path(args.cache) if args.cache else None
    if cache and cache.exists():
        data = np.load(cache)
        crops, labels = data["crops"], data["labels"]
    else:
        started = time.time()
        crops, labels = make_images(args.images, args.seed, config.size, workers=args.workers)
        print(f"made {len(crops)} images in {time.time() - started:.0f} s", flush=True)
        if cache:
            np.savez(cache, crops=crops, labels=labels)
    held = min(2000, len(crops) // 20)
    val_crops, val_labels, crops, labels = crops[:held], labels[:held], crops[held:], labels[held:]
    model = ShapeClassifier(config)
    steps = args.epochs * (len(crops) // args.batch)
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=args.lr, total_steps=steps, pct_start=0.1)
    generator = torch.Generator().manual_seed(args.seed)
    options = {k: v.name if isinstance(v, Path) else v for k, v in vars(args).items()
               if isinstance(v, (bool, int, float, str, Path, type(None)))}  # stored with the checkpoint, files by name
    step, started, metrics = 0, time.time(), {}
    for epoch in range(args.epochs):
        order = torch.randperm(len(crops), generator=generator).numpy()
        for i in range(0, len(order) - args.batch + 1, args.batch):
            idx = np.sort(order[i : i + args.batch])
            x = _augment(torch.from_numpy(crops[idx]).float()[:, None] / 255.0, generator)
            y = soft_targets(torch.from_numpy(labels[idx]).long(), model.classes)
            loss = torch.sum(-y * F.log_softmax(model(x), dim=1), dim=1).mean()
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            schedule.step()
            step += 1
            if step % 100 == 0:
                print(f"epoch {epoch} step {step}/{steps} loss {loss.item():.3f} {(time.time() - started) / 60:.1f} min", flush=True)
        metrics = {"epoch": epoch, "step": step, "minutes": (time.time() - started) / 60, **evaluate(model, val_crops, val_labels)}
        print(json.dumps(metrics), flush=True)
        save(model, Path(args.out), metrics, options)
    return metrics


# ----------------------------------------------------------------------------------------- inference


def load_classifier(path: Path | str | None = None) -> ShapeClassifier:
    path = Path(path) if path else DEFAULT_CHECKPOINT
    if not path.exists():
        raise FileNotFoundError(f"{path}: no shape-classifier checkpoint")
    saved = torch.load(path, map_location="cpu", weights_only=True)
    config = ShapeConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in saved["config"].items()})
    model = ShapeClassifier(config, classes=len(saved["groups"]))
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in saved["state"].items()})
    model.groups = tuple(tuple(g) for g in saved["groups"])
    return model.eval()


@torch.no_grad()
def group_probabilities(model: ShapeClassifier, images: list[np.ndarray]) -> np.ndarray:
    """(N, groups) softmax probabilities for 512 px images."""
    if not images:
        return np.zeros((0, model.classes), np.float32)
    crops = np.stack([prepare_image(image, model.config.size)[0] for image in images])
    return F.softmax(model(torch.from_numpy(crops)[:, None]), dim=1).numpy()


def library_guesses(model: ShapeClassifier, image: np.ndarray, top: int = 5) -> dict:
    """What the classifier makes of one image: {"whole": [(group names, p)...], "parts": [[...], [...]],
    "part_images": [...]} (parts empty unless the image has two separate ink components; a part image
    holds only that part's ink)."""
    return library_guesses_many(model, [image], top)[0]


def library_guesses_many(model: ShapeClassifier, images: list[np.ndarray], top: int = 5) -> list[dict]:
    """`library_guesses` of several images, the classifier run once over all of them and their ink parts (a
    batch of three costs about a third per image of one alone: the network's fixed cost per call dominates)."""
    parts = [ink_parts(image) for image in images]
    ranked = ranked_groups(model, [crop for image, found in zip(images, parts) for crop in (image, *found)], top)
    out, k = [], 0
    for found in parts:
        out.append({"whole": ranked[k], "parts": ranked[k + 1:k + 1 + len(found)], "part_images": found})
        k += 1 + len(found)
    return out


def ranked_groups(model: ShapeClassifier, images: list[np.ndarray], top: int = 5) -> list[list[tuple]]:
    """Per image, the classifier's `top` groups with their probabilities, most probable first."""
    probs = group_probabilities(model, images)
    out = []
    for p in probs:  # indices and probabilities as Python numbers first: every group is asked for (a numpy scalar
        # per group: 0.18 ms an image, against 0.08)
        order = np.argsort(p)[::-1][:top]
        out.append(list(zip((model.groups[k] for k in order.tolist()), p[order].tolist())))
    return out
