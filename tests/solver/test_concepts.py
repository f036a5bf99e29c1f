"""What the abstract generator can have made (solver.induction.concepts): the concept a rule names, and the stroke
types it withholds under a concept about a regular polygon, a triangle or a quadrangle (spec §3.4)."""

from __future__ import annotations

import math

from dsl.library import load_library
from dsl.types import Shape, StrokeType
from solver.induction.concepts import generator_concept, stroke_log_likelihood
from solver.induction.facts import ImageFacts, ProblemFacts, shape_facts
from solver.induction.rules import Comparison, Family, Literal, Rule
from solver.settings import NOISE_TRUE_PROGRAMS


def attr(name: str, negated: bool = False) -> Literal:
    return Literal(Family.ATTRIBUTE, name, negated)


def count(name: str, comparison: Comparison, value: int, negated: bool = False) -> Literal:
    return Literal(Family.COUNT, name, negated, comparison, value)


def test_a_rule_names_a_concept_in_its_attributes_or_their_numeric_forms():
    eight = count("straight_lines", Comparison.EQ, 8)
    assert generator_concept(Rule((attr("has_curve"), eight))) == {"has_curve", "has_eight_straight_lines"}
    assert generator_concept(Rule((count("arcs", Comparison.GE, 1),))) == {"has_curve"}
    assert generator_concept(Rule((count("arcs", Comparison.EQ, 0, negated=True),))) == {"has_curve"}
    assert generator_concept(Rule((count("parts", Comparison.EQ, 2), attr("symmetric")))) == {"has_two_parts",
                                                                                               "symmetric"}


def test_negations_thresholds_unnamed_counts_and_pairs_never_paired_are_no_concept():
    assert generator_concept(Rule((attr("has_curve", negated=True),))) is None
    assert generator_concept(Rule((count("straight_lines", Comparison.GE, 4),))) is None
    assert generator_concept(Rule((count("parts", Comparison.EQ, 1),))) is None
    assert generator_concept(Rule((attr("has_straight_line"), attr("has_obtuse_angle")))) is None  # a pool of 4
    assert generator_concept(Rule((attr("symmetric"), count("straight_lines", Comparison.EQ, 3),
                                   attr("has_three_straight_lines")))) is None
    assert generator_concept(Rule((Literal(Family.CATEGORY, "equilateral_traingle"),))) is None


def drawn(name: str, stroke: StrokeType) -> ImageFacts:
    shape = load_library()[name].shape
    return ImageFacts((shape_facts(Shape(tuple(a.with_stroke(stroke) for a in shape.actions))),))


def test_strokes_the_generator_withholds_under_a_triangle_concept_are_evidence():
    triangle, lines = Rule((attr("exist_triangle"),)), Rule((count("straight_lines", Comparison.EQ, 3),))
    zigzag = drawn("equilateral_traingle", StrokeType.ZIGZAG)  # a library shape that may be stamped: 3 actions
    facts = ProblemFacts((zigzag,) * 6, (zigzag,) * 6, (), tolerant=False)  # true programs
    assert stroke_log_likelihood(triangle, ProblemFacts((zigzag,) * 6, (zigzag,) * 6, ())) == 0.0  # read: no evidence
    assert stroke_log_likelihood(lines, facts) == 0.0  # no type withheld: the reference
    assert math.isclose(stroke_log_likelihood(triangle, facts), 12 * 3 * math.log(5 / 4))
    stamped = drawn("equilateral_traingle", StrokeType.TRIANGLE)  # withheld under exist_triangle: a misread image
    facts = ProblemFacts((zigzag,) * 5 + (stamped,), (zigzag,) * 6, (), tolerant=False)
    assert math.isclose(stroke_log_likelihood(triangle, facts),
                        11 * 3 * math.log(5 / 4) + math.log(NOISE_TRUE_PROGRAMS))
    normal_only = drawn("thin_obtuse_nonequi_triangle", StrokeType.NORMAL)  # `if stamp` 0: says nothing
    assert stroke_log_likelihood(triangle, ProblemFacts((normal_only,) * 6, (normal_only,) * 6, (), False)) == 0.0
