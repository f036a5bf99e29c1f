"""Free-form shapes as the official generator draws them (spec §3.2): positives built from a move
library, negatives with exactly one action changed, both wrapped in the official spread check."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from dsl.turtle import VALID_RANGE, execute_shape
from dsl.types import DATASET_STROKE_TYPES, Action, ActionKind, ImageProgram, Pose, Shape

SPREAD_TRIALS = 100

FREE_FORM_SETTINGS: tuple[tuple[int, ...], ...] = (
    (4,), (5,), (6,), (7,), (8,), (9,), (3, 3), (2, 5), (3, 4), (3, 5), (4, 4), (4, 5),
)
FREE_FORM_TURNS: tuple[float, ...] = (0, 30, -30, 60, -60, 90, -90, 120, -120, 150, -150)
FF_LINE = Action.line(1.0)
FF_ARC = Action.arc(0.5, 90.0)
# Move library in candidate order: the turn before each action (the first is always L0).
MOVES: tuple[tuple[str, tuple[tuple[Action, float], ...]], ...] = (
    ("line", ((FF_LINE, 0.0),)),
    ("arc", ((FF_ARC, 0.0),)),
    ("triangle", ((FF_LINE, 0.0), (FF_LINE, 120.0), (FF_LINE, 120.0))),
    ("square", ((FF_LINE, 0.0), (FF_LINE, 90.0), (FF_LINE, 90.0), (FF_LINE, 90.0))),
    ("semicircle", ((FF_ARC, 0.0), (FF_ARC, 0.0))),
    ("circle", ((FF_ARC, 0.0),) * 4),
    ("rightangle", ((FF_LINE, 0.0), (FF_LINE, 90.0))),
)
SPREAD_FACTORS = {2: 0.5, 3: 0.85, 4: 0.95, 5: 0.95, 6: 1.15, 7: 1.35, 8: 1.55, 9: 1.75}
SPREAD_SCALE = 200.0


class Perturbation(enum.Enum):
    """The three ways a free-form negative changes one action (spec §3.2)."""

    MOVE_NAME = "move_name"
    DIRECT_ANGLE = "direct_angle"
    MOVE_TYPE = "move_type"


def spread_ok(shape: Shape) -> bool:
    """The official 'overlap check': end points drawn unmagnified from the origin at scale 200 must span
    more than m(k)·200 in x or in y (k = number of actions; drawing stops at the first point out of range).
    The official settings have k in 2..9; one action always passes, more than 9 use m(9)."""
    if len(shape) < 2:
        return True
    points = execute_shape(shape, Pose(0.0, 0.0, 0.0, SPREAD_SCALE), magnifier=False).checkpoints
    outside = np.flatnonzero(np.any(np.abs(points) > VALID_RANGE, axis=1))
    if outside.size:
        points = points[: outside[0]]
    k = min(len(shape), 9)
    extent = points.max(axis=0) - points.min(axis=0)
    return bool(np.any(extent > SPREAD_FACTORS[k] * SPREAD_SCALE))


def _random_free_form_shape(rng: np.random.Generator, k: int) -> Shape:
    actions: list[Action] = []
    while len(actions) < k:
        candidates = [m for m in MOVES if len(m[1]) <= k - len(actions)]
        _, move = candidates[rng.integers(len(candidates))]
        for action, turn in move:
            stroke = DATASET_STROKE_TYPES[rng.integers(len(DATASET_STROKE_TYPES))]
            actions.append(action.with_turn(turn).with_stroke(stroke))
    return Shape(tuple(actions))


def sample_free_form_shape(rng: np.random.Generator, k: int) -> Shape:
    """A positive free-form shape of exactly k actions passing the spread check (the last of 100 if none)."""
    for _ in range(SPREAD_TRIALS):
        shape = _random_free_form_shape(rng, k)
        if spread_ok(shape):
            return shape
    return shape


def perturb_action(rng: np.random.Generator, action: Action, way: Perturbation) -> Action:
    """Change one action in one way: line <-> arc, a turn at least 45 degrees away, or another stroke type."""
    if way is Perturbation.MOVE_NAME:
        other = FF_ARC if action.is_line else FF_LINE
        return other.with_turn(action.turn).with_stroke(action.stroke)
    if way is Perturbation.DIRECT_ANGLE:
        choices = [t for t in FREE_FORM_TURNS if abs(t - action.turn) > 45.0]
        return action.with_turn(float(choices[rng.integers(len(choices))]))
    others = [t for t in DATASET_STROKE_TYPES if t is not action.stroke]
    return action.with_stroke(others[rng.integers(len(others))])


@dataclass(frozen=True, slots=True)
class ActionChange:
    """What a free-form negative changed: action `action` (0-based, in the positive's own tracing) of shape
    `shape`, in the way `way`."""

    shape: int
    action: int
    way: Perturbation


def perturbed_shape(rng: np.random.Generator, shape: Shape) -> tuple[Shape, int, Perturbation]:
    """A free-form negative shape, the index of the action changed and how (see `perturb_shape`)."""
    k = len(shape)
    ways = list(Perturbation) if k > 1 else [Perturbation.MOVE_NAME, Perturbation.MOVE_TYPE]
    for _ in range(SPREAD_TRIALS):
        i = int(rng.integers(k))
        way = ways[rng.integers(len(ways))]
        if i == 0 and way is Perturbation.DIRECT_ANGLE:
            i = int(rng.integers(1, k))
        actions = list(shape.actions)
        actions[i] = perturb_action(rng, actions[i], way)
        candidate = Shape(tuple(actions))
        if spread_ok(candidate):
            return candidate, i, way
    return candidate, i, way


def perturb_shape(rng: np.random.Generator, shape: Shape) -> Shape:
    """A free-form negative shape: exactly one action changed in one way, wrapped in the spread check."""
    return perturbed_shape(rng, shape)[0]


def free_form_negative_change(rng: np.random.Generator, positive: ImageProgram) -> tuple[ImageProgram, ActionChange]:
    """Perturb one uniformly chosen shape of the positive image, keep the other; say what was changed."""
    j = int(rng.integers(len(positive.shapes)))
    shapes = list(positive.shapes)
    shapes[j], action, way = perturbed_shape(rng, shapes[j])
    return ImageProgram(tuple(shapes)), ActionChange(j, action, way)


def free_form_negative(rng: np.random.Generator, positive: ImageProgram) -> ImageProgram:
    """Perturb one uniformly chosen shape of the positive image, keep the other."""
    return free_form_negative_change(rng, positive)[0]


def free_form_drawable(shape: Shape, tolerance: float = 0.01) -> bool:
    """Whether a free-form program draws `shape`'s centreline at some size: every line as long as the others (the
    generator's FF_LINE), every arc a whole number of quarter circles (FF_ARC's) of half a line's length (of any one
    radius without lines), every turn a multiple of 30 degrees. Library shapes so drawn (a circle, a square, an
    equilateral triangle) can be a free-form problem's concept."""
    lines = [action.length for action in shape.actions if action.kind is ActionKind.LINE]
    radii = [action.radius for action in shape.actions if action.kind is ActionKind.ARC]
    unit = lines[0] / FF_LINE.length if lines else radii[0] / FF_ARC.radius if radii else 0.0
    if unit <= 0.0:
        return False

    def whole(value: float, step: float) -> bool:
        return abs(value / step - round(value / step)) <= tolerance

    for action in shape.actions:
        if not whole(action.turn, 30.0):
            return False
        if action.kind is ActionKind.LINE and abs(action.length / unit - FF_LINE.length) > tolerance:
            return False
        if action.kind is ActionKind.ARC and (abs(action.radius / unit - FF_ARC.radius) > tolerance
                                              or not whole(action.angle, FF_ARC.angle) or round(action.angle / FF_ARC.angle) == 0):
            return False
    return True
