"""Scoring only: does an induced rule name the concept written in the problem's name? And how sure is an accuracy
(`accuracy_interval`)?

The solver never reads problem names; evaluation does, here, to report the rule-match rate.
  ff_nact<k>[_<k2>]_<id>     any stroke-sequence rule names the concept
  bd_<s1>[-<s2>]_<id>        every shape of the name is a category of the rule (or a library shape with
                             the same geometry, which no image can tell apart)
  hd_<a1>[-<a2>]_<id>        every attribute of the name is expressed by the rule: the attribute itself, or
                             its numeric form (has_eight_straight_lines = count(straight_lines, eq, 8),
                             has_two_parts = count(parts, eq, 2), has_curve = arcs >= 1, ...);
                             symmetric_transposed = symmetric and self_transposed
"""

from __future__ import annotations

import functools
import math

from dsl.canonical import shape_key
from dsl.library import load_library
from solver.induction import AT_LEAST_ONE, Comparison, Family, Literal, Rule

NUMBER_NAMES = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9}
EXACT_COUNTS = {"has_two_parts": ("parts", 2)}  # attribute -> the count equality it states
PARTS = {"symmetric_transposed": ("symmetric", "self_transposed")}


def concept_of(name: str) -> tuple[str, tuple[str, ...]]:
    """('ff', ()), ('bd', shape names) or ('hd', attribute names) from a problem name."""
    kind, body = name[:2], name[3:-5]
    if kind == "ff":
        return kind, ()
    return kind, tuple(body.split("-"))


@functools.cache
def _geometry_key(shape_name: str) -> tuple | None:
    entry = load_library().get(shape_name)
    return shape_key(entry.shape, ignore_strokes=True) if entry else None


def _names_shape(shape_name: str, literals: list[Literal]) -> bool:
    categories = [name for lit in literals if lit.family in (Family.CATEGORY, Family.CATEGORIES)
                  and not lit.negated for name in lit.names]
    if shape_name in categories:
        return True
    key = _geometry_key(shape_name)
    return key is not None and any(_geometry_key(c) == key for c in categories)


def _expresses(attribute: str, literal: Literal) -> bool:
    if literal.family is Family.ATTRIBUTE:
        return literal.name == attribute and not literal.negated
    if literal.family is not Family.COUNT:
        return False
    words = attribute.split("_")
    if len(words) == 4 and words[0] == "has" and words[2:] == ["straight", "lines"] and words[1] in NUMBER_NAMES:
        return (literal.name == "straight_lines" and not literal.negated
                and literal.comparison is Comparison.EQ and literal.value == NUMBER_NAMES[words[1]])
    if attribute in EXACT_COUNTS:
        name, value = EXACT_COUNTS[attribute]
        return (literal.name == name and literal.value == value and not literal.negated
                and literal.comparison is Comparison.EQ)
    count = AT_LEAST_ONE.get(attribute)
    if count is None or literal.name != count:
        return False
    at_least_one = literal.comparison is Comparison.GE and literal.value == 1 and not literal.negated
    not_zero = literal.comparison is Comparison.EQ and literal.value == 0 and literal.negated
    return at_least_one or not_zero


def _names_attribute(attribute: str, literals: list[Literal]) -> bool:
    if any(_expresses(attribute, lit) for lit in literals):
        return True
    parts = PARTS.get(attribute)
    return parts is not None and all(_names_attribute(p, literals) for p in parts)


def rule_matches(problem_name: str, rule: Rule | None) -> bool:
    """True if `rule` names the concept of the problem called `problem_name`."""
    if rule is None:
        return False
    kind, items = concept_of(problem_name)
    literals = list(rule.literals)
    if kind == "ff":
        return any(lit.family.is_sequence and not lit.negated for lit in literals)
    if kind == "bd":
        return all(_names_shape(shape, literals) for shape in items)
    if kind == "hd":
        for whole, parts in PARTS.items():  # symmetric and self_transposed = symmetric_transposed
            if set(parts) <= set(items) and _names_attribute(whole, literals):
                items = tuple(a for a in items if a not in parts) + (whole,)
        return all(_names_attribute(attribute, literals) for attribute in items)
    return False


Z_95 = 1.959963984540054  # the standard normal's 97.5 % quantile: a two-sided 95 % interval


def accuracy_interval(correct: int, n: int, z: float = Z_95) -> list[float] | None:
    """The Wilson score interval (95 % by default) of an accuracy of `correct` right out of `n` -> [low, high], or
    None when `n` is 0. Defined at 0 and 100 % too (at 240 of 240 queries: [0.984, 1.0]), where the normal
    approximation collapses to a point. Each query counts as one trial; a problem's two queries are not quite
    independent (one misread set A can cost both), so the interval is, if anything, a little narrow."""
    if n <= 0:
        return None
    p, z2 = correct / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]
