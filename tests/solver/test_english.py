"""Golden tests of the English: a dozen rules of each family, as a user reads them."""

from __future__ import annotations

import pytest

from solver.explaining.english import rule_english, rule_phrase, shape_words
from solver.induction.rules import Comparison, Family, Literal, Rule


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
    ((attr("has_straight_line"), count("straight_lines", "le", 1)), "has exactly one straight line"),
    ((count("arcs", "le", 3), attr("has_curve")), "has one to three curves"),
    ((attr("has_curve"), count("straight_lines", "le", 1)), "has a curve and has at most one straight line"),
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

def seq(program: str, negated: bool = False, tolerance: str | None = None) -> Literal:
    """A stroke-sequence literal: about both shapes of the image when `program` has two (' | ')."""
    if " | " in program:
        family = Family.IMAGE_SEQUENCE if tolerance is None else Family.IMAGE_SEQUENCE_NEAR
    else:
        family = Family.SEQUENCE if tolerance is None else Family.SEQUENCE_NEAR
    return Literal(family, program, negated, tolerance=tolerance)


TRIANGLE = "line_zigzag_1.000-0.500 line_triangle_1.000-0.833 line_triangle_1.000-0.833"
SQUARE = "line_normal_1.000-0.500 line_square_1.000-0.750 line_square_1.000-0.750 line_square_1.000-0.750"
CIRCLE = " ".join(["arc_circle_0.500_0.625-0.500"] * 4)

SEQUENCE_RULES = [
    ((seq("line_normal_1.000-0.500"),), "has a shape drawn as a plain line"),
    ((seq("line_normal_1.000-0.500", negated=True),), "has no shape drawn as a plain line"),
    ((seq("arc_zigzag_0.500_0.625-0.500"),), "has a shape drawn as a zigzag quarter circle curving left"),
    ((seq("line_zigzag_1.000-0.500 line_normal_1.000-0.750"),),
     "has a shape drawn as a zigzag line, turning 90° left into a plain line"),
    # equal lines with equal turns between them are said once, their strokes listed when they differ
    ((seq(TRIANGLE),),
     "has a shape drawn as three lines with 120° left turns between them (zigzag, triangle-stamped, "
     "triangle-stamped), ending where it began"),
    ((seq(SQUARE),),
     "has a shape drawn as four lines with 90° left turns between them (plain, square-stamped, square-stamped, "
     "square-stamped), ending where it began"),
    ((seq("line_normal_1.000-0.500 line_circle_1.000-0.750 line_circle_1.000-0.500"),),
     "has a shape drawn as a plain line, turning 90° left into two circle-stamped lines in a row"),
    ((seq(CIRCLE),),
     "has a shape drawn as four circle-stamped quarter circles curving left in a row, ending where it began"),
    # a negative arc is traced clockwise: it curves right, and the official turn of 180° before it is no turn at all
    ((seq("arc_triangle_0.500_0.375-0.500 arc_triangle_0.500_0.375-0.500 line_zigzag_1.000-0.000"),),
     "has a shape drawn as two triangle-stamped quarter circles curving right in a row, straight on into a zigzag "
     "line"),
    ((seq("line_normal_0.500-0.500 arc_normal_0.300_0.583-0.583"),),
     "has a shape drawn as a plain line of length 0.5, turning 30° left into a plain 60° arc of radius 0.3 curving "
     "left"),
    ((seq("line_normal_1.000-0.500 line_normal_1.000-1.000 line_normal_1.000-1.000"),),
     "has a shape drawn as three plain lines with turns back between them"),
    ((seq("line_normal_1.000-0.500 arc_zigzag_0.500_0.625-0.500 | line_square_1.000-0.500 line_triangle_1.000-0.167 "
          "line_normal_1.000-0.167 arc_zigzag_0.500_0.375-1.000 arc_normal_0.500_0.375-0.500"),),
     "is drawn as exactly two shapes: a plain line, straight on into a zigzag quarter circle curving left; and three "
     "lines with 120° right turns between them (square-stamped, triangle-stamped, plain), straight on into two "
     "quarter circles curving right in a row (zigzag, plain)"),
    ((seq(f"{CIRCLE} | {TRIANGLE}"),),
     "is drawn as exactly two shapes: four circle-stamped quarter circles curving left in a row, ending where it "
     "began; and three lines with 120° left turns between them (zigzag, triangle-stamped, triangle-stamped), ending "
     "where it began"),
    ((seq("line_zigzag_1.000-0.500 | line_zigzag_1.000-0.500"),),
     "is drawn as exactly two identical shapes, each a zigzag line"),
    ((seq("line_zigzag_1.000-0.500 | arc_normal_0.500_0.625-0.500", negated=True),),
     "is not drawn as exactly two shapes: a zigzag line; and a plain quarter circle curving left"),
    ((seq("line_zigzag_1.000-0.500 line_triangle_1.000-0.833", tolerance="values"),),
     "has a shape drawn, to within 0.1 in length and 10° in angle, as a zigzag line, turning 120° left into a "
     "triangle-stamped line"),
    ((seq("line_zigzag_1.000-0.500 line_triangle_1.000-0.833", tolerance="loose"),),
     "has a shape drawn, to within 0.25 in length and 25° in angle, as a zigzag line, turning 120° left into a "
     "triangle-stamped line"),
    ((seq("line_zigzag_1.000-0.500 line_triangle_1.000-0.833", tolerance="strokes"),),
     "has a shape drawn, to within 0.1 in length and 10° in angle and in any stroke style, as two lines with a 120° "
     "left turn between them"),
    ((seq("line_zigzag_1.000-0.500 | arc_normal_0.500_0.625-0.500", tolerance="values"),),
     "is drawn, to within 0.1 in length and 10° in angle, as two shapes: a zigzag line; and a plain quarter circle "
     "curving left"),
    ((seq("line_zigzag_1.000-0.500 | arc_normal_0.500_0.625-0.500", tolerance="strokes"),),
     "is drawn, to within 0.1 in length and 10° in angle and in any stroke style, as two shapes: a line; and a "
     "quarter circle curving left"),
    ((seq("line_normal_1.000-0.500"), seq("arc_zigzag_0.500_0.625-0.500")),
     "has a shape drawn as a plain line and has a shape drawn as a zigzag quarter circle curving left"),
    ((seq("line_normal_1.000-0.500"), attr("convex")), "has a shape drawn as a plain line and is convex"),
    ((seq("p"),), "has a shape drawn as [p]"),  # not a program: shown as it is
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


def test_the_words_of_a_stroke_sequence_name_its_program():
    """Generated free-form shapes: no action string leaks into the words, and two programs that differ
    (as the canonical keys see them) never read the same."""
    import numpy as np

    from dsl.canonical import canonical_shape, shape_key
    from dsl.free_form import sample_free_form_shape
    from solver.explaining.english import program_words
    from solver.induction.facts import shape_text

    rng = np.random.default_rng(23)
    said: dict[str, tuple] = {}
    for k in list(range(2, 10)) * 25:
        shape = canonical_shape(sample_free_form_shape(rng, k))
        text = program_words(shape_text(shape))
        assert "_" not in text and "0.5" not in text and "[" not in text, text
        assert said.setdefault(text, shape_key(shape)) == shape_key(shape), text
    assert len(said) > 150
