"""A query H fits worse than set A is checked against H's own near misses screened from where H lies
(`solver.reading.verdicts._anchored_own`), not only from their best heading guesses."""

import math
from dataclasses import replace

from dsl.canonical import same_image
from dsl.raster import render_program
from dsl.syntax import parse_image
from dsl.types import Pose
from search.near_miss import check
from search.template import make_target
from solver.reading.verdicts import _anchored_own, verdict

# a semicircle; three lines and two arcs (generated seed 71111, ff_nact2_5_0017), and its near miss with the last arc
# turned by 60 degrees more
H = parse_image([["arc_zigzag_0.500_0.625-0.500"] * 2,
                 ["line_zigzag_1.000-0.500", "line_normal_1.000-0.500", "line_triangle_1.000-0.750",
                  "arc_square_0.500_0.625-0.500", "arc_triangle_0.500_0.625-0.500"]])
NEAR = parse_image([["arc_zigzag_0.500_0.625-0.500"] * 2,
                    ["line_zigzag_1.000-0.500", "line_normal_1.000-0.500", "line_triangle_1.000-0.750",
                     "arc_square_0.500_0.625-0.500", "arc_triangle_0.500_0.625-0.833"]])
POSES = [Pose(-250, 150, 30, 90), Pose(-50, -150, 10, 110)]


def _as_h(checked):
    """The verdict of `checked` as if no neighbour had been found (H's own, where it fits within LEVEL_PX)."""
    return verdict(replace(checked, neighbour=None, neighbour_fit=math.inf, change=None), H)


def test_h_s_near_miss_is_found_from_where_h_lies():
    target = make_target(render_program(NEAR, POSES))
    checked = check(H, target, neighbours=False)
    found = _anchored_own(H, target, _as_h(checked), checked)
    assert found.evidence["verdict"] == "neighbour" and same_image(found.program, NEAR, ignore_strokes=True)
    assert found.evidence["neighbour_fit"] < min(1.0, checked.fit)


def test_an_image_h_draws_keeps_h():
    target = make_target(render_program(H, POSES))
    checked = check(H, target, neighbours=False)
    before = _as_h(checked)
    assert before.evidence["verdict"] == "hypothesis" and _anchored_own(H, target, before, checked) is before


def test_only_where_set_a_bears_out_h_s_shapes(monkeypatch):
    import solver.reading.verdicts as verdicts

    asked = []
    monkeypatch.setattr(verdicts, "_anchored_own", lambda hypothesis, target, found, checked: asked.append(1) or found)
    image = render_program(H, POSES)  # H drawn: its verdict is H's, fitted worse than a context fit of 0 px
    for agree in (False, True):
        (found, _), = verdicts.checked_many((None, [image], H, True, 1, 0.0, agree))
        assert found.evidence["verdict"] == "hypothesis"
    assert asked == [1]  # asked once: where set A's ink parts agree with H's two shapes
