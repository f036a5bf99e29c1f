"""Training data for the decoder: sampled programs, rendered images, canonical token targets.

Images. Every image is rendered at the official 512 px framing (`dsl.raster`) and then goes through the
same `prepare_image` as a dataset PNG at decode time: a square crop around the ink, resized to the
model's input size, plus the crop's side (a fraction of 512) as a scalar. The crop keeps the stamp
detail that a plain downscale of the whole canvas erases (free-form stamps are 6-10 px apart at 512 px).

Programs (`sample_training_program`), official poses and scales (spec §2.6):
  free-form  shapes from the official move library (`dsl.generate`) with 2-11 actions alone or 1-7 each
             in pairs (wider than the benchmark's 4-9 / 2-5), half of them perturbed like the official
             negatives (one or two times), painter scales 80-140;
  library    one or two human-designed shapes, random stroke types where the table allows stamps,
             scales 150-320 (one shape) or 150-260 (two).

Targets. A picture does not show where a shape starts, which way it was traced, nor the shape order.
Each image gets up to `max_variants` token sequences, all drawing the same picture: random start points /
directions / shape orders from `dsl.canonical.travel_variants` (the equivalence class that
`dsl.canonical.canonical_image` picks one representative of). The loss is the log of the summed
likelihood of these variants (the likelihood of the picture's equivalence class), so the decoder may
learn whichever tracing is easiest to see; decoded programs are canonicalised (`canonical_image`) before
they are compared or merged, so any tracing of the right picture counts.

Dense supervision (training only), both rasterised from the actions' centrelines over the crop:
  cells         (7, 24, 24) which stroke types / kinds pass through each cell of a CNN grid;
  action_cells  (24, 12, 12) the cells of each action: the attention target of the step that emits it
                (`action` (T,) per variant says which action each step draws).

Tokens are in travel form (turn = change of travel direction at the junction, curvature = signed arc
angle), one step per action, then NEXT between the two shapes and STOP at the end. Per step:
  kind    StepKind
  stroke  index into DATASET_STROKE_TYPES (-1 for NEXT / STOP)
  values  (length, radius, curvature / 360, turn / 180); 0 where unused
  has_turn  whether the turn is a free value (not for the first action of a shape, whose turn is 0)
"""

from __future__ import annotations

import enum
import itertools
import math
import warnings

import numpy as np
import torch
from PIL import Image

from dsl.canonical import Segment, from_travel_form, travel_variants
from dsl.generate import ProblemKind, perturb_shape, sample_free_form_shape, sample_pose
from dsl.library import load_library
from dsl.raster import official_view, render_drawing
from dsl.turtle import execute_image
from dsl.types import DATASET_STROKE_TYPES, ActionKind, ImageProgram, Pose, Shape

INK_THRESHOLD = 48  # ink level (0-255) that counts as drawn when finding the crop
CROP_MARGIN = 0.06  # margin around the ink, a fraction of the ink's larger side, plus 3 px
MIN_CROP = 48  # smallest crop side in pixels (at 512)
N_VALUES = 4  # length, radius, curvature / 360, turn / 180
N_CELL_LABELS = 7  # 5 stroke types, line, arc
STROKE_INDEX = {t: i for i, t in enumerate(DATASET_STROKE_TYPES)}


class StepKind(enum.IntEnum):
    LINE = 0
    ARC = 1
    NEXT = 2  # the next shape starts
    STOP = 3


# ------------------------------------------------------------------------------------------- images


def ink_box(image: np.ndarray) -> tuple[int, int, int] | None:
    """(left, top, side) of the square crop around the ink of a 512 px image, with a margin; None if blank."""
    ink = 255 - image
    rows, cols = np.nonzero(ink > INK_THRESHOLD)
    if rows.size == 0:
        return None
    top, bottom, left, right = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
    side = max(bottom - top, right - left)
    side = max(int(math.ceil(side * (1 + 2 * CROP_MARGIN) + 6)), MIN_CROP)
    cy, cx = (top + bottom) / 2.0, (left + right) / 2.0
    return int(round(cx - side / 2)), int(round(cy - side / 2)), side


