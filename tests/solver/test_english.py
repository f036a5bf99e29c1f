"""Golden tests of the English: a dozen rules of each family, as a user reads them."""

from __future__ import annotations

import pytest

from solver.english import rule_english, rule_phrase, shape_words
from solver.rules import Comparison, Family, Literal, Rule


def attr(name: str, negated: bool = False) -> Literal:
    return Literal(Family.ATTRIBUTE, name, negated)


def count(name: str, op: str, value: int, negated: bool = False) -> Literal:
    return Literal(Family.COUNT, name, negated, Comparison(op), value)


def category(name: str, other: str | None = None, negated: bool = False) -> Literal:
    family = Family.CATEGORIES if other else Family.CATEGORY
    return Literal(family, name, negated, other=other)


ATTRIBUTE_RULES = [
    ((attr("convex"),), "is convex"),
    ((attr("convex", True),), "is not convex"),
    ((attr("has_curve"), attr("has_line_crossing")), "has a curve and has lines that cross"),
    ((attr("has_curve", True),), "has no curve"),
    ((attr("symmetric"), attr("self_transposed")), "is mirror-symmetric and looks the same after a half turn"),
    ((attr("symmetric_transposed"),), "is symmetric both in a mirror and under a half turn"),
    ((attr("convex"), attr("symmetric_transposed", True)),
     "is convex and is not symmetric both in a mirror and under a half turn"),
    ((attr("thin_shape"), attr("closed_shape", True)), "is thin and is not a closed figure"),
    ((attr("has_acute_angle"), attr("has_obtuse_angle", True)), "has an acute angle and has no obtuse angle"),
    ((attr("balanced_two"),), "has two parts of about the same size"),
    ((attr("unbalanced_two"), attr("necked")), "has two parts of clearly different sizes and has a neck"),
    ((attr("exist_regular"),), "contains a regular polygon or a circle"),
    ((attr("exist_triangle"), attr("exist_quadrangle", True)), "contains a triangle and contains no quadrangle"),
    ((attr("exist_sector", True),), "contains no circular sector"),
]

COUNT_RULES = [
    ((count("straight_lines", "eq", 8),), "has eight straight lines"),
    ((count("straight_lines", "eq", 1),), "has one straight line"),
    ((count("straight_lines", "eq", 0),), "has no straight line"),
    ((count("straight_lines", "eq", 0, True),), "has a straight line"),
    ((count("straight_lines", "ge", 1),), "has a straight line"),
    ((count("straight_lines", "eq", 3, True),), "does not have exactly three straight lines"),
    ((count("straight_lines", "ge", 3), count("straight_lines", "le", 5)), "has three to five straight lines"),
    ((count("straight_lines", "le", 5), count("straight_lines", "ge", 3)), "has three to five straight lines"),
    ((count("straight_lines", "eq", 6), count("straight_lines", "eq", 4)),
     "can be counted as both four and six straight lines"),
    ((count("arcs", "ge", 1),), "has a curve"),
    ((count("arcs", "ge", 2),), "has two or more curves"),
    ((count("arcs", "le", 2),), "has at most two curves"),
    ((count("arcs", "eq", 1),), "has one curve"),
    ((count("parts", "eq", 2),), "has two parts"),
    ((count("parts", "eq", 1, True),), "does not have exactly one part"),
    ((attr("has_curve"), count("straight_lines", "eq", 4)), "has a curve and has four straight lines"),
]

CATEGORY_RULES = [
    ((category("circle"),), "shows a circle"),
    ((category("closed_circle"),), "shows a circle"),
    ((category("equilateral_traingle"),), "shows an equilateral triangle"),
    ((category("exist_triangle_eight_lines11"),), 'shows an "exist triangle eight lines" shape'),
    ((category("sector30"),), "shows a 30-degree sector"),
    ((category("quasi_sector73"),), "shows a 73-degree quasi-sector"),
    ((category("rec_symm_arc180"),), "shows a rectangle symmetric 180-degree arc"),
    ((category("open_s3"),), "shows an open S-curve"),
    ((category("open_onequarter_circle"),), "shows an open quarter circle"),
    ((category("small_intersect_circle"),), "shows a small intersection of two circles"),
    ((category("symm_unbala_goldfish"),), "shows a symmetric unbalanced goldfish"),
    ((category("bala_two_intersect_circles_new2"),), "shows balanced two intersect circles"),
    ((category("two_mirror_unbala_triangles"),), "shows two mirror unbalanced triangles"),
    ((category("no_acute_angle_four_lines6", "thin_rect_parallelogram30"),),
     'shows a "no acute angle four lines" shape and a thin rectangle 30-degree parallelogram'),
    ((category("square", "sector90"),), "shows a square and a 90-degree sector"),
    ((category("bird1", "bird2"),), "shows a bird and another bird"),
    ((category("square", negated=True),), "shows no square"),
]

