"""Where the turtle is, in the pixels of the 512 px image: travel-form walking and target tracings.

A turtle state is a position `(x, y)` in the pixels of the 512 px image, a travel direction `theta`
(radians, pixel frame: +x right, +y down, so a left turn of tau degrees subtracts radians(tau)) and a unit
`u` (pixels per program unit: the shape's scale times the official 783 -> 512 framing). Walking a
travel-form segment (`dsl.canonical.Segment`) from a state gives its centreline and the state after it.

Plain geometry of programs, shared by the decoder (`perception`: training on true states, decoding on
decoded ones) and the search (`search.trace`, `search.paths`), so neither imports the other for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dsl.canonical import Segment, to_travel_form, travel_variants
from dsl.raster import official_view
from dsl.settings import ARC_POINTS
from dsl.types import ActionKind, Pose, Shape

PIXELS_PER_UNIT = official_view(512).pixels_per_unit  # 512 / 783: one turtle unit in pixels at 512 px


@dataclass(frozen=True, slots=True)
class State:
    """The turtle in pixels of the 512 px image: position, travel direction (radians), pixels per unit."""

    x: float
    y: float
    theta: float
    u: float

    def as_tuple(self) -> tuple[float, float, float, float]:
        return (self.x, self.y, self.theta, self.u)


def pose_state(pose: Pose, first_travel_turn: float = 0.0) -> State:
    """The state a shape drawn at `pose` starts in (the official framing), before its first action."""
    view = official_view(512)
    (x, y), = view.to_pixels(np.array([[pose.x, pose.y]]))
    return State(float(x), float(y), -math.radians(pose.heading + first_travel_turn), pose.scale * PIXELS_PER_UNIT)


def state_pose(state: State, shape: Shape) -> Pose:
    """The pose that starts `shape` in `state` (`pose_state`'s inverse: `variant_starts(shape, state_pose(s, shape))`
    starts its first variant in `s`)."""
    view = official_view(512)
    first = shape.actions[0]
    heading = -math.degrees(state.theta) - first.turn - _back(first)
    return Pose((state.x - view.origin_x) / view.pixels_per_unit, (view.origin_y - state.y) / view.pixels_per_unit,
                heading, state.u / PIXELS_PER_UNIT)


def _back(first) -> float:
    """Degrees between a shape's first action's heading and its travel direction: an arc curving right (angle < 0)
    is drawn turned round (`dsl.canonical.to_travel_form`)."""
    return 180.0 if first.kind is ActionKind.ARC and first.angle < 0 else 0.0


def walk(state: State, kind: ActionKind, turn: float, length: float, radius: float, curvature: float) -> tuple[np.ndarray, State]:
    """Draw one travel-form segment from `state`: its centreline (N, 2) in pixels and the state after it."""
    theta = state.theta - math.radians(turn)
    p = np.array([state.x, state.y])
    d = np.array([math.cos(theta), math.sin(theta)])
    if kind is ActionKind.LINE:
        end = p + state.u * length * d
        return np.stack([p, end]), State(float(end[0]), float(end[1]), theta, state.u)
    c = math.radians(curvature)
    left = np.array([math.sin(theta), -math.cos(theta)])
    centre = p + math.copysign(1.0, c or 1.0) * state.u * radius * left
    angles = -c * np.linspace(0.0, 1.0, ARC_POINTS)
    rel = p - centre
    cos, sin = np.cos(angles), np.sin(angles)
    path = centre + np.stack([rel[0] * cos - rel[1] * sin, rel[0] * sin + rel[1] * cos], 1)
    return path, State(float(path[-1, 0]), float(path[-1, 1]), theta - c, state.u)


def segment_middle(state: State, seg: Segment, path: np.ndarray | None = None) -> tuple[float, float, float, float]:
    """(x, y, tangent direction, length in units) at the middle of a segment drawn from `state` (`path`: its
    centreline, `walk`'s, when already drawn)."""
    if path is None:
        path, _ = walk(state, seg.kind, seg.turn, seg.length, seg.radius, seg.curvature)
    theta = state.theta - math.radians(seg.turn)
    if seg.kind is ActionKind.LINE:
        mid = path.mean(0)
        return float(mid[0]), float(mid[1]), theta, seg.length
    mid = path[ARC_POINTS // 2]
    return float(mid[0]), float(mid[1]), theta - math.radians(seg.curvature) / 2, abs(math.radians(seg.curvature)) * seg.radius


def walk_shape(start: State, segments: list[Segment]) -> tuple[list[State], list[np.ndarray]]:
    """States before every segment (and after the last) and the centreline of every segment."""
    states, paths = [start], []
    for seg in segments:
        path, nxt = walk(states[-1], seg.kind, seg.turn, seg.length, seg.radius, seg.curvature)
        states.append(nxt)
        paths.append(path)
    return states, paths


# --------------------------------------------------------------------------------- target tracings


def variant_starts(shape: Shape, pose: Pose) -> list[tuple[list[Segment], State]]:
    """Every travel variant of a shape (`dsl.canonical.travel_variants`, same order) with the state it
    starts from when the shape is drawn at `pose`: rotation j forwards starts where action j starts,
    heading along it; backwards it starts where the rotation's last action ends, heading back."""
    forward = to_travel_form(shape)
    first = shape.actions[0]
    start = pose_state(pose, first.turn + _back(first))
    states, _ = walk_shape(start, forward)
    n, variants = len(forward), travel_variants(shape)
    closed = len(variants) == 2 * n
    out = []
    for v, variant in enumerate(variants):
        j = v // 2 if closed else 0
        if v % 2 == 0:
            s = states[j]
            theta = s.theta - (math.radians(forward[j].turn) if j else 0.0)
            out.append((variant, State(s.x, s.y, theta, s.u)))
        else:
            last = (j - 1) % n if closed else n - 1
            s = states[last + 1]
            out.append((variant, State(s.x, s.y, s.theta + math.pi, s.u)))
    return out


def target_tracing(shapes: list[Shape], poses: list[Pose]) -> list[tuple[list[Segment], State]]:
    """The tracing the decoder is taught: per shape, the variant starting at the top-most start point
    (rows within 2 px count as level; then left-most), and of the two directions from there the one
    heading further right (then further down); shapes in the order of their start points (same rule).
    One deterministic choice from the image geometry: the picture decides where the turtle starts."""
    return traced_with_actions(shapes, poses)[0]


def traced_actions(shapes: list[Shape], poses: list[Pose]) -> list[tuple[int, int]]:
    """Which action of `shapes` each action of their `target_tracing` is, in the tracing's order:
    (shape index, action index) per traced action."""
    return traced_with_actions(shapes, poses)[1]


def traced_with_actions(shapes: list[Shape], poses: list[Pose]) -> tuple[list, list[tuple[int, int]]]:
    """(`target_tracing`, `traced_actions`) from one choice of each shape's variant (a caller wanting both, as
    `perception.decode.read_strokes` does for every image it reads, chooses once)."""
    chosen = _traced(shapes, poses)
    return ([(variant, start) for _, _, variant, start in chosen],
            [(s, variant_action(shapes[s], v, i)) for s, v, variant, _ in chosen for i in range(len(variant))])


def variant_action(shape: Shape, v: int, i: int) -> int:
    """Which action of `shape` the i-th segment of its travel variant v (`dsl.canonical.travel_variants`) draws:
    variant 2j walks a closed shape forwards from action j, variant 2j + 1 back from where action j - 1 ends (an
    open shape: j = 0)."""
    n = len(shape.actions)
    j = v // 2 if len(travel_variants(shape)) == 2 * n else 0
    return (j + i) % n if v % 2 == 0 else (j - 1 - i) % n


def _traced(shapes: list[Shape], poses: list[Pose]) -> list[tuple[int, int, list[Segment], State]]:
    """`target_tracing`'s choice: (shape index, variant index, variant, start state) per shape, in tracing order."""
    chosen = []
    for s, (shape, pose) in enumerate(zip(shapes, poses)):
        v, (variant, start) = min(enumerate(variant_starts(shape, pose)), key=lambda o: _start_key(o[1][1]))
        chosen.append((s, v, variant, start))
    return sorted(chosen, key=lambda o: _start_key(o[3]))


def _start_key(s: State) -> tuple:
    return (round(s.y / 2.0), round(s.x / 2.0), -round(math.cos(s.theta), 3), -round(math.sin(s.theta), 3))
