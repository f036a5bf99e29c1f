"""Plain-English words for explanations: numbers, attributes, library shapes and LOGO actions."""

from __future__ import annotations

from dsl.canonical import Segment
from dsl.library import load_library
from dsl.types import ActionKind, StrokeType

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve")
EXIST_NOUNS = {"regular": "regular polygon or circle"}
STROKE_WORDS = {
    StrokeType.NORMAL: "plain",
    StrokeType.ZIGZAG: "zigzag",
    StrokeType.CIRCLE: "circle-stamped",
    StrokeType.SQUARE: "square-stamped",
    StrokeType.TRIANGLE: "triangle-stamped",
    StrokeType.ARROW: "arrow-stamped",
    StrokeType.CLASSIC: "classic-stamped",
}


def words(name: str) -> str:
    return name.replace("_", " ")


def article(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def number(value: int) -> str:
    return NUMBER_WORDS[value] if 0 <= value < len(NUMBER_WORDS) else str(value)


def count_noun(name: str, value: int) -> str:
    noun = words(name)
    return noun[:-1] if value == 1 and noun.endswith("s") else noun


def attribute_phrase(name: str, negated: bool) -> str:
    """'is convex', 'does not have line crossing', 'contains a triangle' ..."""
    if name.startswith("has_"):
        rest = words(name[4:])
        return f"does not have {rest}" if negated else f"has {rest}"
    if name.startswith("exist_"):
        rest = article(EXIST_NOUNS.get(name[6:], words(name[6:])))
        return f"does not contain {rest}" if negated else f"contains {rest}"
    return f"is not {words(name)}" if negated else f"is {words(name)}"


def shape_words(name: str) -> str:
    """A library shape's display name ('acute equicrural triangle'), or its name in words if unknown."""
    entry = load_library().get(name)
    return words(entry.display_name if entry is not None else name)


def super_class(name: str) -> str | None:
    entry = load_library().get(name)
    return entry.super_class if entry is not None else None


def _degrees(value: float) -> str:
    return f"{abs(value):.0f}°"  # whole degrees: the action strings round turns (0.833 of a half turn: 119.88°)


def turn_words(turn: float | None) -> str:
    """The turn before an action, as a phrase that follows the action: 'after a 90° left turn'."""
    if turn is None:
        return "at the start"
    if abs(turn) < 0.5:
        return "with no turn before it"
    if abs(abs(turn) - 180.0) < 0.5:
        return "after turning back"
    return f"after a {_degrees(turn)} {'left' if turn > 0 else 'right'} turn"


def action_words(segment: Segment, turn: float | None, fields: tuple[str, ...] = ()) -> str:
    """One action in words: its stroke and kind always, its size when `fields` name it (or the kind
    differs), its turn when `fields` name the turn: 'a zigzag line', 'a plain arc of radius 0.5 sweeping
    90° left', 'a plain line of length 1 after a 30° right turn'."""
    kind = "line" if segment.kind is ActionKind.LINE else "arc"
    text = f"a {STROKE_WORDS.get(segment.stroke, segment.stroke.value)} {kind}"
    if segment.kind is ActionKind.LINE and {"kind", "length"} & set(fields):
        text += f" of length {segment.length:g}"
    if segment.kind is ActionKind.ARC and {"kind", "radius", "sweep"} & set(fields):
        side = "left" if segment.curvature > 0 else "right"
        text += f" of radius {segment.radius:g} sweeping {_degrees(segment.curvature)} {side}"
    if "turn" in fields:
        text += f" {turn_words(turn)}"
    return text
