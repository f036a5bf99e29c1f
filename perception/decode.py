"""Load a decoder checkpoint and propose, per image, the top-k programs that could have drawn it.

    model = load_decoder()                        # the shipped checkpoint
    proposals = decode_images(model, [image], top_k=10)[0]
    proposals[0].program, proposals[0].logp       # ImageProgram, log-probability

Beam search (and optionally ancestral sampling) over the decoder's discrete options (`perception.beam`);
the finished programs are canonicalised (`dsl.canonical`), equivalent ones merged (their probabilities
added: they are different tracings of the same picture) and the top-k returned, best first.
`logp` is the log of the summed probability of the program's decoded tracings, where each continuous
value counts as the weight of the mixture component it came from.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from dsl.canonical import canonical_image, image_key
from dsl.types import Action, ActionKind, ImageProgram, Shape
from perception.beam import prepare, search
from perception.data import CANVAS, detokenize, null_state
from perception.model import Decoder, DecoderConfig

DEFAULT_CHECKPOINT = Path(__file__).resolve().parent / "checkpoints" / "decoder.pt"
FREE_FORM_TURN_STEP = 30.0  # free-form turns are multiples of 30 degrees
FREE_FORM_ARC_STEP = 90.0  # free-form arcs are quarter circles ...
FREE_FORM_RADIUS = 0.5  # ... of radius 0.5
FREE_FORM_LENGTH = 1.0  # and lines have length 1


@dataclass(frozen=True, slots=True)
class Proposal:
    program: ImageProgram  # canonical form
    logp: float


def load_decoder(path: str | Path | None = None, device: str = "cpu") -> Decoder:
    """A decoder rebuilt from a checkpoint (config + weights), in eval mode, on `device`
    (`perception.device.resolve_device`)."""
    path = Path(path) if path is not None else DEFAULT_CHECKPOINT
    if not path.is_file():
        raise FileNotFoundError(f"decoder checkpoint not found: {path}")
    state = torch.load(path, map_location="cpu", weights_only=True)
    known = {f.name for f in dataclasses.fields(DecoderConfig)}
    config = {k: v for k, v in state["config"].items() if k in known}  # settings retired since: ignored
    config["channels"] = tuple(config["channels"])
    config["strip_size"] = tuple(config["strip_size"])
    model = Decoder(DecoderConfig(**config))
    model.load_state_dict(state["model"])
    return fuse_batch_norms(model.eval()).to(device)


def fuse_batch_norms(model: Decoder) -> Decoder:
    """Fold every BatchNorm that follows a convolution into it (inference only: same outputs, faster)."""
    for module in model.modules():
        if isinstance(module, torch.nn.Sequential):
            layers = list(module)
            for i in range(len(layers) - 1):
                conv, norm = layers[i], layers[i + 1]
                if isinstance(conv, torch.nn.Conv2d) and isinstance(norm, torch.nn.BatchNorm2d):
                    module[i] = torch.nn.utils.fusion.fuse_conv_bn_eval(conv, norm)
                    module[i + 1] = torch.nn.Identity()
    return model


@torch.no_grad()
def image_features(model: Decoder, images: list[np.ndarray]) -> torch.Tensor:
    """The global view's features of each image with nothing drawn yet (B, F): what the decoder sees
    before it starts (used by the nearest-prototype baseline)."""
    inputs = prepare(images)
    n = len(images)
    blank = torch.zeros(n, CANVAS, CANVAS, dtype=torch.uint8)
    states = torch.tensor([null_state(tuple(b)).as_tuple() for b in inputs["box"].tolist()], dtype=torch.float32)
    g, _, _ = model.views(inputs["image"], inputs["crop"], inputs["box"], torch.arange(n), states, blank)
    return g


def _merge(finished: list[tuple[float, list]], top_k: int) -> list[Proposal]:
    merged: dict[tuple, list] = {}
    finished = sorted(finished, key=lambda f: -f[0])[: 4 * top_k]  # the likeliest tracings: enough for the top k
    for logp, tokens in finished:
        kinds, strokes, values, _ = zip(*tokens)
        try:
            program = canonical_image(detokenize(list(kinds), list(strokes), list(values)))
        except ValueError:
            continue
        key = image_key(program)
        if key in merged:
            merged[key][1] = float(np.logaddexp(merged[key][1], logp))
        else:
            merged[key] = [program, logp]
    ranked = sorted(merged.values(), key=lambda item: -item[1])
    return [Proposal(program, logp) for program, logp in ranked[:top_k]]


def decode_images(
    model: Decoder,
    images: list[np.ndarray],
    top_k: int = 10,
    beam_width: int | None = None,
    sample: int = 0,
    seed: int = 0,
    batch_size: int = 16,
) -> list[list[Proposal]]:
    """Top-k canonical programs per image with log-probabilities, best first. `sample` > 0 adds that many
    ancestral samples per image to the beam's results before merging."""
    beam = beam_width or max(top_k, 8)
    generator = torch.Generator(next(model.parameters()).device).manual_seed(seed)
    results: list[list[Proposal]] = []
    for start in range(0, len(images), batch_size):
        chunk = images[start : start + batch_size]
        finished = search(model, chunk, beam=beam)
        if sample:
            drawn = search(model, chunk, samples=sample, widths=(5, 5, 5), generator=generator)
            finished = [a + _unique(b) for a, b in zip(finished, drawn)]
        results += [_merge(f, top_k) for f in finished]
    return results


