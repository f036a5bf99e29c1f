"""Canonical forms of programs: one representative per drawing, modulo what an image cannot show.

An image does not show where a one-stroke shape starts or which way it was traced, nor the first turn
(it only rotates the shape), nor the order of an image's shapes. The canonical form picks one program of
each equivalence class; the decoder's targets, the enumerator and the solver all use it.

Method. A shape is rewritten in *travel form*: per action its kind, stroke, length or radius, its
curvature (the signed arc angle) and the turn between the directions of travel at the junction. (An arc
with a negative angle is traced backwards by the turtle, spec §2.4: its heading points against its
travel, so official turns and travel turns differ by 180° around it.) In travel form, tracing backwards
reverses the actions, negates every curvature and every turn; a closed shape may start at any action, the
turn at the closing junction taking the place of the first. Among these variants the one with the
smallest quantised key is the canonical one; it is written back as an ordinary program whose first turn
is 0.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np

from dsl.settings import ANGLE_QUANTUM, CLOSED_TOLERANCE, LENGTH_QUANTUM
from dsl.turtle import arc_point
from dsl.types import Action, ActionKind, ImageProgram, Shape, StrokeType

_STROKE_ORDER = {t: i for i, t in enumerate(StrokeType)}


def normalise_angle(degrees: float) -> float:
    """Map to (-180, 180]."""
    value = math.fmod(degrees, 360.0)
    if value <= -180.0:
        value += 360.0
    elif value > 180.0:
        value -= 360.0
    return 0.0 if abs(value) < 1e-9 else value


@dataclass(frozen=True, slots=True)
class Segment:
    """One action in travel form: `turn` is the change of travel direction before it."""

    kind: ActionKind
    stroke: StrokeType
    length: float
    radius: float
    curvature: float
    turn: float

    def reversed(self, turn: float) -> "Segment":
        return Segment(self.kind, self.stroke, self.length, self.radius, -self.curvature, turn)

    def with_turn(self, turn: float) -> "Segment":
        return Segment(self.kind, self.stroke, self.length, self.radius, self.curvature, turn)

    def with_stroke(self, stroke) -> "Segment":
        return Segment(self.kind, stroke, self.length, self.radius, self.curvature, self.turn)


def _backwards(action: Action) -> float:
    """180 if the turtle travels against its heading while drawing `action` (negative arc), else 0."""
    return 180.0 if action.kind is ActionKind.ARC and action.angle < 0 else 0.0


def to_travel_form(shape: Shape) -> list[Segment]:
    segments, previous = [], 0.0
    for i, action in enumerate(shape.actions):
        offset = _backwards(action)
        turn = 0.0 if i == 0 else normalise_angle(action.turn + offset - previous)
        segments.append(Segment(action.kind, action.stroke, action.length, action.radius, action.angle, turn))
        previous = offset
    return segments


def from_travel_form(segments: list[Segment]) -> Shape:
    actions, previous = [], 0.0
    for i, seg in enumerate(segments):
        offset = 180.0 if seg.kind is ActionKind.ARC and seg.curvature < 0 else 0.0
        turn = 0.0 if i == 0 else normalise_angle(seg.turn - offset + previous)
        if seg.kind is ActionKind.LINE:
            actions.append(Action(ActionKind.LINE, seg.stroke, turn, length=seg.length))
        else:
            actions.append(Action(ActionKind.ARC, seg.stroke, turn, radius=seg.radius, angle=seg.curvature))
        previous = offset
    return Shape(tuple(actions))


def _walk(shape: Shape) -> tuple[list[np.ndarray], float]:
    """A shape drawn from the origin, heading 0, scale 1: where each action starts and the last ends, and the end
    heading."""
    position, heading, joints = np.zeros(2), 0.0, [np.zeros(2)]
    for action in shape.actions:
        heading += action.turn
        if action.kind is ActionKind.LINE:
            h = math.radians(heading)
            position = position + action.length * np.array([math.cos(h), math.sin(h)])
        else:
            position, heading = arc_point(position, heading, action.radius, action.angle)
        joints.append(position)
    return joints, heading


def _trace(shape: Shape) -> tuple[np.ndarray, float]:
    """End point and end heading of a shape drawn from the origin, heading 0, scale 1."""
    joints, heading = _walk(shape)
    return joints[-1], heading


def is_closed(shape: Shape, tolerance: float = CLOSED_TOLERANCE) -> bool:
    end, _ = _trace(shape)
    return float(np.hypot(*end)) <= tolerance


def _closing_turn(shape: Shape, segments: list[Segment]) -> float:
    """Change of travel direction from the end of the last action to the start of the first."""
    _, end_heading = _trace(shape)
    first, last = shape.actions[0], shape.actions[-1]
    start_travel = first.turn + _backwards(first)
    end_travel = end_heading + _backwards(last)
    return normalise_angle(start_travel - end_travel)


def closing_turn(shape: Shape) -> float | None:
    """The change of travel direction from the end of a closed shape back into its first action (the
    turn before that action once the shape is seen as a loop); None for an open shape."""
    return _closing_turn(shape, []) if is_closed(shape) else None


def travel_variants(shape: Shape) -> list[list[Segment]]:
    """Every travel form that draws the same picture: both directions, every start if closed."""
    return [list(variant) for variant in _travel_variants(shape)]


@functools.lru_cache(maxsize=8192)
def _travel_variants(shape: Shape) -> tuple[tuple[Segment, ...], ...]:
    """`travel_variants`, memoised (the search keys and compares the same shapes many times)."""
    forward = to_travel_form(shape)
    if is_closed(shape):
        closing = _closing_turn(shape, forward)
        cycle = [forward[0].with_turn(closing)] + forward[1:]
        starts = range(len(cycle))
        rotations = [cycle[j:] + cycle[:j] for j in starts]
    else:
        rotations = [forward]
    variants = []
    for rotation in rotations:
        variants.append(tuple([rotation[0].with_turn(0.0)] + rotation[1:]))
        variants.append(tuple(_backwards_travel(rotation)))
    return tuple(variants)


def _backwards_travel(segments: list[Segment]) -> list[Segment]:
    """The travel form that walks `segments` from the end back to the start (its first turn 0)."""
    back = [segments[-1].reversed(0.0)]
    back += [segments[i].reversed(-segments[i + 1].turn) for i in range(len(segments) - 2, -1, -1)]
    return back


def loop_reversals(shape: Shape, tolerance: float = CLOSED_TOLERANCE) -> list[list[Segment]]:
    """Travel forms that draw the same picture as `shape` with one of its loops walked the other way: a run of
    actions that ends where it began (a triangle before a tail, a circle inside a path) may be traced either way
    round at that point of the path, and the rest of the path is drawn as before. `travel_variants` gives only the
    whole shape's other starts and direction; a loop inside an open shape is a writing neither gives. The runs are
    those of `shape` as written; the whole of a closed shape is left to `travel_variants`."""
    segments = to_travel_form(shape)
    joints, _ = _walk(shape)
    n = len(segments)
    start_dir, direction = [], 0.0  # travel direction at the start of each segment, absolute
    for k, seg in enumerate(segments):
        direction = direction + (seg.turn if k else 0.0)
        start_dir.append(direction)
        direction += seg.curvature if seg.kind is ActionKind.ARC else 0.0
    end_dir = [d + (s.curvature if s.kind is ActionKind.ARC else 0.0) for d, s in zip(start_dir, segments)]
    found = []
    for i in range(n):
        for j in range(i, n):
            if (i, j) == (0, n - 1) or float(np.hypot(*(joints[j + 1] - joints[i]))) > tolerance:
                continue
            order = list(range(i)) + list(range(j, i - 1, -1)) + list(range(j + 1, n))
            drawn = [(segments[k], start_dir[k]) if not i <= k <= j else (segments[k].reversed(0.0), end_dir[k] + 180.0)
                     for k in order]
            variant, previous_end = [], 0.0
            for m, (seg, begins) in enumerate(drawn):
                variant.append(seg.with_turn(0.0 if m == 0 else normalise_angle(begins - previous_end)))
                previous_end = begins + (seg.curvature if seg.kind is ActionKind.ARC else 0.0)
            found.append(variant)
    return found


def reversed_shape(shape: Shape) -> Shape:
    """The same drawing traced the other way: from the end of `shape` back to its start. The centreline is
    the same; stamps and zigzags, which show the direction of travel, and the order in which overlapping
    actions are drawn are not (`search.pose.reversed_placement` puts it where `shape` was drawn)."""
    return from_travel_form(_backwards_travel(to_travel_form(shape)))


def _segment_key(seg: Segment, ignore_strokes: bool) -> tuple:
    stroke = 0 if ignore_strokes else _STROKE_ORDER[seg.stroke]
    return (
        0 if seg.kind is ActionKind.LINE else 1,
        round(seg.length / LENGTH_QUANTUM),
        round(seg.radius / LENGTH_QUANTUM),
        round(seg.curvature / ANGLE_QUANTUM),
        round(normalise_angle(seg.turn) / ANGLE_QUANTUM) % 360,
        stroke,
    )


def _variant_key(segments: list[Segment], ignore_strokes: bool) -> tuple:
    return tuple(_segment_key(s, ignore_strokes) for s in segments)


def travel_key(segments: list[Segment]) -> tuple:
    """A key of one travel form as written (its moves, turns and strokes in order, from its start): two travel
    variants of a shape with the same key draw the same picture from their starts (a circle of quarter arcs stamped
    alike started a quarter on), where `shape_key` is the same for every variant."""
    return _variant_key(segments, ignore_strokes=False)


def canonical_shape(shape: Shape, ignore_strokes: bool = False) -> Shape:
    """The representative of `shape`'s class (start point, direction, first turn); strokes NORMAL if
    `ignore_strokes`."""
    if ignore_strokes:
        shape = shape.with_strokes(StrokeType.NORMAL)
    best = min(_travel_variants(shape), key=lambda v: _variant_key(v, ignore_strokes))
    return from_travel_form(best)


@functools.lru_cache(maxsize=8192)
def shape_key(shape: Shape, ignore_strokes: bool = False) -> tuple:
    """A hashable key, equal for shapes equal up to the quanta (0.01 length, 1 degree)."""
    return min(_variant_key(v, ignore_strokes) for v in _travel_variants(shape))


def canonical_image(program: ImageProgram, ignore_strokes: bool = False) -> ImageProgram:
    shapes = [canonical_shape(s, ignore_strokes) for s in program.shapes]
    shapes.sort(key=lambda s: _variant_key(to_travel_form(s), ignore_strokes))
    return ImageProgram(tuple(shapes))


def image_key(program: ImageProgram, ignore_strokes: bool = False) -> tuple:
    return tuple(sorted(shape_key(s, ignore_strokes) for s in program.shapes))


def _segments_close(a: Segment, b: Segment, length_tol: float, angle_tol: float, ignore_strokes: bool) -> bool:
    return (
        a.kind is b.kind
        and (ignore_strokes or a.stroke is b.stroke)
        and abs(a.length - b.length) <= length_tol
        and abs(a.radius - b.radius) <= length_tol
        and abs(a.curvature - b.curvature) <= angle_tol
        and abs(normalise_angle(a.turn - b.turn)) <= angle_tol
    )


def same_shape(
    a: Shape, b: Shape, length_tol: float = 0.02, angle_tol: float = 2.0, ignore_strokes: bool = False
) -> bool:
    """True if some variant of `b` matches `a` action by action within the tolerances."""
    if len(a) != len(b):
        return False
    target = to_travel_form(a)
    target = [target[0].with_turn(0.0)] + target[1:]
    return any(
        all(_segments_close(x, y, length_tol, angle_tol, ignore_strokes) for x, y in zip(target, variant))
        for variant in _travel_variants(b)
    )


def same_image(
    a: ImageProgram,
    b: ImageProgram,
    length_tol: float = 0.02,
    angle_tol: float = 2.0,
    ignore_strokes: bool = False,
) -> bool:
    """True if the two programs draw the same picture up to pose, start points, directions, shape order."""
    if len(a.shapes) != len(b.shapes):
        return False
    return any(
        all(same_shape(x, y, length_tol, angle_tol, ignore_strokes) for x, y in zip(a.shapes, order))
        for order in itertools.permutations(b.shapes)
    )
