"""The `why` of a stroke-sequence literal: where an image's program departs from the rule's program.

The rule's program is laid beside each shape of the image (`dsl.align`: modulo start point and tracing
direction); the shape that departs least is the one the literal is about. Its differing actions are
named in the rule's tracing (1-based), with the rule's action and the image's in words; the image's
own action indices are kept too, so the picture can draw them in the second colour.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, replace

import numpy as np

from dsl.align import FIELDS, Alignment, Step, Tolerance, align
from dsl.syntax import parse_shape
from dsl.turtle import execute_shape
from dsl.types import Pose, Shape
from solver.explaining.english import action_words
from solver.induction import ImageFacts
from solver.induction import Literal
from solver.settings import TOLERANCES
from solver.explaining.why import Difference, Part

ROUNDING = Tolerance(0.005, 0.5)  # the quanta of the canonical keys the facts compare (dsl.canonical)
SHOWN_DIFFERENCES = 4  # differences named in the sentence (all of them are in differs_at)
WHOLE_ACTION = tuple(f for f in FIELDS if f != "turn")  # words for an action without counterpart
OVERDRAWN_UNITS = 0.02  # turtle units, the shape at scale 1 (a quarter arc of radius 0.5 is 0.79 long): every
# centreline sample of an extra action within this of another action's, and back, for the sentence to say it is drawn
# over that action (a loop walked on past its start draws its first arc again: the samples coincide)


@dataclass(frozen=True, slots=True)
class ShapeMatch:
    rule_shape: int  # 0-based shape of the rule's program
    image_shape: int  # 0-based shape of the image's program
    alignment: Alignment


@functools.lru_cache(maxsize=1024)
def rule_shapes(literal: Literal) -> tuple[Shape, ...]:
    """The rule's program: one shape, or the two shapes of an image-sequence literal."""
    texts = literal.name.split(" | ") if literal.family.is_image else [literal.name]
    return tuple(parse_shape(text.split(" ")) for text in texts)


def literal_tolerance(literal: Literal) -> Tolerance:
    if literal.tolerance is None:
        return Tolerance()
    length, angle, ignore_strokes = TOLERANCES[literal.tolerance]
    return Tolerance(length, angle, not ignore_strokes)


def best_matches(rules: tuple[Shape, ...], image: tuple[Shape, ...], tolerance: Tolerance) -> list[ShapeMatch]:
    """Each shape of the rule with the image shape it is about: for one rule shape, the image shape that
    departs least from it; for two, the pairing of distinct image shapes that departs least in all."""
    aligned = {(r, k): align(rule, shape, tolerance) for r, rule in enumerate(rules) for k, shape in enumerate(image)}
    best, best_cost = [], None
    count = min(len(rules), len(image))
    for chosen in itertools.permutations(range(len(image)), count):
        for ruled in itertools.combinations(range(len(rules)), count):
            matches = [ShapeMatch(r, k, aligned[r, k]) for r, k in zip(ruled, chosen)]
            cost = sum(m.alignment.cost for m in matches)
            if best_cost is None or cost < best_cost:
                best, best_cost = matches, cost
    return best


def _difference(step: Step, previous: int, match: ShapeMatch, two_shapes: bool) -> Difference:
    shape = match.rule_shape + 1 if two_shapes else None
    if step.other is None:  # the rule's action has no counterpart in the image
        ref = step.reference
        return Difference(ref.index + 1, action_words(ref.segment, ref.turn, WHOLE_ACTION), "nothing", shape,
                          ("missing",), match.image_shape, None)
    fields = WHOLE_ACTION if step.reference is None else step.differences
    image = action_words(step.other.segment, step.other.turn, fields)
    if step.reference is None:  # an action the rule does not have, after the rule's action `previous`
        return Difference(previous, "nothing", image, shape, ("extra",), match.image_shape, step.other.index)
    rule = action_words(step.reference.segment, step.reference.turn, step.differences)
    return Difference(step.reference.index + 1, rule, image, shape, step.differences, match.image_shape,
                      step.other.index)


def differences(match: ShapeMatch, two_shapes: bool, image: Shape | None = None) -> tuple[Difference, ...]:
    """Where the image's shape departs from the rule's; an extra action of `image` (the image's shape, when given)
    that draws another action's centreline again says which (`Difference.over`)."""
    found, previous = [], 0
    for step in match.alignment.steps:
        if step.differs:
            found.append(_difference(step, previous, match, two_shapes))
        if step.reference is not None:
            previous = step.reference.index + 1
    if image is None:
        return tuple(found)
    counterpart = {s.other.index: s.reference.index + 1 for s in match.alignment.steps
                   if s.other is not None and s.reference is not None}
    return tuple(replace(d, over=counterpart.get(drawn_over(image, d.image_action)))
                 if "extra" in d.fields and d.image_action is not None else d for d in found)