def _unique(finished: list[tuple[float, list]]) -> list[tuple[float, list]]:
    """Samples repeat; keep one copy of each token sequence (its probability is already its score)."""
    seen, out = set(), []
    for logp, tokens in finished:
        key = tuple((k, s, tuple(round(x, 4) for x in v + w)) for k, s, v, w in tokens)
        if key not in seen:
            seen.add(key)
            out.append((logp, tokens))
    return out


def snap_free_form(program: ImageProgram) -> ImageProgram:
    """Round a decoded program to the free-form grid (turns to 30 degrees, arcs to quarter circles of
    radius 0.5, lines to length 1), then canonicalise."""

    def snap(value: float, step: float) -> float:
        return step * round(value / step)

    shapes = []
    for shape in program.shapes:
        actions = []
        for a in shape.actions:
            turn = snap(a.turn, FREE_FORM_TURN_STEP)
            if a.kind is ActionKind.LINE:
                actions.append(Action(ActionKind.LINE, a.stroke, turn, length=FREE_FORM_LENGTH))
            else:
                angle = snap(a.angle, FREE_FORM_ARC_STEP) or math.copysign(FREE_FORM_ARC_STEP, a.angle or 1.0)
                actions.append(Action(ActionKind.ARC, a.stroke, turn, radius=FREE_FORM_RADIUS, angle=angle))
        shapes.append(Shape(tuple(actions)))
    return canonical_image(ImageProgram(tuple(shapes)))


@dataclass(frozen=True, slots=True)
class StrokeReading:
    """What the decoder, walking a known program at an image's pose, makes of each action's stroke type."""

    margin: float  # nats: the log-probability of the program's stroke less the best other's, worst action
    program: ImageProgram  # the program as traced, the worst action with the decoder's stroke when it prefers another
    logp: float = 0.0  # nats: the log-probability of the program's strokes, summed over its actions
    margins: tuple = ()  # nats: per action, as traced, the log-probability of its stroke less the best other's
    logps: tuple = ()  # nats: per action, as traced, the log-probability of each stroke type (DATASET_STROKE_TYPES)
    actions: tuple = ()  # per action, as traced, which action of the program it is: (shape, action)


def _teacher_forced_once(model: Decoder, images: list[np.ndarray], steps: list[dict]) -> list[dict]:
    """`teacher_forced(..., strokes_only=True)` of each (image, steps) row; within `perception.beam.work_remembered`,
    each distinct row walked once (in this call or an earlier one of the block)."""
    from perception.beam import pixels_key, remembered_work, teacher_forced

    read = remembered_work()
    if read is None:
        return teacher_forced(model, images, steps, strokes_only=True)
    fields = ("kind", "stroke", "values", "start")  # the step tokens: a row is its image's pixels and these
    keys = [("walk", pixels_key(image, read), *(step[field].tobytes() for field in fields))
            for image, step in zip(images, steps)]
    first: dict = {}  # each row not yet walked -> the first place it is asked for
    for k, key in enumerate(keys):
        if key not in read:
            first.setdefault(key, k)
    new = list(first.values())
    if new:
        found = teacher_forced(model, [images[k] for k in new], [steps[k] for k in new], strokes_only=True)
        read.update((keys[k], reading) for k, reading in zip(new, found))
    return [read[key] for key in keys]


@torch.inference_mode()
def read_strokes(model: Decoder, images: list[np.ndarray], program: ImageProgram | list[ImageProgram],
                 poses: list) -> list[StrokeReading]:
    """Per image (`poses[k]`: the program's poses in image k), the decoder teacher-forced along the program
    (`perception.beam.teacher_forced`, the tracing it was taught: `dsl.walk.target_tracing`)
    judges every action's stroke type (`StrokeReading`). `program`: one for every image, or one per image."""
    from dsl.canonical import from_travel_form
    from dsl.types import DATASET_STROKE_TYPES
    from perception.data import crop_box, tracing_tokens
    from dsl.walk import traced_with_actions

    programs = [program] * len(images) if isinstance(program, ImageProgram) else list(program)
    traced = [traced_with_actions(list(p.shapes), list(image_poses)) for p, image_poses in zip(programs, poses)]
    # an image judged at several poses is passed as the same array each time: its ink box found once
    boxes = {key: crop_box(image) for key, image in {id(image): image for image in images}.items()}
    steps = [tracing_tokens(tracing, boxes[id(image)]) for (tracing, _), image in zip(traced, images)]
    out = []
    for found, (tracing, actions) in zip(_teacher_forced_once(model, images, steps), traced):
        tracing = [list(segments) for segments, _ in tracing]
        where = [(s, i) for s, segments in enumerate(tracing) for i in range(len(segments))]
        worst, total, margins = (math.inf, None, None), 0.0, []
        for (s, i), logp in zip(where, found["stroke_logp"]):
            own = DATASET_STROKE_TYPES.index(tracing[s][i].stroke)
            other = max((c for c in range(len(logp)) if c != own), key=lambda c: logp[c])
            worst = min(worst, (logp[own] - logp[other], (s, i), other), key=lambda w: w[0])
            total += float(logp[own])
            margins.append(float(logp[own] - logp[other]))
        margin, (s, i), other = worst
        tracing[s][i] = dataclasses.replace(tracing[s][i], stroke=DATASET_STROKE_TYPES[other])
        out.append(StrokeReading(float(margin), ImageProgram(tuple(from_travel_form(t) for t in tracing)), total,
                                 tuple(margins), tuple(tuple(logp) for logp in found["stroke_logp"]),
                                 tuple(actions)))
    return out