def _as_official(image: np.ndarray) -> np.ndarray:
    if image.ndim == 3:
        image = image[..., 0]
    if image.shape != (512, 512):
        image = np.asarray(Image.fromarray(image).resize((512, 512), Image.BICUBIC))
    return image.astype(np.uint8)


def prepare_image(image: np.ndarray, size: int) -> tuple[np.ndarray, float]:
    """A uint8 greyscale (H, W) image (white background) -> (ink crop float32 (size, size) in [0, 1],
    crop side as a fraction of 512 px). The crop is a square around the ink, centred, with a margin."""
    image = _as_official(image)
    box = ink_box(image)
    if box is None:
        return np.zeros((size, size), np.float32), 1.0
    left, top, side = box
    crop = Image.fromarray(255 - image).crop((left, top, left + side, top + side))  # zero (no ink) outside
    crop = crop.resize((size, size), Image.BILINEAR)
    return np.asarray(crop, dtype=np.float32) / 255.0, side / 512.0


def _action_cells(drawing, box: tuple[int, int, int], grid: int):
    """Per action of the image (program order), the (row, column) grid cells its centreline passes."""
    left, top, side = box
    view = official_view(512)
    for geometry in drawing.shapes:
        for path in geometry.action_paths:
            pts = view.to_pixels(path)
            steps = np.maximum(2, (np.hypot(*np.diff(pts, axis=0).T) / (side / grid) * 3).astype(int) + 1)
            dense = np.concatenate([np.linspace(a, b, n) for a, b, n in zip(pts[:-1], pts[1:], steps)]) if len(pts) > 1 else pts
            cells = np.floor((dense - (left, top)) / side * grid).astype(int)
            cells = cells[(cells >= 0).all(1) & (cells < grid).all(1)]
            yield cells[:, 1], cells[:, 0]


def action_masks(drawing, box: tuple[int, int, int], grid: int, max_actions: int) -> np.ndarray:
    """(max_actions, grid, grid) uint8: the attention target of each action (its cells)."""
    masks = np.zeros((max_actions, grid, grid), np.uint8)
    for a, (rows, cols) in enumerate(_action_cells(drawing, box, grid)):
        masks[a, rows, cols] = 1
    return masks


def cell_labels(drawing, box: tuple[int, int, int], program: ImageProgram, grid: int) -> np.ndarray:
    """Dense auxiliary targets (7, grid, grid) uint8 over the crop: which stroke types (channels 0-4) and
    which kinds (5 line, 6 arc) pass through each cell, from the actions' centrelines."""
    labels = np.zeros((N_CELL_LABELS, grid, grid), np.uint8)
    actions = [a for shape in program.shapes for a in shape.actions]
    for action, (rows, cols) in zip(actions, _action_cells(drawing, box, grid)):
        labels[STROKE_INDEX.get(action.stroke, 0), rows, cols] = 1
        labels[5 if action.kind is ActionKind.LINE else 6, rows, cols] = 1
    return labels


# ----------------------------------------------------------------------------------------- programs


def _random_library_shape(rng: np.random.Generator) -> Shape:
    library = load_library()
    names = list(library)
    entry = library[names[rng.integers(len(names))]]
    if not entry.if_stamp:
        return entry.shape
    picks = rng.integers(len(DATASET_STROKE_TYPES), size=len(entry.shape))
    return Shape(tuple(a.with_stroke(DATASET_STROKE_TYPES[i]) for a, i in zip(entry.shape.actions, picks)))


