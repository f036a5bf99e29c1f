"""Training data for the decoder: sampled programs, rendered images, and the turtle's walk through them.

Images. Every image is rendered at the official 512 px framing (`dsl.raster`). The decoder sees it three
ways (see `perception.glimpse`): the ink crop at 128 px (global view, as `prepare_image` makes it for a
dataset PNG), local glimpses of the 512 px image around the turtle, and stroke strips along one action.

Programs (`sample_training_program`), official poses and scales (spec §2.6):
  free-form  shapes from the official move library (`dsl.generate`) with 2-11 actions alone or 1-7 each
             in pairs (wider than the benchmark's 4-9 / 2-5), most of them perturbed like the official
             negatives (one or two times), painter scales 80-140;
  library    one or two human-designed shapes, random stroke types where the table allows stamps,
             scales 150-320 (one shape) or 150-260 (two).

Targets. A picture does not show where a shape starts, which way it was traced, nor the shape order. The
decoder is taught one tracing per image, chosen from the picture (`dsl.walk.target_tracing`:
the top-most start point, then the rightward direction, shapes in the same order) among the equivalent
tracings of `dsl.canonical.travel_variants`; decoded programs are canonicalised (`canonical_image`)
before they are compared or merged, so any tracing of the right picture counts.

Steps. Tokens are in travel form (turn = change of travel direction at the junction, curvature = signed
arc angle). Step 0 is NEXT (a shape starts: where, heading where, at what unit), then one step per action,
NEXT again before a second shape, STOP at the end. Per step:
  kind      StepKind;  stroke  index into DATASET_STROKE_TYPES (-1 for NEXT / STOP)
  values    (length, radius, curvature / 360, turn / 180); 0 where unused
  has_turn  whether the turn is a free value (not for the first action of a shape)
  start     NEXT steps: (x, y) of the shape's start in the ink crop (0-1), travel direction (radians),
            log(u / crop side): the new turtle state
  state     the turtle (x, y, theta, u) before the step (512 px), jittered; `correction` = the true state
            minus the jittered one (x, y in units of u along / across theta, theta, log u): the decoder
            learns to re-centre itself on the ink
  strip     action steps: (x, y, tangent, length in units) of the action's middle, for the stroke strip
            (jittered too: a decoded turtle is never exactly on the stroke)
  canvas    (128, 128) what is drawn before the step (centrelines of the finished actions over the crop)
"""

from __future__ import annotations

import enum
import math
import warnings

import numpy as np
import torch
from PIL import Image

from dsl.canonical import Segment, from_travel_form
from dsl.free_form import perturb_shape, sample_free_form_shape
from dsl.generate import ProblemKind, random_strokes, sample_pose
from dsl.library import load_library
from dsl.raster import render_drawing
from dsl.turtle import execute_image
from dsl.types import DATASET_STROKE_TYPES, ActionKind, ImageProgram, Pose, Shape
from dsl.walk import State, segment_middle, target_tracing, walk
from perception.glimpse import draw_paths, pen_width
from perception.settings import CANVAS, CROP_MARGIN, INK_THRESHOLD, JITTER, JITTER_SCALES, MIN_CROP, STRIP_JITTER

N_VALUES = 4  # length, radius, curvature / 360, turn / 180
STROKE_INDEX = {t: i for i, t in enumerate(DATASET_STROKE_TYPES)}


class StepKind(enum.IntEnum):
    LINE = 0
    ARC = 1
    NEXT = 2  # the next shape starts
    STOP = 3


# ------------------------------------------------------------------------------------------- images


def ink_box(image: np.ndarray) -> tuple[int, int, int] | None:
    """(left, top, side) of the square crop around the ink of a 512 px image, with a margin; None if blank."""
    ink = (255 - image) > INK_THRESHOLD
    rows, cols = np.flatnonzero(ink.any(1)), np.flatnonzero(ink.any(0))  # the inked rows and columns
    if rows.size == 0:
        return None
    top, bottom, left, right = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
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


# ----------------------------------------------------------------------------------------- programs


def _random_library_shape(rng: np.random.Generator) -> Shape:
    library = load_library()
    names = list(library)
    entry = library[names[rng.integers(len(names))]]
    if not entry.if_stamp:
        return entry.shape
    return random_strokes(rng, entry.shape, DATASET_STROKE_TYPES)


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


def sample_training_program(rng: np.random.Generator, free_form_share: float = 0.7) -> tuple[ImageProgram, tuple[Pose, ...]]:
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


# ------------------------------------------------------------------------------------------ steps