def drawn_over(shape: Shape, i: int) -> int | None:
    """The other action of `shape` whose centreline action i draws again (every point of each within
    OVERDRAWN_UNITS of the other's, the shape at scale 1), or None: a loop of arcs walked on past its start draws its
    first arc twice (spec 3.2), and the extra arc lies under or over it, not beside it."""
    paths = execute_shape(shape, Pose(scale=1.0), magnifier=False).action_paths

    def near(a: np.ndarray, b: np.ndarray) -> bool:
        return float(np.sqrt(((a[:, None, :] - b[None]) ** 2).sum(-1)).min(axis=1).max()) <= OVERDRAWN_UNITS

    return next((j for j, path in enumerate(paths) if j != i and near(paths[i], path) and near(path, paths[i])), None)


def _where(difference: Difference) -> str:
    shape = f" of shape {difference.shape}" if difference.shape else ""
    if "extra" in difference.fields:
        over = f", drawn again over action {difference.over}" if difference.over is not None else ""
        return f"after action {difference.action}{shape} the image has {difference.image}{over}, which the rule lacks"
    if "missing" in difference.fields:
        return f"the image lacks action {difference.action}{shape}, {difference.rule}"
    return (f"at action {difference.action}{shape} the rule draws {difference.rule}, "
            f"where this image draws {difference.image}")


def _counts(rules: tuple[Shape, ...], image: tuple[Shape, ...], matches: list[ShapeMatch], both: bool) -> list[str]:
    """Where the numbers of shapes (for a rule about both shapes) or of actions differ."""
    notes = []
    if both and len(image) != len(rules):
        notes.append(f"it has {len(image)} shape{'s' if len(image) != 1 else ''} where the rule has {len(rules)}")
    for m in matches:
        n, k = len(rules[m.rule_shape]), len(image[m.image_shape])
        if n != k:
            which = "its shape" if len(image) == 1 else f"its shape {m.image_shape + 1} (of {len(image)})"
            notes.append(f"{which} has {k} actions where the rule's has {n}")
    return notes


def _pose_words(matches: list[ShapeMatch]) -> str:
    """How the image traces the rule's program: from which of its actions, which way round."""
    notes = []
    for m in matches:
        first = next((s.other.index for s in m.alignment.steps
                      if s.reference is not None and s.reference.index == 0 and s.other is not None), 0)
        way = "the other way round" if m.alignment.backwards else "the same way round"
        start = "from the same start" if first == 0 else f"from its action {first + 1}"
        notes.append(f"traced {start}, {way}")
    if len(notes) > 1 and len(set(notes)) == 1:
        return f"each shape {notes[0]}"
    return "; ".join(notes if len(notes) == 1 else [f"shape {k} {note}" for k, note in enumerate(notes, 1)])


def sequence_part(literal: Literal, holds: bool, facts: ImageFacts) -> Part | None:
    """The evidence of a stroke-sequence literal for one image (None if the image's programs are unknown)."""
    programs = tuple(s.program for s in facts.shapes)
    if not programs or any(p is None for p in programs):
        return None
    rules = rule_shapes(literal)
    tolerance = literal_tolerance(literal)
    matches = best_matches(rules, programs, tolerance)
    found = tuple(d for m in matches for d in differences(m, len(rules) > 1, programs[m.image_shape]))
    if not holds and not found and not literal.negated:  # the facts' rounding sees what the tolerance does not
        matches = best_matches(rules, programs, ROUNDING)
        found = tuple(d for m in matches for d in differences(m, len(rules) > 1, programs[m.image_shape]))
    marked = tuple((d.image_shape, d.image_action) for d in found if d.image_action is not None)
    if not holds and literal.family.is_image:  # image shapes the rule's programs do not pair, marked whole
        paired = {m.image_shape for m in matches}
        marked += tuple((k, None) for k in range(len(programs)) if k not in paired)
    if literal.negated:
        text = ("none of its shapes is drawn by the excluded program" if holds
                else "it is drawn by the program the rule excludes")
        return Part(text, marked=marked)
    if holds or not found:
        within = " within the rule's tolerance" if literal.tolerance else ""
        return Part(f"drawn by the rule's program{within} ({_pose_words(matches)})")
    shown = "; ".join(_where(d) for d in found[:SHOWN_DIFFERENCES])
    more = f"; and {len(found) - SHOWN_DIFFERENCES} more" if len(found) > SHOWN_DIFFERENCES else ""
    head = "; ".join(_counts(rules, programs, matches, literal.family.is_image) + [f"{shown}{more}"])
    return Part(head, differs_at=found, marked=marked)
