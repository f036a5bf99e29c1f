"""Official action strings (spec §1): parsing and printing with an exact round trip.

    line_<type>_<len>-<turn>            e.g. line_zigzag_1.000-0.833
    arc_<type>_<radius>_<angle>-<turn>  e.g. arc_square_0.500_0.625-0.500

Every number is normalised to [0, 1] and printed with three decimals. A number is read in ASCII digits
only, at most MAX_ACTION_NUMBER_TEXT characters (Python's `float()` would also take other scripts' digits
and any length), and an action string is at most MAX_ACTION_TEXT characters.
"""

from __future__ import annotations

import re

from dsl.limits import MAX_ACTION_NUMBER_TEXT, MAX_ACTION_TEXT, MAX_ACTIONS_PER_SHAPE, MAX_SHAPES_PER_IMAGE
from dsl.types import Action, ActionKind, ImageProgram, Shape, StrokeType

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"  # ASCII digits: `\d` would take every script's
_LINE = re.compile(rf"line_([A-Za-z]+)_{_NUMBER}-{_NUMBER}")
_ARC = re.compile(rf"arc_([A-Za-z]+)_{_NUMBER}_{_NUMBER}-{_NUMBER}")


class ActionStringError(ValueError):
    """A malformed action string, or one with an unknown stroke type or an out-of-range value."""


def normalise_turn(turn: float) -> float:
    return (turn + 180.0) / 360.0


def denormalise_turn(value: float) -> float:
    return 360.0 * value - 180.0


def normalise_arc_angle(angle: float) -> float:
    return (angle + 360.0) / 720.0


def denormalise_arc_angle(value: float) -> float:
    return 720.0 * value - 360.0


def _stroke(name: str, text: str) -> StrokeType:
    try:
        return StrokeType(name)
    except ValueError:
        known = ", ".join(t.value for t in StrokeType)
        raise ActionStringError(f"unknown stroke type {_short(name)} in {_short(text)} (known: {known})") from None


def _unit(value: str, what: str, text: str) -> float:
    if len(value) > MAX_ACTION_NUMBER_TEXT:
        raise ActionStringError(f"{what} of {len(value)} characters in {_short(text)}: over the limit of "
                                f"{MAX_ACTION_NUMBER_TEXT} (the official format writes 0.500)")
    number = float(value)
    if not 0.0 <= number <= 1.0:
        raise ActionStringError(f"{what} {value[:20]} out of [0, 1] in {_short(text)}")
    return number


def parse_action(text: str) -> Action:
    """Parse one official action string into an Action (physical values, see dsl.types)."""
    if not isinstance(text, str):
        raise ActionStringError(f"an action must be a string, got {type(text).__name__}: {_short(text)}")
    if len(text) > MAX_ACTION_TEXT:
        raise ActionStringError(f"an action string of {len(text)} characters, over the limit of {MAX_ACTION_TEXT}: "
                                f"{_short(text)}")
    if not text.isascii():
        where = next(k for k, char in enumerate(text) if not char.isascii())
        raise ActionStringError(f"non-ASCII character {text[where]!r} at {where} in {_short(text)}: an action string "
                                "is ASCII (numbers in the digits 0-9)")
    if match := _LINE.fullmatch(text):
        name, length, turn = match.groups()
        return Action(
            ActionKind.LINE,
            _stroke(name, text),
            denormalise_turn(_unit(turn, "turn", text)),
            length=_unit(length, "length", text),
        )
    if match := _ARC.fullmatch(text):
        name, radius, angle, turn = match.groups()
        return Action(
            ActionKind.ARC,
            _stroke(name, text),
            denormalise_turn(_unit(turn, "turn", text)),
            radius=_unit(radius, "radius", text),
            angle=denormalise_arc_angle(_unit(angle, "arc angle", text)),
        )
    raise ActionStringError(
        f"malformed action string {_short(text)}: expected line_<type>_<len>-<turn> "
        "or arc_<type>_<radius>_<angle>-<turn>"
    )


def _fmt(value: float) -> str:
    # Exactly as the official exporter ("%.3f"): a 45 degree arc, 0.5625, prints as 0.562.
    return f"{value:.3f}"


def format_action(action: Action) -> str:
    """Print an Action as an official action string (three decimals per number)."""
    turn = _fmt(normalise_turn(action.turn))
    if action.kind is ActionKind.LINE:
        return f"line_{action.stroke.value}_{_fmt(action.length)}-{turn}"
    angle = _fmt(normalise_arc_angle(action.angle))
    return f"arc_{action.stroke.value}_{_fmt(action.radius)}_{angle}-{turn}"


def _short(value: object, limit: int = 80) -> str:
    """`repr(value)` cut to `limit` characters, so that an error about a huge input stays one short line."""
    try:
        text = repr(value) if not isinstance(value, (list, tuple)) or len(value) < 1000 else f"<{type(value).__name__} of {len(value)}>"
    except RecursionError:
        text = f"<a {type(value).__name__} nested too deep>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_shape(strings: list[str]) -> Shape:
    if not isinstance(strings, (list, tuple)) or not strings:
        raise ActionStringError(f"a shape must be a non-empty list of action strings, got {_short(strings)}")
    if len(strings) > MAX_ACTIONS_PER_SHAPE:
        raise ActionStringError(f"a shape of {len(strings)} actions is over the limit of {MAX_ACTIONS_PER_SHAPE}")
    return Shape(tuple(parse_action(s) for s in strings))


def parse_image(shapes: list[list[str]]) -> ImageProgram:
    """Parse the JSON program of one image (a list of shapes, each a list of action strings)."""
    if not isinstance(shapes, (list, tuple)) or not 1 <= len(shapes) <= MAX_SHAPES_PER_IMAGE:
        raise ActionStringError(f"an image program must be a list of 1 to {MAX_SHAPES_PER_IMAGE} shapes, "
                                f"got {_short(shapes)}")
    return ImageProgram(tuple(parse_shape(s) for s in shapes))


def format_shape(shape: Shape) -> list[str]:
    return [format_action(a) for a in shape.actions]


def format_image(program: ImageProgram) -> list[list[str]]:
    return [format_shape(s) for s in program.shapes]
