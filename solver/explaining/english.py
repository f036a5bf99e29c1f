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
    "has a curve", as the attribute it restates reads, so the two rules are said once (`solver.explaining.explanation`);
  * stroke sequences by the path each shape draws (`program_words`): "is drawn as exactly two shapes: a
    plain line, turning 90° left into two zigzag lines in a row; and ...", equal actions in a row said
    once with their number (the action strings stay in the ASP and the JSON).
The same module gives the words of the per-image explanations (`solver.explaining.why_rules`, `solver.explaining.why_sequence`):
library shapes by the table's display name (`display_name`), attributes (`attribute_phrase`), counts
(`count_noun`) and LOGO actions (`action_words`).
"""

from __future__ import annotations

import functools
import re

from dsl.canonical import Segment, is_closed, to_travel_form
from dsl.library import load_library
from dsl.settings import ANGLE_QUANTUM, LENGTH_QUANTUM
from dsl.syntax import parse_shape
from dsl.types import ActionKind, StrokeType
from solver.induction import AT_LEAST_ONE, Comparison, Family, Literal, Rule
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
# Stroke sequences: an arc's sweep by its part of a circle; the sizes of the free-form moves (spec §3.2) unsaid
ARC_SWEEPS = {90: "quarter circle", 180: "half circle", 270: "three-quarter circle", 360: "full circle"}
UNIT_LENGTH, UNIT_RADIUS = 1.0, 0.5
SAME_LENGTH, SAME_ANGLE = LENGTH_QUANTUM / 2, ANGLE_QUANTUM / 2  # equal as the canonical keys see them


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
    """'has a shape drawn as a zigzag line, turning 90° left into a plain line', 'is drawn as exactly two
    shapes: ...; and ...'; near literals say their tolerance first."""
    strokes = literal.tolerance is None or not TOLERANCES[literal.tolerance][2]
    pieces = [program_words(text, strokes) for text in literal.name.split(" | ")]
    within = ""
    if literal.family.is_near:
        length_tol, angle_tol, _ = TOLERANCES[literal.tolerance]
        style = "" if strokes else " and in any stroke style"
        within = f", to within {length_tol:g} in length and {angle_tol:g}° in angle{style},"
    if not literal.family.is_image:
        return f"has {'no' if literal.negated else 'a'} shape drawn{within} as {pieces[0]}"
    verb = "is not drawn" if literal.negated else "is drawn"
    exactly = "" if literal.family.is_near else " exactly"
    if len(pieces) == 1:
        return f"{verb}{within} as{exactly} one shape: {pieces[0]}"
    if len(set(pieces)) == 1:
        return f"{verb}{within} as{exactly} {number_word(len(pieces))} identical shapes, each {pieces[0]}"
    return f"{verb}{within} as{exactly} {number_word(len(pieces))} shapes: {'; and '.join(pieces)}"


def program_words(text: str, strokes: bool = True) -> str:
    """One shape's program (official action strings, canonical) as the path a reader follows: 'a zigzag
    line, turning 90° left into two plain quarter circles curving left in a row', 'three lines with 120°
    left turns between them (zigzag, triangle-stamped, plain), ending where it began'. Actions are read
    in travel form (`dsl.canonical`): an arc curves left or right as it is seen drawn, a turn is the change
    of direction at the junction; equal actions in a row are said once with their number (`_runs`); the
    free-form moves' sizes (line length 1, arc radius 0.5) go unsaid. Stroke types are left out when
    `strokes` is false. A text that is not a program is shown as it is, in brackets."""
    try:
        shape = parse_shape(text.split(" "))
    except ValueError:
        return f"[{text}]"
    if not strokes:
        shape = shape.with_strokes(StrokeType.NORMAL)
    runs = _runs(to_travel_form(shape))
    phrase = _run_words(runs[0], strokes)
    for run in runs[1:]:
        phrase += f", {_junction(run[0].turn)} into {_run_words(run, strokes)}"
    return phrase + (", ending where it began" if is_closed(shape) else "")


