"""The turtle executor: programs -> geometry in turtle units, as the official painter draws (spec §2).

Turn before move; arcs in pieces of at most 90 degrees around the left-hand centre; zigzag units and stamp
positions with the magnifier effect (spacing and stamp size proportional to the shape's scale).

Output per shape (`ShapeGeometry`):
  marks        what the pen leaves, in drawing order: PEN polylines (width 8) and STAMP polygons
               (white fill, outline 2.5), each an (N, 2) float array;
  action_paths the centreline of every action as drawn by a normal stroke with smooth arcs (for features);
  end_points   (k+1, 2) turtle position before the first and after every action;
  checkpoints  the points the official validity check looks at (line ends and arc-piece ends).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import numpy as np

from dsl.types import Action, ActionKind, ImageProgram, Pose, Shape, StrokeType

PEN_WIDTH = 8.0
STAMP_OUTLINE_WIDTH = 2.5
VALID_RANGE = 360.0
BASE_SCALE = 180.0
STAMP_UNIT = 20.0
ZIGZAG_UNIT = 17.0
ARC_SAMPLE_DEGREES = 3.0

# Turtle stamp polygons in shape coordinates (+x to the turtle's right, +y along the heading) and their
# base size factors (spec §2.5).
_CIRCLE = tuple((10.0 * math.cos(math.radians(18.0 * k)), 10.0 * math.sin(math.radians(18.0 * k))) for k in range(20))
STAMP_POLYGONS: dict[StrokeType, tuple[tuple[tuple[float, float], ...], float]] = {
    StrokeType.CIRCLE: (_CIRCLE, 0.75),
    StrokeType.SQUARE: (((10.0, -10.0), (10.0, 10.0), (-10.0, 10.0), (-10.0, -10.0)), 0.65),
    StrokeType.TRIANGLE: (((10.0, -5.77), (0.0, 11.55), (-10.0, -5.77)), 0.80),
    StrokeType.ARROW: (((-10.0, 0.0), (10.0, 0.0), (0.0, 10.0)), 1.0),
    StrokeType.CLASSIC: (((0.0, 0.0), (-5.0, -9.0), (0.0, -7.0), (5.0, -9.0)), 1.8),
}


class MarkKind(enum.Enum):
    PEN = "pen"
    STAMP = "stamp"


@dataclass(frozen=True, slots=True)
class Mark:
    kind: MarkKind
    points: np.ndarray  # (N, 2) turtle units; a STAMP polygon is closed implicitly


@dataclass(slots=True)
class ShapeGeometry:
    marks: list[Mark] = field(default_factory=list)
    action_paths: list[np.ndarray] = field(default_factory=list)
    end_points: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    checkpoints: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    headings: np.ndarray = field(default_factory=lambda: np.zeros(0))  # heading after each action

    @property
    def valid(self) -> bool:
        return bool(np.all(np.abs(self.checkpoints) <= VALID_RANGE))


@dataclass(slots=True)
class Drawing:
    shapes: list[ShapeGeometry]

    @property
    def marks(self) -> list[Mark]:
        return [m for s in self.shapes for m in s.marks]

    @property
    def valid(self) -> bool:
        return all(s.valid for s in self.shapes)


def round_half(q: float) -> int:
    """The painter's rounding: floor(q) + 1 if frac(q) >= 0.5 else floor(q), and at least 1."""
    base = math.floor(q)
    n = base + 1 if q - base >= 0.5 else base
    return max(1, int(n))


def _direction(heading: float) -> np.ndarray:
    h = math.radians(heading)
    return np.array([math.cos(h), math.sin(h)])


def stamp_polygon(stroke: StrokeType, at: np.ndarray, heading: float, size: float) -> np.ndarray:
    """The outline of one stamp centred at `at`, oriented by `heading`, scaled by `size`."""
    base, _ = STAMP_POLYGONS[stroke]
    forward = _direction(heading)
    right = np.array([forward[1], -forward[0]])
    pts = np.asarray(base)
    return at + size * (pts[:, :1] * right + pts[:, 1:] * forward)


def arc_point(position: np.ndarray, heading: float, radius: float, extent: float) -> tuple[np.ndarray, float]:
    """Where a turtle at `position` with `heading` ends after an arc of signed `extent` degrees."""
    h = math.radians(heading)
    centre = position + radius * np.array([-math.sin(h), math.cos(h)])
    e = math.radians(extent)
    c, s = math.cos(e), math.sin(e)
    rel = position - centre
    end = centre + np.array([c * rel[0] - s * rel[1], s * rel[0] + c * rel[1]])
    return end, heading + extent


