"""Which ink is whose in a two-shape image: a free-form hypothesis whose two shapes lie apart in set A decides it on a
query it is about to lose (`solver.reading.form.parts_agree`, `solver.reading.verdicts._retried`)."""

from dsl.raster import render_program
from dsl.syntax import parse_image
from dsl.types import Pose
from solver.settings import LEVEL_PX


def _line_and_circle(circle: Pose):
    """Two lines and a circle at `circle` (the same program each time)."""
    program = parse_image([["line_normal_1.000-0.500", "line_normal_1.000-0.750"], ["arc_normal_0.500_0.625-0.500"] * 4])
    return program, render_program(program, [Pose(-150, 0, 0, 260), circle])


def test_a_two_shape_h_whose_shapes_lie_apart_in_set_a_decides_which_ink_is_whose_on_a_query_it_would_lose():
    from solver.reading.form import parts_agree
    from solver.reading.verdicts import check_job, checked_many

    program, apart = _line_and_circle(Pose(-100, -150, 90, 70))  # the circle away from the lines: two parts of ink
    _, across = _line_and_circle(Pose(-50, 0, 90, 70))  # lying across them, one part (the 2-means split fits it)
    _, touching = _line_and_circle(Pose(50, 0, 90, 70))  # touching their corner, one part (it does not)
    on_apart, on_across, on_touching = (check_job((image, program, False)) for image in (apart, across, touching))
    assert (on_apart.parts, on_across.parts, on_touching.parts) == (2, 1, 1)
    assert on_across.fit <= LEVEL_PX < on_touching.fit
    assert parts_agree(program, [on_apart] * 3 + [on_across] * 2 + [on_touching])  # 3 of the 5 H explains
    assert not parts_agree(program, [on_apart] * 2 + [on_across] * 2 + [on_touching] * 2)
    assert parts_agree(parse_image([["line_normal_1.000-0.500"]]), [on_across])  # one shape: nothing to split
    for near_misses in (False, True):  # H alone; H and its near misses (screened again on the ink split anew)
        (kept, _), = checked_many((None, [touching], program, near_misses, 1, None, False))
        (regrouped, _), = checked_many((None, [touching], program, near_misses, 1, None, True))
        assert kept.evidence["fit"] > LEVEL_PX and kept.evidence["verdict"] != "hypothesis"
        assert regrouped.evidence["fit"] < 1.0
        assert regrouped.evidence["verdict"] == "hypothesis" or regrouped.evidence["neighbour_fit"] < 1.0