def crop_box(image: np.ndarray) -> tuple[float, float, float]:
    box = ink_box(image)
    return (0.0, 0.0, 512.0) if box is None else tuple(float(v) for v in box)


def null_state(box: tuple[float, float, float]) -> State:
    """The state before anything is drawn: the crop's centre, heading right, a unit of a quarter crop."""
    left, top, side = box
    return State(left + side / 2, top + side / 2, 0.0, side / 4)


def jitter(state: State, rng: np.random.Generator) -> tuple[State, np.ndarray]:
    """A perturbed copy of `state` and the correction that undoes it (see the module notes)."""
    k = JITTER_SCALES[rng.integers(len(JITTER_SCALES))]
    dx, dy = rng.normal(0.0, k * JITTER[0], 2) * state.u
    dtheta, dlog = rng.normal(0.0, k * JITTER[1]), rng.normal(0.0, k * JITTER[2])
    seen = State(state.x + dx, state.y + dy, state.theta + dtheta, state.u * math.exp(dlog))
    return seen, correction_target(state, seen)


def correction_target(true: State, seen: State) -> np.ndarray:
    ex, ey = true.x - seen.x, true.y - seen.y
    c, s = math.cos(seen.theta), math.sin(seen.theta)
    return np.array([(ex * c + ey * s) / seen.u, (-ex * s + ey * c) / seen.u, true.theta - seen.theta,
                     math.log(true.u / seen.u)], np.float32)


def apply_correction(seen: State, corr) -> State:
    """Inverse of `correction_target`: the state `corr` says the turtle is really in."""
    a, b, dtheta, dlog = (float(v) for v in corr)
    c, s = math.cos(seen.theta), math.sin(seen.theta)
    return State(seen.x + seen.u * (a * c - b * s), seen.y + seen.u * (a * s + b * c), seen.theta + dtheta,
                 seen.u * math.exp(dlog))


def start_values(state: State, box: tuple[float, float, float]) -> np.ndarray:
    left, top, side = box
    return np.array([(state.x - left) / side, (state.y - top) / side, state.theta, math.log(state.u / side)], np.float32)


def state_from_start(values, box: tuple[float, float, float]) -> State:
    left, top, side = box
    x, y, theta, log_u = (float(v) for v in values)
    return State(left + x * side, top + y * side, theta, side * math.exp(log_u))


def strip_of(state: State, seg: Segment, rng: np.random.Generator | None = None) -> np.ndarray:
    """(x, y, tangent, length) of the segment's middle; with rng, jittered as a decoded turtle would be."""
    strip = np.array(segment_middle(state, seg), np.float32)
    if rng is not None:
        strip[:2] += rng.normal(0.0, STRIP_JITTER[0], 2) * state.u
        strip[2] += rng.normal(0.0, STRIP_JITTER[1])
    return strip


def tracing_tokens(tracing: list, box: tuple[float, float, float]) -> dict:
    """The true tokens of a tracing (`dsl.walk.target_tracing`) in an image whose ink crop is `box`: per step, kind,
    stroke, values and start (see the module notes), the arrays teacher forcing reads (`perception.beam.teacher_forced`);
    nothing walked or drawn."""
    rows = []  # (kind, stroke, values, start) per step
    zeros = np.zeros(4, np.float32)
    for segments, start in tracing:
        rows.append((StepKind.NEXT, -1, zeros, start_values(start, box)))
        rows += [(StepKind.LINE if seg.kind is ActionKind.LINE else StepKind.ARC, STROKE_INDEX.get(seg.stroke, 0),
                  np.array((seg.length, seg.radius, seg.curvature / 360.0, seg.turn / 180.0), np.float32), zeros)
                 for seg in segments]
    rows.append((StepKind.STOP, -1, zeros, zeros))
    kinds, strokes, values, starts = zip(*rows)
    return {"kind": np.array(kinds, np.int64), "stroke": np.array(strokes, np.int64), "values": np.stack(values),
            "start": np.stack(starts)}