SEQUENCE_RULES = [
    ((Literal(Family.SEQUENCE, "line_normal_1.000-0.500"),),
     "has a shape drawn by the stroke sequence [line_normal_1.000-0.500]"),
    ((Literal(Family.SEQUENCE, "line_normal_1.000-0.500", negated=True),),
     "has no shape drawn by the stroke sequence [line_normal_1.000-0.500]"),
    ((Literal(Family.IMAGE_SEQUENCE, "a | b"),), "is drawn by exactly the stroke sequences [a | b]"),
    ((Literal(Family.SEQUENCE_NEAR, "p", tolerance="values"),),
     "has a shape drawn by the stroke sequence [p] (lengths within 0.1, angles within 10 degrees)"),
    ((Literal(Family.SEQUENCE_NEAR, "p", tolerance="strokes"),),
     "has a shape drawn by the stroke sequence [p] (lengths within 0.1, angles within 10 degrees, any stroke types)"),
    ((Literal(Family.SEQUENCE_NEAR, "p", tolerance="loose"),),
     "has a shape drawn by the stroke sequence [p] (lengths within 0.25, angles within 25 degrees)"),
    ((Literal(Family.IMAGE_SEQUENCE_NEAR, "a | b", tolerance="values"),),
     "is drawn by the stroke sequences [a | b] (lengths within 0.1, angles within 10 degrees)"),
    ((Literal(Family.SEQUENCE, "p"), Literal(Family.SEQUENCE, "q")),
     "has a shape drawn by the stroke sequence [p] and has a shape drawn by the stroke sequence [q]"),
    ((Literal(Family.SEQUENCE, "p"), attr("convex")), "has a shape drawn by the stroke sequence [p] and is convex"),
    ((Literal(Family.IMAGE_SEQUENCE, "a | b", negated=True),), "is not drawn by exactly the stroke sequences [a | b]"),
    ((Literal(Family.SEQUENCE, "arc_zigzag_0.500_0.625-0.500"),),
     "has a shape drawn by the stroke sequence [arc_zigzag_0.500_0.625-0.500]"),
    ((Literal(Family.IMAGE_SEQUENCE_NEAR, "a | b", tolerance="strokes"),),
     "is drawn by the stroke sequences [a | b] (lengths within 0.1, angles within 10 degrees, any stroke types)"),
]


@pytest.mark.parametrize("literals, phrase", ATTRIBUTE_RULES + COUNT_RULES + CATEGORY_RULES + SEQUENCE_RULES)
def test_rule_phrase(literals, phrase):
    assert rule_phrase(Rule(tuple(literals))) == phrase


def test_the_sentence_says_how_well_the_rule_fits():
    rule = Rule((attr("convex"), count("straight_lines", "eq", 4)))
    assert rule_english(rule, 6, 0, 6, 6) == ("An image is in A if it is convex and has four straight lines. "
                                             "This holds for all 6 images of A and none of the 6 images of B.")
    assert rule_english(rule, 5, 1, 6, 6) == ("An image is in A if it is convex and has four straight lines. "
                                             "This holds for 5 of the 6 images of A and 1 of the 6 images of B.")
    assert rule_english(Rule(()), 6, 6, 6, 6) == "No rule separates A from B: every image is put in A."


def test_no_shape_name_keeps_an_underscore_or_a_trailing_number():
    from dsl.library import load_library

    for name in load_library():
        words = shape_words(name)
        assert "_" not in words and not words[-1].isdigit(), (name, words)
        assert not any(w[-1].isdigit() for w in words.split() if not w.endswith("-degree")), (name, words)