def _free_form_program(rng: np.random.Generator) -> ImageProgram:
    if rng.random() < 0.5:
        counts = [int(rng.integers(2, 12))]
    else:
        counts = [int(rng.integers(1, 8)), int(rng.integers(1, 8))]
    shapes = [sample_free_form_shape(rng, k) for k in counts]
    for _ in range(int(rng.choice(3, p=[0.4, 0.4, 0.2]))):
        j = int(rng.integers(len(shapes)))
        shapes[j] = perturb_shape(rng, shapes[j])
    return ImageProgram(tuple(shapes))


def sample_training_program(rng: np.random.Generator, free_form_share: float = 0.6) -> tuple[ImageProgram, tuple[Pose, ...]]:
    """A random image program and official poses for it (every checkpoint inside the valid box)."""
    while True:
        if rng.random() < free_form_share:
            program, scales = _free_form_program(rng), ProblemKind.FREE_FORM.scale_range
        else:
            program = ImageProgram(tuple(_random_library_shape(rng) for _ in range(int(rng.integers(1, 3)))))
            scales = (ProblemKind.BASIC if len(program) == 2 else ProblemKind.ABSTRACT).scale_range
        for _ in range(60):
            poses = sample_pose(rng, len(program), scales)
            if execute_image(program, poses).valid:
                return program, poses


# ------------------------------------------------------------------------------------------- tokens


def tokenize(shapes: list[list[Segment]], max_steps: int) -> dict[str, np.ndarray]:
    """Travel-form shapes -> padded token arrays (kind -1 marks padding)."""
    kind = np.full(max_steps, -1, np.int64)
    stroke = np.full(max_steps, -1, np.int64)
    values = np.zeros((max_steps, N_VALUES), np.float32)
    has_turn = np.zeros(max_steps, bool)
    t = 0
    for s, segments in enumerate(shapes):
        if s:
            kind[t] = StepKind.NEXT
            t += 1
        for i, seg in enumerate(segments):
            kind[t] = StepKind.LINE if seg.kind is ActionKind.LINE else StepKind.ARC
            stroke[t] = STROKE_INDEX.get(seg.stroke, 0)
            values[t] = (seg.length, seg.radius, seg.curvature / 360.0, seg.turn / 180.0)
            has_turn[t] = i > 0
            t += 1
    kind[t] = StepKind.STOP
    return {"kind": kind, "stroke": stroke, "values": values, "has_turn": has_turn}


def detokenize(kinds: list[int], strokes: list[int], values: list[tuple[float, ...]]) -> ImageProgram:
    """Decoded steps (up to STOP) -> an ordinary image program (turns rebuilt from travel form)."""
    shapes: list[list[Segment]] = [[]]
    for k, s, v in zip(kinds, strokes, values):
        if k == StepKind.STOP:
            break
        if k == StepKind.NEXT:
            shapes.append([])
            continue
        length, radius, curvature, turn = (float(x) for x in v)
        line = k == StepKind.LINE
        shapes[-1].append(
            Segment(
                ActionKind.LINE if line else ActionKind.ARC,
                DATASET_STROKE_TYPES[s],
                max(length, 0.0) if line else 0.0,
                0.0 if line else max(radius, 0.0),
                0.0 if line else curvature * 360.0,
                turn * 180.0 if shapes[-1] else 0.0,
            )
        )
    return ImageProgram(tuple(from_travel_form(segs) for segs in shapes if segs))


def _variant_actions(n_actions: int, n_variants: int, v: int) -> list[int]:
    """Which action of the shape each segment of `travel_variants(shape)[v]` traces: the variants are the
    rotations of the cycle (closed shapes, one per start) or the shape itself, each forwards then backwards."""
    rotation = v // 2 if n_variants == 2 * n_actions else 0
    order = [(rotation + i) % n_actions for i in range(n_actions)]
    return order[::-1] if v % 2 else order


