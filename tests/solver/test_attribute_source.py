"""Where attributes come from (solver.induction.facts.AttributeSource): a library shape takes the shape table's
labels, geometry serves the rest, and the explanation says which; the confidence stays within the vote's share."""

from __future__ import annotations

from types import SimpleNamespace

from dsl.library import load_library
from dsl.syntax import format_shape, parse_shape
from dsl.types import ImageProgram, StrokeType
from solver.induction import AttributeSource, attribute_source
from solver.induction.facts import labelled_line_readings, shape_facts, table_labels
from solver.solving.api import ProblemInput, solve_problem

# A generated has_line_crossing problem (tuning seed 52001): the positive query draws a shape the table labels as
# crossing lines (two circles touching at a point) and the geometry measures without a crossing.
SET_A = ("dagger_triangle2", "no_acute_angle_four_lines4", "exist_triangle_eight_lines11", "parallel_sector4",
         "open_square_right_triangle", "two_symm_bala_quadrangles")
SET_B = ("mismatch_sector_rec3", "asymm_band", "asymm_trap_bridge", "open_equil_right_triangle",
         "mismatch_sector_square4", "necked_six_lines11")
DISPUTED, NEGATIVE = "bala_two_intersect_circles8", "trans_band"


def as_json(name: str, stroke: StrokeType = StrokeType.NORMAL) -> ImageProgram:
    """A library shape as a dataset's action strings give it: rounded to three decimals, strokes changed."""
    shape = load_library()[name].shape.with_strokes(stroke)
    return ImageProgram((parse_shape(format_shape(shape)),))


def test_a_rounded_library_shape_takes_the_tables_labels_and_keeps_the_measure_beside_them():
    shape = as_json(DISPUTED, StrokeType.ZIGZAG).shapes[0]
    assert load_library()[DISPUTED].attributes["has_line_crossing"] == 1
    labelled = shape_facts(shape, source=AttributeSource.BOTH)
    measured = shape_facts(shape, source=AttributeSource.GEOMETRY)
    assert labelled.attributes["has_line_crossing"] == 1 and measured.attributes["has_line_crossing"] == 0
    assert labelled.labelled_as == DISPUTED and labelled.disputed["has_line_crossing"] == 0
    assert shape_facts(shape, source=AttributeSource.TABLE).disputed == {}
    assert measured.labelled_as is None and not measured.labelled


def test_the_table_leaves_open_what_a_tie_labels_both_ways_and_what_does_not_apply():
    library = load_library()
    convex = [n for n, e in library.items() if e.attributes["convex"] == 1][0]
    open_figure = [n for n, e in library.items() if e.attributes["convex"] == -1][0]
    assert table_labels((convex,))["convex"] == 1 and table_labels((open_figure,))["convex"] is None
    assert "convex" not in table_labels((convex, open_figure))  # labelled otherwise: measured


def test_a_count_of_straight_lines_follows_the_tables_has_n_straight_lines():
    labels = {"has_five_straight_lines": 1, "has_six_straight_lines": 0}
    assert labelled_line_readings((6,), labels) == (5,)
    assert labelled_line_readings((6, 7), {"has_six_straight_lines": 0}) == (7,)
    assert labelled_line_readings((4,), {}) == (4,)


def test_the_why_of_a_query_decided_by_a_table_label_against_the_geometry_says_so():
    given = ProblemInput([as_json(n) for n in SET_A], [as_json(n) for n in SET_B],
                         [as_json(DISPUTED), as_json(NEGATIVE)])
    solution = solve_problem(given)
    assert solution.rule.asp.endswith("attr(I,has_line_crossing,1).") and solution.labels == (True, False)
    why = {e.image: e.why for e in solution.explanation.evidence}["q(0)"].sentence
    assert "labelled *has line crossing* in the shape table" in why
    assert "measured, it does not have line crossing" in why
    with attribute_source("geometry"):
        assert solve_problem(given).labels == (False, False)  # the measure alone: the label the generator did not give


def test_the_confidence_is_never_above_the_votes_share():
    from solver.solving.confidence import query_confidences

    solution = SimpleNamespace(labels=(True, False), confidence=(0.6, 1.0), induction=None)
    confidence, _ = query_confidences(solution, [{"verdict": "library", "classifier": 0.9999}, None])
    assert confidence[0] <= 0.6 and confidence[1] <= 1.0
