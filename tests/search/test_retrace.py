"""Retraced actions: an outline read as going round once more loses its extra end actions, nothing else."""

from dsl.canonical import same_image
from dsl.syntax import parse_image
from search.retrace import retraced, without_retraced_ends

LINE = "line_normal_1.000-{}"
TRIANGLE = parse_image([[LINE.format("0.500"), LINE.format("0.833"), LINE.format("0.833")]])
TRIANGLE_ROUND_AGAIN = parse_image([[LINE.format("0.500")] + [LINE.format("0.833")] * 3])
QUARTER = "arc_zigzag_0.500_0.625-0.500"  # a quarter circle turning left
CIRCLE = parse_image([[QUARTER] * 4])


def test_the_fourth_side_of_a_triangle_is_retraced_and_dropped():
    shape = TRIANGLE_ROUND_AGAIN.shapes[0]
    assert retraced(shape, 3) and not retraced(shape, 1)
    cleaned = without_retraced_ends(TRIANGLE_ROUND_AGAIN)
    assert len(cleaned.shapes[0]) == 3 and same_image(cleaned, TRIANGLE)


def test_a_fifth_quarter_arc_is_dropped_and_a_circle_kept():
    assert without_retraced_ends(parse_image([[QUARTER] * 5])) == CIRCLE
    assert without_retraced_ends(CIRCLE) == CIRCLE


def test_a_retraced_first_action_is_dropped_with_its_turn():
    # forward, back over it (turn 180), then left: the first line is drawn over by the second
    program = parse_image([[LINE.format("0.500"), LINE.format("1.000"), LINE.format("0.750")]])
    assert retraced(program.shapes[0], 0) and not retraced(program.shapes[0], 2)
    cleaned = without_retraced_ends(program).shapes[0]
    assert len(cleaned) == 2 and cleaned.actions[0].turn == 0.0 and cleaned.actions[1] == program.shapes[0].actions[2]


def test_open_free_form_shapes_and_other_shapes_are_untouched():
    program = parse_image([[LINE.format("0.500"), LINE.format("0.750"), QUARTER], ["line_square_1.000-0.500"]])
    assert without_retraced_ends(program) == program