def variant_targets(program: ImageProgram, rng: np.random.Generator, max_variants: int, max_steps: int) -> list[dict]:
    """Token arrays of up to `max_variants` random equivalent programs (tracings and shape orders); each
    also has `action` (T,): the index of the program's action drawn at that step (-1: NEXT / STOP)."""
    per_shape = [travel_variants(s) for s in program.shapes]
    offsets = np.cumsum([0] + [len(s) for s in program.shapes])
    combos = [(order, choice) for order in itertools.permutations(range(len(per_shape)))
              for choice in itertools.product(*(range(len(per_shape[i])) for i in order))]
    out = []
    for p in rng.permutation(len(combos))[:max_variants]:
        order, choice = combos[p]
        tokens = tokenize([per_shape[i][c] for i, c in zip(order, choice)], max_steps)
        action = np.full(max_steps, -1, np.int64)
        t = 0
        for n, (i, c) in enumerate(zip(order, choice)):
            t += n > 0
            shape = program.shapes[i]
            for j, a in enumerate(_variant_actions(len(shape), len(per_shape[i]), c)):
                same = shape.actions[a].stroke is per_shape[i][c][j].stroke and shape.actions[a].kind is per_shape[i][c][j].kind
                action[t] = offsets[i] + a if same else -1
                t += 1
        tokens["action"] = action
        out.append(tokens)
    return out


# -------------------------------------------------------------------------------------------- batches


MAX_ACTIONS = 24  # actions per image with an attention target


def make_example(rng: np.random.Generator, image_size: int, max_variants: int, max_steps: int, grid: int = 24,
                 attention_grid: int = 12) -> dict:
    """One rendered training image with its target variants, dense cell labels (grid x grid) and the
    attention target of every action (attention_grid x attention_grid)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program, poses = sample_training_program(rng)
    drawing = execute_image(program, poses)
    image = render_drawing(drawing)
    crop, side = prepare_image(image, image_size)
    return {"image": crop, "side": side, "variants": variant_targets(program, rng, max_variants, max_steps),
            "program": program, "cells": cell_labels(drawing, ink_box(image), program, grid),
            "action_cells": action_masks(drawing, ink_box(image), attention_grid, MAX_ACTIONS)}


def collate(examples: list[dict]) -> dict[str, torch.Tensor]:
    """Examples -> a batch: images (B, 1, S, S), sides (B,), and the variants flattened to (N, T) with
    `owner` (N,) the image index of each variant."""
    variants = [v for e in examples for v in e["variants"]]
    batch = {
        "image": torch.from_numpy(np.stack([e["image"] for e in examples]))[:, None],  # (B, 1, S, S)
        "side": torch.tensor([e["side"] for e in examples], dtype=torch.float32),  # (B,)
        "owner": torch.tensor([i for i, e in enumerate(examples) for _ in e["variants"]]),  # (N,)
    }
    if all("cells" in e for e in examples):
        batch["cells"] = torch.from_numpy(np.stack([e["cells"] for e in examples]))  # (B, 7, G, G)
        batch["action_cells"] = torch.from_numpy(np.stack([e["action_cells"] for e in examples]))  # (B, A, g, g)
    for key in ("kind", "stroke", "values", "has_turn", "action"):
        batch[key] = torch.from_numpy(np.stack([v[key] for v in variants]))  # (N, T[, 4])
    return batch


class TrainingStream(torch.utils.data.IterableDataset):
    """An endless stream of batches, seeded per worker (`seed`, worker id)."""

    def __init__(self, seed: int, batch_size: int, image_size: int, max_variants: int, max_steps: int, grid: int,
                 attention_grid: int):
        super().__init__()
        self.seed, self.batch_size, self.image_size = seed, batch_size, image_size
        self.grid, self.attention_grid = grid, attention_grid
        self.max_variants, self.max_steps = max_variants, max_steps

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        rng = np.random.default_rng([self.seed, 0 if info is None else info.id])
        while True:
            yield collate([make_example(rng, self.image_size, self.max_variants, self.max_steps, self.grid, self.attention_grid)
                           for _ in range(self.batch_size)])