def example_steps(program: ImageProgram, poses, image: np.ndarray, rng: np.random.Generator | None) -> dict:
    """The step arrays of one image (see the module notes); rng None: no jitter (measurement)."""
    box = crop_box(image)
    tracing = target_tracing(list(program.shapes), list(poses))
    rows: list[dict] = []
    canvas = Image.new("L", (CANVAS, CANVAS), 0)
    state = null_state(box)

    def add(**fields) -> None:
        seen, corr = (jitter(state, rng) if rng is not None and rows else (state, np.zeros(4, np.float32)))
        rows.append({"state": np.array(seen.as_tuple(), np.float32), "correction": corr,
                     "canvas": np.asarray(canvas, np.uint8).copy(), **fields})

    for segments, start in tracing:
        add()
        state = start
        for i, seg in enumerate(segments):
            add(has_turn=i > 0, strip=strip_of(state, seg, rng))
            path, state = walk(state, seg.kind, seg.turn, seg.length, seg.radius, seg.curvature)
            draw_paths(canvas, [path], box, pen_width(state.u))
    add()
    return {
        **tracing_tokens(tracing, box),
        "has_turn": np.array([r.get("has_turn", False) for r in rows], bool),
        "state": np.stack([r["state"] for r in rows]),
        "correction": np.stack([r["correction"] for r in rows]),
        "strip": np.stack([r.get("strip", np.zeros(4, np.float32)) for r in rows]),
        "canvas": np.stack([r["canvas"] for r in rows]),
    }


def steps_program(steps: dict) -> ImageProgram:
    """The program the step arrays of `example_steps` encode (for tests)."""
    n = int(np.nonzero(steps["kind"] == StepKind.STOP)[0][0]) + 1
    return detokenize(list(steps["kind"][:n]), list(steps["stroke"][:n]), [tuple(v) for v in steps["values"][:n]])


def token_segment(kind: int, stroke: int, values) -> Segment:
    """One LINE / ARC step's token (kind, stroke index, values) -> its travel-form segment."""
    length, radius, curvature, turn = (float(x) for x in values)
    line = kind == StepKind.LINE
    return Segment(
        ActionKind.LINE if line else ActionKind.ARC,
        DATASET_STROKE_TYPES[stroke],
        max(length, 0.0) if line else 0.0,
        0.0 if line else max(radius, 0.0),
        0.0 if line else curvature * 360.0,
        turn * 180.0,
    )


def detokenize(kinds: list[int], strokes: list[int], values: list[tuple[float, ...]]) -> ImageProgram:
    """Decoded steps (up to STOP) -> an ordinary image program (turns rebuilt from travel form)."""
    shapes: list[list[Segment]] = [[]]
    for k, s, v in zip(kinds, strokes, values):
        if k == StepKind.STOP:
            break
        if k == StepKind.NEXT:
            if shapes[-1]:
                shapes.append([])
            continue
        seg = token_segment(k, s, v)
        shapes[-1].append(seg if shapes[-1] else seg.with_turn(0.0))
    return ImageProgram(tuple(from_travel_form(segs) for segs in shapes if segs))


# -------------------------------------------------------------------------------------------- batches


def make_example(rng: np.random.Generator, jittered: bool = True) -> dict:
    """One rendered training image with its steps."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program, poses = sample_training_program(rng)
    image = render_drawing(execute_image(program, poses))
    return example_from(image, program, poses, rng if jittered else None)


def example_from(image: np.ndarray, program: ImageProgram, poses, rng: np.random.Generator | None) -> dict:
    image = _as_official(image)
    crop, _ = prepare_image(image, CANVAS)
    return {"image": (255 - image), "crop": crop, "box": np.array(crop_box(image), np.float32),
            "program": program, **example_steps(program, poses, image, rng)}


STEP_KEYS = ("kind", "stroke", "values", "has_turn", "start", "state", "correction", "strip", "canvas")
PAD = {"kind": -1, "stroke": -1}


def collate(examples: list[dict]) -> dict[str, torch.Tensor]:
    """Examples -> a batch: image (B, 1, 512, 512) uint8 ink, crop (B, 1, 128, 128), box (B, 3), and the
    step arrays padded to (B, T, ...) (kind -1 marks padding)."""
    t = max(len(e["kind"]) for e in examples)
    batch = {
        "image": torch.from_numpy(np.stack([e["image"] for e in examples]))[:, None],
        "crop": torch.from_numpy(np.stack([e["crop"] for e in examples]))[:, None],
        "box": torch.from_numpy(np.stack([e["box"] for e in examples])),
    }
    for key in STEP_KEYS:
        arrays = [e[key] for e in examples]
        padded = np.full((len(arrays), t) + arrays[0].shape[1:], PAD.get(key, 0), arrays[0].dtype)
        for i, a in enumerate(arrays):
            padded[i, : len(a)] = a
        batch[key] = torch.from_numpy(padded)
    return batch


class TrainingStream(torch.utils.data.IterableDataset):
    """An endless stream of batches, seeded per worker (`seed`, worker id)."""

    def __init__(self, seed: int, batch_size: int):
        super().__init__()
        self.seed, self.batch_size = seed, batch_size

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        rng = np.random.default_rng([self.seed, 0 if info is None else info.id])
        while True:
            yield collate([make_example(rng) for _ in range(self.batch_size)])