def split_arc(angle: float) -> list[float]:
    """Signed pieces of at most 90 degrees (spec §2.4); an angle of 0 draws nothing."""
    whole, sign = int(abs(angle) // 90.0), (1.0 if angle > 0 else -1.0)
    pieces = [90.0 * sign] * whole
    rest = abs(angle) - 90.0 * whole
    if rest > 1e-9:
        pieces.append(rest * sign)
    return pieces


class _Turtle:
    """A minimal turtle: position and heading, for the zigzag step sequences of spec §2.3-2.4."""

    def __init__(self, position: np.ndarray, heading: float) -> None:
        self.position = position.copy()
        self.heading = heading
        self.trace = [position.copy()]

    def left(self, degrees: float) -> None:
        self.heading += degrees

    def forward(self, distance: float) -> None:
        self.position = self.position + distance * _direction(self.heading)
        self.trace.append(self.position.copy())


class _Painter:
    def __init__(self, pose: Pose, magnifier: bool) -> None:
        self.scale = pose.scale
        factor = pose.scale / BASE_SCALE if magnifier else 1.0
        self.stamp_unit = STAMP_UNIT * factor
        self.zigzag_unit = ZIGZAG_UNIT * factor
        self.stamp_factor = factor
        self.position = np.array([pose.x, pose.y], dtype=float)
        self.heading = pose.heading
        self.geometry = ShapeGeometry()
        self.ends = [self.position.copy()]
        self.checks = [self.position.copy()]
        self.headings: list[float] = []

    def stamp(self, stroke: StrokeType, at: np.ndarray, heading: float) -> None:
        size = STAMP_POLYGONS[stroke][1] * self.stamp_factor
        self.geometry.marks.append(Mark(MarkKind.STAMP, stamp_polygon(stroke, at, heading, size)))

    def pen(self, points: list[np.ndarray] | np.ndarray) -> None:
        self.geometry.marks.append(Mark(MarkKind.PEN, np.asarray(points, dtype=float)))

    def line(self, action: Action) -> None:
        length = action.length * self.scale
        start, direction = self.position, _direction(self.heading)
        end = start + length * direction
        self.geometry.action_paths.append(np.array([start, end]))
        if action.stroke is StrokeType.NORMAL:
            self.pen([start, end])
        elif action.stroke is StrokeType.ZIGZAG:
            n = round_half(length / self.zigzag_unit)
            u = length / n
            left = np.array([-direction[1], direction[0]])
            local = np.array([[0.25, math.sqrt(3) / 4], [0.75, -math.sqrt(3) / 4], [1.0, 0.0]]) * u
            points = [start] + [
                start + (k * u + a) * direction + b * left for k in range(n) for a, b in local
            ]
            points[-1] = end
            self.pen(points)
        else:
            n = round_half(length / self.stamp_unit)
            for k in range(n + 1):
                self.stamp(action.stroke, start + (length * k / n) * direction, self.heading)
            self.stamp(action.stroke, end, self.heading)
        self.position = end
        self.checks.append(end.copy())

    def arc(self, action: Action) -> None:
        radius = action.radius * self.scale
        pieces = split_arc(action.angle)
        centre_path = [self.position.copy()]
        for extent in pieces:
            start, heading = self.position, self.heading
            end, end_heading = arc_point(start, heading, radius, extent)
            samples = max(2, int(math.ceil(abs(extent) / ARC_SAMPLE_DEGREES)) + 1)
            centre_path += [arc_point(start, heading, radius, extent * t)[0] for t in np.linspace(0, 1, samples)[1:]]
            self.arc_piece(action.stroke, start, heading, radius, extent)
            self.position, self.heading = end, end_heading
            self.checks.append(end.copy())
        self.geometry.action_paths.append(np.array(centre_path))

    def arc_piece(self, stroke: StrokeType, start: np.ndarray, heading: float, radius: float, extent: float) -> None:
        if stroke is StrokeType.NORMAL:
            chords = 1 + int(min(11.0 + abs(radius) / 6.0, 59.0) * abs(extent) / 360.0)
            self.pen([arc_point(start, heading, radius, extent * k / chords)[0] for k in range(chords + 1)])
        elif stroke is StrokeType.ZIGZAG:
            self.pen(self._zigzag_arc(start, heading, radius, extent))
        else:
            step = math.degrees(self.stamp_unit / radius) if radius > 0 else abs(extent)
            n = round_half(abs(extent) / step)
            for k in range(n + 1):
                point, h = arc_point(start, heading, radius, extent * k / n)
                self.stamp(stroke, point, h)
            point, h = arc_point(start, heading, radius, extent)
            self.stamp(stroke, point, h)

    def _zigzag_arc(self, start: np.ndarray, heading: float, radius: float, extent: float) -> list[np.ndarray]:
        step = math.degrees(self.zigzag_unit / radius) if radius > 0 else abs(extent)
        n = round_half(abs(extent) / step)
        phi = abs(extent) / n
        alpha = phi / 2.0
        chord = 2.0 * radius * math.sin(math.radians(alpha / 2.0))
        turtle = _Turtle(start, heading)
        sign = 1.0 if extent >= 0 else -1.0
        # (turn-left, move) steps of one unit; for e < 0 the turtle walks backwards (spec §2.4).
        if sign > 0:
            steps = [(-(60 - alpha / 2), chord), (120, chord), (alpha, chord), (-120, chord), (60 + alpha / 2, 0.0)]
        else:
            steps = [(-(60 + alpha / 2), -chord), (120, -chord), (-alpha, -chord), (-120, -chord), (60 - alpha / 2, 0.0)]
        for _ in range(n):
            for turn, move in steps:
                turtle.left(turn)
                if move:
                    turtle.forward(move)
        return turtle.trace

    def run(self, shape: Shape) -> ShapeGeometry:
        for action in shape.actions:
            self.heading += action.turn
            if action.kind is ActionKind.LINE:
                self.line(action)
            else:
                self.arc(action)
            self.ends.append(self.position.copy())
            self.headings.append(self.heading)
        self.geometry.end_points = np.array(self.ends)
        self.geometry.checkpoints = np.array(self.checks)
        self.geometry.headings = np.array(self.headings)
        return self.geometry


def execute_shape(shape: Shape, pose: Pose = Pose(), magnifier: bool = True) -> ShapeGeometry:
    """Draw one shape from `pose` (start point, heading, scale) as the official painter does."""
    return _Painter(pose, magnifier).run(shape)


def execute_image(program: ImageProgram, poses: list[Pose] | tuple[Pose, ...], magnifier: bool = True) -> Drawing:
    """Draw every shape of an image program, one pose per shape."""
    if len(poses) != len(program.shapes):
        raise ValueError(f"{len(program.shapes)} shapes but {len(poses)} poses")
    return Drawing([execute_shape(s, p, magnifier) for s, p in zip(program.shapes, poses)])
