"""Forming H: a quarter arc the decoder read between two lines, straight on into it and out of it, is also tried as
a sharp corner (`solver.reading.form.corners`), and set A's centreline fit chooses (`_chosen`)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dsl.syntax import parse_image
from dsl.types import Pose
from dsl.raster import render_program
from solver.reading.form import _candidate, _chosen, corners
from solver.reading.jobs import Stages
from solver.reading.verdicts import check_job

# an L of two square-stamped lines beside a circle: the generator's program, and the decoder's reading of it with
# the corner rounded into a quarter arc (generated seed 103111, ff_nact2_5_0018 and ff_nact3_3_0042)
SHARP = parse_image([["line_square_1.000-0.500", "line_square_1.000-0.750"],
                     ["arc_normal_0.500_0.625-0.500"] * 4])
ROUNDED = parse_image([["line_square_1.000-0.500", "arc_square_0.500_0.625-0.500", "line_square_1.000-0.500"],
                       ["arc_normal_0.500_0.625-0.500"] * 4])


def test_an_arc_between_two_lines_straight_on_is_also_tried_as_a_corner_turning_by_its_angle():
    (variant,) = corners(ROUNDED)
    line, turned = variant.shapes[0].actions
    arc = ROUNDED.shapes[0].actions[1]
    assert line == ROUNDED.shapes[0].actions[0] and turned.is_line and turned.turn == arc.angle
    assert variant.shapes[1] == ROUNDED.shapes[1]
    assert _candidate(variant)[1] == _candidate(SHARP)[1]  # the generator's program, in its direction


@pytest.mark.parametrize("actions", [
    ["line_normal_1.000-0.500", "arc_square_0.500_0.625-0.750", "line_normal_1.000-0.500"],  # a turn into the arc
    ["line_normal_1.000-0.500", "arc_square_0.500_0.625-0.500", "line_normal_1.000-0.750"],  # a turn out of it
    ["line_normal_1.000-0.500", "arc_square_0.500_0.625-0.500", "arc_square_0.500_0.625-0.500",
     "line_normal_1.000-0.500"],  # a semicircle between the lines
    ["line_normal_1.000-0.500", "line_normal_1.000-0.500", "arc_square_0.500_0.625-0.500"],  # the arc last
])
def test_no_corner_where_the_arc_is_not_one_between_two_lines_met_straight_on(actions):
    assert corners(parse_image([actions])) == []


def _set_a(program, seed: int = 3) -> list:
    rng = __import__("random").Random(seed)
    return [render_program(program, [Pose(rng.uniform(-150, -60), rng.uniform(-60, 60), rng.uniform(0, 360), 90.0),
                                     Pose(rng.uniform(60, 150), rng.uniform(-60, 60), rng.uniform(0, 360), 70.0)])
            for _ in range(6)]


class Here:
    """Checks on set A run in this process, each program's placements fitted as in the worker processes."""

    @staticmethod
    def map(function, jobs):
        return [function(job) for job in jobs]


@pytest.mark.parametrize("drawn, chosen", [(SHARP, SHARP), (ROUNDED, ROUNDED)])
def test_set_a_fit_chooses_between_the_rounded_reading_and_its_corner(drawn, chosen):
    images = _set_a(drawn) + [None] * 6
    rounded = _candidate(ROUNDED)[1]
    on_a = [check_job((image, rounded, False)) for image in images[:6]]
    formed = _chosen(Here(), images, 6, [(rounded, 0, on_a)], Stages())
    assert formed.hypothesis == _candidate(chosen)[1]


class Counting:
    """Checks on set A counted, each explaining its image at `fit`."""

    def __init__(self, fit: float):
        self.fit, self.calls = fit, []

    def map(self, function, jobs):
        self.calls.append(len(jobs))
        return [SimpleNamespace(fit=self.fit, parts=2) for _ in jobs]


def test_the_corner_is_checked_only_where_a_reading_has_such_an_arc():
    perception = Counting(0.5)
    sharp = _candidate(SHARP)[1]
    _chosen(perception, [None] * 12, 6, [(sharp, 0, [SimpleNamespace(fit=0.5, parts=2)] * 6)], Stages())
    assert perception.calls == []


def test_only_h_is_drawn_with_a_corner_not_another_reading():
    # the rounded reading fits set A worse than H, which is another reading: its corner (which may draw H's picture at
    # another scale, generated seed 103333, ff_nact4_5_0018) is not tried
    perception = Counting(0.1)
    sharp, rounded = _candidate(SHARP)[1], _candidate(ROUNDED)[1]
    checked = [(rounded, 0, [SimpleNamespace(fit=1.5, parts=2)] * 6), (sharp, 0, [SimpleNamespace(fit=0.5, parts=2)] * 6)]
    formed = _chosen(perception, [None] * 12, 6, checked, Stages())
    assert formed.hypothesis == sharp and perception.calls == []
