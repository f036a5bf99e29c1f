"""Types of the LOGO DSL: stroke types, actions, one-stroke shapes, image programs and poses.

Values are kept in physical units of the turtle program (spec §1.2): line length and arc radius in the
unit-free [0, 1] range of the action strings (multiplied by the shape's scale when drawn), arc angle in
signed degrees (counter-clockwise positive, [-360, 360]) and the turn before the move in signed degrees
(left positive, [-180, 180]).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class StrokeType(enum.Enum):
    """How the pen draws a move (spec §2.3): two drawn types and five stamp shapes."""

    NORMAL = "normal"
    ZIGZAG = "zigzag"
    CIRCLE = "circle"
    SQUARE = "square"
    TRIANGLE = "triangle"
    ARROW = "arrow"
    CLASSIC = "classic"

    @property
    def is_stamp(self) -> bool:
        return self not in (StrokeType.NORMAL, StrokeType.ZIGZAG)


# The five types the dataset generators emit, in the samplers' order (spec §3.2).
DATASET_STROKE_TYPES: tuple[StrokeType, ...] = (
    StrokeType.NORMAL,
    StrokeType.ZIGZAG,
    StrokeType.CIRCLE,
    StrokeType.SQUARE,
    StrokeType.TRIANGLE,
)


class ActionKind(enum.Enum):
    LINE = "line"
    ARC = "arc"


@dataclass(frozen=True, slots=True)
class Action:
    """One move of the turtle: turn by `turn` degrees (left positive), then draw a line or an arc.

    A line uses `length`; an arc uses `radius` and `angle` (signed degrees, the turtle travels backwards
    around the left-hand centre for a negative angle, spec §2.4). Unused fields are 0.
    """

    kind: ActionKind
    stroke: StrokeType
    turn: float
    length: float = 0.0
    radius: float = 0.0
    angle: float = 0.0

    @staticmethod
    def line(length: float, turn: float = 0.0, stroke: StrokeType = StrokeType.NORMAL) -> "Action":
        return Action(ActionKind.LINE, stroke, float(turn), length=float(length))

    @staticmethod
    def arc(
        radius: float, angle: float, turn: float = 0.0, stroke: StrokeType = StrokeType.NORMAL
    ) -> "Action":
        return Action(ActionKind.ARC, stroke, float(turn), radius=float(radius), angle=float(angle))

    @property
    def is_line(self) -> bool:
        return self.kind is ActionKind.LINE

    def with_stroke(self, stroke: StrokeType) -> "Action":
        return Action(self.kind, stroke, self.turn, self.length, self.radius, self.angle)

    def with_turn(self, turn: float) -> "Action":
        return Action(self.kind, self.stroke, float(turn), self.length, self.radius, self.angle)


@dataclass(frozen=True, slots=True)
class Shape:
    """A one-stroke shape: actions drawn by one turtle without lifting the pen."""

    actions: tuple[Action, ...]

    def __post_init__(self) -> None:
        if not self.actions:
            raise ValueError("a shape needs at least one action")

    def __len__(self) -> int:
        return len(self.actions)

    def __iter__(self):
        return iter(self.actions)

    def with_strokes(self, stroke: StrokeType) -> "Shape":
        return Shape(tuple(a.with_stroke(stroke) for a in self.actions))


@dataclass(frozen=True, slots=True)
class ImageProgram:
    """The program of one image: one or two shapes (the official painter accepts only 1 or 2)."""

    shapes: tuple[Shape, ...]

    def __post_init__(self) -> None:
        if not 1 <= len(self.shapes) <= 2:
            raise ValueError(f"an image has 1 or 2 shapes, got {len(self.shapes)}")

    def __len__(self) -> int:
        return len(self.shapes)

    def __iter__(self):
        return iter(self.shapes)

    @property
    def n_actions(self) -> int:
        return sum(len(s) for s in self.shapes)

    def with_strokes(self, stroke: StrokeType) -> "ImageProgram":
        return ImageProgram(tuple(shape.with_strokes(stroke) for shape in self.shapes))


@dataclass(frozen=True, slots=True)
class Pose:
    """Where and how large a shape is drawn: start point and heading (degrees) in turtle units, scale."""

    x: float = 0.0
    y: float = 0.0
    heading: float = 0.0
    scale: float = 200.0