def _same(first: Segment, second: Segment) -> bool:
    """The same line or arc, up to the canonical keys' rounding (stroke and turn aside)."""
    pairs = ((first.length, second.length, SAME_LENGTH), (first.radius, second.radius, SAME_LENGTH),
             (first.curvature, second.curvature, SAME_ANGLE))
    return first.kind is second.kind and all(abs(a - b) < tol for a, b, tol in pairs)


def _runs(segments: list[Segment]) -> list[list[Segment]]:
    """The actions cut into runs, each said once: consecutive equal lines or arcs with equal turns between
    them. Of the ways to cut, the one with the fewest runs, then the fewest runs of mixed strokes (whose
    strokes are listed), the earlier runs the longer on a tie. Two lines of different strokes are said one
    by one ('a zigzag line, turning 90° left into a plain line'): no shorter as a run (two arcs are not:
    'two quarter circles curving right in a row (plain, zigzag)' is seen as one half circle)."""
    best: list[tuple[tuple[int, int], list[list[Segment]]]] = [((0, 0), [])]  # best cut of segments[:i]
    for end in range(1, len(segments) + 1):
        options = []
        for start in range(end - 1, -1, -1):
            run = segments[start:end]
            if not _is_run(run):
                break
            mixed = len({s.stroke for s in run}) > 1
            if mixed and len(run) == 2 and run[0].kind is ActionKind.LINE:
                continue
            (runs, mixed_runs), cut = best[start]
            options.append(((runs + 1, mixed_runs + mixed), cut + [run]))
        best.append(min(options, key=lambda option: option[0]))
    return best[-1][1]


def _is_run(run: list[Segment]) -> bool:
    return all(_same(run[0], s) for s in run[1:]) and all(abs(s.turn - run[1].turn) < SAME_ANGLE for s in run[2:])


def _junction(turn: float) -> str:
    """The change of direction into an action: 'straight on', 'turning back', 'turning 90° left'."""
    if abs(turn) < SAME_ANGLE:
        return "straight on"
    if abs(abs(turn) - 180.0) < SAME_ANGLE:
        return "turning back"
    return f"turning {_side(turn)}"


def _run_words(run: list[Segment], strokes: bool) -> str:
    """'a zigzag line', 'two circle-stamped quarter circles curving right in a row', 'three lines with
    120° left turns between them (zigzag, plain, plain)'."""
    first, n = run[0], len(run)
    mixed = strokes and len({segment.stroke for segment in run}) > 1
    text = _action_noun(first, n > 1, strokes and not mixed)
    if n == 1:
        return article(text)
    text = f"{number_word(n)} {text}"
    turn, plural = run[1].turn, "s" if n > 2 else ""
    if abs(turn) < SAME_ANGLE:
        text += " in a row"
    elif abs(abs(turn) - 180.0) < SAME_ANGLE:
        text += f" with {'turns' if plural else 'a turn'} back between them"
    else:
        between = f"{_side(turn)} turn{plural}"
        text += f" with {between if plural else article(between)} between them"
    return f"{text} ({', '.join(_stroke_word(segment.stroke) for segment in run)})" if mixed else text


def _stroke_word(stroke: StrokeType) -> str:
    return STROKE_WORDS.get(stroke, stroke.value)


def _action_noun(segment: Segment, plural: bool, strokes: bool) -> str:
    """'zigzag line', 'plain line of length 0.5', 'square-stamped quarter circles curving left', '60° arc'."""
    stroke = f"{_stroke_word(segment.stroke)} " if strokes else ""
    if segment.kind is ActionKind.LINE:
        size = "" if abs(segment.length - UNIT_LENGTH) < SAME_LENGTH else f" of length {segment.length:g}"
        return f"{stroke}{'lines' if plural else 'line'}{size}"
    sweep = round(abs(segment.curvature))
    noun = ARC_SWEEPS.get(sweep, f"{sweep}° arc") + ("s" if plural else "")
    size = "" if abs(segment.radius - UNIT_RADIUS) < SAME_LENGTH else f" of radius {segment.radius:g}"
    return f"{stroke}{noun}{size} curving {'left' if segment.curvature > 0 else 'right'}"


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


