"""Rules in plain English: "An image is in A if it is convex and has four straight lines."

Each literal becomes a verb phrase about one image (`literal_phrase`), the rule a sentence joining them
(`rule_english`). The words come from the things themselves:
  * shapes (categories) by the shape table's own names (`dsl.library`, column "shape name"), with the
    underscores read as spaces, the table's abbreviations and typos spelt out (`SPELLED_OUT`), a variant
    number dropped (`open s3` -> "open s": the identifier stays in the ASP and the JSON) and an angle
    said before its noun (`sector30` -> "30-degree sector");
  * attributes by a phrase each, with its plain negation (`ATTRIBUTE_PHRASES`);
  * counts by their noun, the number once: "has no straight line", "has three to five straight lines"
    (a range of two count literals is one phrase), "does not have exactly two parts"; at least one is
    "has a curve", as the attribute it restates reads, so the two rules are said once (`solver.explain`).
The same module gives the words of the per-image explanations (`solver.why_rules`, `solver.why_sequence`):
library shapes by the table's display name (`display_name`), attributes (`attribute_phrase`), counts
(`count_noun`) and LOGO actions (`action_words`).
"""

from __future__ import annotations

import functools
import re

from dsl.canonical import Segment
from dsl.library import load_library
from dsl.types import ActionKind, StrokeType
from solver.rules import Comparison, Family, Literal, Rule
from solver.settings import TOLERANCES

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve")

# attribute -> (phrase when it holds, phrase when it does not), verb phrases about one image
ATTRIBUTE_PHRASES: dict[str, tuple[str, str]] = {
    "convex": ("is convex", "is not convex"),
    "has_curve": ("has a curve", "has no curve"),
    "has_straight_line": ("has a straight line", "has no straight line"),
    "symmetric": ("is mirror-symmetric", "is not mirror-symmetric"),
    "self_transposed": ("looks the same after a half turn", "does not look the same after a half turn"),
    "symmetric_transposed": ("is symmetric both in a mirror and under a half turn",
                             "is not symmetric both in a mirror and under a half turn"),
    "thin_shape": ("is thin", "is not thin"),
    "closed_shape": ("is a closed figure", "is not a closed figure"),
    "has_acute_angle": ("has an acute angle", "has no acute angle"),
    "has_obtuse_angle": ("has an obtuse angle", "has no obtuse angle"),
    "has_angle": ("has an angle", "has no angle"),
    "has_line_crossing": ("has lines that cross", "has no lines that cross"),
    "has_two_parts": ("has two parts", "does not have two parts"),
    "balanced_two": ("has two parts of about the same size", "does not have two parts of about the same size"),
    "unbalanced_two": ("has two parts of clearly different sizes",
                       "does not have two parts of clearly different sizes"),
    "necked": ("has a neck", "has no neck"),
    "exist_regular": ("contains a regular polygon or a circle", "contains no regular polygon or circle"),
    "exist_triangle": ("contains a triangle", "contains no triangle"),
    "exist_quadrangle": ("contains a quadrangle", "contains no quadrangle"),
    "exist_sector": ("contains a circular sector", "contains no circular sector"),
}
COUNT_NOUNS = {"straight_lines": ("straight line", "straight lines"), "arcs": ("curve", "curves"),
               "parts": ("part", "parts")}
# The shape table's abbreviations and typos, spelt out.
SPELLED_OUT = {"symm": "symmetric", "asymm": "asymmetric", "symmmetric": "symmetric",
               "asymmmetric": "asymmetric", "linersection": "intersection", "rec": "rectangle",
               "bala": "balanced", "unbala": "unbalanced", "equil": "equilateral", "trans": "transposed",
               "quard": "quadrangle", "quagrangles": "quadrangles", "quad": "quadrangle",
               "1/4-circle": "quarter circle", "3/4-circle": "three-quarter circle", "s": "S-curve"}
