"""What the abstract generator can have made: the concept a rule of attributes and counts names, and the stroke types
the generator would have drawn the images with under it.

The abstract generator (spec §3.4) draws one of 220 concepts: the 26 attributes of the shape table and the 194
pairs whose pools each hold at least ten shapes (`dsl.generate.abstract_concepts`). A rule names such a concept
when each of its literals states one of the concept's attributes, plainly (`attr(A)`) or in its numeric form
(`count(straight_lines, eq, 5)` for has_five_straight_lines, `count(parts, eq, 2)` for has_two_parts, `count(arcs,
ge, 1)` or `neg(count(arcs, eq, 0))` for has_curve, `rules.AT_LEAST_ONE`), and together they state all of them
and nothing else (`generator_concept`). A rule that names none of the 220 (a negated attribute, a threshold, a
count no attribute names, a pair the generator never pairs) is no concept the generator makes: the posterior
charges it NOT_A_CONCEPT_PENALTY (`solver.induction.posterior.log_prior`), so it loses a near tie to one that is.

The generator also withholds stroke types (spec §3.4): under a concept about exist_regular, exist_triangle or
exist_quadrangle every action of a shape that may be stamped (the table's `if stamp`) is drawn with one of two to
four types (`dsl.generate.abstract_strokes`), under any other concept with one of all five. So the strokes of the
images are evidence between two rules that differ there (`stroke_log_likelihood`): each image drawn only with
allowed types is |all| / |allowed| times likelier per stamped action under the restricted concept, and an image
with a withheld type needs a misread image (`solver.settings.NOISE_TRUE_PROGRAMS`) to be drawn under it. Shapes the
library does not hold, and shapes drawn in normal strokes only, say nothing. Only true programs are read this way
(`ProblemFacts.tolerant` is False): a reading from pixels names the library shape but draws it in normal strokes (a
generated abstract problem from pixels, seed 5201: every stroke of all fourteen images read as normal, so every
concept that withholds stamps gained 50 nats and more), so decoded strokes are no evidence.
"""

from __future__ import annotations

import functools
import math
import re

from dsl.generate import abstract_concepts, abstract_strokes
from dsl.library import load_library
from dsl.types import DATASET_STROKE_TYPES
from solver.induction.facts import ProblemFacts, ShapeFacts
from solver.induction.rules import AT_LEAST_ONE, Comparison, Family, Literal, Rule
from solver.settings import NOISE_TRUE_PROGRAMS

NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


@functools.cache
def _named_equalities() -> dict[tuple[str, int], str]:
    """(count, value) -> the table attribute that states it: has_<n>_straight_lines, has_<n>_parts."""
    named = {}
    for concept in abstract_concepts():
        for attribute in concept:
            found = re.fullmatch(r"has_([a-z]+)_(straight_lines|parts)", attribute)
            if found and found.group(1) in NUMBER_WORDS:
                named[(found.group(2), NUMBER_WORDS[found.group(1)])] = attribute
    return named


@functools.cache
def _at_least_one() -> dict[str, str]:
    """count -> the attribute that holds exactly when the count is at least one (`rules.AT_LEAST_ONE`)."""
    return {count: attribute for attribute, count in AT_LEAST_ONE.items()}


def literal_attribute(literal: Literal) -> str | None:
    """The table attribute a literal states, or None when it states none (a negated attribute, a threshold, a
    count equality no attribute names, a category or stroke sequence)."""
    if literal.family is Family.ATTRIBUTE:
        return None if literal.negated else literal.name
    if literal.family is not Family.COUNT:
        return None
    if literal.comparison is Comparison.EQ and not literal.negated:
        return _named_equalities().get((literal.name, literal.value))
    at_least_one = literal.comparison is Comparison.GE and literal.value == 1 and not literal.negated
    not_zero = literal.comparison is Comparison.EQ and literal.value == 0 and literal.negated
    return _at_least_one().get(literal.name) if at_least_one or not_zero else None


@functools.cache
def _concepts() -> frozenset[frozenset[str]]:
    return frozenset(frozenset(concept) for concept in abstract_concepts())


def generator_concept(rule: Rule) -> frozenset[str] | None:
    """The attributes of the generator's concept the rule names, or None when it names none of the 220."""
    attributes = [literal_attribute(literal) for literal in rule.literals]
    if not attributes or None in attributes or len(set(attributes)) != len(attributes):
        return None
    concept = frozenset(attributes)
    return concept if concept in _concepts() else None


def stated_attributes(rule: Rule) -> tuple[str, ...]:
    """The attributes the rule's literals state (those that state one), in order."""
    return tuple(a for a in (literal_attribute(literal) for literal in rule.literals) if a is not None)


@functools.cache
def _stampable(categories: tuple[str, ...]) -> bool:
    library = load_library()
    return any(library[name].if_stamp for name in categories if name in library)


def _stamped_actions(shape: ShapeFacts) -> tuple | None:
    """The stroke types of a shape the generator may have drawn with any type (a library shape whose table says
    `if stamp`); None for any other shape (free-form, unread, or normal strokes only)."""
    if shape.program is None or not _stampable(shape.categories):
        return None
    return tuple(action.stroke for action in shape.program.actions)


def stroke_log_likelihood(rule: Rule, facts: ProblemFacts) -> float:
    """log P(the images' stroke types | the rule's concept) - log P(them | a concept that withholds none), over
    every image of the problem (the queries too: the generator drew their strokes the same way). 0 for a rule that
    states no attribute that makes the generator withhold stroke types, and for decoded programs (`tolerant`)."""
    allowed = set(abstract_strokes(stated_attributes(rule)))
    if facts.tolerant or len(allowed) == len(DATASET_STROKE_TYPES):
        return 0.0
    gain = math.log(len(DATASET_STROKE_TYPES) / len(allowed))
    total = 0.0
    for _, _, image in facts.images():
        strokes = [stroke for shape in image.shapes for stroke in (_stamped_actions(shape) or ())]
        if any(stroke not in allowed for stroke in strokes):
            total += math.log(NOISE_TRUE_PROGRAMS)
        else:
            total += gain * len(strokes)
    return total