def _bounded(first: Literal, second: Literal) -> str | None:
    """An attribute that says a count is at least one (`solver.induction.rules.AT_LEAST_ONE`) and an upper bound on that
    count as one phrase, the count said once: 'has exactly one straight line' (not 'has a straight line and has at
    most one straight line'), 'has one to three curves'."""

    for attribute, bound in ((first, second), (second, first)):
        if (attribute.family is Family.ATTRIBUTE and not attribute.negated and bound.family is Family.COUNT
                and not bound.negated and bound.comparison is Comparison.LE and bound.value >= 1
                and AT_LEAST_ONE.get(attribute.name) == bound.name):
            singular, plural = COUNT_NOUNS.get(bound.name, (bound.name.replace("_", " "),) * 2)
            if bound.value == 1:
                return f"has exactly one {singular}"
            return f"has one to {number_word(bound.value)} {plural}"
    return None


def rule_phrase(rule: Rule) -> str:
    """The rule's literals as one verb phrase: 'is convex and has four straight lines'."""
    if len(rule.literals) == 2:
        joined = _range(*rule.literals) or _bounded(*rule.literals)
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


def labelled_value(name: str, value: int | None) -> str:
    """An attribute's value as a label: 'necked', 'not necked', 'necked: does not apply'."""
    if value is None:
        return f"{words(name)}: does not apply"
    return words(name) if value else f"not {words(name)}"


def value_source(library_name: str | None, labels: list[str], measured: list[str]) -> str:
    """Where an image's value came from, as a parenthesis: '(labelled *necked* in the shape table: a thin regular
    lamp; measured, it is not necked)', '(measured)'. `measured`: attribute phrases ('is not necked')."""
    if library_name is None:
        return "(measured)"
    text = f"labelled {', '.join(f'*{label}*' for label in labels)} in the shape table: {article(display_name(library_name))}"
    return f"({text}; measured, it {' and '.join(measured)})" if measured else f"({text})"


def _degrees(value: float) -> str:
    return f"{abs(value):.0f}°"  # whole degrees: the action strings round turns (0.833 of a half turn: 119.88°)


def _side(turn: float) -> str:
    return f"{_degrees(turn)} {'left' if turn > 0 else 'right'}"


def turn_words(turn: float | None) -> str:
    """The turn before an action, as a phrase that follows the action: 'after a 90° left turn'."""
    if turn is None:
        return "at the start"
    if abs(turn) < SAME_ANGLE:
        return "with no turn before it"
    if abs(abs(turn) - 180.0) < SAME_ANGLE:
        return "after turning back"
    return f"after a {_side(turn)} turn"


def action_words(segment: Segment, turn: float | None, fields: tuple[str, ...] = ()) -> str:
    """One action in words: its stroke and kind always, its size when `fields` name it (or the kind
    differs), its turn when `fields` name the turn: 'a zigzag line', 'a plain arc of radius 0.5 sweeping
    90° left', 'a plain line of length 1 after a 30° right turn'."""
    kind = "line" if segment.kind is ActionKind.LINE else "arc"
    text = f"a {_stroke_word(segment.stroke)} {kind}"
    if segment.kind is ActionKind.LINE and {"kind", "length"} & set(fields):
        text += f" of length {segment.length:g}"
    if segment.kind is ActionKind.ARC and {"kind", "radius", "sweep"} & set(fields):
        side = "left" if segment.curvature > 0 else "right"
        text += f" of radius {segment.radius:g} sweeping {_degrees(segment.curvature)} {side}"
    if "turn" in fields:
        text += f" {turn_words(turn)}"
    return text