SMALLEST_ANGLE = 30  # a trailing number from this up is an angle in degrees (sector30); below, a variant
EXIST_NOUNS = {"regular": "regular polygon or circle"}  # exist_<x> attribute -> the noun it says exists
STROKE_WORDS = {
    StrokeType.NORMAL: "plain",
    StrokeType.ZIGZAG: "zigzag",
    StrokeType.CIRCLE: "circle-stamped",
    StrokeType.SQUARE: "square-stamped",
    StrokeType.TRIANGLE: "triangle-stamped",
    StrokeType.ARROW: "arrow-stamped",
    StrokeType.CLASSIC: "classic-stamped",
}


def number_word(value: int) -> str:
    return NUMBER_WORDS[value] if 0 <= value < len(NUMBER_WORDS) else str(value)


def article(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou8' else 'a'} {noun}"


def words(name: str) -> str:
    return name.replace("_", " ")


def _word(token: str) -> str:
    """One word of a table name: spelt out, its trailing variant number dropped, an angle put first."""
    stem, number = re.fullmatch(r"(.*?)(\d*)", token).groups()
    stem = SPELLED_OUT.get(stem, stem)
    if number and int(number) >= SMALLEST_ANGLE and stem:
        return f"{number}-degree {stem}"
    return "" if stem == "new" and number else stem


@functools.cache
def shape_words(name: str) -> str:
    """The words for a library shape (a category), from the table's display name; the identifier itself
    when the library does not know it."""
    entry = load_library().get(name)
    display = entry.display_name if entry else name
    words = [_word(token) for token in display.replace("_", " ").split()]
    return " ".join(w for w in words if w) or name.replace("_", " ")


def count_phrase(name: str, comparison: Comparison, value: int, negated: bool = False) -> str:
    singular, plural = COUNT_NOUNS.get(name, (name.replace("_", " "), name.replace("_", " ")))
    noun = singular if value == 1 else plural
    if negated:
        return f"has {article(singular)}" if value == 0 else f"does not have exactly {number_word(value)} {noun}"
    if comparison is Comparison.EQ:
        return f"has no {singular}" if value == 0 else f"has {number_word(value)} {noun}"
    if comparison is Comparison.GE:
        return f"has {article(singular)}" if value == 1 else f"has {number_word(value)} or more {plural}"
    return f"has no {singular}" if value == 0 else f"has at most {number_word(value)} {noun}"


def _sequence_phrase(literal: Literal) -> str:
    if literal.family is Family.SEQUENCE:
        verb = "has no shape drawn" if literal.negated else "has a shape drawn"
        return f"{verb} by the stroke sequence [{literal.name}]"
    if literal.family is Family.IMAGE_SEQUENCE:
        verb = "is not drawn" if literal.negated else "is drawn"
        return f"{verb} by exactly the stroke sequences [{literal.name}]"
    length_tol, angle_tol, ignore_strokes = TOLERANCES[literal.tolerance]
    within = f"lengths within {length_tol:g}, angles within {angle_tol:g} degrees"
    within += ", any stroke types" if ignore_strokes else ""
    if literal.family.is_image:
        verb = "is not drawn" if literal.negated else "is drawn"
        return f"{verb} by the stroke sequences [{literal.name}] ({within})"
    verb = "has no shape drawn" if literal.negated else "has a shape drawn"
    return f"{verb} by the stroke sequence [{literal.name}] ({within})"


def a_shape(words: str) -> str:
    """A shape's words as a noun phrase: 'an open S-curve'; a plural name without an article ('two mirror
    unbalanced triangles'); a name made of an attribute's words in quotes ('a "necked six lines" shape')."""
    if words.startswith("no ") or re.search(rf"\b({'|'.join(NUMBER_WORDS)}) (lines|sides|parts)\b", words):
        return f'{"an" if words[:1] in "aeiou" else "a"} "{words}" shape'
    head = words.split(" of ")[0].split()[-1]
    return words if head.endswith("s") and not head.endswith("ss") and len(head) > 2 else article(words)


def _category_phrase(literal: Literal) -> str:
    first = shape_words(literal.name)
    if literal.family is Family.CATEGORY:
        return f"shows no {first}" if literal.negated else f"shows {a_shape(first)}"
    second = shape_words(literal.other)
    both = f"{a_shape(first)} and {f'another {second}' if second == first else a_shape(second)}"
    return f"does not show both {both}" if literal.negated else f"shows {both}"


def literal_phrase(literal: Literal) -> str:
    """The literal as a verb phrase about one image: 'has eight straight lines', 'is not convex'."""
    if literal.family.is_sequence:
        return _sequence_phrase(literal)
    if literal.family in (Family.CATEGORY, Family.CATEGORIES):
        return _category_phrase(literal)
    if literal.family is Family.ATTRIBUTE:
        words = literal.name.replace("_", " ")
        holds, fails = ATTRIBUTE_PHRASES.get(literal.name, (f"is {words}", f"is not {words}"))
        return fails if literal.negated else holds
    return count_phrase(literal.name, literal.comparison, literal.value, literal.negated)


def _range(first: Literal, second: Literal) -> str | None:
    """Two literals of one count as one phrase: 'has three to five straight lines' (at least three, at most
    five); 'can be counted as both four and six straight lines' (a line cut by crossings reads either way)."""
    if (first.family is not Family.COUNT or second.family is not Family.COUNT or first.name != second.name
            or first.negated or second.negated):
        return None
    low, high = sorted((first, second), key=lambda lit: (lit.comparison is Comparison.LE, lit.value))
    plural = COUNT_NOUNS.get(low.name, (low.name, low.name.replace("_", " ")))[1]
    if (low.comparison, high.comparison) == (Comparison.GE, Comparison.LE):
        return f"has {number_word(low.value)} to {number_word(high.value)} {plural}"
    if (low.comparison, high.comparison) == (Comparison.EQ, Comparison.EQ):
        return f"can be counted as both {number_word(low.value)} and {number_word(high.value)} {plural}"
    return None


def rule_phrase(rule: Rule) -> str:
    """The rule's literals as one verb phrase: 'is convex and has four straight lines'."""
    if len(rule.literals) == 2:
        joined = _range(*rule.literals)
        if joined:
            return joined
    return " and ".join(literal_phrase(lit) for lit in rule.literals)


def _share(covered: int, total: int) -> str:
    if covered == total:
        return f"all {total} images" if total > 1 else "the image"
    return "none of the {total} images".format(total=total) if covered == 0 else f"{covered} of the {total} images"


def rule_english(rule: Rule, covered_a: int, covered_b: int, n_a: int, n_b: int) -> str:
    """The rule as a sentence, with how well it fits the context."""
    if not rule.literals:
        return "No rule separates A from B: every image is put in A."
    return (f"An image is in A if it {rule_phrase(rule)}. This holds for {_share(covered_a, n_a)} of A "
            f"and {_share(covered_b, n_b)} of B.")


# ------------------------------------------------------------------------------------ words of the explanations


def display_name(name: str) -> str:
    """A library shape's display name in words, as the table writes it ('acute equicrural triangle'), or
    its name in words if unknown (the per-image explanations; rule sentences spell it out: `shape_words`)."""
    entry = load_library().get(name)
    return words(entry.display_name if entry is not None else name)


def super_class(name: str) -> str | None:
    entry = load_library().get(name)
    return entry.super_class if entry is not None else None


def count_noun(name: str, value: int) -> str:
    """A count's name as a noun for `value` things: 'straight line', 'straight lines'."""
    noun = words(name)
    return noun[:-1] if value == 1 and noun.endswith("s") else noun


def attribute_phrase(name: str, negated: bool) -> str:
    """'is convex', 'does not have line crossing', 'contains a triangle' ... (built from the attribute's
    name; rule sentences use `ATTRIBUTE_PHRASES`)."""
    if name.startswith("has_"):
        rest = words(name[4:])
        return f"does not have {rest}" if negated else f"has {rest}"
    if name.startswith("exist_"):
        rest = article(EXIST_NOUNS.get(name[6:], words(name[6:])))
        return f"does not contain {rest}" if negated else f"contains {rest}"
    return f"is not {words(name)}" if negated else f"is {words(name)}"


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
